"""What a rag case declares it expects, judged once for the checks and the runner.

``rag-lsp check`` reports a case whose ``expect.relevant`` is missing (RAG201),
empty (RAG200) or not a list of strings (RAG004); ``rag-lsp run`` breaks the same
case with the same code. Both ask :func:`judge_expected`, so the two cannot
disagree on which case is which; each says it in its own words.

A :class:`Flaw` is why a line cannot be run, with the code of the check that
reports it on that line: the runner keeps the two apart and joins them only when
it writes the reason for people (``… (RAG200)``).

Pure: no I/O.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Iterable, TypeVar

#: Why an expected value was missed (the scorer's ``Miss.reason``); the checks
#: say ahead when a value will be missed for the last two.
BELOW_K = "below-k"
NOT_RETURNED = "not-returned"
NOT_IN_WORKSPACE = "not-in-workspace"
NEVER_SEARCHED = "never-searched"

# The codes of the checks that judge a case's expected values and ids.
NOTHING_RELEVANT = "RAG200"
NO_RELEVANT = "RAG201"
DUPLICATE_ID = "RAG202"
SCHEMA = "RAG004"


@dataclass(frozen=True, slots=True)
class Flaw:
    """Why a line cannot be run, and the code the checks report it with (None
    when no check does)."""

    reason: str
    code: str | None = None

    def __str__(self) -> str:
        return joined(self.reason, self.code)


def joined(reason: str, code: str | None) -> str:
    """A reason as people read it: ``reason (CODE)``, or the bare reason without a code."""
    return f"{reason} ({code})" if code is not None else reason


class Expected(enum.Enum):
    """What is wrong with a case's ``expect.relevant``."""

    # No `expect`, an `expect` that is no object, or one without `relevant` (RAG201).
    MISSING = "missing"
    # `relevant` is an empty list: there is nothing to count (RAG200).
    EMPTY = "empty"
    # `relevant` is given, but is not a list (RAG004, the schema's).
    NOT_A_LIST = "not-a-list"
    # `relevant` is a list holding something that is not a string (RAG004).
    NOT_A_STRING = "not-a-string"

    @property
    def code(self) -> str:
        """The code of the check that reports it."""
        return _CODES[self]


_CODES = {
    Expected.MISSING: NO_RELEVANT,
    Expected.EMPTY: NOTHING_RELEVANT,
    Expected.NOT_A_LIST: SCHEMA,
    Expected.NOT_A_STRING: SCHEMA,
}


@dataclass(frozen=True, slots=True)
class ExpectedVerdict:
    """A case's expected values are unusable: how, and at which index of the list
    (for :attr:`Expected.NOT_A_STRING`)."""

    kind: Expected
    index: int | None = None

    @property
    def code(self) -> str:
        return self.kind.code


def judge_expected(case: dict[str, Any]) -> ExpectedVerdict | None:
    """What is wrong with the ``expect.relevant`` of a rag case (a decoded JSON
    object), or None when it is a non-empty list of strings."""
    expect = case.get("expect")
    if type(expect) is not dict or "relevant" not in expect:
        return _MISSING
    relevant = expect["relevant"]
    if type(relevant) is not list:
        return _NOT_A_LIST
    if not relevant:
        return _EMPTY
    for index, item in enumerate(relevant):
        if type(item) is not str:
            return ExpectedVerdict(Expected.NOT_A_STRING, index)
    return None


Context = TypeVar("Context")

def split_by_list(
    cases: Iterable[tuple[Context, dict[str, Any]]],
) -> tuple[list[tuple[Context, list[Any]]], list[tuple[Context, dict[str, Any], ExpectedVerdict]]]:
    """The cases whose ``expect.relevant`` is a list (empty or not), with it;
    and those whose is not a non-empty list, each with :func:`judge_expected`'s
    verdict (MISSING, EMPTY or NOT_A_LIST). A large dataset has a hundred
    thousand cases, nearly all with a non-empty list: those are passed over in
    this one loop, without a call each."""
    lists = []
    without = []
    for context, case in cases:
        expect = case.get("expect")
        if type(expect) is dict:
            relevant = expect.get("relevant")
            if type(relevant) is list:
                lists.append((context, relevant))
                if relevant:
                    continue
        verdict = judge_expected(case)
        assert verdict is not None and verdict.kind is not Expected.NOT_A_STRING
        without.append((context, case, verdict))
    return lists, without


_MISSING = ExpectedVerdict(Expected.MISSING)
_EMPTY = ExpectedVerdict(Expected.EMPTY)
_NOT_A_LIST = ExpectedVerdict(Expected.NOT_A_LIST)
