"""The closest workspace file to a path that is not one: did-you-mean at scale.

Comparing a missing path with every file of a 50,000-file workspace costs tens of
milliseconds, and a dataset can list thousands of distinct missing paths. The
near misses people write change one part of a path and keep the others: a file
renamed (`token-store.py` for `token_store.py`), an extension dropped or
changed, a letter lost, a folder renamed or added (`old/`), the case of a
folder. So the candidates are the files that share a part with the missing path:
its folder (or the folder above it), its file name, or its file name reduced to
lower-case letters and digits (with and without the extension). Only those are
compared, with the same fuzzy ratio as before.
"""

from __future__ import annotations

import posixpath
import re
from array import array
from bisect import bisect_left, bisect_right
from itertools import compress
from typing import Sequence

# What a file name keeps when reduced (see _squashed).
_NOT_ALNUM = re.compile(r"[\W_]+")
_ASCII_NOT_ALNUM = str.maketrans("", "", "".join(chr(code) for code in range(128) if not chr(code).isalnum()))


def _squashed(name: str) -> str:
    """A name reduced to lower-case letters and digits: `Token-Store_1.PY` and
    `token_store_1.py` read alike."""
    if name.isascii():  # nearly every file name: a translation, not a search
        return name.lower().translate(_ASCII_NOT_ALNUM)
    return _NOT_ALNUM.sub("", name.lower())


def _reduced_names(names: list[str]) -> list[tuple[str, str]]:
    """Each name reduced (see _squashed), with and without its extension (which
    reduction keeps apart from the stem only by dropping the dot: `token_store_1.py`
    gives `tokenstore1py` and `tokenstore1`); all names in one translation when
    they are ASCII and hold no line break (a 50,000-file workspace's, at once)."""
    extensions = []
    for name in names:
        stem, dot, extension = name.rpartition(".")
        extensions.append(extension if dot and stem else "")
    wholes = _squashed_all(names)
    cuts = _squashed_all(extensions)
    return [(whole, whole[: len(whole) - len(cut)] if cut else whole) for whole, cut in zip(wholes, cuts)]


def _squashed_all(names: list[str]) -> list[str]:
    """:func:`_squashed` of each name, in one translation where it can."""
    joined = "\n".join(names)
    if joined.isascii() and joined.count("\n") == max(len(names) - 1, 0):
        return joined.lower().translate(_ASCII_NOT_ALNUM_KEEP_LINES).split("\n")
    return [_squashed(name) for name in names]


_ASCII_NOT_ALNUM_KEEP_LINES = str.maketrans("", "", "".join(chr(code) for code in range(128) if not chr(code).isalnum() and chr(code) != "\n"))


def _keys(path: str) -> list[str]:
    """The keys a missing path is looked up by: those a file at that path is
    indexed by (see PathIndex), and the folder above its folder (a file moved into
    a new subfolder such as `old/`)."""
    folder, _, name = path.rpartition("/")
    ((whole, bare),) = _reduced_names([name])
    keys = ["d:" + folder.lower(), "s:" + whole, "s:" + bare]
    if folder:
        keys.append("d:" + posixpath.dirname(folder).lower())
    return keys


class PathIndex:
    """The workspace files by folder and by name, to find the closest one to a path."""

    def __init__(self, files: Sequence[str]) -> None:
        self.files = files
        # Each file is filed under three keys: its folder, and its reduced name with
        # and without its extension. A dict of lists of them costs about 400 bytes
        # a file (a 50,000-file workspace: 20 MB, kept as long as the workspace);
        # the keys' hashes in one sorted array, with the file of each beside it,
        # cost about 50. Two keys of one hash only add a candidate, which the fuzzy
        # ratio then judges like any other.
        parts = [path.rpartition("/") for path in files]
        reduced = _reduced_names([part[2] for part in parts])
        count = len(files)
        keys = ["d:" + part[0].lower() for part in parts]
        keys += ["s:" + whole for whole, _ in reduced]
        # Without the extension, where it has one.
        cut = [bare != whole for whole, bare in reduced]
        keys += ["s:" + bare for (_, bare), has_extension in zip(reduced, cut) if has_extension]
        owners = [*range(count), *range(count), *compress(range(count), cut)]
        # Sorted by hash, then by file: each (hash, file) packed into one integer,
        # as a list of integers sorts several times faster than by a key.
        shift = max(count, 1).bit_length()
        packed = [(code << shift) | owner for code, owner in zip(map(hash, keys), owners)]
        del keys, owners
        packed.sort()
        mask = (1 << shift) - 1
        self._hashes = array("q", [each >> shift for each in packed])
        self._owners = array("l", [each & mask for each in packed])

    def _indexes(self, path: str) -> list[int]:
        """Indexes of the files filed under a key of ``path`` (see _keys), a file
        once per key it shares."""
        hashes, owners = self._hashes, self._owners
        found: list[int] = []
        for key in _keys(path):
            wanted = hash(key)
            start = bisect_left(hashes, wanted)
            found += owners[start : bisect_right(hashes, wanted, start)]
        return found

    def candidates(self, path: str) -> list[str]:
        """The files sharing a folder or a name with ``path``, in listing order."""
        return [self.files[index] for index in sorted(set(self._indexes(path)))]

    def closest(self, path: str, cutoff: float) -> str | None:
        """The candidate most like ``path`` by rapidfuzz's ratio (0..100), if one
        reaches ``cutoff``; of equals, the one listed first."""
        indexes = self._indexes(path)
        if not indexes:
            return None
        from rapidfuzz import fuzz, process

        files = self.files
        # A file under two keys is scored twice: cheaper than a set, and harmless.
        matches = process.extract(path, [files[index] for index in indexes], scorer=fuzz.ratio, score_cutoff=cutoff, limit=None)
        if not matches:
            return None
        best = max(score for _, score, _ in matches)
        return files[min(indexes[position] for _, score, position in matches if score == best)]
