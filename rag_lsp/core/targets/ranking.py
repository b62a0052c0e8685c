"""Ranking helpers of the builtin target: the best rows of a score array, and
reciprocal-rank fusion of two rankings (``retrieval: hybrid``)."""

from __future__ import annotations

from typing import Sequence, TypeVar

import numpy

# The constant of reciprocal-rank fusion (Cormack, Clarke and Büttcher, 2009): it
# damps the weight of the very first ranks, so a chunk both retrievals rank well
# beats one that only one of them ranks first.
RRF_K = 60

T = TypeVar("T")


def top_rows(scores: numpy.ndarray, count: int, rows: numpy.ndarray | None = None) -> list[tuple[int, float]]:
    """The ``count`` best (row, score) of ``scores``, best first; among ``rows``
    only when given. Ties go to the lower row, so answers are stable run to run."""
    if rows is not None:
        scores = scores[rows]
    total = len(scores)
    if count <= 0 or total == 0:
        return []
    if count < total:
        best = numpy.argpartition(-scores, count - 1)[:count]
    else:
        best = numpy.arange(total)
    # Highest score first, then the lower position.
    order = best[numpy.lexsort((best, -scores[best]))]
    chosen = scores[order].tolist()
    return list(zip((rows[order] if rows is not None else order).tolist(), chosen))


def reciprocal_rank_fusion(rankings: Sequence[Sequence[int]], count: int, k: int = RRF_K) -> list[tuple[int, float]]:
    """Rows ranked by the sum over ``rankings`` of 1 / (k + rank), rank from 1; the
    ``count`` best, best first. A row missing from a ranking gets nothing from it.
    Ties go to the row with the better best rank, then the lower row."""
    fused: dict[int, float] = {}
    best: dict[int, int] = {}
    for ranking in rankings:
        for rank, row in enumerate(ranking, 1):
            fused[row] = fused.get(row, 0.0) + 1.0 / (k + rank)
            if rank < best.get(row, rank + 1):
                best[row] = rank
    order = sorted(fused, key=lambda row: (-fused[row], best[row], row))
    return [(row, fused[row]) for row in order[:count]]


def by_file(ranked: Sequence[T], files: Sequence[int]) -> list[T]:
    """``ranked`` (best first) with each file's best item first, in their order, then
    the further items of every file, in their order: the first hits name as many
    files as there are, rather than several chunks of the one that matches best.
    ``files[n]`` is the file of ``ranked[n]``."""
    first: list[T] = []
    further: list[T] = []
    seen: set[int] = set()
    for item, file in zip(ranked, files):
        if file in seen:
            further.append(item)
        else:
            seen.add(file)
            first.append(item)
    return first + further
