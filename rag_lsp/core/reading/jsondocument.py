"""A dataset file that is one JSON document, not JSON Lines.

A tool that exports rows as JSON often writes one document: an array of the rows
(`json.dump(rows, file, indent=2)`), or each object written over several lines
(`jq . FILE`). Read line by line, every line of such a file is a piece of a
value, and a hundred thousand rows become a million findings on a million lines.
Read whole, it is one fact about the file: its rows are there, written in
another format, and one rewrite makes them JSON Lines.

Telling such a file costs nothing for a dataset of JSON Lines: its first line is
a whole object, while a document's is a lone `{` or starts with `[`. Only then is
the text decoded whole, by msgspec, each row kept as its raw text (a 30 MB
document is read in a few hundredths of a second, with no Python value made).
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass, replace
from typing import Sequence

import msgspec

from .jsonrows import json_message

ARRAY, OBJECTS = "array", "objects"

_RAW_ROWS = msgspec.json.Decoder(list[msgspec.Raw])
# Where one object of a stream ends and the next begins: a closing brace, then
# a line break, then an opening brace. A string holds no raw line break, and the
# values of a list are separated by commas: only objects side by side at the top
# of the text meet so.
# Written so that a long run of blank lines after a brace is looked at once,
# not once for each line break in it.
_BETWEEN_OBJECTS = re.compile(r"\}([^\S\n]*\n[^\S\n]*(?:\n[^\S\n]*)*)\{")


@dataclass(frozen=True)
class JsonDocument:
    """A dataset's text read as one JSON document."""

    # ARRAY: one JSON array of the rows; OBJECTS: objects side by side, each over several lines.
    kind: str
    # The rows (the values of the array, or the objects), each as its raw text,
    # or as JSON written again where only the standard decoder read it.
    rows: list[msgspec.Raw | str]
    # The line the document begins on, the column of its first character there,
    # and how many lines it is written over, from its first to its last.
    first_line: int
    first_column: int
    lines: int
    # Where the document is not valid JSON (its line, column and what is wrong
    # there), with no row read; None for a document that is.
    error: tuple[int, int, str] | None = None
    # How many rows it holds, where they are not kept (see documentedits).
    row_count: int | None = None

    @property
    def count(self) -> int:
        return len(self.rows) if self.row_count is None else self.row_count

    @property
    def described(self) -> str:
        """What the document is, said for a finding or an error: `one JSON array
        of 3 rows, written over 38 lines`."""
        over = f"written over {self.lines:,} lines" if self.lines > 1 else "written on one line"
        if self.error is not None:
            return f"{'one JSON array' if self.kind == ARRAY else 'JSON objects, each written over several lines'}, {over}"
        count = self.count
        if self.kind == ARRAY:
            return f"one JSON array of {count:,} row{'s' if count != 1 else ''}, {over}"
        return f"{count:,} JSON object{'s' if count != 1 else ''}, each written over several lines ({self.lines:,} lines)"

    def as_json_lines(self) -> str:
        """The rows written as JSON Lines: each row on a line of its own, with
        its keys, values and their order as written (no value is read and
        written again, so numbers and escapes keep their text)."""
        return "".join((row if type(row) is str else msgspec.json.format(row, indent=-1).decode("utf-8")) + "\n" for row in self.rows)


@dataclass(frozen=True)
class Table:
    """A dataset's text read as a table of delimited values (a spreadsheet's
    export, CSV), not JSON Lines."""

    # Its format (CSV, TSV, ...), and the columns its first line names.
    kind: str
    columns: list[str]
    # The line the table begins on, the column of its first character there,
    # and how many lines it is written over, its first included.
    first_line: int
    first_column: int
    lines: int
    error: None = None

    @property
    def described(self) -> str:
        shown = ", ".join(self.columns[:6]) + (f" and {len(self.columns) - 6} more" if len(self.columns) > 6 else "")
        return f"a {self.kind} table of {self.lines:,} lines (columns {shown})"


# The delimiters of the tables told, and what each table is called.
_DELIMITERS = {",": "CSV", "\t": "TSV", ";": "semicolon-separated", "|": "pipe-separated"}


def may_be_document(line: str) -> bool:
    """Whether the first non-blank line of a dataset may begin a JSON document
    (see read_document): it starts an array, or it is an opening brace alone;
    or a table: no JSON value begins it, and it holds a delimiter. A byte
    order mark before it (each row of files joined, saved with one) is no
    value: the line is still a row's."""
    stripped = line.strip().lstrip("\ufeff")
    if stripped.startswith("[") or stripped == "{":
        return True
    return stripped[:1] not in ("{", '"') and any(delimiter in stripped for delimiter in _DELIMITERS)


