"""An open dataset, re-checked in proportion to each edit.

A dataset line's findings depend on its own text and on a few facts of the whole
file and workspace (how the suites read it, its row shape, the workspace's files),
so :class:`DatasetModel` keeps each line's row and findings and, on an edit,
decodes and checks only the lines the edit replaced. Facts that cross lines are
kept as indexes updated by the same edit: the case ids (for RAG202) and the count
of rows of each shape. When a fact changes (a suite now reads the file with
``match: id``, the workspace gained a file), every line is checked again.

Nothing here walks all lines on an edit: lines below an insertion are not
visited, only the findings on them are moved. A line keeps only what the indexes
need (its shape and case id); its decoded value is read again while the line is
checked, and dropped after: values are most of a large dataset's memory, and a
line is checked again only when it or a fact changes. The result is exactly
:func:`~rag_lsp.core.checking.analyze.analyze_file`'s for the same text (the same rules,
the same contexts); a property test holds the two together.
"""

from __future__ import annotations

import bisect
import functools
from array import array
import itertools
import operator
import tempfile
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, NamedTuple, Sequence

from . import rules as registry
from .analyze import check_rows, finish
from .contexts import ID_KEYS, DatasetContext, PathTally, RowContext, RowsContext, case_path_tallies, first_missing_index, tallied_as_case
from .datasetindex import KeptGroups, kept_are_valid, kept_of
from ..reading.findings import SHOWN_PER_CODE, Finding, for_editor, left_out_finding, shown_in_editor
from .folding import LINES_NAMED, Occurrences, Passed, covered_lines, fold, folded_groups, folded_over
from ..reading.jsonrows import fine_row
from ..workspace.manifests import GDI_TEXT, RAG_CASE
from .parallel import Helper, TwoEnds, cores
from ..workspace.settings import Settings
from ..reading.text import Position, line_of
from ..workspace.rows import DatasetRow, corpora_asked, majority_shape, read_lines, row_shape, top_k_asked
from ..reading.sources import lines_size, utf8_size
from ..workspace.suitefacts import DatasetUse
from ..workspace.workspace import Workspace

# Lines checked together: a batch holds its rows' decoded values while it is
# checked. With a helper, the smaller the batch, the less either side waits for
# the other's last one; but each batch also costs a call per rule and an
# answer through the pipe, and 1024 lines opened no faster than 2048.
_CHECK_BATCH = 2048
# A first reading's batch also ends once its lines hold this many characters
# (2048 lines of 256): a case listing thousands of paths is as much work as a
# hundred short ones, and a file of a few thousand such lines is then shared
# with a helper like one of a hundred thousand short lines.
_BATCH_CHARACTERS = _CHECK_BATCH * 256
_NO_FINDINGS: tuple[Finding, ...] = ()
# The least batches a helper process is given a share of: below, starting one, or
# the round trips, cost about what it would save.
SHARED_FROM_BATCHES = 12
# A dataset file at least this large most likely holds that many batches (lines
# of 80 bytes or more): a one-shot check starts a helper for it.
SHARED_FROM_BYTES = SHARED_FROM_BATCHES * _CHECK_BATCH * 80
# A dataset file at least this large may hold more than a batch of short lines
# (`{}` is 3 bytes): a one-shot check reads it with a model, which counts a
# cause on most rows instead of making a finding of each (see _presumed).
MODELLED_FROM_BYTES = _CHECK_BATCH * 4
# A helper's answer for each line of a batch is a byte (see screen_batch): a
# blank line, a line it did not pass, or a plain line's row shape and whether
# it was read exactly (2 + twice the shape's index below + 1 if exactly).
BLANK, LOOK = 0, 1
_PLAIN = {
    2 + 2 * index + exact: (shape, bool(exact))
    for index, shape in enumerate((None, RAG_CASE, GDI_TEXT))
    for exact in (0, 1)
}
_PLAIN_CODE = {entry: code for code, entry in _PLAIN.items()}
# A helper's counts for each line: its expected paths, those not workspace files,
# and the hits it asks for (see _Line.top_k), as unsigned 32-bit integers.
_COUNTS = 3
_MOST_COUNTED = 2**32 - 1


class _Line(DatasetRow):
    """A model's row: its shape and case id stay; its value (a JSON object or
    array) is dropped once the line is checked, and read again only to check it
    again."""

    __slots__ = ("kept", "dropped", "line", "listed", "absent", "top_k", "corpora")

    # What the dataset rules that group rows keep of a row's JSON object (see
    # core.checking.datasetindex), set by prepare.
    kept_of: Callable[[dict[str, Any], str | None], Any] | None = None

    @classmethod
    def prepare(cls) -> None:
        """Learn what the registered groupings keep of a row (once)."""
        if cls.kept_of is None:
            cls.kept_of = staticmethod(kept_of([rule.grouping for rule in registry.groupings()]))  # type: ignore[assignment]

    def __init__(self, text: str, refused: str | None = None) -> None:
        super().__init__(text, refused)
        value = self.value
        # What the groupings keep of it (None: nothing).
        self.kept = self.kept_of(value, self.shape) if type(value) is dict else None  # type: ignore[misc]
        # The hits it asks for (`input.topK`, a positive integer), else 0: a
        # suite's `k` is weighed against the dataset's (see Workspace.top_ks_asked).
        self.top_k = top_k_asked(value)
        # The corpora it asks to search (`input.corpora`): weighed against those
        # its suites' targets serve (see Workspace.corpora_asked).
        self.corpora = corpora_asked(value)
        self.dropped = False
        # The line the row was placed on; lines above it may have come or gone since.
        self.line = -1
        # Its expected paths, and how many are not workspace files (see _tally).
        self.listed = self.absent = 0

    # Rows read with nothing to report (see fine_row): one call each, as a
    # large dataset has a hundred thousand of them.
    @classmethod
    def read_fine(cls, text: str, value: Any) -> _Line:
        row = fine_row(cls, text, value)
        row.shape = row_shape(value)
        row.kept = cls.kept_of(value, row.shape) if type(value) is dict else None  # type: ignore[misc]
        row.dropped = False
        row.line = -1
        row.listed = row.absent = 0
        row.top_k = top_k_asked(value)
        row.corpora = corpora_asked(value)
        return row

    @classmethod
    def plain(
        cls, text: str, shape: str | None, kept: Any, exact: bool, line: int, listed: int, absent: int, top_k: int
    ) -> _Line:
        """The row of a line another process read and checked with no findings
        but those of rules that finish their findings (see screen_batch), placed
        on ``line``: what reading it here would keep, its value dropped."""
        row = fine_row(cls, text, None, exact)
        row.shape = shape
        row.kept = kept
        row.dropped = True
        row.line = line
        row.listed = listed
        row.absent = absent
        row.top_k = top_k
        row.corpora = ()
        return row

    def restore(self) -> None:
        if self.dropped:
            self.value = self.decode_again()
            self.dropped = False

    def drop(self) -> None:
        value = self.value
        if type(value) is dict or type(value) is list:
            self.value = None
            self.dropped = True


