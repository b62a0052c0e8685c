"""One cause, one finding: the findings most rows of a dataset share, folded.

A dataset written by another tool usually carries one defect on every row, for
one cause: every path written `./src/a.py`, a key of the exporting tool on every
row, every case asking `topK: 3`. A hundred thousand copies of one finding hide
the findings that matter and say nothing the first one does not. So when the
findings of one code and one cause (see ``Finding.cause``) stand on most rows of
a dataset, they are reported once: at the first of them, saying how many rows
and lines they cover and the first few, the likely cause, and with one quick
fix that repairs every occurrence (where each has its fix). The folded finding
keeps every finding it stands for (``Finding.covers``): machine outputs list
their lines, and ``rag-lsp check --unfold`` prints each occurrence instead.
Rows that break the pattern keep their own findings.

Folding is a pure function of a file's findings and its row count, so a fresh
check and an edited dataset model fold alike.

A dataset model goes one step further (see DatasetModel): a cause that stands on
most rows of the file's first batch is presumed to fold, and the rules only count
its occurrences on the other rows (see RowsContext.passes_over) instead of making
a finding, a range and a fix for each: a hundred thousand rows with one defect
each then cost what clean rows do. Such occurrences are :class:`Passed` lines,
and the folded finding's members are :class:`Occurrences`, made when read.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from typing import Callable, Iterable, Iterator, Mapping, NamedTuple

from ..reading.findings import FOLD_FROM_ROWS, Finding, Fix, TextEdit
from ..reading.text import Range

# How many of the lines a folded finding covers its message names.
LINES_NAMED = 3
# In the title of a fix of every occurrence a rule names (see Rule.folds), the
# title of the first occurrence's own fix: where occurrences of one cause are
# fixed in different ways (a misspelt key is renamed, or removed from a row
# that holds the key it means), the title says what the first one's does.
FIRST_FIX = "{first fix}"


def folded_groups(counts: Iterable[tuple[tuple[str, str], int]], rows: int) -> set[tuple[str, str]]:
    """The (code, cause) pairs whose findings stand on enough of ``rows`` rows
    to fold, given how many lines each stands on."""
    return {key for key, lines in counts if folds(lines, rows)}


def folds(lines: int, rows: int) -> bool:
    """Whether findings of one cause on ``lines`` of a dataset's ``rows`` rows fold."""
    return lines >= max(FOLD_FROM_ROWS, rows // 2 + 1)


def refolded(finding: Finding, rows: int, explain=None) -> Finding:
    """``finding``, folded with members made when read (see Occurrences), as it
    reads in a dataset of ``rows`` rows; any other finding as it is."""
    members = finding.covers
    if not isinstance(members, Occurrences):
        return finding
    return _folded_at(members.first, members, members.named, members.line_count, rows, explain)


def folded_ahead(
    first: Finding, count: int, line_count: int, named: list[int], lines: Callable[[], list[int]], rows: int, make: Callable[[], list[Finding]], explain=None
) -> Finding:
    """The folded finding of ``count`` findings of one cause on ``line_count``
    lines of ``rows`` rows, for a rule that knows they fold before making them
    (see folds): it makes the first, ``first``, and names the first lines,
    ``named`` (LINES_NAMED of them at most); ``lines`` gives every line
    (ascending, each once) and ``make`` every finding, when they are read, as a
    dataset model makes the occurrences it passed over."""
    members = Occurrences(count, first, named, lines, make, line_count)
    return _folded_at(first, members, named, line_count, rows, explain)


class Passed(NamedTuple):
    """Occurrences of one (code, cause) a dataset model counted without making
    their findings (see RowsContext.passes_over)."""

    # How many lines they are on, and how many findings they are (a row may list
    # a path form many times).
    line_count: int
    findings: int
    # The first LINES_NAMED lines they are on, ascending; and all of them, made
    # when asked for (a folded finding's message names only the first).
    first_lines: list[int]
    lines: Callable[[], list[int]]


# The findings of one (code, cause) on some lines, made by checking those lines
# again without passing over any cause: given the key and the lines (ascending).
Make = Callable[[tuple[str, str], list[int]], list[Finding]]


class Occurrences:
    """The findings a folded finding stands for (its ``covers``) when some were
    passed over (see Passed): their count and lines are known, the findings
    themselves are made when first read (every occurrence listed, their fixes
    asked for). Compares equal to the tuple of the same findings."""

    __slots__ = ("count", "first", "named", "line_count", "_lines", "_findings", "_make", "_every_line")

    def __init__(
        self,
        count: int,
        first: Finding,
        named: list[int],
        lines: Callable[[], list[int]],
        make: Callable[[], list[Finding]],
        line_count: int,
    ) -> None:
        self.count = count
        # How many lines they are on (without making the list of them).
        self.line_count = line_count
        # The first of the findings (the folded finding stands where it does, and
        # is ordered as it is), and the first LINES_NAMED lines.
        self.first = first
        self.named = named
        self._lines: Callable[[], list[int]] | list[int] = lines
        self._every_line = lines
        self._findings: tuple[Finding, ...] | None = None
        self._make = make

    def forget(self) -> None:
        """Forget the lines and findings read so far: the dataset changed without
        changing the count, the first finding or the lines named; they are made
        again, from the dataset as it is, when next read."""
        self._lines = self._every_line
        self._findings = None

    @property
    def lines(self) -> list[int]:
        """The lines the findings are on, ascending, each once."""
        if callable(self._lines):
            self._lines = self._lines()
        return self._lines

    @property
    def findings(self) -> tuple[Finding, ...]:
        if self._findings is None:
            self._findings = tuple(self._make())
        return self._findings

    def __len__(self) -> int:
        return self.count

    def __bool__(self) -> bool:
        return self.count > 0

    def __iter__(self) -> Iterator[Finding]:
        return iter(self.findings)

    def __getitem__(self, index):  # type: ignore[no-untyped-def]
        return self.findings[index]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (tuple, Occurrences)):
            return self.findings == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.findings)

    def __repr__(self) -> str:
        return f"Occurrences({self.count} findings)"

    def moved(self, lines: int, below: int = 0) -> Occurrences:
        """The same occurrences with those on line ``below`` or further down moved by ``lines``."""
        return Occurrences(
            self.count,
            self.first.moved(lines, below),
            [line + lines if line >= below else line for line in self.named],
            lambda: [line + lines if line >= below else line for line in self.lines],
            lambda: [finding.moved(lines, below) for finding in self.findings],
            self.line_count,
        )


