"""The indexes a dataset model keeps of its rows: row shapes, the hits and
corpora rows ask for, expected paths and those missing, and each registered
grouping's groups (see core.checking.datasetindex); each updated by the edit
that changes a row.
"""

from __future__ import annotations

import collections
import itertools
import operator
from collections import Counter
from dataclasses import replace
from typing import Any, Sequence

from . import rules as registry
from .analyze import finish
from .contexts import ID_KEYS, DatasetContext, RowContext, RowsOnLines
from .expectedpaths import PathTally, case_path_tallies, tallied_as_case
from ..reading.findings import FOLD_FROM_ROWS, Finding
from .folding import Occurrences, folds, refolded
from ..workspace.manifests import GDI_TEXT, RAG_CASE
from ..workspace.rows import majority_shape
from ..workspace.suitefacts import DatasetUse
from .modelrows import ABSENT_OF, CORPORA_OF, LISTED_OF, ModelRow, SHAPE_OF, TOP_K_OF, counts_as_case


# A group of more rows than this is placed after every row is given its line
# again (see _check_groups), not row by row.
_FOUND_ONE_BY_ONE = 64


class KeepsIndexes:
    """The part of :class:`~rag_lsp.core.checking.incremental.DatasetModel`
    that keeps its indexes (see the module's docstring): ``_shapes``, ``_top_ks``,
    ``_corpora``, ``_listed`` and ``_absent``, and ``_groups``, set up with the
    rows and lines in DatasetModel._build."""

    def _unindex(self, row: ModelRow | None) -> None:
        """Take ``row`` out of the indexes (see _index_many)."""
        if row is None:
            return
        if row.shape is not None:
            self._shapes[row.shape] -= 1
        self._top_ks[row.top_k] -= 1
        if row.corpora:
            self._corpora.subtract(row.corpora)
        self._listed -= row.listed
        self._absent -= row.absent
        if row.kept is not None:
            for _, groups in self._groups:
                groups.remove(row)

    def _index_many(self, rows: Sequence[ModelRow]) -> None:
        """Add ``rows`` to the indexes (at once: a first reading adds every line)."""
        shapes = self._shapes
        # Through attrgetter and map, each pass over a first reading's hundred
        # thousand rows runs in C.
        for shape, count in Counter(map(SHAPE_OF, rows)).items():
            if shape is not None:
                shapes[shape] += count
        self._top_ks.update(map(TOP_K_OF, rows))
        # Rows alike ask alike: each list of names is counted once, in C, then by name.
        corpora = self._corpora
        for names, count in Counter(map(CORPORA_OF, rows)).items():
            for name in names:
                corpora[name] += count
        self._listed += sum(map(LISTED_OF, rows))
        self._absent += sum(map(ABSENT_OF, rows))
        for _, groups in self._groups:
            groups.add(rows)

    def _line_of(self, row: ModelRow) -> int:
        """The line ``row`` is on now: where it was placed, unless lines came or
        went above it since; then found by list.index, which compares by identity
        here (rows have no __eq__), a C-speed scan paid only for such a row."""
        line = row.line
        if not (0 <= line < len(self.rows) and self.rows[line] is row):
            self._freeze_groups_given()
            line = row.line = self.rows.index(row)
        return line

    def _renumber(self) -> None:
        """Set every row's line again (before looking up many of them), from the
        first line an edit added or took out since they were last set: an edit
        within a line places its new row on its line, and the rows around it
        stay on theirs."""
        first = self._exact_up_to
        if first >= len(self.rows):
            return
        self._freeze_groups_given()
        rows = self.rows[first:]
        # In C: a large dataset is renumbered at each edit that adds a line.
        present = list(map(operator.is_not, rows, itertools.repeat(None)))
        collections.deque(
            map(setattr, itertools.compress(rows, present), itertools.repeat("line"), itertools.compress(itertools.count(first), present)),
            maxlen=0,
        )
        self._exact_up_to = len(self.rows)

    def _touch_groups(self, row: ModelRow | None) -> None:
        if row is not None and row.kept is not None:
            for _, groups in self._groups:
                groups.touch(row)

    def _shape(self) -> str | None:
        return majority_shape(self._shapes[RAG_CASE], self._shapes[GDI_TEXT])

    def _tally(self, row: ModelRow) -> None:
        """Count the expected paths of a row holding its value, as
        RowsContext.paths would were the row a case (see _path_tally)."""
        self._tally_many([row])

    def _tally_many(self, rows: list[ModelRow]) -> None:
        """:meth:`_tally` of each row, counted together (see case_path_tallies)."""
        cases = [row for row in rows if tallied_as_case(row)]
        for row, (listed, absent) in zip(cases, case_path_tallies(self.workspace, [row.value for row in cases])):
            row.listed, row.absent = listed, absent

    def _path_tally(self, use: DatasetUse, shape: str | None) -> PathTally:
        """The file's PathTally: its cases' counts (in a file of gdi rows no row
        is a case), where expected paths are checked against the workspace."""
        if shape == GDI_TEXT or "path" not in use.matches or not use.paths_in_workspace:
            return PathTally()
        return PathTally(self._listed, self._absent, self.workspace.folds_findings)

    def _use(self, use: DatasetUse, shape: str | None) -> DatasetUse:
        """``use`` with whether the file's expected paths are elsewhere."""
        elsewhere = self._path_tally(use, shape).elsewhere
        return replace(use, paths_elsewhere=True) if elsewhere else use

    def corpora_asked(self) -> tuple[Counter[str], int]:
        """How many rows ask to search each corpus, and how many rows there are
        (see Workspace.corpora_asked)."""
        return +self._corpora, self._row_count

    def top_ks_asked(self) -> tuple[Counter[int], int]:
        """How many rows ask for each number of hits (``input.topK``, a positive
        integer), and how many rows there are (see Workspace.top_ks_asked)."""
        return +Counter({top_k: count for top_k, count in self._top_ks.items() if top_k}), self._row_count

    def _check_groups(self, shape: str | None) -> None:
        """Make again the findings of each grouping rule on the groups whose
        rows changed (see core.checking.datasetindex)."""
        renumbered = False
        if self._row_count != self._grouped_at_rows:
            self._refold_for_rows()
        for rule, groups in self._groups:
            if groups.changed is None and self.checked and not renumbered:
                # Every group again: lines may have come and gone since the rows were placed.
                self._renumber()
                renumbered = True
            values = groups.to_check()
            grouped: dict[Any, Sequence[RowContext]] = {}
            every_row_counts = self._every_row_counts_as_case(shape)
            for value in values:
                if groups.size_of(value) > _FOUND_ONE_BY_ONE and not renumbered:
                    # Each row of a large group found by a search of the lines (see
                    # _line_of) would cost the square of its size: all are placed again.
                    self._renumber()
                    renumbered = True
                if renumbered:  # every row is on its line: sorted in C, kept so
                    rows = groups.in_line_order(value)
                else:
                    rows = sorted(groups.rows_of(value), key=self._line_of)
                if not every_row_counts:
                    rows = [row for row in rows if counts_as_case(row, shape)]
                if len(rows) > 1:
                    grouped[value] = given = RowsOnLines(self.path, rows)
                    if len(rows) > _FOUND_ONE_BY_ONE:
                        # Its lines are read from its rows when looked at (see RowsOnLines).
                        self._groups_given.add(given)
                    else:
                        given.freeze()
            if not grouped:
                continue
            context = DatasetContext(
                self.workspace, self.path, grouped, groups.rows, id_key=ID_KEYS[shape or RAG_CASE], row_count=self._row_count
            )
            for finding in finish(self.workspace, self.path, list(rule.checks[registry.DATASET](context))):
                row = self.rows[finding.range.start.line]
                value = groups.value(row) if row is not None else None
                groups.found.setdefault(value, []).append(finding)

    def _freeze_groups_given(self) -> None:
        """Rows are about to be given other lines: the groups given to the
        rules keep the lines they were given with (see RowsOnLines)."""
        for given in self._groups_given:
            given.freeze()
        self._groups_given.clear()

    def _every_row_counts_as_case(self, shape: str | None) -> bool:
        """Whether every row counts as a case checked as ``shape`` (see
        counts_as_case): no row of the other shape, as the shape counts say."""
        if shape is None:
            return True
        if shape == GDI_TEXT:
            return self._shapes[GDI_TEXT] == self._row_count
        return self._shapes[GDI_TEXT] == 0

    def _refold_for_rows(self) -> None:
        """The row count changed: whether a group's findings fold, and how many
        rows a folded one says the dataset has, depend on it (see
        DatasetContext.folds). A folded finding that still folds says the new
        count, its members as they were; a group that folds now, or no longer
        does, is made again."""
        rows = self._row_count
        for _, groups in self._groups:
            if groups.changed is None:
                continue  # every group is made again
            for value, made in groups.found.items():
                if not any(isinstance(finding.covers, Occurrences) for finding in made):
                    continue
                if all(not isinstance(finding.covers, Occurrences) or folds(finding.covers.line_count, rows) for finding in made):
                    # Finished again as when made (the path, severity overrides).
                    groups.found[value] = finish(self.workspace, self.path, [refolded(finding, rows, registry.explain_fold) for finding in made])
                else:
                    groups.changed.add(value)
            for value in groups.shared:
                size = len(groups.rows_of(value))
                if value in groups.changed or size <= FOLD_FROM_ROWS:
                    continue
                made = groups.found.get(value, ())
                if not any(isinstance(finding.covers, Occurrences) for finding in made) and folds(size - 1, rows):
                    groups.changed.add(value)
        self._grouped_at_rows = rows

    def _move_grouped(self, boundary: int, delta: int) -> None:
        # Each place of a grouping rule's finding (a repeat, the first use, the
        # fix) moves only if it is below the edit.
        for _, groups in self._groups:
            found = groups.found
            for value, made in found.items():
                if groups.changed is not None and any(type(finding.covers) is Occurrences for finding in made):
                    # A folded finding is made again from its rows as they are
                    # then: its members, made when read, would otherwise be
                    # moved as many times over as lines came and went above them.
                    groups.changed.add(value)
                    continue
                found[value] = [self._noted(finding, finding.moved(delta, below=boundary), delta) for finding in made]

    def _noted(self, finding: Finding, moved: Finding, delta: int) -> Finding:
        """``moved``, which is ``finding`` moved with its lines, noted for take_moves."""
        if moved is not finding:
            noted = self._moves.pop(id(finding), None)
            origin, distance = (noted[1], noted[2]) if noted is not None and noted[0] is finding else (finding, 0)
            self._moves[id(moved)] = (moved, origin, distance + delta)
        return moved

    def take_moves(self) -> dict[int, tuple[Finding, Finding, int]]:
        """The findings across lines (RAG202's) that only moved with their lines
        since the last call: by the moved finding's id, (that finding, the
        finding it was then, lines moved). The findings of lines are never
        moved (see ShownFindings).

        Whoever converted the earlier finding (for a client, say) can shift that
        instead of converting again. Each entry holds its finding, so an id is
        not reused.
        """
        moves, self._moves = self._moves, {}
        return moves
