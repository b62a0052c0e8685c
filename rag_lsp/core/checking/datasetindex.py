"""Rules over a whole dataset plug in here.

A rule whose findings depend on more than one row (a case id used by two cases)
declares, in its own file, a :class:`RowGrouping`: what it keeps of each row
(:meth:`RowGrouping.value_of`, read while the row's value is at hand), and its
findings on the rows that share a value (its ``DATASET`` check, given those
groups as :attr:`DatasetContext.repeated`). It registers it with
``RULE.groups_rows(...)``.

Both analyses drive every registered grouping the same way:

* the one-shot analysis groups every row at once (:func:`groups_of`);
* a dataset model keeps a :class:`KeptGroups` per grouping through edits: a row
  joins its group when its line is read and leaves it when its line is
  replaced, and only the groups an edit touched are checked again.

A rule over the whole dataset that groups no rows (RAG203's "most expected
paths are missing") has only its ``DATASET`` check: both analyses call every
such check (``registry.whole_dataset_checks``) with the dataset's facts, its
tally of expected paths and, where most are missing, the first one.

A helper process that screens a large dataset's lines sends, for each plain
line, what every grouping keeps of it: a new grouping needs nothing beyond its
rule's file. The incremental-equivalence property test checks every registered
grouping, as it compares a model with the one-shot analysis.
"""

from __future__ import annotations

import bisect
import operator
from typing import Any, Callable, Hashable, Iterable, Protocol, Sequence

from ..reading.findings import Finding

# A row's line, read in C (rows are sorted by it).
LINE_OF = operator.attrgetter("line")

# Past this many rows joined since a group was put in line order, it is sorted
# whole again rather than each put in its place.
_PUT_IN_PLACE = 32


class RowGrouping:
    """What a rule over the whole dataset keeps of each row: a value (None:
    nothing), by which rows are grouped. Rows of the file's shape that share a
    value form a group; the rule's findings are made from the groups of more
    than one row."""

    # The types of the values it keeps: a helper process's answer holding
    # others is not believed (see screening.is_answer).
    kept_types: tuple[type, ...] = (str,)

    def value_of(self, value: dict[str, Any], shape: str | None) -> Hashable | None:
        """What the grouping keeps of a row holding the JSON object ``value``,
        read as a row of ``shape`` (its own)."""
        raise NotImplementedError


class GroupedRow(Protocol):
    """A model's row, as a grouping sees it."""

    line: int
    shape: str | None
    # What the registered groupings keep of the row (see kept_of).
    kept: Any


def kept_of(groupings: Sequence[RowGrouping]) -> Callable[[dict[str, Any], str | None], Any]:
    """What a model keeps of a row for ``groupings`` (the registered ones): the
    value of the one grouping when there is one (a tuple per row of a large
    dataset would cost megabytes), else a tuple of each one's."""
    if len(groupings) == 1:
        return groupings[0].value_of
    values_of = [grouping.value_of for grouping in groupings]
    return lambda value, shape: tuple(function(value, shape) for function in values_of)


def kept_are_valid(groupings: Sequence[RowGrouping], kept: list[Any]) -> bool:
    """Whether each of ``kept`` is what a model keeps of a row for ``groupings``
    (see kept_of), or None."""
    if len(groupings) == 1:
        return set(map(type, kept)) <= {*groupings[0].kept_types, type(None)}
    return all(
        value is None
        or (type(value) is tuple and len(value) == len(groupings) and all(part is None or type(part) in grouping.kept_types for part, grouping in zip(value, groupings)))
        for value in kept
    )


def value_in(groupings: int, position: int) -> Callable[[GroupedRow], Hashable | None]:
    """Reads the value of the grouping at ``position`` of ``groupings`` from a
    row (see kept_of): for the one grouping, an attribute read in C, as it runs
    for each row of a large dataset."""
    if groupings == 1:
        return operator.attrgetter("kept")
    return lambda row: row.kept[position] if row.kept is not None else None


