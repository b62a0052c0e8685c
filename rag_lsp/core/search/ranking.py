"""Ranking helpers of the builtin target: the best rows of a score array (of one
query, or of a block of queries at once), the fusion of a ranking by meaning
and one by keyword (``retrieval: hybrid``), and the file-first order of hits."""

from __future__ import annotations

from typing import Callable, Sequence

import numpy

# A query's nearest chunks by vector that are ranked again by matching its tokens
# one by one with theirs (see reranked), and the weight of the vectors' cosine in
# the score they are ranked by (the matching has the rest). A static model's
# vector of a passage is the mean of its every token: a question's few words
# are blurred in it, and a paraphrase ("halt" for "stop") shares no token to
# count. Over the paraphrased questions of ``benchmarks/chunking.py``, reranking
# the 20 nearest finds the answering file among the first three for 0.81 of
# them (prose, code and manual pages; 0.73 without), and first for more on code
# and manual pages.
RERANKED = 20
COSINE_WEIGHT = 0.5

# The rows of a query's chunks -> how well each matches its tokens.
Matching = Callable[[numpy.ndarray], numpy.ndarray]
# The rows of chunks of each query of a block, a row per query -> how well each
# matches its query's tokens, in the same shape.
BlockMatching = Callable[[numpy.ndarray], numpy.ndarray]

# How far a hybrid search leans on the keyword ranking when keyword search is
# sure of itself (see fused_by_confidence): its weight is this times how much of
# what the query's words could score its best chunk scores. Equal-weight
# reciprocal-rank fusion found fewer answers than semantic search alone whenever
# the question's words differ from the passage's (20 short notes asked in other
# words: 0.65 in the first three, against 0.88): a chunk that shares one common
# word with the question and is ranked by both retrievals beats the answer only
# semantic search finds. Chosen on half the questions of ``benchmarks/chunking.py``
# (0.5 to 0.7 do alike), and as good on the other half.
KEYWORD_WEIGHT = 0.6


def top_rows(scores: numpy.ndarray, count: int, rows: numpy.ndarray | None = None) -> list[tuple[int, float]]:
    """The ``count`` best (row, score) of ``scores``, best first; among ``rows``
    only when given. Ties go to the lower row, so answers are stable run to run."""
    if rows is not None:
        scores = scores[rows]
    total = len(scores)
    if count <= 0 or total == 0:
        return []
    best = _best_positions(scores, count) if count < total else numpy.arange(total)
    # Highest score first, then the lower position.
    order = best[numpy.lexsort((best, -scores[best]))]
    chosen = scores[order].tolist()
    return list(zip((rows[order] if rows is not None else order).tolist(), chosen))


def _best_positions(scores: numpy.ndarray, count: int) -> numpy.ndarray:
    """The positions of the ``count`` highest scores, in no order; of equal scores
    at the boundary, the lowest positions (a partition alone picks any of them)."""
    best = numpy.argpartition(-scores, count - 1)[:count]
    boundary = scores[best].min()
    above = best[scores[best] > boundary]
    tied = numpy.flatnonzero(scores == boundary)[: count - len(above)]
    return numpy.concatenate((above, tied))


class Ranked:
    """Chunks ranked best first, as parallel lists: per chunk its row, its score
    (once the ranking is final, as a hit shows it: 6 decimals), its file and
    its corpus."""

    __slots__ = ("rows", "scores", "files", "corpora")

    def __init__(self, rows: list[int], scores: list[float], files: list[int], corpora: list[str]) -> None:
        self.rows = rows
        self.scores = scores
        self.files = files
        self.corpora = corpora

    def file_first(self, count: int) -> Ranked:
        """The first ``count`` of these with each file's best chunk first, in their
        order, then the further chunks of every file, in their order: the first
        hits name as many files as there are, rather than several chunks of the
        one that matches best."""
        first: list[int] = []
        further: list[int] = []
        seen: set[int] = set()
        for position, file in enumerate(self.files):
            if file in seen:
                further.append(position)
            else:
                seen.add(file)
                first.append(position)
                if len(first) == count:
                    break
        order = (first + further)[:count]
        return Ranked(
            [self.rows[at] for at in order],
            [self.scores[at] for at in order],
            [self.files[at] for at in order],
            [self.corpora[at] for at in order],
        )


def reranked(rows: numpy.ndarray, scores: numpy.ndarray, matching: Matching) -> tuple[numpy.ndarray, numpy.ndarray]:
    """``rows``, ranked best first by their ``scores`` (cosine similarities; ties
    to the lower row), with the first RERANKED ranked again by COSINE_WEIGHT ×
    their cosine + the rest × their ``matching`` (see StaticModel.matching), and
    scored so; the rows after them follow in their order, each scored at most as
    the last of those, so that scores never rise down the list."""
    block_rows = numpy.array(rows, dtype=numpy.int64).reshape(1, -1)
    block_scores = numpy.array(scores, dtype=numpy.float32).reshape(1, -1)
    rerank_block(block_rows, block_scores, lambda heads: matching(heads[0]).reshape(1, -1))
    return block_rows[0], block_scores[0]


