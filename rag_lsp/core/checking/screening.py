"""What a helper process does with a share of a dataset's first reading.

The model (rag_lsp.core.checking.incremental) hands the helper a
:class:`Screening`; the helper screens each batch it takes with
:func:`screen_batch` and answers what the model keeps of each line, which the
model believes only once :func:`is_answer` says it is such an answer.
"""

from __future__ import annotations

from array import array
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from . import rules as registry
from .analyze import check_rows, finish
from .contexts import RowsContext
from .datasetindex import kept_are_valid
from .parallel import prepared
from ..reading.findings import Finding, Fix, Severity, TextEdit
from ..reading.text import Position, Range
from ..workspace.manifests import RAG_CASE
from ..workspace.settings import Settings
from ..reading.datasetlines import read_lines
from ..workspace.suitefacts import DatasetUse
from ..workspace.workspace import Workspace
from .modelrows import ANSWERED, BLANK, COUNTS, LOOK, MOST_COUNTED, NOT_JSON, ModelRow, PLAIN, PLAIN_CODE


@dataclass(frozen=True)
class WorkspaceFiles:
    """The workspace a screening reads in, as this process listed it: what a
    helper makes while it waits for its job (see Helper.prepare)."""

    root: Path
    settings: Settings
    files: list[str]
    # Those of the files not in normal form, as this process found them: the
    # helper need not search every path again before its first batch.
    not_normal_files: frozenset[str]

    @classmethod
    def of(cls, workspace: Workspace) -> WorkspaceFiles:
        return cls(workspace.root, workspace.settings, workspace.files(), workspace.not_normal_files())

    def workspace(self) -> Workspace:
        workspace = Workspace(self.root, self.settings)
        workspace.adopt_files(self.files, self.not_normal_files)
        return workspace

    def make(self) -> Workspace:
        """The workspace, with what a screening that finishes its findings asks
        of its files made ahead: the index of their paths (a did-you-mean's),
        tens of milliseconds for 20,000 files, which its first batch would
        otherwise wait for."""
        workspace = self.workspace()
        workspace.normal_file_set()
        workspace.path_index()
        return workspace


@dataclass(frozen=True)
class Screening:
    """A helper's job: screen lines of a dataset as this process checks them,
    with the same workspace files, settings, facts and row shape."""

    files: WorkspaceFiles
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

    def start(self) -> Callable[[int, memoryview], tuple]:
        workspace = prepared(self.files) or self.files.workspace()

        def screen(index: int, text: memoryview) -> tuple:
            """What screen_batch answers of batch ``index``, its findings finished where every finding is wanted."""
            batch = str(text, "utf-8", "surrogatepass").split("\n")
            first = self.batch_starts[index] if index < len(self.batch_starts) else 0
            codes, kept, counts, unfinished, passed, corpora, repeated, errors = screen_batch(workspace, self.path, self.use, self.shape, batch, first, self.systemic)
            finished = registry.finished if self.finish else _as_made
            findings = {number: [_wire(finished(workspace, finding)) for finding in found] for number, found in unfinished.items()}
            return codes, kept, counts, findings, passed, corpora, repeated, errors

        return screen