def fold(
    findings: list[Finding],
    rows: int,
    explain=None,
    passed: Mapping[tuple[str, str], Passed] | None = None,
    make: Make | None = None,
) -> list[Finding]:
    """``findings`` of one dataset (in position order) with those of each cause
    that stands on most of its ``rows`` rows folded into one finding, placed
    where the first of them is. ``explain(code, cause)`` gives the likely cause
    in words and the title of the fix of every occurrence (see Rule.folds).
    ``passed``: occurrences a dataset model counted without making them, by
    (code, cause), which ``make`` makes when they are read (see Passed)."""
    passed = passed or {}
    if rows < FOLD_FROM_ROWS or (len(findings) < FOLD_FROM_ROWS and not passed):
        return findings
    lines: dict[tuple[str, str], set[int]] = defaultdict(set)
    for finding in findings:
        if finding.cause is not None:
            lines[(finding.code, finding.cause)].add(finding.range.start.line)
    counts = {key: len(held) for key, held in lines.items()}
    for key, occurrences in passed.items():
        # A line is checked either passing over a cause or not: never both.
        counts[key] = counts.get(key, 0) + occurrences.line_count
    folding = folded_groups(counts.items(), rows)
    if not folding:
        return findings
    if any(key in passed for key in folding):
        assert make is not None
        return _fold_passed(findings, rows, explain, folding, counts, passed, make)
    members: dict[tuple[str, str], list[Finding]] = {key: [] for key in folding}
    kept: list[Finding] = []
    first_at: dict[tuple[str, str], int] = {}
    for finding in findings:
        key = (finding.code, finding.cause)
        group = members.get(key) if finding.cause is not None else None  # type: ignore[arg-type]
        if group is None:
            kept.append(finding)
            continue
        if not group:
            first_at[key] = len(kept)  # type: ignore[index]
            kept.append(finding)  # replaced below by the folded finding
        group.append(finding)
    for key, group in members.items():
        kept[first_at[key]] = folded(group, len(lines[key]), rows, explain)
    return kept


