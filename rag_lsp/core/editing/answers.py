"""What the editing features answer: completion items and hover text, placed in
code points (the server converts them to the client's encoding at the edge)."""

from __future__ import annotations

from dataclasses import dataclass

from ..reading.text import Range


@dataclass(frozen=True)
class Completion:
    label: str
    kind: str
    # The text replacing columns start..end of the cursor's line.
    insert: str
    start: int
    end: int
    detail: str = ""
    documentation: str = ""  # Markdown
    sort: str = ""
    filter: str | None = None
    # A short word shown beside the label (where the item comes from).
    description: str = ""


@dataclass(frozen=True)
class Completions:
    line: int
    items: list[Completion]
    # The list depends on what is typed: ask again as the word grows.
    incomplete: bool = False


@dataclass(frozen=True)
class HoverText:
    markdown: str
    range: Range
