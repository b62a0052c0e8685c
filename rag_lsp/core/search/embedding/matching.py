"""A query's tokens matched one by one with the terms of an index's chunks.

:class:`QueryTerms` holds queries' tokens and their weights, all in two arrays;
:class:`TokenMatches` keeps each token's match with every chunk of a small index
(see :meth:`.model.StaticModel.matching_over`).
"""

from __future__ import annotations

import threading
from typing import Iterator, Sequence

import numpy

from .tokens import starts_of

# The tokens whose matches with every chunk a TokenMatches keeps, at most (see
# model.SMALL_INDEX).
_TOKENS_KEPT = 8192
# The matches (float32) a block of queries gathers at a time: 4 MB.
_MATCHES_GATHERED = 1 << 20


class QueryTerms:
    """Queries' distinct tokens that carry weight and their weights (see
    StaticModel.query_terms), of all the queries in two arrays: a run's block of
    hundreds of queries is matched at once (see TokenMatches.block). Query
    ``n`` is ``terms[n]``: its tokens, ascending, and their weights."""

    __slots__ = ("tokens", "weights", "starts")

    def __init__(self, tokens: numpy.ndarray, weights: numpy.ndarray, starts: numpy.ndarray) -> None:
        self.tokens = tokens
        self.weights = weights
        # Query n's are at [starts[n], starts[n + 1]).
        self.starts = starts

    @classmethod
    def of(cls, queries: Sequence[tuple[numpy.ndarray, numpy.ndarray]]) -> QueryTerms:
        """The terms of queries given one by one, as ``terms[n]`` gives them."""
        starts = starts_of([len(tokens) for tokens, _ in queries])
        if not queries:
            return cls(numpy.zeros(0, dtype=numpy.int64), numpy.zeros(0, dtype=numpy.float32), starts)
        tokens = numpy.concatenate([numpy.asarray(tokens, dtype=numpy.int64) for tokens, _ in queries])
        weights = numpy.concatenate([numpy.asarray(weights, dtype=numpy.float32) for _, weights in queries])
        return cls(tokens, weights, starts)

    def __len__(self) -> int:
        return len(self.starts) - 1

    def __getitem__(self, query: int) -> tuple[numpy.ndarray, numpy.ndarray]:
        if not -len(self) <= query < len(self):
            raise IndexError(query)
        query %= len(self)
        start, stop = self.starts[query], self.starts[query + 1]
        return self.tokens[start:stop], self.weights[start:stop]

    def __iter__(self) -> Iterator[tuple[numpy.ndarray, numpy.ndarray]]:
        return (self[query] for query in range(len(self)))

    def take(self, queries: Sequence[int]) -> QueryTerms:
        """The terms of ``queries`` (positions here), in that order."""
        chosen = numpy.asarray(queries, dtype=numpy.int64)
        firsts = self.starts[chosen]
        lengths = self.starts[chosen + 1] - firsts
        starts = starts_of(lengths)
        # Each chosen query's places here: its first, then on by one.
        places = numpy.arange(starts[-1], dtype=numpy.int64) + numpy.repeat(firsts - starts[:-1], lengths)
        return QueryTerms(self.tokens[places], self.weights[places], starts)


