"""Duplicate suite id.

## What it does
Finds a suite whose `id` is already used by another suite anywhere in the
workspace, in the same file or another. Every later suite is reported; related
information points at the first.

## Why is this bad?
The id is how a suite is named on the command line (`rag-lsp run --suite ID`),
in run reports and in CI history. With two suites of one id, `--suite` picks one
of them silently and results of different suites get compared as if they were
the same.

## Example
```yaml
# .punica/evals/code.suite.yaml
suites:
  - id: rag-code
    ...
# .punica/evals/docs.suite.yaml
suites:
  - id: rag-code        # already used in code.suite.yaml
    ...
```

## How to fix
Rename one of the suites. The quick fix appends the first free number
(`rag-code-2`).
"""

from ...reading.findings import Related, Severity
from . import SUITE, rule_of
from ._suite import rename_fixes

RULE = rule_of(__doc__, "RAG107", "duplicate-suite-id", Severity.ERROR)


@RULE.check(SUITE)
def duplicate_suite_id(context):
    suite = context.suite
    node = context.node.get("id")
    if suite is None or suite.id is None or node is None:
        return
    same_id = context.workspace.suites_by_id().get(suite.id, [])
    first = same_id[0] if same_id else None
    # Suites are told apart by file and position: the same suite may be read twice.
    if first is None or (first.file, first.node.start) == (context.path, context.node.start):
        return
    first_node = first.node.get("id")
    first_parsed = context.workspace.parsed_yaml(first.file)
    related = []
    where = first.file
    if first_node is not None and first_parsed is not None:
        first_range = first_parsed.lines.range(first_node.start, first_node.end)
        related.append(Related(first.file, first_range, f"suite {suite.id!r} first defined here"))
        where = f"{first.file}:{first_range.start.line + 1}"
    yield RULE.finding(
        context.node_range(node),
        f"suite id {suite.id!r} is already used by the suite at {where}: give this suite a unique id",
        related=related,
        fixes=rename_fixes(context, node, [_unused_id(suite.id, context.workspace.suites_by_id())]),
    )


def _unused_id(taken: str, used: dict) -> str:
    """``taken`` with the first numeric suffix no suite uses yet: ``rag-code-2``."""
    number = 2
    while f"{taken}-{number}" in used:
        number += 1
    return f"{taken}-{number}"
