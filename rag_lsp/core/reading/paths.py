"""Expected paths in normal form: workspace-relative, "/"-separated, with no
``./``, ``..``, doubled or trailing "/", and no drive (RAG206 fixes the others).
"""

from __future__ import annotations

import posixpath
import re
from functools import lru_cache


def is_normal(value: str) -> bool:
    """Whether ``normalize_relative(value) == value``, without normalizing: a few
    searches in C, where a dataset lists hundreds of thousands of distinct paths.
    What makes a path differ from its normal form: a backslash, a leading, doubled
    or trailing "/", a "." or ".." part, a drive."""
    if "\\" in value or "//" in value or "/./" in value or "/../" in value or value in (".", ".."):
        return False
    if value.startswith(("/", "./", "../")) or value.endswith(("/", "/.", "/..")):
        return False
    return value[1:2] != ":"


# What a value not in normal form holds (see is_normal), in values joined by "\n"
# with one before the first and after the last: each part is found by str.find,
# a search in C where a regular expression would try every position, and each
# value holding one is then looked at alone.
_UNUSUAL_PARTS = ("\\", "//", "/.", "\n.", "\n/", "/\n")


_DRIVE = re.compile(r"\n[^\n]:")


def not_normal_among(values: list[str]) -> set[str]:
    """The values that are not in normal form (see is_normal), found by a few
    searches over them all (a dataset's many distinct paths are nearly all in
    normal form), or one by one when a value holds a line break."""
    if not values:
        return set()
    # Each distinct value once: paths a tool wrote from its own folder repeat
    # across cases, and every one of them is then looked at alone.
    values = list(set(values))
    joined = "\n" + "\n".join(values) + "\n"
    if joined.count("\n") != len(values) + 1:
        return {value for value in values if not is_normal(value)}
    # Where each part was found: the offset of a character of the value it is in.
    inside: list[int] = []
    for part in _UNUSUAL_PARTS:
        shift = 1 if part[0] == "\n" else 0
        at = joined.find(part)
        while at >= 0:
            inside.append(at + shift)
            at = joined.find(part, at + 1)
    inside.extend(match.start() + 1 for match in _DRIVE.finditer(joined))
    # The value each was found in: the text between the line breaks around it.
    unusual = {joined[joined.rfind("\n", 0, offset) + 1 : joined.find("\n", offset)] for offset in inside}
    return {value for value in unusual if not is_normal(value)}


@lru_cache(maxsize=65536)
def normalize_relative(value: str) -> str | None:
    """A workspace-relative path in normal form, or None when it leaves the workspace."""
    candidate = value.replace("\\", "/")
    if candidate.startswith("/") or (len(candidate) > 1 and candidate[1] == ":"):
        return None
    normal = posixpath.normpath(candidate)
    if normal == ".." or normal.startswith("../"):
        return None
    return "" if normal == "." else normal
