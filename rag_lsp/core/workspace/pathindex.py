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
from bisect import bisect_left
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


def _reduced_name(name: str) -> tuple[str, str]:
    """One name reduced, with and without its extension (see _reduced_names)."""
    whole = _squashed(name)
    stem, dot, extension = name.rpartition(".")
    cut = _squashed(extension) if dot and stem else ""
    return whole, whole[: len(whole) - len(cut)] if cut else whole


# Files indexed at a time (see PathIndex).
_SHARE = 4096


class PathIndex:
    """The workspace files by folder and by name, to find the closest one to a path."""

    def __init__(self, files: Sequence[str]) -> None:
        # Imported here, where an index is first needed (a path is missing), and
        # not at each look-up.
        from rapidfuzz import fuzz, process

        self._extract_one, self._ratio = process.extractOne, fuzz.ratio
        self.files = files
        count = len(files)
        # By folder (lower-cased): a walk lists a folder's files together, so a
        # folder's files are a run of the listing (a few runs in another order).
        runs: dict[str, list[range]] = {}
        # By name: each file under its reduced name with and without its
        # extension. A dict of lists of them costs about 300 bytes a file (a
        # 50,000-file workspace: 15 MB, kept as long as the workspace); each
        # (name's hash, file) packed into one integer, in one sorted list, costs
        # about 90. Two names of one hash only add a candidate, which the fuzzy
        # ratio then judges like any other. Sorted by hash, then by file: a list
        # of integers sorts several times faster than by a key, and the files of
        # a hash are the run of integers from the hash shifted up to the next.
        shift = max(count, 1).bit_length()
        packed: list[int] = []
        run_folder, run_start = "", 0
        # A share of the files at a time: the names of a whole large workspace
        # split and reduced at once would take tens of megabytes for a moment.
        for first in range(0, count, _SHARE):
            parts = [path.rpartition("/") for path in files[first : first + _SHARE]]
            for index, (folder, _, _) in enumerate(parts, first):
                if folder != run_folder:
                    if index > run_start:
                        runs.setdefault(run_folder.lower(), []).append(range(run_start, index))
                    run_folder, run_start = folder, index
            for owner, (whole, bare) in enumerate(_reduced_names([part[2] for part in parts]), first):
                packed.append(hash(whole) << shift | owner)
                if bare != whole:  # without the extension, where it has one
                    packed.append(hash(bare) << shift | owner)
        if count > run_start:
            runs.setdefault(run_folder.lower(), []).append(range(run_start, count))
        self._runs = runs
        packed.sort()
        self._packed = packed
        self._shift = shift

    def _groups(self, path: str) -> list[tuple[list[str], Sequence[int]]]:
        """The files sharing a folder or a name with ``path``, in groups: each a
        list of files in listing order with their places in the listing (a range,
        for a run of a folder's files). Shared are: the path's folder, the folder
        above it (a file moved into a new subfolder such as `old/`), and its name
        reduced, with and without its extension. A file may be in two groups."""
        files = self.files
        folder, _, name = path.rpartition("/")
        runs = self._runs.get(folder.lower(), [])
        if folder:
            runs = runs + self._runs.get(posixpath.dirname(folder).lower(), [])
        groups: list[tuple[list[str], Sequence[int]]] = [(files[run.start : run.stop], run) for run in runs]
        packed, shift = self._packed, self._shift
        mask = (1 << shift) - 1
        for key in set(_reduced_name(name)):
            wanted = hash(key)
            first = bisect_left(packed, wanted << shift)
            found = [each & mask for each in packed[first : bisect_left(packed, (wanted + 1) << shift, first)]]
            if found:
                groups.append(([files[index] for index in found], found))
        return groups

    def candidates(self, path: str) -> list[str]:
        """The files sharing a folder or a name with ``path``, in listing order."""
        return [self.files[index] for index in sorted({place for _, places in self._groups(path) for place in places})]

    def closest(self, path: str, cutoff: float) -> str | None:
        """The candidate most like ``path`` by rapidfuzz's ratio (0..100), if one
        reaches ``cutoff``; of equals, the one listed first."""
        best: tuple[float, int] | None = None  # its score and place
        # Each group is searched in C (the first of its best is the one listed
        # first), needing at least the best score so far: a folder's hundreds of
        # files cost no step in Python each.
        for choices, places in self._groups(path):
            match = self._extract_one(path, choices, scorer=self._ratio, score_cutoff=best[0] if best is not None else cutoff)
            if match is not None:
                score, place = match[1], places[match[2]]
                if best is None or score > best[0] or place < best[1]:
                    best = (score, place)
        return self.files[best[1]] if best is not None else None
