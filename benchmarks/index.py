"""Time the builtin target's index and search, beside bm25s and the numpy floor.

    python benchmarks/index.py [--files 20000] [--queries 100000] [--skip-large]

Over two workspaces, ``examples/`` and a written one of --files files (real text:
sections of 20 to 300 lines of the ``.py`` files of the standard library and
site-packages of the running Python, and the topics of the language reference,
each under its own path), with the default target (semantic, the packaged
model, 60-line windows sharing 12), each step in a fresh process:

* ``cold``: the first index (every file read, cut and embedded; the cache empty);
* ``warm``: a new process opening the same workspace, until it can answer (the
  model loaded, the cache read and checked against every file); ``next start``:
  the process after it (the files written in the moments before the build, too
  recent then to trust by their size and time, were read by the first and found
  unchanged);
* ``one query``: one ``answer`` on the warm index (median and p95 of 200);
* ``N queries``: a run of --queries cases (``answer_many``), sentences of the
  corpus as queries;
* ``memory``: what the index adds to the process once the model is loaded
  (resident memory as it is, and once the memory freed while building has been
  given back to the system; the bytes of its arrays), also per 100,000 chunks.
  A vector is kept as 256 int8 codes and a float32 scale (260 bytes): 100,000
  of them are 26 MB.

Beside them, in the same processes and over the same chunks: bm25s (the
keyword baseline; the builtin target's tokenization) indexing the chunk texts and
retrieving the same queries, and the floor: the same model driven directly with
numpy (the queries embedded in one batch, a matrix product with the chunk
vectors as float32 and ``argpartition`` for the 10 best, a block of queries at a time).
Each figure is printed with its goal and their ratio.

Measured (CPython 3.11, 2 cores whose speed drifts by a quarter within
minutes), 20,000 files (84 MB of text, 53,870–54,030 chunks):

* cold index 20–22 s (goal 30 s; 21–31 s with chunks pooled text by text,
  26–39 s before the tokenizer's two changes below): the build is bound by
  the processors, and the tokenizer takes most of it (about 1.2 µs a token,
  32 million tokens before repeated lines were tokenized once). A quarter of
  that was its normalizer keeping offsets nothing reads (``embedding.TokenIds``
  marks the spaces itself: 0.87 × the build's time, 3 paired runs); and half
  the lines of a batch of chunks are repeats (windows share lines, files share
  blank lines and imports), so each distinct line is tokenized once (0.9 × the
  time again, 3 paired runs). Then the pooling: a chunk's vector summed from
  its gathered token vectors, text by text, cost 15 of 34 s of the main
  thread (profiled); each chunk's distinct tokens counted by one sort for a
  batch and the counts times the vectors summed by one sparse product
  (``StaticModel._pool_counted``) take a third of that (28 → 27 s: the
  tokenizer thread then waited on the files being read and on each group's
  first batch). Since a group of chunks is begun (tokenized) before the last is
  finished (pooled, ``IndexBuilder.refresh``), the tokenizer never waits:
  21 s. Tried and measured without gain: embedding a group of files on a
  thread of its own while the next are read (4 paired runs: 1.04 × the time);
  a whole file as one text (slower); summing a chunk's distinct token vectors
  weighted by their counts text by text (no faster: the per-text calls, not
  the sums, were the cost);
* warm start 0.6–0.9 s (goal 1 s); the start after it 0.55–1.12 s: the model's
  table and tokenizer 0.15–0.35 s, the cache read and every file's size and
  time looked at 0.25–0.5 s, most of it listing the workspace's folders. A
  start after a pause, once the system's file caches no longer hold those
  files and folders, takes up to three times as long in every part (1.6 s:
  imports 0.43, model 0.53, index 0.68 s; the same start repeated: 0.56–0.61 s).
  Loading the model on a thread of its own while the workspace is listed
  gained nothing: the listing's sort then waits for the interpreter's lock;
* one query 2.5 ms before its nearest chunks were ranked again token by token
  (``ranking.reranked``), 3.4–5.2 ms since, 3.6–4.4 ms since each distinct term
  of its 20 nearest chunks is compared once (goal 5 ms: the query embedded, a
  scan of 14 MB of int8 codes by simsimd, 1.7 ms, then its tokens matched with
  the 128 terms of each of its 20 nearest chunks, which hold about 700
  distinct ones of 2,560). A scan on both cores (simsimd's ``threads``) took
  0.9 ms alone but 8–10 ms in the target's process, beside the threads of the
  other libraries;
* 100,000 queries 1.16 × the numpy floor before the reranking, 1.45–1.50 ×
  since, 1.41–1.50 × (98.5 s against 69.7 s) since a block's queries are
  reranked at once, 1.21–1.30 × (105–109 s against 81–90 s) since each
  distinct term is compared once (goal 1.5 ×): the floor is a matrix product, and the
  reranking adds a smaller one per query;
* the index 38 MB per 100,000 chunks once freed memory is given back before the
  chunks' terms were kept, 62–67 MB since (goal 100 MB; 114–119 MB when the
  vectors were float32).

bm25s over the same chunks: 17–28 s to index, 67–163 s for 100,000 queries.
examples/: cold and warm 0.3–0.9 s; its 18 chunks make a run's cost the
per-case work (the floor does not make hits, nor rerank): 1.6–2 × the floor
before the reranking, 15–16 × with it (the reranking's half a millisecond a
case, where the floor spends 35 microseconds), 2.5 × once a small index kept
each word's matches with its chunks (``embedding.TokenMatches``), 1.35–1.49 ×
since a block of queries is matched and reranked at once (5.4–5.9 s against
3.8–4.1 s for 100,000 distinct queries; one query 0.7–1.0 ms), 1.19–1.34 ×
(4.9–5.5 s against 3.8–4.1 s) since a case ranked with its block is answered straight from
its rows and scores, each chunk's path and id looked up once a run, and the
step runs with the collector off, as ``rag-lsp run`` does (the collector alone
was 5% of a run).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

from bytecode import compile_package

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

TOP_K = 10
# Goals: seconds, seconds, milliseconds, ratio to the floor, megabytes per 100k chunks.
GOAL_COLD_S = 30.0
GOAL_WARM_S = 1.0
GOAL_QUERY_MS = 5.0
GOAL_RUN_RATIO = 1.5
GOAL_MEMORY_MB = 100.0


# ---------------------------------------------------------------- the workspaces


def real_sources() -> list[tuple[str, str]]:
    """(path, text) of real files: the standard library's and site-packages' modules,
    and the language reference's topics."""
    found: list[tuple[str, str]] = []
    for key, prefix in (("stdlib", "lib"), ("purelib", "site")):
        root = Path(sysconfig.get_paths()[key])
        for path in sorted(root.rglob("*.py")):
            relative = path.relative_to(root).as_posix()
            if key == "stdlib" and relative.startswith("site-packages/"):
                continue
            try:
                found.append((f"{prefix}/{relative}", path.read_text(encoding="utf-8")))
            except (OSError, UnicodeDecodeError):
                continue
    from pydoc_data.topics import topics

    found += [(f"reference/{topic}.txt", text) for topic, text in sorted(topics.items())]
    return found


