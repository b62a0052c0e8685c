"""A static model: a table of one vector per token and a tokenizer.

:class:`StaticModel` turns texts into unit vectors (the mean of their tokens'
vectors), gives each chunk its terms, and matches a query's tokens with them.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Sequence

import numpy

from ..vectors import normalize_rows
from .files import ModelFiles
from .matching import QueryTerms, TokenMatches
from .tokens import TokenIds, TokenLists, starts_of

# How a batch of texts' token ids are pooled into rows of vectors (and terms).
Pool = Callable[["TokenLists", numpy.ndarray, "numpy.ndarray | None"], None]

# Texts tokenized per call, and tokens gathered per numpy call: a long text's
# gathered vectors (tokens × dimensions × 4 bytes) stay within tens of megabytes.
_TEXTS_PER_BATCH = 256
_TOKENS_PER_GATHER = 1 << 16
# The (text, token) counts pooled per product (see _weighted_sums): their rows
# gathered are 256 KB for 256 dimensions. On 6,700 chunks of the standard
# library, 128 to 384 took alike; 1,024 and more up to ten times as long, the
# products then large enough for the linear algebra library to split over
# threads that wait on the other busy core.
_ROWS_PER_SUM = 256
# The tokens of a chunk that a query's tokens are matched with one by one (see
# StaticModel.matching): its heaviest distinct ones. With 128, the reranking
# finds as many answers as with every token (``benchmarks/chunking.py``); with
# 64, fewer. Kept as 16-bit ids, they add 256 bytes to each chunk's 260.
TERMS_PER_CHUNK = 128
# The dimensions of token vectors that matching compares: the first 128 of the
# wordllama table's 256 (it was trained so that a prefix is a coarser vector of
# its own), which find as many answers as all 256 for less work per query; 64
# find fewer (``benchmarks/chunking.py``).
MATCH_DIMENSIONS = 128
# An index of at most this many chunks keeps each token's match with all of
# them (see TokenMatches), of at most _TOKENS_KEPT tokens (2 KB a token at most:
# 16 MB). A token first asked costs a product with the index's distinct terms
# (a millisecond at most, for 512 chunks), where matching a query's tokens with
# its 20 nearest chunks costs half a millisecond every time: 100,000 cases over
# examples/ took 15 times the numpy floor (see benchmarks/index.py), 2.5 times
# with the matches kept, 1.4 times with a block's queries matched at once.
SMALL_INDEX = 512


def _distinct_sorted(values: numpy.ndarray) -> numpy.ndarray:
    """``values`` (an array this may reorder) ascending, each once: sorted in
    place and compared with their neighbours, several times faster than
    numpy.unique for the (query, token) pairs of a block's queries."""
    values.sort()
    return values[_run_starts(values)] if values.size > 1 else values


def _run_starts(values: numpy.ndarray) -> numpy.ndarray:
    """Where each run of equal values of sorted ``values`` starts."""
    if values.size == 0:
        return numpy.zeros(0, dtype=numpy.intp)
    return numpy.flatnonzero(numpy.concatenate(([True], values[1:] != values[:-1])))


