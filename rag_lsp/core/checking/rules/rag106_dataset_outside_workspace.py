"""Dataset path leaves the workspace.

## What it does
Finds a suite whose `dataset` is an absolute path, climbs out of the workspace
with `..`, or names a link whose real location is outside the workspace root.
rag-lsp never reads such a file.

## Why is this bad?
A suite is shared with everyone who checks out the repository and runs in CI.
A path outside the workspace is different on every machine, and a suite that
reads arbitrary files is a way to leak them: opening a repository must never
make the editor read `~/.ssh` on its behalf.

## Example
```yaml
suites:
  - id: rag-code
    target: {kind: capability, id: vectors.query}
    dataset: ../shared/rag-code.jsonl
    engines: [rag]
```

## How to fix
Move or copy the dataset into the workspace (conventionally under
`.punica/evals/`) and name it relative to the workspace root.
"""

from ...reading.findings import Severity
from ...reading.paths import normalize_relative
from . import SUITE, rule_of

RULE = rule_of(__doc__, "RAG106", "dataset-outside-workspace", Severity.ERROR)


@RULE.check(SUITE)
def dataset_outside_workspace(context):
    node = context.node.get("dataset")
    written = node.text() if node is not None else None
    if not written:
        return
    relative = normalize_relative(written)
    if relative is None:
        portable = written.replace("\\", "/")
        absolute = portable.startswith("/") or (len(portable) > 1 and portable[1] == ":")
        what = "is an absolute path" if absolute else "leaves the workspace"
        message = (
            f"dataset {written!r} {what}: keep the dataset inside the workspace and name it "
            "relative to the workspace root (e.g. .punica/evals/cases.jsonl)"
        )
    elif relative and not context.workspace.contains(context.workspace.absolute(relative)):
        # Resolving a link reads no file, only where it points.
        message = (
            f"dataset {written!r} is a link to a location outside the workspace, which is never read: "
            "copy the dataset into the workspace"
        )
    else:
        return
    yield RULE.finding(context.node_range(node), message)
