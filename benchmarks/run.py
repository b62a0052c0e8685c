"""Time `rag-lsp run`, the scorer beside pytrec_eval and ir-measures, and rag.hit_at_k.

    python benchmarks/run.py [--cases 100000] [--rows 10000] [--repeat 3]

1. Writes a workspace with one suite of --cases rag cases (1–3 relevant files
   each) and a recording of a retrieval that answers 10 hits per case (path, id,
   corpus, score; each relevant file comes back with probability 0.8, at a random
   rank), then times the whole `rag-lsp run --format json` process (best of
   --repeat; wall and CPU time) and `--format text`.
2. In one process, over the same cases: our scoring step (score_case on every
   case and the suite means), pytrec_eval (the C trec_eval) and ir-measures
   computing recall, P, RR and success at the same depth, each timed without the
   conversion of the input into its own format. Prints the ratio to pytrec_eval.
3. rag.hit_at_k over --rows gdi rows of 5 retrieved chunks × 3 references, both
   vectorised (rapidfuzz cpdist on all cores) and pair by pair.

Needs the test extra (pytrec-eval-terrier, ir-measures): pip install '.[test]'.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bytecode import compile_package

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

SUITE = """\
suites:
  - id: bench
    target: {kind: capability, id: recorded}
    dataset: .punica/evals/bench.jsonl
    engines: [rag]
    options: {rag: {match: path, k: 10}}
    thresholds:
      rag.recall: 0.7
      rag.mrr: 0.3
      rag.mode.semantic: 1