class DatasetModel:
    """A dataset kept line by line: :meth:`edit` records what changed, and
    :meth:`findings` checks only that."""

    def __init__(
        self,
        workspace: Workspace,
        path: str,
        text: str | None,
        helper: Helper | None = None,
        lines: list[str] | None = None,
        every_finding: bool = False,
        size: int | None = None,
    ) -> None:
        """``helper``: a second process that may take a share of the first reading
        of a large dataset (see rag_lsp.core.checking.parallel). ``lines``: the text split
        at "\n", when the caller has it (the model keeps and changes that list);
        then ``text`` may be None: a large dataset's text is not joined for it.
        ``size``: the text's UTF-8 size, when the caller has it.
        ``every_finding``: the caller will ask for every finding (a check from the
        command line), not only those an editor is shown: the helper finishes the
        findings of its lines itself, on its own core."""
        self._every_finding = every_finding
        _Line.prepare()
        self._build(workspace, path, text, helper, lines, size)

    def _build(
        self, workspace: Workspace, path: str, text: str | None, helper: Helper | None, lines: list[str] | None, size: int | None = None
    ) -> None:
        self.workspace = workspace
        self.path = path
        # Lines without their "\n" (a "\r" stays on the line, as in the text).
        if lines is None:
            assert text is not None
            lines = text.split("\n")
        self.lines: list[str] = lines
        # The text's size in UTF-8 bytes (what size limits count), kept through edits.
        if size is None:
            size = utf8_size(text) if text is not None else lines_size(lines)
        self.size = size
        self.rows: list[_Line | None] = [None] * len(self.lines)
        # Per line: the row rules' findings, placed on that line; None: not checked.
        self._placed: list[Sequence[Finding] | None] = [None] * len(self.rows)
        # Lines whose findings are not empty, ascending; and lines to check.
        self._lines_with_findings: list[int] = []
        # The same lines by the codes of their findings, and how many findings of
        # each code are placed: what an editor is shown (see shown) is found by
        # looking at the lines of the first findings of each code only.
        self._lines_by_code: dict[str, list[int]] = {}
        self._placed_counts: Counter[str] = Counter()
        # How many lines hold findings of each (code, cause) (see Finding.cause),
        # and how many lines are rows: what tells, without looking at the
        # findings, whether any cause stands on most rows (see core.checking.folding).
        self._cause_lines: Counter[tuple[str, str]] = Counter()
        # The (code, cause) pairs presumed to stand on most rows, from the first
        # batch: the rules only count their occurrences (see
        # RowsContext.passes_over), kept per line: the pairs of each occurrence
        # passed over on it (one tuple object for lines alike), or None.
        self._systemic: frozenset[tuple[str, str]] = frozenset()
        self._passed: list[tuple[tuple[str, str], ...] | None] = [None] * len(self.rows)
        self._pairs: dict[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]] = {}
        # Per (code, cause) passed over: [lines, occurrences], kept with each
        # change of _passed once counted (None: to count, after a first reading).
        self._passed_totals: dict[tuple[str, str], list[int]] | None = None
        # Each tuple of _pairs (by its id): how many occurrences of each pair it holds.
        self._pair_counts: dict[int, Counter[tuple[str, str]]] = {}
        # The folded findings of _folded_of_passed, with the facts they were made
        # under: by (code, cause), what it shows, the finding, and the count of
        # changes of _passed it was last read at.
        self._folded_cache: tuple[Any, dict[tuple[str, str], tuple[tuple, Finding, int]]] = (None, {})
        # Counts the changes of _passed: a folded finding kept through one has its
        # members read again (made when read, they are those of the lines as they are).
        self._passed_changes = 0
        self._row_count = 0
        self._stale: set[int] | None = None  # None: every line
        # The rows of each value the dataset rules that group rows keep (a
        # case id: see core.checking.datasetindex), with their findings, by rule.
        groupings = registry.groupings()
        self._groups = [(rule, KeptGroups(len(groupings), position)) for position, rule in enumerate(groupings)]
        self._shapes: Counter[str] = Counter()
        # How many rows ask for each number of hits (0: none asked, see _Line.top_k).
        self._top_ks: Counter[int] = Counter()
        # How many rows ask to search each corpus (see _Line.corpora).
        self._corpora: Counter[str] = Counter()
        # The expected paths of the rows that may be cases, and how many of them
        # are not workspace files (see _tally), as of ``_tallied_files``.
        self._listed = self._absent = 0
        self._tallied_files = workspace.files_version
        self._facts: Any = None
        self._text: str | None = text
        # Whether findings() has run at least once.
        self.checked = False
        self._moves: dict[int, tuple[Finding, Finding, int]] = {}
        # What an editor was last shown, for the next to be made from it (see shown).
        self._last_shown: _LastShown | None = None
        # The findings of _paths_summary, with what they were made from.
        self._summary: tuple[Any, list[Finding]] | None = None
        # Lines of the first reading whose screening a helper process answered.
        self.lines_from_helper = 0
        self._read_and_check(helper)
        # The lines hold the text: the whole of it is joined again only when asked
        # for (a large dataset's text is tens of megabytes).
        self._text = None

    def _read_and_check(self, helper: Helper | None) -> None:
        """Read every line and check it while its value is at hand: each line is
        decoded once, and the values of one batch are held at a time.

        The lines are checked as the shape of the first batch's rows, and with
        their expected paths taken as elsewhere or not as the first batch's are
        (see PathTally); should the whole file turn out otherwise (a file of mixed
        rows), the facts differ at the first :meth:`findings` and every line is
        checked again.
        A helper process, when there is one and the file is large, screens
        batches from the end of the file meanwhile.
        """
        workspace = self.workspace
        starts = _batch_starts(self.lines)
        batches = [self.lines[first:end] for first, end in zip(starts, [*starts[1:], len(self.lines)])]
        share = None
        if helper is not None and len(batches) >= SHARED_FROM_BATCHES:
            # First of all: the helper starts while this process reads.
            share = helper.share(self.lines, 1, len(batches), starts)
        ends = share.ends if share is not None else TwoEnds(1, len(batches))
        found: dict[int, list[Finding]] = {}
        try:
            self._read_batch(0, batches[0])
            shape = self._shape()
            # Whether the paths are elsewhere is known once every row is counted:
            # the first batch's count stands in for it (see the docstring).
            use = self._use(workspace.dataset_use(self.path), shape)
            front: Counter[str] = Counter()
            self._check_batch(self._rows_from(0, len(batches[0])), use, shape, found, front)
            self._systemic = self._presumed(found, len(batches[0]))
            if self._systemic:
                self._pass_over_found(found)
            if share is not None:
                share.begin(
                    _Screening(
                        workspace.root,
                        workspace.settings,
                        workspace.files(),
                        workspace.not_normal_files(),
                        self.path,
                        use,
                        shape,
                        self._every_finding,
                        tuple(starts),
                        self._systemic,
                    )
                )
            while (index := ends.take_front()) is not None:
                self._read_and_check_batch(starts[index], batches[index], use, shape, found, front)
                if share is not None:  # what the helper did meanwhile
                    self._take_answers(share.answered(), starts, batches, use, shape, found)
        except BaseException:
            if share is not None:
                share.abandon()
            raise
        if share is not None:
            self._take_answers(share.remaining(), starts, batches, use, shape, found)
        self._place_every_line(found)
        self._row_count = sum(1 for row in self.rows if row is not None)
        self._facts = (use, shape, workspace.files_version, workspace.settings)
        self._stale = set()

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
            causes.update(_causes_of(placed))
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
                found[line] = _Unfinished(kept) if type(placed) is _Unfinished else kept
            else:
                del found[line]
            self._set_passed(line, pairs)  # type: ignore[arg-type]

    def _read_batch(self, first: int, lines: list[str]) -> None:
        """Read the rows of ``lines`` (from line ``first``) into the model, with their values."""
        rows = self._read_rows(first, lines)
        self._tally_many(rows)
        self._index_many(rows)

    def _read_rows(self, first: int, lines: list[str]) -> list[_Line]:
        """The rows of ``lines`` (from line ``first``), placed in the model with
        their values, neither counted nor indexed yet."""
        read = read_lines(_Line, lines, self.workspace.settings.max_line_bytes)
        for number, row in read:
            row.line = first + number
            self.rows[first + number] = row
        return [row for _, row in read]

    def _read_and_check_batch(
        self, first: int, lines: list[str], use: Any, shape: str | None, found: dict[int, list[Finding]], front: Counter[str] | None = None
    ) -> None:
        """Read and check ``lines``, from line ``first``; their expected paths are
        counted from what the check found (see RowsContext.path_tallies)."""
        rows = self._read_rows(first, lines)
        self._check_batch(self._rows_from(first, len(lines)), use, shape, found, front, tally=True)
        self._index_many(rows)

    def _rows_from(self, first: int, count: int) -> list[tuple[int, _Line]]:
        return [(line, row) for line in range(first, first + count) if (row := self.rows[line]) is not None]

    def _take_answers(
        self,
        answers: list[tuple[int, Any]],
        starts: list[int],
        batches: list[list[str]],
        use: Any,
        shape: str | None,
        found: dict[int, list[Finding]],
    ) -> None:
        """Keep the plain lines of the batches the helper screened, and read and
        check here the lines it did not pass, and any batch it did not answer."""
        rows = self.rows
        to_look_at: list[tuple[int, _Line]] = []
        plain = _Line.plain
        for index, answer in answers:
            first = starts[index]
            lines = batches[index]
            if not _is_answer(answer, len(lines), self.path, first, self._systemic):
                self._read_and_check_batch(first, lines, use, shape, found)
                continue
            self.lines_from_helper += len(lines)
            taken: list[_Line] = []
            codes, kept_by_line, tallies, unfinished, passed, corpora = answer
            counts = memoryview(tallies).cast("I")
            looks: list[int] = []  # lines it did not pass, read here together below
            for line, number, text, code, kept in zip(itertools.count(first), itertools.count(0, _COUNTS), lines, codes, kept_by_line):
                if code == BLANK:
                    continue
                if code == LOOK:
                    looks.append(line)
                    continue
                line_shape, exact = _PLAIN[code]
                row = plain(text.removesuffix("\r"), line_shape, kept, exact, line, counts[number], counts[number + 1], counts[number + 2])
                rows[line] = row
                if corpora:
                    row.corpora = corpora.get(line - first, ())
                taken.append(row)
            for number, found_here in unfinished.items():
                # By the line's number in the batch, made on its line of the file.
                found[first + number] = _Unfinished(found_here) if any(finding.unfinished is not None for finding in found_here) else found_here
            self._set_passed_many(passed, first)
            if looks:
                read = read_lines(_Line, [lines[line - first] for line in looks], self.workspace.settings.max_line_bytes)
                for number, row in read:
                    line = row.line = looks[number]
                    rows[line] = row
                    taken.append(row)
                    to_look_at.append((line, row))
                self._tally_many([row for _, row in read])
            self._index_many(taken)
        for start in range(0, len(to_look_at), _CHECK_BATCH):
            self._check_batch(to_look_at[start : start + _CHECK_BATCH], use, shape, found)

    # ------------------------------------------------------------ editing

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

    @property
    def shape(self) -> str | None:
        """The majority row shape (as ``Workspace.dataset_shape`` gives)."""
        return self._shape()

    @property
    def case_count(self) -> int:
        return sum(1 for row in self.rows if row is not None)

    def edit(self, start: Position, end: Position, new_text: str) -> None:
        """Replace the text between two code-point positions."""
        last = len(self.lines) - 1
        start_line, end_line = min(start.line, last), min(end.line, last)
        head = self.lines[start_line][: start.character] if start.line <= last else self.lines[last]
        tail = self.lines[end_line][end.character :] if end.line <= last else ""
        self._replace(start_line, end_line - start_line + 1, (head + new_text + tail).split("\n"))

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
                self._cause_lines.subtract(_causes_of(placed))
        self._placed[start:stop] = [None] * added
        self._passed[start:stop] = [None] * added
        if added != removed:  # the lines passed over below moved
            self._passed_changes += 1
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

    def _shown_on(self, line: int) -> Sequence[Finding]:
        """The findings placed on ``line``, finished: they are given out (see
        Finding.unfinished). They stay on the line they were placed on, which
        lines above may have moved since (see ShownFindings)."""
        placed = self._placed[line]
        if type(placed) is _Unfinished:
            placed = self._placed[line] = [registry.finished(self.workspace, finding) for finding in placed]
        return placed or _NO_FINDINGS

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

    def _move_grouped(self, boundary: int, delta: int) -> None:
        # Each place of a grouping rule's finding (a repeat, the first use, the
        # fix) moves only if it is below the edit.
        for _, groups in self._groups:
            found = groups.found
            for value, made in found.items():
                found[value] = [self._noted(finding, finding.moved(delta, below=boundary), delta) for finding in made]

    def _row(self, line: str) -> _Line | None:
        row = self._read_line(line)
        if row is not None:
            self._tally(row)
            row.drop()  # until the line is checked
        return row

    def _read_line(self, line: str) -> _Line | None:
        """The row of one line (None when blank), holding its value."""
        read = read_lines(_Line, [line], self.workspace.settings.max_line_bytes)
        return read[0][1] if read else None

    # ------------------------------------------------------------ indexes

    def _unindex(self, row: _Line | None) -> None:
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

    def _index_many(self, rows: Sequence[_Line]) -> None:
        """Add ``rows`` to the indexes (at once: a first reading adds every line)."""
        shapes = self._shapes
        # Through attrgetter and map, each pass over a first reading's hundred
        # thousand rows runs in C.
        for shape, count in Counter(map(_SHAPE_OF, rows)).items():
            if shape is not None:
                shapes[shape] += count
        self._top_ks.update(map(_TOP_K_OF, rows))
        # Rows alike ask alike: each list of names is counted once, in C, then by name.
        corpora = self._corpora
        for names, count in Counter(map(_CORPORA_OF, rows)).items():
            for name in names:
                corpora[name] += count
        self._listed += sum(map(_LISTED_OF, rows))
        self._absent += sum(map(_ABSENT_OF, rows))
        for _, groups in self._groups:
            groups.add(rows)

    def _line_of(self, row: _Line) -> int:
        """The line ``row`` is on now: where it was placed, unless lines came or
        went above it since; then found by list.index, which compares by identity
        here (rows have no __eq__), a C-speed scan paid only for such a row."""
        line = row.line
        if not (0 <= line < len(self.rows) and self.rows[line] is row):
            line = row.line = self.rows.index(row)
        return line

    def _renumber(self) -> None:
        """Set every row's line again (before looking up many of them)."""
        for line, row in enumerate(self.rows):
            if row is not None:
                row.line = line

    def _touch_groups(self, row: _Line | None) -> None:
        if row is not None and row.kept is not None:
            for _, groups in self._groups:
                groups.touch(row)

    def _shape(self) -> str | None:
        return majority_shape(self._shapes[RAG_CASE], self._shapes[GDI_TEXT])

    def _tally(self, row: _Line) -> None:
        """Count the expected paths of a row holding its value, as
        RowsContext.paths would were the row a case (see _path_tally)."""
        self._tally_many([row])

    def _tally_many(self, rows: list[_Line]) -> None:
        """:meth:`_tally` of each row, counted together (see case_path_tallies)."""
        cases = [row for row in rows if tallied_as_case(row)]
        for row, (listed, absent) in zip(cases, case_path_tallies(self.workspace, [row.value for row in cases])):
            row.listed, row.absent = listed, absent

    def _retally(self) -> None:
        """Count every row's expected paths again: the workspace's files changed."""
        self._listed = self._absent = 0
        rows = [row for row in self.rows if row is not None]
        for first in range(0, len(rows), _CHECK_BATCH):
            batch = rows[first : first + _CHECK_BATCH]
            for row in batch:
                row.restore()
                row.listed = row.absent = 0
            self._tally_many(batch)
            for row in batch:
                row.drop()
                self._listed += row.listed
                self._absent += row.absent
        self._tallied_files = self.workspace.files_version

    def _path_tally(self, use: DatasetUse, shape: str | None) -> PathTally:
        """The file's PathTally: its cases' counts (in a file of gdi rows no row
        is a case), where expected paths are checked against the workspace."""
        if shape == GDI_TEXT or "path" not in use.matches or not use.paths_in_workspace:
            return PathTally()
        return PathTally(self._listed, self._absent)

    def _use(self, use: DatasetUse, shape: str | None) -> DatasetUse:
        """``use`` with whether the file's expected paths are elsewhere."""
        elsewhere = self._path_tally(use, shape).elsewhere
        return replace(use, paths_elsewhere=True) if elsewhere else use

    # ------------------------------------------------------------ findings

    def findings(self) -> list[Finding]:
        """Every finding of the dataset as it is now (as ``analyze_file`` gives)."""
        across = self._refresh()
        if self._folds():
            folded = self._folded_of_passed()
            if folded is not None:
                return self._given_out(_merged(across, folded), None).findings()
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
        for number, pairs in passed.items():
            key = tuple(pairs)
            held = table.get(key)
            if held is None:
                held = self._interned(key)
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

    def _members(self, key: tuple[str, str], lines: list[int]) -> list[Finding]:
        """The findings of ``key`` on ``lines`` (ascending), made: the lines are
        checked again without passing over any cause."""
        use, shape = self._facts[0], self._facts[1]
        rows = [(line, row) for line in lines if (row := self.rows[line]) is not None]
        made: list[Finding] = []
        for first in range(0, len(rows), _CHECK_BATCH):
            batch = rows[first : first + _CHECK_BATCH]
            for _, row in batch:
                row.restore()
            try:
                context = RowsContext.of(self.workspace, self.path, use, shape, batch)
                made += [finding for finding in finish(self.workspace, self.path, check_rows(context)) if (finding.code, finding.cause) == key]
            finally:
                for _, row in batch:
                    row.drop()
        return made

    def _interned(self, pairs: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
        """``pairs``, as the one tuple kept for every line passing over the same."""
        held = self._pairs.get(pairs)
        if held is None:
            held = self._pairs[pairs] = pairs
            self._pair_counts[id(pairs)] = Counter(pairs)
        return held

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
                return self._shown_folded(self._given_out(_merged(across, folded), limit))
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
            self._last_shown = _LastShown(limit, across, shown, {}, {}, groups, named)
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
        if last is None or last.folded is None or last.limit != limit or len(across) != len(last.across):
            return None
        if any(mine is not theirs for mine, theirs in zip(across, last.across)):
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

    def corpora_asked(self) -> tuple[Counter[str], int]:
        """How many rows ask to search each corpus, and how many rows there are
        (see Workspace.corpora_asked)."""
        return +self._corpora, self._row_count

    def top_ks_asked(self) -> tuple[Counter[int], int]:
        """How many rows ask for each number of hits (``input.topK``, a positive
        integer), and how many rows there are (see Workspace.top_ks_asked)."""
        return +Counter({top_k: count for top_k, count in self._top_ks.items() if top_k}), self._row_count

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

    def _refresh(self) -> list[Finding]:
        """Check what changed since the last call; the findings across lines (in
        position order), which are not placed on lines."""
        workspace = self.workspace
        if self._tallied_files != workspace.files_version:
            self._retally()
        shape = self._shape()
        use = self._use(workspace.dataset_use(self.path), shape)
        facts = (use, shape, workspace.files_version, workspace.settings)
        if facts != self._facts:
            self._facts = facts
            self._stale = None
            for _, groups in self._groups:
                groups.check_every_group()
        self._check_stale_lines(use, shape)
        if self._systemic and not self._presumption_holds():
            # The first batch was not the file (or folding was turned off): every
            # line is checked again, making every finding.
            self._systemic = frozenset()
            self._stale = None
            self._check_stale_lines(use, shape)
        self._check_groups(shape)
        across = [finding for _, groups in self._groups for made in groups.found.values() for finding in made]
        across += self._paths_summary(use, shape)
        across.sort(key=_position_key)
        self.checked = True
        return across

    def _presumption_holds(self) -> bool:
        """Whether each cause presumed to stand on most rows does (see _presumed)."""
        if not self.workspace.folds_findings:
            return False
        counts = self._cause_line_counts()
        return self._systemic <= folded_groups(((key, counts[key]) for key in self._systemic), self._row_count)

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
                group = sorted([*placed, *across[pending:end]], key=_key_on_line)
                pending = end
                for finding in group:
                    give(finding, line)
            else:
                for finding in placed:
                    give(finding, line)
        for finding in across[pending:]:
            give(finding, finding.range.start.line)
        # The finding that says how many are left out goes where the first of them
        # is; how many, the file's count (not every line of them was looked at).
        over: dict[str, _Over] = {}
        for index, finding, line in reversed(left_out):
            summary = left_out_finding(finding, totals[finding.code] - cap, cap)
            given.insert(index, summary)
            given_lines.insert(index, line)
            over[finding.code] = _Over(last_lines[finding.code], finding, line, summary)
        shown = ShownFindings(given, given_lines)
        if limit is not None:
            self._last_shown = _LastShown(limit, across, shown, over, {})
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
        if last is None or last.folded is not None or last.limit != limit or len(across) != len(last.across):
            return None
        if any(mine is not theirs for mine, theirs in zip(across, last.across)):
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
        self._last_shown = _LastShown(limit, across, shown, over_now, {})
        return shown

    def _paths_summary(self, use: DatasetUse, shape: str | None) -> list[Finding]:
        """The dataset rules' findings on the file's expected paths (one finding
        when most are not workspace files), at its first missing path."""
        tally = self._path_tally(use, shape)
        if not tally.elsewhere:
            return []
        line, row = next((line, row) for line, row in enumerate(self.rows) if row is not None and row.absent)
        # The same findings while what they say is the same (a word typed into a
        # query changes none of it): then what an editor is shown is spliced (see
        # _spliced) rather than looked at again whole.
        key = (self._facts, tally.listed, tally.absent, line, self.lines[line])
        if self._summary is not None and self._summary[0] == key:
            return self._summary[1]
        row.restore()
        try:
            first = (RowContext(self.path, row, line), first_missing_index(self.workspace, row.value["expect"]["relevant"]))
            context = DatasetContext(self.workspace, self.path, {}, (), use, tally, first)
            found: list[Finding] = []
            for _, check in registry.whole_dataset_checks():
                found.extend(check(context))
        finally:
            row.drop()
        summary = finish(self.workspace, self.path, found)
        self._summary = (key, summary)
        return summary

    def _check_stale_lines(self, use: Any, shape: str | None) -> None:
        if self._stale is None:
            stale: Sequence[int] = range(len(self.rows))
            self._last_shown = None
            self._lines_with_findings = []
            self._lines_by_code = {}
            self._placed_counts = Counter()
            self._cause_lines = Counter()
            self._passed = [None] * len(self.rows)
            self._passed_totals = None
            self._passed_changes += 1
        else:
            stale = sorted(self._stale)
        self._stale = set()
        rows = [(line, row) for line in stale if (row := self.rows[line]) is not None]
        found: dict[int, list[Finding]] = {}
        for first in range(0, len(rows), _CHECK_BATCH):
            batch = rows[first : first + _CHECK_BATCH]
            for _, row in batch:
                row.restore()
            self._check_batch(batch, use, shape, found)
        self._place(stale, found)

    def _check_batch(
        self,
        batch: list[tuple[int, _Line]],
        use: Any,
        shape: str | None,
        found: dict[int, list[Finding]],
        front: Counter[str] | None = None,
        tally: bool = False,
    ) -> None:
        """Add the row rules' findings on ``batch`` (rows holding their values) to
        ``found``, by line; the values are dropped after. ``front``: the batch
        continues the first reading's front (its batches in order, from the
        first), and counts its findings of each code so far. ``tally``: count the
        rows' expected paths too (see _tally), before their values go."""
        limit = self.workspace.settings.max_findings_shown
        try:
            # Asked for every finding (a check from the command line), the rules
            # finish each one here, in its batch; so is a finding of the front
            # that an editor is shown (the first of its code, see shown). Either
            # is finished while the helper reads further batches: finished after
            # the reading, they would leave it idle meanwhile.
            context = RowsContext.of(
                self.workspace, self.path, use, shape, batch, finish_when_shown=not self._every_finding, systemic=self._systemic
            )
            for finding in finish(self.workspace, self.path, check_rows(context)):
                if front is not None:
                    front[finding.code] += 1
                    if finding.unfinished is not None and front[finding.code] <= limit + 1:
                        finding = registry.finished(self.workspace, finding)
                line = finding.range.start.line
                placed = found.get(line)
                if placed is None:
                    placed = found[line] = []
                if finding.unfinished is not None and type(placed) is not _Unfinished:
                    placed = found[line] = _Unfinished(placed)
                placed.append(finding)
            if tally:
                for (_, row), (listed, absent) in zip(batch, context.path_tallies):
                    row.listed, row.absent = listed, absent
            self._set_passed_many(context.passed_over)
        finally:
            for _, row in batch:
                row.drop()

    def _place_every_line(self, found: dict[int, list[Finding]]) -> None:
        """Keep the findings of a reading of every line (as _place, without a
        step per line: nearly all have none)."""
        self._placed = [_NO_FINDINGS] * len(self.rows)
        by_code: dict[str, list[int]] = {}
        counts: Counter[str] = Counter()
        causes: Counter[tuple[str, str]] = Counter()
        for line, placed in found.items():
            self._placed[line] = placed
            counts.update(finding.code for finding in placed)
            causes.update(_causes_of(placed))
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
            placed = found.get(line, _NO_FINDINGS)
            placed_lines[line] = placed
            if placed:
                bisect.insort(self._lines_with_findings, line)
                self._placed_counts.update(finding.code for finding in placed)
                self._cause_lines.update(_causes_of(placed))
                for code in {finding.code for finding in placed}:
                    bisect.insort(by_code.setdefault(code, []), line)

    def _check_groups(self, shape: str | None) -> None:
        """Make again the findings of each grouping rule on the groups whose
        rows changed (see core.checking.datasetindex)."""
        renumbered = False
        for rule, groups in self._groups:
            if groups.changed is None and self.checked and not renumbered:
                # Every group again: lines may have come and gone since the rows were placed.
                self._renumber()
                renumbered = True
            values = groups.to_check()
            grouped: dict[Any, list[RowContext]] = {}
            for value in values:
                rows = [row for row in groups.rows_of(value) if _counts_as_case(row, shape)]
                if len(rows) > 1:
                    placed = sorted((self._line_of(row), row) for row in rows)
                    grouped[value] = [RowContext(self.path, row, line) for line, row in placed]
            if not grouped:
                continue
            context = DatasetContext(self.workspace, self.path, grouped, groups.rows, id_key=ID_KEYS[shape or RAG_CASE])
            for finding in finish(self.workspace, self.path, list(rule.checks[registry.DATASET](context))):
                row = self.rows[finding.range.start.line]
                value = groups.value(row) if row is not None else None
                groups.found.setdefault(value, []).append(finding)


_SHAPE_OF = operator.attrgetter("shape")
_TOP_K_OF = operator.attrgetter("top_k")
_CORPORA_OF = operator.attrgetter("corpora")
_LISTED_OF = operator.attrgetter("listed")
_ABSENT_OF = operator.attrgetter("absent")


class _Over(NamedTuple):
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
class _LastShown:
    """What an editor was last shown of a dataset (see DatasetModel.shown), with
    what the next one can be made from."""

    limit: int
    across: list[Finding]
    shown: ShownFindings
    # Per code with more findings than the limit (see _Over).
    over: dict[str, _Over]
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


class _Unfinished(list):
    """The findings placed on a line when some are unfinished (see
    Finding.unfinished): a line's findings are finished when given out, and
    telling such a line by its list's type costs nothing on the many others."""


@dataclass(frozen=True)
class _Screening:
    """A helper's job: screen lines of a dataset as this process checks them,
    with the same workspace files, settings, facts and row shape."""

    root: Path
    settings: Settings
    files: list[str]
    # Those of the files not in normal form, as this process found them: the
    # helper need not search every path again before its first batch.
    not_normal_files: frozenset[str]
    path: str
    use: DatasetUse
    shape: str | None
    # Whether the helper finishes the findings of plain lines (see screen_batch).
    finish: bool = False
    # The first line of each batch: the findings of a batch are made on the lines
    # of the file, not moved there by the caller one by one (a dataset written by
    # another tool has one on every row). Without it, on the batch's own lines.
    batch_starts: tuple[int, ...] = ()
    # The causes presumed to stand on most rows (see DatasetModel._presumed).
    systemic: frozenset[tuple[str, str]] = frozenset()

    def start(self) -> Callable[[int, memoryview], tuple[bytes, list[str | None], bytes, dict[int, list[Finding]], dict[int, tuple]]]:
        workspace = Workspace(self.root, self.settings)
        workspace.adopt_files(self.files, self.not_normal_files)

        def screen(index: int, text: memoryview) -> tuple[bytes, list[str | None], bytes, dict[int, list[Finding]], dict[int, tuple]]:
            batch = str(text, "utf-8", "surrogatepass").split("\n")
            first = self.batch_starts[index] if index < len(self.batch_starts) else 0
            codes, kept, counts, unfinished, passed, corpora = screen_batch(workspace, self.path, self.use, self.shape, batch, first, self.systemic)
            if self.finish:
                unfinished = {number: [registry.finished(workspace, finding) for finding in found] for number, found in unfinished.items()}
            return codes, kept, counts, unfinished, passed, corpora

        return screen


def screen_batch(
    workspace: Workspace,
    path: str,
    use: DatasetUse,
    shape: str | None,
    lines: list[str],
    first: int = 0,
    systemic: frozenset[tuple[str, str]] = frozenset(),
) -> tuple[bytes, list[Any], bytes, dict[int, list[Finding]], dict[int, tuple[tuple[str, str], ...]]]:
    """For each line of a batch, a code, what the groupings keep of it and a
    count of expected paths, and the findings of plain lines.
    The code is BLANK; for a plain line (an object or array read with no error
    and no repeated key) one of _PLAIN's, its row's shape and whether it was
    read exactly, with what the dataset rules that group rows keep of it (its
    case id, see core.checking.datasetindex); else LOOK: the model reads and checks it.
    The counts are two unsigned 32-bit integers per line, its expected paths
    and those not workspace files (see DatasetModel._tally). A byte per line, a
    list of kept values and an array cost little to send and to check (see _is_answer).
    A plain line's findings come by its number in the batch, made on its line
    of the file (the batch's ``first`` line and on). A row rule's
    findings depend on the line alone (and the facts the screening shares), so
    a line with findings is plain all the same: a dataset written by another
    tool holds one finding on every row, and its lines are screened here as
    cheaply as clean ones. Findings of a rule that finishes its findings may
    come unfinished (see Finding.unfinished), saying only what a check of the
    line found: the model's rules finish them when they are shown, as they do
    their own (a screening for every finding finishes them: see
    _Screening.finish). Occurrences of the ``systemic`` causes are only counted:
    the (code, cause) pairs of each line's, by its number in the batch (see
    RowsContext.passes_over); lines alike share one tuple, which the pickle
    sends once."""
    _Line.prepare()
    rows = read_lines(_Line, lines, workspace.settings.max_line_bytes)
    numbered = [(first + number, row) for number, row in rows] if first else rows
    context = RowsContext.of(workspace, path, use, shape, numbered, finish_when_shown=True, systemic=systemic)
    with_findings: dict[int, list[Finding]] = {}
    for finding in finish(workspace, path, check_rows(context)):
        with_findings.setdefault(finding.range.start.line - first, []).append(finding)
    codes = bytearray(len(lines))  # BLANK
    kept: list[Any] = [None] * len(lines)
    counts = array("I", bytes(4 * _COUNTS * len(lines)))
    unfinished: dict[int, list[Finding]] = {}
    for (number, _), (listed, absent) in zip(rows, context.path_tallies):
        if listed:
            counts[_COUNTS * number], counts[_COUNTS * number + 1] = listed, absent
    for number, row in rows:
        if row.top_k:
            counts[_COUNTS * number + 2] = min(row.top_k, _MOST_COUNTED)
    for number, row in rows:
        found = with_findings.get(number)
        plain = (
            row.error is None
            and row.refused is None
            and not row.has_duplicate_keys
            and type(row.value) in (dict, list)  # a value the model drops
        )
        if plain:
            codes[number] = _PLAIN_CODE[row.shape, row.exact]
            kept[number] = row.kept
            if found is not None:
                unfinished[number] = found
        else:
            codes[number] = LOOK
    alike: dict[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]] = {}
    passed = {line - first: alike.setdefault(key, key) for line, pairs in context.passed_over.items() if (key := tuple(pairs))}
    # The corpora each plain line asks to search, where it asks (rows alike share one tuple).
    asked: dict[tuple[str, ...], tuple[str, ...]] = {}
    corpora = {number: asked.setdefault(row.corpora, row.corpora) for number, row in rows if row.corpora and codes[number] != LOOK}
    return bytes(codes), kept, counts.tobytes(), unfinished, passed, corpora


