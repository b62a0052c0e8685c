"""How the builtin target answers from the index it holds: the rows of each
corpus, the queries of a group of cases embedded (or split into terms) together,
a block of them scored against every chunk and ranked at once, a case ranked on
its own (by meaning, by keyword, or both fused), and the chunks named as hits.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy

from .base import Request
from .builtin_options import KEYWORD, SEMANTIC
from ...workspace.chunking import Chunking, chunk_ids
from ...search.keyword import KeywordIndex
from ...search.ranking import RERANKED, Ranked, best_of_block, fused_by_confidence, reranked, top_rows

# How deep each ranking is read before a hybrid fuses them.
_FUSION_DEPTH = 100
# Chunks read per hit asked for: a file's further chunks give way to other files'
# best chunks among them.
_CANDIDATES_PER_HIT = 5
# An answer whose query is not scored yet; what is scored ahead of a query with
# no token the model knows, or of a keyword query ranked on its own (see
# ranked_alone): no similarities and no ranking.
NOT_SCORED = object()
NOTHING_AHEAD = (None, None)


@dataclass
class Queries:
    """The queries of a group of cases, embedded or split into terms (see
    BuiltinTarget._embed_queries)."""

    # Request id() -> its query's row of ``vectors`` and its input as
    # BuiltinTarget._read_input reads it (for a request whose input it reads); and
    # its topK, when the case is ranked with its block (see ranked_with_its_block).
    rows: dict[int, int] = field(default_factory=dict)
    inputs: dict[int, tuple[str, list[str], int]] = field(default_factory=dict)
    top_ks: dict[int, int] = field(default_factory=dict)
    vectors: Any = None
    # Per row of ``vectors``: its query's tokens and their weights (an
    # embedding.QueryTerms, see StaticModel.query_terms); on a keyword search,
    # per query, the ids of its terms (see KeywordIndex.query_terms).
    terms: Any = None


@dataclass
class State:
    """The index a run answers from."""

    index: Any  # index.ChunkIndex
    # Rows of each corpus (None: every row).
    rows: dict[str, Any]
    # The model, when the search is by meaning; None on keyword search.
    model: Any = None
    # BM25 over every row, when keyword search is part of the answer.
    keyword: KeywordIndex | None = None
    checked_at: float = 0.0
    # The index.IndexBuilder that made the index (it reads the text of hits).
    builder: Any = None
    # The path of each file of the index, by position.
    paths: list[str] = field(default_factory=list)
    # How well chunks match a query's tokens (see StaticModel.matching_over); None
    # when the index holds no terms of its chunks.
    matches: Any = None
    # Per row, what ranking counts as its file (see Ranked.file_first): the
    # index's row_file, except that each document of a documents file counts
    # as a file of its own.
    groups: Any = None
    # The documents files of the index.
    documents: frozenset[str] = frozenset()

    @property
    def mode(self) -> str:
        return SEMANTIC if self.model is not None else KEYWORD


def queries_of(read: list[tuple[Request, tuple[str, list[str], int]]], state: State) -> Queries:
    """The queries of requests whose inputs are read (see BuiltinTarget._embed_queries)."""
    queries = Queries()
    texts = []
    for request, read_input in read:
        key = id(request)
        queries.rows[key] = len(texts)
        queries.inputs[key] = read_input
        texts.append(read_input[0])
        if ranked_with_its_block(read_input[1], state):
            queries.top_ks[key] = read_input[2]
    if not texts:
        return queries
    if state.model is not None:
        queries.vectors, queries.terms = state.model.embed_queries(texts)
    elif state.keyword is not None:
        queries.terms = list(map(state.keyword.query_terms, texts))
    return queries


def ranked_with_its_block(names: list[str], state: State) -> bool:
    """Whether a case that searches ``names`` (as BuiltinTarget._read_input
    reads them) searches by one retrieval alone (by meaning, or by keyword) over one
    corpus that holds every chunk of the index, as most do: such a case is
    ranked with the other cases of its block (see score_queries); any other
    is ranked on its own, and ranking it ahead would be wasted."""
    one_retrieval = state.model is None or state.keyword is None
    return one_retrieval and len(names) == 1 and names[0] in state.rows and state.rows[names[0]] is None


def score_queries(
    requests: list[Request], state: State, queries: Queries, expanded: Any = None, room: Any = None
) -> dict[int, tuple[Any, Any]]:
    """Each request's similarities to every chunk (None on a keyword search)
    and, when it is ranked with its block (see ranked_with_its_block), its
    ``topK`` best chunks over the whole index, file first (see
    ranking.best_of_block; else None), by the request's id(), for those whose
    input can be read; (None, None) for a query with no token the model knows.
    The requests' queries are scored together (by one matrix product, when by
    meaning) and ranked together; ``queries`` holds them embedded or split
    into terms. ``expanded``: the index's codes as floats (see
    QuantizedVectors.similarities), when a run holds them; ``room``: an array
    of at least a row per request and a column per chunk, for a keyword
    search's scores, when a run holds one."""
    keys = [key for request in requests if (key := id(request)) in queries.rows]
    if not keys:
        return {}
    if state.model is None:
        return _score_keywords(keys, state, queries, room)
    index = state.index
    embedded = queries.vectors[[queries.rows[key] for key in keys]]
    scores = index.vectors.similarities(embedded, expanded)
    known = embedded.any(axis=1).tolist()
    scored: dict[int, tuple[Any, Any]] = {}
    # Ranked together: the queries that ask for as many hits (most often, all);
    # those with no topK here are ranked on their own (see ranked_with_its_block).
    by_top_k: dict[int | None, list[int]] = {}
    for row, key in enumerate(keys):
        if known[row]:
            by_top_k.setdefault(queries.top_ks.get(key), []).append(row)
        else:
            scored[key] = NOTHING_AHEAD
    for top_k, rows in by_top_k.items():
        if top_k is None:
            best = [None] * len(rows)
        else:
            block = scores if len(rows) == len(keys) else scores[rows]
            matching = _block_matching(state, queries.terms.take([queries.rows[keys[row]] for row in rows]))
            best = best_of_block(block, top_k, _depth(top_k, matching), state.groups, matching)
        for row, found in zip(rows, best):
            # A query ranked with its block needs its scores no more.
            scored[keys[row]] = (scores[row] if found is None else None, found)
    return scored


