"""Suite threshold met.

## What it does
After a suite runs, shown as a hint on each threshold line the suite's figure
reaches: the metric's mean over the scored cases, against the threshold (at least
the threshold, or at most for a `lower_is_better` metric).

## Why is this bad?
It is not: it confirms the gate holds, with the figure beside it so you can see
the margin. Like every run result it is dropped as soon as the line is edited.

## Example
```yaml
thresholds:
  rag.recall: 0.8          # recall 0.91 ≥ 0.8 (mean over 12 scored cases)
  rag.mode.semantic: 1     # semantic 1.00 ≥ 1
```

## How to fix
Nothing to fix. A wide margin may mean the threshold could be raised to catch
regressions earlier; a thin one means the next change is likely to fail it.
"""

from ...reading.findings import Severity
from . import rule_of

# Produced by runs (suite aggregates against thresholds), not by analysis: no check.
RULE = rule_of(__doc__, "RAG404", "threshold-met", Severity.HINT)
