"""Fuzzing the command line: mutated suites, datasets, manifests, targets configs and
recordings through ``rag-lsp check`` and ``rag-lsp run``, each in its own process.

    python tests/soak/fuzz_cli.py --seconds 600 --seed 7 [--timeout 30] [--failures DIR]

Each input is a workspace built from ``examples/`` (with the broken suite and dataset
of ``examples-caught/``, and the built-in manifests of ``schemas/manifests/``, copied
in as workspace manifests) in which a few files were
mutated: grammar-aware edits of YAML lines and scalars or of JSON Lines rows and
values, or raw bytes. Every input goes through one command line, chosen in turn
from ``COMMANDS``, bounded by ``--timeout`` seconds. A failure is an exit code other
than 0, 1 or 2, a traceback or an internal error on stderr, machine output that does
not parse, or a timeout: its workspace is kept under ``--failures`` (default
``./fuzz-failures``) with ``command.txt`` (how to run it again) and ``output.txt``.
At the end the counts per command and exit code are printed; the exit code is 1
when anything failed.

The mutators draw every choice from a ``Draws``: ``RandomDraws`` here, a hypothesis
draw in ``tests/test_fuzz_cli.py`` (which runs the same inputs in process, where a
failure shrinks to a small one).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol
from xml.etree import ElementTree

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
CAUGHT = REPO / "examples-caught"
MANIFESTS = REPO / "schemas" / "manifests"

SUITE, DATASET, RECORDING, TARGETS, MANIFEST = "suite", "dataset", "recording", "targets", "manifest"

# gdi_text_v1 rows scored by the seed's rag.hit_at_k: the metric path of the scorer.
GDI_SUITE = """\
suites:
  - id: answers
    dataset: .punica/evals/answers.jsonl
    metrics:
      rag.hit_at_k: {k: 3, t1: 0.7, t2: 0.6, coverage: 0.5, language: de}
    thresholds:
      rag.hit_at_k: 0.5
"""
GDI_ROWS = """\
{"input_id": "q1", "prompt": "How are approvals decided?", "reference_contexts": ["A request is approved when two reviewers sign it."], "sut_response": "Two reviewers sign it.", "retrieved_context": ["A request is approved when two reviewers sign it.", "Tokens expire."], "task_type": "single_turn_rag"}
{"input_id": "q2", "prompt": [{"role": "user", "content": "Who signs?"}, {"role": "assistant", "content": "A reviewer."}], "reference_contexts": ["The gateway forwards the signed request."], "sut_response": "It forwards it.", "retrieved_context": ["Unrelated text about deployments."], "task_type": "multi_turn_rag"}
"""


def seeds() -> dict[str, tuple[str, str]]:
    """The files that get mutated: workspace path -> (kind, original text)."""
    punica = EXAMPLES / ".punica"
    caught = CAUGHT / ".punica"
    found = {
        ".punica/evals/gateway.suite.yaml": (SUITE, (punica / "evals" / "gateway.suite.yaml").read_text(encoding="utf-8")),
        ".punica/evals/broken.suite.yaml": (SUITE, (caught / "evals" / "broken.suite.yaml").read_text(encoding="utf-8")),
        ".punica/evals/gateway.jsonl": (DATASET, (punica / "evals" / "gateway.jsonl").read_text(encoding="utf-8")),
        ".punica/evals/broken.jsonl": (DATASET, (caught / "evals" / "broken.jsonl").read_text(encoding="utf-8")),
        ".punica/runs/gateway-semantic.jsonl": (RECORDING, (punica / "runs" / "gateway-semantic.jsonl").read_text(encoding="utf-8")),
        ".punica/targets.yaml": (TARGETS, (punica / "targets.yaml").read_text(encoding="utf-8")),
        ".punica/evals/answers.suite.yaml": (SUITE, GDI_SUITE),
        ".punica/evals/answers.jsonl": (DATASET, GDI_ROWS),
    }
    for manifest in sorted(MANIFESTS.glob("*.yaml")):
        found[f".punica/metrics/{manifest.name}"] = (MANIFEST, manifest.read_text(encoding="utf-8"))
    return found


SEEDS = seeds()
FILES = sorted(SEEDS)

# The command lines an input goes through. Runs never start a process or call a
# server (--no-exec): a mutated targets config must not run anything.
COMMANDS: tuple[tuple[str, ...], ...] = (
    ("check",),
    ("check", "--format", "json"),
    ("check", "--format", "sarif"),
    ("check", "--format", "github"),
    ("check", "--fail-on", "warning"),
    ("run", "--no-exec"),
    ("run", "--no-exec", "--format", "json"),
    ("run", "--no-exec", "--format", "junit"),
)


# ---------------------------------------------------------------- draws


class Draws(Protocol):
    """Where a mutator's choices come from."""

    def integer(self, low: int, high: int) -> int:
        """An integer from ``low`` to ``high``, both included."""

    def choice(self, items: Sequence[Any]) -> Any:
        """One of ``items``."""

    def binary(self, max_size: int) -> bytes:
        """Up to ``max_size`` arbitrary bytes."""


