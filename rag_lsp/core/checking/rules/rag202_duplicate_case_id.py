"""Duplicate case id.

## What it does
Finds a rag case whose `id` (a gdi_text_v1 row whose `input_id`) is already used
by an earlier row of the same dataset, and points at the repeat (related
information points at the first use). A row that repeats the first row of its
id exactly (a file appended to itself, an export written twice) is said to be
such a copy.

## Why is this bad?
Run results, code lenses and `rag-lsp run --case ID` name cases by id. With two
cases of one id, a result can be shown beside the wrong case and only one of them
can be run on its own: `rag-lsp run` scores the first and reports the repeat as
a broken case.

## Example
```json
{"id": "gateway-approval", "input": {"query": "approval"}, "expect": {"relevant": ["src/gateway.ts"]}}
{"id": "gateway-approval", "input": {"query": "who approves"}, "expect": {"relevant": ["docs/approvals.md"]}}
```

## How to fix
Give each case its own id. The quick fix appends a suffix (`gateway-approval-2`)
that no case of the file uses yet; for a row that repeats an earlier one
exactly, it removes the row.
"""

import itertools

from ..datasetindex import RowGrouping
from ...reading.findings import Fix, Related, Severity, TextEdit
from ...workspace.manifests import GDI_TEXT
from ...reading.text import Position, Range
from ..folding import LINES_NAMED, folded_ahead
from . import DATASET, explain_fold, rule_of

RULE = rule_of(__doc__, "RAG202", "duplicate-case-id", Severity.ERROR)


class CaseIds(RowGrouping):
    """Rows are grouped by their case id."""

    def value_of(self, value, shape):
        # As contexts.case_id, inline: this runs once per row of a dataset.
        case_id = value.get("input_id" if shape == GDI_TEXT else "id")
        return case_id if type(case_id) is str and case_id else None


RULE.groups_rows(CaseIds())


@RULE.check(DATASET)
def duplicate_case_id(context):
    # New ids offered by fixes are reserved, so two repeats are not offered the same;
    # each id's next number to try is kept, as a thousand repeats of one id would
    # otherwise each try again every number the repeats before it took.
    reserved: set[str] = set()
    next_number: dict[str, int] = {}
    for case_id, group in context.repeated.items():
        if not context.folds(len(group) - 1):
            yield from _repeats(context, case_id, group, reserved, next_number)
            continue
        # One id on most rows (a tool that wrote a constant): its repeats fold,
        # and are made when read, from what is reserved now.
        taken = (frozenset(context.ids), set(reserved), dict(next_number))
        repeats = _repeats(context, case_id, group, reserved, next_number)
        first = next(repeats)
        yield folded_ahead(
            first,
            len(group) - 1,
            len(group) - 1,  # each repeat is a row of its own
            [group.line(index) for index in range(1, min(len(group), LINES_NAMED + 1))],
            lambda group=group: group.lines[1:],
            context.row_count,
            lambda case_id=case_id, group=group, taken=taken: list(_repeats(context, case_id, group, set(taken[1]), dict(taken[2]), taken[0])),
            explain_fold,
        )


def _repeats(context, case_id, group, reserved: set[str], next_number: dict[str, int], ids=None):
    """The findings of the repeats of ``case_id`` (``group``: its rows in line
    order), each offering an id no case uses (of ``ids``, the dataset's by
    default) nor was offered (``reserved``)."""
    key = context.id_key
    what = "case id" if key == "id" else key
    first = group[0]
    first_where = first.value_range(key)
    first_text = first.row.text.rstrip()
    # Not group[1:]: a copy of a hundred thousand rows, of which a folded finding reads the first.
    copies = [row.row.text.rstrip() == first_text for row in itertools.islice(group, 1, None)]
    # Repeats of one cause have fixes alike (see folding.folded): the copies of an
    # id all of whose repeats are copies have a cause of their own; among other
    # repeats, removing a copy makes its id unique as a new id does.
    copy_cause = case_id + _WRITTEN_AGAIN if all(copies) else case_id
    for row, is_copy in zip(itertools.islice(group, 1, None), copies):
        if is_copy:
            yield _copy(context, row, what, case_id, first_where, copy_cause)
            continue
        number = _free_number(case_id, context.ids if ids is None else ids, reserved, next_number.get(case_id, 2))
        next_number[case_id] = number + 1
        suffix = f"-{number}"
        reserved.add(case_id + suffix)
        where = row.value_range(key)
        # Insert before the closing quote: the id's own text (escapes included) stays.
        closing_quote = Position(row.line, where.end.character - 1)
        fix = Fix("Make the id unique", edits=(TextEdit(Range(closing_quote, closing_quote), suffix),))
        # No line numbers in the texts: they would go stale as lines move above.
        yield RULE.finding(
            where,
            f"{what} {case_id!r} is already used by an earlier case: give each case its own id "
            f"(results and --case name cases by id)",
            fixes=[fix],
            related=[Related(context.path, first_where, f"{case_id!r} first used here")],
            # Repeats of one id stand on most rows only where a tool wrote one id for every case.
            cause=case_id,
        )


def _copy(context, row, what: str, case_id: str, first_where: Range, cause: str):
    """The finding of a row that repeats the first row of its id exactly: its fix
    removes the line (a new id would keep the case twice)."""
    line = Range(Position(row.line, 0), Position(row.line + 1, 0))
    return RULE.finding(
        row.value_range(context.id_key),
        f"{what} {case_id!r} is already used by an earlier case, whose row this one repeats exactly: remove this row "
        "(`rag-lsp run` scores the first and reports the repeat as broken)",
        fixes=[Fix("Remove the repeated row", edits=(TextEdit(line, ""),))],
        related=[Related(context.path, first_where, f"{case_id!r} first used here")],
        cause=cause,
    )


_WRITTEN_AGAIN = ", the row written again"


@RULE.folds
def one_id_for_every_case(cause):
    if cause.endswith(_WRITTEN_AGAIN):
        return (
            "the dataset holds one row many times over: most likely a tool that wrote the same case for every row",
            "Remove every repeated row",
        )
    return (
        f"the tool that wrote the dataset gave most cases the same id {cause!r} (a constant, or a field "
        "it does not fill in): results and --case can tell none of them apart",
        "Make every repeated id unique",
    )


def _free_number(case_id: str, ids, reserved: set[str], number: int) -> int:
    """The first ``number`` or above whose ``{case_id}-{number}`` no case uses or was offered."""
    while f"{case_id}-{number}" in ids or f"{case_id}-{number}" in reserved:
        number += 1
    return number
