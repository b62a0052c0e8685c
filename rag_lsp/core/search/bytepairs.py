"""Byte-pair tokenizers read from a ``tokenizer.json``, in plain Python.

The embedding models' tokenizers are files in the format of Hugging Face's
``tokenizers`` library. This module reads the kind the default model's is
(Llama's: a normalizer that writes "▁" before a text and for each space, no
pre-tokenizer, byte-pair merges with byte tokens for characters the vocabulary
lacks) and gives, for any text, the ids that library gives for it as rag-lsp
calls it, ``Tokenizer.encode(text, add_special_tokens=False).ids``: so the
post-processor (which adds "<s>"), padding, truncation and the decoder are not
read. What it reads, it reads as that library does:

* added tokens are found in the raw text first, leftmost and then longest, and
  each stretch of text between them is normalized and tokenized on its own;
* normalizers: ``Prepend`` (before a non-empty text), ``Replace`` of a string,
  and a ``Sequence`` of them;
* pre-tokenizer: none (a stretch of text is one word);
* model: ``BPE`` with its ``unk_token``, ``fuse_unk``, ``byte_fallback`` and
  ``ignore_merges``; merges by rank, the lowest first and the leftmost of equal
  ones.

A file that uses anything else raises :class:`Unsupported`, saying what.

Speed: a text is cut into pieces that no merge ever joins (see _cutting:
checked on the merges when the file is read; for Llama's, "▁" and a run of
letters, a run of punctuation, one digit or one CJK character), and each
piece is merged on its own; pieces repeat (``self``, ``return``, indentation,
``(``), so each piece's ids are remembered and a piece seen before costs a
lookup. A batch of texts (an index's chunks) is encoded in numpy, which runs
without the interpreter's lock, beside the thread that pools the vectors, as
the ``tokenizers`` package's Rust does: its characters are one array of code
points, cut where a piece starts; each piece is hashed and found in a table of
the pieces seen (and compared with the one found there, character by
character); only the new ones are merged, together, a merge of each per step
(see BytePairTokenizer._cut). Python's own per-piece work (a regular
expression's matches, a dictionary's lookups) held the lock for the whole of
the tokenizer's time, and cost twice as much. A few characters (a query's) are
cut by a regular expression and looked up in a dictionary: numpy's calls
would cost more than the work.

Turning the file's merges into the table of ranks and finding how to cut texts
is a tenth of a second in Python, most of a warm start's model loading: for a
file with a ``.tables.npz`` beside it (written by ``python -m
rag_lsp.core.search.bytepairs TOKENIZER_JSON``, as the default model's is), the
merges are read from it as arrays of token ids, with the cutting, once its
SHA-256 of the file says it was made from this very file.
"""

from __future__ import annotations

import hashlib
import heapq
import itertools
import json
import operator
import re
import sys
import threading
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy
import orjson

# Llama's mark for a space, which its normalizer writes.
SPACE_MARK = "\u2581"
_BYTE_TOKENS = frozenset(f"<0x{byte:02X}>" for byte in range(256))
# Pieces remembered at most (their numbers, ids and code points: about 120
# bytes each), and the longest remembered (a longer one is a line of data, seen
# once); the memo is emptied when full, or once the ids it stores pass
# _MEMO_TOKENS (4 bytes each).
_MEMO_SIZE = 1 << 17
_MEMO_LONGEST = 256
_MEMO_TOKENS = 1 << 21
# A piece of at most this many symbols is merged by looking for its best
# pair afresh after each merge (see _merged, _merged_many), a longer one with a
# queue of its pairs.
_FEW_SYMBOLS = 48
# New pieces of a batch merged together in numpy from this many on; fewer, one
# by one in Python.
_MERGED_TOGETHER = 64
# At most this many characters (a query's) are cut by the pattern, each piece
# looked up in a dictionary of its own of at most _FEW_KEPT pieces (see
# BytePairTokenizer._cut_few): numpy's calls cost a tenth of a millisecond.
_FEW_CHARACTERS = 1024
_FEW_KEPT = 1 << 14
# Characters cut at once (see BytePairTokenizer._cut_in_parts): about 20 MB of arrays.
_CUT_AT_ONCE = 1 << 18
# The hash of pieces (see _hashes, _Table): odd numbers, the inverse of the base
# modulo 2**64.
_HASH_BASE = numpy.uint64(0x9E3779B97F4A7C15)
_HASH_INVERSE = numpy.uint64(pow(0x9E3779B97F4A7C15, -1, 1 << 64))
_HASH_LENGTH = numpy.uint64(0xC2B2AE3D27D4EB4F)
_HASH_SPREAD = numpy.uint64(0xFF51AFD7ED558CCD)
# Above any merge's number (see BytePairTokenizer._ranks).
_NO_MERGE = 1 << 128
_ADDED_TOKEN_FLAGS = ("single_word", "lstrip", "rstrip")


