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
Keep one of the two and delete the other. In a dataset row, the quick fix
removes the earlier occurrence: the row then reads as JSON readers take it now.
When most rows of a dataset repeat the same key (a tool that exports it writes
the key twice), one finding says so for the file, with a fix for every row.
"""

from ...reading.findings import Fix, Related, Severity, TextEdit
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
    # The cause of each repeat is the key: a dataset written by another tool
    # repeats the same one on every row.
    presumed = rows.presumed(RULE.code)
    pairs_of: dict[tuple[str, ...], tuple[tuple[str, str], ...]] = {}  # rows alike share one tuple
    for context in rows.rows:
        row = context.row
        if row.error is not None or not row.repeated_keys:
            continue
        if presumed and all(key in presumed for key in row.repeated_keys):
            # Only counted: the line is not parsed again for where each repeat is.
            keys = row.repeated_keys
            pairs = pairs_of.get(keys)
            if pairs is None:
                pairs = pairs_of[keys] = tuple(presumed[key] for key in keys)
            rows.pass_over(pairs, context.line)
            continue
        for repeat in duplicate_key_spans(row.text):
            key = repeat.path[-1]
            if rows.passes_over(RULE.code, key, context.line):
                continue
            first = context.columns(repeat.first_start, repeat.first_end)
            # The one before goes (each repeat's fix, the earlier ones all): the value readers keep is the last.
            fix = Fix(f"Remove the earlier {key!r}", edits=(TextEdit(context.columns(repeat.previous_start, repeat.after_previous), ""),))
            yield RULE.finding(
                context.columns(repeat.start, repeat.end),
                f"key {key!r} is repeated; JSON keeps only the last value",
                related=[Related(context.path, first, "first defined here")],
                fixes=[fix],
                cause=key,
            )


@RULE.folds
def every_row_repeats_a_key(cause):
    return (
        f"the tool that wrote the dataset most likely writes {cause!r} twice in every row",
        f"Remove the earlier {cause!r} from every row",
    )
