"""What an editor is shown of a dataset model: each finding as it was placed
on its line, at most a few of each code, folded where one cause stands on
most rows; made again from what was last shown where an edit changed little.
"""

from __future__ import annotations

import bisect
from collections import Counter
from dataclasses import dataclass, field
from typing import NamedTuple, Sequence

from . import rules as registry
from ..reading.findings import SHOWN_PER_CODE, Finding, for_editor, left_out_finding, shown_in_editor
from .folding import LINES_NAMED, Occurrences, covered_lines
from .modelrows import NO_FINDINGS, Unfinished, causes_of


class Over(NamedTuple):
    """Where a code with more findings than an editor is shown stops being shown."""

    # The line of its last finding shown.
    last_shown_line: int
    # Its first finding left out, where the finding that counts those is, and
    # the line that finding is on (it may have been placed on another).
    first_left_out: Finding
    first_left_out_line: int
    # The finding that counts those left out (see left_out_finding).
    summary: Finding


@dataclass
class LastShown:
    """What an editor was last shown of a dataset (see DatasetModel.shown), with
    what the next one can be made from."""

    limit: int
    across: list[Finding]
    shown: ShownFindings
    # Per code with more findings than the limit (see Over).
    over: dict[str, Over]
    # The lines edited since (all within lines), with their findings then.
    edited: dict[int, list[Finding]]
    # Shown folded (see core.checking.folding): the (code, cause) pairs folded, and the
    # last line a folded finding names (its lines, where the first stands).
    folded: frozenset[tuple[str, str]] | None = None
    named_up_to: int = -1
    # The occurrences passed over on the lines edited since, then (see DatasetModel._passed).
    edited_passed: dict[int, tuple[tuple[str, str], ...]] = field(default_factory=dict)


class ShownFindings(NamedTuple):
    """What an editor is shown of a dataset (see DatasetModel.shown_as_placed):
    the findings, each as it was placed on its line, and the line each is on
    now. A finding of a line is placed once, when the line is checked; lines
    that come or go above it move the line it is on, not the finding. So
    pressing Enter above a thousand findings changes a thousand numbers, and
    whoever converted a finding (for a client) shifts that conversion's lines."""

    placed: list[Finding]
    lines: list[int]

    def findings(self) -> list[Finding]:
        """The findings with their places on the lines they are on now."""
        return [
            finding if finding.range.start.line == line else finding.moved(line - finding.range.start.line)
            for finding, line in zip(self.placed, self.lines)
        ]


