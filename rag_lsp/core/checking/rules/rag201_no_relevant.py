"""Case has no `expect.relevant`.

## What it does
Finds a rag case that does not say what should come back: it has no `expect`, its
`expect` is not an object, or its `expect` has no `relevant` list.

## Why is this bad?
A case without expected values cannot be scored: recall of nothing is undefined,
so the scorer reports the case as broken and the suite fails. Usually the key was
misspelled or the case was copied from a template and never finished.

## Example
```json
{"id": "gateway-approval", "input": {"query": "how does the gateway decide an approval"}}
```

## How to fix
Add what a good retrieval must return, as values of the suite's `match` field
(workspace paths by default):
```json
{"id": "gateway-approval", "input": {"query": "how does the gateway decide an approval"}, "expect": {"relevant": ["src/gateway.ts"]}}
```
"""

from ...workspace.expected import NO_RELEVANT, Expected
from ...reading.findings import Severity
from . import ROW, rule_of


RULE = rule_of(__doc__, NO_RELEVANT, "no-relevant", Severity.ERROR)

_ADD_EXPECT = 'add "expect": {"relevant": [...]} listing what a good retrieval must return'


@RULE.check(ROW)
def no_relevant(rows):
    # A `relevant` of the wrong type is a schema error (RAG004); an empty one is RAG200.
    for context, case, verdict in rows.without_a_list:
        if verdict.kind is not Expected.MISSING:
            continue
        if rows.passes_over(RULE.code, "no-relevant" if "expect" in case else "no-expect", context.line):
            continue
        expect = case.get("expect")
        if "expect" in case:
            if isinstance(expect, dict):
                message = 'expect has no "relevant": add "relevant": [...] listing what a good retrieval must return'
            else:
                message = f'expect must be an object holding "relevant": {_ADD_EXPECT}'
            yield RULE.finding(context.key_range("expect"), message, cause="no-relevant")
            continue
        anchor = "id" if "id" in case else next(iter(case), None)
        where = context.key_range(anchor) if anchor is not None else context.line_range()
        yield RULE.finding(where, f"the case has no expect, so it cannot be scored: {_ADD_EXPECT}", cause="no-expect")


@RULE.folds
def every_case_without_relevant(cause):
    if cause == "no-expect":
        why = "the dataset holds questions alone (an export of queries without their judgments), or writes them under another key (RAG004 names it)"
    else:
        why = "the tool that wrote the dataset keeps its judgments under another key of `expect`"
    return f"{why}: no case can be scored until each says what is relevant", None
