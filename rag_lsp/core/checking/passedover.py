"""The occurrences a dataset model only counts: a cause presumed, from the
first batch, to stand on most rows has its occurrences counted per line (see
RowsContext.passes_over) and folded into one finding, its members made only
when read.
"""

from __future__ import annotations

import functools
from collections import Counter
from typing import Any, Sequence

from . import rules as registry
from ..reading.findings import Finding
from .folding import LINES_NAMED, Passed, fold, folded_groups, folded_over
from .modelrows import Unfinished, causes_of


class CountsPassedOver:
    """The part of :class:`~rag_lsp.core.checking.incremental.DatasetModel`
    that keeps the occurrences passed over (see the module's docstring):
    ``_systemic``, ``_passed`` with its interned ``_pairs`` and ``_pair_counts``,
    ``_passed_totals``, ``_passed_changes`` and ``_folded_cache``, set up in
    DatasetModel._build."""

    def _presumed(self, found: dict[int, list[Finding]], lines: int) -> frozenset[tuple[str, str]]:
        """The (code, cause) pairs that stand on most rows of the first batch (its
        ``lines`` lines, with their findings ``found``): presumed to stand on most
        rows of the file, their occurrences on later lines are only counted (see
        RowsContext.passes_over). Should the file prove otherwise, every line is
        checked again without presuming (see _refresh)."""
        if not self.workspace.folds_findings:
            return frozenset()
        rows = sum(1 for row in self.rows[:lines] if row is not None)
        causes: Counter[tuple[str, str]] = Counter()
        for placed in found.values():
            causes.update(causes_of(placed))
        return frozenset(folded_groups(causes.items(), rows))

    def _pass_over_found(self, found: dict[int, list[Finding]]) -> None:
        """Count the occurrences of the presumed causes among ``found`` (the first
        batch's findings) as those of later lines are (see _presumed), and drop
        them: a folded finding of such a cause then stands for occurrences passed
        over only, and what an editor is shown is made without looking at them
        (see _folded_of_passed)."""
        systemic = self._systemic
        for line, placed in list(found.items()):
            pairs = tuple(pair for finding in placed if (pair := (finding.code, finding.cause)) in systemic)
            if not pairs:
                continue
            kept = [finding for finding in placed if (finding.code, finding.cause) not in systemic]
            if kept:
                found[line] = Unfinished(kept) if type(placed) is Unfinished else kept
            else:
                del found[line]
            self._set_passed(line, pairs)  # type: ignore[arg-type]

    def _folded_of_passed(self) -> list[Finding] | None:
        """The folded findings of the dataset, where every cause that folds was
        passed over on every line it stands on (see _pass_over_found): each is
        then made from what was counted alone, and kept while that stays the same.
        None where a cause that folds has findings made (see _fold)."""
        counts = self._cause_line_counts()
        folding = folded_groups(counts.items(), self._row_count)
        passed = self._passed_by_cause()
        if any(self._cause_lines[key] or key not in passed for key in folding):
            return None
        made: list[Finding] = []
        cache = self._folded_cache if self._folded_cache[0] is self._facts else (self._facts, {})
        self._folded_cache = cache
        for key in sorted(folding):
            over = passed[key]
            first_line = over.first_lines[0]
            # What the folded finding shows: while that stays the same (a word
            # typed into a query of a dataset with a cause on every row), the
            # finding stays the same object, and what an editor is shown is
            # spliced (see _spliced) rather than made again whole.
            face = (counts[key], over.findings, tuple(over.first_lines), self._row_count, self.lines[first_line])
            kept = cache[1].get(key)
            if kept is not None and kept[0] == face:
                finding = kept[1]
                if kept[2] != self._passed_changes:
                    # Its members are read from the lines as they are now.
                    finding.covers.forget()  # type: ignore[union-attr]
                    cache[1][key] = (face, finding, self._passed_changes)
            else:
                finding = folded_over(key, [], over, counts[key], self._row_count, registry.explain_fold, self._members)
                cache[1][key] = (face, finding, self._passed_changes)
            made.append(finding)
        return made

    def _fold(self, findings: list[Finding]) -> list[Finding]:
        """``findings`` (every finding made) folded, with the occurrences passed over."""
        return fold(findings, self._row_count, registry.explain_fold, self._passed_by_cause(), self._members)

    def _passed_by_cause(self) -> dict[tuple[str, str], Passed]:
        """The occurrences passed over (see RowsContext.passes_over), by (code, cause)."""
        if not self._systemic:
            return {}
        totals = self._passed_totals
        if totals is None:
            totals = self._passed_totals = self._count_every_passed()
        return {
            key: Passed(lines, findings, self._first_passed_lines(key, LINES_NAMED), functools.partial(self._passed_lines, key))
            for key, (lines, findings) in totals.items()
            if lines
        }

    def _count_every_passed(self) -> dict[tuple[str, str], list[int]]:
        # Lines alike share one tuple (see _interned): each is looked into once.
        alike = Counter(map(id, filter(None, self._passed)))
        totals: dict[tuple[str, str], list[int]] = {}
        for pairs in self._pairs.values():
            lines = alike.get(id(pairs))
            if lines:
                for key, count in self._pair_counts[id(pairs)].items():
                    total = totals.setdefault(key, [0, 0])
                    total[0] += lines
                    total[1] += count * lines
        return totals

    def _count_passed_pairs(self, pairs: tuple[tuple[str, str], ...], sign: int) -> None:
        """Count (``sign`` 1) or discount (-1) a line's occurrences passed over."""
        totals = self._passed_totals
        if totals is None:
            return
        for key, count in self._pair_counts[id(pairs)].items():
            total = totals.setdefault(key, [0, 0])
            total[0] += sign
            total[1] += sign * count

    def _set_passed(self, line: int, pairs: tuple[tuple[str, str], ...]) -> None:
        """Keep the occurrences passed over on ``line``."""
        pairs = self._interned(pairs)
        self._passed_changes += 1
        before = self._passed[line]
        if before is not None:
            self._count_passed_pairs(before, -1)
        self._passed[line] = pairs
        self._count_passed_pairs(pairs, 1)

    def _set_passed_many(self, passed: dict[int, Sequence[tuple[str, str]]], first: int = 0) -> None:
        """Keep the occurrences passed over on each line of a batch (by its
        number from ``first``), as _set_passed does one line at a time: a
        dataset written by another tool passes some over on every line."""
        if self._passed_totals is not None:  # counted already: each line's count changes
            for number, pairs in passed.items():
                self._set_passed(first + number, tuple(pairs))
            return
        table = self._pairs
        store = self._passed
        # Lines alike share one tuple (see RowsContext.pass_over): looked up once.
        last: tuple[Any, Any] = (None, None)
        for number, pairs in passed.items():
            if pairs is last[0]:
                held = last[1]
            else:
                key = tuple(pairs)
                held = table.get(key)
                if held is None:
                    held = self._interned(key)
                last = (pairs, held)
            store[first + number] = held
        self._passed_changes += len(passed)

    def _first_passed_lines(self, key: tuple[str, str], count: int) -> list[int]:
        """The first ``count`` lines holding occurrences of ``key`` passed over."""
        found: list[int] = []
        for line, pairs in enumerate(self._passed):
            if pairs is not None and key in pairs:
                found.append(line)
                if len(found) == count:
                    break
        return found

    def _passed_lines(self, key: tuple[str, str]) -> list[int]:
        """Every line holding occurrences of ``key`` passed over, ascending."""
        holding = {id(pairs) for pairs in self._pairs.values() if key in pairs}
        return [line for line, pairs in enumerate(self._passed) if id(pairs) in holding]

    def _interned(self, pairs: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
        """``pairs``, as the one tuple kept for every line passing over the same."""
        held = self._pairs.get(pairs)
        if held is None:
            held = self._pairs[pairs] = pairs
            self._pair_counts[id(pairs)] = Counter(pairs)
        return held

    def _folds(self) -> bool:
        """Whether findings of one cause stand on most rows (see core.checking.folding)."""
        if not self.workspace.folds_findings or not (self._cause_lines or self._systemic):
            return False
        return bool(folded_groups(self._cause_line_counts().items(), self._row_count))

    def _cause_line_counts(self) -> Counter[tuple[str, str]]:
        """How many lines hold findings of each (code, cause), made or passed over."""
        counts = Counter(self._cause_lines)
        for key, passed in self._passed_by_cause().items():
            counts[key] += passed.line_count
        return counts

    def _presumption_holds(self) -> bool:
        """Whether each cause presumed to stand on most rows does (see _presumed)."""
        if not self.workspace.folds_findings:
            return False
        counts = self._cause_line_counts()
        return self._systemic <= folded_groups(((key, counts[key]) for key in self._systemic), self._row_count)