class ShowsFindings:
    """The part of :class:`~rag_lsp.core.checking.incremental.DatasetModel`
    that gives out its findings (see the module's docstring): from the findings
    placed on lines (``_placed``, ``_lines_with_findings``, ``_lines_by_code``,
    ``_placed_counts``, which it places) and what was last shown
    (``_last_shown``), set up in DatasetModel._build."""

    def _place_every_line(self, found: dict[int, list[Finding]]) -> None:
        """Keep the findings of a reading of every line (as _place, without a
        step per line: nearly all have none)."""
        self._placed = [NO_FINDINGS] * len(self.rows)
        by_code: dict[str, list[int]] = {}
        counts: Counter[str] = Counter()
        causes: Counter[tuple[str, str]] = Counter()
        placed_lines = self._placed
        for line, placed in found.items():
            placed_lines[line] = placed
            if len(placed) == 1:  # nearly every line with findings
                code, cause = placed[0].code, placed[0].cause
                counts[code] += 1
                if cause is not None:
                    causes[code, cause] += 1
                lines = by_code.get(code)
                if lines is None:
                    by_code[code] = [line]
                else:
                    lines.append(line)
                continue
            counts.update(finding.code for finding in placed)
            causes.update(causes_of(placed))
            for code in {finding.code for finding in placed}:
                by_code.setdefault(code, []).append(line)
        self._lines_with_findings = sorted(found)
        self._lines_by_code = {code: sorted(lines) for code, lines in by_code.items()}
        self._placed_counts = counts
        self._cause_lines = causes

    def _place(self, lines: Sequence[int], found: dict[int, list[Finding]]) -> None:
        """Keep the findings of checked ``lines`` (ascending) on them."""
        placed_lines = self._placed
        by_code = self._lines_by_code
        for line in lines:
            placed = found.get(line, NO_FINDINGS)
            placed_lines[line] = placed
            if placed:
                bisect.insort(self._lines_with_findings, line)
                self._placed_counts.update(finding.code for finding in placed)
                self._cause_lines.update(causes_of(placed))
                for code in {finding.code for finding in placed}:
                    bisect.insort(by_code.setdefault(code, []), line)

    def _shown_on(self, line: int) -> Sequence[Finding]:
        """The findings placed on ``line``, finished: they are given out (see
        Finding.unfinished). They stay on the line they were placed on, which
        lines above may have moved since (see ShownFindings)."""
        placed = self._placed[line]
        if type(placed) is Unfinished:
            placed = self._placed[line] = [registry.finished(self.workspace, finding) for finding in placed]
        return placed or NO_FINDINGS

    def findings(self) -> list[Finding]:
        """Every finding of the dataset as it is now (as ``analyze_file`` gives)."""
        across = self._refresh()
        if self._folds():
            folded = self._folded_of_passed()
            if folded is not None:
                return self._given_out(merged(across, folded), None).findings()
        findings = self._given_out(across, None).findings()
        if not self.workspace.folds_findings:
            return findings
        return self._fold(findings)

    def _shown_folded(self, shown: ShownFindings) -> ShownFindings:
        """``shown`` with each folded finding as an editor is shown it (see
        findings.for_editor), kept as what was last shown."""
        if not any(finding.covers for finding in shown.placed):
            return shown
        stripped = ShownFindings([for_editor(finding) if finding.covers else finding for finding in shown.placed], shown.lines)
        if self._last_shown is not None and self._last_shown.shown is shown:
            self._last_shown.shown = stripped
        return stripped

    def shown(self, limit: int = SHOWN_PER_CODE) -> list[Finding]:
        """The findings an editor is shown, as ``shown_in_editor(findings())``
        gives them (see shown_as_placed)."""
        return self.shown_as_placed(limit).findings()

    def shown_as_placed(self, limit: int = SHOWN_PER_CODE) -> ShownFindings:
        """The findings an editor is shown (see shown), each as it was placed on
        its line with the line it is on now: the findings of the lines below an
        edit are many, and only the first ``limit`` of each code are looked at;
        those of lines that only moved are the same objects as before."""
        across = self._refresh()
        if self._folds():
            folded = self._folded_of_passed()
            if folded is not None:
                # Each folded finding is one more finding across lines: the lines
                # are looked at as in a dataset without them, and a keystroke that
                # changes none of them is spliced (see _spliced).
                return self._shown_folded(self._given_out(merged(across, folded), limit))
            # A cause on most rows is one finding: what an editor is shown is made
            # from every finding, folded, as analyze_file's are; a keystroke that
            # changes nothing shown keeps it (see _spliced_fold).
            kept = self._spliced_fold(across, limit)
            if kept is not None:
                return kept
            folded = self._fold(self._given_out(across, None).findings())
            groups = frozenset((finding.code, finding.cause) for finding in folded if finding.covers)
            named = max((line for finding in folded if finding.covers for line in covered_lines(finding.covers, LINES_NAMED)), default=-1)
            shown_list = shown_in_editor(folded, limit)
            shown = ShownFindings(shown_list, [finding.range.start.line for finding in shown_list])
            self._last_shown = LastShown(limit, across, shown, {}, {}, groups, named)
            return shown
        return self._given_out(across, limit)

    def _spliced_fold(self, across: list[Finding], limit: int) -> ShownFindings | None:
        """What an editor was last shown of a folded dataset, when only edits
        within lines came since that change nothing it shows: on each edited
        line, the same findings of each folded cause (in number) and the same
        other findings, on none of the lines a folded finding names. Typing in
        a query of a dataset with a cause on every row then costs its line, not
        a fold of every finding. None otherwise."""
        last = self._last_shown
        if last is None or last.folded is None or last.limit != limit or not _took_across(last, across):
            return None
        groups = last.folded
        for line, found_before in last.edited.items():
            if line <= last.named_up_to:
                return None
            now = self._placed[line] or ()
            members_before = Counter(key for finding in found_before if (key := (finding.code, finding.cause)) in groups)
            members_before.update(key for key in last.edited_passed.get(line, ()) if key in groups)
            members_now = Counter(key for finding in now if (key := (finding.code, finding.cause)) in groups)
            members_now.update(key for key in self._passed[line] or () if key in groups)
            if members_before != members_now:
                return None
            others_before = [finding for finding in found_before if (finding.code, finding.cause) not in groups]
            others_now = [finding for finding in now if (finding.code, finding.cause) not in groups]
            if others_before != others_now:
                return None
        last.edited.clear()
        last.edited_passed.clear()
        return last.shown

    def _given_out(self, across: list[Finding], limit: int | None) -> ShownFindings:
        """The findings of every line, with those ``across`` lines merged in, in
        position order; with a ``limit``, as shown_in_editor gives them: only the
        lines of the first ``limit`` + 1 findings of each code are looked at,
        the rest are counted."""
        if limit is not None:
            spliced = self._spliced(across, limit)
            if spliced is not None:
                return spliced
        totals = self._placed_counts + Counter(finding.code for finding in across)
        if limit is None:
            lines: Sequence[int] = self._lines_with_findings
        else:
            # Past its first limit + 1 findings, a code's findings are not shown
            # (nor is the one that says so): the lines after them are not looked at for it.
            wanted: set[int] = set()
            for code, code_lines in self._lines_by_code.items():
                wanted.update(code_lines if totals[code] <= limit else self._first_lines_holding(code, code_lines, limit + 1))
            lines = sorted(wanted)
        given: list[Finding] = []
        given_lines: list[int] = []
        counts: dict[str, int] = {}
        # Where a code's first finding left out would be, that finding, and its line.
        left_out: list[tuple[int, Finding, int]] = []
        # The line of each code's last finding shown.
        last_lines: dict[str, int] = {}
        cap = limit if limit is not None else -1

        def give(finding: Finding, line: int) -> None:
            code = finding.code
            number = counts[code] = counts.get(code, 0) + 1
            if cap < 0 or number < cap:
                given.append(finding)
                given_lines.append(line)
            elif number == cap:
                given.append(finding)
                given_lines.append(line)
                last_lines[code] = line
            elif number == cap + 1:
                left_out.append((len(given), finding, line))

        pending = 0  # the next finding across lines to give out
        for line in lines:
            while pending < len(across) and across[pending].range.start.line < line:
                give(across[pending], across[pending].range.start.line)
                pending += 1
            placed = self._shown_on(line)
            if pending < len(across) and across[pending].range.start.line == line:
                end = pending
                while end < len(across) and across[end].range.start.line == line:
                    end += 1
                group = sorted([*placed, *across[pending:end]], key=key_on_line)
                pending = end
                for finding in group:
                    give(finding, line)
            elif cap < 0:  # every finding given: none to count (a large dataset's thousands)
                given += placed
                given_lines += [line] * len(placed)
            else:
                for finding in placed:
                    give(finding, line)
        for finding in across[pending:]:
            give(finding, finding.range.start.line)
        # The finding that says how many are left out goes where the first of them
        # is; how many, the file's count (not every line of them was looked at).
        over: dict[str, Over] = {}
        for index, finding, line in reversed(left_out):
            summary = left_out_finding(finding, totals[finding.code] - cap, cap)
            given.insert(index, summary)
            given_lines.insert(index, line)
            over[finding.code] = Over(last_lines[finding.code], finding, line, summary)
        shown = ShownFindings(given, given_lines)
        if limit is not None:
            self._last_shown = LastShown(limit, across, shown, over, {})
        return shown

    def _first_lines_holding(self, code: str, lines: list[int], count: int) -> list[int]:
        """The first of ``lines`` (the lines with findings of ``code``) that hold
        ``count`` of its findings between them. A line may hold hundreds (a case
        listing many paths), and a line looked at has all its findings moved to it:
        taking as many lines as findings moved ten times those shown."""
        placed = self._placed
        held = 0
        for position, line in enumerate(lines):
            here = placed[line]
            held += 1 if len(here) == 1 else sum(1 for finding in here if finding.code == code)
            if held >= count:
                return lines[: position + 1]
        return lines

    def _spliced(self, across: list[Finding], limit: int) -> ShownFindings | None:
        """What an editor is shown (see _given_out) made from what it was last
        shown, when only edits within lines came since: the edited lines'
        findings replace theirs, and a code's summary counts its findings again.
        A keystroke then costs its line, not the thousands of findings shown.
        None when an edited line's findings change which of a code's findings
        are shown, or the findings across lines changed: then all are looked at."""
        last = self._last_shown
        if last is None or last.folded is not None or last.limit != limit or not _took_across(last, across):
            return None
        if not last.edited:
            return last.shown
        totals = self._placed_counts + Counter(finding.code for finding in across)
        across_lines = {finding.range.start.line for finding in across}
        given, given_lines = last.shown
        recounted: set[str] = set()
        for line, found_before in sorted(last.edited.items()):
            if line in across_lines:
                return None
            before = Counter(finding.code for finding in found_before)
            now = Counter(finding.code for finding in self._placed[line] or ())
            shown_codes: set[str] = set()
            for code in before.keys() | now.keys():
                over = last.over.get(code)
                if over is None:  # every finding of the code is shown, and stays so
                    if totals[code] > limit:
                        return None
                    shown_codes.add(code)
                elif line < over.last_shown_line:  # its findings here are shown
                    if before[code] != now[code]:
                        return None
                    shown_codes.add(code)
                elif line > over.first_left_out_line:  # here they are only counted
                    if before[code] != now[code]:
                        if totals[code] <= limit:
                            return None
                        recounted.add(code)
                else:
                    return None
            # An edited line was checked again since: its findings are placed on it.
            shown = [finding for finding in self._shown_on(line) if finding.code in shown_codes] if shown_codes & now.keys() else []
            first = bisect.bisect_left(given_lines, line)
            after = bisect.bisect_right(given_lines, line)
            given = given[:first] + shown + given[after:]
            given_lines = given_lines[:first] + [line] * len(shown) + given_lines[after:]
        over_now = dict(last.over)
        for code in recounted:
            over = last.over[code]
            at = bisect.bisect_left(given_lines, over.first_left_out_line)
            while given[at] is not over.summary:
                at += 1
            recount = left_out_finding(over.first_left_out, totals[code] - limit, limit)
            given = given[:at] + [recount] + given[at + 1 :]
            over_now[code] = over._replace(summary=recount)
        shown = ShownFindings(given, given_lines)
        self._last_shown = LastShown(limit, across, shown, over_now, {})
        return shown