class Unsupported(Exception):
    """The tokenizer file uses something this module does not implement."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class BytePairTokenizer:
    """Texts to token ids, as ``tokenizers`` encodes them without special tokens."""

    def __init__(
        self,
        vocab: dict[str, int],
        merges: tuple[list[str], list[str]],
        *,
        unk_token: str | None = None,
        fuse_unk: bool = False,
        byte_fallback: bool = False,
        ignore_merges: bool = False,
        normalizers: list[Callable[[str], str]] | None = None,
        added_tokens: dict[str, int] | None = None,
        tables: Any = None,
    ) -> None:
        """``tables``: the arrays of a tables file made from the same file (see
        write_tables), which stand for ``merges``."""
        self._vocab = vocab
        self._normalizers = normalizers or []
        self._added_ids = dict(added_tokens or {})
        self._added = None
        if self._added_ids:
            # Longest first: at one place, the longest added token is found.
            longest_first = sorted(self._added_ids, key=len, reverse=True)
            self._added = re.compile("|".join(map(re.escape, longest_first)))
        if unk_token is not None and unk_token not in vocab:
            raise ValueError(f"its unknown token {unk_token!r} is not in its vocabulary")
        self.unk_token = unk_token
        self._unk_id = vocab[unk_token] if unk_token is not None else None
        self._fuse_unk = fuse_unk
        self._ignore_merges = ignore_merges
        self._byte_ids: list[int | None] | None = None
        if byte_fallback:
            self._byte_ids = [vocab.get(f"<0x{byte:02X}>") for byte in range(256)]
        # A pair of ids (left * stride + right) -> its merge's rank * stride + the
        # merged id (so the lower rank is the lower number); a pair listed twice
        # keeps its last rank, as the library's map does.
        self._stride = stride = max(vocab.values(), default=0) + 1
        if tables is not None:
            left, right, made, groups = _from_arrays(tables, stride)
        else:
            lefts, rights = merges
            made_tokens = list(map(operator.add, lefts, rights))
            left_ids, right_ids, made_ids = (list(map(vocab.get, tokens)) for tokens in (lefts, rights, made_tokens))
            if None in left_ids or None in right_ids or None in made_ids:
                at, missing = next((at, token) for at, merge in enumerate(zip(lefts, rights, made_tokens)) for token in merge if token not in vocab)
                raise ValueError(f"its merge {lefts[at]!r} + {rights[at]!r} needs {missing!r}, which is not in its vocabulary")
            left, right, made = (numpy.array(ids, dtype=numpy.int64) for ids in (left_ids, right_ids, made_ids))
            # The tokens of more than one character that merges take and none makes.
            taken, made_set = set(left_ids) | set(right_ids), set(made_ids)
            unmade = [token for token, token_id in vocab.items() if len(token) > 1 and token_id in taken and token_id not in made_set]
            groups = _cutting(lefts, rights, unmade, self._byte_ids, self._unk_id, fuse_unk)
        keys, numbers = left * stride + right, numpy.arange(len(made), dtype=numpy.int64) * stride + made
        self._ranks: dict[int, int] = dict(zip(keys.tolist(), numbers.tolist()))
        # The same in a table for numpy (see _merged_many), made when first used.
        self._pairs: _Table | None = None
        self._no_pair = len(made) * stride
        self._symbols_of: dict[str, list[int]] = {}
        self._char_ids: numpy.ndarray | None = None  # see _learn
        self._few: dict[str, list[int]] = {}  # see _cut_few
        # How texts are cut (see _cutting): the pattern that finds the pieces, and
        # each character's group by its code point (0: none), for numpy (see _cut).
        self._groups = groups
        self._pieces = _pattern(groups) if groups is not None else None
        self._group_of: numpy.ndarray | None = None
        if groups is not None:
            self._group_of = numpy.zeros(
                max((ord(character) for group in groups for character in group), default=0) + 2, dtype=numpy.uint8 if len(groups) < 256 else numpy.int32
            )
            for number, group in enumerate(groups, 1):
                self._group_of[list(map(ord, group))] = number
        # Whether a line end is never joined with what follows it in a piece: it
        # is in no group (so it ends a run) and not "▁" (see _cut_in_parts).
        self._line_breaks = groups is not None and not any("\n" in group for group in groups)
        # The pieces seen (see _cut): by number, where their ids are stored and
        # how many there are, and their code points; their numbers by their
        # hashes (see _Table), and by their text where texts are not cut (or
        # where a piece's hash is another's).
        self._memo: dict[str, int] = {}
        self._memo_lock = threading.Lock()
        self._firsts = numpy.zeros(0, dtype=numpy.int64)
        self._lengths = numpy.zeros(0, dtype=numpy.int64)
        self._code_firsts = numpy.zeros(0, dtype=numpy.int64)
        self._code_lengths = numpy.zeros(0, dtype=numpy.int64)
        self._tokens = numpy.zeros(0, dtype=numpy.int32 if stride < 1 << 31 else numpy.int64)
        self._codes = numpy.zeros(0, dtype=numpy.uint32)
        self._forget()

    @classmethod
    def from_file(cls, path: Path) -> BytePairTokenizer:
        """The tokenizer of a ``tokenizer.json``: OSError if it cannot be read,
        ValueError if it is not a tokenizer, Unsupported if it is one of a kind
        this module does not read. Its tables are read from the tables file
        beside it when that was made from this very file (see tables_path)."""
        data = Path(path).read_bytes()
        tables = _tables_of(Path(path), data)
        if tables is not None:
            try:
                return cls.from_json(orjson.loads(data), tables)
            except (orjson.JSONDecodeError, ValueError, KeyError, TypeError, re.error):
                pass  # tables that do not fit: the file is read as if there were none
        try:
            value = json.loads(data.decode("utf-8"))
        except RecursionError:
            raise ValueError("it is nested too deep") from None
        except UnicodeDecodeError:
            raise ValueError("it is not UTF-8 text") from None
        return cls.from_json(value)

    @classmethod
    def from_json(cls, value: Any, tables: Any = None) -> BytePairTokenizer:
        """The tokenizer of a ``tokenizer.json``'s value; ``tables``: the arrays of
        its tables file, which stand for its merges (see write_tables)."""
        if not isinstance(value, dict):
            raise ValueError("it is not a JSON object")
        model = value.get("model")
        if not isinstance(model, dict):
            raise ValueError("it has no model")
        kind = model.get("type", "BPE" if "merges" in model else None)
        if kind != "BPE":
            raise Unsupported(f"its model is {kind or 'of no type'}, not BPE")
        for option in ("continuing_subword_prefix", "end_of_word_suffix"):
            if model.get(option):
                raise Unsupported(f"its BPE model has a {option}")
        if model.get("dropout") not in (None, 0, 0.0):
            raise Unsupported("its BPE model has dropout")
        if value.get("pre_tokenizer") is not None:
            kind = value["pre_tokenizer"].get("type") if isinstance(value["pre_tokenizer"], dict) else None
            raise Unsupported(f"it has a pre-tokenizer ({kind})")
        vocab = model.get("vocab")
        if not isinstance(vocab, dict) or not all(isinstance(token_id, int) and token_id >= 0 for token_id in vocab.values()):
            raise ValueError("its model has no vocabulary of token ids")
        unk_token = model.get("unk_token")
        if unk_token is not None and not isinstance(unk_token, str):
            raise ValueError("its unknown token is not a string")
        return cls(
            vocab,
            _merges(model.get("merges", [])) if tables is None else ([], []),
            unk_token=unk_token,
            fuse_unk=bool(model.get("fuse_unk", False)),
            byte_fallback=bool(model.get("byte_fallback", False)),
            ignore_merges=bool(model.get("ignore_merges", False)),
            normalizers=_normalizers(value.get("normalizer")),
            added_tokens=_added_tokens(value.get("added_tokens") or []),
            tables=tables,
        )

    def token_to_id(self, token: str) -> int | None:
        found = self._added_ids.get(token)
        return found if found is not None else self._vocab.get(token)

    def get_vocab(self) -> dict[str, int]:
        return {**self._vocab, **self._added_ids}

    @property
    def cuts(self) -> bool:
        """Whether a text is cut into pieces merged one by one (see _cutting)."""
        return self._pieces is not None

    # ------------------------------------------------------------ encoding

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        """Each text's ids (a text holding half of a character raises UnicodeEncodeError)."""
        flat, starts = self.encode_arrays(texts)
        ids, bounds = flat.tolist(), starts.tolist()
        return [ids[start:end] for start, end in zip(bounds, bounds[1:])]

    def encode(self, text: str) -> list[int]:
        return self.encode_batch([text])[0]

    def encode_arrays(self, texts: Sequence[str]) -> tuple[numpy.ndarray, numpy.ndarray]:
        """The ids of ``texts`` in one array (int64), text ``n``'s from
        ``starts[n]`` to ``starts[n + 1]`` of the second array (see _cut)."""
        added = self._added
        if added is None or not any(map(added.search, texts)):
            return self._stretches(list(map(self._normalized, texts)))
        # Texts holding added tokens: the stretches between them are encoded as
        # texts of their own, and each text is its stretches and added tokens.
        stretches: list[str] = []
        rows: list[int] = []  # each text's rows: a stretch's, or -1 - an added token's
        counts: list[int] = []
        added_ids: list[int] = []
        for text in texts:
            before, start = len(rows), 0
            for found in added.finditer(text):
                rows += (len(stretches), -1 - len(added_ids))
                stretches.append(self._normalized(text[start : found.start()]))
                added_ids.append(self._added_ids[found.group()])
                start = found.end()
            rows.append(len(stretches))
            stretches.append(self._normalized(text[start:]))
            counts.append(len(rows) - before)
        flat, starts = _with_rows(*self._stretches(stretches), added_ids)
        return _joined(flat, starts, _rows_past(rows, len(stretches)), numpy.asarray(counts, dtype=numpy.int64))

    def _normalized(self, text: str) -> str:
        for normalize in self._normalizers:
            text = normalize(text)
        return text

    def _stretches(self, stretches: list[str]) -> tuple[numpy.ndarray, numpy.ndarray]:
        """The ids of normalized stretches of text (those between added tokens)."""
        whole: dict[int, int] = {}
        if self._ignore_merges:
            # A stretch that is a token of the vocabulary is that token.
            whole = {at: self._vocab[text] for at, text in enumerate(stretches) if text in self._vocab}
            if whole:
                stretches = [text if at not in whole else "" for at, text in enumerate(stretches)]
        with self._memo_lock:
            if self._group_of is None:
                flat, starts = self._uncut(stretches)
            elif sum(map(len, stretches)) <= _FEW_CHARACTERS:
                flat, starts = self._cut_few(stretches)
            else:
                flat, starts = self._cut_in_parts(stretches)
        if whole:
            # Those stretches (encoded as empty ones) are rows of one id each, after the others.
            rows = list(range(len(stretches)))
            for number, at in enumerate(whole):
                rows[at] = -1 - number
            flat, starts = _with_rows(flat, starts, list(whole.values()))
            flat, starts = _joined(flat, starts, _rows_past(rows, len(stretches)), numpy.ones(len(rows), dtype=numpy.int64))
        return flat, starts

    def _cut_few(self, texts: list[str]) -> tuple[numpy.ndarray, numpy.ndarray]:
        """_cut for a few characters (a query's): the pieces found by the
        pattern and looked up one by one in a dictionary of their own, where
        numpy's cost per call would be most of the time."""
        memo = self._few
        ids: list[int] = []
        ends = [0]
        for text in texts:
            for piece in self._pieces.findall(text):  # type: ignore[union-attr]
                found = memo.get(piece)
                if found is None:
                    found = self._merged(self._symbols(piece))
                    if len(memo) >= _FEW_KEPT:
                        memo.clear()
                    memo[piece] = found
                ids += found
            ends.append(len(ids))
        return numpy.array(ids, dtype=numpy.int64), numpy.array(ends, dtype=numpy.int64)

    def _cut_in_parts(self, texts: list[str]) -> tuple[numpy.ndarray, numpy.ndarray]:
        """_cut, _CUT_AT_ONCE characters at a time or so (its arrays take 30
        bytes a character): texts are cut a few at a time, and a longer text
        after line ends (where no piece goes on past one, see _line_breaks)."""
        sizes = list(map(len, texts))
        if sum(sizes) <= _CUT_AT_ONCE:
            return self._cut(texts)
        parts: list[str] = []
        counts: list[int] = []
        for text, size in zip(texts, sizes):
            before = len(parts)
            if size > _CUT_AT_ONCE and self._line_breaks:
                lines = text.split("\n")
                lines = [line + "\n" for line in lines[:-1]] + lines[-1:]
                at = 0
                while at < len(lines):
                    taken, end = 0, at
                    while end < len(lines) and (end == at or taken + len(lines[end]) <= _CUT_AT_ONCE):
                        taken += len(lines[end])
                        end += 1
                    parts.append("".join(lines[at:end]))
                    at = end
            else:
                parts.append(text)
            counts.append(len(parts) - before)
        rows: list[tuple[numpy.ndarray, numpy.ndarray]] = []
        first = 0
        while first < len(parts):
            last, taken = first, 0
            while last < len(parts) and (last == first or taken + len(parts[last]) <= _CUT_AT_ONCE):
                taken += len(parts[last])
                last += 1
            rows.append(self._cut(parts[first:last]))
            first = last
        flat = numpy.concatenate([ids for ids, _ in rows])
        starts = _starts_of(numpy.concatenate([numpy.diff(part_starts) for _, part_starts in rows]))
        return _joined(flat, starts, numpy.arange(len(parts), dtype=numpy.int64), numpy.asarray(counts, dtype=numpy.int64))

    def _cut(self, texts: list[str]) -> tuple[numpy.ndarray, numpy.ndarray]:
        """The ids of normalized ``texts``, cut into pieces (see _cutting), in numpy.

        The texts' characters are one array of code points: a piece starts at a
        run of "▁", or at a character that does not carry on the run of its
        group before it. Each piece is hashed from its code points and looked up
        in a table of the pieces seen, by its hash and then its code points (so
        a piece is never taken for another); only the pieces never seen are
        merged (see _learn). Most of it is numpy's work, done without the
        interpreter's lock, beside the caller's other threads."""
        counts = numpy.fromiter(map(len, texts), dtype=numpy.int64, count=len(texts))
        text_starts = _starts_of(counts)
        joined = "".join(texts)
        codes = numpy.frombuffer(joined.encode("utf-32-le"), dtype=numpy.uint32)
        size = codes.size
        if size == 0:
            return numpy.zeros(0, dtype=numpy.int64), numpy.zeros(len(texts) + 1, dtype=numpy.int64)
        group_of = self._group_of
        assert group_of is not None
        groups = group_of[numpy.minimum(codes, group_of.size - 1)]
        mark = codes == ord(SPACE_MARK)
        after_mark = numpy.zeros(size, dtype=bool)
        after_mark[1:] = mark[:-1]
        carries_on = numpy.zeros(size, dtype=bool)
        carries_on[1:] = (groups[1:] == groups[:-1]) & (groups[1:] != 0)
        # A run of marks starts a piece, which takes the character after the run
        # and the rest of that character's group's run; a run of a group (or a
        # character of none) starts one where no mark is before it.
        starts = ~after_mark & (mark | ~carries_on)
        starts[text_starts[:-1][counts > 0]] = True
        firsts = numpy.flatnonzero(starts)
        del groups, mark, after_mark, carries_on, starts
        lengths = numpy.diff(firsts, append=size)
        numbers = self._numbers(joined, codes, firsts, lengths)
        token_counts = self._lengths[numbers]
        flat = self._tokens[_spans(self._firsts[numbers], token_counts)].astype(numpy.int64)
        return flat, _starts_of(token_counts)[numpy.searchsorted(firsts, text_starts)]

    def _numbers(self, joined: str, codes: numpy.ndarray, firsts: numpy.ndarray, lengths: numpy.ndarray) -> numpy.ndarray:
        """The number of each piece of ``joined`` (its code points ``codes``),
        ``lengths[n]`` characters from ``firsts[n]``: the pieces never seen
        are merged and stored first."""
        hashes = _hashes(codes, firsts, lengths)
        numbers = self._seen.found(hashes)
        # A hash found holds the piece looked up only if they have the same code
        # points: every character is compared with the one stored for its piece
        # (those of a piece not found, with any: their outcome is not read).
        known = numbers >= 0
        if self._codes_stored:
            held = numpy.maximum(numbers, 0)
            same = known & (self._code_lengths[held] == lengths)
            stored = numpy.take(self._codes, _spans(self._code_firsts[held], lengths), mode="clip")
            same[numpy.searchsorted(firsts, numpy.flatnonzero(stored != codes), side="right") - 1] = False
            odd = [numpy.flatnonzero((numbers >= 0) & ~same)]
        else:
            odd = []
        unseen = numpy.flatnonzero(numbers < 0)
        if unseen.size:
            # Each new piece merged once: the first of its hash, which the others must equal.
            distinct, first_of, which = numpy.unique(hashes[unseen], return_index=True, return_inverse=True)
            if self._kept + distinct.size > _MEMO_SIZE or self._stored > _MEMO_TOKENS:
                self._forget()
                odd, unseen = [], numpy.arange(len(firsts))
                distinct, first_of, which = numpy.unique(hashes, return_index=True, return_inverse=True)
            new = unseen[first_of]
            alike = _same_codes(codes, firsts[unseen], codes, firsts[new][which], lengths[unseen], lengths[new][which])
            odd.append(unseen[~alike])
            new_firsts, new_lengths = firsts[new], lengths[new]
            learned = self._learn([joined[first : first + length] for first, length in zip(new_firsts.tolist(), new_lengths.tolist())])
            numbers[unseen] = learned[which.reshape(-1)]
            # A long piece (a line of data, seen once) is not remembered past this batch.
            kept = new_lengths <= _MEMO_LONGEST
            self._insert(distinct[kept], learned[kept], codes, new_firsts[kept], new_lengths[kept])
        odd_ones = numpy.concatenate(odd)
        if odd_ones.size:
            numbers[odd_ones] = self._odd([joined[first : first + length] for first, length in zip(firsts[odd_ones].tolist(), lengths[odd_ones].tolist())])
        return numbers

    def _odd(self, pieces: list[str]) -> numpy.ndarray:
        """The numbers of pieces whose hash is another piece's, looked up by their
        text (a chance of about one in 2**64 for two pieces)."""
        memo = self._memo
        missing = list(dict.fromkeys(piece for piece in pieces if piece not in memo))
        if missing:
            memo.update(zip(missing, self._learn(missing).tolist()))
        return numpy.array([memo[piece] for piece in pieces], dtype=numpy.int64)

    def _uncut(self, texts: list[str]) -> tuple[numpy.ndarray, numpy.ndarray]:
        """The ids of normalized ``texts`` for a tokenizer that cuts no text
        (see _cutting): each merged whole, remembered by its text."""
        memo = self._memo
        numbers_of = {text: memo.get(text, -1) for text in texts}
        missing = [text for text, number in numbers_of.items() if number < 0]
        if missing:
            if len(memo) + len(missing) > _MEMO_SIZE or self._stored > _MEMO_TOKENS:
                self._forget()
                missing = list(numbers_of)
            for text, number in zip(missing, self._learn(missing).tolist()):
                numbers_of[text] = number
                if len(text) <= _MEMO_LONGEST:
                    memo[text] = number
        numbers = numpy.array([numbers_of[text] for text in texts], dtype=numpy.int64)
        token_counts = self._lengths[numbers]
        return self._tokens[_spans(self._firsts[numbers], token_counts)].astype(numpy.int64), _starts_of(token_counts)

    def _forget(self) -> None:
        """Empty the memo of pieces (it is full): their table, ids and code points."""
        self._memo.clear()
        self._seen = _Table()
        self._kept = self._stored = self._codes_stored = 0

    def _insert(self, hashes: numpy.ndarray, numbers: numpy.ndarray, codes: numpy.ndarray, firsts: numpy.ndarray, lengths: numpy.ndarray) -> None:
        """Hold pieces (of distinct hashes, none held yet) in the table, and keep
        their code points (``lengths[n]`` of ``codes`` from ``firsts[n]``)."""
        self._seen.put(hashes, numbers)
        begin, end = self._codes_stored, self._codes_stored + int(lengths.sum())
        if end > self._codes.size:
            self._codes = _grown(self._codes, end)
        self._codes[begin:end] = codes[_spans(firsts, lengths)]
        self._code_firsts[numbers] = begin + _starts_of(lengths)[:-1]
        self._code_lengths[numbers] = lengths
        self._codes_stored = end

    def _learn(self, pieces: list[str]) -> numpy.ndarray:
        """Merge ``pieces`` (normalized text none of whose merges crosses out of
        it) and store their ids; the number of each. Most are short: they are
        merged together, a merge of each piece per step, in numpy (see
        _merged_many); a piece of many symbols is merged on its own (see _merged)."""
        lengths = numpy.fromiter(map(len, pieces), dtype=numpy.int64, count=len(pieces))
        if self._char_ids is None:
            # The token of each character that is one, by its code point (-1: none).
            singles = {ord(token): token_id for token, token_id in self._vocab.items() if len(token) == 1}
            self._char_ids = numpy.full(max(singles, default=0) + 2, -1, dtype=numpy.int64)
            self._char_ids[numpy.fromiter(singles, dtype=numpy.int64, count=len(singles))] = numpy.fromiter(singles.values(), dtype=numpy.int64, count=len(singles))
        points = numpy.frombuffer("".join(pieces).encode("utf-32-le"), dtype=numpy.uint32)
        codes = self._char_ids[numpy.minimum(points, self._char_ids.size - 1)]
        # A piece whose every character is a token is those tokens; the others'
        # symbols are found character by character (_symbols).
        odd = numpy.zeros(len(pieces), dtype=bool)
        unknown = numpy.flatnonzero(codes < 0)
        if unknown.size:
            odd[numpy.searchsorted(_starts_of(lengths), unknown, side="right") - 1] = True
        plain = numpy.flatnonzero(~odd)
        groups = [(plain, codes[_repeated(~odd, lengths)], lengths[plain])]
        if unknown.size:
            chosen = numpy.flatnonzero(odd)
            lists = [self._symbols(pieces[at]) for at in chosen.tolist()]
            symbol_counts = numpy.fromiter(map(len, lists), dtype=numpy.int64, count=len(lists))
            groups.append((chosen, numpy.fromiter(itertools.chain.from_iterable(lists), dtype=numpy.int64, count=int(symbol_counts.sum())), symbol_counts))
        order: list[numpy.ndarray] = []
        merged: list[tuple[numpy.ndarray, numpy.ndarray]] = []
        for chosen, symbols, symbol_counts in groups:
            few = symbol_counts <= _FEW_SYMBOLS
            order.append(chosen[few])
            merged.append(self._merged_some(symbols[_repeated(few, symbol_counts)], symbol_counts[few]))
            # Long pieces one by one (a queue of their pairs).
            bounds = _starts_of(symbol_counts).tolist()
            for at in numpy.flatnonzero(~few).tolist():
                ids = self._merged(symbols[bounds[at] : bounds[at + 1]].tolist())
                order.append(chosen[at : at + 1])
                merged.append((numpy.asarray(ids, dtype=numpy.int64), numpy.array([len(ids)], dtype=numpy.int64)))
        numbers = numpy.empty(len(pieces), dtype=numpy.int64)
        numbers[numpy.concatenate(order)] = self._store(numpy.concatenate([ids for ids, _ in merged]), numpy.concatenate([part for _, part in merged]))
        return numbers

    def _store(self, tokens: numpy.ndarray, counts: numpy.ndarray) -> numpy.ndarray:
        """Store the ids of pieces (``counts[n]`` of ``tokens`` for the n-th); their numbers."""
        kept, stored = self._kept, self._stored
        rows, end = kept + counts.size, stored + tokens.size
        if rows > self._firsts.size:
            self._firsts, self._lengths = _grown(self._firsts, rows), _grown(self._lengths, rows)
            self._code_firsts, self._code_lengths = _grown(self._code_firsts, rows), _grown(self._code_lengths, rows)
        if end > self._tokens.size:
            self._tokens = _grown(self._tokens, end)
        self._tokens[stored:end] = tokens
        self._firsts[kept:rows] = stored + _starts_of(counts)[:-1]
        self._lengths[kept:rows] = counts
        self._code_lengths[kept:rows] = -1  # no code points kept (see _insert)
        self._kept, self._stored = rows, end
        return numpy.arange(kept, rows, dtype=numpy.int64)

    def _merged_some(self, symbols: numpy.ndarray, counts: numpy.ndarray) -> tuple[numpy.ndarray, numpy.ndarray]:
        """Pieces of few symbols merged: together (in numpy) when there are
        many, else one by one (numpy's cost per call outweighs a few pieces)."""
        if len(counts) >= _MERGED_TOGETHER and self._ranks:
            # At most so many symbols a call: a pair's merge times the symbols
            # of the call fits in 63 bits (see _merged_many).
            most = max((1 << 62) // (self._no_pair + 1), _FEW_SYMBOLS)
            bounds = _starts_of(counts)
            cuts = [0]
            while cuts[-1] < len(counts):
                cuts.append(max(int(numpy.searchsorted(bounds, bounds[cuts[-1]] + most, side="right")) - 1, cuts[-1] + 1))
            parts = [self._merged_many(symbols[bounds[a] : bounds[b]], counts[a:b]) for a, b in zip(cuts, cuts[1:])]
            return numpy.concatenate([ids for ids, _ in parts]), numpy.concatenate([part for _, part in parts])
        bounds_list = _starts_of(counts).tolist()
        every = symbols.tolist()
        lists = [self._merged(every[start:end]) for start, end in zip(bounds_list, bounds_list[1:])]
        out_counts = numpy.fromiter(map(len, lists), dtype=numpy.int64, count=len(lists))
        return numpy.fromiter(itertools.chain.from_iterable(lists), dtype=numpy.int64, count=int(out_counts.sum())), out_counts

    def _merged_many(self, symbols: numpy.ndarray, counts: numpy.ndarray) -> tuple[numpy.ndarray, numpy.ndarray]:
        """Pieces (their ``symbols`` laid end to end, ``counts`` of them each)
        merged as _merged merges each, all at once: at each step, each piece's
        pair of the lowest rank (the leftmost of equal ones) is merged, and a
        piece with no pair left to merge is set aside. The ids, laid end to
        end, and their count per piece."""
        if self._pairs is None:
            # The merges by their pairs, for numpy: made at the first use.
            self._pairs = _Table(load=4)
            self._pairs.put(numpy.fromiter(self._ranks, dtype=numpy.uint64, count=len(self._ranks)), numpy.fromiter(self._ranks.values(), dtype=numpy.int64, count=len(self._ranks)))
        pairs = self._pairs
        stride = self._stride
        none = self._no_pair

        def merges_of(left: numpy.ndarray, right: numpy.ndarray) -> numpy.ndarray:
            merges = pairs.found((left * stride + right).astype(numpy.uint64))
            merges[merges < 0] = none
            return merges

        count = len(counts)
        # A piece of no symbol (its characters left out) has no id.
        pieces = numpy.flatnonzero(counts)
        counts = counts[pieces]
        symbols = symbols.copy()
        ends = numpy.cumsum(counts)
        # The merge of each pair (a symbol and the next in its piece), else none.
        merges = numpy.full(symbols.size, none, dtype=numpy.int64)
        if symbols.size > 1:
            merges[:-1] = merges_of(symbols[:-1], symbols[1:])
        merges[ends - 1] = none
        done_pieces, done_symbols, done_counts = [], [], []
        while pieces.size:
            size = symbols.size
            starts = ends - counts
            if pieces.size <= _MERGED_TOGETHER // 2:
                # The last few pieces (the longest) one by one: numpy's steps would cost more.
                bounds = _starts_of(counts).tolist()
                every = symbols.tolist()
                lists = [self._merged(every[start:end]) for start, end in zip(bounds, bounds[1:])]
                done_pieces.append(pieces)
                done_counts.append(numpy.fromiter(map(len, lists), dtype=numpy.int64, count=len(lists)))
                done_symbols.append(numpy.fromiter(itertools.chain.from_iterable(lists), dtype=numpy.int64, count=int(done_counts[-1].sum())))
                break
            # Each piece's best pair: the lowest merge, the leftmost of equal ones.
            best = numpy.minimum.reduceat(merges * size + numpy.arange(size, dtype=numpy.int64), starts)
            going = best < none * size
            if not going.all():
                finished = ~going
                done_pieces.append(pieces[finished])
                done_symbols.append(symbols[_repeated(finished, counts)])
                done_counts.append(counts[finished])
                if not going.any():
                    break
            at = best[going] % size
            first, end = starts[going], ends[going]
            symbols[at] = merges[at] % stride
            # The merged symbol's pairs with the symbols on either side of it
            # (the one after it goes), looked up together.
            before, after = at[at > first] - 1, at[at + 2 < end]
            merges[at] = none
            lefts = numpy.concatenate((before, after))
            merges[lefts] = merges_of(symbols[lefts], symbols[numpy.concatenate((before + 1, after + 2))])
            kept = _repeated(going, counts)
            kept[at + 1] = False
            symbols, merges = symbols[kept], merges[kept]
            pieces, counts = pieces[going], counts[going] - 1
            ends = numpy.cumsum(counts)
        order = numpy.concatenate(done_pieces) if done_pieces else pieces
        out_counts = numpy.zeros(count, dtype=numpy.int64)
        out_counts[order] = numpy.concatenate(done_counts) if done_counts else counts
        # Each piece's ids, in the order of the pieces.
        places = numpy.argsort(_repeated(order, out_counts[order]), kind="stable")
        out = numpy.concatenate(done_symbols) if done_symbols else symbols
        return out[places], out_counts

    def _symbols(self, word: str) -> list[int]:
        """A word's characters as ids: each its own token, else its UTF-8 bytes'
        tokens (byte fallback), else the unknown token (runs of unknown
        characters as one with ``fuse_unk``; a pending one is written after the
        byte tokens that follow it, as the library does), else nothing."""
        vocab = self._vocab
        symbols: list[int] = []
        unknown = 0  # unknown tokens pending
        for character in word:
            token_id = vocab.get(character)
            if token_id is not None:
                if unknown:
                    symbols.append(self._unk_id)  # type: ignore[arg-type]
                    unknown = 0
                symbols.append(token_id)
                continue
            if self._byte_ids is not None:
                codes = self._symbols_of.get(character)
                if codes is None:
                    found = [self._byte_ids[byte] for byte in character.encode("utf-8")]
                    codes = [] if None in found else found  # type: ignore[assignment]
                    self._symbols_of[character] = codes
                if codes:
                    symbols += codes
                    continue
            if self._unk_id is not None:
                if unknown and not self._fuse_unk:
                    symbols.append(self._unk_id)
                unknown = 1
        if unknown:
            symbols.append(self._unk_id)  # type: ignore[arg-type]
        return symbols

    def _merged(self, symbols: list[int]) -> list[int]:
        """``symbols`` merged pair by pair, the pair of the lowest rank first and
        the leftmost of equal ones, as the library's queue of merges does."""
        if len(symbols) < 2:
            return symbols
        ranks, stride, none = self._ranks, self._stride, _NO_MERGE
        ids = list(symbols)
        if len(ids) <= _FEW_SYMBOLS:
            # Few symbols: the best pair found afresh after each merge (no queue).
            pairs = [ranks.get(left * stride + right, none) for left, right in zip(ids, ids[1:])]
            while pairs:
                best = min(pairs)
                if best == none:
                    break
                at = pairs.index(best)  # the leftmost
                merged = best % stride
                ids[at : at + 2] = [merged]
                del pairs[at]
                if at < len(pairs):
                    pairs[at] = ranks.get(merged * stride + ids[at + 1], none)
                if at > 0:
                    pairs[at - 1] = ranks.get(ids[at - 1] * stride + merged, none)
            return ids
        count = len(ids)
        following = list(range(1, count + 1))
        following[-1] = -1
        preceding = list(range(-1, count - 1))
        alive = [True] * count
        queue = []
        for at in range(count - 1):
            merge = ranks.get(ids[at] * stride + ids[at + 1])
            if merge is not None:
                queue.append((merge, at))
        heapq.heapify(queue)
        while queue:
            merge, at = heapq.heappop(queue)
            if not alive[at]:
                continue
            right = following[at]
            if right < 0 or ranks.get(ids[at] * stride + ids[right]) != merge:
                continue  # this pair has changed since it was queued
            ids[at] = merged = merge % stride
            alive[right] = False
            after = following[right]
            following[at] = after
            if after >= 0:
                preceding[after] = at
                merge = ranks.get(merged * stride + ids[after])
                if merge is not None:
                    heapq.heappush(queue, (merge, at))
            before = preceding[at]
            if before >= 0:
                merge = ranks.get(ids[before] * stride + merged)
                if merge is not None:
                    heapq.heappush(queue, (merge, before))
        return [token_id for token_id, kept in zip(ids, alive) if kept]


def _cutting(
    lefts: list[str], rights: list[str], unmade: list[str], byte_ids: list[int | None] | None, unk_id: int | None, fuse_unk: bool
) -> list[str] | None:
    """The groups of characters that cut a text into pieces that the merges never join, so that merging
    each piece on its own gives the ids of merging the whole; None if none does.

    Two characters side by side are never joined when no token that a merge
    makes holds them side by side. The characters that merged tokens hold side
    by side fall into a few groups (Latin letters; Cyrillic ones; punctuation,
    "_" and "\\r"; ...): a piece is a run of "▁" and then a run of one group,
    or one character of no group (a digit, a CJK character, a line end). Each
    pair that a merged token holds is checked to stay within one piece.

    That holds for characters that are tokens; one that is not becomes its
    bytes' tokens, which must then merge with nothing, or the unknown token,
    which must then not be fused with the unknown character after it, nor be
    written after the byte tokens that follow it; and with no unknown token, it
    is left out, and the characters on either side of it may merge."""
    if not (_BYTE_TOKENS.isdisjoint(lefts) and _BYTE_TOKENS.isdisjoint(rights)):
        return None
    if not ((byte_ids is not None and None not in byte_ids) or (byte_ids is None and unk_id is not None and not fuse_unk)):
        return None
    # The pairs of characters side by side in merged tokens: where each merge
    # joins its two tokens, and within those of them that no merge makes.
    pairs = set(map(operator.add, map(operator.itemgetter(-1), lefts), map(operator.itemgetter(0), rights)))
    for token in unmade:
        pairs.update(token[at : at + 2] for at in range(len(token) - 1))
    group: dict[str, str] = {}

    def root(character: str) -> str:
        while group.setdefault(character, character) != character:
            group[character] = group[group[character]]
            character = group[character]
        return character

    for first, second in pairs:
        if SPACE_MARK not in (first, second):
            group[root(first)] = root(second)
    members: dict[str, list[str]] = {}
    for character in list(group):
        members.setdefault(root(character), []).append(character)
    # The largest groups first, alike ones in the order of their characters: the
    # same pattern in every process (the groups are disjoint, so their order
    # changes no piece, but the tables file keeps the pattern's text).
    groups = sorted((sorted(chars) for chars in members.values()), key=lambda chars: (-len(chars), chars))
    found = ["".join(chars) for chars in groups]
    if any(len(_pattern(found).findall(pair)) != 1 for pair in pairs):
        return None  # a merged token holds "▁" after another character
    return found


def _pattern(groups: list[str]) -> re.Pattern[str]:
    """What finds the pieces of a text cut by ``groups`` (see _cutting): a run
    of "▁", then a run of one group or one character of none."""
    runs = ["[" + "".join(map(re.escape, chars)) + "]+" for chars in groups]
    return re.compile(f"{SPACE_MARK}*(?:{'|'.join(runs + ['.'])})", re.DOTALL)


def tables_path(tokenizer: Path) -> Path:
    """The tables file of a ``tokenizer.json`` (see write_tables)."""
    return tokenizer.with_name(tokenizer.stem + ".tables.npz")


def tables_of(value: Any, source: bytes) -> dict[str, numpy.ndarray]:
    """The tables of a ``tokenizer.json`` (its bytes ``source``, its value
    ``value``): each merge's left, right and made token ids (the made ones as
    steps from the one before, which compress to nearly nothing), how texts are
    cut, and the file's SHA-256. Numpy arrays only, read back without
    unpickling anything."""
    made = BytePairTokenizer.from_json(value)
    vocab = value["model"]["vocab"]
    lefts, rights = _merges(value["model"].get("merges", []))
    ids = [numpy.fromiter(map(vocab.__getitem__, tokens), dtype=numpy.int64, count=len(lefts)) for tokens in (lefts, rights, list(map(operator.add, lefts, rights)))]
    meta = {"source_sha256": hashlib.sha256(source).hexdigest(), "groups": made._groups}
    return {
        "meta": numpy.array(orjson.dumps(meta).decode("utf-8")),
        "left": ids[0].astype(numpy.int32),
        "right": ids[1].astype(numpy.int32),
        "made_steps": numpy.diff(ids[2], prepend=0).astype(numpy.int32),
    }


def write_tables(tokenizer: Path) -> Path:
    """Write the tables file of ``tokenizer`` (see tables_of); its path."""
    source = tokenizer.read_bytes()
    target = tables_path(tokenizer)
    with open(target, "wb") as out:
        numpy.savez_compressed(out, **tables_of(json.loads(source.decode("utf-8")), source))
    return target


def _tables_of(tokenizer: Path, source: bytes) -> dict[str, Any] | None:
    """The arrays of the tables file beside ``tokenizer`` (its bytes are
    ``source``), when there is one made from these very bytes; None otherwise
    (no tables file, a stale or damaged one: the file itself is read)."""
    tables = tables_path(tokenizer)
    if not tables.is_file():
        return None
    try:
        with numpy.load(tables, allow_pickle=False) as arrays:
            read = {name: arrays[name] for name in ("meta", "left", "right", "made_steps")}
        read["meta"] = orjson.loads(str(read["meta"][()]))
    except (OSError, ValueError, KeyError, TypeError, orjson.JSONDecodeError):
        return None
    return read if read["meta"].get("source_sha256") == hashlib.sha256(source).hexdigest() else None


def _from_arrays(tables: dict[str, Any], stride: int) -> tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray, list[str] | None]:
    """Each merge's left, right and made ids, and the cutting of a tokenizer,
    from its tables (see tables_of): as BytePairTokenizer.__init__ finds them
    from the merges."""
    left, right, steps = (numpy.asarray(tables[name], dtype=numpy.int64) for name in ("left", "right", "made_steps"))
    if not (len(left) == len(right) == len(steps)) or (len(left) and (min(left.min(), right.min()) < 0 or max(left.max(), right.max()) >= stride)):
        raise ValueError("its tables are not of its vocabulary")
    made = numpy.cumsum(steps)
    if len(made) and (made.min() < 0 or made.max() >= stride):
        raise ValueError("its tables are not of its vocabulary")
    groups = tables["meta"]["groups"]
    if groups is not None and not (isinstance(groups, list) and all(isinstance(group, str) for group in groups)):
        raise ValueError("its tables' groups are not strings")
    return left, right, made, groups