def write_large(root: Path, files: int, seed: int = 17) -> int:
    """``files`` files of real text under ``root``; returns the bytes written."""
    rng = random.Random(seed)
    sources = [(path, text.splitlines()) for path, text in real_sources()]
    sources = [(path, lines) for path, lines in sources if len(lines) >= 20]
    rng.shuffle(sources)
    written = 0
    for number in range(files):
        path, lines = sources[number % len(sources)]
        rounds = number // len(sources)
        count = min(len(lines), rng.randint(20, 300))
        start = rng.randrange(0, len(lines) - count + 1)
        relative = path if rounds == 0 else f"copy{rounds}/{path}"
        text = "\n".join(lines[start : start + count]) + "\n"
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        written += len(text.encode("utf-8"))
    return written


def queries_of(root: Path, count: int, seed: int = 18) -> list[str]:
    """``count`` distinct queries, as a dataset's cases ask distinct questions:
    lines of prose of the workspace's files (4 to 16 words), then runs of 4 to
    16 words of two such lines, repeated only once a small workspace has no new
    ones."""
    rng = random.Random(seed)
    pool: list[list[str]] = []
    for path in sorted(root.rglob("*")):
        if path.suffix not in (".txt", ".md", ".py") or not path.is_file() or ".punica" in path.parts:
            continue
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            words = line.strip().strip("#\"'").split()
            if 4 <= len(words) <= 16 and sum(word.isalpha() for word in words) >= 3:
                pool.append(words)
        if len(pool) >= 50_000:
            break
    if not pool:
        return ["how does it work"] * count
    rng.shuffle(pool)
    found: dict[str, None] = {}
    for attempt in range(count * 20):
        if len(found) == count:
            break
        if attempt < len(pool):
            found.setdefault(" ".join(pool[attempt]), None)
            continue
        words = rng.choice(pool) + rng.choice(pool)
        length = rng.randint(4, 16)
        start = rng.randrange(max(1, len(words) - length + 1))
        run = words[start : start + length]
        # Words enough to search by (not "and it is the"), as a question has.
        if sum(len(word) >= 4 and word.isalpha() for word in run) >= 3:
            found.setdefault(" ".join(run), None)
    queries = list(found)
    return [queries[n % len(queries)] for n in range(count)]


