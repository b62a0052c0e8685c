"""Threshold outside the metric's range.

## What it does
Compares each threshold with the range its metric's manifest declares: 0..1
for the `rag` engine's rates and for `rag.hit_at_k` (a metric manifest's range is
its declared `range`, else the defaults of its `min`/`max` options). Counters are
left to RAG102, and a value that is not a number to RAG004.

NaN and infinity (`.nan`, `.inf`, `-.inf`) are outside every range, whatever the
metric, counters and metrics without a declared range included: `rag-lsp run`
does not run a suite gated on one.

## Why is this bad?
A threshold above the maximum can never be met and fails every run; one below
the minimum always holds and gates nothing. Both usually mean a percentage was
written for a rate (`80` for `0.8`) or a typo. A NaN threshold compares false
with every mean: the gate it sets says nothing about the figures.

## Example
```yaml
thresholds:
  rag.precision: 1.5
  rag.recall: 80
  rag.mrr: .nan
```

## How to fix
Write the threshold in the metric's range, e.g. `rag.recall: 0.8`.
"""

import math

from ...reading.findings import Severity
from ...reading.yamltree import SCALAR
from . import SUITE, rule_of
from ._suite import string_keys

RULE = rule_of(__doc__, "RAG104", "threshold-out-of-range", Severity.ERROR)


@RULE.check(SUITE)
def threshold_out_of_range(context):
    registry = context.workspace.manifests()
    for name, _, value in string_keys(context.node.get("thresholds")):
        metric = registry.metric(name)
        threshold = value.scalar() if value.resolve().kind == SCALAR else None
        if _is_number(threshold) and not math.isfinite(threshold):
            shown = context.parsed.text[value.start:value.end] or str(threshold)
            advice = f"use a value {_advice(metric.minimum, metric.maximum)}" if metric is not None and _bounded(metric) else "use a finite number"
            yield RULE.finding(
                context.node_range(value), f"threshold {shown} is not a number (NaN and infinity never are): {advice}"
            )
            continue
        if metric is None or metric.counter or not _is_number(threshold):
            continue
        low, high = metric.minimum, metric.maximum
        if low is None and high is None:
            continue
        outside = (low is not None and threshold < low) or (high is not None and threshold > high)
        if not outside:
            continue
        shown = context.parsed.text[value.start:value.end] or str(threshold)
        yield RULE.finding(
            context.node_range(value),
            f"threshold {shown} is outside the range of {name!r} ({metric.range_text()}): "
            f"use a value {_advice(low, high)}",
        )


def _bounded(metric) -> bool:
    return not metric.counter and (metric.minimum is not None or metric.maximum is not None)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _show(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _advice(low, high) -> str:
    if low is not None and high is not None:
        return f"from {_show(low)} to {_show(high)}"
    return f"of at least {_show(low)}" if low is not None else f"of at most {_show(high)}"
