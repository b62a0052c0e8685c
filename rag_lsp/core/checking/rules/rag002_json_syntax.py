"""A dataset line is not valid JSON.

## What it does
Decodes each non-blank line of a dataset as one JSON value and reports the column
where decoding failed, with what to do about the slip found there: a missing
comma or brace, a trailing comma (a quick fix removes it), a string missing its
closing quote, single quotes, a key without quotes, `True`/`None` or `NaN`, a
comment, or a second object on the same line. A byte that is not UTF-8 (JSON text
is UTF-8) is reported on its line in the same way: that line is not read, the
others are, by `rag-lsp check` and `rag-lsp run` alike.

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

from ...reading.findings import Fix, Severity, TextEdit
from ...reading.jsonrows import trailing_comma
from . import ROW, rule_of

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
        cause = _PIECE if _PIECE_OF_A_VALUE.match(context.row.text) else message.partition(":")[0]
        if rows.passes_over(RULE.code, cause, context.line):
            continue
        text = context.row.text
        end = column + 1 if column < len(text) else column
        comma = trailing_comma(text, column)
        if comma is None and text[column:].strip() == ",":
            comma = column + text[column:].index(",")  # a comma after the row, as in a JSON array's lines
        fixes = [Fix("Remove the trailing comma", edits=(TextEdit(context.columns(comma, comma + 1), ""),))] if comma is not None else []
        yield RULE.finding(context.columns(column, end), f"not valid JSON: {message}", fixes=fixes, cause=cause)


# A line that only a JSON value written over many lines holds: a bracket or a
# brace alone (with its comma), or a key with its value, or the start of one
# (a dataset row starts with `{`).
_PIECE_OF_A_VALUE = re.compile(r'\s*(?:[\[\]{}],?|"(?:[^"\\]|\\.)*"\s*:.*)\s*$')
_PIECE = "a piece of a value written over many lines"
_OVER_MANY_LINES = (
    "each row is spread over several lines (a JSON document written with indentation, not JSON Lines): "
    "write one object per line, e.g. `jq -c '.[]' FILE` for a JSON array"
)

_PYTHON_VALUES = "the rows are Python values printed with `str()` or `print()`, not JSON: write each with `json.dumps`"

# What a tool that writes every row with one slip most likely did, by the slip.
_WRITTEN_BY = {
    _PIECE: _OVER_MANY_LINES,
    "single quotes": _PYTHON_VALUES,
    "extra data after the JSON value": (
        "each line holds more than one JSON value, most likely a `,` after each row of a JSON array split into "
        "lines: keep the object alone on its line"
    ),
    "the line ends before the JSON value is complete": _OVER_MANY_LINES,
}


@RULE.folds
def every_row_written_alike(cause):
    if cause in _WRITTEN_BY:
        why = _WRITTEN_BY[cause]
    elif cause.endswith("is not valid JSON; use null or a number"):
        why = "the tool that wrote the dataset writes NaN or Infinity where a number is missing: write null"
    elif cause.endswith("is not JSON"):  # `True is not JSON`: a Python literal
        why = _PYTHON_VALUES
    else:
        why = f"the tool that wrote the dataset writes every row so ({cause})"
    return why, "Remove every such comma"
