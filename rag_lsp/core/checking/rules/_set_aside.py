"""What RAG004 validates a row without, where a cause is presumed to stand on
most rows of a dataset (see RowsContext.passes_over): a dataset written by
another tool, with its key on every row, is read as fast as one without.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Iterable, NamedTuple

from ...workspace.rowschema import (
    EACH_ELEMENT,
    EACH_KEY,
    AlikeValues,
    checker_tolerating,
    checker_without,
    explained_alike_at,
    has_each,
    json_types,
    place_parts,
    plain_enum_at,
    plain_types_at,
    required_keys,
)


class SetAside(NamedTuple):
    """What a row is validated without, where a cause of RAG004 is presumed to
    stand on most rows (see RowsContext.passes_over): a key the schema does not
    know (a tool's own key on every row), a value of the wrong type at a key
    (ids written as numbers, `relevant` as one string), a corpus the targets do
    not serve. Each such occurrence is counted, and the rest of the row
    validated in the same call as clean rows: a dataset with a tool's key on
    every row is read as fast as one without."""

    # (the path of the unknown key, its cause), for keys of objects outside lists.
    keys: tuple[tuple[tuple[str, ...], str], ...]
    # (the path of the key, its cause, the JSON types its schema allows), for
    # values of a wrong type; and the checker that does not require those keys,
    # nor the missing ones below, for the rows they are set aside from.
    typed: tuple[tuple[tuple[str, ...], str, frozenset[str]], ...]
    # (the path of an object, its cause, the keys it must hold and those of them
    # RAG004 reports), for keys missing (each one it reports is a finding of the cause).
    required: tuple[tuple[tuple[str, ...], str, tuple[tuple[str, ...], tuple[str, ...]]], ...]
    # The corpora not served, by name; and whether an empty `input.corpora` is set aside.
    corpora: frozenset[str]
    no_corpora: bool
    # (the path of the key, its cause, the strings its `enum` lists), for strings
    # it does not list (a `task_type` of another tool's on every row).
    unlisted: tuple[tuple[tuple[str, ...], str, frozenset[str]], ...]
    # (a key of the row, the keys of its values, the causes presumed under it),
    # for causes inside a value a schema judges through combinators or lists (a
    # `prompt` written as a list of strings): the causes of a value are those
    # of the first value with its key (see AlikeValues), kept in ``explained``.
    alike: tuple[tuple[str, AlikeValues, frozenset[str]], ...]
    explained: dict[tuple[str, Any], tuple[str, ...]]
    # The causes of a row's issues, with the path of each (RAG004's explanation).
    explain: Callable[[dict[str, Any]], list[tuple[tuple[Any, ...], str]]] | None
    checker: Any
    relaxed: Any
    # The checker that tolerates all of the above (see checker_tolerating), or None.
    tolerant: Any
    # The code of the rule whose causes these are.
    code: str
    # Where all that is set aside is one key of a row's own object (a tool's key
    # on every row): its name, and the causes of a row holding it.
    one_key: tuple[str, tuple[str, ...]] | None = None

    @classmethod
    def of(cls, systemic: frozenset[tuple[str, str]], checker, shape: str, code: str, explain=None) -> SetAside | None:
        keys = []
        typed = []
        required = []
        corpora = set()
        no_corpora = False
        unlisted = []
        alike: dict[str, set[str]] = {}
        for pair_code, cause in sorted(systemic):
            if pair_code != code:
                continue
            keyword, _, where = cause.partition(" at ")
            path = () if where == THE_ROW else place_parts(where)
            if keyword == "type" and path and (allowed := plain_types_at(checker.schema, path)) is not None:
                # A value of a wrong type, at a key or (EACH_ELEMENT, EACH_KEY) at
                # every element of a list or value of a map: each is counted.
                typed.append((path, cause, allowed))
            elif (keyword == "type" or has_each(path)) and path:
                if explain is not None and explained_alike_at(checker.schema, path[0]):
                    alike.setdefault(path[0], set()).add(cause)
                # else explained row by row
            elif keyword == "enum" and path:
                listed = plain_enum_at(checker.schema, path)
                if listed is not None:
                    unlisted.append((path, cause, listed))
            elif keyword == "additionalProperties":
                keys.append((path, cause))
            elif keyword == "required":
                keys_of = required_keys(checker.schema, shape, path)
                if keys_of is not None and keys_of[1]:
                    required.append((path, cause, keys_of))
            elif cause.startswith("corpus "):
                corpora.add(cause[len("corpus ") :])
            elif cause == NO_CORPORA:
                no_corpora = True
        # A key missing that other rules report (RAG201's `expect`) is no finding
        # of RAG004's: it is not required of such rows either. A value of a wrong
        # type in a list or a map is not taken out of a row (see apply).
        optional = tuple((path[:-1], path[-1]) for path in _taken_out(typed, unlisted, alike)) + tuple(
            (path, name) for path, _, (names, _) in required for name in names
        )
        relaxed = checker_without(checker, optional) if optional else None
        if optional and relaxed is None:
            typed, required, unlisted, alike = [entry for entry in typed if has_each(entry[0])], [], [], {}
        if not (keys or typed or required or corpora or no_corpora or unlisted or alike):
            return None
        tolerant = checker_tolerating(
            checker,
            keys=tuple(path for path, _ in keys),
            typed=tuple((path, allowed) for path, _, allowed in typed),
            optional=tuple((path, name) for path, _, (names, _) in required for name in names),
            corpora=frozenset(corpora),
            no_corpora=no_corpora,
            unlisted=tuple(path for path, _, _ in unlisted),
            anything=tuple(sorted(alike)),
        )
        one_key = None
        if len(keys) == 1 and len(keys[0][0]) == 1 and not (typed or required or corpora or no_corpora or unlisted or alike):
            one_key = (keys[0][0][0], (keys[0][1],))
        alike_values = tuple((key, AlikeValues(checker.schema, key), frozenset(causes)) for key, causes in sorted(alike.items()))
        return cls(
            tuple(keys),
            tuple(typed),
            tuple(required),
            frozenset(corpora),
            no_corpora,
            tuple(unlisted),
            alike_values,
            {},
            explain,
            checker,
            relaxed,
            tolerant,
            code,
            one_key,
        )

    def counted_if_valid(self, group, rows) -> bool:
        """Whether every row of ``group`` is valid with what is set aside of it
        tolerated, settled in one call; if so, its occurrences are counted, as
        :meth:`apply` counts them, without a copy of any row."""
        values = [context.row.value for context in group]
        if self.tolerant is None or not self.tolerant.all_valid(values):
            return False
        every = list(map(self._causes, values))
        for number, value in enumerate(values if self.alike else ()):
            more = self._alike_causes(value)
            if more is None:
                return False  # a value not explained alike: see apply
            every[number] += more
        # Every cause set aside is presumed (see of): counted a row at a time;
        # rows alike (nearly every one) share one tuple of their pairs.
        code = self.code
        pairs_of: dict[tuple[str, ...], tuple[tuple[str, str], ...]] = {}
        pass_over = rows.pass_over
        for context, causes in zip(group, every):
            if causes:
                pairs = pairs_of.get(causes)
                if pairs is None:
                    pairs = pairs_of[causes] = tuple((code, cause) for cause in causes)
                pass_over(pairs, context.line)
        return True

    def _alike_causes(self, value: dict[str, Any]) -> tuple[str, ...] | None:
        """The causes of the issues of a row's values at the keys explained
        alike (see alike); None where one is not told by its key or holds a
        cause not presumed: the row is then explained on its own."""
        causes: tuple[str, ...] = ()
        for key, values, presumed in self.alike:
            if key not in value:
                continue
            alike = values.key(value[key])
            if alike is None:
                return None
            known = self.explained.get((key, alike))
            if known is None:
                assert self.explain is not None  # see of
                if len(self.explained) >= _EXPLAINED_KEPT:
                    self.explained.clear()
                known = self.explained[key, alike] = tuple(cause for path, cause in self.explain(value) if path[:1] == (key,))
            if not presumed.issuperset(known):
                return None
            causes += known
        return causes

    def _causes(self, value: dict[str, Any]) -> tuple[str, ...]:
        """The causes set aside of a row, counted on the row as written (a key
        taken out for its type is no key missing), in the order of the causes."""
        if not (self.keys or self.typed or self.required or self.no_corpora or self.unlisted):
            # Corpora alone (cases asking for a corpus of the team's own service).
            return tuple(f"corpus {corpus}" for corpus in _corpora_among(value, self.corpora)) if self.corpora else ()
        if self.one_key is not None:  # nothing else set aside: a row holds the key or not
            name, causes_if_held = self.one_key
            return causes_if_held if name in value else ()
        causes: list[str] = []
        for path, cause in self.keys:
            holder = _object_at(value, path[:-1]) if len(path) > 1 else value
            if holder is not None and path[-1] in holder:
                causes.append(cause)
        for path, cause, allowed in self.typed:
            causes += [cause] * _of_another_type(value, path, allowed)
        for path, cause, (names, reported) in self.required:
            holder = _object_at(value, path)
            if holder is not None and not all(name in holder for name in names):
                causes += [cause] * sum(1 for name in reported if name not in holder)
        if self.corpora:
            causes += [f"corpus {corpus}" for corpus in _corpora_among(value, self.corpora)]
        if self.no_corpora and _no_corpora(value):
            causes.append(NO_CORPORA)
        for path, cause, listed in self.unlisted:
            if _unlisted_string(value, path, listed):
                causes.append(cause)
        return tuple(causes)

    def apply(self, group, rows) -> SetAsideGroup:
        """``group`` (rows of objects) with what is set aside of each, counted."""
        values = []
        counted = []
        relaxed = []
        for context in group:
            value = context.row.value
            causes = self._causes(value)
            for path, _ in self.keys:
                value = _without_key(value, path)
            # Whether the row is valid only by the checker that asks less (see
            # relaxed); whether it is explained row by row all the same.
            loosened = unsettled = False
            for path, _, allowed in self.typed:
                if not _of_another_type(value, path, allowed):
                    continue
                if has_each(path):
                    # Values inside a list or a map stay: a list emptied of them
                    # would fail what the list did not.
                    unsettled = True
                    continue
                value = _without_key(value, path)
                loosened = True
            for path, _, (names, _) in self.required:
                holder = _object_at(value, path)
                if holder is not None and not all(name in holder for name in names):
                    loosened = True
            for path, _, listed in self.unlisted:
                if _unlisted_string(value, path, listed):
                    value = _without_key(value, path)
                    loosened = True
            if self.alike:
                more = self._alike_causes(context.row.value)
                # A row without one of the keys fails what the checker that asks
                # less would not see: it is explained on its own.
                if more is None or not all(key in value for key, _, _ in self.alike):
                    unsettled = True
                else:
                    causes += more
                    for key, _, _ in self.alike:
                        value = _without_key(value, (key,))
                    loosened = True
            if self.corpora:
                value, _ = _without_corpora(value, self.corpora)
            if self.no_corpora and _no_corpora(value):
                value = _without_key(value, ("input", "corpora"))
            if loosened and any(_lacks(context.row.value, path) for path in _taken_out(self.typed, self.unlisted, [key for key, _, _ in self.alike])):
                # The checker that asks less does not require such a key: a row
                # without it is explained on its own, so its missing key is said.
                unsettled = True
            for cause in causes:
                rows.passes_over(self.code, cause, context.line)
            values.append(value)
            counted.append(frozenset(causes))
            relaxed.append(None if unsettled else loosened)
        return SetAsideGroup(self, values, counted, relaxed)


class SetAsideGroup(NamedTuple):
    """A group of rows with what SetAside set aside of each."""

    aside: SetAside
    values: list[dict[str, Any]]
    # The causes counted on each row.
    counted: list[frozenset[str]]
    # Whether a value of a wrong type was set aside from each: such a row is
    # valid when the rest is valid by the checker that does not require its key.
    # None: a value of a wrong type inside a list or a map stayed; the row is
    # explained on its own (its causes counted here are not said again).
    relaxed: list[bool | None]

    def all_valid(self) -> bool:
        aside = self.aside
        if None in self.relaxed:
            return False
        strict = [value for value, relaxed in zip(self.values, self.relaxed) if not relaxed]
        loose = [value for value, relaxed in zip(self.values, self.relaxed) if relaxed]
        return (not strict or aside.checker.all_valid(strict)) and (not loose or aside.relaxed.all_valid(loose))

    def is_valid(self, number: int) -> bool:
        aside = self.aside
        relaxed = self.relaxed[number]
        if relaxed is None:
            return False
        return (aside.relaxed if relaxed else aside.checker).is_valid(self.values[number])


THE_ROW = "the row"
# How many values of keys explained alike (see SetAside.alike) a batch keeps the causes of.
_EXPLAINED_KEPT = 1024
# The cause of an empty `input.corpora`, which a builtin target refuses (see rag004_schema).
NO_CORPORA = "no corpora"


def _object_at(value: Any, path: tuple[str, ...]) -> dict[str, Any] | None:
    for key in path:
        value = value.get(key) if type(value) is dict else None
    return value if type(value) is dict else None


def _of_another_type(value: Any, path: tuple[str, ...], allowed: frozenset[str]) -> int:
    """How many values ``value`` holds at ``path`` (keys of objects; EACH_ELEMENT
    and EACH_KEY: every element of a list, every value of an object) of none of
    the JSON types ``allowed``."""
    for index, key in enumerate(path):
        if key == EACH_ELEMENT or key == EACH_KEY:
            inner = value if key == EACH_ELEMENT and type(value) is list else value.values() if key == EACH_KEY and type(value) is dict else ()
            rest = path[index + 1 :]
            if not rest:  # the values themselves (every grade)
                return _outside(inner, allowed)
            return sum(_of_another_type(each, rest, allowed) for each in inner)
        if type(value) is not dict or key not in value:
            return 0
        value = value[key]
    return 0 if json_types(value) & allowed else 1


def _outside(values: Iterable[Any], allowed: frozenset[str]) -> int:
    """How many of ``values`` are of none of the JSON types ``allowed`` (as
    json_types says), told by their Python types in C: a grade on every
    expected path of every row is a few hundred thousand values."""
    kinds = list(map(type, values))
    fine = _fine_kinds(allowed)
    outside = len(kinds) - sum(map(fine.__contains__, kinds))
    if float not in fine and "integer" in allowed and (floats := kinds.count(float)):
        # An integral number is an integer, however it is written (2.0).
        outside -= sum(map(float.is_integer, values)) if floats == len(kinds) else sum(1 for each in values if type(each) is float and each.is_integer())
    return outside


@functools.lru_cache(maxsize=None)
def _fine_kinds(allowed: frozenset[str]) -> frozenset[type]:
    """The Python types whose every value is of one of the JSON types ``allowed``."""
    return frozenset(kind for kind, sample in _SAMPLES.items() if json_types(sample) & allowed)


# A value of each Python type JSON decodes to (a float that is not integral: an integral one is both).
_SAMPLES: dict[type, Any] = {str: "", bool: True, int: 0, float: 0.5, list: [], dict: {}, type(None): None}


def _taken_out(typed, unlisted, alike_keys: Iterable[str]) -> list[tuple[str, ...]]:
    """The paths of the keys whose values are taken out of a row (see
    SetAside.apply), which the checker that asks less does not require: not
    those presumed missing, nor values inside a list or a map."""
    return [path for path, _, _ in typed if not has_each(path)] + [path for path, _, _ in unlisted] + [(key,) for key in alike_keys]


def _lacks(value: dict[str, Any], path: tuple[str, ...]) -> bool:
    """Whether the object holding the key at ``path`` is there, without the key."""
    holder = _object_at(value, path[:-1]) if len(path) > 1 else value
    return holder is not None and path[-1] not in holder


def _unlisted_string(value: dict[str, Any], path: tuple[str, ...], listed: frozenset[str]) -> bool:
    """Whether ``value`` holds at ``path`` a string its `enum` does not list."""
    holder = _object_at(value, path[:-1]) if len(path) > 1 else value
    held = holder.get(path[-1]) if holder is not None else None
    return type(held) is str and held not in listed


def _no_corpora(value: dict[str, Any]) -> bool:
    """Whether a row's `input.corpora` is an empty list."""
    case_input = value.get("input")
    return type(case_input) is dict and case_input.get("corpora") == []


def _without_key(value: Any, path: tuple[str, ...]) -> Any:
    """``value`` without the key at ``path`` (copies of the objects on the way),
    or ``value`` itself when it has no such key."""
    if type(value) is not dict:
        return value
    head = path[0]
    if len(path) == 1:
        if head not in value:
            return value
        copy = dict(value)
        del copy[head]
        return copy
    inner = value.get(head)
    changed = _without_key(inner, path[1:])
    if changed is inner:
        return value
    copy = dict(value)
    copy[head] = changed
    return copy


def _without_corpora(value: dict[str, Any], corpora: frozenset[str]) -> tuple[dict[str, Any], list[str]]:
    """``value`` with the corpora of ``corpora`` out of its `input.corpora` (the
    key dropped when none is left: a list emptied here is not the empty list the
    builtin target refuses), and those taken out, once each."""
    taken = _corpora_among(value, corpora)
    if not taken:
        return value, []
    case_input = value["input"]
    listed = case_input["corpora"]
    kept = [corpus for corpus in listed if not (type(corpus) is str and corpus in corpora)]
    changed_input = dict(case_input)
    if kept:
        changed_input["corpora"] = kept
    else:
        del changed_input["corpora"]
    changed = dict(value)
    changed["input"] = changed_input
    return changed, taken


def _corpora_among(value: dict[str, Any], corpora: frozenset[str]) -> list[str]:
    """The corpora of ``corpora`` that a row's `input.corpora` names, once each."""
    case_input = value.get("input")
    listed = case_input.get("corpora") if type(case_input) is dict else None
    if type(listed) is not list:
        return []
    if len(listed) == 1:  # nearly every case that names corpora
        only = listed[0]
        return [only] if type(only) is str and only in corpora else []
    return list(dict.fromkeys(corpus for corpus in listed if type(corpus) is str and corpus in corpora))