def screen_batch(
    workspace: Workspace,
    path: str,
    use: DatasetUse,
    shape: str | None,
    lines: list[str],
    first: int = 0,
    systemic: frozenset[tuple[str, str]] = frozenset(),
) -> tuple[bytes, list[Any], bytes, dict[int, list[Finding]], dict[int, tuple[tuple[str, str], ...]], dict, dict, dict[int, tuple[int, str]]]:
    """For each line of a batch, a code, what the groupings keep of it and a
    count of expected paths, and the findings of plain lines.
    The code is BLANK; for a plain line (an object or array read with no error)
    one of PLAIN's, its row's shape and whether it was read exactly, with what
    the dataset rules that group rows keep of it (its case id, see
    core.checking.datasetindex), and by its number in the batch the corpora it
    asks to search and the keys it repeats, where it does; for a line that is not JSON,
    NOT_JSON, with where and why (its row's error, by its number in the batch:
    the last element of the answer); else LOOK: the model reads and checks it.
    The counts are two unsigned 32-bit integers per line, its expected paths
    and those not workspace files (see DatasetModel._tally). A byte per line, a
    list of kept values and an array cost little to send and to check (see is_answer).
    A plain line's findings (and one not JSON's) come by its number in the batch, made on its line
    of the file (the batch's ``first`` line and on). A row rule's
    findings depend on the line alone (and the facts the screening shares), so
    a line with findings is plain all the same: a dataset written by another
    tool holds one finding on every row, and its lines are screened here as
    cheaply as clean ones. Findings of a rule that finishes its findings may
    come unfinished (see Finding.unfinished), saying only what a check of the
    line found: the model's rules finish them when they are shown, as they do
    their own (a screening for every finding finishes them: see
    Screening.finish). Occurrences of the ``systemic`` causes are only counted:
    the (code, cause) pairs of each line's, by its number in the batch (see
    RowsContext.passes_over); lines alike share one tuple, which the pickle
    sends once."""
    ModelRow.prepare()
    rows = read_lines(ModelRow, lines, workspace.settings.max_line_bytes)
    numbered = [(first + number, row) for number, row in rows] if first else rows
    context = RowsContext.of(workspace, path, use, shape, numbered, finish_when_shown=True, systemic=systemic)
    with_findings: dict[int, list[Finding]] = {}
    for finding in finish(workspace, path, check_rows(context)):
        with_findings.setdefault(finding.range.start.line - first, []).append(finding)
    codes = bytearray(len(lines))  # BLANK
    kept: list[Any] = [None] * len(lines)
    counts = array("I", bytes(4 * COUNTS * len(lines)))
    unfinished: dict[int, list[Finding]] = {}
    errors: dict[int, tuple[int, str]] = {}
    # The corpora each plain line asks to search, where it asks, and the keys it
    # repeats, where it repeats one (rows alike share one tuple).
    alike_names: dict[tuple[str, ...], tuple[str, ...]] = {}
    corpora: dict[int, tuple[str, ...]] = {}
    repeated: dict[int, tuple[str, ...]] = {}
    # One pass over the rows: a hundred thousand lines are screened in batches of thousands.
    for (number, row), (listed, absent) in zip(rows, context.path_tallies):
        base = COUNTS * number
        if listed:
            counts[base], counts[base + 1] = listed, absent
        if row.top_k:
            counts[base + 2] = min(row.top_k, MOST_COUNTED)
        if row.error is None and row.refused is None and type(row.value) in (dict, list):  # a value the model drops
            codes[number] = PLAIN_CODE[row.shape, row.exact]
            kept[number] = row.kept
            if row.corpora:
                corpora[number] = alike_names.setdefault(row.corpora, row.corpora)
            if row.repeated_keys:
                repeated[number] = alike_names.setdefault(row.repeated_keys, row.repeated_keys)
        elif row.error is not None and row.refused is None:
            codes[number] = NOT_JSON
            errors[number] = row.error
        else:
            codes[number] = LOOK
            continue
        found = with_findings.get(number)
        if found is not None:
            unfinished[number] = found
    alike: dict[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]] = {}
    passed: dict[int, tuple[tuple[str, str], ...]] = {}
    for line, pairs in context.passed_over.items():
        passed[line - first] = alike.setdefault(pairs, pairs)
    return bytes(codes), kept, counts.tobytes(), unfinished, passed, corpora, repeated, errors


def _as_made(workspace: Workspace, finding: Finding) -> Finding:
    return finding


# A finding crosses the pipe as the plain values it holds (see _wire): a pickled
# named tuple costs a call back into Python for each, and a finding holds seven
# of them, where a dataset with a few percent of its paths mistyped has thousands.
_SEVERITIES = {int(severity): severity for severity in Severity}


def _wire(finding: Finding) -> tuple | Finding:
    """A finding of a screened line as plain values (see received); one with
    related places or members, which no row rule makes, as it is."""
    if finding.related or finding.covers:
        return finding
    fixes = tuple((fix.title, tuple((tuple(edit.range.start + edit.range.end), edit.new_text) for edit in fix.edits), fix.create_file, fix.every) for fix in finding.fixes)
    where = finding.range
    return (finding.code, int(finding.severity), (*where.start, *where.end), finding.message, finding.path, fixes, finding.unfinished, finding.cause)


def _unwired(wire: tuple | Finding) -> Finding:
    """The finding :func:`_wire` gave ``wire`` for. Its parts are made as the
    tuples they are: a named tuple's own constructor is a call into Python each."""
    if type(wire) is Finding:
        return wire
    code, severity, where, message, path, fixes, unfinished, cause = wire
    where_range = _range(where)
    if fixes:
        fixes = tuple(
            _new(Fix, (title, tuple(_new(TextEdit, (where_range if at == where else _range(at), text)) for at, text in edits), create_file, every))
            for title, edits, create_file, every in fixes
        )
    return _new(Finding, (code, _SEVERITIES[severity], where_range, message, path, fixes, (), unfinished, cause, ()))


_new = tuple.__new__


