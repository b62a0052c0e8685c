"""A dataset's lines, as the checks and the runs both read them.

What a line of a dataset is, and what becomes of it, is settled here once:

* the lines are the text split at "\\n", numbered from 0; a "\\r" before the
  "\\n" is part of the line ending, as in LineIndex (:func:`dataset_lines`);
* a blank line, whitespace alone (Unicode's too: a line of one U+00A0), is no row;
* a line above max-line-bytes is refused, not decoded (RAG005), and so is a
  line holding a byte that is not UTF-8 (RAG002: JSON text is UTF-8); a byte
  spoils its own line only (:func:`sort_lines`);
* every other line is decoded, in one of two modes:

  - exactly, for the checks (:func:`read_lines`): each line a
    :class:`~.jsonrows.Row` (or a subclass), which says where and why a line is
    not JSON, notes repeated keys and reads what JSON allows (integers beyond 64
    bits, nesting past what orjson writes);
  - fast, for a run (:func:`read_lines_fast`), which needs each line's value and
    nothing else: a well-formed rag case as a typed :class:`CaseRow`, else plain
    JSON, both by msgspec; a line msgspec refuses, or that may hold what the
    exact mode refuses, is read by the exact mode, so the two agree on which
    lines are JSON.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple, Sequence, TypeVar

import msgspec
from msgspec import UNSET

from .jsonrows import Row, max_digits
from .schemacheck import non_finite_issues
from .sources import size_above

# The codes of a line that is not read: not JSON (a byte that is not UTF-8
# included), or refused as too large.
NOT_JSON = "RAG002"
UNSAFE = "RAG005"

R = TypeVar("R", bound=Row)


def dataset_lines(text: str) -> list[str]:
    """A dataset's lines, each with the "\\r" of a CRLF ending still on it (see sort_lines)."""
    return text.split("\n")


def read_by_checks(line_text: str, limit: int) -> bool:
    """Whether a dataset line is read: not one above ``limit`` bytes
    (max-line-bytes, RAG005). The editing features leave such a line alone too:
    walking ten megabytes per hover would hold up every check queued behind it."""
    return size_above(line_text, limit) is None


class Refused(NamedTuple):
    """A line that is not decoded: above the size limit (``code`` RAG005, its
    UTF-8 ``size``), or holding a byte that is not UTF-8 (RAG002, the first such
    byte at ``column``, described by ``message``)."""

    number: int
    text: str
    code: str
    size: int = 0
    column: int = 0
    message: str = ""


def sort_lines(
    lines: Sequence[str], limit: int, undecodable: Sequence[tuple[int, int, str]] = ()
) -> tuple[list[int], list[str], list[Refused]]:
    """The lines to decode (their numbers and texts, "\\r" endings taken off) and
    those refused, in file order; blank lines are in neither. ``undecodable`` is
    (line, column, message) of each line holding a byte that is not UTF-8 (see
    SourceText.undecodable)."""
    numbers: list[int] = []
    texts: list[str] = []
    refused: list[Refused] = []
    add_number = numbers.append
    add_text = texts.append
    # The limit counts bytes, as the line is written (a line of CJK text is
    # three times as long as its characters); no character is more than four,
    # so a line of at most a quarter as many characters is within it, which its
    # length alone tells (see size_above).
    short = limit // 4
    for number, line in enumerate(lines):
        if line.endswith("\r"):
            line = line[:-1]
        if not line or line.isspace():
            continue
        size = None if len(line) <= short else size_above(line, limit)
        if size is None:
            add_number(number)
            add_text(line)
        else:
            refused.append(Refused(number, line, UNSAFE, size))
    if undecodable:
        # Taken out after the loop, which a dataset of UTF-8 (nearly every one)
        # then runs without asking about each line. Past its size, a line's bad
        # byte is what is wrong with it, before anything its JSON could say.
        bad = {line: (column, message) for line, column, message in undecodable}
        read = [(number, text) for number, text in zip(numbers, texts) if number not in bad]
        refused += [Refused(number, text, NOT_JSON, 0, *bad[number]) for number, text in zip(numbers, texts) if number in bad]
        # By line number alone: no two are on one line.
        refused.sort()
        numbers = [number for number, _ in read]
        texts = [text for _, text in read]
    return numbers, texts, refused


# ---------------------------------------------------------------- exactly: the checks


def read_lines(kind: type[R], lines: Sequence[str], limit: int, undecodable: Sequence[tuple[int, int, str]] = ()) -> list[tuple[int, R]]:
    """(line number, row) for each line of a dataset that is not blank, in file
    order: rows of ``kind``, refused (RAG005, see Row.too_long) when longer than
    ``limit``, not read (RAG002, see _undecodable) when ``undecodable`` names them."""
    numbers, texts, refused = sort_lines(lines, limit, undecodable)
    rows = list(zip(numbers, kind.read_many(texts)))
    if not refused:
        return rows
    for line in refused:
        if line.code == UNSAFE:
            rows.append((line.number, kind.too_long(line.text, limit)))
        else:
            rows.append((line.number, _undecodable(kind, line)))
    # Line numbers are distinct: sorting never compares two rows.
    return sorted(rows, key=_line_number)


