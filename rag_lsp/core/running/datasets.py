"""Datasets as a run reads them: each non-blank line's value, fast.

A run needs each line's decoded value and its line number, not the spans,
duplicate-key notes and exact decoder of the checks (:mod:`.jsonrows`). So it
decodes each line with msgspec: first as a well-formed rag case
(:class:`CaseRow`: a string id, an ``input`` kept undecoded until a target needs
it, a list of strings in ``expect.relevant``), which is what nearly every line of
a rag dataset is and the cheapest to read; else as plain JSON. A line msgspec
refuses is handed to the checks' exact decoder, which reads what JSON allows
(integers beyond 64 bits) and says where and why a line is not JSON.
Lines are numbered exactly as the checks number them (split at "\\n", a "\\r"
before it is part of the line ending), so results land on the right line.

What spoils one line spoils that line only, as the checks report it there: a
byte that is not UTF-8 (RAG002), and a number too large for a double, which
would be read as infinity (RAG004, see :attr:`RunDataset.flaws`; in a rag
case's `input`, found when a target reads it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec
from msgspec import UNSET

from ..workspace.expected import SCHEMA, Flaw
from ..reading.jsonrows import Row, max_digits
from ..workspace.manifests import GDI_TEXT, RAG_CASE
from ..workspace.rowschema import non_finite_message
from ..reading.schemacheck import non_finite_issues
from ..workspace.rows import majority_shape, row_shape
from ..workspace.workspace import Workspace


# The codes of a line that cannot be read: not JSON, or refused.
NOT_JSON = "RAG002"
UNSAFE = "RAG005"


@dataclass(frozen=True, slots=True)
class Unreadable(Flaw):
    """A line that has no value for a run: why, and the code the checks report it with."""


@dataclass
class RunDataset:
    """The lines of a dataset: ``(0-based line, value)`` in file order, where the
    value is a :class:`CaseRow`, a decoded JSON value, or :class:`Unreadable`."""

    path: str
    rows: list[tuple[int, Any]]
    # The shape most decodable rows have (as the checks compute it), or None.
    shape: str | None
    # Line -> why a row that was read cannot be run (a number read as infinity),
    # with its code: the run breaks it once it knows its id.
    flaws: dict[int, Flaw] = field(default_factory=dict)


class DatasetProblem(Exception):
    """The dataset cannot be read at all (missing, refused): why, and the code
    the checks report it with."""

    def __init__(self, reason: str, code: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.code = code


class _Expect(msgspec.Struct, gc=False):
    relevant: list[str]
    # Graded relevance (the ir engine reads it), kept as written: a value of
    # another shape is the schema's finding, and the engine grades it 1.
    grades: Any = UNSET


class CaseRow(msgspec.Struct, gc=False):
    """A line that is a rag case with the fields a run reads, all well typed."""

    id: str
    # The case's input as JSON text: a recorded target never needs it decoded.
    input: msgspec.Raw
    expect: _Expect
    # The team's own data about the case, carried into the run's report.
    metadata: Any = UNSET
    # Present only on gdi_text_v1 rows: such a line is read as plain JSON instead.
    input_id: Any = UNSET
    reference_contexts: Any = UNSET
    retrieved_context: Any = UNSET


_DECODE = msgspec.json.Decoder().decode
_DECODE_CASE = msgspec.json.Decoder(CaseRow).decode


def read_dataset(workspace: Workspace, relative: str) -> RunDataset:
    """The dataset's rows; DatasetProblem when the file cannot be used."""
    source = workspace.read(relative)
    if source is None:
        raise DatasetProblem(f"the dataset {relative} does not exist", "RAG105")
    if source.refused:
        raise DatasetProblem(f"the dataset {relative} is not read: {source.refused}", "RAG005")
    # Lines holding a byte that is not UTF-8: each is not read (RAG002), the others are.
    undecodable = {line: message for line, _, message in source.undecodable}
    limit = workspace.settings.max_line_bytes
    digits = max_digits()
    rows: list[tuple[int, Any]] = []
    flaws: dict[int, Flaw] = {}
    append = rows.append
    counts = {RAG_CASE: 0, GDI_TEXT: 0}
    for number, line in enumerate(source.text.encode("utf-8", "surrogatepass").split(b"\n")):
        if line.endswith(b"\r"):
            line = line[:-1]
        # Blank as the checks see it: Unicode's spaces too (a line of one
        # U+00A0 or U+001F), which bytes.isspace does not know.
        if not line or line[0] != 0x7B and line.decode("utf-8", "surrogatepass").isspace():
            continue
        if len(line) > limit:
            message = f"line {number + 1} is not read: {len(line):,} bytes, above the max-line-bytes limit of {limit:,}"
            append((number, Unreadable(message, UNSAFE)))
            continue
        if undecodable and number in undecodable:
            message = f"line {number + 1} is not valid JSON: {undecodable[number]}; a dataset is UTF-8 text"
            append((number, Unreadable(message, NOT_JSON)))
            continue
        # A line that may hold what the checks' reader refuses and the fast
        # decoders read (an integer of more digits than Python converts, nesting
        # past what the standard decoder follows) is read as the checks read it:
        # a line they do not read is no case, and its id is no case's id.
        unusual = len(line) > _USUAL and _unusual(line, digits)
        try:
            if unusual:
                raise msgspec.DecodeError
            case = _DECODE_CASE(line)
            if case.input_id is UNSET and case.reference_contexts is UNSET and case.retrieved_context is UNSET:
                # Its `input` is read only by a target that needs it (see
                # plans.decode_input, which refuses a number read as infinity).
                append((number, case))
                counts[RAG_CASE] += 1
                continue
        except msgspec.ValidationError:
            pass
        except (msgspec.DecodeError, RecursionError):
            pass
        try:
            if unusual:
                raise msgspec.DecodeError
            value = _DECODE(line)
        except (msgspec.DecodeError, ValueError, OverflowError, RecursionError):
            # The checks' row says why the line cannot be read (nesting too deep included).
            row = Row(line.decode("utf-8", "surrogatepass"))
            if row.error is not None:
                append((number, Unreadable(f"line {number + 1} is not valid JSON: {row.error[1]}", NOT_JSON)))
                continue
            if row.refused:
                append((number, Unreadable(f"line {number + 1} is not read: {row.refused}", UNSAFE)))
                continue
            value = row.value
            # Read exactly, as the checks read it: a number beyond a double's
            # range is infinity there, and RAG004 here too.
            flaw = next(non_finite_issues(value), None)
            if flaw is not None:
                flaws[number] = Flaw(non_finite_message(flaw.path), SCHEMA)
        append((number, value))
        shape = row_shape(value)
        if shape is not None:
            counts[shape] += 1
    return RunDataset(relative, rows, majority_shape(counts[RAG_CASE], counts[GDI_TEXT]), flaws)


# The checks' reader (jsonrows.Row) reads a line again with the standard decoder
# when it nests deeper than orjson writes; that decoder stops at about a thousand
# levels, and refuses an integer of more digits than Python converts. A line of at
# most this many bytes can hold neither.
_USUAL = 511
_NESTING = 255


def _unusual(line: bytes, digits: int) -> bool:
    """Whether a line may hold an integer of more than ``digits`` digits, or
    nest deeper than orjson writes (see _USUAL)."""
    return bool(digits and len(line) > digits) or line.count(b"[") + line.count(b"{") > _NESTING


class KnownShapes:
    """A workspace that answers ``dataset_shape`` from datasets a run has read.

    The checks a run applies to a suite file ask for its datasets' shapes
    (RAG110); the run has just read those datasets, so they need not be decoded a
    second time, the checks' way. Everything else is the workspace's own answer.
    """

    def __init__(self, workspace: Workspace, shapes: dict[str, str | None]) -> None:
        self._workspace = workspace
        self._shapes = shapes

    def __getattr__(self, name: str) -> Any:
        return getattr(self._workspace, name)

    def dataset_shape(self, relative: str) -> str | None:
        if relative in self._shapes:
            return self._shapes[relative]
        return self._workspace.dataset_shape(relative)