def _starts_of(lengths: numpy.ndarray) -> numpy.ndarray:
    """Where each of runs of ``lengths`` laid end to end starts, then the end of the last."""
    starts = numpy.zeros(len(lengths) + 1, dtype=numpy.int64)
    numpy.cumsum(lengths, out=starts[1:])
    return starts


def _spans(firsts: numpy.ndarray, lengths: numpy.ndarray) -> numpy.ndarray:
    """The places of runs, each ``lengths[n]`` long from ``firsts[n]``, one after another."""
    starts = _starts_of(lengths)
    return _repeated(firsts - starts[:-1], lengths) + numpy.arange(starts[-1], dtype=numpy.int64)


def _repeated(values: numpy.ndarray, counts: numpy.ndarray) -> numpy.ndarray:
    """``numpy.repeat(values, counts)`` (integers or booleans), as the running
    sum of the steps between runs: numpy.repeat holds the interpreter's lock
    all along, where a running sum lets other threads run."""
    runs = numpy.flatnonzero(counts)
    starts = _starts_of(counts)
    steps = numpy.zeros(int(starts[-1]), dtype=numpy.int64)
    steps[starts[runs]] = numpy.diff(values[runs].astype(numpy.int64), prepend=0)
    repeated = numpy.cumsum(steps)
    return repeated.astype(bool) if values.dtype == bool else repeated


