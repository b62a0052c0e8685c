"""Positions in text.

The core works in code-point offsets into a document's text and turns them into
(line, character) positions, still in code points. Conversion to the client's
encoding (UTF-16 by default in LSP) happens once, at the edge, with
:func:`utf16_character` / :func:`character_from_utf16`.
"""

from __future__ import annotations

import bisect
from itertools import accumulate
from typing import NamedTuple, Protocol, Sequence


# Position and Range are named tuples: immutable, ordered and hashable as
# frozen dataclasses are, and built in half the time. A check of 100,000 rows
# makes a million of them, and an edit above a thousand findings moves them all.
class Position(NamedTuple):
    """A 0-based line and a 0-based code-point column."""

    line: int
    character: int

    def __str__(self) -> str:
        return f"{self.line}:{self.character}"


class Range(NamedTuple):
    """A half-open range between two positions."""

    start: Position
    end: Position

    @classmethod
    def of(cls, line: int, start: int, end_line: int | None = None, end: int | None = None) -> Range:
        """Build a range from numbers; ``Range.of(2, 4, 2, 9)``."""
        return cls(Position(line, start), Position(line if end_line is None else end_line, start if end is None else end))

    def __str__(self) -> str:
        # The compact form used by tests and debugging output: "0:0-0:1".
        return f"{self.start}-{self.end}"

    def shifted(self, lines: int) -> Range:
        """The same range moved down by ``lines`` lines (up when negative)."""
        return Range(
            Position(self.start.line + lines, self.start.character),
            Position(self.end.line + lines, self.end.character),
        )


class Lines(Protocol):
    """A text as its lines: what a conversion of positions to the client's
    encoding looks at. A :class:`LineIndex` is one; so are the documents the
    server holds and the model of an open dataset, which keep their lines split."""

    def line_text(self, line: int) -> str: ...


def line_of(lines: Sequence[str], line: int) -> str:
    """Line ``line`` of ``lines`` (a text split at "\\n"), without its ending
    (also without a "\\r" before it); "" for a line the text does not have."""
    if not 0 <= line < len(lines):
        return ""
    text = lines[line]
    return text[:-1] if text.endswith("\r") else text


class LineIndex:
    """Maps code-point offsets to positions and back for one text.

    Built once per document version; line starts are found with a binary search so
    a position costs O(log lines) however large the document is.
    """

    __slots__ = ("text", "_starts")

    def __init__(self, text: str) -> None:
        self.text = text
        # Each line's length with its "\n", summed: three times faster than
        # finding each "\n" in turn, which a 100k-line dataset notices.
        steps = [len(line) + 1 for line in text.split("\n")]
        steps.pop()
        self._starts = list(accumulate(steps, initial=0))

    @property
    def line_count(self) -> int:
        return len(self._starts)

    def line_start(self, line: int) -> int:
        return self._starts[min(max(line, 0), len(self._starts) - 1)]

    def line_text(self, line: int) -> str:
        """The text of ``line`` without its line ending ("\\n" or "\\r\\n")."""
        if line < 0 or line >= len(self._starts):
            return ""
        start = self._starts[line]
        end = self._starts[line + 1] - 1 if line + 1 < len(self._starts) else len(self.text)
        if end > start and self.text[end - 1] == "\r":
            end -= 1
        return self.text[start:end]

    def position(self, offset: int) -> Position:
        offset = min(max(offset, 0), len(self.text))
        line = bisect.bisect_right(self._starts, offset) - 1
        return Position(line, offset - self._starts[line])

    def offset(self, position: Position) -> int:
        """The offset of ``position``, clamped to its line (and the text)."""
        if position.line >= len(self._starts):
            return len(self.text)
        start = self.line_start(position.line)
        return start + min(max(position.character, 0), len(self.line_text(position.line)))

    def range(self, start: int, end: int) -> Range:
        return Range(self.position(start), self.position(end))

    def line_range(self, line: int) -> Range:
        """The whole of ``line``, without its line ending."""
        return Range(Position(line, 0), Position(line, len(self.line_text(line))))


def utf16_character(line_text: str, character: int) -> int:
    """The UTF-16 column of code-point column ``character`` on ``line_text``."""
    prefix = line_text[:character]
    if prefix.isascii():
        return len(prefix) + max(0, character - len(line_text))
    # A lone surrogate (JSON may write one) is one UTF-16 unit, as the client counts it.
    return len(prefix.encode("utf-16-le", "surrogatepass")) // 2


def character_from_utf16(line_text: str, column: int) -> int:
    """The code-point column of UTF-16 column ``column`` on ``line_text``."""
    if line_text.isascii():
        return column
    units = 0
    for index, char in enumerate(line_text):
        if units >= column:
            return index
        units += 2 if ord(char) > 0xFFFF else 1
    return len(line_text)


def utf8_character(line_text: str, character: int) -> int:
    """The UTF-8 (byte) column of code-point column ``character``."""
    return len(line_text[:character].encode("utf-8", "surrogatepass"))


def character_from_utf8(line_text: str, column: int) -> int:
    """The code-point column of byte column ``column`` on ``line_text``."""
    return len(line_text.encode("utf-8", "surrogatepass")[:column].decode("utf-8", "ignore"))


def apply_edits(text: str, edits: "list[tuple[Range, str]]") -> str:
    """``text`` with each ``(range, new_text)`` applied; ranges refer to the
    original text and must not overlap."""
    index = LineIndex(text)
    spans = sorted(((index.offset(r.start), index.offset(r.end), new) for r, new in edits), reverse=True)
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text
