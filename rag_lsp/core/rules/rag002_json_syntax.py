"""A dataset line is not valid JSON.

## What it does
Decodes each non-blank line of a dataset as one JSON value and reports the column
where decoding failed: a missing comma or brace, a trailing comma, single quotes,
`NaN`, or a second object on the same line. A byte that is not UTF-8 (JSON text
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

from ..findings import Severity
from . import ROW, rule_of

RULE = rule_of(__doc__, "RAG002", "json-syntax", Severity.ERROR)


@RULE.check(ROW)
def json_syntax(rows):
    for context in rows.rows:
        if context.row.error is None:
            continue
        column, message = context.row.error
        end = column + 1 if column < len(context.row.text) else column
        yield RULE.finding(context.columns(column, end), f"not valid JSON: {message}")