def _range(where: tuple[int, int, int, int]) -> Range:
    start_line, start, end_line, end = where
    return _new(Range, (_new(Position, (start_line, start)), _new(Position, (end_line, end))))


def received(answer: Any) -> Any:
    """A screening's answer as the caller reads it: its findings made again
    from the values they crossed the pipe as (see _wire); None for an answer
    whose findings are not such values (:func:`is_answer` then refuses it)."""
    try:
        codes, kept, counts, findings, passed, corpora, repeated, errors = answer
        made = {number: [_unwired(wire) for wire in wires] for number, wires in findings.items()}
    except (TypeError, ValueError, KeyError, AttributeError):
        return None
    return codes, kept, counts, made, passed, corpora, repeated, errors


def warm_up() -> None:
    """Screen two made-up lines in an empty workspace, as a helper's first job
    would: what every screening needs once per process (the row schemas
    compiled, the built-in manifests read, the schema explainer loaded) is then
    ready before a dataset is opened."""
    # A row with a misspelt key: explaining it loads the fuzzy matcher too.
    _screen_made_up(['{"id": "a", "input": {"query": "q"}, "expect": {"relevant": ["a.md"], "relevent": []}}', '{"id": 1}'])


def warm_up_rows() -> None:
    """:func:`warm_up` for a helper that reads one dataset and ends (a check from
    the command line): the row schemas compiled and the manifests read; the
    schema explainer (a twentieth of a second) is loaded by the first row that
    needs it, which most datasets do not hold."""
    _screen_made_up(['{"id": "a", "input": {"query": "q"}, "expect": {"relevant": ["a.md"]}}'])


def _screen_made_up(lines: list[str]) -> None:
    with tempfile.TemporaryDirectory(prefix="rag-lsp-warm-up-") as folder:
        workspace = Workspace(Path(folder), Settings())
        workspace.adopt_files([])
        screen_batch(workspace, "warm-up.jsonl", DatasetUse(), RAG_CASE, lines)


def is_answer(answer: Any, lines: int, path: str, first: int, systemic: frozenset[tuple[str, str]] = frozenset()) -> bool:
    """Whether ``answer`` is what screen_batch gives for a batch of ``lines`` of
    the dataset at ``path``, from its line ``first``."""
    if type(answer) is not tuple or len(answer) != 8:
        return False
    codes, kept, counts, unfinished, passed, corpora, repeated, errors = answer
    return (
        type(codes) is bytes
        and len(codes) == lines
        and max(codes, default=BLANK) <= NOT_JSON
        and _are_errors(errors, codes)
        and type(kept) is list
        and len(kept) == lines
        and kept_are_valid([rule.grouping for rule in registry.groupings()], kept)
        and type(counts) is bytes
        and len(counts) == 4 * COUNTS * lines
        and type(unfinished) is dict
        and all(_are_plain_findings(number, found, codes, lines, path, first) for number, found in unfinished.items())
        and _are_passed(passed, codes, lines, systemic)
        and _are_names_by_line(corpora, codes, lines)
        and _are_names_by_line(repeated, codes, lines)
    )


def _are_errors(errors: Any, codes: bytes) -> bool:
    """Whether ``errors`` says where and why each line of ``codes`` that is not
    JSON is not, and of no other line."""
    return (
        type(errors) is dict
        and sorted(errors) == [number for number, code in enumerate(codes) if code == NOT_JSON]
        and all(type(error) is tuple and len(error) == 2 and type(error[0]) is int and type(error[1]) is str for error in errors.values())
    )


def _are_names_by_line(names_by_line: Any, codes: bytes, lines: int) -> bool:
    """Whether ``names_by_line`` is what screen_batch gives of the corpora plain
    lines of a batch of ``lines`` lines ask to search, or of the keys they
    repeat: names, by line."""
    if type(names_by_line) is not dict:
        return False
    if not all(type(number) is int and 0 <= number < lines and codes[number] in PLAIN for number in names_by_line):
        return False
    alike = {id(names): names for names in names_by_line.values()}.values()
    return all(type(names) is tuple and all(type(name) is str for name in names) for names in alike)


def _are_passed(passed: Any, codes: bytes, lines: int, systemic: frozenset[tuple[str, str]]) -> bool:
    """Whether ``passed`` is what screen_batch counts of the ``systemic`` causes on
    a batch of ``lines`` lines: pairs of those causes, by plain line."""
    if type(passed) is not dict:
        return False
    if not all(type(number) is int and 0 <= number < lines and codes[number] in ANSWERED for number in passed):
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
        and codes[number] in ANSWERED
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
