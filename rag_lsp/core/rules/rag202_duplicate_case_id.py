"""Duplicate case id.

## What it does
Finds a rag case whose `id` is already used by an earlier case of the same
dataset, and points at the repeat (related information points at the first use).

## Why is this bad?
Run results, code lenses and `rag-lsp run --case ID` name cases by id. With two
cases of one id, a result can be shown beside the wrong case and only one of them
can be run on its own.

## Example
```json
{"id": "gateway-approval", "input": {"query": "approval"}, "expect": {"relevant": ["src/gateway.ts"]}}
{"id": "gateway-approval", "input": {"query": "who approves"}, "expect": {"relevant": ["docs/approvals.md"]}}
```

## How to fix
Give each case its own id. The quick fix appends a suffix (`gateway-approval-2`)
that no case of the file uses yet.
"""

from ..findings import Fix, Related, Severity, TextEdit
from ..contexts import RowContext
from ..text import Position, Range
from . import DATASET, rule_of

RULE = rule_of(__doc__, "RAG202", "duplicate-case-id", Severity.ERROR)


@RULE.check(DATASET)
def duplicate_case_id(context):
    cases = []
    for row, case in context.rows.cases:
        case_id = case.get("id")
        # A missing, empty or non-string id is a schema error (RAG004).
        if isinstance(case_id, str) and case_id:
            cases.append((row, case_id))
    taken = {case_id for _, case_id in cases}
    first_use: dict[str, RowContext] = {}
    for row, case_id in cases:
        if case_id not in first_use:
            # Spans are computed for repeats alone, which keeps a 100k-case
            # dataset without repeats at one pass over the ids.
            first_use[case_id] = row
            continue
        first = first_use[case_id]
        first_where = first.value_range("id")
        where = row.value_range("id")
        suffix = _free_suffix(case_id, taken)
        # Reserve it, so that two repeats of one id are not offered the same new id.
        taken.add(case_id + suffix)
        # Insert before the closing quote: the id's own text (escapes included) stays.
        closing_quote = Position(row.line, where.end.character - 1)
        fix = Fix("Make the id unique", edits=(TextEdit(Range(closing_quote, closing_quote), suffix),))
        yield RULE.finding(
            where,
            f"case id {case_id!r} is already used on line {first.line + 1}: give each case its own id "
            f"(results and --case name cases by id)",
            fixes=[fix],
            related=[Related(context.path, first_where, f"first used on line {first.line + 1}")],
        )


def _free_suffix(case_id: str, taken: set[str]) -> str:
    number = 2
    while f"{case_id}-{number}" in taken:
        number += 1
    return f"-{number}"
