"""A dataset model follows an editor's edits: the lines an edit replaced are
read again (their rows leave the indexes and the new ones join), and the
findings of the lines below move with them without being looked at.
"""

from __future__ import annotations

import bisect

from ..reading.text import Position, line_of
from ..reading.datasetlines import read_lines
from ..reading.sources import lines_size
from .modelrows import ModelRow, causes_of


class FollowsEdits:
    """The part of :class:`~rag_lsp.core.checking.incremental.DatasetModel`
    that takes an editor's edits (see the module's docstring): it replaces
    ``lines`` and ``rows``, and keeps every per-line list of the model
    (``_placed``, ``_passed``) and its indexes in step."""

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = "\n".join(self.lines)
        return self._text

    def same_lines(self, lines: list[str]) -> bool:
        """Whether the model holds these lines (its text split at "\n")."""
        return self.lines == lines

    def share_lines(self, lines: list[str]) -> None:
        """Hold ``lines``, equal to the model's (see same_lines), instead of its
        own: the document an editor opened on a dataset the model read from disk
        holds them already, and one copy of a large dataset is enough."""
        assert self.lines == lines
        for line, row in zip(lines, self.rows):
            if row is not None and not line.endswith("\r"):
                row.text = line
        self.lines = lines
        self._text = None

    def line_text(self, line: int) -> str:
        """Line ``line`` without its ending (also without a "\\r" before it)."""
        return line_of(self.lines, line)

    def edit(self, start: Position, end: Position, new_text: str) -> None:
        """Replace the text between two code-point positions."""
        if self._document and self._within_a_string(start, end, new_text):
            # The document's values and rows are what they were: its findings stand.
            text = self.lines[start.line]
            self.lines[start.line] = text[: start.character] + new_text + text[end.character :]
            self.size += lines_size([self.lines[start.line]]) - lines_size([text])
            self._text = None
            if self._edited_document is not None:
                self._edited_document.after_string_edit(start, end, new_text, self.lines)
            return
        last = len(self.lines) - 1
        start_line, end_line = min(start.line, last), min(end.line, last)
        head = self.lines[start_line][: start.character] if start.line <= last else self.lines[last]
        tail = self.lines[end_line][end.character :] if end.line <= last else ""
        lines = (head + new_text + tail).split("\n")
        if self._document:
            if self._edited_document is not None:
                self._edited_document.place_rows(self.lines)  # as they are before the edit
            # No line of a document is a row: only its lines change.
            self.size += lines_size(lines) - lines_size(self.lines[start_line : end_line + 1])
            self.lines[start_line : end_line + 1] = lines
            self._text = None
            self._last_shown = None
        else:
            self._replace(start_line, end_line - start_line + 1, lines)
        self._read_as_a_document_again(start, end, new_text)

    def _replace(self, start: int, removed: int, lines: list[str]) -> None:
        self._text = None
        stop = start + removed
        added = len(lines)
        new_rows = [self._row(line) for line in lines]
        for line, row in enumerate(new_rows, start):
            if row is not None:
                row.line = line
        self.size += lines_size(lines) - lines_size(self.lines[start:stop])
        for row in self.rows[start:stop]:
            self._touch_groups(row)
            self._unindex(row)
        self._index_many([row for row in new_rows if row is not None])
        for row in new_rows:
            self._touch_groups(row)
        self._row_count += sum(1 for row in new_rows if row is not None) - sum(1 for row in self.rows[start:stop] if row is not None)
        self.lines[start:stop] = lines
        self.rows[start:stop] = new_rows
        last_shown = self._last_shown
        if last_shown is not None:
            if added != removed:  # lines below moved: their findings are others
                self._last_shown = None
            else:
                for line in range(start, stop):
                    last_shown.edited.setdefault(line, list(self._placed[line] or ()))
                    last_shown.edited_passed.setdefault(line, self._passed[line] or ())
        for pairs in self._passed[start:stop]:
            if pairs is not None:
                self._count_passed_pairs(pairs, -1)
                self._passed_changes += 1
        for placed in self._placed[start:stop]:
            if placed:
                self._placed_counts.subtract(finding.code for finding in placed)
                self._cause_lines.subtract(causes_of(placed))
        self._placed[start:stop] = [None] * added
        self._passed[start:stop] = [None] * added
        if added != removed:  # the lines passed over below moved, and the rows below
            self._passed_changes += 1
            self._exact_up_to = min(self._exact_up_to, start)
        delta = added - removed
        self._move_lines(start, stop, delta)
        if self._stale is not None:
            self._stale = {line if line < start else line + delta for line in self._stale if not start <= line < stop}
            self._stale.update(range(start, start + added))
        if delta:
            self._move_grouped(stop, delta)

    def _move_lines(self, start: int, stop: int, delta: int) -> None:
        """Drop the findings of replaced lines and move the lines below. Their
        findings keep the line they were placed on (see _shown_on): pressing
        Enter above ten thousand findings moves none of them."""
        self._lines_with_findings = _moved_lines(self._lines_with_findings, start, stop, delta)
        for code, lines in self._lines_by_code.items():
            self._lines_by_code[code] = _moved_lines(lines, start, stop, delta)

    def _row(self, line: str) -> ModelRow | None:
        row = self._read_line(line)
        if row is not None:
            self._tally(row)
            row.drop()  # until the line is checked
        return row

    def _read_line(self, line: str) -> ModelRow | None:
        """The row of one line (None when blank), holding its value."""
        read = read_lines(ModelRow, [line], self.workspace.settings.max_line_bytes)
        return read[0][1] if read else None


def _moved_lines(lines: list[int], start: int, stop: int, delta: int) -> list[int]:
    """Ascending ``lines`` without those in [start, stop), those below moved by ``delta``."""
    first = bisect.bisect_left(lines, start)
    after = bisect.bisect_left(lines, stop)
    return lines[:first] + [line + delta for line in lines[after:]] if delta else lines[:first] + lines[after:]
