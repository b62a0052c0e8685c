"""Result of a run case.

## What it does
After you run a case or a suite (the "Run case" / "Run suite" code lens, the
`ragLsp.runCase` / `ragLsp.runSuite` commands), shows each scored case's figures
on its dataset line:

`recall 0.50 (1/2) · precision 0.10 · MRR 0.33 (first relevant at rank 3) · hit@1 0 · retrieved 10 · semantic 1 — missed: docs/approvals.md`

Recall is the share of the declared documents that came back, precision the share
of the returned hits that were declared, MRR the reciprocal rank of the first
relevant hit, hit@1 whether the top hit was relevant, retrieved how many hits were
considered (the first `k`, or all), semantic whether the retrieval ran
semantically. Hovering the case shows the ranked hits with the relevant ones
marked. This finding comes from a run, never from checking the file.

## Why is this bad?
It is not: it is information. It is dropped as soon as the case's line is edited,
so a figure never sits beside text it was not computed from; run the case again
to see the new one.

## Example
```json
{"id": "gateway-approval", "input": {"query": "how does the gateway decide an approval", "corpora": ["code"], "topK": 10}, "expect": {"relevant": ["src/gateway.ts", "docs/approvals.md"]}}
```
Ten hits came back, `src/gateway.ts` at rank 3 and `docs/approvals.md` not at
all: recall 0.50, precision 0.10, MRR 0.33, hit@1 0, retrieved 10.

## How to fix
Nothing to fix. The `missed:` list names the declared documents that did not come
back within the first `k` hits: that is where to look when a suite threshold fails
(RAG403). Clear results with `ragLsp.clearResults`.
"""

from ...reading.findings import Severity
from . import rule_of

# Produced by runs (the runner attaches it to the case line), not by analysis:
# the rule exists for its code, severity and documentation, and has no check.
RULE = rule_of(__doc__, "RAG400", "case-result", Severity.INFORMATION)
