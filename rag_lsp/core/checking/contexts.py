"""What each rule scope is given to look at.

Contexts hold offsets and nodes; they turn them into ranges (code points) with the
document's line index, built once per version.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Container, Iterable, Iterator, Sequence, overload

from .datasetindex import LINE_OF, RowGrouping, groups_of
from .folding import folds
from ..workspace.expected import ExpectedVerdict, split_by_list
from ..reading.jsondocument import JsonDocument, Table, read_document, read_lines_as_document
from ..reading.jsonrows import Row
from ..workspace.manifests import GDI_TEXT, RAG_CASE
from ..reading.schemacheck import SchemaIssue
from ..reading.text import Position, Range
from ..reading.paths import normalize_relative, not_normal_among
from ..workspace.suitefacts import DatasetUse, SuiteInfo
from ..workspace.workspace import ParsedYaml, Workspace
from ..reading.yamltree import YNode
from .expectedpaths import PathTally, all_among, case_path_tallies, files_written_otherwise, first_missing_index, path_tally, tallied_as_case, tally_of


@dataclass
class YamlContext:
    """A YAML file: a suite file, a manifest or the targets config."""

    workspace: Workspace
    path: str
    parsed: ParsedYaml

    @property
    def root(self) -> YNode | None:
        return self.parsed.document.root

    def range(self, start: int, end: int) -> Range:
        return self.parsed.lines.range(start, end)

    def node_range(self, node: YNode) -> Range:
        return self.range(node.start, node.end)

    def issue_range(self, issue: SchemaIssue, root: YNode | None = None) -> Range:
        """Where a schema issue lands: the offending key or value node."""
        start, end = locate(root or self.root, issue.path, issue.anchor)
        return self.range(start, end)

    def line_end(self, offset: int) -> int:
        """The offset of the end of the line holding ``offset``."""
        position = self.parsed.lines.position(offset)
        return self.parsed.lines.line_start(position.line) + len(self.parsed.lines.line_text(position.line))


@dataclass
class SuiteContext(YamlContext):
    """One suite of a suite file (``suite.node`` is its mapping)."""

    suite: SuiteInfo | None = None

    @property
    def node(self) -> YNode:
        assert self.suite is not None
        return self.suite.node


# A value not looked up yet (None is a normal form: a path out of the workspace).
_UNSEEN = object()


class RowContext:
    """One dataset line, at ``line`` of its file."""

    __slots__ = ("path", "row", "line")

    def __init__(self, path: str, row: Row, line: int) -> None:
        self.path = path
        self.row = row
        self.line = line

    def columns(self, start: int, end: int) -> Range:
        return Range(Position(self.line, start), Position(self.line, end))

    def value_range(self, *path: Any) -> Range:
        if path and type(path[-1]) is int:
            # An element of a list (an expected path, most often): where it is,
            # without the span a row keeps of each path it is asked about.
            columns = self.row.element_columns(path[:-1], path[-1])
            if columns is not None:
                return self.columns(*columns)
        span = self.row.span(*path)
        return self.columns(span.value_start, span.value_end)

    def key_range(self, *path: Any) -> Range:
        return self.columns(*self.row.key_span(*path))

    def line_range(self) -> Range:
        return self.columns(0, len(self.row.text))

    def member_range(self, *path: Any) -> Range:
        """What removing the member at ``path`` (an object's key with its value)
        takes out: with the comma before it, or, for an object's first member,
        with the comma after it and the space up to the next key, so that what
        is left is JSON still."""
        span = self.row.span(*path)
        text = self.row.text
        start = span.key_start if span.key_start is not None else span.value_start
        end = span.value_end
        before = text[:start].rstrip()
        if before.endswith(","):
            return self.columns(len(before) - 1, end)
        after = text[end:].lstrip()
        if after.startswith(","):
            return self.columns(start, len(text) - len(after[1:].lstrip()))
        return self.columns(start, end)


@dataclass
class RowsContext:
    """A batch of dataset lines for the row rules.

    A row rule's findings on a line depend only on that line's text and the
    dataset's facts (``use``, ``shape``), never on other lines: so the server can
    check only the lines an edit touched, and a rule loops over a whole batch
    itself, which keeps a 100k-line dataset fast.
    """

    workspace: Workspace
    path: str
    use: DatasetUse
    shape: str | None
    rows: list[RowContext]
    # Whether a rule may leave the costly part of a finding's message for when it
    # is shown (see Finding.unfinished): set where not every finding is, an
    # editor's dataset model and the helper process screening lines for it.
    finish_when_shown: bool = False
    # The (code, cause) pairs a dataset model presumes to stand on most rows, to be
    # folded into one finding (see core.checking.folding): their occurrences are only
    # counted, in ``passed_over``: the (code, cause) pair of each, by line (see passes_over).
    systemic: frozenset[tuple[str, str]] = frozenset()
    # A line's pairs are one tuple, which lines alike share (a dataset written by
    # another tool passes over the same on every line).
    passed_over: dict[int, tuple[tuple[str, str], ...]] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        workspace: Workspace,
        path: str,
        use: DatasetUse,
        shape: str | None,
        rows: Iterable[tuple[int, Row]],
        finish_when_shown: bool = False,
        systemic: frozenset[tuple[str, str]] = frozenset(),
    ) -> RowsContext:
        return cls(workspace, path, use, shape, [RowContext(path, row, line) for line, row in rows], finish_when_shown, systemic)

    def passes_over(self, code: str, cause: str, line: int) -> bool:
        """Whether a finding of ``code`` for ``cause`` on ``line`` is one of a cause
        presumed to stand on most rows: then it is counted here, and its rule makes
        neither it nor its range and fix (it is made if it is ever read, see
        folding.Occurrences). A rule asks before the costly part of a finding."""
        pair = (code, cause)
        if pair in self.systemic:
            self.pass_over((pair,), line)
            return True
        return False

    def presumed(self, code: str) -> dict[str, tuple[str, str]]:
        """The causes of ``code`` presumed to stand on most rows (see passes_over),
        each with its (code, cause) pair: for a rule that counts many occurrences
        on a row at once (see pass_over)."""
        return {cause: pair for pair in self.systemic if (cause := pair[1]) and pair[0] == code}

    def pass_over(self, pairs: Sequence[tuple[str, str]], line: int) -> None:
        """Count occurrences of presumed causes (their pairs, see presumed) on
        ``line``, as passes_over does one by one: a tuple given is kept as it is."""
        held = self.passed_over.get(line)
        self.passed_over[line] = tuple(pairs) if held is None else held + tuple(pairs)

    @cached_property
    def cases(self) -> list[tuple[RowContext, dict[str, Any]]]:
        """Rag case rows, with their objects."""
        return self._by_shape[RAG_CASE]

    @property
    def relevant_lists(self) -> list[tuple[RowContext, list[Any]]]:
        """Rag cases with their ``expect.relevant`` list (empty or not). The list
        is the row's own: a copy per case, or a pair per value, would cost more
        than the rules that read them."""
        return self._lists[0]

    @property
    def without_a_list(self) -> list[tuple[RowContext, dict[str, Any], ExpectedVerdict]]:
        """Rag cases whose ``expect.relevant`` is not a non-empty list, with the
        verdict of :func:`~rag_lsp.core.workspace.expected.judge_expected` (RAG200, RAG201)."""
        return self._lists[1]

    @cached_property
    def _lists(self) -> tuple[list[tuple[RowContext, list[Any]]], list[tuple[RowContext, dict[str, Any], ExpectedVerdict]]]:
        # relevant_lists and without_a_list, from one pass over the cases.
        return split_by_list(self.cases)

    @cached_property
    def expected(self) -> list[tuple[RowContext, list[Any]]]:
        """Rag cases with their non-empty ``expect.relevant`` list, for the rules
        about expected values: they read its strings with their indexes (other
        elements are RAG004's)."""
        return [pair for pair in self.relevant_lists if pair[1]]

    @cached_property
    def expected_off_the_files(self) -> list[tuple[RowContext, list[Any]]]:
        """The cases of :attr:`expected` with a value that is not the path, in
        normal form, of a workspace file the dataset's targets may return (see
        Workspace.searched_files): the only ones the rules about expected paths
        look into, as nearly every case lists such files exactly."""
        files = self.workspace.searched_files(self.use)
        superset = files.issuperset
        try:
            return [pair for pair in self.expected if not superset(pair[1])]
        except TypeError:  # a value that cannot be in a set (an object): looked at case by case
            return [pair for pair in self.expected if not all_among(files, pair[1])]

    @cached_property
    def written_otherwise(self) -> list[tuple[RowContext, list[Any]]]:
        """The cases of :attr:`expected_off_the_files` whose every value, in normal
        form, is a file the targets may return: written in another form only
        (``./a.md``, ``a\\b.md``), which is RAG206's alone. A dataset written by
        another tool has every case so: each is looked into once here, not by
        every rule about expected paths (see missing_expected, path_tallies)."""
        return self._off_by_form[0]

    @cached_property
    def missing_expected(self) -> list[tuple[RowContext, list[Any]]]:
        """The other cases of :attr:`expected_off_the_files`: those listing a path
        that is no file the targets may return, in any form (RAG203's)."""
        return self._off_by_form[1]

    @cached_property
    def _off_by_form(self) -> tuple[list[tuple[RowContext, list[Any]]], list[tuple[RowContext, list[Any]]]]:
        off = self.expected_off_the_files
        if not off:
            return [], []
        reachable = self._reachable_values(off)
        # Each case in one search in C: a dataset written by another tool lists
        # hundreds of thousands of values, every one written otherwise. A case
        # holding a value that cannot be in a set (an object) is no such case.
        otherwise: list[tuple[RowContext, list[Any]]] = []
        missing: list[tuple[RowContext, list[Any]]] = []
        for pair in off:
            (otherwise if all_among(reachable, pair[1]) else missing).append(pair)
        return otherwise, missing

    def _reachable_values(self, off: list[tuple[RowContext, list[Any]]]) -> set[Any]:
        """The values, as written, whose normal form is a file the targets may
        return, among those seen so far in the workspace (kept with its other
        facts): each distinct value is normalized once."""
        searched = self.workspace.searched_files(self.use)
        known = self.workspace.memo("values by reach")
        entry = known.get(self.use.builtin_corpora)
        if entry is None or entry[0] is not searched:
            entry = known[self.use.builtin_corpora] = (searched, set(searched), set())
        _, reachable, unreachable = entry
        try:
            values = set().union(*(relevant for _, relevant in off))
        except TypeError:  # a value that cannot be in a set: the strings are looked at
            values = {value for _, relevant in off for value in relevant if type(value) is str}
        new = values.difference(reachable, unreachable)
        # A value in normal form (nearly every one) is its own normal form, and
        # those of the files are reachable from the start: only the others are
        # normalized. A dataset of a corpus partly elsewhere lists a distinct
        # path on every row, each normalized in a few microseconds.
        strings = [value for value in new if type(value) is str]
        odd = not_normal_among(strings)
        unreachable.update(value for value in new if type(value) is not str)
        for value in strings:
            if value in odd:
                normal = normalize_relative(value)
                (reachable if normal is not None and normal in searched else unreachable).add(value)
            else:
                unreachable.add(value)
        return reachable

    @cached_property
    def not_normal_expected(self) -> set[str]:
        """The values of :attr:`expected_off_the_files` that are not in normal form
        (``./a.md``), found in one search: a dataset can list hundreds of thousands
        of distinct paths, nearly all in normal form. A value of a case written
        otherwise (see written_otherwise) that is no file as written is not in
        normal form (its normal form is one), so only the other cases are searched."""
        files = self.workspace.normal_file_set()
        values = [value for _, relevant in self.missing_expected for value in relevant if type(value) is str and value not in files]
        written_otherwise = self.written_otherwise
        if not written_otherwise:
            return not_normal_among(values)
        otherwise = set().union(*(relevant for _, relevant in written_otherwise)).difference(files)
        return not_normal_among(values) | otherwise

    @cached_property
    def found_otherwise(self) -> frozenset[str]:
        """Those of :attr:`not_normal_expected` whose normal form is a workspace file."""
        return files_written_otherwise(self.workspace, self.not_normal_expected)

    @cached_property
    def paths(self) -> tuple[PathTally, tuple[RowContext, int] | None]:
        """The batch's tally of expected paths, and its first missing one (its row
        and index), where expected paths are checked against the workspace (see
        DatasetUse.paths_in_workspace); else nothing counted. Only the cases that
        list something other than workspace files are looked into."""
        use = self.use
        if "path" not in use.matches or not use.paths_in_workspace:
            return PathTally(), None
        workspace = self.workspace
        files = workspace.normal_file_set()
        off = self.expected_off_the_files
        # Every value of the other cases is a workspace file's path; those of
        # these are counted all at once (a dataset can list a quarter of a million).
        listed = sum(len(relevant) for _, relevant in self.expected) - sum(len(relevant) for _, relevant in off)
        values = [value for _, relevant in off for value in relevant if type(value) is str]
        found = sum(map(files.__contains__, values))
        not_normal = self.not_normal_expected
        if self.found_otherwise:
            found += sum(map(self.found_otherwise.__contains__, values))
        listed += len(values)
        absent = len(values) - found
        first_missing = None
        if absent:
            for context, relevant in off:
                if path_tally(workspace, files, relevant, not_normal)[1]:
                    first_missing = (context, first_missing_index(workspace, relevant))
                    break
        return PathTally(listed, absent, self.workspace.folds_findings), first_missing

    @cached_property
    def path_tallies(self) -> list[tuple[int, int]]:
        """:func:`case_path_tallies` of each row ((0, 0) for a row that is not a
        rag case), as a dataset model counts its rows (see DatasetModel._tally),
        from what the rules about expected paths found in the batch: the cases
        listing only files a target searches, and the values off the files not
        in normal form. Each value is then looked at once per batch: counted
        apart, a dataset of a corpus elsewhere searched its hundreds of
        thousands of values twice."""
        if self.shape == GDI_TEXT:
            # Not the cases of this batch (see _by_shape): the model counts rag
            # cases in a file of gdi rows too, should the file turn to rag cases.
            counted = [(index, context.row.value) for index, context in enumerate(self.rows) if tallied_as_case(context.row)]
            tallies = [(0, 0)] * len(self.rows)
            for (index, _), tally in zip(counted, case_path_tallies(self.workspace, [value for _, value in counted])):
                tallies[index] = tally
            return tallies
        # A case listing only files a target searches lists only workspace files
        # in normal form (see Workspace.searched_files): all found.
        # So do those written otherwise: in normal form, each value is such a file.
        by_row = {id(context): (len(relevant), 0) for context, relevant in self.expected}
        off = self.missing_expected
        if off:
            files = self.workspace.normal_file_set()
            found_otherwise = self.found_otherwise
            for context, relevant in off:
                by_row[id(context)] = tally_of([value for value in relevant if type(value) is str], files, found_otherwise)
        none = (0, 0)
        return [by_row.get(id(context), none) for context in self.rows]

    @cached_property
    def gdi_rows(self) -> list[tuple[RowContext, dict[str, Any]]]:
        """gdi_text_v1 rows, with their objects."""
        return self._by_shape[GDI_TEXT]

    @cached_property
    def _by_shape(self) -> dict[str, list[tuple[RowContext, dict[str, Any]]]]:
        # A row is checked as the shape RAG004 validates it against (the file's
        # shape, else its own), and only when its own keys do not say it is the
        # other shape: a gdi row among rag cases is reported once, by RAG004.
        found: dict[str, list[tuple[RowContext, dict[str, Any]]]] = {RAG_CASE: [], GDI_TEXT: []}
        shape = self.shape
        for context in self.rows:
            row = context.row
            value = row.value
            if type(value) is not dict:  # not an object (or not read: no value)
                continue
            own_shape = row.shape
            checked_as = shape or own_shape or RAG_CASE
            if own_shape is None or own_shape == checked_as:
                found[checked_as].append((context, value))
        return found


class RowsOnLines(Sequence[RowContext]):
    """Rows of a dataset as the contexts of their lines, in line order, each
    context made when it is looked at: a group of a hundred thousand rows (one
    case id on every row) is handed to its rule at each edit, which looks at
    the first few.

    The rows are those given, and their lines those the rows hold when given,
    read from the rows as they are looked at: whoever gave them calls
    :meth:`freeze` before it changes a row's line (see DatasetModel._renumber)."""

    __slots__ = ("path", "_rows", "_lines", "__weakref__")

    def __init__(self, path: str, rows: Sequence[Row], lines: list[int] | None = None) -> None:
        self.path = path
        self._rows = list(rows)
        self._lines = lines

    @classmethod
    def of(cls, contexts: Sequence[RowContext], path: str) -> RowsOnLines:
        return cls(path, [context.row for context in contexts], [context.line for context in contexts])

    def freeze(self) -> None:
        """Keep the lines the rows hold now (in C)."""
        if self._lines is None:
            self._lines = list(map(LINE_OF, self._rows))

    @property
    def lines(self) -> list[int]:
        """Each row's line, ascending."""
        self.freeze()
        return self._lines  # type: ignore[return-value]

    def line(self, index: int) -> int:
        return self._lines[index] if self._lines is not None else self._rows[index].line  # type: ignore[attr-defined]

    def __len__(self) -> int:
        return len(self._rows)

    @overload
    def __getitem__(self, index: int) -> RowContext: ...
    @overload
    def __getitem__(self, index: slice) -> RowsOnLines: ...
    def __getitem__(self, index: int | slice) -> RowContext | RowsOnLines:
        if isinstance(index, slice):
            return RowsOnLines(self.path, self._rows[index], self.lines[index])
        return RowContext(self.path, self._rows[index], self.line(index))

    def __iter__(self) -> Iterator[RowContext]:
        lines = self._lines if self._lines is not None else map(LINE_OF, self._rows)
        return map(RowContext, itertools.repeat(self.path), self._rows, lines)


@dataclass
class DocumentContext:
    """A dataset's text as a whole, before its lines are read as rows, and that
    text read as one JSON document, or a table, where it is one (see
    core.reading.jsondocument)."""

    workspace: Workspace
    path: str
    # The text, or its lines (a model's, see read_lines_as_document).
    text: str | Sequence[str]

    @cached_property
    def document(self) -> JsonDocument | Table | None:
        return read_document(self.text) if isinstance(self.text, str) else read_lines_as_document(self.text)


@dataclass
class DatasetContext:
    """Facts across the lines of one dataset: the rows that share a value (for
    a rule that groups rows, see core.checking.datasetindex), and how many expected
    paths are missing.

    ``repeated`` holds the groups to report, by value, each with its rows in
    line order; a full check lists every group of more than one row, an
    incremental one only the groups an edit touched. ``ids`` holds every value
    of the grouping (a rule offering a new case id picks one that is free). The
    id of a rag case is its ``id``, that of a gdi_text_v1 row its ``input_id``
    (``id_key``): a run names rows by it, and breaks a repeat. ``paths`` is the
    tally of expected paths to report on, with the first missing one (its row
    and index); None when it is not to be reported (a check of groups).
    """

    workspace: Workspace
    path: str
    repeated: dict[Any, RowsOnLines]
    ids: Container[Any]
    use: DatasetUse = DatasetUse()
    paths: PathTally | None = None
    first_missing: tuple[RowContext, int] | None = None
    id_key: str = "id"
    # How many rows the dataset has: findings of one cause on most of them fold
    # (see core.checking.folding).
    row_count: int = 0

    @classmethod
    def of(cls, workspace: Workspace, path: str, rows: RowsContext) -> DatasetContext:
        """The facts of the whole dataset of ``rows`` (its tally of expected paths)."""
        tally, first_missing = rows.paths
        return cls(workspace, path, {}, (), rows.use, tally, first_missing, _id_key(rows), len(rows.rows))

    def grouped(self, rows: RowsContext, grouping: RowGrouping) -> DatasetContext:
        """The facts a rule that groups rows is given: the groups of more than
        one row of ``rows`` (every row, fresh) by what ``grouping`` keeps of them."""
        # A file's rows are checked as one shape: at most one of these has rows.
        members = rows.gdi_rows if rows.gdi_rows else rows.cases
        first, shared = groups_of(members, lambda context, value: grouping.value_of(value, context.row.shape))
        repeated = {value: RowsOnLines.of(group, self.path) for value, group in shared.items()}
        return DatasetContext(self.workspace, self.path, repeated, first, self.use, id_key=self.id_key, row_count=self.row_count)

    def folds(self, lines: int) -> bool:
        """Whether findings of one cause on ``lines`` of the dataset's rows fold
        (and the settings fold findings): a rule over the whole dataset then
        makes them when read (see folding.folded_ahead)."""
        return self.workspace.folds_findings and folds(lines, self.row_count)


def _id_key(rows: RowsContext) -> str:
    return ID_KEYS[GDI_TEXT] if rows.gdi_rows else ID_KEYS[RAG_CASE]


# The key that names a row, by the shape it is checked as.
ID_KEYS = {RAG_CASE: "id", GDI_TEXT: "input_id"}


def case_id(case: dict[str, Any], shape: str | None = None) -> str | None:
    """The id of a rag case (of a gdi_text_v1 row when ``shape`` says so: its
    ``input_id``), when it is usable (a non-empty string; else RAG004's)."""
    value = case.get("input_id" if shape == GDI_TEXT else "id")
    return value if type(value) is str and value else None


def locate(root: YNode | None, path: tuple[Any, ...], anchor: str = "value") -> tuple[int, int]:
    """Offsets of the node at ``path`` (its key when ``anchor`` is "key").

    A path that goes further than the tree ends at the deepest node that exists.
    The key of a mapping's own position is the key that holds the mapping; for a
    list element or the document, the first key inside it.
    """
    if root is None:
        return 0, 0
    node = root.resolve()
    key_node: YNode | None = None
    for part in path:
        if node.kind == "map":
            pair = node.entry(part) if part is None or isinstance(part, (str, int, float)) else None
            if pair is None:
                break
            key_node, node = pair[0], pair[1].resolve()
        elif node.kind == "seq" and isinstance(part, int) and 0 <= part < len(node.value):
            key_node, node = None, node.value[part].resolve()
        else:
            break
    if anchor == "key":
        if key_node is not None:
            return key_node.start, key_node.end
        first = node.items()[0][0] if node.items() else None
        if first is not None:
            return first.start, first.end
    return node.start, max(node.end, node.start)