class RandomDraws:
    """Choices from a seeded ``random.Random``: the long run's source."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def integer(self, low: int, high: int) -> int:
        return self.rng.randint(low, high)

    def choice(self, items: Sequence[Any]) -> Any:
        return items[self.rng.randrange(len(items))]

    def binary(self, max_size: int) -> bytes:
        return self.rng.randbytes(self.rng.randint(0, max_size))


# ---------------------------------------------------------------- YAML

# Values a scalar is replaced with: other types, YAML's odd corners, and sizes
# past what the parser or int() take lightly.
YAML_VALUES = (
    "0", "-1", "1.5", "2", "1e309", "-.inf", ".nan", "0x1F", "0o17", "+12_000",
    "9" * 5000,  # past Python's int-from-string digit limit
    "true", "no", "null", "~", "''", '""', "[]", "{}", "[1, [2, [3]]]", "{a: {b: c}}",
    "[rag, rag]", "[path, id, corpus]", "{kind: capability}", "&a x", "*a", "*nowhere",
    "!!binary aGk=", "!!int x", "!!float y", "!!str 5", "!!set {a, b}", "!!omap [a: 1]",
    "!!python/object/apply:os.system [echo]", "!custom x", "2001-12-14", "2001-12-14t21:59:43.10-05:00",
    "\t", "|\n  text", ">-", '"\\u0000"', '"\\ud800"', '"\\x"', '"unterminated', "'", "? x",
    "- - -", "@", "`", "%", "=", "<<", "{{{{", "[[[[", "[" * 300 + "]" * 300, "x" * 20000,
    "é😀\u202e", "rag.recall", "rag.retrieved", ".punica/evals/gateway.jsonl", "../outside.jsonl",
    "/etc/passwd", "C:\\x.jsonl", "vectors.query", "gateway.recorded",
)
UNKNOWN_KEYS = ("zzz", "id", "suites", "dataset", "engines", "k", "match", "<<", "? ", "~", "1", '"q"', "&k key", "!!str t")
YAML_SNIPPETS = (
    "{", "}", "[", "]", '"', "'", ": ", "- ", ",", "#", "&a ", "*a", "|", ">", "!", "%", "@", "`", "?",
    "\t", "\r", "\x00", "\ufeff", "\x85", "\u2028", "---\n", "...\n", "%YAML 1.1\n", "%TAG ! tag:x,2000:\n",
    "<<: *a\n", "? [a, b]\n: c\n", "a: &a [*a]\n",
    "a: &a [x, x]\nb: &b [*a, *a, *a, *a]\nc: &c [*b, *b, *b, *b]\nd: [*c, *c, *c, *c]\n",
    "[" * 2000, "{a: " * 500,
)
RAW_SNIPPETS = (b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x00", b"\xef\xbb\xbf", b"\r", b"\x1b[2J")


def _lines(text: str) -> list[str]:
    return text.split("\n")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _key_lines(lines: list[str]) -> list[int]:
    """Lines holding ``key:`` (or ``- key:``), the places keys and values can be edited."""
    return [number for number, line in enumerate(lines) if ":" in line and not line.lstrip().startswith("#")]


def _replace_scalar(lines: list[str], draws: Draws) -> None:
    candidates = [number for number, line in enumerate(lines) if line.strip() and not line.lstrip().startswith("#")]
    if not candidates:
        return
    number = draws.choice(candidates)
    line = lines[number]
    if ": " in line or line.rstrip().endswith(":"):
        head = line.split(":", 1)[0] + ": "
    elif line.lstrip().startswith("- "):
        head = line[: line.index("- ") + 2]
    else:
        head = line[: _indent(line)]
    lines[number] = head + draws.choice(YAML_VALUES)


def _delete_key(lines: list[str], draws: Draws) -> None:
    keys = _key_lines(lines)
    if not keys:
        return
    number = draws.choice(keys)
    depth = _indent(lines[number])
    end = number + 1
    while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > depth):
        end += 1
    del lines[number:end]


def _insert_key(lines: list[str], draws: Draws) -> None:
    keys = _key_lines(lines) or [0]
    number = draws.choice(keys)
    line = lines[number] if lines else ""
    indent = " " * (_indent(line) + (2 if line.lstrip().startswith("- ") else 0))
    lines.insert(number + 1, f"{indent}{draws.choice(UNKNOWN_KEYS)}: {draws.choice(YAML_VALUES)}")


def _reindent(lines: list[str], draws: Draws) -> None:
    number = draws.integer(0, len(lines) - 1)
    stripped = lines[number].lstrip(" ")
    shift = draws.choice(("\t", "", " ", "   ", "  " * draws.integer(1, 6)))
    lines[number] = (" " * max(0, _indent(lines[number]) - draws.integer(0, 4)) if shift == "" else shift) + stripped


def _anchor_alias(lines: list[str], draws: Draws) -> None:
    keys = _key_lines(lines)
    if len(keys) < 2:
        return
    first, second = sorted((draws.choice(keys), draws.choice(keys)))
    head, _, value = lines[first].partition(": ")
    lines[first] = f"{head}: &a {value}" if value else f"{lines[first]} &a"
    lines[second] = lines[second].split(":", 1)[0] + draws.choice((": *a", ": [*a, *a]", ": {<<: *a}"))
    if draws.integer(0, 3) == 0:
        lines.insert(second + 1, " " * _indent(lines[second]) + "<<: *a")


def _duplicate_block(lines: list[str], draws: Draws) -> None:
    """A list item (a whole suite) written twice: duplicate ids and keys."""
    items = [number for number, line in enumerate(lines) if line.lstrip().startswith("- ") and ":" in line]
    if not items:
        return
    number = draws.choice(items)
    depth = _indent(lines[number])
    end = number + 1
    while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > depth):
        end += 1
    lines[end:end] = lines[number:end]


def _line_op(op: Callable[[list[str], Draws], None]) -> Callable[[str, Draws], str]:
    def apply(text: str, draws: Draws) -> str:
        lines = _lines(text)
        if lines:
            op(lines, draws)
        return "\n".join(lines)

    apply.__name__ = op.__name__
    return apply


def _drop_line(lines: list[str], draws: Draws) -> None:
    del lines[draws.integer(0, len(lines) - 1)]


def _duplicate_line(lines: list[str], draws: Draws) -> None:
    number = draws.integer(0, len(lines) - 1)
    lines.insert(number, lines[number])


def _swap_lines(lines: list[str], draws: Draws) -> None:
    a, b = draws.integer(0, len(lines) - 1), draws.integer(0, len(lines) - 1)
    lines[a], lines[b] = lines[b], lines[a]


def _truncate(text: str, draws: Draws) -> str:
    return text[: draws.integer(0, len(text))]


def _insert_snippet(snippets: Sequence[str]) -> Callable[[str, Draws], str]:
    def insert(text: str, draws: Draws) -> str:
        at = draws.integer(0, len(text))
        return text[:at] + draws.choice(snippets) + text[at:]

    return insert


YAML_MUTATIONS: tuple[Callable[[str, Draws], str], ...] = (
    _line_op(_drop_line),
    _line_op(_duplicate_line),
    _line_op(_swap_lines),
    _line_op(_reindent),
    _line_op(_replace_scalar),
    _line_op(_replace_scalar),
    _line_op(_delete_key),
    _line_op(_insert_key),
    _line_op(_anchor_alias),
    _line_op(_duplicate_block),
    _truncate,
    _insert_snippet(YAML_SNIPPETS),
)


# ---------------------------------------------------------------- JSON Lines

# Raw JSON texts a value is replaced with: every type, numbers JSON parsers
# disagree on, sizes and depths past the comfortable.
JSON_VALUES = (
    "null", "true", "false", "0", "-0", "-1", "1.5", "1e400", "-1e400", "9" * 5000, "NaN", "Infinity",
    '""', '"x"', '"' + "x" * 50000 + '"', "[]", "{}", "[" * 3000 + "]" * 3000, '{"a":' * 600 + "1" + "}" * 600,
    '"\\ud800"', '"\\u0000"', '"é😀\u202e"', '["src/gateway.ts", "src/gateway.ts"]', '["./src/gateway.ts\\\\"]',
    '"../outside.md"', '"/etc/passwd"', '["code", "tickets"]', '{"query": 5}', '{"relevant": []}',
    '[{"role": "user"}]', '{"path": "src/gateway.ts"}', '"semantic"', '"keyword"',
)
UNKNOWN_FIELDS = ("zzz", "id", "input", "expect", "relevant", "hits", "mode", "query", "topK", "corpora", "", "\u0000")
_PLACEHOLDER = "\u0001placeholder\u0001"


def _containers(value: Any, path: tuple = ()) -> list[tuple]:
    """Paths of every object and array inside ``value`` (``value`` itself included)."""
    found = [path] if isinstance(value, (dict, list)) else []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        found.extend(_containers(item, (*path, key)))
    return found


def _at(value: Any, path: tuple) -> Any:
    for key in path:
        value = value[key]
    return value


def _mutate_row(row: Any, others: list[Any], draws: Draws) -> str:
    """One row with one value replaced, a key deleted, added or renamed, or an id repeated."""
    container = _at(row, draws.choice(_containers(row)))
    keys = list(container) if isinstance(container, dict) else list(range(len(container)))
    op = draws.integer(0, 5)
    if op == 0 and keys:
        del container[draws.choice(keys)]
    elif op == 1 and isinstance(container, dict):
        container[draws.choice(UNKNOWN_FIELDS)] = _PLACEHOLDER
    elif op == 2 and isinstance(container, dict) and keys:
        key = draws.choice(keys)
        container[draws.choice(UNKNOWN_FIELDS)] = container.pop(key)
    elif op == 3 and isinstance(row, dict):
        other = draws.choice(others) if others else {}
        for field in ("id", "input_id"):
            if isinstance(other, dict) and field in other:
                row[field] = other[field]
    elif op == 4 and isinstance(container, list):
        container.append(container[0] if container else _PLACEHOLDER)
    elif keys:
        container[draws.choice(keys)] = _PLACEHOLDER
    text = json.dumps(row, ensure_ascii=draws.integer(0, 1) == 1)
    return text.replace(json.dumps(_PLACEHOLDER), draws.choice(JSON_VALUES), 1)


def _mutate_value(text: str, draws: Draws) -> str:
    lines = _lines(text)
    rows = []
    for line in lines:
        try:
            rows.append(json.loads(line))
        except (ValueError, RecursionError):
            rows.append(None)
    parsed = [number for number, row in enumerate(rows) if isinstance(row, (dict, list))]
    if not parsed:
        return text
    number = draws.choice(parsed)
    try:
        lines[number] = _mutate_row(rows[number], [row for row in rows if row is not None], draws)
    except RecursionError:
        return text  # a row an earlier mutation nested too deep to walk: left as it is
    return "\n".join(lines)


def _cut_line(text: str, draws: Draws) -> str:
    """A line truncated mid-token (the rest of the file stays)."""
    lines = _lines(text)
    number = draws.integer(0, len(lines) - 1)
    lines[number] = lines[number][: draws.integer(0, len(lines[number]))]
    return "\n".join(lines)


def _crlf(text: str, draws: Draws) -> str:
    return text.replace("\n", draws.choice(("\r\n", "\r", "\n\n", "\n \n", "\u2028")))


JSON_SNIPPETS = ("{", "}", "[", "]", '"', "\\", ",", ":", "\t", "\x00", "\ufeff", "\r", "\n", " ", "/*", "\\u", "\\ud800")

JSONL_MUTATIONS: tuple[Callable[[str, Draws], str], ...] = (
    _mutate_value,
    _mutate_value,
    _mutate_value,
    _cut_line,
    _line_op(_drop_line),
    _line_op(_duplicate_line),
    _line_op(_swap_lines),
    _crlf,
    _truncate,
    _insert_snippet(JSON_SNIPPETS),
)


# ---------------------------------------------------------------- files and workspaces


def mutate(kind: str, text: str, draws: Draws) -> bytes:
    """``text`` after one to three mutations of its grammar, or raw bytes."""
    style = draws.integer(0, 9)
    if style == 0:
        return draws.binary(400)  # the whole file is noise
    mutations = JSONL_MUTATIONS if kind in (DATASET, RECORDING) else YAML_MUTATIONS
    for _ in range(draws.integer(1, 3)):
        text = draws.choice(mutations)(text, draws)
    data = text.encode("utf-8", "surrogatepass")
    if style == 1:  # invalid UTF-8, NUL, a BOM or a stray CR somewhere
        at = draws.integer(0, len(data))
        data = data[:at] + draws.choice(RAW_SNIPPETS) + data[at:]
    return data


# The broken-on-purpose example fails every check and run; without it, a mutated
# workspace can also come out clean (exit 0).
BROKEN = (".punica/evals/broken.suite.yaml", ".punica/evals/broken.jsonl")


def mutated_files(draws: Draws) -> dict[str, bytes | None]:
    """Workspace path -> bytes for the one to four seed files that were mutated
    (None: the file is left out)."""
    files: dict[str, bytes | None] = dict.fromkeys(BROKEN) if draws.integer(0, 1) else {}
    for _ in range(draws.integer(1, 4)):
        relative = draws.choice(FILES)
        kind, text = SEEDS[relative]
        held = files.get(relative)
        files[relative] = mutate(kind, held.decode("utf-8", "replace") if held is not None else text, draws)
    return files


def write_workspace(root: Path, files: dict[str, bytes | None]) -> Path:
    """The examples workspace, the seed files written in, then the mutated ones over them."""
    shutil.copytree(EXAMPLES, root, dirs_exist_ok=True)
    for relative, (_, text) in SEEDS.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")
    for relative, data in files.items():
        if data is None:
            (root / relative).unlink()
        else:
            (root / relative).write_bytes(data)
    return root


# ---------------------------------------------------------------- verdicts


def verdict(command: Sequence[str], code: int | None, stdout: str, stderr: str) -> str | None:
    """What is wrong with a finished command line, or None when nothing is."""
    if code not in (0, 1, 2):
        return f"exit code {code}"
    for sign in ("Traceback", "internal error"):
        if sign in stderr or sign in stdout:
            return f"{sign!r} in the output"
    form = command[command.index("--format") + 1] if "--format" in command else "text"
    if code == 2 or form == "text":
        return None
    try:
        if form == "junit":
            ElementTree.fromstring(stdout)
            return None
        if form == "github":
            # One workflow command per finding (its message on the same line), then the summary.
            bad = [line for line in stdout.splitlines()[:-1] if not line.startswith("::")]
            return f"not a GitHub annotation: {bad[0][:200]!r}" if bad else None
        document = json.loads(stdout)
    except (ValueError, ElementTree.ParseError) as error:
        return f"{form} output does not parse: {error}"
    expected = {"json": list if command[0] == "check" else dict, "sarif": dict}[form]
    return None if isinstance(document, expected) else f"{form} output is a {type(document).__name__}"


def run_cli(root: Path, command: Sequence[str], timeout: float) -> tuple[int | None, str, str]:
    """``rag-lsp COMMAND ROOT`` in its own process, killed after ``timeout`` seconds
    (exit code None)."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", "rag_lsp", *command, str(root)],
            cwd=root,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as expired:
        out = expired.stdout.decode("utf-8", "replace") if isinstance(expired.stdout, bytes) else expired.stdout or ""
        return None, out, f"timed out after {timeout:g} s"
    return done.returncode, done.stdout, done.stderr


