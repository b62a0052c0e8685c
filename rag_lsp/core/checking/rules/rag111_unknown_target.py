"""Target id is not configured and has no default.

## What it does
Finds a suite whose `target.id` is neither a key of `targets:` in
`.punica/targets.yaml` nor a default target. The only default is
`vectors.query`, the builtin search by meaning over the workspace. The message
suggests the closest configured ids.

## Why is this bad?
The suite cannot run: there is nothing to send its cases to. The mistake would
surface only when someone runs the suite, or in CI.

## Example
```yaml
suites:
  - id: rag-code
    target: {kind: capability, id: vector.query}
    dataset: .punica/evals/rag-code.jsonl
    engines: [rag]
```

## How to fix
Use a configured id (the quick fix offers the closest ones), or configure the
target in `.punica/targets.yaml`:
```yaml
targets:
  docs.search:
    command: ["python", "tools/search.py"]
```
"""

from ...reading.findings import Severity
from . import SUITE, rule_of
from ._suite import closest, did_you_mean, rename_fixes, scalar_text

RULE = rule_of(__doc__, "RAG111", "unknown-target", Severity.ERROR)


@RULE.check(SUITE)
def unknown_target(context):
    node = context.suite.target_id_node
    target_id = scalar_text(node)
    if target_id is None:
        return
    configured = context.workspace.targets()
    if target_id in configured or _written_in_targets_file(context.workspace, target_id):
        return
    if not context.workspace.targets_readable():
        return  # the targets config's own findings come first (RAG001, RAG005)
    suggestions = closest(target_id, configured)
    targets_file = context.workspace.targets_file() or ".punica/targets.yaml"
    if suggestions:
        message = (
            f"target {target_id!r} is not configured{did_you_mean(suggestions)}; "
            f"a new target goes under `targets:` in {targets_file}"
        )
    else:
        message = (
            f"target {target_id!r} is not configured: use one of {', '.join(sorted(configured))}, "
            f"or add it under `targets:` in {targets_file}"
        )
    yield RULE.finding(context.node_range(node), message, fixes=rename_fixes(context, node, suggestions))


def _written_in_targets_file(workspace, target_id: str) -> bool:
    """Whether the targets config names the id, even with an invalid adapter
    (RAG004 reports that in the targets file, once)."""
    relative = workspace.targets_file()
    parsed = workspace.parsed_yaml(relative) if relative else None
    targets = parsed.value.get("targets") if parsed is not None and isinstance(parsed.value, dict) else None
    return isinstance(targets, dict) and target_id in targets
