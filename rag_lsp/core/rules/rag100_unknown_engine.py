"""Unknown engine.

## What it does
Finds an element of a suite's `engines`, or a key of its `options`, that names no
engine manifest: neither a built-in (`rag`) nor one of the workspace's manifests
(`.punica/metrics/*.yaml`). It suggests the closest known engine names.

## Why is this bad?
An engine nobody declared cannot score anything. The suite would run no checks
for it, or fail only in CI, after the change was merged; options written for a
misspelled engine are never read.

## Example
```yaml
suites:
  - id: rag-code
    target: {kind: capability, id: vectors.query}
    dataset: .punica/evals/rag-code.jsonl
    engines: [rga]
    options:
      rga: {match: path}
```

## How to fix
Use the name of a known engine (`rag`), or add a manifest with `kind: engine`
and that `name` under `.punica/metrics/`.
"""

from ..findings import Severity
from . import SUITE, rule_of
from ._suite import closest, did_you_mean, rename_fixes, scalar_text, string_keys

RULE = rule_of(__doc__, "RAG100", "unknown-engine", Severity.ERROR)


@RULE.check(SUITE)
def unknown_engine(context):
    registry = context.workspace.manifests()
    if not registry.complete:
        return  # an unreadable manifest may define it: its own findings come first
    known = registry.engines
    engines = context.node.get("engines")
    for element in engines.elements() if engines is not None else []:
        name = scalar_text(element)
        if name is not None and name not in known:
            yield _finding(context, element, name, known, f"unknown engine {name!r}")
    for name, key, _ in string_keys(context.node.get("options")):
        if name not in known:
            yield _finding(context, key, name, known, f"options for unknown engine {name!r}")


def _finding(context, node, name, known, what):
    suggestions = closest(name, known)
    if suggestions:
        message = f"{what}{did_you_mean(suggestions)}"
    else:
        listed = ", ".join(known) or "none"
        message = f"{what}: use a known engine ({listed}) or add an engine manifest under .punica/metrics/"
    return RULE.finding(context.node_range(node), message, fixes=rename_fixes(context, node, suggestions))
