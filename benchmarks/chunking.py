"""How well the builtin target finds the file that answers a paraphrased question,
for each retrieval and chunking, against plain embeddings: the measurement behind
the chunking defaults and the hybrid fusion.

    python benchmarks/chunking.py [--corpus reference|stdlib|manual|examples|notes|few-notes|packages ...]
                                  [--size 60 ...] [--half tune|held-out]

For each set (``benchmarks/paraphrases.py``: the language reference's topics,
prose; the standard library's modules, code; the manual pages of command-line
tools; 20 short notes, and the first 5 of them; the installed Debian packages'
descriptions asked by their summaries; and the ``examples/`` workspace with its
own questions) the files are written into a fresh workspace, the builtin target
is opened with each retrieval (keyword, semantic, hybrid) and chunking (60-line
windows with 12 shared unless ``--size`` says: 0 for whole files), and every
question is asked. The baseline ``plain`` is the same model without anything
the target adds: each whole file's vector the mean of its token vectors, ranked
by cosine. It prints, per row:

* ``hit@1``: the share of questions whose first hit is a file that answers it;
* ``recall@3``: the share with such a file among the first three hits;
* ``MRR``: the mean of 1 / the rank of the first such file (0 past the tenth);
* ``index s``: the time to build the index (embedding included), cold;
* the goal: hybrid's recall@3 and MRR at least the better of keyword's and
  semantic's less 0.02; semantic's recall@3 at least the baseline's less 0.05.

``--half tune`` asks every other question from the first, those the hybrid
fusion's weight was chosen on (``ranking.KEYWORD_WEIGHT``); ``--half held-out``
the others. The index cache goes to a temporary folder, so every row builds
from scratch.

Measured (CPython 3.11, 2 cores), recall@3 and MRR, 60-line windows:

    set          keyword      semantic     hybrid       plain
    reference    0.62 0.54    0.77 0.56    0.77 0.61    0.71 0.54
    stdlib       0.68 0.57    0.90 0.72    0.90 0.74    0.66 0.55
    manual       0.63 0.52    0.75 0.63    0.75 0.65    0.71 0.65
    examples     0.92 0.89    1.00 0.94    1.00 0.94    1.00 0.96
    notes        0.30 0.21    0.88 0.69    0.88 0.69    0.82 0.71
    few-notes    0.50 0.43    1.00 0.90    1.00 0.90    1.00 0.80
    packages     0.83 0.73    0.82 0.74    0.84 0.76    0.74 0.64

Hybrid fused by reciprocal rank found 0.69, 0.84, 0.75, 0.92, 0.65, 0.90 and
0.84 (MRR 0.62, 0.69, 0.65, 0.94, 0.48, 0.78, 0.75): less than semantic search
wherever the questions' words differ from the answers'.

Before the 20 nearest chunks were ranked again by matching the query's tokens
one by one (``ranking.reranked``), semantic search found 0.65, 0.82 and 0.71
(hit@1 0.46, 0.48, 0.46) on the reference, the standard library and the manual
pages; before chunks were embedded in their context, tokens weighted by rarity
and each file's best chunk listed first, 0.56, 0.60 and 0.60. By chunking,
semantic recall@3:

    chunking              reference   stdlib   manual
    10 lines, 2 shared    0.67        0.88     0.74
    20 lines, 4 shared    0.71        0.86     0.76
    40 lines, 8 shared    0.77        0.90     0.76
    60 lines, 12 shared   0.77        0.90     0.75
    80 lines, 16 shared   0.79        0.84     0.69
    whole files           0.73        0.74     0.74

Windows of 40 and 60 lines find the most (0.81 on average), whole files and
short windows fewer; 60 lines with 12 shared stays the default (see
``rag_lsp/core/workspace/chunking.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import paraphrases  # noqa: E402

RETRIEVALS = ("keyword", "semantic", "hybrid")
SIZES = (10, 20, 40, 60, 80, 0)  # 0: whole files
DEFAULT_SIZE = 60
SETS = ("reference", "stdlib", "manual", "examples", "notes", "few-notes", "packages")
# The goals beside the figures: hybrid at least the better of keyword and
# semantic, less HYBRID_SLACK (recall@3 and MRR); semantic at least the plain
# baseline, less PLAIN_SLACK (recall@3).
HYBRID_SLACK = 0.02
PLAIN_SLACK = 0.05


def examples_corpus() -> paraphrases.Corpus:
    """The examples/ workspace's files and the questions of its dataset."""
    root = HERE.parent / "examples"
    files = {
        path.relative_to(root).as_posix(): path.read_text(encoding="utf-8")
        for folder in ("src", "docs")
        for path in sorted((root / folder).rglob("*"))
        if path.is_file()
    }
    questions = []
    for line in (root / ".punica" / "evals" / "gateway.jsonl").read_text(encoding="utf-8").splitlines():
        case = json.loads(line)
        questions.append((case["input"]["query"], case["expect"]["relevant"]))
    return paraphrases.Corpus("examples", files, questions)