def groups_of(
    rows: Iterable[tuple[Any, dict[str, Any]]], value_of: Callable[[Any, dict[str, Any]], Hashable | None]
) -> tuple[dict[Hashable, Any], dict[Hashable, list[Any]]]:
    """The first row of each value (what the values are), and the rows of each
    value more than one row holds, in line order: ``rows`` are (row, its JSON
    object) in line order, ``value_of`` what a grouping keeps of them. (A list
    per value would be a hundred thousand lists for a dataset that repeats none.)"""
    first: dict[Hashable, Any] = {}
    shared: dict[Hashable, list[Any]] = {}
    for row, value in rows:
        kept = value_of(row, value)
        if kept is None:
            continue
        earlier = first.setdefault(kept, row)
        if earlier is not row:
            group = shared.get(kept)
            if group is None:
                shared[kept] = [earlier, row]
            else:
                group.append(row)
    return first, shared


class KeptGroups:
    """One grouping's groups of a dataset model's rows, kept through edits, with
    the findings made from them: the rows of each value (a row, or a list when
    more share it), the values more than one row holds, and the values whose
    rows changed since their findings were made."""

    def __init__(self, groupings: int, position: int) -> None:
        # Reads the grouping's value of a row (see kept_of).
        self.value = value_in(groupings, position)
        self.rows: dict[Hashable, GroupedRow | list[GroupedRow]] = {}
        self.shared: set[Hashable] = set()
        self.changed: set[Hashable] | None = None  # None: every value
        # The findings made from each value's group.
        self.found: dict[Hashable, list[Finding]] = {}
        # For a group last put in line order (see in_line_order): how many of
        # its first rows are in order still. Rows that join a group are added
        # after them, and lines that come or go move rows without reordering them.
        self._ordered: dict[Hashable, int] = {}

    def add(self, rows: Sequence[GroupedRow]) -> None:
        held_by = self.rows
        for row, value in zip(rows, map(self.value, rows)):
            if value is not None and held_by.setdefault(value, row) is not row:
                held = held_by[value]
                if type(held) is list:
                    held.append(row)
                else:
                    held_by[value] = [held, row]  # type: ignore[list-item]
                    self.shared.add(value)
                    self._ordered.pop(value, None)

    def remove(self, row: GroupedRow) -> None:
        value = self.value(row)
        if value is None:
            return
        held = self.rows.get(value)
        if held is row:
            del self.rows[value]
        elif type(held) is list:
            index = held.index(row)
            del held[index]
            ordered = self._ordered.get(value, 0)
            if index < ordered:
                self._ordered[value] = ordered - 1
            if len(held) == 1:
                self.rows[value] = held[0]
                self.shared.discard(value)
                self._ordered.pop(value, None)

    def touch(self, row: GroupedRow) -> None:
        """``row`` joins or leaves its group: its value's findings are made again."""
        value = self.value(row)
        if value is not None and self.changed is not None:
            self.changed.add(value)

    def rows_of(self, value: Hashable) -> list[GroupedRow]:
        held = self.rows.get(value)
        return [] if held is None else held if type(held) is list else [held]  # type: ignore[list-item]

    def size_of(self, value: Hashable) -> int:
        """How many rows hold ``value``."""
        held = self.rows.get(value)
        return 0 if held is None else len(held) if type(held) is list else 1  # type: ignore[arg-type]

    def in_line_order(self, value: Hashable) -> list[GroupedRow]:
        """The rows of ``value`` in line order, their lines being exact. The
        group is kept so: at the next edit only the rows that joined it since
        are put in their places (one case id on every row of a large dataset:
        an edit then costs its rows, not a sort of a hundred thousand)."""
        held = self.rows.get(value)
        if type(held) is not list:
            return self.rows_of(value)
        ordered = self._ordered.get(value, 0)
        if ordered < len(held):
            if len(held) - ordered > _PUT_IN_PLACE:
                held.sort(key=LINE_OF)
            else:
                joined = held[ordered:]
                del held[ordered:]
                for row in joined:
                    bisect.insort(held, row, key=LINE_OF)
            self._ordered[value] = len(held)
        return held

    def to_check(self) -> Iterable[Hashable]:
        """The values whose findings are to be made again (those of every group
        more than one row holds after a change of the facts), forgetting their
        findings; from now on, values are noted as their rows change."""
        if self.changed is None:
            values: Iterable[Hashable] = list(self.shared)
            self.found = {}
        else:
            values = self.changed
            for value in values:
                self.found.pop(value, None)
        self.changed = set()
        return values

    def check_every_group(self) -> None:
        """The facts changed: every group's findings are made again."""
        self.changed = None
