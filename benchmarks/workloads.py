"""Workspaces shaped like users' own, for the benchmarks.

Each generator writes a workspace with one suite on the default target (the
builtin `vectors.query`, so RAG203 applies) and a dataset of rag cases, and
returns a :class:`Workload` describing it. Every generator is seeded: the same
arguments write the same bytes.

* ``happy``: the original shape, 60 files, each case listing 1–3 of them.
* ``tree``: a nested tree of source and documentation files 1–4 folders deep
  (`services/auth/cache/token_store_1234.py`), each with some text to search;
  each case lists 1–4 paths drawn from it with Zipf-like reuse (a few files are
  expected by thousands of cases, most by a handful), and 3% of the listed paths
  are near-miss typos of real ones (`_` for `-`, a dropped dot, a stale `old/`
  folder, a changed extension, a dropped letter): ``tree-20k``, and the large
  workspace ``tree-50k``.
* ``elsewhere``: a small repository whose dataset describes a corpus that a
  search service indexes elsewhere: about 2.3 distinct expected paths per case,
  none of them a workspace file.
* ``languages``: ``tree-20k`` with 35% of its questions asked in other languages
  (French, German, Spanish, Russian, Japanese, Chinese, an emoji now and then),
  each line written as json.dumps writes it (``\\u`` escapes) or as UTF-8, as
  a dataset merged from two tools is: text that is not ASCII costs a reader
  more than its length says.
* ``lists``: long lists. A 5,000-file tree and a twentieth of the cases, most
  listing a few paths and a tail listing hundreds to thousands (a question whose
  answer is a whole folder, a list pasted from a search's export), 3% typos, some
  values listed twice, written with escapes (`\/`), or as numbers
  (document ids where paths belong).

Besides those defects, about 1% of the cases of every workload carry one of the
other findings users make (nothing relevant, a repeated id, an unnormalized path,
a cut-off line, a value listed twice).
"""

from __future__ import annotations

import bisect
import itertools
import json
import random
from dataclasses import dataclass, field
from pathlib import Path

SUITE = """\
suites:
  - id: bench
    target: {{kind: capability, id: vectors.query}}
    dataset: .punica/evals/bench.jsonl
    engines: [rag]
    options: {{rag: {{match: path, k: {k}}}}}
    thresholds:
      rag.recall: 0.8
      rag.mode.semantic: 1
"""
DATASET = ".punica/evals/bench.jsonl"

# Words of identifiers and prose, for folder names, file names and file texts.
AREAS = [
    "services", "packages", "apps", "libs", "internal", "cmd", "web", "api", "platform", "tools",
    "infra", "docs", "tests", "scripts", "plugins", "modules", "core", "shared",
]
TOPICS = [
    "auth", "billing", "cache", "gateway", "search", "index", "storage", "queue", "payments",
    "users", "accounts", "orders", "inventory", "shipping", "notifications", "email", "reports",
    "analytics", "metrics", "logging", "tracing", "config", "session", "tokens", "permissions",
    "approvals", "workflow", "scheduler", "jobs", "workers", "export", "import", "sync", "backup",
    "migrations", "schema", "models", "views", "handlers", "routes", "middleware", "clients",
    "adapters", "parsers", "render", "templates", "assets", "i18n", "admin", "audit",
]
WORDS = [
    "token", "store", "client", "server", "handler", "request", "response", "retry", "policy",
    "limit", "rate", "window", "bucket", "user", "account", "order", "invoice", "refund", "ledger",
    "entry", "event", "stream", "batch", "chunk", "vector", "embedding", "query", "ranker", "score",
    "filter", "builder", "factory", "registry", "loader", "reader", "writer", "encoder", "decoder",
    "codec", "cursor", "page", "table", "record", "snapshot", "checkpoint", "lease", "lock", "mutex",
    "timeout", "deadline", "budget", "quota", "approval", "review", "comment", "thread", "message",
    "channel", "topic", "subscriber", "publisher", "router", "resolver", "validator", "sanitizer",
]
EXTENSIONS = [".py", ".py", ".py", ".ts", ".ts", ".go", ".java", ".md", ".md", ".rs", ".yaml"]


