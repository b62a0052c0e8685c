"""The pieces a tokenizer has seen and their ids, so that a piece seen before
costs a lookup: pieces of code and prose repeat (``self``, ``return``,
indentation, ``(``).

Each piece kept has a number: where its ids are stored and how many there
are, and its code points. The pieces of a batch are found by their hashes in a
table (see hashing) and then compared with the ones stored, character by
character, so that a piece is never taken for another; only the new ones are
merged. Pieces whose hash is another's, and the texts of a tokenizer that cuts
none, are found by their text. The memo is emptied when full.
"""

from __future__ import annotations

from typing import Callable

import numpy

from .arrays import grown, same_codes, spans, starts_of
from .hashing import Table, hashes

# Pieces remembered at most (their numbers, ids and code points: about 120
# bytes each), and the longest remembered (a longer one is a line of data, seen
# once); the memo is emptied when full, or once the ids it stores pass
# _MEMO_TOKENS (4 bytes each).
_MEMO_SIZE = 1 << 17
_MEMO_LONGEST = 256
_MEMO_TOKENS = 1 << 21

# Pieces merged: which of them, in the order their ids come; the ids laid end
# to end; their count per piece (see BytePairTokenizer._merged_pieces).
Merge = Callable[[list[str]], tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]]


class Memo:
    """Pieces seen, by number: their ids, their code points, and their numbers
    by their hashes (and by their text where that is how they are found)."""

    def __init__(self, stride: int) -> None:
        """``stride``: above every token id."""
        self._texts: dict[str, int] = {}
        self._firsts = numpy.zeros(0, dtype=numpy.int64)
        self._lengths = numpy.zeros(0, dtype=numpy.int64)
        self._code_firsts = numpy.zeros(0, dtype=numpy.int64)
        self._code_lengths = numpy.zeros(0, dtype=numpy.int64)
        self._tokens = numpy.zeros(0, dtype=numpy.int32 if stride < 1 << 31 else numpy.int64)
        self._codes = numpy.zeros(0, dtype=numpy.uint32)
        self.forget()

    def forget(self) -> None:
        """Empty the memo of pieces (it is full): their table, ids and code points."""
        self._texts.clear()
        self._seen = Table()
        self._kept = self._stored = self._codes_stored = 0

    def ids(self, numbers: numpy.ndarray) -> tuple[numpy.ndarray, numpy.ndarray]:
        """The ids of the pieces ``numbers`` laid end to end (int64), and their count per piece."""
        token_counts = self._lengths[numbers]
        return self._tokens[spans(self._firsts[numbers], token_counts)].astype(numpy.int64), token_counts

    def numbers(self, joined: str, codes: numpy.ndarray, firsts: numpy.ndarray, lengths: numpy.ndarray, merge: Merge) -> numpy.ndarray:
        """The number of each piece of ``joined`` (its code points ``codes``),
        ``lengths[n]`` characters from ``firsts[n]``: the pieces never seen
        are merged by ``merge`` and stored first."""
        found_hashes = hashes(codes, firsts, lengths)
        numbers = self._seen.found(found_hashes)
        # A hash found holds the piece looked up only if they have the same code
        # points: every character is compared with the one stored for its piece
        # (those of a piece not found, with any: their outcome is not read).
        known = numbers >= 0
        if self._codes_stored:
            held = numpy.maximum(numbers, 0)
            same = known & (self._code_lengths[held] == lengths)
            stored = numpy.take(self._codes, spans(self._code_firsts[held], lengths), mode="clip")
            same[numpy.searchsorted(firsts, numpy.flatnonzero(stored != codes), side="right") - 1] = False
            odd = [numpy.flatnonzero((numbers >= 0) & ~same)]
        else:
            odd = []
        unseen = numpy.flatnonzero(numbers < 0)
        if unseen.size:
            # Each new piece merged once: the first of its hash, which the others must equal.
            distinct, first_of, which = numpy.unique(found_hashes[unseen], return_index=True, return_inverse=True)
            if self._kept + distinct.size > _MEMO_SIZE or self._stored > _MEMO_TOKENS:
                self.forget()
                odd, unseen = [], numpy.arange(len(firsts))
                distinct, first_of, which = numpy.unique(found_hashes, return_index=True, return_inverse=True)
            new = unseen[first_of]
            alike = same_codes(codes, firsts[unseen], codes, firsts[new][which], lengths[unseen], lengths[new][which])
            odd.append(unseen[~alike])
            new_firsts, new_lengths = firsts[new], lengths[new]
            learned = self._learned([joined[first : first + length] for first, length in zip(new_firsts.tolist(), new_lengths.tolist())], merge)
            numbers[unseen] = learned[which.reshape(-1)]
            # A long piece (a line of data, seen once) is not remembered past this batch.
            kept = new_lengths <= _MEMO_LONGEST
            self._insert(distinct[kept], learned[kept], codes, new_firsts[kept], new_lengths[kept])
        odd_ones = numpy.concatenate(odd)
        if odd_ones.size:
            numbers[odd_ones] = self._odd([joined[first : first + length] for first, length in zip(firsts[odd_ones].tolist(), lengths[odd_ones].tolist())], merge)
        return numbers

    def whole(self, texts: list[str], merge: Merge) -> tuple[numpy.ndarray, numpy.ndarray]:
        """The ids of ``texts`` for a tokenizer that cuts no text (see
        cutting): each merged whole by ``merge``, remembered by its text; and
        where each text's ids start."""
        memo = self._texts
        numbers_of = {text: memo.get(text, -1) for text in texts}
        missing = [text for text, number in numbers_of.items() if number < 0]
        if missing:
            if len(memo) + len(missing) > _MEMO_SIZE or self._stored > _MEMO_TOKENS:
                self.forget()
                missing = list(numbers_of)
            for text, number in zip(missing, self._learned(missing, merge).tolist()):
                numbers_of[text] = number
                if len(text) <= _MEMO_LONGEST:
                    memo[text] = number
        numbers = numpy.array([numbers_of[text] for text in texts], dtype=numpy.int64)
        flat, token_counts = self.ids(numbers)
        return flat, starts_of(token_counts)

    def _odd(self, pieces: list[str], merge: Merge) -> numpy.ndarray:
        """The numbers of pieces whose hash is another piece's, looked up by their
        text (a chance of about one in 2**64 for two pieces)."""
        memo = self._texts
        missing = list(dict.fromkeys(piece for piece in pieces if piece not in memo))
        if missing:
            memo.update(zip(missing, self._learned(missing, merge).tolist()))
        return numpy.array([memo[piece] for piece in pieces], dtype=numpy.int64)

    def _learned(self, pieces: list[str], merge: Merge) -> numpy.ndarray:
        """Merge ``pieces`` and store their ids; the number of each."""
        order, tokens, counts = merge(pieces)
        numbers = numpy.empty(len(pieces), dtype=numpy.int64)
        numbers[order] = self._store(tokens, counts)
        return numbers

    def _insert(self, keys: numpy.ndarray, numbers: numpy.ndarray, codes: numpy.ndarray, firsts: numpy.ndarray, lengths: numpy.ndarray) -> None:
        """Hold pieces (of distinct hashes ``keys``, none held yet) in the table,
        and keep their code points (``lengths[n]`` of ``codes`` from ``firsts[n]``)."""
        self._seen.put(keys, numbers)
        begin, end = self._codes_stored, self._codes_stored + int(lengths.sum())
        if end > self._codes.size:
            self._codes = grown(self._codes, end)
        self._codes[begin:end] = codes[spans(firsts, lengths)]
        self._code_firsts[numbers] = begin + starts_of(lengths)[:-1]
        self._code_lengths[numbers] = lengths
        self._codes_stored = end

    def _store(self, tokens: numpy.ndarray, counts: numpy.ndarray) -> numpy.ndarray:
        """Store the ids of pieces (``counts[n]`` of ``tokens`` for the n-th); their numbers."""
        kept, stored = self._kept, self._stored
        rows, end = kept + counts.size, stored + tokens.size
        if rows > self._firsts.size:
            self._firsts, self._lengths = grown(self._firsts, rows), grown(self._lengths, rows)
            self._code_firsts, self._code_lengths = grown(self._code_firsts, rows), grown(self._code_lengths, rows)
        if end > self._tokens.size:
            self._tokens = grown(self._tokens, end)
        self._tokens[stored:end] = tokens
        self._firsts[kept:rows] = stored + starts_of(counts)[:-1]
        self._lengths[kept:rows] = counts
        self._code_lengths[kept:rows] = -1  # no code points kept (see _insert)
        self._kept, self._stored = rows, end
        return numpy.arange(kept, rows, dtype=numpy.int64)
