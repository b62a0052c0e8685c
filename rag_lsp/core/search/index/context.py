"""A chunk in its file: its vector moved towards the words of the file's path,
and towards the whole file.
"""

from __future__ import annotations

import re

import numpy

from ..vectors import normalize_rows

# How much a chunk's vector leans towards the words of its file's path, and then
# towards its whole file (each a unit vector; the chunk's own is too).
PATH_WEIGHT = 0.3
FILE_WEIGHT = 1.0
# What the vectors of an index are: part of the cache's key, changed with them.
VECTORS = f"chunk+{PATH_WEIGHT}path+{FILE_WEIGHT}file"

_PATH_SPLIT = re.compile(r"[^0-9A-Za-z]+|(?<=[a-z])(?=[A-Z])")


def path_words(path: str) -> str:
    """The words of a workspace path, its extension left out: ``src/rateLimit/token_bucket.py``
    is "src rate Limit token bucket"."""
    stem = path.rsplit(".", 1)[0] if "." in path.rsplit("/", 1)[-1] else path
    return " ".join(word for word in _PATH_SPLIT.split(stem) if word)


def contextual(vectors: numpy.ndarray, path: numpy.ndarray) -> numpy.ndarray:
    """The vectors of a file's chunks, each in its context: moved towards the vector
    of the file's path (weight PATH_WEIGHT), then towards the mean of the file's
    chunks (FILE_WEIGHT), and scaled to length 1 again.

    A question asks what a passage is about, and a passage of a long file often
    does not say it: the heading, the module's name and the rest of the file do.
    Measured by ``benchmarks/chunking.py``, this context finds the file that answers
    a paraphrased question among the first three hits for a tenth to a sixth more
    questions, over prose, manual pages and code alike.
    """
    mixed = vectors + PATH_WEIGHT * path
    normalize_rows(mixed)
    whole = mixed.mean(axis=0)
    norm = numpy.linalg.norm(whole)
    if norm > 0:
        mixed += (FILE_WEIGHT / norm) * whole
        normalize_rows(mixed)
    return mixed.astype(numpy.float32, copy=False)
