"""An expected value is listed twice.

## What it does
Finds a value of a case's `expect.relevant` that repeats an earlier one (exact
string comparison) and points at the repeat.

## Why is this bad?
Expected values are a set: a repeat does not count twice, so it only makes the
list longer to read, and it is often a copy-paste slip where a different path was
meant.

## Example
```json
{"id": "gateway", "input": {"query": "gateway"}, "expect": {"relevant": ["src/gateway.ts", "src/gateway.ts"]}}
```

## How to fix
Remove the repeat, or replace it with the value that was meant. The quick fix
removes it.
"""

from ...reading.findings import Fix, Severity, TextEdit
from . import ROW, rule_of

RULE = rule_of(__doc__, "RAG205", "repeated-expected-value", Severity.WARNING)


@RULE.check(ROW)
def repeated_expected_value(rows):
    for context, relevant in rows.expected:
        if len(relevant) < 2 or _all_distinct(relevant):
            continue
        first_index: dict[str, int] = {}
        for index, value in enumerate(relevant):
            if type(value) is not str:
                continue
            if value not in first_index:
                first_index[value] = index
                continue
            if rows.passes_over(RULE.code, _REPEAT, context.line):
                continue
            # The repeat is never the first element, so removing it with the comma
            # before it (from the end of the previous element) keeps the list valid.
            previous = context.row.span("expect", "relevant", index - 1)
            repeat = context.row.span("expect", "relevant", index)
            removal = TextEdit(context.columns(previous.value_end, repeat.value_end), "")
            yield RULE.finding(
                context.value_range("expect", "relevant", index),
                f"{value!r} is already listed (element {first_index[value] + 1} of expect.relevant): remove the repeat",
                fixes=[Fix(f"Remove the repeated {value!r}", edits=(removal,))],
                cause=_REPEAT,
            )


# Every repeat has one cause: cases written by a tool that lists a value twice.
_REPEAT = "repeat"


@RULE.folds
def every_case_repeats(cause):
    return (
        "the tool that wrote the dataset lists an expected value twice in each case (it appends one it already "
        "listed): a repeat counts once in recall, so removing it changes no figure",
        "Remove every repeat",
    )


def _all_distinct(values: list) -> bool:
    """Whether no value repeats, settled in C for a list of strings; a list with
    a value that cannot be in a set (an object, say) is looked at one by one."""
    try:
        return len(set(values)) == len(values)
    except TypeError:
        return False
