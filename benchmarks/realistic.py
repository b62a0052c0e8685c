"""Time rag-lsp on workspaces shaped like users' own, beside the happy path and
check-jsonschema.

    python benchmarks/realistic.py [--cases 100000] [--workloads happy,tree-20k,elsewhere,tree-50k,lists,languages]
                                   [--repeat 3] [--edits 40] [--server-runs 3] [--skip-server] [--run-cases 100000]

For each workload of benchmarks/workloads.py (100,000 cases each by default;
``lists`` writes a twentieth of them, a tail listing thousands of paths each):

* `rag-lsp check` as a whole process, and check-jsonschema validating the same
  rows against a schema of what every rag case must hold (benchmarks/check.py's
  CASE_SCHEMA) in the same run, the two alternating (best of
  --repeat each); their ratio, the number of RAG203 findings, and the time beside
  the happy path's;
* the server over stdio (a minimal client, see benchmarks/server.py): `didOpen`
  of the dataset to its first diagnostics, --edits one-line edits to the
  diagnostics of their version (median and p95: a query changed, an expected
  path changed into a near miss and back, a case inserted), the peak resident
  memory of the server and its helper, and how many diagnostics it published;
  each the median of --server-runs fresh servers;
* with --run-cases N (tree-20k only): `rag-lsp run` of N cases on the builtin
  keyword target over the workspace's files, beside bm25s indexing the same
  files and retrieving the same queries (same tokenization, same top-k, in one
  process), and their ratio.

The goals this measures: `check` within 1.5 s and at least 6x check-jsonschema;
the server's open within 1 s, edits within 10 ms (median) and 30 ms (p95), peak
memory within 250 MB; `run` within 1.3x of bm25s's own index and retrieval.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from bytecode import compile_package  # noqa: E402
from check import check_jsonschema_inputs  # noqa: E402
from server import measure  # noqa: E402
from workloads import DATASET, GENERATORS, Workload  # noqa: E402

RAG_LSP = [sys.executable, "-m", "rag_lsp"]


def chosen_variants(parser: argparse.ArgumentParser, chosen: str, known: dict) -> list[str]:
    """The variants named in ``chosen`` (comma-separated), the clean dataset
    first whether named or not: each figure is printed beside its. An unknown
    name is a usage error of ``parser``."""
    names = chosen.split(",")
    unknown = [name for name in names if name not in known]
    if unknown:
        parser.error(f"unknown variants: {', '.join(unknown)} (known: {', '.join(known)})")
    if "clean" not in names:
        names.insert(0, "clean")
    return names


def timed(command: list[str], expect: tuple[int, ...]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode not in expect:
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}:\n{done.stderr[-2000:]}")
    return elapsed, done.stdout


def check_figures(workload: Workload, repeat: int) -> dict[str, float]:
    """`rag-lsp check` and check-jsonschema, alternating, best of ``repeat`` each."""
    other = shutil.which("check-jsonschema")
    ours: list[float] = []
    theirs: list[float] = []
    output = ""
    inputs = None
    if other is not None:
        # check_jsonschema_inputs reads the dataset where benchmarks/check.py writes it.
        inputs = check_jsonschema_inputs(workload.root)
    for _ in range(repeat):
        elapsed, output = timed([*RAG_LSP, "check", str(workload.root), "--format", "json"], (1,))
        ours.append(elapsed)
        if inputs is not None:
            theirs.append(timed([other, "--schemafile", str(inputs[1]), str(inputs[0])], (0, 1))[0])
    findings = json.loads(output)
    figures = {
        "check_s": min(ours),
        "findings": len(findings),
        "rag203": sum(1 for finding in findings if finding["code"] == "RAG203"),
    }
    if theirs:
        figures["check_jsonschema_s"] = min(theirs)
    return figures


_PATHS = re.compile(r'"relevant": \[([^\]]*)\]')


def edits(lines: list[str], count: int, rng: random.Random):
    """(range, text) one-line edits a user makes: a word typed into a query, an
    expected path turned into a near miss (and the next such edit turns it back),
    a case inserted."""
    undo = None
    for index in range(count):
        kind = index % 5
        if kind == 4:
            line = rng.randrange(len(lines) - 1)
            new = lines[rng.randrange(len(lines) - 1)].replace('"id": "', '"id": "new-', 1)
            lines.insert(line, new)
            yield {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 0}}, new + "\n"
            continue
        if kind in (1, 2) and (kind == 1 or undo is not None):
            if kind == 2:
                line, start, old, new = undo
                undo = None
            else:
                line = rng.randrange(len(lines) - 1)
                match = _PATHS.search(lines[line])
                if match is None or not match.group(1):
                    continue
                start = match.start(1) + 1
                old = match.group(1).split('", "')[0].strip('"')
                new = old.replace("_", "-", 1) if "_" in old else old + "x"
                undo = (line, start, new, old)
            text = lines[line]
            lines[line] = text[:start] + new + text[start + len(old) :]
            yield {"start": {"line": line, "character": start}, "end": {"line": line, "character": start + len(old)}}, new
            continue
        line = rng.randrange(len(lines) - 1)
        text = lines[line]
        column = text.find('"query": "') + len('"query": "')
        if column < len('"query": "'):
            continue
        lines[line] = text[:column] + "x" + text[column:]
        yield {"start": {"line": line, "character": column}, "end": {"line": line, "character": column}}, "x"


def server_figures(workload: Workload, count: int, runs: int) -> dict[str, float]:
    """The server's figures, each the median of ``runs`` fresh servers: an open's
    time and the peak memory of a server and its helper together depend on how
    the two happen to overlap."""
    # The text an editor sends: the workload's lines where it has them (a file
    # saved in another encoding than UTF-8 is read by the editor, not sent as bytes).
    text = "\n".join(workload.lines) + "\n" if workload.lines else workload.dataset.read_text(encoding="utf-8")
    init = {"root": workload.root.as_uri()}
    measured = [
        asyncio.run(measure([*RAG_LSP, "serve"], workload.dataset.as_uri(), text, "jsonl", count, False, init, edits))
        for _ in range(runs)
    ]
    return {key: statistics.median(figures[key] for figures in measured) for key in measured[0]}


def run_figures(root: Path, cases: int) -> dict[str, float]:
    """`rag-lsp run` of the first ``cases`` cases on the builtin keyword target,
    beside bm25s indexing the same files and retrieving the same queries."""
    lines = (root / DATASET).read_text(encoding="utf-8").splitlines()[:cases]
    subset = root / ".punica" / "evals" / "run.jsonl"
    subset.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / ".punica" / "evals" / "run.suite.yaml").write_text(
        "suites:\n  - id: run\n    target: {kind: capability, id: vectors.query}\n    dataset: .punica/evals/run.jsonl\n"
        "    engines: [rag]\n    options: {rag: {match: path, k: 10}}\n    thresholds: {rag.recall: 0.1}\n",
        encoding="utf-8",
    )
    # Keyword search over whole files, as its anchor indexes them: the builtin
    # target searches by meaning, in chunks of lines, unless told otherwise.
    (root / ".punica" / "targets.yaml").write_text(
        "targets:\n  vectors.query:\n    builtin: {corpora: {code: ['**']}, retrieval: keyword, chunking: {unit: file}}\n",
        encoding="utf-8"
    )
    try:
        ours, _ = timed([*RAG_LSP, "run", str(root / ".punica" / "evals" / "run.suite.yaml"), "--format", "json"], (0, 1))
        theirs, _ = timed([sys.executable, str(HERE / "bm25_anchor.py"), str(root), str(subset)], (0,))
    finally:
        for path in (subset, root / ".punica" / "evals" / "run.suite.yaml", root / ".punica" / "targets.yaml"):
            path.unlink(missing_ok=True)
    return {"run_s": ours, "bm25s_s": theirs}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--workloads", default=",".join(GENERATORS))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--edits", type=int, default=40)
    parser.add_argument("--skip-server", action="store_true")
    parser.add_argument("--server-runs", type=int, default=3, help="servers measured per workload (medians are printed)")
    parser.add_argument("--run-cases", type=int, default=0, help="also time `rag-lsp run` on tree-20k (0: skip)")
    arguments = parser.parse_args()
    names = arguments.workloads.split(",")
    unknown = [name for name in names if name not in GENERATORS]
    if unknown:
        parser.error(f"unknown workloads: {', '.join(unknown)} (known: {', '.join(GENERATORS)})")
    results: dict[str, dict[str, float]] = {}
    compile_package()
    with tempfile.TemporaryDirectory(prefix="rag-lsp-bench-") as folder:
        for name in names:
            started = time.perf_counter()
            workload = GENERATORS[name](Path(folder) / name, arguments.cases)
            print(f"{name}: {workload.description}; {workload.files:,} files, {workload.cases:,} cases, "
                  f"{workload.distinct_expected:,} distinct expected paths ({workload.distinct_missing:,} not workspace files); "
                  f"written in {time.perf_counter() - started:.0f} s", flush=True)
            figures = check_figures(workload, arguments.repeat)
            if not arguments.skip_server:
                figures.update(server_figures(workload, arguments.edits, arguments.server_runs))
            if arguments.run_cases and name == "tree-20k":
                figures.update(run_figures(workload.root, arguments.run_cases))
            results[name] = figures
            shutil.rmtree(workload.root, ignore_errors=True)
    report(results)
    return 0


def report(results: dict[str, dict[str, float]]) -> None:
    happy = results.get("happy", {}).get("check_s")
    print()
    print(f"{'workload':<10} {'check':>7} {'÷happy':>7} {'c-jsonschema':>13} {'ratio':>6} {'RAG203':>7} "
          f"{'open':>6} {'edit p50':>9} {'edit p95':>9} {'peak RSS':>9} {'diags':>6}")
    for name, figures in results.items():
        check = figures["check_s"]
        other = figures.get("check_jsonschema_s")
        row = [
            f"{name:<10}",
            f"{check:>6.2f}s",
            f"{check / happy:>6.2f}x" if happy else f"{'':>7}",
            f"{other:>12.2f}s" if other else f"{'n/a':>13}",
            f"{other / check:>5.1f}x" if other else f"{'':>6}",
            f"{int(figures['rag203']):>7,}",
        ]
        if "open_s" in figures:
            row += [
                f"{figures['open_s']:>5.2f}s",
                f"{figures['median_ms']:>7.1f}ms",
                f"{figures['p95_ms']:>7.1f}ms",
                f"{figures['memory_mb']:>7.0f}MB",
                f"{int(figures['diagnostics']):>6,}",
            ]
        print(" ".join(row))
    for name, figures in results.items():
        if "run_s" in figures:
            print(f"\n{name}: rag-lsp run {figures['run_s']:.1f} s, bm25s index + retrieval {figures['bm25s_s']:.1f} s: "
                  f"{figures['run_s'] / figures['bm25s_s']:.2f}x (goal ≤ 1.3x)")
    print("\ngoals: check ≤ 1.5 s and ≥ 6x check-jsonschema; open ≤ 1 s; edit p50 ≤ 10 ms, p95 ≤ 30 ms; peak RSS ≤ 250 MB")


if __name__ == "__main__":
    raise SystemExit(main())