def _score_keywords(keys: list[int], state: State, queries: Queries, room: Any) -> dict[int, tuple[Any, Any]]:
    """score_queries on a keyword search: the queries ranked with their block
    scored a row each and ranked together; the others (None, None), as each
    is scored when it is ranked on its own (see ranked_alone)."""
    assert state.keyword is not None
    scored: dict[int, tuple[Any, Any]] = {}
    by_top_k: dict[int, list[int]] = {}
    for key in keys:
        top_k = queries.top_ks.get(key)
        if top_k is None:
            scored[key] = NOTHING_AHEAD
        else:
            by_top_k.setdefault(top_k, []).append(key)
    index = state.index
    for top_k, ranked in by_top_k.items():
        if room is None or len(room) < len(ranked):
            room = numpy.empty((len(ranked), index.size), dtype=numpy.float32)
        block = state.keyword.block_scores([queries.terms[queries.rows[key]] for key in ranked], room)
        best = best_of_block(block, top_k, _depth(top_k, None), state.groups, positive=True)
        scored.update((key, (None, found)) for key, found in zip(ranked, best))
    return scored


def ranked_alone(query: str, names: list[str], top_k: int, state: State, semantic_scores: Any) -> Ranked:
    """The ``top_k`` best chunks of ``names`` for ``query``, file first, their
    scores as hits show them."""
    keyword_scores = None
    attainable = 0.0
    if state.keyword is not None:
        words = state.keyword.query_terms(query)
        keyword_scores = state.keyword.scores(words)
        if state.model is not None:
            attainable = state.keyword.attainable(query, words)
    query_terms = state.model.query_terms([query])[0] if semantic_scores is not None else None
    matching = _matching(state, lambda _: query_terms)
    depth = _depth(top_k, matching)
    row_file = state.groups

    def best(scores: Any, rows: Any, positive: bool) -> list[tuple[int, float]]:
        # The top_k first (and those reranked); deeper only when a file holds
        # several of them.
        found = by_meaning(scores, max(top_k, RERANKED) if matching is not None else top_k, rows)
        if len(found) >= top_k and len(set(row_file[[row for row, _ in found[:top_k]]].tolist())) < top_k:
            found = by_meaning(scores, depth, rows)
        return [(row, score) for row, score in found if score > 0] if positive else found

    def by_meaning(scores: Any, count: int, rows: Any) -> list[tuple[int, float]]:
        found = top_rows(scores, count, rows)
        if matching is None or scores is not semantic_scores or not found:
            return found
        ranked_rows, ranked_scores = reranked(
            numpy.array([row for row, _ in found]), numpy.array([score for _, score in found], dtype=numpy.float32), lambda chosen: matching(0, chosen)
        )
        return list(zip(ranked_rows.tolist(), ranked_scores.tolist()))

    found: list[tuple[float, int, int]] = []  # (score, row, the corpus's place in names)
    for place, name in enumerate(names):
        rows = state.rows[name]
        if state.model is not None and state.keyword is not None:
            fusion = max(_FUSION_DEPTH, depth)
            meaning = by_meaning(semantic_scores, fusion, rows) if semantic_scores is not None else []
            by_words = [] if keyword_scores is None else [item for item in top_rows(keyword_scores, fusion, rows) if item[1] > 0]
            found.extend((score, row, place) for row, score in fused_by_confidence(meaning, by_words, attainable, depth))
        elif state.model is not None:
            if semantic_scores is not None:
                found.extend((score, row, place) for row, score in best(semantic_scores, rows, False))
        elif keyword_scores is not None:
            found.extend((score, row, place) for row, score in best(keyword_scores, rows, True))
    # Highest score first; ties by row (path order, then line), then corpus.
    if len(names) > 1 or (state.model is not None and state.keyword is not None):
        found.sort(key=lambda item: (-item[0], item[1], item[2]))
    if len(names) > 1:
        # A chunk that two of the corpora hold (their globs overlap) is one hit,
        # of the corpus the case names first: listed twice, it would take the
        # place of another chunk.
        seen: set[int] = set()
        found = [item for item in found if item[1] not in seen and not seen.add(item[1])]
    rows_found = [row for _, row, _ in found]
    ranked = Ranked(
        rows_found, [score for score, _, _ in found], row_file[rows_found].tolist(), [names[place] for _, _, place in found]
    ).file_first(top_k)
    ranked.scores = [round(float(score), 6) for score in ranked.scores]
    return ranked