def reading_helper() -> Helper | None:
    """A helper process for the first readings of large datasets, not started yet,
    on a machine with a core to spare (None on one core). It runs with the
    collector policy of a one-shot process (see rag_lsp.collector) and warms up
    as soon as it starts."""
    return Helper(preload=["rag_lsp.collector:one_shot", f"{__name__}:warm_up"]) if cores() > 1 else None


def warm_up() -> None:
    """Screen two made-up lines in an empty workspace, as a helper's first job
    would: what every screening needs once per process (the row schemas
    compiled, the built-in manifests read, the schema explainer loaded) is then
    ready before a dataset is opened."""
    with tempfile.TemporaryDirectory(prefix="rag-lsp-warm-up-") as folder:
        workspace = Workspace(Path(folder), Settings())
        workspace.adopt_files([])
        # A row with a misspelt key: explaining it loads the fuzzy matcher too.
        lines = ['{"id": "a", "input": {"query": "q"}, "expect": {"relevant": ["a.md"], "relevent": []}}', '{"id": 1}']
        screen_batch(workspace, "warm-up.jsonl", DatasetUse(), RAG_CASE, lines)


def _is_answer(answer: Any, lines: int, path: str, first: int, systemic: frozenset[tuple[str, str]] = frozenset()) -> bool:
    """Whether ``answer`` is what screen_batch gives for a batch of ``lines`` of
    the dataset at ``path``, from its line ``first``."""
    if type(answer) is not tuple or len(answer) != 6:
        return False
    codes, kept, counts, unfinished, passed, corpora = answer
    return (
        type(codes) is bytes
        and len(codes) == lines
        and max(codes, default=BLANK) <= max(_PLAIN)
        and type(kept) is list
        and len(kept) == lines
        and kept_are_valid([rule.grouping for rule in registry.groupings()], kept)
        and type(counts) is bytes
        and len(counts) == 4 * _COUNTS * lines
        and type(unfinished) is dict
        and all(_are_plain_findings(number, found, codes, lines, path, first) for number, found in unfinished.items())
        and _are_passed(passed, codes, lines, systemic)
        and _are_corpora(corpora, codes, lines)
    )