def folded(members: list[Finding], lines: int, rows: int, explain=None) -> Finding:
    """The one finding that stands for ``members`` (one code, one cause, on
    ``lines`` of the dataset's ``rows`` rows), at the first of them."""
    first = members[0]
    assert first.cause is not None
    why, fix_title = explain(first.code, first.cause) if explain is not None else (None, None)
    named = covered_lines(members, LINES_NAMED)
    each_has_one = all(member.fixes and member.fixes[0].edits for member in members)
    return _message_of(first, tuple(members), named, lines, rows, why, _fixes_of(first, fix_title, len(members), each_has_one))


def _folded_at(first: Finding, members: Occurrences, named: list[int], lines: int, rows: int, explain) -> Finding:
    """folded, for members some of which were passed over: its fix of every
    occurrence is made when asked for (see every_occurrence_fix)."""
    assert first.cause is not None
    why, fix_title = explain(first.code, first.cause) if explain is not None else (None, None)
    # The members passed over are not looked at: a rule gives every finding of a
    # cause the same kind of fix as its first.
    each_has_one = bool(first.fixes and first.fixes[0].edits)
    return _message_of(first, members, named, lines, rows, why, _fixes_of(first, fix_title, len(members), each_has_one))


def _fixes_of(first: Finding, fix_title: str | None, count: int, each_has_one: bool) -> tuple[Fix, ...]:
    """A folded finding's fixes: the fix of every occurrence, where its rule names
    one and each occurrence has an edit (made when the fix is asked for, see
    every_occurrence_fix); else the first occurrence's own fix, if any."""
    if fix_title and each_has_one:
        title = fix_title.replace(FIRST_FIX, first.fixes[0].title)
        return (Fix(f"{title} ({count:,} places)", (), every=True),)
    return first.fixes[:1]


def _message_of(first: Finding, members, named: list[int], lines: int, rows: int, why: str | None, fixes: tuple[Fix, ...]) -> Finding:
    """The folded finding of ``members`` at ``first``, naming lines ``named``."""
    where = ", ".join(str(line + 1) for line in named) + (", …" if lines > len(named) else "")
    count = f"{len(members):,} findings on " if len(members) != lines else ""
    message = (
        f"{count}{lines:,} of the {rows:,} rows (lines {where}) share this finding: {first.message}. "
        f"{'Likely cause: ' + why + '. ' if why else ''}Reported once for the file; `rag-lsp check --unfold` lists every occurrence"
    )
    return Finding(first.code, first.severity, first.range, message, first.path, fixes, first.related, None, first.cause, members)


