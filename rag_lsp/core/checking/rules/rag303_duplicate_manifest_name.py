"""Two manifests share a name.

## What it does
Finds two workspace manifest files that declare the same `name`, and reports the
`name` of every file after the first (files in path order), with related
information pointing at the first. A workspace manifest that reuses the name of a
built-in (`rag`, `rag.hit_at_k`) is an intended override and is not reported.

## Why is this bad?
Suites name engines and metrics by `name`, so only one of the two manifests can be
used: the other is silently shadowed. Which one wins depends on file names, and
renaming a file changes how every suite is checked and scored.

## Example
```yaml
# .punica/metrics/answer_length.yaml
name: team.answer_length
# .punica/metrics/answer_length_v2.yaml
name: team.answer_length
```

## How to fix
Give each manifest its own name (e.g. `team.answer_length_v2`), or delete the
copy that is no longer wanted.
"""

from ...reading.findings import Related, Severity
from . import MANIFEST, rule_of

RULE = rule_of(__doc__, "RAG303", "duplicate-manifest-name", Severity.ERROR)


@RULE.check(MANIFEST)
def duplicate_manifest_name(context):
    name_node = context.root.get("name") if context.root is not None and context.root.is_map else None
    name = name_node.text() if name_node is not None else None
    if not name:
        return
    workspace = context.workspace
    for earlier in workspace.manifest_files():
        if earlier >= context.path:
            return  # only files before this one (manifest_files is sorted): the first of a name is not reported
        earlier_name = _name_node(workspace.parsed_yaml(earlier))
        if earlier_name is None or earlier_name[1].text() != name:
            continue
        lines, first_node = earlier_name
        related = Related(earlier, lines.range(first_node.start, first_node.end), f"{name!r} is first declared here")
        yield RULE.finding(
            context.node_range(name_node),
            f"manifest name {name!r} is already used by {earlier}: only one of them can be used; rename one",
            related=[related],
        )
        return


def _name_node(parsed):
    """``(line index, name value node)`` of a manifest that parsed cleanly, else None."""
    if parsed is None or not parsed.document.well_formed or parsed.too_large is not None:
        return None
    root = parsed.document.root
    node = root.get("name") if root is not None and root.is_map else None
    return (parsed.lines, node) if node is not None and node.text() else None