def _are_corpora(corpora: Any, codes: bytes, lines: int) -> bool:
    """Whether ``corpora`` is what screen_batch gives of the corpora plain lines
    of a batch of ``lines`` lines ask to search: names, by line."""
    if type(corpora) is not dict:
        return False
    if not all(type(number) is int and 0 <= number < lines and codes[number] in _PLAIN for number in corpora):
        return False
    alike = {id(names): names for names in corpora.values()}.values()
    return all(type(names) is tuple and all(type(name) is str for name in names) for names in alike)


def _are_passed(passed: Any, codes: bytes, lines: int, systemic: frozenset[tuple[str, str]]) -> bool:
    """Whether ``passed`` is what screen_batch counts of the ``systemic`` causes on
    a batch of ``lines`` lines: pairs of those causes, by plain line."""
    if type(passed) is not dict:
        return False
    if not all(type(number) is int and 0 <= number < lines and codes[number] in _PLAIN for number in passed):
        return False
    alike = {id(pairs): pairs for pairs in passed.values()}.values()
    return all(type(pairs) is tuple and pairs and all(pair in systemic for pair in pairs) for pairs in alike)


def _are_plain_findings(number: Any, found: Any, codes: bytes, lines: int, path: str, first: int) -> bool:
    """Whether ``found`` are findings a plain line ``number`` of a batch may carry
    (see screen_batch): of known rules, on that line, unfinished only where
    their rule finishes its findings."""
    rules = registry.all_rules()
    return (
        type(number) is int
        and 0 <= number < lines
        and codes[number] in _PLAIN
        and type(found) is list
        and len(found) > 0
        and all(
            type(finding) is Finding
            and type(finding.unfinished) in (str, type(None))
            and finding.path == path
            and finding.range.start.line == first + number
            and finding.code in rules
            and (finding.unfinished is None or rules[finding.code].finisher is not None)
            for finding in found
        )
    )