def _took_across(last: LastShown, across: list[Finding]) -> bool:
    """Whether the findings ``across`` lines read in an editor as those last
    shown: the same, or made again alike (the folded finding of one case id on
    every row, made again at each edit of one of those rows). What was last
    shown then holds the new ones, in the places of the old."""
    if len(across) != len(last.across):
        return False
    again = [(theirs, mine) for mine, theirs in zip(across, last.across) if mine is not theirs]
    if not again:
        return True
    if not all(_alike_in_editor(mine, theirs) for theirs, mine in again):
        return False
    placed, lines = last.shown
    placed = list(placed)
    for theirs, mine in again:
        # Findings across lines are not moved once shown: each is on its own line.
        at = bisect.bisect_left(lines, theirs.range.start.line)
        while at < len(placed) and lines[at] == theirs.range.start.line and placed[at] is not theirs:
            at += 1
        if at < len(placed) and placed[at] is theirs:
            placed[at] = mine
    last.shown = ShownFindings(placed, lines)
    last.across = across
    return True


def _alike_in_editor(mine: Finding, theirs: Finding) -> bool:
    """Whether two findings read alike in an editor: each of its places, words
    and fixes, and as many findings covered."""
    return (
        mine.code == theirs.code
        and mine.range == theirs.range
        and mine.message == theirs.message
        and mine.severity == theirs.severity
        and mine.related == theirs.related
        and mine.fixes == theirs.fixes
        and mine.cause == theirs.cause
        and type(mine.covers) is type(theirs.covers)
        and len(mine.covers) == len(theirs.covers)
    )


def key_on_line(finding: Finding) -> tuple:
    # position_key for findings that start on one line, some placed on it when
    # it was another (see ShownFindings): the line itself is left out.
    start, end = finding.range.start, finding.range.end
    return (start.character, end.line - start.line, end.character, finding.code, _ordered_by(finding).message)


def position_key(finding: Finding) -> tuple:
    # The order of Finding.sort_key within one file, as plain numbers and strings.
    start, end = finding.range.start, finding.range.end
    return (start.line, start.character, end.line, end.character, finding.code, _ordered_by(finding).message)


def _ordered_by(finding: Finding) -> Finding:
    """The finding whose place in the order ``finding`` takes: a folded finding
    stands where its first occurrence would (as core.checking.folding places it)."""
    covers = finding.covers
    return covers.first if type(covers) is Occurrences else finding  # type: ignore[attr-defined]


def merged(across: list[Finding], folded: list[Finding]) -> list[Finding]:
    """The findings across lines with ``folded`` among them, in position order."""
    return sorted([*across, *folded], key=position_key)
