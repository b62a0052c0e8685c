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

import itertools
import weakref
from collections import Counter
from typing import Any, Sequence

from . import rules as registry
from .analyze import check_rows, encoding_findings, finish
from .contexts import DatasetContext, RowContext, RowsContext, RowsOnLines
from .expectedpaths import first_missing_index
from .datasetindex import KeptGroups
from ..reading.findings import Finding
from .batchends import TwoEnds
from .parallel import Helper
from ..reading.datasetlines import read_lines
from ..reading.sources import lines_size, utf8_size
from ..workspace.suitefacts import DatasetUse
from ..workspace.workspace import Workspace
from .modelindexes import KeepsIndexes
from .modelrows import BLANK, COUNTS, LOOK, NOT_JSON, ModelRow, PLAIN, Unfinished
from .passedover import CountsPassedOver
from .screening import Screening, WorkspaceFiles, is_answer, received
from .shown import LastShown, ShowsFindings, position_key
from .modelediting import FollowsEdits
from .modeldocument import ReadsDocuments

# Lines checked together: a batch holds its rows' decoded values while it is
# checked. With a helper, the smaller the batch, the less either side waits for
# the other's last one; but each batch also costs a call per rule and an
# answer through the pipe, and 1024 lines opened no faster than 2048.
_CHECK_BATCH = 2048
# The first batch is read alone, before a helper takes a share: what it tells
# (the file's shape, whether its paths are elsewhere, the causes on most rows)
# a few hundred rows tell as well, and each of its rows may cost an explanation
# (a cause on every row is only counted past it, see DatasetModel._presumed).
_FIRST_BATCH = 256
# A first reading's batch also ends once its lines hold this many characters
# (2048 lines of 256): a case listing thousands of paths is as much work as a
# hundred short ones, and a file of a few thousand such lines is then shared
# with a helper like one of a hundred thousand short lines.
_BATCH_CHARACTERS = _CHECK_BATCH * 256
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


# The text of a model not yet read as one JSON document (see check_document).
_NOT_READ = object()