def _joined(flat: numpy.ndarray, starts: numpy.ndarray, refs: numpy.ndarray, counts: numpy.ndarray) -> tuple[numpy.ndarray, numpy.ndarray]:
    """Texts made of rows (row ``n``: ``flat[starts[n]:starts[n + 1]]``): the
    rows ``refs``, ``counts[n]`` of them for text ``n``, one after another.
    The texts' ids in one array, and where each text starts (see encode_arrays)."""
    used = (starts[1:] - starts[:-1])[refs]
    ends = _starts_of(used)
    return flat[_spans(starts[:-1][refs], used)], ends[_starts_of(counts)]


def _with_rows(flat: numpy.ndarray, starts: numpy.ndarray, ids: list[int]) -> tuple[numpy.ndarray, numpy.ndarray]:
    """Rows (see _joined) and, after them, a row of one id for each of ``ids``."""
    added = numpy.asarray(ids, dtype=numpy.int64)
    return numpy.concatenate((flat, added)), numpy.concatenate((starts, starts[-1] + numpy.arange(1, added.size + 1, dtype=numpy.int64)))


def _rows_past(rows: list[int], count: int) -> numpy.ndarray:
    """``rows`` with each -1 - n (the n-th row added by _with_rows) made ``count`` + n."""
    refs = numpy.asarray(rows, dtype=numpy.int64)
    refs[refs < 0] = count - 1 - refs[refs < 0]
    return refs