def _causes_of(placed: Iterable[Finding]) -> set[tuple[str, str]]:
    """The (code, cause) pairs of one line's findings, each once (see Finding.cause)."""
    return {(finding.code, finding.cause) for finding in placed if finding.cause is not None}


def _batch_starts(lines: list[str]) -> list[int]:
    """The first line of each batch of a first reading (see _BATCH_CHARACTERS):
    at most _CHECK_BATCH lines, and no more than one line past _BATCH_CHARACTERS."""
    ends = list(itertools.accumulate(map(len, lines)))
    starts = [0]
    while (first := starts[-1]) < len(lines):
        before = ends[first - 1] if first else 0
        # The line that reaches the characters' limit ends the batch, so each holds at least one.
        through = bisect.bisect_left(ends, before + _BATCH_CHARACTERS, first)
        starts.append(min(first + _CHECK_BATCH, through + 1, len(lines)))
    return starts[:-1] if len(starts) > 1 else starts


def _moved_lines(lines: list[int], start: int, stop: int, delta: int) -> list[int]:
    """Ascending ``lines`` without those in [start, stop), those below moved by ``delta``."""
    first = bisect.bisect_left(lines, start)
    after = bisect.bisect_left(lines, stop)
    return lines[:first] + [line + delta for line in lines[after:]] if delta else lines[:first] + lines[after:]




