"""Dataset rows do not fit the suite's engines or metrics.

## What it does
Compares the shape of the suite's dataset rows (what most of its rows are: rag
cases with `input`/`expect`, or gdi_text_v1 rows with `input_id`,
`retrieved_context`, ...) with the row shapes the suite's engines and metrics
accept (their manifests' `accepts`). Reported on the suite's `dataset`. A suite
whose engines and metrics accept no row shape in common is reported whatever its
dataset holds, an empty one included: no row can be scored by all of them, and
`rag-lsp run` does not run it.

## Why is this bad?
An engine cannot score rows it does not understand: engine `rag` needs each
case's retrieval `input` and its `expect.relevant`, and `rag.hit_at_k` needs the
retrieved chunks and reference contexts of a gdi_text_v1 row. Every case would
be broken.

## Example
```yaml
suites:
  - id: hits
    target: {kind: capability, id: vectors.query}
    dataset: .punica/evals/gdi-rows.jsonl   # gdi_text_v1 rows
    engines: [rag]                          # scores rag cases
```

## How to fix
Point `dataset` at a file of the rows the suite's engines and metrics score, or
score this dataset with an engine or metric that accepts its rows (for
gdi_text_v1 rows: `metrics: {rag.hit_at_k: {}}`).
"""

from ...reading.findings import Severity
from ...workspace.manifests import GDI_TEXT, RAG_CASE
from . import SUITE, rule_of
from ._suite import scalar_text, string_keys

RULE = rule_of(__doc__, "RAG110", "dataset-shape-mismatch", Severity.ERROR)

_SHAPE_NAMES = {RAG_CASE: "rag cases (rag_case_v1)", GDI_TEXT: "gdi_text_v1 rows"}


@RULE.check(SUITE)
def dataset_shape_mismatch(context):
    suite = context.suite
    node = context.node.get("dataset")
    if suite is None or suite.dataset is None or node is None:
        return
    registry = context.workspace.manifests()
    scorers = []
    engines = context.node.get("engines")
    for element in engines.elements() if engines is not None else []:
        name = scalar_text(element)
        scorers.append((f"engine {name!r}", registry.engine(name) if name else None))
    for name, _, _ in string_keys(context.node.get("metrics")):
        scorers.append((f"metric {name!r}", registry.metric_manifest(name)))
    known = [(label, manifest) for label, manifest in scorers if manifest is not None and manifest.accepts]
    shape = context.workspace.dataset_shape(suite.dataset)
    if shape is None:
        # Missing, empty or unreadable (other findings say why): no rows yet to
        # compare, but scorers that accept no shape in common never fit any.
        if len(known) > 1 and not frozenset.intersection(*(manifest.accepts for _, manifest in known)):
            wants = " and ".join(f"{label} wants {_describe_all(manifest.accepts)}" for label, manifest in known)
            yield RULE.finding(
                context.node_range(node), f"{wants}: no dataset fits them all; score each row shape in a suite of its own"
            )
        return
    refusing = [(label, manifest) for label, manifest in known if shape not in manifest.accepts]
    if not refusing:
        return
    wants = "; ".join(f"{label} wants {_describe_all(manifest.accepts)}" for label, manifest in refusing)
    wanted = _describe_all(frozenset().union(*(manifest.accepts for _, manifest in refusing)))
    if len(refusing) < len(known):
        # Part of the suite fits the rows: the rest belongs in a suite of its own.
        advice = f"move {' and '.join(label for label, _ in refusing)} to a suite over {wanted}"
    else:
        in_suite = {manifest.name for _, manifest in known}
        alternatives = sorted(
            f"{manifest.kind} {manifest.name!r}"
            for manifest in registry.manifests.values()
            if shape in manifest.accepts and manifest.name not in in_suite
        )
        advice = f"point `dataset` at a file of {wanted}"
        if alternatives:
            advice += f", or score these rows with {' or '.join(alternatives)}"
    yield RULE.finding(context.node_range(node), f"the dataset holds {_describe(shape)}, but {wants}: {advice}")


def _describe_all(shapes) -> str:
    return " or ".join(_describe(shape) for shape in sorted(shapes))


def _describe(shape: str) -> str:
    return _SHAPE_NAMES.get(shape, f"{shape} rows")
