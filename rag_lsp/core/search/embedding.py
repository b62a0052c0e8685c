"""The static embedding models of the builtin target's semantic search.

A static model is a table of one vector per token and a tokenizer: a text's
vector is the mean of its tokens' vectors, scaled to length 1, so cosine
similarity is a dot product. No GPU, no PyTorch, a few milliseconds a query.

* ``model: wordllama`` (the default) is WordLlama's ``l2_supercat`` model (256
  dimensions, 16 MB), whose two files rag-lsp ships in ``rag_lsp/model``, its
  token vectors weighted by rarity when loaded (:func:`_weigh_by_rarity`). Its
  full 256 dimensions are used for texts' vectors: truncated to 128 or 64 (it
  was trained to allow that), it finds the right file among the first three for
  fewer paraphrased questions (``benchmarks/chunking.py``); matching a query's
  tokens one by one (:meth:`StaticModel.matching`) uses the first 128. The
  ``wordllama`` package is not used: its files are all rag-lsp reads, and it
  brings a download stack (pydantic, requests) that a model read offline never
  needs.
* ``model: <folder>`` is a model2vec static model in a folder of the workspace:
  ``config.json``, ``model.safetensors`` holding an ``embeddings`` tensor, and
  ``tokenizer.json``.

Safetensors files are read with numpy (a JSON header, then the raw
little-endian arrays); tokenizers of the default model's kind (byte-pair merges)
with rag-lsp's own reader (``bytepairs``: the same ids, in Python), and those
of other kinds with the ``tokenizers`` package where it is installed (in Rust,
offline by construction: only ``Tokenizer.from_file`` is used; it is not a
dependency of rag-lsp, and a model that needs it says so). A model is loaded once per
process and shared read-only by every target that names it: loading costs a
third of a second, and the server keeps one target per workspace.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy

from ..workspace.modelfiles import MODEL2VEC_FILES, WORDLLAMA, model2vec_problem
from .bytepairs import BytePairTokenizer, Unsupported
from .vectors import normalize_rows

# The wordllama model's files, shipped in rag-lsp's own package (rag_lsp/model:
# where they come from, and their license).
_WORDLLAMA_FOLDER = Path(__file__).resolve().parent.parent.parent / "model"
_WORDLLAMA_WEIGHTS = "l2_supercat_256.safetensors"
_WORDLLAMA_TOKENIZER = "l2_supercat_tokenizer.json"
_WORDLLAMA_TENSOR = "embedding.weight"

_MODEL2VEC_TENSOR = "embeddings"
# Llama's tokenizer writes this mark for a space, and before a text.
_SPACE_MARK = "\u2581"
_LLAMA_NORMALIZER = {
    "type": "Sequence",
    "normalizers": [
        {"type": "Prepend", "prepend": _SPACE_MARK},
        {"type": "Replace", "pattern": {"String": " "}, "content": _SPACE_MARK},
    ],
}
# Half of a character: a string of Python holds one only where it was written
# alone (two halves written together, as JSON writes an emoji, are one character).
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
# The wordllama vocabulary's tokens of whitespace alone: runs of "▁" (a space) and
# the byte tokens of tabs and line ends.
_WHITESPACE_TOKENS = tuple("▁" * n for n in range(1, 33)) + ("<0x09>", "<0x0A>", "<0x0B>", "<0x0C>", "<0x0D>", "<0x20>")

# How a batch of texts' token ids are pooled into rows of vectors (and terms).
Pool = Callable[["TokenLists", numpy.ndarray, "numpy.ndarray | None"], None]

# Texts tokenized per call, and tokens gathered per numpy call: a long text's
# gathered vectors (tokens × dimensions × 4 bytes) stay within tens of megabytes.
_TEXTS_PER_BATCH = 256
# Distinct lines joined into one text for the tokenizer (see TokenIds._by_lines).
_LINES_JOINED = 256
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
_TOKENS_KEPT = 8192
# The matches (float32) a block of queries gathers at a time: 4 MB.
_MATCHES_GATHERED = 1 << 20
# A safetensors header larger than this is not one (a real one is a few hundred bytes).
_MAX_HEADER = 1 << 24
_DTYPES = {"F32": "<f4", "F16": "<f2", "F64": "<f8", "BF16": "<u2"}


class ModelError(Exception):
    """The model cannot be loaded; the message says why."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class ModelFiles:
    """Where a model's files are, and what identifies this version of them."""

    name: str
    weights: Path
    tokenizer: Path
    tensor: str
    # Changes whenever one of the files does: part of the index cache's key.
    identity: str


