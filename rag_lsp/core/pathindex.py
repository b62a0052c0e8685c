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
from typing import Sequence

# What a file name keeps when reduced (see _squashed).
_NOT_ALNUM = re.compile(r"[\W_]+")


def _squashed(name: str) -> str:
    """A name reduced to lower-case letters and digits: `Token-Store_1.PY` and
    `token_store_1.py` read alike."""
    return _NOT_ALNUM.sub("", name.lower())


def _keys(path: str) -> list[str]:
    """The index keys of a path: by folder, by the folder above, by name, by the
    reduced name, by the reduced name without its extension."""
    folder, _, name = path.rpartition("/")
    folder = folder.lower()
    stem = name.rsplit(".", 1)[0] if "." in name.lstrip(".") else name
    keys = ["d:" + folder, "n:" + name.lower(), "s:" + _squashed(name), "s:" + _squashed(stem)]
    if folder:
        keys.append("d:" + posixpath.dirname(folder))
    return keys


class PathIndex:
    """The workspace files by folder and by name, to find the closest one to a path."""

    def __init__(self, files: Sequence[str]) -> None:
        self.files = files
        # Key -> indexes of the files with that key, ascending (a tie in score goes
        # to the file listed first, as a scan of every file would decide it).
        self._by_key: dict[str, list[int]] = {}
        for index, path in enumerate(files):
            folder, _, name = path.rpartition("/")
            stem = name.rsplit(".", 1)[0] if "." in name.lstrip(".") else name
            # A file is indexed under its own folder only: the folder above is a
            # key of the paths looked up (a file moved one folder down).
            for key in ("d:" + folder.lower(), "n:" + name.lower(), "s:" + _squashed(name), "s:" + _squashed(stem)):
                held = self._by_key.get(key)
                if held is None:
                    self._by_key[key] = [index]
                elif held[-1] != index:
                    held.append(index)

    def candidates(self, path: str) -> list[str]:
        """The files sharing a folder or a name with ``path``, in listing order."""
        found: set[int] = set()
        for key in _keys(path):
            found.update(self._by_key.get(key, ()))
        return [self.files[index] for index in sorted(found)]

    def closest(self, path: str, cutoff: float) -> str | None:
        """The candidate most like ``path`` by rapidfuzz's ratio (0..100), if one
        reaches ``cutoff``."""
        candidates = self.candidates(path)
        if not candidates:
            return None
        from rapidfuzz import fuzz, process

        best = process.extractOne(path, candidates, scorer=fuzz.ratio, score_cutoff=cutoff)
        return best[0] if best is not None else None