@dataclass
class Workload:
    name: str
    root: Path
    description: str
    cases: int
    files: int
    # Distinct expected values, and how many of them are not workspace files.
    distinct_expected: int = 0
    distinct_missing: int = 0
    # Lines (0-based) of the dataset, kept for the server benchmark's edits.
    lines: list[str] = field(default_factory=list, repr=False)

    @property
    def dataset(self) -> Path:
        return self.root / DATASET


def _write_suite(root: Path, k: int = 5) -> None:
    (root / ".punica" / "evals").mkdir(parents=True, exist_ok=True)
    (root / ".punica" / "evals" / "bench.suite.yaml").write_text(SUITE.format(k=k), encoding="utf-8")


def _zipf_picker(count: int, rng: random.Random, exponent: float = 1.05):
    """A function drawing indexes 0..count-1 with Zipf-like weights, over a
    shuffled order (popular files are spread over the tree, not the first ones)."""
    order = list(range(count))
    rng.shuffle(order)
    cumulative = list(itertools.accumulate(1.0 / (rank + 1) ** exponent for rank in range(count)))
    total = cumulative[-1]

    def pick() -> int:
        return order[min(bisect.bisect_left(cumulative, rng.random() * total), count - 1)]

    return pick


def tree_paths(count: int, rng: random.Random) -> list[str]:
    """``count`` distinct file paths 1–4 folders deep, named from the word lists."""
    paths: set[str] = set()
    folders = []
    for _ in range(max(count // 12, 8)):
        depth = rng.choice((1, 2, 2, 3, 3, 3, 4))
        parts = [rng.choice(AREAS)] + [rng.choice(TOPICS) for _ in range(depth - 1)]
        folders.append("/".join(parts))
    while len(paths) < count:
        folder = rng.choice(folders)
        name = "_".join(rng.sample(WORDS, rng.choice((1, 2, 2, 3))))
        if rng.random() < 0.6:
            name += f"_{rng.randrange(10_000)}"
        paths.add(f"{folder}/{name}{rng.choice(EXTENSIONS)}")
    return sorted(paths)


def typo_of(path: str, rng: random.Random) -> str:
    """A near miss of ``path`` of a kind users make."""
    folder, _, name = path.rpartition("/")
    stem, dot, extension = name.rpartition(".")
    kind = rng.randrange(6)
    if kind == 0 and "_" in name:
        return f"{folder}/{name.replace('_', '-', 1)}"
    if kind == 1 and dot:
        return f"{folder}/{stem}{extension}"  # a dropped dot
    if kind == 2:
        return f"{folder}/old/{name}"  # a file that was moved since
    if kind == 3 and dot:
        other = {"py": "pyi", "ts": "tsx", "md": "rst", "go": "c", "java": "kt", "rs": "rs.in", "yaml": "yml"}
        return f"{folder}/{stem}.{other.get(extension, 'txt')}"
    if kind == 4 and len(stem) > 3:
        cut = rng.randrange(1, len(stem) - 1)
        return f"{folder}/{stem[:cut]}{stem[cut + 1:]}.{extension}"  # a dropped letter
    return f"{folder.capitalize()}/{name}"  # case differs


def file_text(path: str, rng: random.Random) -> str:
    """A source or documentation file of 20–60 lines, about what its path says."""
    words = [part for part in path.replace(".", "/").replace("_", "/").split("/") if part.isalpha()]
    lines = []
    for number in range(rng.randint(20, 60)):
        chosen = rng.sample(WORDS, 4) + rng.sample(words, min(2, len(words)))
        rng.shuffle(chosen)
        if path.endswith(".md"):
            lines.append(" ".join(chosen).capitalize() + ".")
        else:
            lines.append(f"def {chosen[0]}_{chosen[1]}({chosen[2]}, {chosen[3]}):  # {' '.join(chosen[4:])} {number}")
    return "\n".join(lines) + "\n"


def _words_of(paths: list[str]) -> list[str]:
    """The words of the expected paths' folders and names, for a question about them."""
    return [w for p in paths if isinstance(p, str) for w in p.replace(".", "/").replace("_", "/").split("/") if w.isalpha() and len(w) > 2]


def _query_for(paths: list[str], rng: random.Random) -> str:
    words = _words_of(paths)
    chosen = rng.sample(words, min(len(words), rng.randint(2, 5))) or ["code"]
    return "how does the " + " ".join(chosen) + " work"


# Questions asked in other languages than English (an eval set gathered from a
# team's users), around the code's own words; an emoji now and then.
QUESTIONS_ELSEWHERE = [
    "où se trouve {} dans le code ?", "comment fonctionne {} ?", "wie funktioniert {} genau?",
    "wo wird {} konfiguriert?", "¿dónde está {}?", "как работает {}?", "где настраивается {}?",
    "{} はどこで設定されますか？", "{} の仕組みは？", "{} 在哪里配置？", "{} 是如何工作的？",
    "{} 🔍 where is it", "{} broke again 😅 how does it work",
]


def _question_elsewhere(paths: list[str], rng: random.Random) -> str:
    words = _words_of(paths)
    return rng.choice(QUESTIONS_ELSEWHERE).format(" ".join(rng.sample(words, min(len(words), rng.randint(1, 3)))) or "code")


def _other_defect(case: dict, index: int, rng: random.Random) -> str | None:
    """About 1% of cases: another finding users make; the line, or None."""
    roll = rng.random()
    relevant = case["expect"]["relevant"]
    if roll < 0.002:
        case["expect"]["relevant"] = []  # RAG200
    elif roll < 0.004:
        case["id"] = f"case-{max(index - 1, 0)}"  # RAG202
    elif roll < 0.006 and isinstance(relevant[0], str):
        relevant[0] = "./" + relevant[0]  # RAG206
    elif roll < 0.008:
        relevant.append(relevant[0])  # RAG205
    elif roll < 0.010:
        return json.dumps(case)[:-1]  # RAG002
    return None


def _case_line(index: int, relevant: list[str], rng: random.Random, other_languages: float = 0.0) -> str:
    """A case's line; with ``other_languages``, the share of questions asked in
    another language, written as json.dumps writes them (``\\u`` escapes) or as
    UTF-8 (a dataset merged from two tools)."""
    # Drawn only for such a workload: the other workloads write the bytes they always wrote.
    elsewhere = other_languages > 0 and rng.random() < other_languages
    case = {
        "id": f"case-{index}",
        "input": {"query": _question_elsewhere(relevant, rng) if elsewhere else _query_for(relevant, rng), "corpora": ["code"], "topK": 10},
        "expect": {"relevant": relevant},
    }
    broken = _other_defect(case, index, rng)
    return broken if broken is not None else json.dumps(case, ensure_ascii=not elsewhere or rng.random() < 0.5)


def _write_tree(root: Path, files: int, rng: random.Random) -> list[str]:
    """Write a tree of ``files`` files (see tree_paths) with their texts; their paths."""
    paths = tree_paths(files, rng)
    for relative in paths:
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(file_text(relative, rng), encoding="utf-8")
    return paths


def _write_dataset(root: Path, lines: list[str]) -> None:
    (root / DATASET).write_text("\n".join(lines) + "\n", encoding="utf-8")


def tree(
    root: Path, files: int = 20_000, cases: int = 100_000, seed: int = 15, typo_share: float = 0.03, other_languages: float = 0.0, name: str = ""
) -> Workload:
    """A tree of ``files`` files (tree-20k, tree-50k), with a share of its
    questions in other languages (``languages``, see _case_line)."""
    rng = random.Random(seed)
    _write_suite(root)
    paths = _write_tree(root, files, rng)
    pick = _zipf_picker(len(paths), rng)
    known = set(paths)
    lines = []
    expected: set[str] = set()
    for index in range(cases):
        relevant = list(dict.fromkeys(paths[pick()] for _ in range(rng.randint(1, 4))))
        relevant = [typo_of(path, rng) if rng.random() < typo_share else path for path in relevant]
        expected.update(relevant)
        lines.append(_case_line(index, relevant, rng, other_languages))
    _write_dataset(root, lines)
    missing = sum(1 for value in expected if value not in known)
    languages = f", {other_languages:.0%} of the questions in other languages (accents, Cyrillic, CJK, emoji)" if other_languages else ""
    return Workload(
        name or f"tree-{files // 1000}k", root, f"{files:,} files 1–4 folders deep, Zipf reuse, {typo_share:.0%} typos{languages}",
        cases, files, len(expected), missing, lines,
    )


def elsewhere(root: Path, cases: int = 100_000, seed: int = 16, repository_files: int = 300) -> Workload:
    """Workload E: the dataset's corpus is indexed by a service, not this workspace."""
    rng = random.Random(seed)
    _write_suite(root)
    for relative in tree_paths(repository_files, rng):
        target = root / "tools" / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(file_text(relative, rng), encoding="utf-8")
    # The corpus elsewhere: a knowledge base of many documents, most cited once or twice.
    corpus = [f"kb/{path.rsplit('.', 1)[0]}.html" for path in tree_paths(int(cases * 2.4), rng)]
    fresh = iter(corpus)
    pick = _zipf_picker(len(corpus), rng, exponent=0.6)
    lines = []
    expected: set[str] = set()
    for index in range(cases):
        relevant = []
        for _ in range(rng.randint(1, 4)):
            # Mostly documents no other case cites, as in a knowledge base's Q&A set.
            value = next(fresh, None) if rng.random() < 0.9 else None
            relevant.append(value if value is not None else corpus[pick()])
        relevant = list(dict.fromkeys(relevant))
        expected.update(relevant)
        lines.append(_case_line(index, relevant, rng))
    _write_dataset(root, lines)
    return Workload(
        "elsewhere", root, "expected paths of a corpus indexed elsewhere, none in the workspace",
        cases, repository_files, len(expected), len(expected), lines,
    )


def lists(root: Path, cases: int = 100_000, seed: int = 17, files: int = 5_000) -> Workload:
    """Long lists: a twentieth of ``cases``, listing 1 to 5,000 paths each."""
    rng = random.Random(seed)
    _write_suite(root)
    paths = _write_tree(root, files, rng)
    known = set(paths)
    lines = []
    expected: set[str] = set()
    for index in range(max(cases // 20, 1)):
        roll = rng.random()
        count = rng.randint(1, 8) if roll < 0.9 else rng.randint(50, 500) if roll < 0.99 else rng.randint(1_000, 5_000)
        start = rng.randrange(len(paths))
        relevant: list = [paths[(start + step) % len(paths)] for step in range(count)]
        relevant = [typo_of(path, rng) if rng.random() < 0.03 else path for path in relevant]
        if count > 1 and rng.random() < 0.05:
            relevant += rng.sample(relevant, max(1, count // 10))  # listed twice
        if rng.random() < 0.01:
            relevant = [rng.randrange(10**6) if rng.random() < 0.5 else value for value in relevant]  # ids, not paths
        expected.update(value for value in relevant if isinstance(value, str))
        line = _case_line(index, relevant, rng)
        if rng.random() < 0.02:
            line = line.replace("/", "\\/")  # JSON's escaped slash: the same values
        lines.append(line)
    _write_dataset(root, lines)
    missing = sum(1 for value in expected if value not in known)
    return Workload(
        "lists", root, f"{files:,} files, cases listing 1–5,000 paths (a tail of long lists)",
        len(lines), files, len(expected), missing, lines,
    )


def happy(root: Path, cases: int = 100_000) -> Workload:
    """The shape benchmarks/check.py has always measured: 60 files, 1–3 per case."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from check import FILES, write_workspace

    write_workspace(root, cases)
    lines = (root / DATASET).read_text(encoding="utf-8").splitlines()
    return Workload("happy", root, "60 files, each case listing 1–3 of them", cases, len(FILES), len(FILES), 1, lines)


GENERATORS = {
    "happy": happy,
    "tree-20k": lambda root, cases: tree(root, 20_000, cases),
    "elsewhere": lambda root, cases: elsewhere(root, cases),
    "tree-50k": lambda root, cases: tree(root, 50_000, cases, seed=50),
    "lists": lambda root, cases: lists(root, cases),
    "languages": lambda root, cases: tree(root, 20_000, cases, seed=21, other_languages=0.35, name="languages"),
}
