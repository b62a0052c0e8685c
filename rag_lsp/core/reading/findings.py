"""Findings: what a check reports, with the fixes that resolve it.

A finding carries its quick fixes as ready text edits, so an editor's code action
is a lookup, never a second analysis.
"""

from __future__ import annotations

import itertools
from collections import Counter
from enum import IntEnum
from typing import NamedTuple

from .text import Range

SOURCE = "rag-lsp"


class Severity(IntEnum):
    """Severities, numbered as LSP's ``DiagnosticSeverity``."""

    ERROR = 1
    WARNING = 2
    INFORMATION = 3
    HINT = 4

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Severity:
        """``"error"``, ``"warning"``, ``"information"`` (or ``"info"``), ``"hint"``."""
        key = text.strip().lower()
        if key == "info":
            key = "information"
        try:
            return cls[key.upper()]
        except KeyError:
            raise ValueError(f"unknown severity {text!r}: use error, warning, information or hint") from None


# Findings and their parts are named tuples: immutable and hashable as frozen
# dataclasses are, and built in a third of the time. A check of 100,000 rows makes
# tens of thousands of findings, and an edit above a thousand moves them all.
class TextEdit(NamedTuple):
    """Replace ``range`` of the finding's file with ``new_text``."""

    range: Range
    new_text: str


class Fix(NamedTuple):
    """A quick fix: edits to the finding's file, or a file to create."""

    title: str
    edits: tuple[TextEdit, ...] = ()
    # A workspace-relative path to create (empty), e.g. a missing dataset.
    create_file: str | None = None
    # The fix of every occurrence of a folded finding (see core.checking.folding). It comes
    # without edits: they are made from the findings it stands for when the fix
    # is asked for (see folding.every_occurrence_fix).
    every: bool = False


class Related(NamedTuple):
    """Another place that explains a finding (e.g. the first of two duplicate ids)."""

    path: str
    range: Range
    message: str


class Finding(NamedTuple):
    """One diagnostic: a code, where, how bad, and what to do about it."""

    code: str
    severity: Severity
    range: Range
    message: str
    path: str = ""
    fixes: tuple[Fix, ...] = ()
    related: tuple[Related, ...] = ()
    # Set on a finding made without the part of its message and fixes that costs
    # a search (RAG203's did-you-mean), where only some findings are shown (an
    # editor is shown the first SHOWN_PER_CODE of a code): the value it is about,
    # for its rule to finish it with once it is to be shown (see
    # rules.finished). A finding given out never has it set.
    unfinished: str | None = None
    # Why a finding of a dataset row is there, where rows of one dataset may share
    # it (an unknown key, the form of a path, a corpus): findings of one code and
    # one cause on most rows are reported once (see folding). None: never folded.
    cause: str | None = None
    # A folded finding's members: every occurrence it stands for, each the finding
    # it would be unfolded, in position order (see folding); a folding.Occurrences
    # where a dataset model passed over some of them, made when read.
    covers: tuple[Finding, ...] = ()

    def at(self, path: str) -> Finding:
        # Built directly: _replace costs twice as much, and every
        # finding of a check is placed at its file.
        return Finding(
            self.code, self.severity, self.range, self.message, path, self.fixes, self.related, self.unfinished, self.cause, self.covers
        )

    def moved(self, lines: int, below: int = 0) -> Finding:
        """The same finding with each of its places (its range, related places and
        fix edits) on line ``below`` or further down moved by ``lines`` lines."""
        if not self.fixes and not self.related and not self.covers:  # most findings: their range alone
            if lines == 0 or self.range.start.line < below:
                return self  # the same object: whoever converted it may keep that
            return Finding(
                self.code, self.severity, self.range.shifted(lines), self.message, self.path,
                unfinished=self.unfinished, cause=self.cause, covers=self.covers,
            )
        if lines == 0 or (below and not self._reaches(below)):
            return self
        fixes = self.fixes
        if not self.related and not self.covers and len(fixes) == 1 and len(fixes[0].edits) == 1:
            # One fix of one edit, most often of the finding's own range (RAG203's
            # did-you-mean, RAG206's normal form): a line inserted above a thousand
            # findings moves them all, and this costs half the general way.
            fix = fixes[0]
            edit = fix.edits[0]
            range = self.range.shifted(lines) if self.range.start.line >= below else self.range
            if edit.range == self.range:
                edit_range = range
            else:
                edit_range = edit.range.shifted(lines) if edit.range.start.line >= below else edit.range
            return Finding(
                self.code,
                self.severity,
                range,
                self.message,
                self.path,
                (Fix(fix.title, (TextEdit(edit_range, edit.new_text),), fix.create_file, fix.every),),
                (),
                self.unfinished,
                self.cause,
                self.covers,
            )

        def move(range: Range) -> Range:
            return range.shifted(lines) if range.start.line >= below else range

        # Built directly: _replace costs twice as much, and an
        # edit above many findings moves all of them.
        return Finding(
            self.code,
            self.severity,
            move(self.range),
            self.message,
            self.path,
            tuple(Fix(fix.title, tuple(TextEdit(move(edit.range), edit.new_text) for edit in fix.edits), fix.create_file, fix.every) for fix in self.fixes),
            tuple(Related(item.path, move(item.range), item.message) for item in self.related),
            self.unfinished,
            self.cause,
            # Members passed over (see folding.Occurrences) are moved when made.
            self.covers.moved(lines, below) if type(self.covers) is not tuple else tuple(member.moved(lines, below) for member in self.covers),  # type: ignore[attr-defined]
        )

    def _reaches(self, line: int) -> bool:
        """Whether any place of the finding is on ``line`` or further down."""
        return (
            self.range.start.line >= line
            or any(item.range.start.line >= line for item in self.related)
            # Members made when read (see folding.Occurrences) are taken to reach
            # it: moving them costs nothing until they are read, where making
            # their lines to look costs a pass over most rows of a dataset.
            or (any(member._reaches(line) for member in self.covers) if type(self.covers) is tuple else bool(self.covers))
            or any(edit.range.start.line >= line for fix in self.fixes for edit in fix.edits)
        )

    def sort_key(self) -> tuple:
        return (self.path, self.range.start, self.range.end, self.code, self.message)