def _starts_of(lengths: Any) -> numpy.ndarray:
    """The start of each of runs of ``lengths`` laid end to end in one array,
    then the end of the last."""
    starts = numpy.zeros(len(lengths) + 1, dtype=numpy.int64)
    numpy.cumsum(lengths, out=starts[1:])
    return starts


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
        starts = _starts_of([len(tokens) for tokens, _ in queries])
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
        starts = _starts_of(lengths)
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


class TokenLists:
    """Texts' token ids in one array: text ``n``'s are ``lists[n]``, a slice of
    ``flat`` from ``starts[n]`` to ``starts[n + 1]``."""

    __slots__ = ("flat", "starts")

    def __init__(self, flat: numpy.ndarray, starts: numpy.ndarray) -> None:
        self.flat = flat
        self.starts = starts

    @classmethod
    def of(cls, lists: Sequence[Sequence[int]]) -> TokenLists:
        starts = _starts_of(numpy.fromiter(map(len, lists), dtype=numpy.int64, count=len(lists)))
        flat = numpy.fromiter(itertools.chain.from_iterable(lists), dtype=numpy.int64, count=int(starts[-1]))
        return cls(flat, starts)

    def __len__(self) -> int:
        return len(self.starts) - 1

    def __getitem__(self, text: int) -> numpy.ndarray:
        return self.flat[self.starts[text] : self.starts[text + 1]]

    def lists(self) -> list[list[int]]:
        return [self[text].tolist() for text in range(len(self))]

    def replaced(self, texts: dict[int, list[int]]) -> TokenLists:
        """These lists with those of ``texts`` (by position) replaced."""
        arrays = [numpy.asarray(texts[at], dtype=numpy.int64) if at in texts else self[at] for at in range(len(self))]
        starts = _starts_of([array.size for array in arrays])
        return TokenLists(numpy.concatenate(arrays) if arrays else self.flat[:0], starts)


