"""A dataset that is one JSON document, followed through an editor's edits.

Whether such a document is still valid JSON after an edit, and where it first is
not, is what its one finding says (see jsondocument). Reading the whole text
again answers it, but a document written with indentation has millions of lines,
and joining and decoding them costs a tenth of a second or more on every key
typed. Most edits change the inside of one row, and a document is valid exactly
when each of its rows is: so the place of every row is kept from the last whole
reading, an edit inside one row reads that row alone, and the rows an edit left
broken are kept with their slips. The first broken row's slip is the document's
(the text before it is the same valid JSON as before). Anything else (an edit
across rows, between them, or in the lines that tell the text is a document)
asks for the whole text to be read again.
"""

from __future__ import annotations

import json
import re
from array import array
from dataclasses import replace
from typing import Any, Sequence

from .jsondocument import (
    ARRAY,
    HEAD_LINES,
    LOOKED_AT,
    OBJECTS,
    STANDARD_DECODER,
    JsonDocument,
    Table,
    content_lines,
    first_content,
    first_content_line,
    is_whole,
    lines_spanned,
    read_document,
    read_lines_as_document,
)
from .jsonrows import json_message
from .text import Position

# What lies between two rows of a document valid JSON: blank space, and a comma
# between the values of an array.
_BETWEEN_ROWS = re.compile(r"[\s,]*")