def rerank_block(rows: numpy.ndarray, scores: numpy.ndarray, matching: BlockMatching) -> None:
    """:func:`reranked` for each query of a block at once, in place: ``rows`` and
    ``scores`` hold a query's chunks per row, best first; ``matching(heads)``
    gives how well each query matches the first RERANKED of its row."""
    count = min(RERANKED, rows.shape[1])
    if count == 0:
        return
    head = rows[:, :count]
    fused = (COSINE_WEIGHT * scores[:, :count] + (1 - COSINE_WEIGHT) * matching(head)).astype(numpy.float32)
    order = numpy.lexsort((head, -fused), axis=1)
    rows[:, :count] = numpy.take_along_axis(head, order, axis=1)
    scores[:, :count] = numpy.take_along_axis(fused, order, axis=1)
    numpy.minimum(scores[:, count:], scores[:, count - 1 : count], out=scores[:, count:])


def best_of_block(
    scores: numpy.ndarray,
    top_k: int,
    depth: int,
    row_file: numpy.ndarray,
    matching: BlockMatching | None = None,
    positive: bool = False,
) -> list[tuple[list[int], list[float]]]:
    """For each row of ``scores`` (one query's scores of every chunk), what
    :func:`top_rows` and :meth:`Ranked.file_first` make of its ``depth`` best
    chunks, cut to ``top_k``: their rows and shown scores. All the block's
    queries at once, in C rather than one by one.

    Reading ``depth`` chunks when the first ``top_k`` are of as many files gives
    those same ``top_k``: each is its file's first.

    ``matching(heads)``, when given, is how well the chunks of each row of
    ``heads`` match that query of the block token by token: each query's
    nearest chunks are then ranked again with it (see rerank_block), as
    :func:`reranked` ranks what :func:`top_rows` gives. ``positive``: only
    chunks scored above 0 are hits (a keyword search's chunks that share no word
    with the query are not)."""
    queries, total = scores.shape
    depth = min(depth, total)
    if depth <= 0 or top_k <= 0:
        return [([], []) for _ in range(queries)]
    best, values = best_of_each(scores, depth, positive)
    if matching is not None:
        # The nearest chunks of each query ranked again; ``depth`` holds RERANKED
        # of them at least.
        rerank_block(best, values, matching)
    # Each file's best chunk first, in their order, then the others in theirs.
    files = row_file[best]
    by_file = numpy.argsort(files, axis=1, kind="stable")
    grouped = numpy.take_along_axis(files, by_file, axis=1)
    starts = numpy.ones(grouped.shape, dtype=bool)
    starts[:, 1:] = grouped[:, 1:] != grouped[:, :-1]
    first = numpy.empty_like(starts)
    numpy.put_along_axis(first, by_file, starts, axis=1)
    if positive:
        # What is left of a row short of positive scores comes last, and is cut.
        first &= values > 0
    chosen = numpy.argsort(~first, axis=1, kind="stable")[:, :top_k]
    best = numpy.take_along_axis(best, chosen, axis=1)
    values = numpy.take_along_axis(values, chosen, axis=1)
    shown = numpy.round(values.astype(numpy.float64), 6)
    if not positive:
        return list(zip(best.tolist(), shown.tolist()))
    kept = numpy.count_nonzero(values > 0, axis=1).tolist()
    return [(rows[:count], row_shown[:count]) for rows, row_shown, count in zip(best.tolist(), shown.tolist(), kept)]


# Maxima read per best score asked for, to bound the scores a block's rows are
# ranked among (see best_of_each): more maxima bound them more tightly, at the
# cost of a pass over them.
_MAXIMA_PER_BEST = 8