def _hashes(codes: numpy.ndarray, firsts: numpy.ndarray, lengths: numpy.ndarray) -> numpy.ndarray:
    """A 64-bit hash of each run of ``codes`` (``lengths[n]`` from ``firsts[n]``):
    the sum of its code points times the powers of an odd number, from the
    first (one) on, taken from sums over the whole array (so each code point
    is weighed once) and brought back to the run's first place by the powers
    of the number's inverse; and its length. Everything modulo 2**64, as
    numpy's unsigned integers wrap."""
    # (Two arrays of the size of ``codes`` at a time, each let go once used.)
    weighed = _powers(_HASH_BASE, codes.size)
    numpy.multiply(weighed, codes, out=weighed)
    sums = numpy.zeros(codes.size + 1, dtype=numpy.uint64)
    numpy.cumsum(weighed, out=sums[1:])
    del weighed
    runs = sums[firsts + lengths] - sums[firsts]
    del sums
    return runs * _powers(_HASH_INVERSE, codes.size)[firsts] + lengths.astype(numpy.uint64) * _HASH_LENGTH


def _powers(base: numpy.uint64, count: int) -> numpy.ndarray:
    """1, base, base**2, ... (``count`` of them), modulo 2**64."""
    powers = numpy.full(count, base, dtype=numpy.uint64)
    powers[:1] = 1
    return numpy.cumprod(powers, out=powers)


