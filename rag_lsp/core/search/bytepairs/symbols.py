"""The symbols merging starts from: a piece's characters as token ids, each
its own token, else its UTF-8 bytes' tokens (byte fallback), else the unknown
token, else nothing, as the ``tokenizers`` package writes them.

Most pieces are all characters that are tokens: a batch of them is looked up
in numpy at once (``Symbols.of_pieces``); only the others are read character
by character (``Symbols.of_word``).
"""

from __future__ import annotations

import itertools

import numpy

from .arrays import repeated, starts_of


class Symbols:
    """Characters to the ids that merging starts from, for one vocabulary."""

    def __init__(self, vocab: dict[str, int], unk_id: int | None, fuse_unk: bool, byte_fallback: bool) -> None:
        self._vocab = vocab
        self.unk_id = unk_id
        self.fuse_unk = fuse_unk
        # Each byte's token (None where the vocabulary lacks it), with byte fallback.
        self.byte_ids: list[int | None] | None = None
        if byte_fallback:
            self.byte_ids = [vocab.get(f"<0x{byte:02X}>") for byte in range(256)]
        self._of_character: dict[str, list[int]] = {}
        self._char_ids: numpy.ndarray | None = None  # see of_pieces

    def of_word(self, word: str) -> list[int]:
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
                    symbols.append(self.unk_id)  # type: ignore[arg-type]
                    unknown = 0
                symbols.append(token_id)
                continue
            if self.byte_ids is not None:
                codes = self._of_character.get(character)
                if codes is None:
                    found = [self.byte_ids[byte] for byte in character.encode("utf-8")]
                    codes = [] if None in found else found  # type: ignore[assignment]
                    self._of_character[character] = codes
                if codes:
                    symbols += codes
                    continue
            if self.unk_id is not None:
                if unknown and not self.fuse_unk:
                    symbols.append(self.unk_id)
                unknown = 1
        if unknown:
            symbols.append(self.unk_id)  # type: ignore[arg-type]
        return symbols

    def of_pieces(self, pieces: list[str]) -> list[tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]]:
        """The symbols of ``pieces``, in groups: which pieces, their symbols
        laid end to end, and how many each has. A piece whose every character
        is a token is those tokens, found for all of them at once; the others'
        symbols are found character by character (see of_word)."""
        lengths = numpy.fromiter(map(len, pieces), dtype=numpy.int64, count=len(pieces))
        if self._char_ids is None:
            # The token of each character that is one, by its code point (-1: none).
            singles = {ord(token): token_id for token, token_id in self._vocab.items() if len(token) == 1}
            self._char_ids = numpy.full(max(singles, default=0) + 2, -1, dtype=numpy.int64)
            self._char_ids[numpy.fromiter(singles, dtype=numpy.int64, count=len(singles))] = numpy.fromiter(singles.values(), dtype=numpy.int64, count=len(singles))
        points = numpy.frombuffer("".join(pieces).encode("utf-32-le"), dtype=numpy.uint32)
        codes = self._char_ids[numpy.minimum(points, self._char_ids.size - 1)]
        odd = numpy.zeros(len(pieces), dtype=bool)
        unknown = numpy.flatnonzero(codes < 0)
        if unknown.size:
            odd[numpy.searchsorted(starts_of(lengths), unknown, side="right") - 1] = True
        plain = numpy.flatnonzero(~odd)
        groups = [(plain, codes[repeated(~odd, lengths)], lengths[plain])]
        if unknown.size:
            chosen = numpy.flatnonzero(odd)
            lists = [self.of_word(pieces[at]) for at in chosen.tolist()]
            symbol_counts = numpy.fromiter(map(len, lists), dtype=numpy.int64, count=len(lists))
            groups.append((chosen, numpy.fromiter(itertools.chain.from_iterable(lists), dtype=numpy.int64, count=int(symbol_counts.sum())), symbol_counts))
        return groups