def read_lines_as_document(lines: Sequence[str]) -> JsonDocument | Table | None:
    """:func:`read_document` of the text ``lines`` make (split at "\\n"),
    joined only where it may be a JSON document: a table is told from its first
    lines and counted in its lines, as an edit of a large one asks again."""
    first = first_content_line(lines)
    if first is None or not may_be_document(lines[first]):
        return None
    stripped = lines[first].strip()
    if stripped.startswith("[") or stripped == "{":
        return read_document("\n".join(lines))
    table = read_document("\n".join(lines[first : first + HEAD_LINES]))
    if not isinstance(table, Table):
        return None
    return replace(table, first_line=first, lines=lines_spanned(lines, first))


def lines_spanned(lines: Sequence[str], first: int) -> int:
    """How many of ``lines`` a document from line ``first`` is written over, to
    its last line that is not blank (see _lines_spanned, for a text)."""
    last = len(lines) - 1
    while last > first and not lines[last].strip():
        last -= 1
    return last - first + 1


def head_may_be_document(head: str) -> bool:
    """Whether a text beginning with ``head`` (its first lines, or bytes) may be
    read as a document (see read_document): told from the head alone, without
    joining or reading a large dataset's text, which JSON Lines whose first line
    only looks like a document's (a list, a note with commas) then never are."""
    return read_document(head) is not None


# The lines of a dataset's head (see head_may_be_document) its callers look at.
HEAD_LINES = 40


def first_content_line(lines: Sequence[str]) -> int | None:
    """The first line of ``lines`` that is not blank, or None."""
    for number, line in enumerate(lines):
        if line.strip():
            return number
    return None


def read_document(text: str, keep_rows: bool = True) -> JsonDocument | Table | None:
    """A dataset's text read as one JSON document: an array, or objects side
    by side of which most take several lines; None for JSON Lines. A document
    that is not valid JSON is one too, where most of its first lines are pieces
    of a value (not each a whole one, as the rows of JSON Lines are): it is one
    slip in one document, not a slip on every line. A table of delimited
    values (CSV, TSV) is read as a :class:`Table`. ``keep_rows``: False where
    only their count is wanted (objects side by side are then read piece by
    piece, and no copy of the text is kept for them)."""
    first = _first_line(text)
    if first is None or not may_be_document(first[2]):
        return None
    start, _, line = first
    lines_after = content_lines(text, start, LOOKED_AT)
    if not (line.strip().startswith("[") or line.strip() == "{"):
        return _table(text, start, line, lines_after)
    if is_whole(line) and len(lines_after) > 1:
        # A whole value on the first line, and more after it: lines of values
        # (a dataset whose rows are written as lists), told without decoding them all.
        return None
    kind = ARRAY if line.strip().startswith("[") else OBJECTS
    count = None
    if kind == ARRAY:
        rows: list[msgspec.Raw | str] | None = _decoded(text)
    else:
        rows, count = _objects_decoded(text, keep_rows)
    spanned = _lines_spanned(text, start)
    place = (text.count("\n", 0, start), len(line) - len(line.lstrip()))
    if rows is None:
        if sum(map(is_whole, lines_after)) * 2 >= len(lines_after):
            return None  # JSON Lines, its first row broken: each slip is found on its line
        rows, error = _read_exactly(text, kind)
        if error is not None:
            return JsonDocument(kind, [], *place, spanned, error)
    # Most objects over several lines: a dataset of JSON Lines whose first row
    # was broken over two lines is read line by line, where that row is found.
    if kind == OBJECTS and spanned < 2 * (len(rows) if count is None else count):
        return None
    return JsonDocument(kind, rows, *place, spanned, row_count=count)


# How many characters of objects side by side are read at a time (see _objects_decoded).
_PIECE_CHARACTERS = 1 << 20


def _objects_decoded(text: str, keep: bool) -> tuple[list[msgspec.Raw] | None, int | None]:
    """The objects side by side of ``text``, each as its raw text, read as one
    array: a comma written between each two. Read a piece of a megabyte at a
    time: each piece is written again with its commas, and a whole text written
    so would be a copy of tens of megabytes; the raw texts of the objects keep
    their piece. Without ``keep``, none is kept: their count comes instead.
    (None, None) where they are not valid JSON."""
    rows: list[msgspec.Raw] = []
    count = 0
    at = 0
    while at < len(text):
        # A piece ends with an object: the next piece starts between two.
        cut = _BETWEEN_OBJECTS.search(text, min(at + _PIECE_CHARACTERS, len(text)))
        end = cut.start() + 1 if cut is not None else len(text)
        piece = _decoded("[" + _BETWEEN_OBJECTS.sub(r"},\1{", text[at:end]) + "]")
        if piece is None:
            return None, None
        if keep:
            rows += piece
        count += len(piece)
        at = end
    return rows, None if keep else count


# The first lines looked at to tell a document from JSON Lines.
LOOKED_AT = 20