class TokenIds:
    """A tokenizer as this module calls it: texts in, each text's token ids out.

    rag-lsp's own tokenizer (``bytepairs``) is called as it is. For one of the
    ``tokenizers`` package: Llama's tokenizer (wordllama's) is a normalizer that writes "▁" before the
    text and for each space, and then byte-pair merges over the whole text. The
    normalizer keeps, for each character it writes, where it came from (offsets
    nothing here reads): a quarter of the tokenizer's time. So a tokenizer with
    that normalizer and no other step before its merges is taken over: its
    normalizer is removed, and the two replacements are made here with
    ``str.replace``, for the same tokens in three quarters of the time.

    The tokenizer finds its added tokens ("<s>") before it normalizes, and
    normalizes each piece of text between them on its own (a "▁" before each);
    so does :meth:`_with_added_tokens`, for the rare text that holds one."""

    def __init__(self, tokenizer: Any) -> None:
        # rag-lsp's own tokenizer (bytepairs) does all of this itself.
        self._own = tokenizer if isinstance(tokenizer, BytePairTokenizer) else None
        if self._own is not None:
            self.marks_spaces_itself = False
            self._line_end = None
            return
        encode = getattr(tokenizer, "encode_batch_fast", None)  # no offsets: twice as fast where it exists
        self._encode = encode if encode is not None else tokenizer.encode_batch
        self.marks_spaces_itself = _writes_spaces_as_marks(tokenizer)
        self._added: re.Pattern[str] | None = None
        self._line_end: int | None = None
        if self.marks_spaces_itself:
            tokenizer.normalizer = None
            self._added_ids = {token.content: token_id for token_id, token in tokenizer.get_added_tokens_decoder().items()}
            if self._added_ids:
                # The longest first, as the tokenizer matches them.
                longest_first = sorted(self._added_ids, key=len, reverse=True)
                self._added = re.compile("|".join(map(re.escape, longest_first)))
            self._line_end = _line_end_token(tokenizer)

    @property
    def cuts_at_lines(self) -> bool:
        """Whether each distinct line is tokenized once (see _by_lines)."""
        return self._line_end is not None

    def __call__(self, texts: Sequence[str]) -> TokenLists:
        texts = list(texts)
        try:
            return self._ids(texts)
        except (TypeError, ValueError):
            # The tokenizer takes whole characters only, and JSON can write half
            # of one ("\ud83d", a query's emoji cut short): it is read as the
            # character that stands for one that cannot be read.
            return self._ids([_LONE_SURROGATE.sub("\ufffd", text) for text in texts])

    def _ids(self, texts: list[str]) -> TokenLists:
        if self._own is not None:
            return TokenLists(*self._own.encode_arrays(texts))
        if not self.marks_spaces_itself:
            return TokenLists.of(self._tokenized(texts))
        marked = list(map(_marked, texts))
        lists = self._by_lines(marked) if self._line_end is not None else None
        if lists is None:
            lists = TokenLists.of(self._tokenized(marked))
        if self._added is not None:
            holding = {at: self._with_added_tokens(text) for at, text in enumerate(texts) if self._added.search(text)}
            if holding:
                lists = lists.replaced(holding)
        return lists

    def _by_lines(self, marked: list[str]) -> TokenLists | None:
        """The ids of ``marked`` texts, each distinct line of them tokenized once.

        A line end is a token of its own (a byte: no token of the vocabulary
        holds one) that merges with nothing, so a text's tokens are its lines'
        one after the other with a line end between them. Windows of a file
        share lines, and files share lines (blank ones, closing brackets,
        imports): half of a batch of chunks' lines are repeats, and the
        tokenizer's cost is its characters. None if the tokenizer does not cut
        the lines as expected (then the texts are tokenized whole)."""
        line_end = self._line_end
        assert line_end is not None
        lines_of = [text.split("\n") for text in marked]
        counts = numpy.fromiter(map(len, lines_of), dtype=numpy.int64, count=len(lines_of))
        places: dict[str, int] = {}
        refs = numpy.fromiter(
            (places.setdefault(line, len(places)) for lines in lines_of for line in lines), dtype=numpy.int64, count=int(counts.sum())
        )
        cut = self._lines_tokenized(list(places))
        if cut is None:
            return None
        ids, firsts, lengths = cut
        # Each line where it is used: its tokens, then a line end unless it is its text's last.
        used = lengths[refs]
        lasts = numpy.cumsum(counts) - 1
        sizes = used + 1
        sizes[lasts] -= 1
        ends = numpy.cumsum(sizes)
        flat = numpy.full(int(ends[-1]) if ends.size else 0, line_end, dtype=numpy.int64)
        owner = numpy.repeat(numpy.arange(len(refs), dtype=numpy.int64), used)
        within = numpy.arange(owner.size, dtype=numpy.int64) - numpy.repeat(numpy.cumsum(used) - used, used)
        flat[(ends - sizes)[owner] + within] = ids[firsts[refs][owner] + within]
        starts = numpy.zeros(len(marked) + 1, dtype=numpy.int64)
        starts[1:] = ends[lasts]
        return TokenLists(flat, starts)

    def _lines_tokenized(self, lines: list[str]) -> tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray] | None:
        """The ids of ``lines`` (none holds a line end) in one array, with each
        line's first place and length; tokenized _LINES_JOINED at a time, joined
        by line ends and cut at them. None if a text is cut into other than its lines."""
        line_end = self._line_end
        groups = [lines[first : first + _LINES_JOINED] for first in range(0, len(lines), _LINES_JOINED)]
        encodings = self._encode(["\n".join(group) for group in groups], add_special_tokens=False)
        arrays, firsts, lasts = [], [], []
        offset = 0
        for group, encoding in zip(groups, encodings):
            ids = numpy.array(encoding.ids, dtype=numpy.int64)
            breaks = numpy.flatnonzero(ids == line_end)
            if breaks.size != len(group) - 1:
                return None
            firsts.append(numpy.concatenate(([0], breaks + 1)) + offset)
            lasts.append(numpy.concatenate((breaks, [ids.size])) + offset)
            arrays.append(ids)
            offset += ids.size
        if not arrays:
            empty = numpy.zeros(0, dtype=numpy.int64)
            return empty, empty, empty
        first = numpy.concatenate(firsts)
        return numpy.concatenate(arrays), first, numpy.concatenate(lasts) - first

    def _with_added_tokens(self, text: str) -> list[int]:
        assert self._added is not None
        pieces, tokens = [], []
        start = 0
        for found in self._added.finditer(text):
            pieces.append(text[start : found.start()])
            tokens.append(self._added_ids[found.group()])
            start = found.end()
        pieces.append(text[start:])
        ids = []
        for piece_ids, token in zip(self._tokenized(list(map(_marked, pieces))), tokens + [None]):
            ids += piece_ids
            if token is not None:
                ids.append(token)
        return ids

    def _tokenized(self, texts: list[str]) -> list[list[int]]:
        return [encoding.ids for encoding in self._encode(texts, add_special_tokens=False)]