def _counts_as_case(row: _Line, shape: str | None) -> bool:
    # As RowsContext.cases and .gdi_rows: a row of the other shape is RAG004's,
    # not a case; a row of neither shape has no `input_id` (else it would be a
    # gdi row), so no id among gdi rows.
    own = row.shape
    checked_as = shape or own or RAG_CASE
    return own == checked_as or (own is None and checked_as == RAG_CASE)


def _key_on_line(finding: Finding) -> tuple:
    # _position_key for findings that start on one line, some placed on it when
    # it was another (see ShownFindings): the line itself is left out.
    start, end = finding.range.start, finding.range.end
    return (start.character, end.line - start.line, end.character, finding.code, _ordered_by(finding).message)


def _position_key(finding: Finding) -> tuple:
    # The order of Finding.sort_key within one file, as plain numbers and strings.
    start, end = finding.range.start, finding.range.end
    return (start.line, start.character, end.line, end.character, finding.code, _ordered_by(finding).message)


def _ordered_by(finding: Finding) -> Finding:
    """The finding whose place in the order ``finding`` takes: a folded finding
    stands where its first occurrence would (as core.checking.folding places it)."""
    covers = finding.covers
    return covers.first if type(covers) is Occurrences else finding  # type: ignore[attr-defined]


def _merged(across: list[Finding], folded: list[Finding]) -> list[Finding]:
    """The findings across lines with ``folded`` among them, in position order."""
    return sorted([*across, *folded], key=_position_key)