class DatasetModel(FollowsEdits, ReadsDocuments, KeepsIndexes, CountsPassedOver, ShowsFindings):
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
        encoding: str | None = None,
    ) -> None:
        """``helper``: a second process that may take a share of the first reading
        of a large dataset (see rag_lsp.core.checking.parallel). ``lines``: the text split
        at "\n", when the caller has it (the model keeps and changes that list);
        then ``text`` may be None: a large dataset's text is not joined for it.
        ``size``: the text's UTF-8 size, when the caller has it.
        ``every_finding``: the caller will ask for every finding (a check from the
        command line), not only those an editor is shown: the helper finishes the
        findings of its lines itself, on its own core.
        ``encoding``: that of the file the text was read from, where it is not
        UTF-8 (see SourceText.encoding): one finding says so while it is set."""
        self._every_finding = every_finding
        self.encoding = encoding
        ModelRow.prepare()
        self._build(workspace, path, text, helper, lines, size)

    def _build(
        self,
        workspace: Workspace,
        path: str,
        text: str | None,
        helper: Helper | None,
        lines: list[str] | None,
        size: int | None = None,
        document: list[Finding] | None | object = _NOT_READ,
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
        if document is _NOT_READ:
            document = self._read_as_document()
        # A text that is one JSON document keeps no list per line: none of its
        # lines is a row (see edit), and it may have millions of them.
        self.rows: list[ModelRow | None] = [None] * (len(self.lines) if document is None else 0)
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
        # The row count the grouping rules' findings were last made at (see _check_groups).
        self._grouped_at_rows = 0
        # How many lines from the top hold rows whose ``line`` is the line they
        # are on (see _renumber): every line as they are read; an edit that adds
        # or takes out lines leaves those above it.
        self._exact_up_to = len(self.rows)
        # The large groups given to the grouping rules whose lines are read from
        # their rows until a row's line changes (see _freeze_groups_given).
        self._groups_given: weakref.WeakSet[RowsOnLines] = weakref.WeakSet()
        self._stale: set[int] | None = None  # None: every line
        # The rows of each value the dataset rules that group rows keep (a
        # case id: see core.checking.datasetindex), with their findings, by rule.
        groupings = registry.groupings()
        self._groups = [(rule, KeptGroups(len(groupings), position)) for position, rule in enumerate(groupings)]
        self._shapes: Counter[str] = Counter()
        # How many rows ask for each number of hits (0: none asked, see ModelRow.top_k).
        self._top_ks: Counter[int] = Counter()
        # How many rows ask to search each corpus (see ModelRow.corpora).
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
        self._last_shown: LastShown | None = None
        # The findings of _whole_dataset_findings, with what they were made from.
        self._whole_dataset: tuple[Any, list[Finding]] | None = None
        # Lines of the first reading whose screening a helper process answered.
        self.lines_from_helper = 0
        # The findings of the text as one JSON document (see check_document): a
        # model of such a text reads no line as a row.
        self._document: list[Finding] = []
        self._read_and_check(helper, document)
        # The lines hold the text: the whole of it is joined again only when asked
        # for (a large dataset's text is tens of megabytes).
        self._text = None

    def _read_and_check(self, helper: Helper | None, document: list[Finding] | None) -> None:
        """Read every line and check it while its value is at hand: each line is
        decoded once, and the values of one batch are held at a time.

        The lines are checked as the shape of the first batch's rows, and with
        their expected paths taken as elsewhere or not as the first batch's are
        (see PathTally); should the whole file turn out otherwise (a file of mixed
        rows), the facts differ at the first :meth:`findings` and every line is
        checked again.
        A helper process, when there is one and the file is large, screens
        batches from the end of the file meanwhile. ``document``: the findings of
        the text read as one JSON document (see _read_as_document); None for
        JSON Lines.
        """
        workspace = self.workspace
        if document is not None:
            # One JSON document, not JSON Lines (``document`` holds its
            # findings): one finding for the file, and no line read as a row.
            self._document = document
            self._facts = (self._use(workspace.dataset_use(self.path), None), None, workspace.files_version, workspace.settings)
            self._stale = set()
            return
        self._edited_document = None
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
            # With a helper, the first batch's findings are finished once it has
            # begun: the first did-you-mean builds the index of workspace paths
            # (tens of milliseconds for 20,000 files), which it need not wait for.
            self._check_batch(self._rows_from(0, len(batches[0])), use, shape, found, front, finish_here=share is None)
            self._systemic = self._presumed(found, len(batches[0]))
            if self._systemic:
                self._pass_over_found(found)
            if share is not None:
                share.begin(
                    Screening(
                        WorkspaceFiles.of(workspace),
                        self.path,
                        use,
                        shape,
                        self._every_finding,
                        tuple(starts),
                        self._systemic,
                    )
                )
                self._finish_lines(found)
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
        self._row_count = len(self.rows) - self.rows.count(None)  # in C: blank lines hold None
        self._facts = (use, shape, workspace.files_version, workspace.settings)
        self._stale = set()

    def _finish_lines(self, found: dict[int, list[Finding]]) -> None:
        """Finish the unfinished findings of ``found`` (see Finding.unfinished)."""
        for line, placed in found.items():
            if type(placed) is Unfinished:
                found[line] = [registry.finished(self.workspace, finding) for finding in placed]

    def _read_batch(self, first: int, lines: list[str]) -> None:
        """Read the rows of ``lines`` (from line ``first``) into the model, with their values."""
        rows = self._read_rows(first, lines)
        self._tally_many(rows)
        self._index_many(rows)

    def _read_rows(self, first: int, lines: list[str]) -> list[ModelRow]:
        """The rows of ``lines`` (from line ``first``), placed in the model with
        their values, neither counted nor indexed yet."""
        read = read_lines(ModelRow, lines, self.workspace.settings.max_line_bytes)
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

    def _rows_from(self, first: int, count: int) -> list[tuple[int, ModelRow]]:
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
        to_look_at: list[tuple[int, ModelRow]] = []
        plain = ModelRow.plain
        for index, answer in answers:
            first = starts[index]
            lines = batches[index]
            answer = received(answer)
            if not is_answer(answer, len(lines), self.path, first, self._systemic):
                self._read_and_check_batch(first, lines, use, shape, found)
                continue
            self.lines_from_helper += len(lines)
            taken: list[ModelRow] = []
            codes, kept_by_line, tallies, unfinished, passed, corpora, repeated, errors = answer
            counts = memoryview(tallies).cast("I")
            looks: list[int] = []  # lines it did not pass, read here together below
            for line, number, text, code, kept in zip(itertools.count(first), itertools.count(0, COUNTS), lines, codes, kept_by_line):
                if code == BLANK:
                    continue
                if code == LOOK:
                    looks.append(line)
                    continue
                if code == NOT_JSON:
                    row = rows[line] = ModelRow.not_json(text.removesuffix("\r"), errors[line - first], line)
                    taken.append(row)
                    continue
                line_shape, exact = PLAIN[code]
                row = plain(text.removesuffix("\r"), line_shape, kept, exact, line, counts[number], counts[number + 1], counts[number + 2])
                rows[line] = row
                if corpora:
                    row.corpora = corpora.get(line - first, ())
                if repeated:
                    row.repeated_keys = repeated.get(line - first, ())
                taken.append(row)
            for number, found_here in unfinished.items():
                # By the line's number in the batch, made on its line of the file.
                found[first + number] = Unfinished(found_here) if any(finding.unfinished is not None for finding in found_here) else found_here
            self._set_passed_many(passed, first)
            if looks:
                read = read_lines(ModelRow, [lines[line - first] for line in looks], self.workspace.settings.max_line_bytes)
                for number, row in read:
                    line = row.line = looks[number]
                    rows[line] = row
                    taken.append(row)
                    to_look_at.append((line, row))
                self._tally_many([row for _, row in read])
            self._index_many(taken)
        for start in range(0, len(to_look_at), _CHECK_BATCH):
            self._check_batch(to_look_at[start : start + _CHECK_BATCH], use, shape, found)

    # ------------------------------------------------------------ what it holds

    @property
    def shape(self) -> str | None:
        """The majority row shape (as ``Workspace.dataset_shape`` gives)."""
        return self._shape()

    @property
    def case_count(self) -> int:
        return len(self.rows) - self.rows.count(None)

    # ------------------------------------------------------------ indexes

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

    # ------------------------------------------------------------ findings

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
        across += self._whole_dataset_findings(use, shape)
        across += self._document
        across += encoding_findings(self.workspace, self.path, self.encoding)
        across.sort(key=position_key)
        self.checked = True
        return across

    def _whole_dataset_findings(self, use: DatasetUse, shape: str | None) -> list[Finding]:
        """The findings of every registered check over the whole dataset (see
        registry.whole_dataset_checks), given the dataset's facts as the
        one-shot analysis gives them: its tally of expected paths, and where
        most are missing the first one (RAG203 then reports them once)."""
        tally = self._path_tally(use, shape)
        # The first missing path is looked for only where it is reported: a
        # scan of the rows on every keystroke would cost as much as the edit.
        line = next((line for line, row in enumerate(self.rows) if row is not None and row.absent), None) if tally.elsewhere else None
        # The same findings while what they say is the same (a word typed into a
        # query changes none of it): then what an editor is shown is spliced (see
        # _spliced) rather than looked at again whole.
        key = (self._facts, tally.listed, tally.absent, line, self.lines[line] if line is not None else None)
        if self._whole_dataset is not None and self._whole_dataset[0] == key:
            return self._whole_dataset[1]
        row = self.rows[line] if line is not None else None
        if row is not None:
            row.restore()
        try:
            first = (RowContext(self.path, row, line), first_missing_index(self.workspace, row.value["expect"]["relevant"])) if row is not None else None
            context = DatasetContext(self.workspace, self.path, {}, (), use, tally, first)
            found = [finding for _, check in registry.whole_dataset_checks() for finding in check(context)]
        finally:
            if row is not None:
                row.drop()
        made = finish(self.workspace, self.path, found)
        self._whole_dataset = (key, made)
        return made

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
        batch: list[tuple[int, ModelRow]],
        use: Any,
        shape: str | None,
        found: dict[int, list[Finding]],
        front: Counter[str] | None = None,
        tally: bool = False,
        finish_here: bool = True,
    ) -> None:
        """Add the row rules' findings on ``batch`` (rows holding their values) to
        ``found``, by line; the values are dropped after. ``front``: the batch
        continues the first reading's front (its batches in order, from the
        first), and counts its findings of each code so far. ``tally``: count the
        rows' expected paths too (see _tally), before their values go.
        ``finish_here``: finish findings here as said below; else none (the
        caller finishes them later)."""
        limit = self.workspace.settings.max_findings_shown
        try:
            # Asked for every finding (a check from the command line), the rules
            # finish each one here, in its batch; so is a finding of the front
            # that an editor is shown (the first of its code, see shown). Either
            # is finished while the helper reads further batches: finished after
            # the reading, they would leave it idle meanwhile.
            context = RowsContext.of(
                self.workspace, self.path, use, shape, batch, finish_when_shown=not (self._every_finding and finish_here), systemic=self._systemic
            )
            for finding in finish(self.workspace, self.path, check_rows(context)):
                if front is not None:
                    front[finding.code] += 1
                    if finish_here and finding.unfinished is not None and front[finding.code] <= limit + 1:
                        finding = registry.finished(self.workspace, finding)
                line = finding.range.start.line
                placed = found.get(line)
                if placed is None:
                    placed = found[line] = []
                if finding.unfinished is not None and type(placed) is not Unfinished:
                    placed = found[line] = Unfinished(placed)
                placed.append(finding)
            if tally:
                for (_, row), (listed, absent) in zip(batch, context.path_tallies):
                    row.listed, row.absent = listed, absent
            self._set_passed_many(context.passed_over)
        finally:
            for _, row in batch:
                row.drop()


def _batch_starts(lines: list[str]) -> list[int]:
    """The first line of each batch of a first reading (see _BATCH_CHARACTERS):
    at most _CHECK_BATCH lines (_FIRST_BATCH for the first), and no more than
    one line past _BATCH_CHARACTERS."""
    starts = []
    first, count = 0, len(lines)
    while first < count:
        starts.append(first)
        end = min(first + (min(_FIRST_BATCH, _CHECK_BATCH) if first == 0 else _CHECK_BATCH), count)
        # Nearly every batch is within the characters' limit, told in one pass
        # in C; a line at a time only where a batch is not.
        if sum(map(len, lines[first:end])) >= _BATCH_CHARACTERS:
            reached = 0
            for line in range(first, end):
                reached += len(lines[line])
                # The line that reaches the limit ends the batch, so each holds at least one.
                if reached >= _BATCH_CHARACTERS:
                    end = line + 1
                    break
        first = end
    return starts or [0]
