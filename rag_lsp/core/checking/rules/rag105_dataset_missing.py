"""Dataset file does not exist.

## What it does
Finds a suite whose `dataset` names a workspace path where there is no file.
Paths are relative to the workspace root (the folder holding `.punica/`), not to
the suite file. The quick fix creates the file, empty, for you to fill; when a
dataset with a close name exists, the message suggests it.

## Why is this bad?
A suite without cases runs nothing, and a run fails only when CI gets to it.
The usual cause is a path written relative to the suite file or a typo.

## Example
```yaml
suites:
  - id: rag-code
    target: {kind: capability, id: vectors.query}
    dataset: evals/rag-code.jsonl   # the file is .punica/evals/rag-code.jsonl
    engines: [rag]
```

## How to fix
Correct the path (relative to the workspace root), or create the dataset.
"""

import os

from ...reading.findings import Fix, Severity
from ...reading.paths import normalize_relative
from . import SUITE, rule_of
from ._suite import did_you_mean, meant_file, rename_fixes

RULE = rule_of(__doc__, "RAG105", "dataset-missing", Severity.ERROR)


@RULE.check(SUITE)
def dataset_missing(context):
    node = context.node.get("dataset")
    written = node.text() if node is not None else None
    relative = normalize_relative(written) if written else None
    # Outside the workspace is RAG106's; the root itself is no file name.
    if not relative or not context.workspace.contains(context.workspace.absolute(relative)):
        return
    if relative in context.workspace.file_set() or context.workspace.read(relative) is not None:
        return
    # os.path answers False for a name the file system refuses (too long), where pathlib raises.
    if os.path.isdir(context.workspace.absolute(relative)):
        yield RULE.finding(
            context.node_range(node),
            f"dataset {written!r} is a folder: name the JSON Lines file of its cases (relative to the workspace root)",
        )
        return
    suggestions = _similar_dataset(context.workspace, relative)
    fixes = [Fix(f"Create {relative}", create_file=relative), *rename_fixes(context, node, suggestions)]
    yield RULE.finding(
        context.node_range(node),
        f"dataset {written!r} does not exist{did_you_mean(suggestions)}: "
        "fix the path (relative to the workspace root) or create the file",
        fixes=fixes,
    )


def _similar_dataset(workspace, relative):
    """An existing dataset the path probably meant (see meant_file)."""
    recordings = workspace.recordings()
    return meant_file(relative, [path for path in workspace.files() if path.endswith(".jsonl") and path not in recordings])
