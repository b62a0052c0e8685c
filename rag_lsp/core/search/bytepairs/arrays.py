"""Runs laid end to end in one numpy array, as a batch's texts, pieces and ids
are: where each run starts, the places of some runs, a value repeated along
runs, texts put together from rows, runs compared, arrays grown.

The tokenizer encodes a batch in numpy so that the work runs without the
interpreter's lock, beside the thread that pools the vectors (see the
package's docstring); these helpers keep to that (a running sum where
``numpy.repeat`` would hold the lock).
"""

from __future__ import annotations

import numpy


def starts_of(lengths: numpy.ndarray) -> numpy.ndarray:
    """Where each of runs of ``lengths`` laid end to end starts, then the end of the last."""
    starts = numpy.zeros(len(lengths) + 1, dtype=numpy.int64)
    numpy.cumsum(lengths, out=starts[1:])
    return starts


def spans(firsts: numpy.ndarray, lengths: numpy.ndarray) -> numpy.ndarray:
    """The places of runs, each ``lengths[n]`` long from ``firsts[n]``, one after another."""
    starts = starts_of(lengths)
    return repeated(firsts - starts[:-1], lengths) + numpy.arange(starts[-1], dtype=numpy.int64)


def repeated(values: numpy.ndarray, counts: numpy.ndarray) -> numpy.ndarray:
    """``numpy.repeat(values, counts)`` (integers or booleans), as the running
    sum of the steps between runs: numpy.repeat holds the interpreter's lock
    all along, where a running sum lets other threads run."""
    runs = numpy.flatnonzero(counts)
    starts = starts_of(counts)
    steps = numpy.zeros(int(starts[-1]), dtype=numpy.int64)
    steps[starts[runs]] = numpy.diff(values[runs].astype(numpy.int64), prepend=0)
    repeated = numpy.cumsum(steps)
    return repeated.astype(bool) if values.dtype == bool else repeated


def joined(flat: numpy.ndarray, starts: numpy.ndarray, refs: numpy.ndarray, counts: numpy.ndarray) -> tuple[numpy.ndarray, numpy.ndarray]:
    """Texts made of rows (row ``n``: ``flat[starts[n]:starts[n + 1]]``): the
    rows ``refs``, ``counts[n]`` of them for text ``n``, one after another.
    The texts' ids in one array, and where each text starts (see
    BytePairTokenizer.encode_arrays)."""
    used = (starts[1:] - starts[:-1])[refs]
    ends = starts_of(used)
    return flat[spans(starts[:-1][refs], used)], ends[starts_of(counts)]


def with_rows(flat: numpy.ndarray, starts: numpy.ndarray, ids: list[int]) -> tuple[numpy.ndarray, numpy.ndarray]:
    """Rows (see joined) and, after them, a row of one id for each of ``ids``."""
    added = numpy.asarray(ids, dtype=numpy.int64)
    return numpy.concatenate((flat, added)), numpy.concatenate((starts, starts[-1] + numpy.arange(1, added.size + 1, dtype=numpy.int64)))


def rows_past(rows: list[int], count: int) -> numpy.ndarray:
    """``rows`` with each -1 - n (the n-th row added by with_rows) made ``count`` + n."""
    refs = numpy.asarray(rows, dtype=numpy.int64)
    refs[refs < 0] = count - 1 - refs[refs < 0]
    return refs


def same_codes(
    codes: numpy.ndarray, firsts: numpy.ndarray, other_codes: numpy.ndarray, other_firsts: numpy.ndarray, lengths: numpy.ndarray, other_lengths: numpy.ndarray
) -> numpy.ndarray:
    """Whether each run of ``codes`` (``lengths[n]`` from ``firsts[n]``) is the
    same as its run of ``other_codes``."""
    same = lengths == other_lengths
    compared = numpy.flatnonzero(same)
    used = lengths[compared]
    equal = codes[spans(firsts[compared], used)] == other_codes[spans(other_firsts[compared], used)]
    if not equal.all():
        owners = repeated(compared, used)
        same[owners[~equal]] = False
    return same


def grown(array: numpy.ndarray, size: int) -> numpy.ndarray:
    """``array`` in a larger one of at least ``size`` places (twice its size at least)."""
    grown = numpy.empty(max(size, 2 * array.size, 1024), dtype=array.dtype)
    grown[: array.size] = array
    return grown
