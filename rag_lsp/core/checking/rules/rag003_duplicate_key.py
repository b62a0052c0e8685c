"""A mapping or object repeats a key.

## What it does
Finds a key written twice in the same YAML mapping or JSON object of a suite,
manifest, targets config or dataset row, or set twice in the settings file (TOML),
and points at the second one (related information points at the first).

## Why is this bad?
YAML and JSON readers keep only the last value, silently. A suite with two
`thresholds:` blocks gates on only one of them; a case with two `expect` keys
checks only the second. TOML refuses the whole settings file instead.

## Example
```yaml
thresholds:
  rag.recall: 0.8
  rag.recall: 0.5
```

## How to fix
Keep one of the two and delete the other.
"""

from ...reading.findings import Related, Severity
from ...reading.jsonspans import duplicate_key_spans
from . import ROW, YAML, rule_of

RULE = rule_of(__doc__, "RAG003", "duplicate-key", Severity.ERROR)


@RULE.check(YAML)
def duplicate_yaml_key(context):
    for problem in context.parsed.document.problems:
        if problem.code == "RAG003" and problem.first is not None:
            first = context.range(*problem.first)
            related = Related(context.path, first, "first defined here")
            yield RULE.finding(context.range(problem.start, problem.end), problem.message, related=[related])


@RULE.check(ROW)
def duplicate_json_key(rows):
    for context in rows.rows:
        if context.row.error is not None or not context.row.has_duplicate_keys:
            continue
        for path, start, end, first_start, first_end in duplicate_key_spans(context.row.text):
            related = Related(context.path, context.columns(first_start, first_end), "first defined here")
            yield RULE.finding(
                context.columns(start, end),
                f"key {path[-1]!r} is repeated; JSON keeps only the last value",
                related=[related],
            )
