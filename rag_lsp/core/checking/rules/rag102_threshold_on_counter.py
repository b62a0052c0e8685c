"""Threshold on a counter.

## What it does
Finds a threshold on a metric its manifest marks as a counter, such as
`rag.retrieved` (how many hits were considered). The quick fix removes the
threshold's line (in a flow mapping, the entry and its comma).

## Why is this bad?
A counter is not a quality score. `rag.retrieved` is at most `k` and at least
zero whether the retrieval is good or bad, so a threshold on it either always
holds or fails for reasons that say nothing about retrieval quality; it also
reads as if the suite checked something it does not.

## Example
```yaml
thresholds:
  rag.recall: 0.8
  rag.retrieved: 5
  rag.mode.semantic: 1
```

## How to fix
Remove the threshold. To score a fixed number of hits, set the engine's `k`
option instead (`options: {rag: {k: 5}}`).
"""

from ...reading.findings import Fix, Severity, TextEdit
from ...reading.yamltree import ALIAS, SCALAR
from . import SUITE, rule_of
from ._suite import content_end, is_flow

RULE = rule_of(__doc__, "RAG102", "threshold-on-counter", Severity.WARNING)


@RULE.check(SUITE)
def threshold_on_counter(context):
    registry = context.workspace.manifests()
    pair = context.node.entry("thresholds")
    if pair is None or not pair[1].is_map:
        return
    thresholds_key, thresholds = pair
    entries = thresholds.items()
    for index, (key, _) in enumerate(entries):
        name = key.text() if key.kind == SCALAR else None
        metric = registry.metric(name) if name else None
        if metric is None or not metric.counter:
            continue
        # Through an alias the entry lives elsewhere: no edit here can remove it.
        edits = None if pair[1].kind == ALIAS else _removal(context, thresholds_key, thresholds, index)
        yield RULE.finding(
            context.node_range(key),
            f"{name!r} is a counter, not a score: a threshold on it says nothing about retrieval quality; remove it",
            fixes=[Fix("Remove threshold", edits=edits)] if edits else [],
        )


def _removal(context, thresholds_key, thresholds, index):
    """Edits that delete entry ``index`` of ``thresholds`` and nothing else."""
    text = context.parsed.text
    entries = thresholds.items()
    key, value = entries[index]
    value_end = content_end(text, value)
    if is_flow(text, thresholds):
        if len(entries) == 1:
            start, end = key.start, value_end
        elif index < len(entries) - 1:
            # "a: 1, b: 2" -> "b: 2": up to the next key, taking the comma along.
            start, end = key.start, entries[index + 1][0].start
        else:
            # "a: 1, b: 2" -> "a: 1": from the end of the previous value.
            start, end = content_end(text, entries[index - 1][1]), value_end
        return (TextEdit(context.range(start, end), ""),)
    lines = context.parsed.lines
    first_line = lines.position(key.start).line
    last_line = lines.position(value_end).line
    if last_line + 1 < lines.line_count:
        start, end = lines.line_start(first_line), lines.line_start(last_line + 1)
    else:
        # The last line of a file without a final newline: take the newline before it.
        start, end = lines.line_start(first_line), len(text)
        if start > 0:
            start -= 2 if text[start - 2:start] == "\r\n" else 1
    edits = [TextEdit(context.range(start, end), "")]
    if len(entries) == 1:
        # An empty block would leave `thresholds:` null (a schema error): say `{}`.
        colon = text.find(":", thresholds_key.end)
        if colon == -1:
            return None
        edits.insert(0, TextEdit(context.range(colon + 1, colon + 1), " {}"))
    return tuple(edits)