def _undecodable(kind: type[R], line: Refused) -> R:
    """The row of a line holding a byte that is not UTF-8: not read, like a line
    that is not JSON (JSON text is UTF-8), its error on that byte."""
    row = kind.read_fine(line.text, None)
    row.error = (line.column, f"{line.message}; a dataset is UTF-8 text: save the file as UTF-8")
    return row


def _line_number(item: tuple[int, Any]) -> int:
    return item[0]


# ---------------------------------------------------------------- fast: the runs


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


@dataclass(slots=True)
class FastLines:
    """A dataset's lines read fast: ``(0-based line, value)`` for each line that
    is not blank, in file order, where the value is a :class:`CaseRow`, a decoded
    JSON value, or what ``unreadable`` made of a line that has none."""

    rows: list[tuple[int, Any]]
    # How many values are CaseRows, and how many of the others have each shape
    # (``shape_of``'s answer; a value of no shape is not counted).
    cases: int = 0
    shapes: dict[Any, int] = field(default_factory=dict)
    # Line -> the path of a number beyond a double's range, read as infinity,
    # in a line read exactly (in a CaseRow's `input`, found when it is decoded).
    non_finite: dict[int, tuple[Any, ...]] = field(default_factory=dict)


def read_lines_fast(
    lines: Sequence[str],
    limit: int,
    undecodable: Sequence[tuple[int, int, str]] = (),
    *,
    unreadable: Callable[[str, str], Any],
    shape_of: Callable[[Any], Any],
) -> FastLines:
    """The lines of a dataset read fast (see FastLines). A line that has no value
    (refused, not JSON) is ``unreadable(why, code)``, with the code the checks
    report on it; ``shape_of`` tells a decoded value's shape."""
    numbers, texts, refused = sort_lines(lines, limit, undecodable)
    digits = max_digits()
    rows: list[tuple[int, Any]] = []
    append = rows.append
    cases = 0
    shapes: dict[Any, int] = {}
    non_finite: dict[int, tuple[Any, ...]] = {}
    for number, line in zip(numbers, texts):
        # msgspec reads a str through its UTF-8, which CPython then keeps with the
        # str; a CaseRow's `input` keeps what it was read from as long as the run.
        data = line if line.isascii() else line.encode("utf-8", "surrogatepass")
        # A line that may hold what the exact mode refuses and msgspec reads (an
        # integer of more digits than Python converts, nesting past what the
        # standard decoder follows) is read as the checks read it: a line they
        # do not read is no case, and its id is no case's id.
        unusual = len(line) > _USUAL and _unusual(line, digits)
        try:
            if unusual:
                raise msgspec.DecodeError
            case = _DECODE_CASE(data)
            if case.input_id is UNSET and case.reference_contexts is UNSET and case.retrieved_context is UNSET:
                # Its `input` is read only by a target that needs it (see
                # plans.decode_input, which refuses a number read as infinity).
                append((number, case))
                cases += 1
                continue
        except msgspec.ValidationError:
            pass
        except (msgspec.DecodeError, RecursionError):
            pass
        try:
            if unusual:
                raise msgspec.DecodeError
            value = _DECODE(data)
        except (msgspec.DecodeError, ValueError, OverflowError, RecursionError):
            # The exact mode's row says why the line cannot be read (nesting too deep included).
            row = Row(line)
            if row.error is not None:
                append((number, unreadable(f"line {number + 1} is not valid JSON: {row.error[1]}", NOT_JSON)))
                continue
            if row.refused:
                append((number, unreadable(f"line {number + 1} is not read: {row.refused}", UNSAFE)))
                continue
            value = row.value
            # Read exactly, as the checks read it: a number beyond a double's
            # range is infinity there, and refused by the run too.
            issue = next(non_finite_issues(value), None)
            if issue is not None:
                non_finite[number] = issue.path
        append((number, value))
        shape = shape_of(value)
        if shape is not None:
            shapes[shape] = shapes.get(shape, 0) + 1
    if refused:
        for line in refused:
            if line.code == UNSAFE:
                why = f"line {line.number + 1} is not read: {line.size:,} bytes, above the max-line-bytes limit of {limit:,}"
            else:
                why = f"line {line.number + 1} is not valid JSON: {line.message}; a dataset is UTF-8 text"
            rows.append((line.number, unreadable(why, line.code)))
        rows.sort(key=_line_number)
    return FastLines(rows, cases, shapes, non_finite)


# The exact mode (jsonrows.Row) reads a line again with the standard decoder
# when it nests deeper than orjson writes; that decoder stops at about a thousand
# levels, and refuses an integer of more digits than Python converts. Digits and
# brackets are one character each, so a line of at most this many characters
# can hold neither.
_USUAL = 511
_NESTING = 255


def _unusual(line: str, digits: int) -> bool:
    """Whether a line may hold an integer of more than ``digits`` digits, or
    nest deeper than orjson writes (see _USUAL)."""
    return bool(digits and len(line) > digits) or line.count("[") + line.count("{") > _NESTING