class _Table:
    """Numbers (0 or more) by distinct 64-bit keys, looked up many at a time in
    numpy: open addressing, each key's slot tried and then the next, the table
    at most a ``load``-th full (a key not held is looked for until a free
    slot: the emptier the table, the sooner)."""

    def __init__(self, size: int = 1 << 12, load: int = 2) -> None:
        self.keys = numpy.zeros(size, dtype=numpy.uint64)
        self.numbers = numpy.full(size, -1, dtype=numpy.int64)
        self.count = 0
        self.load = load

    def found(self, keys: numpy.ndarray) -> numpy.ndarray:
        """The number held under each of ``keys``, else -1."""
        table_keys, table_numbers, mask = self.keys, self.numbers, self.keys.size - 1
        found = numpy.full(keys.size, -1, dtype=numpy.int64)
        looking = numpy.arange(keys.size)
        at = self._slots(keys)
        while looking.size:
            numbers = table_numbers[at]
            taken = numbers >= 0
            hit = taken & (table_keys[at] == keys[looking])
            found[looking[hit]] = numbers[hit]
            going = taken & ~hit
            looking, at = looking[going], (at[going] + 1) & mask
        return found

    def put(self, keys: numpy.ndarray, numbers: numpy.ndarray) -> None:
        """Hold ``numbers`` under ``keys`` (distinct, none held yet)."""
        count = self.count + keys.size
        if self.load * count > self.keys.size:
            size = self.keys.size
            while self.load * count > size:
                size *= 2
            held = numpy.flatnonzero(self.numbers >= 0)
            old_keys, old_numbers = self.keys[held], self.numbers[held]
            self.keys = numpy.zeros(size, dtype=numpy.uint64)
            self.numbers = numpy.full(size, -1, dtype=numpy.int64)
            self._placed(old_keys, old_numbers)
        self._placed(keys, numbers)
        self.count = count

    def _placed(self, keys: numpy.ndarray, numbers: numpy.ndarray) -> None:
        """Each key in the first free slot from its own on; of those that reach
        a free slot together, one takes it and the others go on."""
        mask = self.keys.size - 1
        waiting = numpy.arange(keys.size)
        at = self._slots(keys)
        while waiting.size:
            free = numpy.flatnonzero(self.numbers[at] < 0)
            slots, first = numpy.unique(at[free], return_index=True)
            placed = free[first]
            self.keys[slots] = keys[waiting[placed]]
            self.numbers[slots] = numbers[waiting[placed]]
            going = numpy.ones(waiting.size, dtype=bool)
            going[placed] = False
            waiting, at = waiting[going], (at[going] + 1) & mask

    def _slots(self, keys: numpy.ndarray) -> numpy.ndarray:
        """Each key's own slot: the top bits of the key times an odd number (the
        low bits of a sum of powers, see _hashes, are its weakest)."""
        bits = self.keys.size.bit_length() - 1
        return ((keys * _HASH_SPREAD) >> numpy.uint64(64 - bits)).astype(numpy.int64)