def chunking_of(size: int) -> dict:
    return {"unit": "file"} if size == 0 else {"unit": "lines", "size": size, "overlap": size // 5}


def figures(ranked: list[list[str]], questions: list[tuple[str, list[str]]]) -> tuple[float, float, float]:
    """hit@1, recall@3 (the share of questions with a file that answers among the
    first three) and MRR (over the first ten) of each question's ranked paths."""
    first = top3 = reciprocal = 0.0
    for paths, (_, relevant) in zip(ranked, questions):
        first += bool(paths) and paths[0] in relevant
        top3 += any(path in relevant for path in paths[:3])
        reciprocal += next((1 / rank for rank, path in enumerate(paths[:10], 1) if path in relevant), 0.0)
    count = max(1, len(questions))
    return first / count, top3 / count, reciprocal / count


def measure(corpus: paraphrases.Corpus, retrieval: str, size: int) -> tuple[float, float, float, float]:
    """hit@1, recall@3, MRR and the cold index build's seconds of a retrieval."""
    from rag_lsp.core.running.targets import Request, open_target
    from rag_lsp.core.workspace.suitefacts import target_info
    from rag_lsp.core.workspace.workspace import Workspace

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / ".punica").mkdir()
        corpus.write(root)
        os.environ["RAG_LSP_CACHE_DIR"] = str(root / ".cache-outside")
        options = {"retrieval": retrieval, "chunking": chunking_of(size)}
        target = open_target(target_info("bench", {"builtin": options}), Workspace(root), 60.0)
        started = time.perf_counter()
        target.prepare()
        seconds = time.perf_counter() - started
        requests = [Request(str(n), {"query": question, "topK": 10}) for n, (question, _) in enumerate(corpus.questions)]
        answers = dict(target.answer_many(requests, fields=frozenset({"path"})))
    ranked = [[hit.path for hit in answers[n].hits] for n in range(len(corpus.questions))]
    return (*figures(ranked, corpus.questions), seconds)


def plain(corpus: paraphrases.Corpus) -> tuple[float, float, float, float]:
    """The baseline: the same model's plain cosine over whole files (each file's
    vector the mean of its token vectors, no path, no context, no reranking)."""
    import numpy

    from rag_lsp.core.search.embedding import load, wordllama_files

    model = load(wordllama_files())
    paths = sorted(corpus.files)
    started = time.perf_counter()
    vectors = model.embed([corpus.files[path] for path in paths])
    seconds = time.perf_counter() - started
    similarities = model.embed([question for question, _ in corpus.questions]) @ vectors.T
    order = numpy.argsort(-similarities, axis=1, kind="stable")[:, :10]
    return (*figures([[paths[at] for at in row] for row in order.tolist()], corpus.questions), seconds)


def half(corpus: paraphrases.Corpus, which: str | None) -> paraphrases.Corpus:
    """The corpus with every other question: ``tune`` the first, third, …;
    ``held-out`` the others (the fusion's weight was chosen on ``tune``)."""
    if which is None:
        return corpus
    kept = corpus.questions[0 if which == "tune" else 1 :: 2]
    chosen = paraphrases.Corpus(corpus.name, corpus.files, [])
    chosen.questions = kept
    return chosen


def goals(rows: dict[str, tuple[float, float, float, float]]) -> dict[str, str]:
    """The goal beside each row: hybrid's recall@3 and MRR at least the better
    half's less HYBRID_SLACK; semantic's recall@3 at least the baseline's less
    PLAIN_SLACK."""
    marks = {name: "" for name in rows}
    if "hybrid" in rows and "keyword" in rows and "semantic" in rows:
        parts = []
        for at, label in ((1, "recall@3"), (2, "MRR")):
            best = max(rows["keyword"][at], rows["semantic"][at])
            parts.append(f"{label} >= {best - HYBRID_SLACK:.2f} {'✓' if rows['hybrid'][at] >= best - HYBRID_SLACK - 1e-9 else '✗'}")
        marks["hybrid"] = ", ".join(parts)
    if "semantic" in rows and "plain" in rows:
        floor = rows["plain"][1] - PLAIN_SLACK
        marks["semantic"] = f"recall@3 >= {floor:.2f} {'✓' if rows['semantic'][1] >= floor - 1e-9 else '✗'}"
    return marks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", action="append", choices=SETS)
    parser.add_argument("--size", action="append", type=int, help=f"lines per chunk (0: whole files; default {DEFAULT_SIZE})")
    parser.add_argument("--retrieval", action="append", choices=RETRIEVALS)
    parser.add_argument("--half", choices=("tune", "held-out"), help="ask only every other question")
    arguments = parser.parse_args()
    makers = dict(paraphrases.CORPORA, examples=examples_corpus)
    for name in arguments.corpus or SETS:
        corpus = half(makers[name](), arguments.half)
        if not corpus.questions:
            print(f"\n{name}: no question (its files are missing on this machine)")
            continue
        print(f"\n{name}: {len(corpus.files)} files, {len(corpus.questions)} questions")
        print(f"  {'chunking':<22} {'retrieval':<9} {'hit@1':>6} {'recall@3':>8} {'MRR':>6} {'index s':>8}  goal")
        for size in arguments.size or (DEFAULT_SIZE,):
            label = "whole files" if size == 0 else f"{size} lines, {size // 5} shared"
            rows = {retrieval: measure(corpus, retrieval, size) for retrieval in arguments.retrieval or RETRIEVALS}
            rows["plain"] = plain(corpus)
            marks = goals(rows)
            for retrieval, (first, top3, reciprocal, seconds) in rows.items():
                shown = "whole files" if retrieval == "plain" else label
                print(f"  {shown:<22} {retrieval:<9} {first:>6.2f} {top3:>8.2f} {reciprocal:>6.2f} {seconds:>8.2f}  {marks[retrieval]}", flush=True)


if __name__ == "__main__":
    main()
