"""bm25s on its own: the anchor of `rag-lsp run` on the builtin keyword target.

    python benchmarks/bm25_anchor.py WORKSPACE DATASET

Indexes the text files the builtin target would index (the workspace's files as
rag-lsp lists them, binary files left out) with the builtin target's tokenization,
and retrieves every case's query at its `topK` in one batch: what bm25s costs
when used directly, without a scorer, a report or anything per case.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import bm25s  # noqa: E402

from rag_lsp.core.search.keyword import Analyzer  # noqa: E402
from rag_lsp.core.workspace.workspace import Workspace  # noqa: E402


def main() -> int:
    root, dataset = Path(sys.argv[1]), Path(sys.argv[2])
    started = time.perf_counter()
    workspace = Workspace(root)
    analyzer = Analyzer()
    paths, corpus = [], []
    for relative in workspace.files():
        if any(part.startswith(".") for part in relative.split("/")):
            continue
        data = (root / relative).read_bytes()
        if b"\x00" in data[:8192]:
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        paths.append(relative)
        corpus.append(analyzer.terms(text) or [""])
    retriever = bm25s.BM25()
    retriever.index(corpus, show_progress=False)
    queries, ks = [], []
    for line in dataset.read_text(encoding="utf-8").splitlines():
        try:
            case = json.loads(line)
            query, k = case["input"]["query"], case["input"].get("topK", 10)
        except (ValueError, KeyError, TypeError):
            continue
        queries.append(analyzer.terms(query) or [""])
        ks.append(k)
    k = max(ks, default=10)
    results, scores = retriever.retrieve(queries, k=min(k, len(paths)), show_progress=False)
    hits = sum(1 for row in scores for score in row if score > 0)
    print(f"{len(paths)} files, {len(queries)} queries, {hits} hits, {time.perf_counter() - started:.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