def _same_codes(
    codes: numpy.ndarray, firsts: numpy.ndarray, other_codes: numpy.ndarray, other_firsts: numpy.ndarray, lengths: numpy.ndarray, other_lengths: numpy.ndarray
) -> numpy.ndarray:
    """Whether each run of ``codes`` (``lengths[n]`` from ``firsts[n]``) is the
    same as its run of ``other_codes``."""
    same = lengths == other_lengths
    compared = numpy.flatnonzero(same)
    used = lengths[compared]
    equal = codes[_spans(firsts[compared], used)] == other_codes[_spans(other_firsts[compared], used)]
    if not equal.all():
        owners = _repeated(compared, used)
        same[owners[~equal]] = False
    return same


def _grown(array: numpy.ndarray, size: int) -> numpy.ndarray:
    """``array`` in a larger one of at least ``size`` places (twice its size at least)."""
    grown = numpy.empty(max(size, 2 * array.size, 1024), dtype=array.dtype)
    grown[: array.size] = array
    return grown


def _merges(value: Any) -> tuple[list[str], list[str]]:
    """The left and the right tokens of the merges, in rank order, as the file
    writes them: "left right" strings, or [left, right] pairs."""
    if not isinstance(value, list):
        raise ValueError("its merges are not a list")
    if not value:
        return [], []
    if all(type(merge) is str for merge in value) and set(map(str.count, value, itertools.repeat(" "))) <= {1}:
        tokens = " ".join(value).split(" ")  # each merge holds one space
        return tokens[0::2], tokens[1::2]
    for merge in value:
        if not (isinstance(merge, str) and merge.count(" ") == 1) and not (
            isinstance(merge, list) and len(merge) == 2 and all(isinstance(token, str) for token in merge)
        ):
            raise ValueError(f"its merge {merge!r} is not a pair of tokens")
    pairs = [merge.split(" ") if isinstance(merge, str) else merge for merge in value]
    return [left for left, _ in pairs], [right for _, right in pairs]


