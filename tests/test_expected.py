"""One judgement of a case's expected values: what the checks report and the runner breaks."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rag_lsp.core.checking.expectedpaths import case_path_tallies, path_tally
from rag_lsp.core.workspace.expected import Expected, ExpectedVerdict, judge_expected, split_by_list
from rag_lsp.core.workspace.workspace import Workspace

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
def test_the_cases_split_by_their_list_are_those_judge_expected_finds_so(cases: list[dict]) -> None:
    """split_by_list, which passes over the usual case inline, gives the cases whose expect.relevant is a
    list with it, and exactly the cases judge_expected judges missing, empty or not a list, with its verdict."""
    numbered = list(enumerate(cases))
    kinds = (Expected.MISSING, Expected.EMPTY, Expected.NOT_A_LIST)
    expected = [(number, judge_expected(case)) for number, case in numbered if (verdict := judge_expected(case)) is not None and verdict.kind in kinds]
    lists, without = split_by_list(numbered)
    assert [(number, verdict) for number, _, verdict in without] == expected
    holding = [(number, case["expect"]["relevant"]) for number, case in numbered if type(case.get("expect")) is dict and type(case["expect"].get("relevant")) is list]
    assert lists == holding


# Expected values as datasets write them: workspace files as written and in other
# forms (./, a backslash, a trailing "/", "..", a drive), missing paths, other JSON.
_TALLY_FILES = ("src/a.py", "docs/b.md", "docs/.hidden/c.md")
_TALLY_VALUES = st.sampled_from(
    [*_TALLY_FILES, "./src/a.py", "src\\a.py", "docs/b.md/", "docs//b.md", "src/../docs/b.md", "C:/src/a.py", "kb/1.html", "kb/", "../out.md", "", "."]
) | JSON
_TALLY_CASES = st.lists(
    st.fixed_dictionaries({"id": st.text(max_size=2)}, optional={"expect": st.fixed_dictionaries({}, optional={"relevant": st.lists(_TALLY_VALUES, max_size=4) | JSON})}),
    max_size=10,
)


@pytest.fixture(scope="module")
def tally_root(tmp_path_factory) -> Path:
    """A workspace holding _TALLY_FILES."""
    root = tmp_path_factory.mktemp("tally")
    for name in _TALLY_FILES:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x\n")
    return root


@given(_TALLY_CASES)
def test_the_path_tallies_of_a_batch_are_each_case_counted_alone(tally_root: Path, cases: list[dict]) -> None:
    """case_path_tallies, which counts a batch's cases together, gives each case path_tally's count: its expected strings, and those that are no workspace file as written nor in normal form."""
    workspace = Workspace(tally_root)
    files = workspace.normal_file_set()
    alone = []
    for case in cases:
        relevant = case.get("expect", {}).get("relevant") if type(case.get("expect")) is dict else None
        alone.append(path_tally(workspace, files, relevant) if type(relevant) is list and relevant else (0, 0))
    assert case_path_tallies(workspace, cases) == alone
