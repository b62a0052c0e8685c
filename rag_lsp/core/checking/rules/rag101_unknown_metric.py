"""Unknown metric in `thresholds` or `metrics`.

## What it does
Checks every key of a suite's `thresholds` against the metrics the suite computes:
those its engines emit (for `rag`: `rag.recall`, `rag.precision`, `rag.mrr`,
`rag.hit@1`, `rag.retrieved`, `rag.mode.semantic`) and those listed in its
`metrics`. Checks every key of `metrics` against the metric manifests (built-in
`rag.hit_at_k`, or `.punica/metrics/*.yaml`). Misspelled names get the closest
known names as quick fixes; a real metric this suite does not compute is
reported with what to add. A metric its manifest declares with a cutoff `@k`
(`ir.nDCG@k`) is known at any positive integer cutoff (`ir.nDCG@10`, `ir.P@5`),
and a misspelled one is offered at the cutoff it was written with
(`ir.nDGC@10`: did you mean `ir.nDCG@10`?).

A manifest under `.punica/metrics/` that cannot be read does not hide the
finding: one whose `name` can still be read defines that metric only, and the
message names any whose name cannot be read, since it might define the metric.

## Why is this bad?
A threshold on a metric nobody computes gates on nothing: a misspelled
`rag.recal: 0.8` lets a suite pass whatever the recall is.

## Example
```yaml
engines: [rag]
thresholds:
  rag.recal: 0.8
  rag.mode.semantic: 1
```

## How to fix
Use the name the message suggests (the quick fix does it), or add the engine or
metric that computes it to the suite.
"""

from ...reading.findings import Severity
from ...workspace.manifests import cutoff_of, family_of, with_cutoff
from . import SUITE, rule_of
from ._suite import closest, did_you_mean, rename_fixes, scalar_text, string_keys, unreadable_note

RULE = rule_of(__doc__, "RAG101", "unknown-metric", Severity.ERROR)


@RULE.check(SUITE)
def unknown_metric(context):
    yield from _in_metrics(context)
    yield from _in_thresholds(context)


def _in_metrics(context):
    registry = context.workspace.manifests()
    metric_manifests = [name for name, manifest in registry.manifests.items() if manifest.kind == "metric"]
    for name, key, _ in string_keys(context.node.get("metrics")):
        # A manifest that declares the name but cannot be read is reported itself.
        if registry.metric_manifest(name) is not None or registry.declared_unreadable(name):
            continue
        emitted = registry.metric(name)
        if emitted is not None:
            yield RULE.finding(
                context.node_range(key),
                f"{name!r} is emitted by engine {emitted.manifest!r}, not a metric with a manifest: "
                f"remove it from `metrics`, list {emitted.manifest!r} in `engines` and threshold {name!r}",
            )
            continue
        suggestions = closest(name, metric_manifests)
        if suggestions:
            message = f"unknown metric {name!r}{did_you_mean(suggestions)}"
        else:
            listed = ", ".join(sorted(metric_manifests)) or "none"
            message = (
                f"unknown metric {name!r}: `metrics` takes metrics with a manifest ({listed}); "
                "add a manifest under .punica/metrics/ for a new one"
            )
        message += unreadable_note(registry)
        yield RULE.finding(context.node_range(key), message, fixes=rename_fixes(context, key, suggestions))


def _in_thresholds(context):
    registry = context.workspace.manifests()
    computed: set[str] = set()
    any_unknown_engine = False
    engines = context.node.get("engines")
    for element in engines.elements() if engines is not None else []:
        name = scalar_text(element)
        if name is None:  # not a name: RAG004's
            continue
        engine = registry.engine(name)
        # An engine whose workspace manifest cannot be read emits what it emits:
        # unknown, even where a built-in of that name is known.
        if engine is None or registry.declared_unreadable(name):
            any_unknown_engine = True
        else:
            computed.update(metric.name for metric in engine.metrics)
    listed_metrics = {name for name, _, _ in string_keys(context.node.get("metrics"))}
    computed.update(name for name in listed_metrics if registry.metric_manifest(name) is not None)

    for name, key, _ in string_keys(context.node.get("thresholds")):
        if name in computed or family_of(name) in computed:
            continue
        known = registry.metric(name)
        # A counter is RAG102's whatever the suite computes: never threshold it.
        # A name also listed in `metrics` is reported there, once.
        if (known is not None and known.counter) or name in listed_metrics or registry.declared_unreadable(name):
            continue
        if any_unknown_engine:
            # What an unknown engine emits is unknown: RAG100 reports the engine,
            # and a name that looks wrong now may be right once it is fixed.
            continue
        if known is not None:
            yield RULE.finding(context.node_range(key), _not_computed(registry, name, known.manifest))
            continue
        # Counters are never thresholded: not worth suggesting.
        # A family (`ir.P@k`) is offered at the cutoff the name was written with.
        cutoff = cutoff_of(name)
        gates = sorted({with_cutoff(metric, cutoff) for metric in computed if not _is_counter(registry, metric)})
        everywhere = [with_cutoff(metric, cutoff) for metric, info in registry.metrics().items() if not info.counter]
        suggestions = closest(name, gates) or closest(name, everywhere)
        if suggestions:
            message = f"unknown metric {name!r}{did_you_mean(suggestions)}"
        elif gates:
            message = f"unknown metric {name!r}: this suite can threshold {', '.join(gates)}"
        else:
            message = f"unknown metric {name!r}: this suite computes no metrics; add `engines` or `metrics`"
        message += unreadable_note(registry)
        yield RULE.finding(context.node_range(key), message, fixes=rename_fixes(context, key, suggestions))


def _not_computed(registry, name: str, manifest: str) -> str:
    if registry.metric_manifest(name) is None and registry.engine(manifest) is not None:
        return f"metric {name!r} is not computed by this suite: add engine {manifest!r} to `engines`"
    return f"metric {name!r} is not computed by this suite: add {name!r} to `metrics`"


def _is_counter(registry, name: str) -> bool:
    info = registry.metric(name)
    return info is not None and info.counter