# The most findings of one code an editor is shown for one file. Past it, a list
# of warnings no one reads costs every keystroke its conversion and transfer; one
# finding says how many more there are, and `rag-lsp check` lists them all.
SHOWN_PER_CODE = 1000

# A cause of a dataset's findings folds (see core.checking.folding) when its findings
# stand on more than half of the rows, and on at least this many: below it,
# each finding is read as easily as a summary.
FOLD_FROM_ROWS = 20


def shown_in_editor(findings: list[Finding], limit: int = SHOWN_PER_CODE) -> list[Finding]:
    """The findings of one file (in position order) an editor is shown: the first
    ``limit`` of each code, and for a code with more, one finding of that code at
    the first one left out that says how many are left out (see left_out_finding).
    A folded finding is shown without the findings it stands for, and its fix of
    every occurrence without its edits (see for_editor)."""
    if any(finding.covers for finding in findings):
        findings = [for_editor(finding) if finding.covers else finding for finding in findings]
    if len(findings) <= limit:
        return findings
    codes = [finding.code for finding in findings]
    counts = Counter(codes)
    over = [code for code, count in counts.items() if count > limit]
    if not over:
        return findings
    keep = bytearray(b"\x01") * len(findings)
    first_left_out = []
    for code in over:
        places = [index for index, each in enumerate(codes) if each == code]
        first_left_out.append(places[limit])
        for index in places[limit:]:
            keep[index] = 0
    shown = list(itertools.compress(findings, keep))
    # Each summary goes where its first left-out finding was: after the findings
    # kept before it (counted from the back, so earlier insertions do not shift).
    for index in sorted(first_left_out, reverse=True):
        finding = findings[index]
        shown.insert(sum(keep[:index]), left_out_finding(finding, counts[finding.code] - limit, limit))
    return shown


def left_out_finding(first: Finding, left_out: int, limit: int) -> Finding:
    """The finding that stands for ``left_out`` findings of ``first``'s code past
    the ``limit`` an editor is shown, where ``first`` of them is."""
    return Finding(
        first.code,
        first.severity,
        first.range,
        f"{left_out:,} more {first.code} findings in this file, from here on, are not shown (the first "
        f"{limit:,} are): `rag-lsp check {first.path or '<file>'}` lists them all",
        first.path,
    )


def for_editor(folded: Finding) -> Finding:
    """A folded finding (see core.checking.folding) as an editor is shown it: without the
    findings it stands for (its fix of every occurrence has no edits either: the
    server makes them from the dataset when the fix is asked for)."""
    return Finding(
        folded.code, folded.severity, folded.range, folded.message, folded.path, folded.fixes, folded.related, folded.unfinished, folded.cause
    )
