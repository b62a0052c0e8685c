"""A dataset line is not valid JSON.

## What it does
Decodes each non-blank line of a dataset as one JSON value and reports the column
where decoding failed, with what to do about the slip found there: a missing
comma or brace, a trailing comma (a quick fix removes it), a string missing its
closing quote, single quotes, a key without quotes, `True`/`None` or `NaN`, a
comment, a second object on the same line, or a byte order mark before the row
(files each saved with one, joined: a quick fix removes it). A byte that is not
UTF-8 (JSON text is UTF-8) is reported on its line in the same way: that line is
not read, the others are, by `rag-lsp check` and `rag-lsp run` alike. A file in
UTF-16 or UTF-32 (Windows PowerShell 5 writes what `>` sends to a file in UTF-16)
is one finding for the file: its rows are read in that encoding and checked, as
an editor shows them.

A file that is one JSON document (an array of the rows, as `json.dump(rows,
file, indent=2)` writes it, or objects each written over several lines, as
`jq .` writes them) is not JSON Lines at all: one finding says so for the
whole file, with how many rows it holds, and its lines are not read one by one.
Its quick fix writes each row on a line of its own, keys and values as written.
Where such a document is not valid JSON, its one finding is where it breaks.
A table of delimited values (CSV or TSV, as a spreadsheet exports it) is one
finding for the file too, naming its columns.

## Why is this bad?
A line that cannot be read is a case that never runs. Suite figures would be
computed over fewer cases than the file seems to hold, with nothing said.

## Example
```json
{"id": "gateway-approval", "input": {"query": "approval"}, "expect": {"relevant": ["src/gateway.ts"]}
```

## How to fix
Fix the JSON at the reported column; keep exactly one JSON object per line.
"""

import re

from ...reading.findings import Finding, Fix, Severity, TextEdit
from ...reading.jsondocument import ARRAY, JsonDocument, Table, read_document
from ...reading.jsonrows import BYTE_ORDER_MARK_STARTS, trailing_comma
from ...reading.text import Position, Range
from . import DOCUMENT, ROW, rule_of

RULE = rule_of(__doc__, "RAG002", "json-syntax", Severity.ERROR)


@RULE.check(ROW)
def json_syntax(rows):
    for context in rows.rows:
        if context.row.error is None:
            continue
        column, message = context.row.error
        # Rows a tool wrote alike fail alike: the slip named, without the word or
        # character of each row (`a key without quotes: write "id"`). The lines of
        # one JSON document written with indentation fail each its own way, and
        # are one cause: pieces of a value written over many lines.
        text = context.row.text
        comma = trailing_comma(text, column)
        if comma is None and text[column:].strip() == ",":
            comma = column + text[column:].index(",")  # a comma after the row, as in a JSON array's lines
        if _PIECE_OF_A_VALUE.match(text):
            cause = _PIECE
        elif message.startswith("byte 0x") and "is not valid UTF-8" in message:
            cause = _NOT_UTF8  # whichever byte: a file in another encoding has many
        else:
            cause = message.partition(":")[0]
        if comma is not None:
            # Findings of one cause have fixes alike: a folded finding offers
            # to remove every comma only where each occurrence has one.
            cause += _BEFORE_A_COMMA
        if rows.passes_over(RULE.code, cause, context.line):
            continue
        end = column + 1 if column < len(text) else column
        if comma is not None:
            fixes = [Fix("Remove the trailing comma", edits=(TextEdit(context.columns(comma, comma + 1), ""),))]
        elif message == BYTE_ORDER_MARK_STARTS:
            fixes = [Fix("Remove the byte order mark", edits=(TextEdit(context.columns(column, column + 1), ""),))]
        else:
            fixes = []
        yield RULE.finding(context.columns(column, end), f"not valid JSON: {message}", fixes=fixes, cause=cause)


def read_in(encoding: str) -> Finding:
    """The finding of a dataset whose file is in ``encoding`` (UTF-16 or UTF-32,
    see core.reading.sources.decode), not UTF-8: one for the file, at its start."""
    return RULE.finding(
        Range.of(0, 0),
        f"the file is {encoding} text, not UTF-8: its rows are read as {encoding} here, but JSON Lines is UTF-8 and "
        "other tools read it so (Windows PowerShell 5 writes UTF-16 with `>`): save the file as UTF-8",
        cause="encoding",
    )


# A line that only a JSON value written over many lines holds: a bracket or a
# brace alone (with its comma), or a key with its value, or the start of one
# (a dataset row starts with `{`).
_PIECE_OF_A_VALUE = re.compile(r'\s*(?:[\[\]{}],?|"(?:[^"\\]|\\.)*"\s*:.*)\s*$')
_PIECE = "a piece of a value written over many lines"
_BEFORE_A_COMMA = ", at a comma to remove"
_OVER_MANY_LINES = (
    "each row is spread over several lines (a JSON document written with indentation, not JSON Lines): "
    "write one object per line, e.g. `jq -c '.[]' FILE` for a JSON array"
)

