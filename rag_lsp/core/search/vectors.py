"""Chunk vectors kept as 8-bit codes, and their similarities to queries.

A semantic index holds one unit vector per chunk. As float32 numbers, 100,000
chunks of the packaged model's 256 dimensions would take 102 MB; each vector is
kept instead as small integers (int8 codes) and one scale, a quarter of that:
the vector is ``codes * scale``, to within half a step of its scale in each
dimension. Measured by ``benchmarks/chunking.py``, search by meaning finds the
same files for the paraphrased questions as with float32 vectors.

A query is coded the same way, so a similarity is an integer (the dot product of
two codes) times the two scales, and that integer is exact however it is summed:

* one query against every chunk is a scan of the codes by simsimd's int8
  kernels, in integer arithmetic (faster than float32's matrix-vector product);
* a block of queries (a run) is a float32 matrix product of the codes as floats,
  where every partial sum is an integer below 2**24 and so held exactly (the
  codes' range is chosen by the number of dimensions for that, see levels).

So a case gets the same scores, to the last bit, asked alone and in a run: sums
of float32 products in another order could differ in their last bit and swap
two chunks of nearly equal scores.
"""

from __future__ import annotations

import functools
import math
from typing import Sequence

import numpy

# Float32 holds every integer up to 2**24 exactly.
_EXACT = 1 << 24
# Rows of codes turned into floats at once when no simsimd scans them (a megabyte).
_SLAB_ROWS = 1024


def normalize_rows(vectors: numpy.ndarray) -> None:
    """Scale each row of ``vectors`` to length 1, in place (a row of zeros stays so)."""
    norms = numpy.linalg.norm(vectors, axis=1, keepdims=True)
    numpy.divide(vectors, norms, out=vectors, where=norms > 0)


def levels(dim: int) -> int:
    """The largest code: 127 (int8's range), less for more than 1,040 dimensions,
    so that a dot product of two codes and each of its partial sums stay below 2**24."""
    return max(1, min(127, math.isqrt((_EXACT - 1) // max(dim, 1))))


def quantize(vectors: numpy.ndarray, top: int) -> tuple[numpy.ndarray, numpy.ndarray]:
    """Each row as int8 codes in [-top, top] and a float32 scale (its largest
    magnitude over ``top``; 0 for a row of zeros, whose codes are all 0)."""
    vectors = numpy.asarray(vectors, dtype=numpy.float32)
    peaks = numpy.abs(vectors).max(axis=1) if vectors.size else numpy.zeros(len(vectors), dtype=numpy.float32)
    scales = (peaks / numpy.float32(top)).astype(numpy.float32)
    steps = numpy.where(scales > 0, scales, numpy.float32(1))
    codes = numpy.rint(vectors / steps[:, None]).clip(-top, top).astype(numpy.int8)
    return codes, scales


class QuantizedVectors:
    """One coded vector per row (see the module's docstring)."""

    __slots__ = ("codes", "scales")

    def __init__(self, codes: numpy.ndarray, scales: numpy.ndarray) -> None:
        # (rows, dimensions) int8, and (rows,) float32.
        self.codes = codes
        self.scales = scales

    @classmethod
    def of(cls, vectors: numpy.ndarray) -> QuantizedVectors:
        """The codes of float vectors (rows of ``vectors``)."""
        codes, scales = quantize(vectors, levels(vectors.shape[1]))
        return cls(codes, scales)

    @classmethod
    def join(cls, parts: Sequence[QuantizedVectors], dim: int) -> QuantizedVectors:
        if not parts:
            return cls(numpy.zeros((0, dim), dtype=numpy.int8), numpy.zeros(0, dtype=numpy.float32))
        return cls(
            numpy.ascontiguousarray(numpy.concatenate([part.codes for part in parts])),
            numpy.ascontiguousarray(numpy.concatenate([part.scales for part in parts])),
        )

    def __len__(self) -> int:
        return int(self.codes.shape[0])

    def __getitem__(self, rows: slice) -> QuantizedVectors:
        return QuantizedVectors(self.codes[rows], self.scales[rows])

    @property
    def dim(self) -> int:
        return int(self.codes.shape[1])

    @property
    def nbytes(self) -> int:
        return int(self.codes.nbytes + self.scales.nbytes)

    def decoded(self) -> numpy.ndarray:
        """The vectors as float32 (``codes * scale``)."""
        return self.codes.astype(numpy.float32) * self.scales[:, None]

    def expanded(self) -> numpy.ndarray:
        """The codes as float32 numbers, for the matrix products of a run's blocks of
        queries (see similarities): held by the run while it lasts, not by the index."""
        return self.codes.astype(numpy.float32)

    def similarities(self, queries: numpy.ndarray, expanded: numpy.ndarray | None = None) -> numpy.ndarray:
        """(queries, rows) float32: each query's (a row of unit float vectors) cosine
        similarity to each row, as exact codes' dot products times their scales.
        A block of several queries is one matrix product with ``expanded`` (made
        when not given); one query alone is a scan of the codes."""
        codes, scales = quantize(queries, levels(self.dim))
        if len(codes) == 1:
            products = self._scan(codes[0])[None, :]
        else:
            floats = expanded if expanded is not None else self.expanded()
            products = codes.astype(numpy.float32) @ floats.T
        # In the same order on both paths, so that the scores are the same floats.
        products *= scales[:, None]
        products *= self.scales[None, :]
        return products

    def _scan(self, query: numpy.ndarray) -> numpy.ndarray:
        """One query's codes' exact dot products with every row's, as float32."""
        rows = len(self)
        if rows == 0:
            return numpy.zeros(0, dtype=numpy.float32)
        simsimd = _simsimd()
        if simsimd is not None:
            products = simsimd.cdist(query[None, :], self.codes, metric="dot")
            return numpy.asarray(products, dtype=numpy.float32).reshape(rows)
        out = numpy.empty(rows, dtype=numpy.float32)
        floats = query.astype(numpy.float32)
        for start in range(0, rows, _SLAB_ROWS):
            stop = min(rows, start + _SLAB_ROWS)
            numpy.dot(self.codes[start:stop].astype(numpy.float32), floats, out=out[start:stop])
        return out


@functools.cache
def _simsimd():
    """The simsimd module, imported when first needed (None where it is not installed:
    the scan then runs in numpy, a slab of codes at a time)."""
    try:
        import simsimd
    except ImportError:
        return None
    return simsimd
