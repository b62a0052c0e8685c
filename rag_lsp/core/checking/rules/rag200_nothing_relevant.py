"""Case declares nothing relevant.

## What it does
Finds a rag case whose `expect.relevant` is an empty list.

## Why is this bad?
Recall of nothing is undefined. The scorer reports such a case as broken rather
than as a zero or a perfect score, and a suite with a broken case fails: better to
find it while writing the case than when CI runs.

## Example
```json
{"id": "gateway-approval", "input": {"query": "approval"}, "expect": {"relevant": []}}
```

## How to fix
List the paths (or ids, or corpora, per the suite's `match`) that a good retrieval
must return for this question.
"""

from ...workspace.expected import NOTHING_RELEVANT, Expected
from ...reading.findings import Severity
from . import ROW, rule_of

RULE = rule_of(__doc__, NOTHING_RELEVANT, "nothing-relevant", Severity.ERROR)


@RULE.check(ROW)
def nothing_relevant(rows):
    for context, _, verdict in rows.without_a_list:
        if verdict.kind is not Expected.EMPTY or rows.passes_over(RULE.code, "empty", context.line):
            continue
        yield RULE.finding(
            context.value_range("expect", "relevant"),
            "the case declares nothing relevant: list what a good retrieval must return "
            "(an empty list makes the case broken, not zero)",
            cause="empty",
        )


@RULE.folds
def every_list_empty(cause):
    return (
        "the dataset was most likely written before its judgments (questions first, relevant documents to come): "
        "every case is broken until its list names what a good retrieval must return",
        None,
    )