def best_of_each(scores: numpy.ndarray, depth: int, positive: bool = False) -> tuple[numpy.ndarray, numpy.ndarray]:
    """The positions and values of the ``depth`` best scores of each row of
    ``scores`` (0 < depth <= its width), best first, equal scores by the lower
    position, as :func:`top_rows` ranks one row. ``positive``: only scores above
    0; a row short of them is filled out with position 0 and -inf."""
    queries, total = scores.shape
    segments = _MAXIMA_PER_BEST * depth
    if total < 2 * segments:
        return _best_of_each_by_partition(scores, depth, positive)
    # The depth-th highest of the maxima of disjoint segments of a row is at most
    # its depth-th highest score (there are depth distinct scores at least as
    # high): every one of the row's depth best is at least that floor. Only the
    # few scores above it are sorted, where a partition of each whole row
    # would cost several times more.
    size = total // segments
    # Segment j holds every segments-th score from the j-th: the maxima are then
    # taken a whole row of segments at a time, fast in C.
    maxima = scores[:, : segments * size].reshape(queries, size, segments).max(axis=1)
    floor = numpy.partition(maxima, segments - depth, axis=1)[:, segments - depth]
    if positive:
        floor = numpy.maximum(floor, numpy.nextafter(numpy.float32(0), numpy.float32(1)))
    found = numpy.flatnonzero(scores >= floor[:, None])
    rows, places = numpy.divmod(found, total)
    values = scores.reshape(-1)[found]
    # ``found`` is in the order of positions within each row, and the sort is
    # stable: equal scores keep it.
    order = numpy.lexsort((-values, rows))
    rows, places, values = rows[order], places[order], values[order]
    # Each score's rank in its row, to keep the first depth of each.
    counts = numpy.bincount(rows, minlength=queries)
    ranks = numpy.arange(len(rows)) - numpy.repeat(numpy.cumsum(counts) - counts, counts)
    kept = ranks < depth
    best = numpy.zeros((queries, depth), dtype=numpy.int64)
    best_values = numpy.full((queries, depth), -numpy.inf, dtype=scores.dtype)
    best[rows[kept], ranks[kept]] = places[kept]
    best_values[rows[kept], ranks[kept]] = values[kept]
    return best, best_values


def _best_of_each_by_partition(scores: numpy.ndarray, depth: int, positive: bool) -> tuple[numpy.ndarray, numpy.ndarray]:
    """:func:`best_of_each` by a partition of each row: for rows of few scores."""
    queries, total = scores.shape
    if depth < total:
        best = numpy.argpartition(-scores, depth - 1, axis=1)[:, :depth]
        # Equal scores across the boundary: the lowest rows, as top_rows takes them.
        boundary = numpy.take_along_axis(scores, best, axis=1).min(axis=1)
        for query in numpy.flatnonzero(numpy.count_nonzero(scores >= boundary[:, None], axis=1) > depth).tolist():
            best[query] = _best_positions(scores[query], depth)
    else:
        best = numpy.broadcast_to(numpy.arange(total), scores.shape)
    values = numpy.take_along_axis(scores, best, axis=1)
    # Highest score first, then the lower row.
    order = numpy.lexsort((best, -values), axis=1)
    best = numpy.take_along_axis(best, order, axis=1)
    values = numpy.take_along_axis(values, order, axis=1)
    if positive:
        below = values <= 0
        best = numpy.where(below, 0, best)
        values = numpy.where(below, -numpy.inf, values).astype(scores.dtype)
    return best, values


def fused_by_confidence(
    meaning: Sequence[tuple[int, float]], words: Sequence[tuple[int, float]], attainable: float, count: int
) -> list[tuple[int, float]]:
    """Rows ranked by meaning (``meaning``: (row, score), best first, as
    :func:`reranked` scores them) and by keyword (``words``: (row, BM25 score),
    best first) fused into one ranking of the ``count`` best, best first; each
    row scored (1 - w) × its meaning + w × its words, where

    * its meaning is its score rescaled so that the first scores 1 and the
      RERANKED-th (the last ranked again) 0, none below 0: cosines of a static
      model lie close together, and only their spread tells the best apart;
    * its words are its BM25 score over ``attainable`` (what the query's words
      could score together, see KeywordIndex.attainable): the share of the
      question a chunk holds, word for word;
    * w is KEYWORD_WEIGHT × the words of the best keyword row: keyword search
      weighs much when a chunk holds most of the question's words (a name, an
      error message), little when its best shares a word or two with it (a
      paraphrase), when ranking by meaning is the better guide.

    A row one ranking misses gets nothing from it. Ties go to the lower row."""
    fused: dict[int, float] = {}
    weight = KEYWORD_WEIGHT * min(1.0, words[0][1] / attainable) if words and attainable > 0 else 0.0
    if meaning:
        scores = numpy.array([score for _, score in meaning], dtype=numpy.float64)
        top, floor = scores[0], scores[min(len(scores), RERANKED) - 1]
        spread = numpy.clip((scores - floor) / (top - floor), 0, None) if top > floor else numpy.ones_like(scores)
        for (row, _), value in zip(meaning, ((1 - weight) * spread).tolist()):
            fused[row] = value
    if weight > 0:
        for row, score in words:
            fused[row] = fused.get(row, 0.0) + weight * score / attainable
    order = sorted(fused, key=lambda row: (-fused[row], row))
    return [(row, fused[row]) for row in order[:count]]