_PYTHON_VALUES = "the rows are Python values printed with `str()` or `print()`, not JSON: write each with `json.dumps`"

# The causes of a byte that is not UTF-8 (whichever byte) and of a byte order
# mark before a row (see json_syntax).
_NOT_UTF8 = "a byte that is not UTF-8"
_BYTE_ORDER_MARK_CAUSE = BYTE_ORDER_MARK_STARTS.partition(":")[0]

# What a tool that writes every row with one slip most likely did, by the slip.
_WRITTEN_BY = {
    _BYTE_ORDER_MARK_CAUSE: (
        "each row was written as a file of its own, saved with a byte order mark, and the files joined "
        "(PowerShell's `Out-File -Append` writes one; so do editors that save UTF-8 with a BOM)"
    ),
    _PIECE: _OVER_MANY_LINES,
    _NOT_UTF8: (
        "the file is in an 8-bit encoding, not UTF-8: most likely Windows-1252 or Latin-1, as Excel and older Windows "
        "tools save text. Save it as UTF-8 (`iconv -f cp1252 -t utf-8`); its rows are not read until then"
    ),
    "single quotes": _PYTHON_VALUES,
    "extra data after the JSON value": (
        "each line holds more than one JSON value, most likely a `,` after each row of a JSON array split into "
        "lines: keep the object alone on its line"
    ),
    "the line ends before the JSON value is complete": _OVER_MANY_LINES,
}


@RULE.folds
def every_row_written_alike(cause):
    cause = cause.removesuffix(_BEFORE_A_COMMA)
    if cause in _WRITTEN_BY:
        why = _WRITTEN_BY[cause]
    elif cause.endswith("is not valid JSON; use null or a number"):
        why = "the tool that wrote the dataset writes NaN or Infinity where a number is missing: write null"
    elif cause.endswith("is not JSON"):  # `True is not JSON`: a Python literal
        why = _PYTHON_VALUES
    else:
        why = f"the tool that wrote the dataset writes every row so ({cause})"
    # The fix of every occurrence, where each has one (see folding.folded).
    return why, "Remove every byte order mark" if cause == _BYTE_ORDER_MARK_CAUSE else "Remove every such comma"


@RULE.check(DOCUMENT)
def one_json_document(context):
    document = context.document
    if document is None:
        return
    if document.error is not None:
        line, column, message = document.error
        yield RULE.finding(
            Range(Position(line, column), Position(line, column + 1)),
            f"this dataset is {document.described}, not JSON Lines, and it is not valid JSON here: {message}. "
            "Mend it here, then write each row on a line of its own (a dataset holds one JSON object per line)",
            cause=_ONE_DOCUMENT,
        )
        return
    if isinstance(document, Table):
        yield RULE.finding(
            Range(Position(document.first_line, document.first_column), Position(document.first_line, document.first_column + 1)),
            f"this dataset is {document.described}, not JSON Lines: a dataset holds one JSON object per line, so none "
            'of its rows is read. Write each row as an object, such as {"id": "...", "input": {"query": "..."}, '
            '"expect": {"relevant": ["..."]}}; `rag-lsp import` reads BEIR folders and TREC qrels',
            cause=_ONE_DOCUMENT,
        )
        return
    command = "jq -c '.[]' FILE" if document.kind == ARRAY else "jq -c . FILE"
    start = Position(document.first_line, document.first_column)
    yield RULE.finding(
        Range(start, Position(document.first_line, document.first_column + 1)),
        f"this dataset is {document.described}, not JSON Lines: a dataset holds one JSON object per line, so none "
        f"of its rows is read. Write each row on a line of its own (the quick fix does, as does `{command}`)",
        fixes=(Fix(_ONE_ROW_PER_LINE, (), every=True),),
        cause=_ONE_DOCUMENT,
    )


_ONE_DOCUMENT = "one JSON document"
_ONE_ROW_PER_LINE = "Write each row on a line of its own (JSON Lines)"


@RULE.fixes_every
def rows_on_lines_of_their_own(workspace, path: str, lines: list[str], finding: Finding, fix: Fix) -> Fix:
    """The edit of the fix that writes a dataset that is one JSON document as
    JSON Lines: the whole text, replaced by its rows, one per line (made only
    when asked for: a large dataset's is tens of megabytes)."""
    document = read_document("\n".join(lines))
    if not isinstance(document, JsonDocument) or document.error is not None or not lines:
        return fix
    whole = Range(Position(0, 0), Position(len(lines) - 1, len(lines[-1])))
    return Fix(fix.title, (TextEdit(whole, document.as_json_lines()),), fix.create_file, True)
