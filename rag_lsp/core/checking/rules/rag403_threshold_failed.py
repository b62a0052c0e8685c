"""Suite threshold failed.

## What it does
After a suite runs, reported on the threshold's own line in the suite file when
the suite's figure does not reach it: the figure is the mean of that metric over
the suite's scored cases, and a threshold holds when the mean is at least the
threshold (at most, for a metric whose manifest says `lower_is_better`). The
message gives the mean beside the threshold. The same failure makes `rag-lsp run`
exit 1.

## Why is this bad?
The threshold is the suite's gate: retrieval is now worse than the suite says it
must be, so the change being tested should not ship as it is. A suite with a
broken case (RAG401) fails as well, even when every mean holds.

## Example
```yaml
thresholds:
  rag.recall: 0.8          # recall 0.62 < 0.8 (mean over 9 scored cases)
  rag.mode.semantic: 1
```

## How to fix
Read the case results (RAG400): the `missed:` lists and first-relevant ranks show
which questions regressed and which documents stopped coming back. Fix the
retrieval (index, chunking, embedding, `k`), then run the suite again. Lower a
threshold only as a deliberate decision about what is good enough, never to make
a run pass.
"""

from ...reading.findings import Severity
from . import rule_of

# Produced by runs (suite aggregates against thresholds), not by analysis: no check.
RULE = rule_of(__doc__, "RAG403", "threshold-failed", Severity.ERROR)