class TokenMatches:
    """:meth:`StaticModel.matching` over the chunks of a small index (see
    SMALL_INDEX), as ``matches(query, rows)``: a token's match with each chunk
    (its cosine with the chunk's closest term, 0 at least) is computed once for
    every chunk and kept, and a query's matching is the weighted mean of its
    tokens' kept matches. The same figures as StaticModel.matching, up to the
    rounding of their sums; a given index is always matched one way (see
    StaticModel.matching_over), so a case asked alone and ranked with its block
    get the same ones."""

    def __init__(self, unit: numpy.ndarray, chunk_terms: numpy.ndarray, no_term: int) -> None:
        self._unit = unit
        self._count = len(chunk_terms)
        width = int(numpy.count_nonzero(chunk_terms != no_term, axis=1).max()) if chunk_terms.size else 0
        terms = chunk_terms[:, :width]
        # Each distinct term once (NO_TERM is a row of zeros), and where each chunk's are.
        distinct, places = numpy.unique(terms, return_inverse=True)
        self._terms = numpy.ascontiguousarray(unit[distinct])
        self._places = places.reshape(terms.shape)
        # The matches kept: a token's at its slot's row of the table (-1: none
        # yet). A slot is given once its row is written, under the lock (a run
        # and a case asked in the editor may match at once); rows are read
        # without it.
        self._slot_array = numpy.full(len(unit), -1, dtype=numpy.int64)
        self._kept = 0
        self._table = numpy.empty((4, self._count), dtype=numpy.float32)
        self._lock = threading.Lock()

    def __call__(self, query: tuple[numpy.ndarray, numpy.ndarray], rows: numpy.ndarray) -> numpy.ndarray:
        return self.block(QueryTerms.of([query]))[0][rows]

    def heads(self, terms: QueryTerms, heads: numpy.ndarray) -> numpy.ndarray:
        """How well each query of ``terms`` matches the chunks of its row of
        ``heads`` (queries × chunks' rows), as one array of that shape."""
        return numpy.take_along_axis(self.block(terms), heads, axis=1)

    def block(self, terms: QueryTerms) -> numpy.ndarray:
        """Each query's match with every chunk: a row per query of ``terms``.

        The kept rows of the queries' tokens are gathered, weighed and summed
        query by query in one call, for as many queries as _MATCHES_GATHERED
        allows at a time (long queries gather many rows). A query's row is
        summed the same way whatever else is gathered with it, so a case asked
        alone and in a run get the same figures."""
        count = len(terms)
        out = numpy.zeros((count, self._count), dtype=numpy.float32)
        if not terms.tokens.size or not self._places.size:
            return out
        tokens_at_a_time = max(1, _MATCHES_GATHERED // self._count)
        starts = terms.starts
        first = 0
        while first < count:
            # The queries whose tokens fit, and at least one.
            last = int(numpy.searchsorted(starts, starts[first] + tokens_at_a_time, side="right")) - 1
            last = min(max(last, first + 1), count)
            self._match_into(out[first:last], terms, first, last)
            first = last
        return out

    def _match_into(self, out: numpy.ndarray, terms: QueryTerms, first: int, last: int) -> None:
        """:meth:`block` for the queries from ``first`` to ``last``, into ``out``."""
        begin, end = terms.starts[first], terms.starts[last]
        if begin == end:
            return
        tokens, weights = terms.tokens[begin:end], terms.weights[begin:end]
        slots = self._slots_of(tokens)
        rows = self._table[slots] if slots.min() >= 0 else self._rows_past_kept(tokens, slots)
        rows *= weights[:, None]
        # Summed per query: reduceat over the queries that have tokens (it would
        # give an empty query the row at its start).
        starts = terms.starts[first : last + 1] - begin
        has_tokens = starts[1:] > starts[:-1]
        sums = numpy.add.reduceat(rows, starts[:-1][has_tokens], axis=0)
        out[has_tokens] = sums / numpy.add.reduceat(weights, starts[:-1][has_tokens])[:, None]

    def _slots_of(self, tokens: numpy.ndarray) -> numpy.ndarray:
        """The slot of each token (kept now if it was not), -1 past _TOKENS_KEPT."""
        found = self._slot_array[tokens]
        if found.min() < 0:
            for token in numpy.unique(tokens[found < 0]).tolist():
                self._keep(token)
            found = self._slot_array[tokens]
        return found

    def _rows_past_kept(self, tokens: numpy.ndarray, slots: numpy.ndarray) -> numpy.ndarray:
        """The rows of tokens, computed afresh for those past _TOKENS_KEPT."""
        rows = numpy.empty((len(tokens), self._count), dtype=numpy.float32)
        kept = slots >= 0
        rows[kept] = self._table[slots[kept]]
        for place in numpy.flatnonzero(~kept).tolist():
            rows[place] = self._closest(int(tokens[place]))
        return rows

    def _closest(self, token: int) -> numpy.ndarray:
        """How closely ``token`` matches each chunk."""
        similarities = self._terms @ self._unit[token]
        return numpy.maximum(similarities[self._places].max(axis=1), 0)

    def _keep(self, token: int) -> None:
        """Compute and keep ``token``'s matches if they are not kept, while
        fewer than _TOKENS_KEPT tokens are."""
        with self._lock:
            slot = self._kept
            if self._slot_array[token] >= 0 or slot >= _TOKENS_KEPT:
                return
            if slot == len(self._table):
                grown = numpy.empty((min(2 * slot, _TOKENS_KEPT), self._count), dtype=numpy.float32)
                grown[:slot] = self._table
                self._table = grown
            self._table[slot] = self._closest(token)
            self._slot_array[token] = slot
            self._kept = slot + 1