def _fold_passed(
    findings: list[Finding],
    rows: int,
    explain,
    folding: set[tuple[str, str]],
    counts: dict[tuple[str, str], int],
    passed: Mapping[tuple[str, str], Passed],
    make: Make,
) -> list[Finding]:
    """fold, where some causes that fold were passed over on some lines: each
    such cause's folded finding stands for its findings made and those passed
    over, which are made when read (see Occurrences)."""
    made: dict[tuple[str, str], list[Finding]] = {key: [] for key in folding}
    kept: list[Finding] = []
    for finding in findings:
        group = made.get((finding.code, finding.cause)) if finding.cause is not None else None  # type: ignore[arg-type]
        if group is None:
            kept.append(finding)
        else:
            group.append(finding)
    placed: list[tuple[tuple, Finding]] = []
    for key, group in made.items():
        over = passed.get(key)
        if over is None or not over.line_count:
            folded_finding = folded(group, counts[key], rows, explain)
            placed.append((group[0].sort_key(), folded_finding))
            continue
        folded_finding = folded_over(key, group, over, counts[key], rows, explain, make)
        first = folded_finding.covers.first  # type: ignore[attr-defined]
        placed.append((first.sort_key(), folded_finding))
    # Each folded finding goes where its first occurrence would be, as fold places it.
    placed.sort(key=lambda pair: pair[0])
    first_keys = {id(finding): key for key, finding in placed}
    return list(
        heapq.merge(kept, [finding for _, finding in placed], key=lambda finding: first_keys.get(id(finding)) or finding.sort_key())
    )


def folded_over(
    key: tuple[str, str], group: list[Finding], over: Passed, lines: int, rows: int, explain, make: Make
) -> Finding:
    """The one finding that stands for the findings of ``key`` made, ``group``,
    and those passed over, ``over`` (on ``lines`` of the ``rows`` rows in all):
    at the first of them, its members made when read (see Occurrences)."""
    if group and group[0].range.start.line < over.first_lines[0]:
        first = group[0]
    else:
        first = make(key, over.first_lines[:1])[0]

    def every_line() -> list[int]:
        return list(heapq.merge(covered_lines(group), over.lines()))

    def every_finding() -> list[Finding]:
        return list(heapq.merge(group, make(key, over.lines()), key=lambda finding: finding.range.start))

    named = list(heapq.merge(covered_lines(group, LINES_NAMED), over.first_lines))[:LINES_NAMED]
    members = Occurrences(len(group) + over.findings, first, named, every_line, every_finding, lines)
    return _folded_at(first, members, named, lines, rows, explain)


def every_occurrence_fix(finding: Finding, fix: Fix) -> Fix:
    """``fix``, a folded finding's fix of every occurrence (see Fix.every), with
    its edits, made from the findings it stands for: tens of thousands of edits
    are made only for the editor that asks for the fix."""
    if fix.edits or not fix.every:
        return fix
    edits = [edit for member in finding.covers for each in member.fixes[:1] for edit in each.edits]
    return Fix(fix.title, _without_overlaps(edits), fix.create_file, True)


def _without_overlaps(edits: list[TextEdit]) -> tuple[TextEdit, ...]:
    """The edits in position order, each once, none overlapping the one before
    (a client refuses a workspace edit whose edits overlap). The members' edits
    nearly always come in order already (each on its own finding's place): they
    are sorted only when they do not."""
    in_order = all(before.range.start <= after.range.start for before, after in zip(edits, edits[1:]))
    if not in_order:
        edits = sorted(set(edits), key=lambda edit: (edit.range.start, edit.range.end))
    result: list[TextEdit] = []
    end: Range | None = None
    for edit in edits:
        if end is not None and (edit.range.start < end.end or edit == result[-1]):
            continue
        result.append(edit)
        end = edit.range
    return tuple(result)


def covered_lines(members: Iterable[Finding], limit: int | None = None) -> list[int]:
    """The lines ``members`` (in position order) stand on, each once, in order;
    only the first ``limit`` of them, when given (the members are not all
    looked at: a folded finding names its first few lines)."""
    if isinstance(members, Occurrences):
        if limit is not None and limit <= LINES_NAMED:
            return members.named[:limit]
        return members.lines[:limit] if limit is not None else members.lines
    lines: list[int] = []
    for member in members:
        line = member.range.start.line
        if not lines or lines[-1] != line:
            if limit is not None and len(lines) == limit:
                break
            lines.append(line)
    return lines
