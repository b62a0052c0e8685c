"""Unknown engine.

## What it does
Finds an element of a suite's `engines`, or a key of its `options`, that names no
engine manifest: neither a built-in (`rag`) nor one of the workspace's manifests
(`.punica/metrics/*.yaml`). It suggests the closest known engine names.

A manifest under `.punica/metrics/` that cannot be read does not hide the
finding: one whose `name` can still be read defines that engine only, and the
message names any whose name cannot be read, since it might define the engine.

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

from ...reading.findings import Severity
from . import SUITE, rule_of
from ._suite import closest, did_you_mean, rename_fixes, scalar_text, string_keys, unreadable_note

RULE = rule_of(__doc__, "RAG100", "unknown-engine", Severity.ERROR)


@RULE.check(SUITE)
def unknown_engine(context):
    registry = context.workspace.manifests()
    engines = context.node.get("engines")
    for element in engines.elements() if engines is not None else []:
        name = scalar_text(element)
        if name is not None and _unknown(registry, name):
            yield _finding(context, registry, element, name, f"unknown engine {name!r}")
    for name, key, _ in string_keys(context.node.get("options")):
        if _unknown(registry, name):
            yield _finding(context, registry, key, name, f"options for unknown engine {name!r}")


def _unknown(registry, name: str) -> bool:
    # A manifest that declares the name but cannot be read is reported itself.
    return registry.engine(name) is None and not registry.declared_unreadable(name)


def _finding(context, registry, node, name, what):
    known = registry.engines
    suggestions = closest(name, known)
    if suggestions:
        message = f"{what}{did_you_mean(suggestions)}"
    else:
        listed = ", ".join(known) or "none"
        message = f"{what}: use a known engine ({listed}) or add an engine manifest under .punica/metrics/"
    message += unreadable_note(registry)
    return RULE.finding(context.node_range(node), message, fixes=rename_fixes(context, node, suggestions))