def _normalizers(value: Any) -> list[Callable[[str], str]]:
    if value is None:
        return []
    if not isinstance(value, dict):
        raise ValueError("its normalizer is not a JSON object")
    kind = value.get("type")
    if kind == "Sequence":
        steps = value.get("normalizers")
        if not isinstance(steps, list):
            raise ValueError("its Sequence normalizer has no list of normalizers")
        return [step for inner in steps for step in _normalizers(inner)]
    if kind == "Prepend" and isinstance(value.get("prepend"), str):
        prefix = value["prepend"]
        return [lambda text: prefix + text if text else text]
    if kind == "Replace":
        pattern, content = value.get("pattern"), value.get("content")
        if not isinstance(pattern, dict) or "String" not in pattern:
            raise Unsupported("its Replace normalizer replaces a regular expression")
        old = pattern["String"]
        if not isinstance(old, str) or not old or not isinstance(content, str):
            raise ValueError("its Replace normalizer is not a string and its replacement")
        return [lambda text: text.replace(old, content)]
    raise Unsupported(f"it has a {kind} normalizer")


def _added_tokens(value: Any) -> dict[str, int]:
    if not isinstance(value, list):
        raise ValueError("its added tokens are not a list")
    added = {}
    for token in value:
        if not isinstance(token, dict) or not isinstance(token.get("content"), str) or not isinstance(token.get("id"), int):
            raise ValueError("an added token of it has no content and id")
        if token.get("normalized"):
            raise Unsupported(f"its added token {token['content']!r} is matched after normalizing")
        flags = [flag for flag in _ADDED_TOKEN_FLAGS if token.get(flag)]
        if flags:
            raise Unsupported(f"its added token {token['content']!r} is {' and '.join(flags)}")
        if token["content"]:
            added[token["content"]] = token["id"]
    return added


if __name__ == "__main__":
    for argument in sys.argv[1:]:
        print(f"wrote {write_tables(Path(argument))}")