"""
TARGETS = "targets:\n  recorded:\n    recorded: .punica/runs/bench.jsonl\n    fields: [path, id, corpus, score]\n"
FILES = [f"src/service_{n}/module_{m}.py" for n in range(20) for m in range(10)] + [f"docs/topic_{n}.md" for n in range(50)]
HITS = 10


def make_cases(count: int, seed: int = 1) -> list[tuple[str, list[str], list[str]]]:
    """(id, relevant, ranked hit paths) per case: a retrieval that finds 80% of what it should."""
    rng = random.Random(seed)
    cases = []
    for index in range(count):
        relevant = rng.sample(FILES, rng.randint(1, 3))
        found = [path for path in relevant if rng.random() < 0.8]
        others = [path for path in rng.sample(FILES, HITS + 3) if path not in relevant][: HITS - len(found)]
        hits = others[:]
        for path in found:
            hits.insert(rng.randint(0, len(hits)), path)
        cases.append((f"case-{index}", relevant, hits))
    return cases


def write_workspace(root: Path, cases) -> Path:
    (root / ".punica" / "evals").mkdir(parents=True)
    (root / ".punica" / "runs").mkdir()
    (root / ".punica" / "evals" / "bench.suite.yaml").write_text(SUITE, encoding="utf-8")
    (root / ".punica" / "targets.yaml").write_text(TARGETS, encoding="utf-8")
    with open(root / ".punica" / "evals" / "bench.jsonl", "w", encoding="utf-8") as dataset, open(
        root / ".punica" / "runs" / "bench.jsonl", "w", encoding="utf-8"
    ) as recording:
        for case_id, relevant, hits in cases:
            query = {"query": f"where is {case_id} handled", "corpora": ["code"], "topK": HITS}
            dataset.write(json.dumps({"id": case_id, "input": query, "expect": {"relevant": relevant}}) + "\n")
            answer = [
                {"path": path, "id": f"{path}#0", "corpus": "code", "score": round(1 - rank * 0.05, 3)}
                for rank, path in enumerate(hits)
            ]
            recording.write(json.dumps({"id": case_id, "hits": answer, "mode": "semantic"}) + "\n")
    for relative in FILES:
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(f"# {relative}\n", encoding="utf-8")
    return root


def time_process(command: list[str], repeat: int) -> tuple[float, float]:
    """Best wall time and best CPU time (user + system) of a command."""
    best_wall = best_cpu = float("inf")
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        result = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if result.returncode not in (0, 1):
            raise SystemExit(f"{' '.join(command)} exited {result.returncode}:\n{result.stderr[-2000:]}")
        best_wall = min(best_wall, wall)
        best_cpu = min(best_cpu, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
    return best_wall, best_cpu


def best_alternating(commands: list[list[str]], repeat: int) -> list[tuple[float, float]]:
    """Each command's best wall and CPU time over ``repeat`` rounds that run them
    in turn: a machine that slows down midway slows them alike."""
    bests = [(float("inf"), float("inf"))] * len(commands)
    for _ in range(repeat):
        for index, command in enumerate(commands):
            wall, cpu = time_process(command, 1)
            bests[index] = (min(bests[index][0], wall), min(bests[index][1], cpu))
    return bests


def best(function, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def scoring(cases, repeat: int) -> dict[str, float]:
    from rag_lsp.core.running.scorer import aggregate, score_case

    ours_input = [(relevant, hits) for _, relevant, hits in cases]

    def ours() -> None:
        results = [score_case(relevant, hits, "semantic", "path", HITS) for relevant, hits in ours_input]
        aggregate(result.scores for result in results)

    figures = {"ours": best(ours, repeat)}
    try:
        import pytrec_eval
    except ImportError:
        print("pytrec_eval is not installed: pip install pytrec-eval-terrier", file=sys.stderr)
        return figures
    qrels = {case_id: {path: 1 for path in relevant} for case_id, relevant, _ in cases}
    run = {case_id: {path: float(HITS - rank) for rank, path in enumerate(hits)} for case_id, _, hits in cases}
    # The same figures as ours at depth 10: recall, P, RR, success (hit@1).
    measures = {"recall.10", "P.10", "recip_rank", "success.1"}

    def trec() -> None:
        pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)

    figures["pytrec_eval"] = best(trec, repeat)
    try:
        import ir_measures
        from ir_measures import RR, P, R, Success
    except ImportError:
        print("ir-measures is not installed: pip install ir-measures", file=sys.stderr)
        return figures
    qrels_list = [ir_measures.Qrel(q, d, r) for q, docs in qrels.items() for d, r in docs.items()]
    run_list = [ir_measures.ScoredDoc(q, d, s) for q, docs in run.items() for d, s in docs.items()]

    def irm() -> None:
        ir_measures.calc_aggregate([R @ HITS, P @ HITS, RR @ HITS, Success @ 1], qrels_list, run_list)

    figures["ir_measures"] = best(irm, 1)
    return figures


def hit_at_k_rows(count: int, seed: int = 2) -> list[tuple[list[str], list[str]]]:
    rng = random.Random(seed)
    # Words of varied letters and lengths, as prose has (not "term1", "term2", ...,
    # whose shared prefixes would make any two passages look alike to a ratio).
    letters = "etaoinshrdlcumwfgypbvkjxqz"
    weights = [12, 9, 8, 8, 7, 7, 6, 6, 6, 4, 4, 3, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1]
    words = ["".join(rng.choices(letters, weights, k=rng.randint(2, 10))) for _ in range(5000)]

    def passage(size: int) -> str:
        return " ".join(rng.choice(words) for _ in range(size))

    rows = []
    for _ in range(count):
        references = [passage(rng.randint(20, 40)) for _ in range(3)]
        chunks = [passage(rng.randint(40, 80)) for _ in range(5)]
        if rng.random() < 0.6:  # the evidence is among the chunks, with some context around it
            chunks[rng.randrange(5)] = passage(10) + " " + rng.choice(references) + " " + passage(10)
        rows.append((references, chunks))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    arguments = parser.parse_args()
    compile_package()
    cases = make_cases(arguments.cases)

    print(f"== rag-lsp run over {arguments.cases:,} cases, recorded target, {HITS} hits each ==")
    with tempfile.TemporaryDirectory() as folder:
        root = write_workspace(Path(folder) / "ws", cases)
        size = sum(path.stat().st_size for path in (root / ".punica").rglob("*.jsonl"))
        print(f"dataset + recording: {size / 1e6:.0f} MB")
        for output in ("json", "text"):
            command = [sys.executable, "-m", "rag_lsp", "run", str(root), "--format", output]
            wall, cpu = time_process(command, arguments.repeat)
            print(
                f"rag-lsp run --format {output:<5} {wall:6.2f} s wall, {cpu:5.2f} s CPU  "
                f"({arguments.cases / wall:,.0f} cases/s){'  goal < 2 s' if output == 'json' else ''}"
            )

    print(f"\n== scoring step over the same {arguments.cases:,} cases (recall, precision/P, MRR/RR, hit@1/success) ==")
    figures = scoring(cases, arguments.repeat)
    ours = figures["ours"]
    print(f"rag-lsp scorer   {ours:6.3f} s  ({arguments.cases / ours:,.0f} cases/s)")
    for name in ("pytrec_eval", "ir_measures"):
        if name in figures:
            print(f"{name:<16} {figures[name]:6.3f} s  ours / theirs = {ours / figures[name]:.2f}x"
                  + ("  goal ≤ 1.5x" if name == "pytrec_eval" else ""))

    from rag_lsp.core.running.hit_at_k import hit_at_k_many

    rows = hit_at_k_rows(arguments.rows)
    print(f"\n== rag.hit_at_k over {arguments.rows:,} rows of 5 chunks × 3 references ==")
    vectorised = best(lambda: hit_at_k_many(rows, vectorise=True), 1)
    scalar = best(lambda: hit_at_k_many(rows, vectorise=False), 1)
    cores = os.cpu_count() or 1
    print(f"vectorised (cpdist, {cores} cores) {vectorised:6.2f} s  ({arguments.rows / vectorised:,.0f} rows/s)")
    print(f"pair by pair                 {scalar:6.2f} s  ({arguments.rows / scalar:,.0f} rows/s)")
    hits = sum(1 for result in hit_at_k_many(rows[:2000]) if result.score == 1.0)
    print(f"(hit rate of the rows: {hits / min(2000, len(rows)):.0%})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