def _table(text: str, start: int, line: str, looked_at: list[str]) -> Table | None:
    """The text beginning with ``line`` read as a table: its first lines (most
    of them no JSON value) split by one delimiter into as many fields, two or
    more, nearly all alike; None for anything else."""
    if len(looked_at) < 2 or sum(map(is_whole, looked_at)) * 2 >= len(looked_at):
        return None
    rows = [row.rstrip("\r") for row in looked_at]
    for delimiter, kind in _DELIMITERS.items():
        if delimiter not in line:
            continue
        try:
            read = list(csv.reader(rows, delimiter=delimiter))
        except csv.Error:
            # A carriage return inside a line, unquoted: not a table the reader takes.
            return None
        widths = [len(fields) for fields in read]
        if widths[0] >= 2 and sum(width == widths[0] for width in widths) * 10 >= len(widths) * 9:
            columns = [column.strip() for column in read[0]]
            return Table(kind, columns, text.count("\n", 0, start), len(line) - len(line.lstrip()), _lines_spanned(text, start))
    return None


def content_lines(text: str, start: int, most: int) -> list[str]:
    """The first ``most`` lines of ``text`` from ``start`` that are not blank."""
    found: list[str] = []
    while len(found) < most and (content := _CONTENT.search(text, start)) is not None:
        # Blank lines are passed over in one search, however many there are.
        begin = text.rfind("\n", 0, content.start()) + 1
        end = text.find("\n", content.start())
        end = len(text) if end < 0 else end
        found.append(text[begin:end])
        start = end + 1
    return found


def _lines_spanned(text: str, start: int) -> int:
    """How many lines a document beginning at ``start`` is written over, to its
    last character that is not blank (counted in C: a document written with
    indentation has millions of lines)."""
    end = len(text)
    while end > start and text[end - 1].isspace():
        end -= 1
    return text.count("\n", start, end) + 1


def _read_exactly(text: str, kind: str) -> tuple[list[msgspec.Raw | str], tuple[int, int, str] | None]:
    """A document msgspec refused, read by the standard decoder: its rows, or
    where and why it is not valid JSON, as that decoder says it (with what to
    do, see jsonrows.json_message); of objects side by side, in the first that
    is not one. What msgspec alone refuses (an escape of half a character, a
    number too long to convert) is read, each row written again as JSON."""
    decoder = STANDARD_DECODER
    values: list = []
    try:
        if kind == ARRAY:
            values = decoder.decode(text)
        else:
            at = 0
            while (content := _CONTENT.search(text, at)) is not None:
                value, at = decoder.raw_decode(text, content.start())
                values.append(value)
    except json.JSONDecodeError as error:
        return [], (error.lineno - 1, error.colno - 1, json_message(error))
    except _Constant as constant:
        return [], (*_place_of_constant(text), f"{constant} is not valid JSON; use null or a number")
    except (RecursionError, ValueError):
        return [], (0, 0, "it is nested too deep or holds a number too long to read")
    return [json.dumps(value, separators=(",", ":")) for value in values], None


class _Constant(ValueError):
    pass


def _refuse_constant(name: str) -> None:
    raise _Constant(name)


# The standard decoder, refusing NaN and Infinity (a ValueError), which JSON does not have.
STANDARD_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)


# A JSON string (skipped), or a constant JSON does not have.
_STRING_OR_CONSTANT = re.compile(r'"(?:[^"\\]|\\.)*"|(-?Infinity|NaN)')


def _place_of_constant(text: str) -> tuple[int, int]:
    """The line and column of the first NaN or Infinity of ``text`` outside strings."""
    for match in _STRING_OR_CONSTANT.finditer(text):
        if match.group(1):
            offset = match.start(1)
            return text.count("\n", 0, offset), offset - text.rfind("\n", 0, offset) - 1
    return 0, 0


_CONTENT = re.compile(r"\S")


def first_content(text: str) -> int | None:
    """Where the first character of ``text`` that is not blank is; None if none."""
    content = _CONTENT.search(text)
    return content.start() if content is not None else None


def _first_line(text: str) -> tuple[int, int, str] | None:
    """Where the first non-blank line of ``text`` starts and ends, and the line;
    found without splitting the text into lines."""
    at = first_content(text)
    if at is None:
        return None
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    end = len(text) if end < 0 else end
    return start, end, text[start:end]


def _decoded(text: str) -> list[msgspec.Raw] | None:
    try:
        return _RAW_ROWS.decode(text)
    except (msgspec.DecodeError, UnicodeEncodeError, RecursionError, ValueError):
        return None


_ANY_VALUE = msgspec.json.Decoder(msgspec.Raw)


def is_whole(line: str) -> bool:
    """Whether ``line`` is one whole JSON value."""
    try:
        _ANY_VALUE.decode(line)
    except (msgspec.DecodeError, UnicodeEncodeError, RecursionError, ValueError):
        return False
    return True
