"""The byte-pair tokenizer: texts to the ids that the ``tokenizers`` package
gives them, as rag-lsp calls it (``encode(text, add_special_tokens=False)``).

A text's added tokens are found first and each stretch of text between them is
normalized and encoded on its own. A stretch is cut into pieces that no merge
joins (see cutting), and each piece's ids are remembered (see memo): a batch
of texts (an index's chunks) is cut and looked up in numpy, and only its new
pieces are merged (see symbols, merging); a few characters (a query's) are cut
by a regular expression and looked up in a dictionary, where numpy's calls
would cost more than the work. A tokenizer whose merges allow no cutting
merges each stretch whole.
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy
import orjson

from .arrays import joined, rows_past, starts_of, with_rows
from .cutting import group_table, pattern, piece_firsts
from .memo import Memo
from .merging import Merges
from .reading import from_merges, from_tables, settings_of, tables_beside
from .symbols import Symbols

# At most this many characters (a query's) are cut by the pattern, each piece
# looked up in a dictionary of its own of at most _FEW_KEPT pieces (see
# BytePairTokenizer._cut_few): numpy's calls cost a tenth of a millisecond.
_FEW_CHARACTERS = 1024
_FEW_KEPT = 1 << 14
# Characters cut at once (see BytePairTokenizer._cut_in_parts): about 20 MB of arrays.
_CUT_AT_ONCE = 1 << 18


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
        writing.write_tables), which stand for ``merges``."""
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
        self._ignore_merges = ignore_merges
        self._symbols = Symbols(vocab, vocab[unk_token] if unk_token is not None else None, fuse_unk, byte_fallback)
        stride = max(vocab.values(), default=0) + 1
        if tables is not None:
            left, right, made, groups = from_tables(tables, stride)
        else:
            left, right, made, groups = from_merges(vocab, merges, self._symbols.byte_ids, self._symbols.unk_id, fuse_unk)
        self._merges = Merges(left, right, made, stride)
        self._few: dict[str, list[int]] = {}  # see _cut_few
        # How texts are cut (see cutting): the pattern that finds the pieces, and
        # each character's group by its code point (0: none), for numpy (see _cut).
        self._groups = groups
        self._pieces = pattern(groups) if groups is not None else None
        self._group_of = group_table(groups) if groups is not None else None
        # Whether a line end is never joined with what follows it in a piece: it
        # is in no group (so it ends a run) and not "▁" (see _cut_in_parts).
        self._line_breaks = groups is not None and not any("\n" in group for group in groups)
        # The pieces seen (see _cut), used by one batch at a time: threads encoding with
        # one tokenizer take turns.
        self._memo = Memo(stride)
        self._memo_lock = threading.Lock()

    @classmethod
    def from_file(cls, path: Path) -> BytePairTokenizer:
        """The tokenizer of a ``tokenizer.json``: OSError if it cannot be read,
        ValueError if it is not a tokenizer, Unsupported if it is one of a kind
        this package does not read. Its tables are read from the tables file
        beside it when that was made from this very file (see reading.tables_path)."""
        data = Path(path).read_bytes()
        tables = tables_beside(Path(path), data)
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
        its tables file, which stand for its merges (see writing.write_tables).
        ValueError if it is not a tokenizer, Unsupported if it is one of a kind
        this package does not read."""
        return cls(**settings_of(value, tables))

    def token_to_id(self, token: str) -> int | None:
        found = self._added_ids.get(token)
        return found if found is not None else self._vocab.get(token)

    def get_vocab(self) -> dict[str, int]:
        return {**self._vocab, **self._added_ids}

    @property
    def cuts(self) -> bool:
        """Whether a text is cut into pieces merged one by one (see cutting)."""
        return self._pieces is not None

    @property
    def groups(self) -> list[str] | None:
        """The groups of characters that cut a text (see cutting.cutting); None where none does."""
        return self._groups

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
        flat, starts = with_rows(*self._stretches(stretches), added_ids)
        return joined(flat, starts, rows_past(rows, len(stretches)), numpy.asarray(counts, dtype=numpy.int64))

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
                flat, starts = self._memo.whole(stretches, self._merged_pieces)
            elif sum(map(len, stretches)) <= _FEW_CHARACTERS:
                flat, starts = self._cut_few(stretches)
            else:
                flat, starts = self._cut_in_parts(stretches)
        if whole:
            # Those stretches (encoded as empty ones) are rows of one id each, after the others.
            rows = list(range(len(stretches)))
            for number, at in enumerate(whole):
                rows[at] = -1 - number
            flat, starts = with_rows(flat, starts, list(whole.values()))
            flat, starts = joined(flat, starts, rows_past(rows, len(stretches)), numpy.ones(len(rows), dtype=numpy.int64))
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
                    found = self._merges.merged(self._symbols.of_word(piece))
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
        starts = starts_of(numpy.concatenate([numpy.diff(part_starts) for _, part_starts in rows]))
        return joined(flat, starts, numpy.arange(len(parts), dtype=numpy.int64), numpy.asarray(counts, dtype=numpy.int64))

    def _cut(self, texts: list[str]) -> tuple[numpy.ndarray, numpy.ndarray]:
        """The ids of normalized ``texts``, cut into pieces (see cutting), in numpy.

        The texts' characters are one array of code points, cut where a piece
        starts (see cutting.piece_firsts). Each piece is found among the pieces
        seen, by its hash and then its code points (so a piece is never taken
        for another); only the pieces never seen are merged (see
        memo.Memo.numbers). Most of it is numpy's work, done without the
        interpreter's lock, beside the caller's other threads."""
        counts = numpy.fromiter(map(len, texts), dtype=numpy.int64, count=len(texts))
        text_starts = starts_of(counts)
        joined_texts = "".join(texts)
        codes = numpy.frombuffer(joined_texts.encode("utf-32-le"), dtype=numpy.uint32)
        if codes.size == 0:
            return numpy.zeros(0, dtype=numpy.int64), numpy.zeros(len(texts) + 1, dtype=numpy.int64)
        assert self._group_of is not None
        firsts = piece_firsts(codes, self._group_of, text_starts[:-1][counts > 0])
        lengths = numpy.diff(firsts, append=codes.size)
        numbers = self._memo.numbers(joined_texts, codes, firsts, lengths, self._merged_pieces)
        flat, token_counts = self._memo.ids(numbers)
        return flat, starts_of(token_counts)[numpy.searchsorted(firsts, text_starts)]

    def _merged_pieces(self, pieces: list[str]) -> tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]:
        """``pieces`` (normalized text none of whose merges crosses out of it)
        merged: which of them, in the order their ids come; the ids laid end to
        end; their count per piece. Most are short: they are merged together, a
        merge of each piece per step, in numpy (see merging)."""
        order: list[numpy.ndarray] = []
        tokens: list[numpy.ndarray] = []
        counts: list[numpy.ndarray] = []
        for chosen, symbols, symbol_counts in self._symbols.of_pieces(pieces):
            within, ids, id_counts = self._merges.merged_pieces(symbols, symbol_counts)
            order.append(chosen[within])
            tokens.append(ids)
            counts.append(id_counts)
        return numpy.concatenate(order), numpy.concatenate(tokens), numpy.concatenate(counts)