class StaticModel:
    """A token table and its tokenizer; :meth:`embed` turns texts into unit vectors,
    :meth:`embed_chunks` also gives each text's terms, which :meth:`matching`
    compares with a query's words one by one."""

    def __init__(self, files: ModelFiles, table: numpy.ndarray, tokenizer: Any, skip: frozenset[int] = frozenset()) -> None:
        self.name = files.name
        self.identity = files.identity
        self.table = table
        self.dim = int(table.shape[1])
        self.tokenizer = tokenizer
        self._token_ids = TokenIds(tokenizer)
        self._skip = numpy.array(sorted(skip), dtype=numpy.int64)
        rows = table.shape[0]
        # A token's weight is the length of its vector: its rarity, for the
        # wordllama table (see _weigh_by_rarity); model2vec weighs its own.
        self._weights = numpy.linalg.norm(table, axis=1).astype(numpy.float32)
        self._weights[self._skip[self._skip < rows]] = 0.0
        # Tokens heaviest first, and each token's place in that order.
        self._by_weight = numpy.argsort(-self._weights, kind="stable")
        self._weight_rank = numpy.empty(rows, dtype=numpy.int64)
        self._weight_rank[self._by_weight] = numpy.arange(rows)
        # Terms are token ids, and NO_TERM fills the places of a text with fewer.
        self.no_term = rows
        self.terms_dtype = numpy.dtype(numpy.uint16 if rows < 0xFFFF else numpy.int32)
        self.terms_shape = (self.terms_dtype, TERMS_PER_CHUNK, self.no_term)
        self._unit: numpy.ndarray | None = None
        self._unit_lock = threading.Lock()
        self._tokenizing: ThreadPoolExecutor | None = None
        self._tokenizing_lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> numpy.ndarray:
        """One row per text, float32, of length 1 (all zeros for a text with no token)."""
        return self._vectors_soon(texts)()

    def embed_chunks(self, texts: Sequence[str]) -> tuple[numpy.ndarray, numpy.ndarray]:
        """:meth:`embed`, and each text's terms: its TERMS_PER_CHUNK heaviest
        distinct tokens (a row of ``terms_dtype``, filled with ``no_term``).
        Pooled many at a time (see _pool_counted)."""
        return self.embed_chunks_soon(texts)()

    def embed_chunks_soon(self, texts: Sequence[str]) -> Callable[[], tuple[numpy.ndarray, numpy.ndarray]]:
        """:meth:`embed_chunks`, begun: the texts are tokenized on the model's
        tokenizer thread from now on, and the function returned pools them (on
        the caller's thread) once they are. An index build starts the next
        group of chunks before it pools the last, so the tokenizer (most of a
        build's time) is never left waiting for the pooling."""
        terms = numpy.full((len(texts), TERMS_PER_CHUNK), self.no_term, dtype=self.terms_dtype)
        vectors = self._vectors_soon(texts, terms, self._pool_counted, ahead=True)
        return lambda: (vectors(), terms)

    def embed_paths(self, texts: Sequence[str]) -> numpy.ndarray:
        """:meth:`embed` for the words of files' paths (the context of their chunks),
        pooled as chunks are."""
        return self._vectors_soon(texts, pool=self._pool_counted)()

    def embed_queries(self, texts: Sequence[str]) -> tuple[numpy.ndarray, QueryTerms]:
        """:meth:`embed` and :meth:`query_terms` of the same texts, tokenized once
        (queries are short: their tokens are all held at once)."""
        id_lists = self._token_ids(texts)
        out = numpy.zeros((len(texts), self.dim), dtype=numpy.float32)
        self._pool(id_lists, out)
        normalize_rows(out)
        return out, self._query_terms_of(id_lists)

    def query_terms(self, texts: Sequence[str]) -> QueryTerms:
        """Per text, its distinct tokens that carry weight, and their weights."""
        return self._query_terms_of(self._token_ids(texts))

    def _query_terms_of(self, id_lists: TokenLists) -> QueryTerms:
        count = len(id_lists)
        tokens = id_lists.flat
        owners = numpy.repeat(numpy.arange(count, dtype=numpy.int64), numpy.diff(id_lists.starts))
        rows = self.table.shape[0]
        # Tokens past the table (unknown to it) and those that weigh nothing are left out.
        keep = tokens < rows
        keep[keep] = self._weights[tokens[keep]] > 0
        # Each query's distinct tokens, ascending: one sort of (query, token) pairs.
        owners, tokens = numpy.divmod(_distinct_sorted(owners[keep] * rows + tokens[keep]), rows)
        starts = numpy.searchsorted(owners, numpy.arange(count + 1, dtype=numpy.int64))
        return QueryTerms(tokens, self._weights[tokens], starts)

    def matching(self, query: tuple[numpy.ndarray, numpy.ndarray], terms: numpy.ndarray) -> numpy.ndarray:
        """How well each row of ``terms`` (chunks' terms, see embed_chunks) matches
        the query's tokens (see query_terms) one by one: for each query token, its
        cosine similarity to the closest term of the chunk, averaged with the
        tokens' weights. A word of the question finds its counterpart in the
        passage ("halt" in "stops"), where a mean of the passage's every token
        blurs it."""
        tokens, weights = query
        if tokens.size == 0 or terms.size == 0:
            return numpy.zeros(len(terms), dtype=numpy.float32)
        unit = self._unit_table()
        # A chunk's terms come first in its row, then NO_TERM (a zero vector):
        # the columns no chunk here fills are left out.
        width = int(numpy.count_nonzero(terms != self.no_term, axis=1).max())
        if width == 0:
            return numpy.zeros(len(terms), dtype=numpy.float32)
        terms = terms[:, :width]
        # Chunks of one file share most of their terms (a query's 20 nearest
        # chunks of a 20,000-file index hold about 700 distinct of 2,560): each
        # distinct term is compared with the tokens once (a row each), and the
        # rows are then laid out as the chunks hold the terms.
        flat = terms.reshape(-1)
        seen = numpy.zeros(len(unit), dtype=bool)
        seen[flat] = True
        distinct = numpy.flatnonzero(seen)
        place = numpy.empty(len(unit), dtype=numpy.intp)
        place[distinct] = numpy.arange(distinct.size)
        similarities = numpy.take(unit, distinct, axis=0) @ unit[tokens].T
        closest = numpy.take(similarities, place[flat], axis=0).reshape(len(terms), width, len(tokens)).max(axis=1)
        # A token that has no counterpart scores 0 (as against NO_TERM), never less.
        return (numpy.maximum(closest, 0) @ weights) / weights.sum()

    def matching_over(self, chunk_terms: numpy.ndarray) -> TokenMatches | ChunkMatches:
        """:meth:`matching` over an index whose chunks have ``chunk_terms``, as
        ``matching(query, rows)`` of its chunks ``rows``, and ``heads(terms,
        heads)`` for a block of queries. Over a small index (SMALL_INDEX chunks
        at most), a token's match with every chunk is computed once and kept
        (see TokenMatches): a run of a hundred thousand cases asks the same few
        thousand words again and again."""
        if len(chunk_terms) <= SMALL_INDEX:
            return TokenMatches(self._unit_table(), chunk_terms, self.no_term)
        return ChunkMatches(self, chunk_terms)

    def _unit_table(self) -> numpy.ndarray:
        """The token vectors cut to their first MATCH_DIMENSIONS and scaled to
        length 1, and a row of zeros for NO_TERM (made at the first match)."""
        with self._unit_lock:
            if self._unit is None:
                dimensions = min(self.dim, MATCH_DIMENSIONS)
                unit = numpy.zeros((self.table.shape[0] + 1, dimensions), dtype=numpy.float32)
                unit[:-1] = self.table[:, :dimensions]
                normalize_rows(unit)
                self._unit = unit
            return self._unit

    def _vectors_soon(
        self, texts: Sequence[str], terms: numpy.ndarray | None = None, pool: Pool | None = None, ahead: bool = False
    ) -> Callable[[], numpy.ndarray]:
        """The texts' unit vectors (and their terms into ``terms``), pooled by
        ``pool`` (default _pool) when the function returned is called. Texts of
        more than one batch, or any when ``ahead``, are tokenized a batch at a
        time on the tokenizer thread from now on (the own tokenizer's numpy
        steps let go of the interpreter's lock, so the caller pools meanwhile),
        and each batch is pooled as soon as it is tokenized; a batch of texts
        (a query's) is tokenized on the caller's thread."""
        pool = pool or self._pool
        out = numpy.zeros((len(texts), self.dim), dtype=numpy.float32)
        starts = range(0, len(texts), _TEXTS_PER_BATCH)
        pending = []
        if len(starts) > 1 or (ahead and texts):
            tokenizer = self._tokenizer_thread()
            pending = [tokenizer.submit(self._token_ids, texts[start : start + _TEXTS_PER_BATCH]) for start in starts]

        def pooled() -> numpy.ndarray:
            if not pending:
                pool(self._token_ids(texts), out, terms)
            for start, tokenized in zip(starts, pending):
                ids = tokenized.result()
                pool(ids, out[start : start + len(ids)], terms[start : start + len(ids)] if terms is not None else None)
            normalize_rows(out)
            return out

        return pooled

    def _tokenizer_thread(self) -> ThreadPoolExecutor:
        """The thread that tokenizes batches ahead of their pooling (started once)."""
        with self._tokenizing_lock:
            if self._tokenizing is None:
                self._tokenizing = ThreadPoolExecutor(1, thread_name_prefix="rag-lsp-tokenizer")
            return self._tokenizing

    def _pool_counted(self, id_lists: TokenLists, out: numpy.ndarray, terms: numpy.ndarray | None = None) -> None:
        """:meth:`_pool` of many texts at once (an index's chunks): each text's
        distinct tokens are counted by one sort of the (text, token) pairs of
        them all, and each row of ``out`` is its counts times their vectors,
        summed by _weighted_sums. A chunk's few hundred tokens are a third as
        many distinct ones: three times faster than text by text, where an index
        of 20,000 files spent a quarter of its build. The sums' order differs
        from _pool's, so a vector may differ in its last float bits."""
        count = len(id_lists)
        rows = self.table.shape[0]
        tokens = id_lists.flat
        owners = numpy.repeat(numpy.arange(count, dtype=numpy.int64), numpy.diff(id_lists.starts))
        keep = tokens < rows
        if self._skip.size:
            keep &= ~numpy.isin(tokens, self._skip)
        owners = owners[keep]
        # (text, token's place in the weight order), ascending: within a text,
        # its heaviest tokens come first (its terms).
        pairs = owners * rows + self._weight_rank[tokens[keep]]
        pairs.sort()
        firsts = _run_starts(pairs)
        counts = numpy.diff(numpy.append(firsts, pairs.size)).astype(numpy.float32)
        texts_of, places = numpy.divmod(pairs[firsts], rows)
        starts = numpy.searchsorted(texts_of, numpy.arange(count + 1, dtype=numpy.int64))
        sums = _weighted_sums(self.table, self._by_weight[places], counts, starts)
        lengths = numpy.bincount(owners, minlength=count)
        held = lengths > 0
        out[held] = sums[held] / lengths[held, None]
        if terms is not None:
            kept = numpy.minimum(numpy.diff(starts), TERMS_PER_CHUNK)
            owner = numpy.repeat(numpy.arange(count, dtype=numpy.int64), kept)
            within = numpy.arange(owner.size, dtype=numpy.int64) - numpy.repeat(starts_of(kept)[:-1], kept)
            terms[owner, within] = self._by_weight[places[starts[owner] + within]]

    def _pool(self, id_lists: TokenLists, out: numpy.ndarray, terms: numpy.ndarray | None = None) -> None:
        """Each row of ``out`` = the mean of its tokens' vectors (unknown tokens
        left out), for texts that give no terms (queries; an index's chunks and
        their terms are pooled by _pool_counted): ``terms`` is never given.

        Text by text: gathering a text's few hundred token vectors and summing them
        stays in the processor's cache, where gathering a whole batch and summing
        it by segments (``add.reduceat``) is an order of magnitude slower."""
        rows = self.table.shape[0]
        table = self.table
        for row in range(len(id_lists)):
            tokens = id_lists[row]
            keep = tokens < rows
            if self._skip.size:
                keep &= ~numpy.isin(tokens, self._skip)
            tokens = tokens[keep] if not keep.all() else tokens
            if tokens.size == 0:
                continue
            if tokens.size > _TOKENS_PER_GATHER:
                # One long text (a whole file): summed a slice at a time.
                total = numpy.zeros(self.dim, dtype=numpy.float64)
                for at in range(0, tokens.size, _TOKENS_PER_GATHER):
                    total += table[tokens[at : at + _TOKENS_PER_GATHER]].sum(axis=0, dtype=numpy.float64)
                out[row] = total / tokens.size
            else:
                out[row] = table[tokens].sum(axis=0) / tokens.size


