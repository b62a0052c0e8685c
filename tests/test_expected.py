"""One judgement of a case's expected values: what the checks report and the runner breaks."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from rag_lsp.core.expected import Expected, ExpectedVerdict, judge_expected, without_a_list

JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=4), lambda inner: st.lists(inner, max_size=3), max_leaves=6)
RELEVANT = st.lists(st.text(max_size=4), max_size=3) | JSON
EXPECT = st.fixed_dictionaries({}, optional={"relevant": RELEVANT, "other": JSON}) | JSON
CASES = st.lists(st.fixed_dictionaries({"id": st.text(max_size=3)}, optional={"expect": EXPECT}), max_size=8)


def test_each_kind_of_unusable_expected_values() -> None:
    """Missing expect or relevant, an empty list, a list that is no list, a value that is no string; a list of strings is fine."""
    assert judge_expected({"id": "a"}) == ExpectedVerdict(Expected.MISSING)
    assert judge_expected({"expect": []}) == ExpectedVerdict(Expected.MISSING)
    assert judge_expected({"expect": {"other": 1}}) == ExpectedVerdict(Expected.MISSING)
    assert judge_expected({"expect": {"relevant": []}}) == ExpectedVerdict(Expected.EMPTY)
    assert judge_expected({"expect": {"relevant": "a.md"}}) == ExpectedVerdict(Expected.NOT_A_LIST)
    assert judge_expected({"expect": {"relevant": ["a.md", 3]}}) == ExpectedVerdict(Expected.NOT_A_STRING, 1)
    assert judge_expected({"expect": {"relevant": ["a.md"]}}) is None


@given(CASES)
def test_the_cases_without_a_list_are_those_judge_expected_finds_so(cases: list[dict]) -> None:
    """without_a_list, which passes over the usual case inline, gives exactly the cases judge_expected judges missing, empty or not a list, with its verdict."""
    numbered = list(enumerate(cases))
    kinds = (Expected.MISSING, Expected.EMPTY, Expected.NOT_A_LIST)
    expected = [(number, judge_expected(case)) for number, case in numbered if (verdict := judge_expected(case)) is not None and verdict.kind in kinds]
    assert [(number, verdict) for number, _, verdict in without_a_list(numbered)] == expected
