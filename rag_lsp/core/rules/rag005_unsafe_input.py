"""Input refused as unsafe or too large.

## What it does
Refuses input that would cost far more to read than it is worth: YAML nested
deeper than the limit, aliases that expand past the node budget (an "alias bomb"
such as the billion laughs), a file above `maxFileBytes` / `maxYamlBytes`, or a
dataset line above `maxLineBytes`. The finding sits where the refusal happened.

## Why is this bad?
A language server lives inside the editor. One hostile or accidental file must
not freeze it or exhaust the machine's memory; a CI check must not hang.

## Example
```yaml
a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
# ... each level multiplies the size by nine
```

## How to fix
Write the data out plainly, split the file, or raise the limit in the settings
(`maxFileBytes`, `maxYamlBytes`, `maxLineBytes`, `maxYamlDepth`, `maxYamlNodes`)
if the input is legitimate.
"""

from ..findings import Severity
from . import ROW, YAML, rule_of

RULE = rule_of(__doc__, "RAG005", "unsafe-input", Severity.ERROR)


@RULE.check(YAML)
def unsafe_yaml(context):
    for problem in context.parsed.document.problems:
        if problem.code == "RAG005":
            yield RULE.finding(context.range(problem.start, problem.end), f"input refused: {problem.message}")
    too_large = context.parsed.too_large
    if too_large is not None:
        limit = context.workspace.settings.max_yaml_nodes
        yield RULE.finding(
            context.node_range(too_large.node),
            f"input refused: aliases here expand to more than {limit:,} nodes (an alias bomb?); write the data out plainly",
        )


@RULE.check(ROW)
def line_too_long(rows):
    for context in rows.rows:
        if context.row.refused:
            yield RULE.finding(context.columns(0, min(len(context.row.text), 200)), f"input refused: {context.row.refused}")