# ---------------------------------------------------------------- the long run


def soak(seconds: float, seed: int, timeout: float, failures: Path) -> int:
    rng = random.Random(seed)
    draws = RandomDraws(rng)
    counts: Counter[tuple[str, int | None]] = Counter()
    failed = 0
    deadline = time.monotonic() + seconds
    number = 0
    print(f"fuzzing the command line for {seconds:g} s with seed {seed}", flush=True)
    with tempfile.TemporaryDirectory(prefix="rag-lsp-fuzz-") as scratch:
        while time.monotonic() < deadline:
            command = COMMANDS[number % len(COMMANDS)]
            root = Path(scratch) / f"input-{number}"
            write_workspace(root, mutated_files(draws))
            code, stdout, stderr = run_cli(root, command, timeout)
            counts[(" ".join(command), code)] += 1
            problem = verdict(command, code, stdout, stderr)
            if problem is not None:
                failed += 1
                kept = failures / f"seed{seed}-input{number}"
                shutil.copytree(root, kept, symlinks=True, dirs_exist_ok=True)
                (kept / "command.txt").write_text(
                    f"cd {kept} && {sys.executable} -m rag_lsp {' '.join(command)} .\n", encoding="utf-8"
                )
                (kept / "output.txt").write_text(f"exit {code}\n--- stdout\n{stdout}\n--- stderr\n{stderr}\n", encoding="utf-8")
                print(f"FAILED input {number} ({' '.join(command)}): {problem}; kept in {kept}", flush=True)
            shutil.rmtree(root, ignore_errors=True)
            number += 1
    print(f"{number} inputs in {seconds:g} s (seed {seed}), {failed} failed")
    for (command, code), count in sorted(counts.items(), key=lambda item: (item[0][0], str(item[0][1]))):
        print(f"  rag-lsp {command:<32} exit {'timeout' if code is None else code}: {count}")
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=60, help="how long to keep going (default 60)")
    parser.add_argument("--seed", type=int, default=None, help="seed of the mutations (default: a random one, printed)")
    parser.add_argument("--timeout", type=float, default=30, help="seconds one input may take (default 30)")
    parser.add_argument("--failures", type=Path, default=Path("fuzz-failures"), help="where failing inputs are kept")
    arguments = parser.parse_args(argv)
    seed = arguments.seed if arguments.seed is not None else random.randrange(2**32)
    return soak(arguments.seconds, seed, arguments.timeout, arguments.failures.resolve())


if __name__ == "__main__":
    raise SystemExit(main())
