"""Option `k` exceeds the case's `topK`.

## What it does
Compares the `k` option of the suites that use a dataset (`options: {rag: {k: N}}`)
with each case's `input.topK`, and points at a `topK` smaller than `k`.

## Why is this bad?
`k` says how many hits are scored; `topK` says how many the target is asked for.
With `topK` below `k` the suite never sees the hits it means to score: precision
and `rag.retrieved` are computed over fewer hits than the suite claims, and a
relevant document ranked between `topK` and `k` is reported missed.

## Example
```yaml
options:
  rag: {match: path, k: 10}
```
```json
{"id": "gateway", "input": {"query": "gateway", "topK": 5}, "expect": {"relevant": ["src/gateway.ts"]}}
```

When most cases of the dataset (and at least 20) ask for fewer hits than `k`,
the cause is the suite's option as much as the cases: the finding then stands
on the suite's `k` too, with how many cases ask for how many hits.

## How to fix
Raise the case's `topK` to at least `k`, or lower `k` in the suite's options.
"""

from ...reading.findings import Severity
from . import ROW, SUITE, rule_of


RULE = rule_of(__doc__, "RAG207", "k-above-top-k", Severity.HINT)


@RULE.check(ROW)
def k_above_top_k(rows):
    if not rows.use.ks:
        return
    # One hint for the largest k: raising topK to it settles every suite.
    k = max(rows.use.ks)
    for context, case in rows.cases:
        case_input = case.get("input")
        top_k = case_input.get("topK") if type(case_input) is dict else None
        # A topK that is not a positive integer is a schema error (RAG004); a
        # bool is no int here. Most cases ask for k hits or more: one test each.
        if type(top_k) is not int or top_k >= k or top_k < 1:
            continue
        if not rows.passes_over(RULE.code, f"{k}>{top_k}", context.line):
            yield RULE.finding(
                context.value_range("input", "topK"),
                f"the suite scores the first {k} hits (k: {k}) but this case asks for topK {top_k}: raise topK or lower k",
                cause=f"{k}>{top_k}",
            )


@RULE.folds
def every_case_asks_fewer(cause):
    k, top_k = cause.split(">")
    return (
        f"the suite's option `k: {k}` (in the suite file, under `options: {{rag: ...}}`) is above the `topK: {top_k}` "
        f"these cases ask for: lower `k` to {top_k} there, or raise every case's topK to {k}",
        None,
    )


@RULE.check(SUITE)
def k_above_most_top_ks(context):
    """The suite's `k`, where most cases of its dataset ask for fewer hits."""
    suite = context.suite
    options = context.node.get("options")
    rag = options.get("rag") if options is not None else None
    node = rag.get("k") if rag is not None else None
    k = node.scalar() if node is not None else None
    if suite is None or suite.dataset is None or type(k) is not int or type(k) is bool:
        return
    most = context.workspace.top_k_most_asked_below(suite.dataset, k)
    if most is None:
        return
    # No count in the message: a case added or removed changes nothing said here.
    yield RULE.finding(
        context.node_range(node),
        f"k: {k} is above the topK most cases of {suite.dataset} ask for ({most}): the suite scores hits "
        f"those cases never ask for; lower k to {most}, or raise the cases' topK to {k}",
    )