# ---------------------------------------------------------------- one step, in a fresh process


def rss_mb(trim: bool = False) -> float:
    """Resident memory; with ``trim``, after garbage collection and after the C
    allocator has given the memory freed so far back to the system (glibc)."""
    if trim:
        import ctypes
        import gc

        gc.collect()
        try:
            ctypes.CDLL("libc.so.6").malloc_trim(0)
        except (OSError, AttributeError):
            pass
    with open("/proc/self/statm") as file:
        return int(file.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def step(root: Path, queries_file: Path | None, with_baselines: bool) -> dict:
    """In this process: open the default target on ``root`` and bring its index up to
    date (timed); with ``queries_file``, time one query, a run of them, bm25s and the floor."""
    started = time.perf_counter()
    # What a run imports, imported first: the memory figures are the index's own.
    for module in ("numpy", "rag_lsp.core.running.targets.builtin", "rag_lsp.core.search.index"):
        importlib.import_module(module)
    from rag_lsp import collector
    from rag_lsp.core.workspace.suitefacts import target_info
    from rag_lsp.core.running.targets import Request, open_target
    from rag_lsp.core.search import embedding
    from rag_lsp.core.workspace.workspace import Workspace

    # The collector policy of `rag-lsp run`, whose work this step times.
    collector.one_shot()
    imported = time.perf_counter()
    target = open_target(target_info("vectors.query", {"builtin": {}}), Workspace(root), 60.0)
    before = rss_mb()
    embedding.load(embedding.wordllama_files())
    loaded = time.perf_counter()
    model_mb = rss_mb() - before
    after_model = rss_mb()
    target.prepare()
    ready = time.perf_counter()
    index = target._state.index
    grown = rss_mb() - after_model
    held = rss_mb(trim=True) - after_model
    out: dict = {
        "seconds": ready - started,
        "import_s": imported - started,
        "model_s": loaded - imported,
        "index_s": ready - loaded,
        "files": len(index.files),
        "chunks": index.size,
        "model_mb": model_mb,
        "index_mb": grown,
        "held_mb": held,
        "arrays_mb": (index.vectors.nbytes + index.lines.nbytes + index.row_file.nbytes) / 1e6,
        "mode": target._state.mode,
    }
    if queries_file is None:
        return out
    queries = json.loads(queries_file.read_text(encoding="utf-8"))
    latencies = []
    for query in queries[:200]:
        begin = time.perf_counter()
        target.answer(Request("q", {"query": query, "topK": TOP_K}))
        latencies.append((time.perf_counter() - begin) * 1000)
    latencies.sort()
    out["query_ms"] = statistics.median(latencies)
    out["query_p95_ms"] = latencies[int(len(latencies) * 0.95) - 1]
    requests = [Request(str(n), {"query": query, "topK": TOP_K}) for n, query in enumerate(queries)]
    # The run and the floor take turns (their ratio is taken pair by pair: the
    # machine's speed drifts); a small index's pairs are quick, so there are three.
    pairs = 3 if with_baselines and index.size < 10_000 else 1
    runs, floors = [], []
    for _ in range(pairs):
        begin = time.perf_counter()
        answered = sum(1 for _ in target.answer_many(requests, fields=frozenset({"path", "id", "score"})))
        runs.append(time.perf_counter() - begin)
        assert answered == len(queries)
        if with_baselines:
            floors.append(numpy_floor(target._state.model, index.vectors.decoded(), queries))
    out["run_s"] = statistics.median(runs)
    out["queries"] = len(queries)
    if with_baselines:
        out["floor_s"] = statistics.median(floors)
        out["ratio"] = statistics.median(run / floor for run, floor in zip(runs, floors))
        out["pairs"] = pairs
        out["bm25s_index_s"], out["bm25s_query_s"] = bm25s_baseline(target, index, queries)
    return out


def numpy_floor(model, vectors, queries: list[str], block: int = 1024) -> float:
    """The model driven directly: embed the queries, a matrix product, the 10 best of each."""
    import numpy

    begin = time.perf_counter()
    embedded = model.embed(queries)
    for start in range(0, len(queries), block):
        scores = embedded[start : start + block] @ vectors.T
        best = numpy.argpartition(-scores, TOP_K - 1, axis=1)[:, :TOP_K]
        numpy.take_along_axis(scores, best, axis=1)
    return time.perf_counter() - begin


def bm25s_baseline(target, index, queries: list[str]) -> tuple[float, float]:
    """bm25s over the same chunks, with the builtin's tokenization: (index s, retrieve s)."""
    import bm25s

    from rag_lsp.core.search.keyword import Analyzer

    builder = target._state.builder
    texts = [builder.chunk_text(index, row) for row in range(index.size)]
    analyzer = Analyzer()
    begin = time.perf_counter()
    retriever = bm25s.BM25()
    retriever.index([analyzer.terms(text) or [""] for text in texts], show_progress=False)
    indexed = time.perf_counter() - begin
    begin = time.perf_counter()
    retriever.retrieve([analyzer.terms(query) or [""] for query in queries], k=min(TOP_K, index.size), show_progress=False)
    return indexed, time.perf_counter() - begin


def in_child(root: Path, cache: Path, queries_file: Path | None = None, baselines: bool = False) -> dict:
    command = [sys.executable, __file__, "--step", str(root)]
    if queries_file is not None:
        command += ["--queries-file", str(queries_file)]
    if baselines:
        command.append("--baselines")
    environment = dict(os.environ, RAG_LSP_CACHE_DIR=str(cache), PYTHONPATH=str(REPO))
    begin = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=environment)
    wall = time.perf_counter() - begin
    if done.returncode != 0:
        raise SystemExit(f"the step over {root} failed:\n{done.stderr[-3000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["wall_s"] = wall
    return result


# ---------------------------------------------------------------- the report


def goal(figure: float, limit: float, unit: str, lower_is_better: bool = True) -> str:
    ratio = figure / limit
    verdict = "met" if (ratio <= 1 if lower_is_better else ratio >= 1) else "MISSED"
    return f"{figure:10.3f} {unit:<4} goal ≤ {limit:g} {unit:<4} ({ratio:5.2f} of it, {verdict})"


def measure(name: str, root: Path, queries: int, work: Path) -> None:
    label = "".join(c for c in name if c.isalnum())
    cache = work / f"cache-{label}"
    shutil.rmtree(cache, ignore_errors=True)
    cold = in_child(root, cache)
    queries_file = work / f"queries-{label}.json"
    queries_file.write_text(json.dumps(queries_of(root, queries)), encoding="utf-8")
    warm = in_child(root, cache, queries_file, baselines=True)
    assert warm["mode"] == "semantic", warm
    # The start after that: files too recent to trust when the index was built
    # (written in its last moments) were read by the first and found unchanged.
    again = in_child(root, cache)
    print(f"\n{name}: {cold['files']:,} files, {cold['chunks']:,} chunks")
    print(f"  cold index          {goal(cold['seconds'], GOAL_COLD_S, 's')}  ({phases(cold)}; process {cold['wall_s']:.2f} s)")
    print(f"  warm start          {goal(warm['seconds'], GOAL_WARM_S, 's')}  ({phases(warm)}; process {warm['wall_s']:.2f} s)")
    print(f"  next start          {goal(again['seconds'], GOAL_WARM_S, 's')}  ({phases(again)}; process {again['wall_s']:.2f} s)")
    print(f"  one query (median)  {goal(warm['query_ms'], GOAL_QUERY_MS, 'ms')}  (p95 {warm['query_p95_ms']:.2f} ms)")
    pairs = f"median of {warm['pairs']} pairs" if warm["pairs"] > 1 else "one pair"
    print(
        f"  {warm['queries']:,} queries      {warm['run_s']:10.3f} s     numpy floor {warm['floor_s']:.3f} s: "
        f"{goal(warm['ratio'], GOAL_RUN_RATIO, 'x')}  ({pairs})"
    )
    print(f"  bm25s               index {warm['bm25s_index_s']:.3f} s, {warm['queries']:,} queries {warm['bm25s_query_s']:.3f} s")
    print(
        f"  memory              the index adds {warm['index_mb']:.1f} MB resident, {warm['held_mb']:.1f} MB once freed memory "
        f"is given back ({warm['arrays_mb']:.1f} MB of arrays) for {warm['chunks']:,} chunks; the model {warm['model_mb']:.1f} MB"
    )
    if warm["chunks"] >= 10_000:  # fewer chunks are too few to say what 100,000 take
        per = 100_000 / warm["chunks"]
        print(f"  per 100k chunks     {goal(warm['held_mb'] * per, GOAL_MEMORY_MB, 'MB')}  (scaled from {warm['chunks']:,})")


def phases(step: dict) -> str:
    return f"imports {step['import_s']:.2f} s, model {step['model_s']:.2f} s, index {step['index_s']:.2f} s"


def calibration() -> float:
    """Seconds of a fixed piece of pure Python: how loaded the machine is (about 0.01 s unloaded)."""
    begin = time.perf_counter()
    total = 0
    for number in range(200_000):
        total += number % 7
    return time.perf_counter() - begin


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--skip-large", action="store_true")
    parser.add_argument("--step", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--queries-file", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--baselines", action="store_true", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    compile_package()
    if arguments.step is not None:
        print(json.dumps(step(arguments.step, arguments.queries_file, arguments.baselines)))
        return 0
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} cores; calibration loop {calibration():.3f} s (about 0.01 s unloaded)")
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        examples = work / "examples"
        shutil.copytree(REPO / "examples", examples)
        measure("examples/", examples, arguments.queries, work)
        if not arguments.skip_large:
            large = work / "large"
            (large / ".punica").mkdir(parents=True)
            size = write_large(large, arguments.files)
            print(f"\n(wrote {arguments.files:,} files, {size / 1e6:.1f} MB of real text)")
            measure(f"{arguments.files:,} files", large, arguments.queries, work)
    print(f"\npeak resident memory of this process {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3:.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