def _marked(text: str) -> str:
    """``text`` as Llama's normalizer writes it (an empty text stays empty)."""
    return _SPACE_MARK + text.replace(" ", _SPACE_MARK) if text else text


def _line_end_token(tokenizer: Any) -> int | None:
    """The token a line end is alone, when it is one that no other token of the
    vocabulary holds (so it merges with nothing); else None."""
    try:
        if any("\n" in token for token in tokenizer.get_vocab()):
            return None
        found = tokenizer.encode("\n", add_special_tokens=False).ids
    except Exception:  # noqa: BLE001 - a tokenizer of another kind: texts are tokenized whole
        return None
    return found[0] if len(found) == 1 else None


def _writes_spaces_as_marks(tokenizer: Any) -> bool:
    """Whether the tokenizer's only step before its merges is Llama's normalizer."""
    normalizer = getattr(tokenizer, "normalizer", None)
    if normalizer is None or getattr(tokenizer, "pre_tokenizer", None) is not None:
        return False
    try:
        return json.loads(normalizer.__getstate__()) == _LLAMA_NORMALIZER
    except (AttributeError, TypeError, ValueError):
        return False


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
        time on the tokenizer thread (for a tokenizer of the ``tokenizers``
        package, in Rust, without the interpreter's lock) from now on, and each batch is pooled as soon as it is tokenized; a
        batch of texts (a query's) is tokenized on the caller's thread."""
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
            within = numpy.arange(owner.size, dtype=numpy.int64) - numpy.repeat(_starts_of(kept)[:-1], kept)
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


# ---------------------------------------------------------------- finding the files


def wordllama_files() -> ModelFiles:
    """The packaged wordllama model's files (rag_lsp/model)."""
    weights, tokenizer = _WORDLLAMA_FOLDER / _WORDLLAMA_WEIGHTS, _WORDLLAMA_FOLDER / _WORDLLAMA_TOKENIZER
    for path in (weights, tokenizer):
        if not path.is_file():
            raise ModelError(f"rag-lsp's default embedding model has no {path.name} (reinstall rag-lsp)")
    return ModelFiles(WORDLLAMA, weights, tokenizer, _WORDLLAMA_TENSOR, f"{WORDLLAMA}:{_stamp(weights)}:{_stamp(tokenizer)}")


def model2vec_files(folder: Path, name: str) -> ModelFiles:
    problem = model2vec_problem(folder)
    if problem is not None:
        raise ModelError(f"{name} is not a model2vec model folder: {problem} (one holds {', '.join(MODEL2VEC_FILES)})")
    weights, tokenizer = folder / "model.safetensors", folder / "tokenizer.json"
    config = folder / "config.json"
    return ModelFiles(
        name, weights, tokenizer, _MODEL2VEC_TENSOR, f"model2vec:{_stamp(config)}:{_stamp(weights)}:{_stamp(tokenizer)}"
    )


def _stamp(path: Path) -> str:
    status = path.stat()
    return f"{path.resolve().as_posix()}@{status.st_size}@{status.st_mtime_ns}"


# ---------------------------------------------------------------- loading


_loaded: dict[str, StaticModel] = {}
_loading = threading.Lock()


def load(files: ModelFiles) -> StaticModel:
    """The model of ``files``, loaded once per process (per version of its files)."""
    with _loading:
        model = _loaded.get(files.identity)
        if model is None:
            model = _loaded[files.identity] = _load(files)
        return model


def _load(files: ModelFiles) -> StaticModel:
    table = read_tensor(files.weights, files.tensor, _shown_of(files, files.weights))
    tokenizer = _tokenizer(files)
    skip: set[int] = set()
    if files.name == WORDLLAMA:
        _weigh_by_rarity(table, tokenizer)
    else:
        # model2vec leaves the unknown token out of the mean: it carries no meaning.
        unknown = _unknown_token(tokenizer)
        if unknown is not None:
            skip.add(unknown)
        _check_config(files.weights.parent / "config.json")
    return StaticModel(files, table, tokenizer, frozenset(skip))


def _tokenizer(files: ModelFiles) -> Any:
    """The model's tokenizer: rag-lsp's own (``bytepairs``) for the kind it
    reads, which the default model's is; for another kind, the ``tokenizers``
    package's where it is installed."""
    shown = _shown_of(files, files.tokenizer)
    try:
        return BytePairTokenizer.from_file(files.tokenizer)
    except OSError as error:
        raise ModelError(f"{shown} cannot be read: {error.strerror or error}") from None
    except ValueError as error:
        raise ModelError(f"{shown} is not a tokenizer: {error}") from None
    except Unsupported as unsupported:
        reason = unsupported.message
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise ModelError(
            f"{shown} is a tokenizer that rag-lsp reads only with the `tokenizers` package ({reason}):"
            " pip install tokenizers"
        ) from None
    try:
        tokenizer = Tokenizer.from_file(str(files.tokenizer))
    except Exception as error:  # noqa: BLE001 - tokenizers raises plain Exceptions for bad files
        raise ModelError(f"{shown} is not a tokenizer: {error}") from None
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def _weigh_by_rarity(table: numpy.ndarray, tokenizer: Any) -> None:
    """Scale each token's vector of the wordllama table by how rare the token is,
    in place; a text's vector, the mean of its tokens' vectors, then leans on its
    rare words rather than on "the", "of" and indentation.

    The table follows the order of its vocabulary, whose byte-pair merges were
    learned most frequent first, so a token's position is its frequency rank; the
    weight is log(2 + rank), the Zipf weighting model2vec gives the tokens of the
    models it distills (so a model2vec folder's table, weighted already, is left
    as it is). Tokens of whitespace alone (runs of "▁", newlines) weigh nothing.
    """
    rows = table.shape[0]
    weights = numpy.log(numpy.arange(rows, dtype=numpy.float32) + 2)
    for token in _WHITESPACE_TOKENS:
        position = tokenizer.token_to_id(token)
        if position is not None and position < rows:
            weights[position] = 0.0
    table *= weights[:, None]


def _unknown_token(tokenizer: Any) -> int | None:
    if isinstance(tokenizer, BytePairTokenizer):
        return tokenizer.token_to_id(tokenizer.unk_token) if tokenizer.unk_token is not None else None
    try:
        model = json.loads(tokenizer.to_str()).get("model", {})
    except (ValueError, AttributeError):
        return None
    token = model.get("unk_token") if isinstance(model, dict) else None
    return tokenizer.token_to_id(token) if isinstance(token, str) else None


def _check_config(path: Path) -> None:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except RecursionError:
        raise ModelError(f"{_shown(path)} is nested too deep to be a model's config") from None
    except (OSError, ValueError) as error:
        raise ModelError(f"{_shown(path)} is not JSON: {error}") from None
    if not isinstance(value, dict):
        raise ModelError(f"{_shown(path)} is not a JSON object")


def read_tensor(path: Path, name: str, shown: str | None = None) -> numpy.ndarray:
    """The 2-D tensor ``name`` of a safetensors file, as float32; ModelError when
    the file is not one, lacks the tensor, or holds values that are not finite
    (saying which file as ``shown``, by default its folder and name)."""
    shown = shown or _shown(path)
    try:
        with open(path, "rb") as file:
            size = os.fstat(file.fileno()).st_size
            head = file.read(8)
            if len(head) < 8:
                raise ModelError(f"{shown} is not a safetensors file: it is {size} bytes long")
            length = int.from_bytes(head, "little")
            if length > min(size - 8, _MAX_HEADER):
                raise ModelError(f"{shown} is not a safetensors file{_pointer_hint(head)}")
            try:
                header = json.loads(file.read(length))
            except (ValueError, RecursionError):
                raise ModelError(f"{shown} is not a safetensors file: its header is not JSON") from None
            entry = header.get(name) if isinstance(header, dict) else None
            if not isinstance(entry, dict):
                held = ", ".join(sorted(key for key in header if key != "__metadata__")) if isinstance(header, dict) else ""
                raise ModelError(f"{shown} has no tensor {name!r}" + (f" (it holds {held})" if held else ""))
            dtype, shape, offsets = entry.get("dtype"), entry.get("shape"), entry.get("data_offsets")
            if dtype not in _DTYPES:
                raise ModelError(f"{shown}: tensor {name!r} has the type {dtype!r}; float tensors (F32, F16, BF16, F64) are read")
            if (
                not isinstance(shape, list)
                or len(shape) != 2
                or not all(isinstance(n, int) and n > 0 for n in shape)
                or not isinstance(offsets, list)
                or len(offsets) != 2
                or not all(isinstance(n, int) for n in offsets)
            ):
                raise ModelError(f"{shown}: tensor {name!r} is not a table of one vector per token")
            count = shape[0] * shape[1]
            itemsize = numpy.dtype(_DTYPES[dtype]).itemsize
            begin, end = offsets
            if end - begin != count * itemsize or begin < 0 or 8 + length + end > size:
                raise ModelError(f"{shown}: tensor {name!r} does not fit in the file (it is cut short or damaged)")
            file.seek(8 + length + begin)
            raw = numpy.fromfile(file, dtype=_DTYPES[dtype], count=count)
    except OSError as error:
        raise ModelError(f"{shown} cannot be read: {error.strerror or error}") from None
    if raw.size != count:
        raise ModelError(f"{shown}: tensor {name!r} is cut short")
    if dtype == "BF16":
        table = (raw.astype(numpy.uint32) << 16).view(numpy.float32)
    else:
        table = raw.astype(numpy.float32)
    table = table.reshape(shape)
    if not numpy.isfinite(table).all():
        raise ModelError(f"{shown}: tensor {name!r} holds values that are not numbers")
    return table


def _pointer_hint(head: bytes) -> str:
    # A model committed with Git LFS and checked out without it is a small text file.
    return ": it is a Git LFS pointer (run `git lfs pull`)" if head.startswith(b"version ") else ""


def _shown_of(files: ModelFiles, path: Path) -> str:
    """A model file as its messages name it: a workspace model's by the folder the
    targets config names (`models/lfs/model.safetensors`), the packaged one's by
    its folder in the package."""
    return _shown(path) if files.name == WORDLLAMA else f"{files.name.rstrip('/')}/{path.name}"


def _shown(path: Path) -> str:
    return path.name if path.parent.name in ("", ".") else f"{path.parent.name}/{path.name}"