class Named:
    """The path and id of each chunk named so far, by row: a run keeps one, as
    100,000 cases name the chunks of an index a million times, and looking up
    each file and formatting each id every time cost a tenth of the run."""

    __slots__ = ("paths", "ids")

    def __init__(self) -> None:
        self.paths: dict[int, str] = {}
        self.ids: dict[int, str] = {}

    def of(self, rows: list[int], state: State, chunking: Chunking) -> tuple[list[str], list[str]]:
        """The paths and ids of the chunks of ``rows`` of ``state``'s index."""
        paths = list(map(self.paths.get, rows))
        if None in paths:
            new = [row for row, path in zip(rows, paths) if path is None]
            index = state.index
            spans = index.lines[new]
            new_paths = list(map(state.paths.__getitem__, index.row_file[new].tolist()))
            self.paths.update(zip(new, new_paths))
            firsts = spans[:, 0].tolist()
            ids = chunk_ids(new_paths, firsts, spans[:, 1].tolist(), chunking)
            if state.documents:
                # A document's hit is named by its own id.
                for at, (row, path) in enumerate(zip(new, new_paths)):
                    if path in state.documents:
                        ids[at] = state.builder.document_id(index.files[int(index.row_file[row])], firsts[at])
            self.ids.update(zip(new, ids))
            paths = list(map(self.paths.__getitem__, rows))
        return paths, list(map(self.ids.__getitem__, rows))


def _matching(state: State, terms_of: Callable[[int], Any]) -> Callable[[int, Any], Any] | None:
    """How well chunks match a query token by token (see StaticModel.matching),
    as ``matching(query, rows)`` with the query's terms given by ``terms_of(query)``;
    None when the index holds no terms of its chunks."""
    matches = state.matches
    if matches is None:
        return None
    return lambda query, rows: matches(terms_of(query), rows)


def _block_matching(state: State, terms: Any) -> Callable[[Any], Any] | None:
    """How well chunks match each query of a block token by token, as
    ``matching(heads)`` of a row of chunks per query (see ranking.rerank_block),
    the queries' terms being ``terms`` (embedding.QueryTerms); None when the
    index holds no terms of its chunks."""
    matches = state.matches
    if matches is None:
        return None
    return lambda heads: matches.heads(terms, heads)


def _depth(top_k: int, matching: Any) -> int:
    """The chunks read for ``top_k`` hits by meaning: those that give way to other
    files' best chunks (see Ranked.file_first), and at least those reranked."""
    depth = top_k * _CANDIDATES_PER_HIT
    return max(depth, RERANKED) if matching is not None else depth