class EditedDocument:
    """A JSON document's last whole reading, and the rows edits changed since."""

    def __init__(self, document: JsonDocument, head_end: int, mostly_whole_head: bool) -> None:
        self.document = document
        # The last line of those that tell the text is a document (see
        # read_document): an edit there is read whole.
        self._head_end = head_end
        # Whether most of those lines are whole JSON values: the text is then
        # read as JSON Lines once it is not valid JSON (see read_document).
        self._mostly_whole_head = mostly_whole_head
        # Where each row is written: its first character's line and column, and
        # the line and column just after its last; none until placed, or when
        # the document was not valid JSON at its last reading. The lines are
        # numpy arrays: an edit that adds a line moves a hundred thousand rows
        # below it, in microseconds.
        self._starts_line: Any = None
        self._starts_column = array("q")
        self._ends_line: Any = None
        self._ends_column = array("q")
        # The rows edits broke, by their index: where the slip is (its line
        # counted from the row's first line, its column) and what it is.
        self._broken: dict[int, tuple[int, int, str]] = {}
        # Whether the rows were looked for (see place_rows).
        self._placed = False

    @classmethod
    def read(cls, lines: Sequence[str]) -> tuple[JsonDocument | Table | None, EditedDocument | None]:
        """The text ``lines`` make read as a document (see read_document), and
        that reading kept to follow edits (its rows not kept, nor yet placed);
        no reading kept for a table or for a document only the standard
        decoder reads."""
        first = first_content_line(lines)
        if first is None or not (lines[first].strip().startswith("[") or lines[first].strip() == "{"):
            return read_lines_as_document(lines), None  # a table is told from its first lines
        text = "\n".join(lines)
        document = read_document(text, keep_rows=False)
        if not isinstance(document, JsonDocument):
            return document, None
        head = content_lines(text, text.rfind("\n", 0, first_content(text) or 0) + 1, LOOKED_AT)
        head_end = document.first_line + max(HEAD_LINES, _lines_of(lines, document.first_line, len(head)))
        if document.error is None and any(type(row) is str for row in document.rows):
            return document, None  # read by the standard decoder alone: not followed
        return document, cls(replace(document, rows=[], row_count=document.count), head_end, sum(map(is_whole, head)) * 2 >= len(head))

    def place_rows(self, lines: Sequence[str]) -> None:
        """Find where each row is written in ``lines`` (the text as last read),
        once, before the first edit that asks: reading a document whole again
        costs what finding its rows does, which most documents opened never
        need (a tenth of a second for a hundred thousand rows)."""
        if self._placed or self.document.error is not None:
            return
        self._placed = True
        text = "\n".join(lines)
        document = read_document(text)
        if isinstance(document, JsonDocument) and document.error is None and not any(type(row) is str for row in document.rows):
            self._place_rows(text, document.rows)

    def _place_rows(self, text: str, rows: list) -> None:
        """Place each of ``rows``, the raw texts of a document valid JSON, in
        ``text``: they follow each other, with blank space and commas between."""
        import numpy  # only for a document edited: a check needs none of it

        starts_line: list[int] = []
        ends_line: list[int] = []
        ascii = text.isascii()
        at = (first_content(text) or 0) + (1 if self.document.kind == ARRAY else 0)
        line, line_start = text.count("\n", 0, at), text.rfind("\n", 0, at) + 1
        skip = _BETWEEN_ROWS.match
        for row in rows:
            start = skip(text, at).end()
            line, line_start = _moved_to(text, start, at, line, line_start)
            starts_line.append(line)
            self._starts_column.append(start - line_start)
            at = start + (len(row) if ascii else len(str(memoryview(row), "utf-8")))  # type: ignore[arg-type]
            line, line_start = _moved_to(text, at, start, line, line_start)
            ends_line.append(line)
            self._ends_column.append(at - line_start)
        self._starts_line = numpy.array(starts_line, dtype=numpy.int64)
        self._ends_line = numpy.array(ends_line, dtype=numpy.int64)

    def after_edit(self, start: Position, end: Position, new_text: str, lines: Sequence[str]) -> JsonDocument | None:
        """The document after the text between ``start`` and ``end`` (as it
        was) was replaced by ``new_text``, giving ``lines``; None where the
        whole text must be read again."""
        if start.line <= self._head_end:
            return None
        if not self._rows_placed:
            # Not valid JSON at its last reading: an edit below its slip leaves it so.
            if self.document.error is None or start.line <= self.document.error[0]:
                return None
            self.document = replace(self.document, lines=lines_spanned(lines, self.document.first_line))
            return self.document
        row = self._row_holding(start, end)
        if row is None or not self._follow(row, start, end, new_text):
            return None
        slip = self._slip_of(row, lines)
        if slip is False:
            return None
        if slip is None:
            self._broken.pop(row, None)
        else:
            self._broken[row] = slip  # type: ignore[assignment]
        document = replace(self.document, lines=lines_spanned(lines, self.document.first_line), error=self._first_slip())
        if document.error is not None and self._mostly_whole_head:
            return None  # JSON Lines, one of them broken: read line by line
        if document.error is None and document.kind == OBJECTS and document.lines < 2 * document.count:
            return None  # most objects on one line: JSON Lines
        self.document = document
        return document

    def after_string_edit(self, start: Position, end: Position, new_text: str, lines: Sequence[str]) -> None:
        """Follow an edit inside one string, which leaves the document as valid
        as it was, but may move the places after it on its line."""
        if not self._rows_placed:
            return
        row = self._row_holding(start, end)
        if row is None or not self._follow(row, start, end, new_text):
            self._forget_places()
        elif row in self._broken:
            slip = self._slip_of(row, lines)
            if isinstance(slip, tuple):
                self._broken[row] = slip  # its slip may have moved along its line
            else:
                self._forget_places()

    def _forget_places(self) -> None:
        """Place no row: the next edit reads the whole text."""
        self._starts_line = self._ends_line = None
        del self._starts_column[:], self._ends_column[:]
        self._broken.clear()

    @property
    def _rows_placed(self) -> bool:
        return self._starts_line is not None and len(self._starts_line) > 0

    def _row_holding(self, start: Position, end: Position) -> int | None:
        """The row whose first and last characters are outside the range from
        ``start`` to ``end`` and which holds the rest of it; None if none (or
        for a range that ends before it starts)."""
        if (end.line, end.character) < (start.line, start.character):
            return None
        row = int(self._starts_line.searchsorted(start.line, side="right")) - 1
        while row >= 0 and self._starts_line[row] == start.line and self._starts_column[row] >= start.character:
            row -= 1
        if row < 0 or (self._starts_line[row], self._starts_column[row]) >= (start.line, start.character):
            return None
        # The range ends at the row's last character at most (its end is just after it).
        if (end.line, end.character) > (self._ends_line[row], self._ends_column[row] - 1):
            return None
        return row

    def _follow(self, row: int, start: Position, end: Position, new_text: str) -> bool:
        """Move the places of ``row``'s end and of the rows after it as the edit
        moved them; False where a broken row after it shares the edited line."""
        added = new_text.count("\n")
        delta = added - (end.line - start.line)
        # The column the edit's last line now ends on, and how far the rest of that line moved.
        shift = (start.character if added == 0 else 0) + len(new_text) - (new_text.rfind("\n") + 1) - end.character
        following = row + 1
        while following < len(self._starts_line) and self._starts_line[following] == end.line:
            if following in self._broken:
                return False
            self._starts_column[following] += shift
            if self._ends_line[following] == end.line:
                self._ends_column[following] += shift
            following += 1
        if self._ends_line[row] == end.line:
            self._ends_column[row] += shift
        self._ends_line[row] += delta
        if delta:
            self._starts_line[row + 1 :] += delta
            self._ends_line[row + 1 :] += delta
        return True

    def _slip_of(self, row: int, lines: Sequence[str]) -> tuple[int, int, str] | None | bool:
        """Where row ``row`` is first not valid JSON, as the whole document's
        reading would say it (its line counted from the row's first); None for
        a row that is valid JSON; False where its own reading cannot tell."""
        first, first_column = int(self._starts_line[row]), self._starts_column[row]
        last, last_column = int(self._ends_line[row]), self._ends_column[row]
        if first == last:
            text = lines[first][first_column:last_column]
        else:
            text = "\n".join([lines[first][first_column:], *lines[first + 1 : last], lines[last][:last_column]])
        if is_whole(text):
            return None
        try:
            STANDARD_DECODER.decode(text)
        except json.JSONDecodeError as error:
            # A value that ends before the row does (a brace typed in it), or a
            # row cut short, reads on into the next row: the whole text tells.
            if error.msg == "Extra data" or error.pos >= len(text):
                return False
            line = error.lineno - 1
            return line, error.colno - 1 + (first_column if line == 0 else 0), json_message(error)
        except (ValueError, RecursionError):  # NaN or Infinity among them
            return False
        return False  # read by the standard decoder alone: the whole text tells

    def _first_slip(self) -> tuple[int, int, str] | None:
        if not self._broken:
            return None
        row = min(self._broken)
        line, column, message = self._broken[row]
        return int(self._starts_line[row]) + line, column, message


def _moved_to(text: str, offset: int, at: int, line: int, line_start: int) -> tuple[int, int]:
    """The line of ``offset`` and where that line starts, from those of ``at`` before it."""
    breaks = text.count("\n", at, offset)
    if breaks:
        return line + breaks, text.rfind("\n", at, offset) + 1
    return line, line_start


def _lines_of(lines: Sequence[str], first: int, count: int) -> int:
    """How many lines from ``first`` hold its first ``count`` lines that are not blank."""
    seen = 0
    for number in range(first, len(lines)):
        if lines[number].strip():
            seen += 1
            if seen == count:
                return number - first + 1
    return len(lines) - first
