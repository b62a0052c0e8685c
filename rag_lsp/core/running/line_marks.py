"""One file's run marks by line, moved with the file's edits.

:class:`LineMarks` keeps one file's marks (:class:`~.marks.Mark`) by line and
moves them with the file's edits: a mark on a line an edit replaced is dropped
(a figure never sits beside text it was not computed from), a mark below an edit
moves by the lines the edit added or removed. Moving is a vectorized add on a
sorted array of lines, so an edit above a hundred thousand results costs
microseconds.

Pure: no I/O, no protocol types.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator, Sequence

from ..reading.findings import Severity
from .marks import Mark


def _numpy() -> Any:
    """numpy, imported once marks are kept: a server that runs nothing never
    loads it (15 MB of memory)."""
    import numpy

    return numpy


class LineMarks:
    """One file's marks, sorted by line, moved by edits.

    Lines (and each mark's rank for display) are kept in numpy arrays beside the
    marks: an edit finds the marks on the lines it replaced by binary search and
    moves every mark below it with one vectorized add, and the marks to show are
    picked by a vectorized scan; a keystroke costs microseconds however many
    results the file holds.
    """

    __slots__ = ("_lines", "_ranks", "_marks", "_suspects", "_wide")

    def __init__(self) -> None:
        np = _numpy()
        self._lines = np.zeros(0, dtype=np.int64)
        self._ranks = np.zeros(0, dtype=np.int8)
        self._marks: list[Mark] = []
        # Marks on a line an edit touched that may still read the same (see settle()).
        self._suspects: set[Mark] = set()
        # The marks that cover lines below their own (Mark.lines): a suite file's few verdicts.
        self._wide: set[Mark] = set()

    def __len__(self) -> int:
        return len(self._marks)

    def __iter__(self) -> Iterator[tuple[int, Mark]]:
        return zip(self._lines.tolist(), self._marks)

    def at(self, line: int) -> list[Mark]:
        np = _numpy()
        lo = int(np.searchsorted(self._lines, line, "left"))
        hi = int(np.searchsorted(self._lines, line, "right"))
        return self._marks[lo:hi]

    # -------------------------------------------------- changing the set

    def add(self, placed: Sequence[tuple[int, Mark]], replaces: Callable[[int, Mark], bool] | None = None) -> None:
        """Add marks, first removing those ``replaces`` says the new ones replace."""
        np = _numpy()
        if replaces is not None:
            self.remove(replaces)
        if not placed:
            return
        count = len(placed)
        lines = np.concatenate([self._lines, np.fromiter((line for line, _ in placed), dtype=np.int64, count=count)])
        ranks = np.concatenate([self._ranks, np.fromiter((_rank(mark) for _, mark in placed), dtype=np.int8, count=count)])
        marks = self._marks + [mark for _, mark in placed]
        self._wide.update(mark for _, mark in placed if mark.lines > 1)
        order = np.argsort(lines, kind="stable")
        self._lines = lines[order]
        self._ranks = ranks[order]
        self._marks = [marks[index] for index in order.tolist()]

    def remove(self, predicate: Callable[[int, Mark], bool]) -> bool:
        """Remove the marks ``predicate(line, mark)`` holds for; whether any was."""
        drop = [index for index, (line, mark) in enumerate(zip(self._lines.tolist(), self._marks)) if predicate(line, mark)]
        self._delete(drop)
        return bool(drop)

    def _delete(self, drop: list[int]) -> None:
        """Delete the marks at these indexes (ascending)."""
        np = _numpy()
        if not drop:
            return
        self._lines = np.delete(self._lines, drop)
        self._ranks = np.delete(self._ranks, drop)
        marks = self._marks
        removed = [marks[index] for index in drop]
        if len(drop) <= 32:
            for index in reversed(drop):
                del marks[index]  # a memmove each: cheaper than rebuilding a long list
        else:
            dropped = set(drop)
            self._marks = [mark for index, mark in enumerate(marks) if index not in dropped]
        if self._suspects:
            self._suspects.difference_update(removed)
        if self._wide:
            self._wide.difference_update(removed)

    # -------------------------------------------------- following edits

    def edit(self, start_line: int, start_character: int, end_line: int, end_character: int, text: str) -> set[str]:
        """The file's text between two positions was replaced by ``text``.

        Marks below the edit move by the lines it added or removed. A mark on the
        last replaced line moves with it when the edit ended at that line's start
        and what replaced it ends a line (lines inserted or removed above it). A
        mark on the first replaced line may still read the same (an edit at its
        end); it is kept until :meth:`settle` compares its text. Any other mark on
        a replaced line is dropped. An edit of the lines a wide mark covers (a
        suite's, see Mark.lines) drops every mark of its run here; the runs (by
        suite key) are returned, for their marks in other files.
        """
        np = _numpy()
        if (start_line, start_character) > (end_line, end_character):
            start_line, start_character, end_line, end_character = end_line, end_character, start_line, start_character
        lines = self._lines
        if not len(lines):
            return set()
        stale = self._wide_marks_touched(start_line, end_line, end_character) if self._wide else set()
        if stale:
            self.remove(lambda _, mark: mark.suite in stale)
            lines = self._lines
            if not len(lines):
                return stale
        added = text.count("\n")
        delta = added - (end_line - start_line)
        lo = int(np.searchsorted(lines, start_line, "left"))
        hi = int(np.searchsorted(lines, end_line, "right"))
        if delta and hi < len(lines):
            lines[hi:] += delta
        if lo == hi:
            return stale
        keep_last = end_character == 0 and (text.endswith("\n") or (not text and start_character == 0))
        drop = []
        for index in range(lo, hi):
            line = int(lines[index])
            if line == end_line and keep_last:
                lines[index] = start_line + added
            elif line == start_line:
                self._suspects.add(self._marks[index])
            else:
                drop.append(index)
        self._delete(drop)
        return stale

    def _wide_marks_touched(self, start_line: int, end_line: int, end_character: int) -> set[str]:
        """The suite keys of the wide marks whose lines an edit from ``start_line``
        to (``end_line``, ``end_character``) changes: one that ends at the start of
        a mark's first line only inserts or removes lines above it."""
        touched = set()
        for mark in self._wide:
            first = int(self._lines[self._marks.index(mark)])
            last = first + mark.lines - 1
            if start_line <= last and (end_line > first or (end_line == first and end_character > 0)):
                touched.add(mark.suite)
        return touched

    def replace_all(self) -> set[str]:
        """The whole text was replaced: every mark stays only where its line reads
        the same, but for the runs of a wide mark (returned, see edit), which may
        have changed anywhere in its lines."""
        stale = {mark.suite for mark in self._wide}
        if stale:
            self.remove(lambda _, mark: mark.suite in stale)
        self._suspects.update(self._marks)
        return stale

    def settle(self, line_text: Callable[[int], str]) -> bool:
        """Drop the marks an edit touched whose line no longer reads as it did; whether any was."""
        if not self._suspects:
            return False
        suspects, self._suspects = self._suspects, set()
        lines = self._lines
        if len(suspects) <= 32:
            drop = []
            for mark in suspects:
                index = self._marks.index(mark)  # by identity, at C speed
                if line_text(int(lines[index])) != mark.text:
                    drop.append(index)
            drop.sort()
        else:
            drop = [
                index
                for index, (line, mark) in enumerate(zip(lines.tolist(), self._marks))
                if mark in suspects and line_text(line) != mark.text
            ]
        self._delete(drop)
        return bool(drop)

    def verify(self, line_text: Callable[[int], str]) -> bool:
        """Drop every mark whose line no longer reads as it did (a file opened or
        closed with another text); whether any was."""
        self._suspects.update(self._marks)
        return self.settle(line_text)

    # -------------------------------------------------- what to show

    def shown(self, limit: int) -> list[tuple[int, Mark]]:
        """The marks to show as diagnostics, at most ``limit``: errors first, then
        warnings, then the rest, each in line order."""
        np = _numpy()
        ranks = self._ranks
        picked = np.flatnonzero(ranks < _NOT_SHOWN)
        if len(picked) > limit:
            parts, left = [], limit
            for rank in range(_NOT_SHOWN):
                found = np.flatnonzero(ranks == rank)[:left]
                parts.append(found)
                left -= len(found)
                if not left:
                    break
            picked = np.sort(np.concatenate(parts))
        marks = self._marks
        return [(line, marks[index]) for line, index in zip(self._lines[picked].tolist(), picked.tolist())]


# Display ranks: errors, warnings, the rest; marks without a code are not shown.
_NOT_SHOWN = 3


def _rank(mark: Mark) -> int:
    if mark.code is None:
        return _NOT_SHOWN
    return {Severity.ERROR: 0, Severity.WARNING: 1}.get(mark.severity, 2)
