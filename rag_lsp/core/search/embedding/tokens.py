"""Texts into token ids, as a static model calls its tokenizer.

:class:`TokenIds` is the tokenizer as the model calls it (rag-lsp's own, or one
of the ``tokenizers`` package); :class:`TokenLists` holds texts' ids in one array.
"""

from __future__ import annotations

import itertools
import json
import re
from typing import Any, Sequence

import numpy

from ..bytepairs import BytePairTokenizer

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
# Distinct lines joined into one text for the tokenizer (see TokenIds._by_lines).
_LINES_JOINED = 256


def starts_of(lengths: Any) -> numpy.ndarray:
    """The start of each of runs of ``lengths`` laid end to end in one array,
    then the end of the last."""
    starts = numpy.zeros(len(lengths) + 1, dtype=numpy.int64)
    numpy.cumsum(lengths, out=starts[1:])
    return starts


class TokenLists:
    """Texts' token ids in one array: text ``n``'s are ``lists[n]``, a slice of
    ``flat`` from ``starts[n]`` to ``starts[n + 1]``."""

    __slots__ = ("flat", "starts")

    def __init__(self, flat: numpy.ndarray, starts: numpy.ndarray) -> None:
        self.flat = flat
        self.starts = starts

    @classmethod
    def of(cls, lists: Sequence[Sequence[int]]) -> TokenLists:
        starts = starts_of(numpy.fromiter(map(len, lists), dtype=numpy.int64, count=len(lists)))
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
        starts = starts_of([array.size for array in arrays])
        return TokenLists(numpy.concatenate(arrays) if arrays else self.flat[:0], starts)


class TokenIds:
    """A tokenizer as the model calls it: texts in, each text's token ids out.

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

