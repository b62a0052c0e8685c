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
        end = column + 1 if column < len(context.row.text) else column
        comma = trailing_comma(context.row.text, column)
        fixes = [Fix("Remove the trailing comma", edits=(TextEdit(context.columns(comma, comma + 1), ""),))] if comma is not None else []
        yield RULE.finding(context.columns(column, end), f"not valid JSON: {message}", fixes=fixes)
