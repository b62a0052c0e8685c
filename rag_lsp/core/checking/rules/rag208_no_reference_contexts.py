"""gdi_text_v1 row declares no `reference_contexts`.

## What it does
Finds a gdi_text_v1 row (scored by metrics such as `rag.hit_at_k`) whose
`reference_contexts` is missing or an empty list.

## Why is this bad?
`rag.hit_at_k` asks whether a retrieved chunk matches one of the reference
contexts. With none there is nothing to find: the row is reported broken rather
than scored, and a suite with a broken row fails.

## Example
```json
{"input_id": "q1", "prompt": "How are approvals decided?", "reference_contexts": [], "sut_response": "...", "retrieved_context": ["The gateway approves ..."]}
```

## How to fix
List the reference chunks of text a good retrieval should return for the prompt.
"""

from ...reading.findings import Severity
from . import ROW, rule_of


RULE = rule_of(__doc__, "RAG208", "no-reference-contexts", Severity.ERROR)

_WHAT_TO_DO = "list the reference chunks a good retrieval should return (without them the row is broken, not zero)"


@RULE.check(ROW)
def no_reference_contexts(rows):
    for context, row in rows.gdi_rows:
        if "reference_contexts" in row:
            references = row["reference_contexts"]
            # A value of the wrong type is a schema error (RAG004).
            if isinstance(references, list) and not references and not rows.passes_over(RULE.code, "empty", context.line):
                yield RULE.finding(context.value_range("reference_contexts"), f"reference_contexts is empty: {_WHAT_TO_DO}", cause="empty")
            continue
        if rows.passes_over(RULE.code, "missing", context.line):
            continue
        anchor = "input_id" if "input_id" in row else next(iter(row), None)
        where = context.key_range(anchor) if anchor is not None else context.line_range()
        yield RULE.finding(where, f"the row has no reference_contexts: {_WHAT_TO_DO}", cause="missing")


@RULE.folds
def every_row_without_references(cause):
    return (
        "the rows were most likely exported before their reference chunks were written (the retrieval's output "
        "alone): every row is broken until it lists the chunks a good retrieval must return",
        None,
    )