def _weighted_sums(table: numpy.ndarray, tokens: numpy.ndarray, counts: numpy.ndarray, starts: numpy.ndarray) -> numpy.ndarray:
    """Per text, the sum of its tokens' rows of ``table`` times their counts:
    text ``n``'s tokens and counts are at [starts[n], starts[n + 1]).

    A slice of _ROWS_PER_SUM tokens at a time, whoever's they are: their rows
    gathered into one buffer that stays in the processor's cache, and summed
    into their texts' rows by one small product with a matrix that holds each
    token's count in its text's row (a slice spans a few texts). Summing the
    gathered rows by segments (``add.reduceat``) walks them column by column,
    an order of magnitude slower; gathering a whole batch's rows at once
    leaves the cache, and a dense product over a batch's distinct tokens does
    several times the work (measured: each 2–5 times as long as this)."""
    count = len(starts) - 1
    sums = numpy.zeros((count, table.shape[1]), dtype=numpy.float32)
    owners = numpy.repeat(numpy.arange(count, dtype=numpy.int64), numpy.diff(starts))
    gathered = numpy.empty((_ROWS_PER_SUM, table.shape[1]), dtype=table.dtype)
    places = numpy.arange(_ROWS_PER_SUM)
    for begin in range(0, tokens.size, _ROWS_PER_SUM):
        end = min(begin + _ROWS_PER_SUM, tokens.size)
        first, last = int(owners[begin]), int(owners[end - 1]) + 1
        weights = numpy.zeros((last - first, end - begin), dtype=numpy.float32)
        weights[owners[begin:end] - first, places[: end - begin]] = counts[begin:end]
        rows = numpy.take(table, tokens[begin:end], axis=0, out=gathered[: end - begin])
        sums[first:last] += weights @ rows
    return sums


class ChunkMatches:
    """:meth:`StaticModel.matching` over the chunks of a larger index: each
    query's chunks matched afresh (see StaticModel.matching_over)."""

    def __init__(self, model: StaticModel, chunk_terms: numpy.ndarray) -> None:
        self._model = model
        self._chunk_terms = chunk_terms

    def __call__(self, query: tuple[numpy.ndarray, numpy.ndarray], rows: numpy.ndarray) -> numpy.ndarray:
        return self._model.matching(query, self._chunk_terms[rows])

    def heads(self, terms: QueryTerms, heads: numpy.ndarray) -> numpy.ndarray:
        """How well each query of ``terms`` matches the chunks of its row of ``heads``."""
        matched = numpy.zeros(heads.shape, dtype=numpy.float32)
        for query, rows in enumerate(heads):
            matched[query] = self(terms[query], rows)
        return matched
