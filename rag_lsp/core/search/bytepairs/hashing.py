"""Keys found many at a time in numpy: a 64-bit hash of each run of code
points of a batch (``hashes``), and a table of numbers by 64-bit keys
(``Table``), which holds the pieces a tokenizer has seen by their hashes (see
memo) and its merges by their pairs of ids (see merging).

A hash only says where to look: the memo compares a piece found by its hash
with the one stored, character by character, so two pieces that share a hash
are never taken for each other.
"""

from __future__ import annotations

import numpy

# Odd numbers, and the inverse of the base modulo 2**64.
_HASH_BASE = numpy.uint64(0x9E3779B97F4A7C15)
_HASH_INVERSE = numpy.uint64(pow(0x9E3779B97F4A7C15, -1, 1 << 64))
_HASH_LENGTH = numpy.uint64(0xC2B2AE3D27D4EB4F)
_HASH_SPREAD = numpy.uint64(0xFF51AFD7ED558CCD)


def hashes(codes: numpy.ndarray, firsts: numpy.ndarray, lengths: numpy.ndarray) -> numpy.ndarray:
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


class Table:
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
        low bits of a sum of powers, see hashes, are its weakest)."""
        bits = self.keys.size.bit_length() - 1
        return ((keys * _HASH_SPREAD) >> numpy.uint64(64 - bits)).astype(numpy.int64)
