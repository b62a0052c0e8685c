"""Slices: a suite's means per value of one key of its cases' ``metadata``.

"Recall 0.91 overall, 0.62 on questions tagged `billing`" is how a team finds
what to fix next. ``rag-lsp run --by metadata.tags`` puts each case in the slice
of its value of ``metadata.tags`` and gives every slice the suite's means over
its scored cases, with how many cases it holds:

* a list value (tags) puts the case in the slice of each of its distinct values;
* a case whose metadata lacks the key (or holds null, or an empty list) is in
  the slice :data:`NONE`;
* a string names its slice as written; any other value (a number, true, an
  object) by its JSON text, so ``3`` and ``"3"`` stay two slices apart only in
  how they print, as they are in the dataset.

``metadata.source.kind`` reads a nested key (unless the metadata has a key
``source.kind`` itself, which wins). Pure functions, no I/O.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from .scorer import aggregate

PREFIX = "metadata."
#: The slice of the cases whose metadata does not hold the key.
NONE = "(none)"


class NotAMetadataKey(ValueError):
    """A ``--by`` that does not name a key of the cases' metadata."""


def metadata_key(text: str) -> str:
    """The key ``metadata.KEY`` names (``metadata.lang`` -> ``lang``);
    NotAMetadataKey when ``text`` names none."""
    if not text.startswith(PREFIX) or not text[len(PREFIX):].strip():
        raise NotAMetadataKey(
            f"{text!r} does not name a metadata key: slice by a key of the cases' `metadata` "
            "object, written metadata.KEY (e.g. --by metadata.lang or --by metadata.tags)"
        )
    return text[len(PREFIX):]


def value_at(metadata: Mapping[str, Any] | None, key: str) -> Any:
    """The value of ``key`` in ``metadata``: the key as written, else a dotted
    path into nested objects; None when it holds none."""
    if not isinstance(metadata, Mapping):
        return None
    if key in metadata:
        return metadata[key]
    found: Any = metadata
    for part in key.split("."):
        if not isinstance(found, Mapping) or part not in found:
            return None
        found = found[part]
    return found


def slice_names(value: Any) -> list[str]:
    """The slices a case whose key holds ``value`` belongs to (see the module)."""
    values = value if isinstance(value, list) else [value]
    names = [_name(item) for item in values if item is not None]
    return list(dict.fromkeys(names)) or [NONE]


def _name(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


@dataclass
class Slice:
    """One slice of a suite: how many cases it holds, how many of them have
    figures, and the means over those."""

    cases: int = 0
    scored: int = 0
    aggregates: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"cases": self.cases, "scored": self.scored, "aggregates": self.aggregates}


def slice_cases(cases: Iterable[Any], key: str) -> dict[str, Slice]:
    """The slices of ``cases`` (objects with ``metadata`` and ``scores``) by
    ``key``: by name, sorted, the slice NONE last."""
    members: dict[str, list[Mapping[str, float] | None]] = {}
    for case in cases:
        for name in slice_names(value_at(case.metadata, key)):
            members.setdefault(name, []).append(case.scores)
    slices: dict[str, Slice] = {}
    for name in sorted(members, key=lambda name: (name == NONE, name)):
        means, scored = aggregate(members[name])
        slices[name] = Slice(len(members[name]), scored, means)
    return slices
