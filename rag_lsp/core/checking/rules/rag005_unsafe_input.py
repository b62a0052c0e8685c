"""Input refused as unsafe or too large.

## What it does
Refuses input that would cost far more to read than it is worth: YAML nested
deeper than the limit, aliases that expand past the node budget (an "alias bomb"
such as the billion laughs), a file above `max-file-bytes` / `max-yaml-bytes`, a
dataset line above `max-line-bytes` (each counted in bytes of UTF-8), or a dataset number with more digits than an
integer is converted from (4,300: the conversion takes time quadratic in the
length). The finding sits where the refusal happened.

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
if the input is legitimate: `max-file-bytes`, `max-yaml-bytes`, `max-line-bytes`,
`max-yaml-depth`, `max-yaml-nodes` in `.punica/rag-lsp.toml` (in an editor's
settings: `maxFileBytes`, `maxYamlBytes`, `maxLineBytes`, `maxYamlDepth`, `maxYamlNodes`).
"""

from ...reading.findings import Severity
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
def refused_row(rows):
    for context in rows.rows:
        row = context.row
        if row.refused:
            start, end = row.refused_span or (0, min(len(row.text), 200))
            yield RULE.finding(context.columns(start, min(end, start + 200)), f"input refused: {row.refused}")
