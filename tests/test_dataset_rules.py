"""A rule over the whole dataset plugs in through the rule registry alone.

A rule over the whole dataset is given its facts (the tally of expected paths). A rule that
groups rows (core.checking.datasetindex) declares what it keeps of a row and
its findings on rows that share a value; the one-shot analysis, a dataset model
through edits, and a helper process's screening all drive it with no code of
their own for it. The rules below (the same query asked twice, few expected paths) exist only here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


from rag_lsp.core.checking import rules as registry
from rag_lsp.core.checking.analyze import analyze_file
from rag_lsp.core.checking.datasetindex import RowGrouping
from rag_lsp.core.reading.findings import Related, Severity
from rag_lsp.core.checking.incremental import DatasetModel
from rag_lsp.core.checking.modelrows import ModelRow
from rag_lsp.core.checking.screening import is_answer, screen_batch
from rag_lsp.core.reading.sources import DiskSource, OverlaySource
from rag_lsp.core.workspace.suitefacts import DatasetUse
from rag_lsp.core.reading.text import Position, Range
from rag_lsp.core.workspace.workspace import Workspace

DATASET = ".punica/evals/cases.jsonl"
REPEATED_QUERY = registry.rule_of("Repeated query.", "RAG999", "repeated-query", Severity.WARNING)


class Queries(RowGrouping):
    def value_of(self, value, shape):
        query = value.get("input", {}).get("query") if type(value.get("input")) is dict else None
        return query if type(query) is str and query else None


REPEATED_QUERY.groups_rows(Queries())


@REPEATED_QUERY.check(registry.DATASET)
def repeated_query(context):
    for query, rows in context.repeated.items():
        first = rows[0]
        for row in rows[1:]:
            yield REPEATED_QUERY.finding(
                row.value_range("input", "query"),
                f"the query {query!r} is asked by an earlier case too",
                related=[Related(context.path, first.value_range("input", "query"), "first asked here")],
            )


@pytest.fixture
def with_the_rule(monkeypatch: pytest.MonkeyPatch):
    """The registry with RAG999 registered beside the project's rules, as a rule file would register it."""
    rules = {**registry.all_rules(), REPEATED_QUERY.code: REPEATED_QUERY}
    for cached in (registry.checks_for, registry.groupings, registry.whole_dataset_checks):
        cached.cache_clear()
    monkeypatch.setattr(registry, "all_rules", lambda: rules)
    monkeypatch.setattr(ModelRow, "kept_of", None)
    yield
    for cached in (registry.checks_for, registry.groupings, registry.whole_dataset_checks):
        cached.cache_clear()


def case(case_id: str, query: str) -> str:
    return json.dumps({"id": case_id, "input": {"query": query}, "expect": {"relevant": ["docs/a.md"]}})


def workspace_with(tmp_path: Path, text: str) -> tuple[Workspace, OverlaySource]:
    (tmp_path / ".punica" / "evals").mkdir(parents=True)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("a\n")
    (tmp_path / DATASET).write_text(text)
    source = OverlaySource(DiskSource(1 << 30))
    return Workspace(tmp_path, source=source), source


def fresh(workspace: Workspace, source: OverlaySource, text: str):
    source.texts[workspace.absolute(DATASET)] = text
    workspace.invalidate(DATASET)
    return analyze_file(workspace, DATASET)


def test_a_registered_grouping_is_checked_by_both_analyses(tmp_path: Path, with_the_rule: None) -> None:
    """The one-shot analysis and a dataset model find the repeated query, with RAG202's repeated id beside it."""
    text = "\n".join([case("a", "who approves"), case("b", "where is x"), case("c", "who approves"), case("a", "other")]) + "\n"
    workspace, source = workspace_with(tmp_path, text)
    found = fresh(workspace, source, text)
    assert [(finding.code, finding.range.start.line) for finding in found if finding.code in ("RAG999", "RAG202")] == [
        ("RAG999", 2),
        ("RAG202", 3),
    ]
    assert DatasetModel(workspace, DATASET, text).findings() == found


def test_a_registered_grouping_follows_edits(tmp_path: Path, with_the_rule: None) -> None:
    """An edit that makes a repeat, moves it, or takes it away gives a fresh check's findings."""
    text = "\n".join([case("a", "q1"), case("b", "q2"), case("c", "q3")]) + "\n"
    workspace, source = workspace_with(tmp_path, text)
    model = DatasetModel(workspace, DATASET, text)
    assert not any(finding.code == "RAG999" for finding in model.findings())
    model.edit(Position(2, 0), Position(2, 0), case("d", "q1") + "\n")  # a repeat of line 0's query
    assert [finding.range.start.line for finding in model.findings() if finding.code == "RAG999"] == [2]
    assert model.findings() == fresh(workspace, source, model.text)
    model.edit(Position(0, 0), Position(0, 0), "\n\n")  # lines above move it
    assert [finding.range.start.line for finding in model.findings() if finding.code == "RAG999"] == [4]
    assert model.findings() == fresh(workspace, source, model.text)
    model.edit(Position(2, 0), Position(3, 0), "")  # the first asking goes: no repeat is left
    assert not any(finding.code == "RAG999" for finding in model.findings())
    assert model.findings() == fresh(workspace, source, model.text)


queries = st.lists(st.sampled_from(["q1", "q2", "q3", ""]), min_size=1, max_size=8)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(first=queries, replacements=st.lists(st.tuples(st.integers(0, 20), st.sampled_from(["q1", "q2", "q4", ""])), max_size=6))
def test_any_edits_keep_a_registered_grouping_equal_to_a_fresh_check(tmp_path_factory, with_the_rule: None, first, replacements) -> None:
    """Replacing lines in any order keeps the model's findings those of a fresh check."""
    lines = [case(f"c{index}", query) for index, query in enumerate(first)]
    text = "\n".join(lines) + "\n"
    workspace, source = workspace_with(tmp_path_factory.mktemp("grouping"), text)
    model = DatasetModel(workspace, DATASET, text)
    assert model.findings() == fresh(workspace, source, text)
    for seed, query in replacements:
        line = seed % len(lines)
        model.edit(Position(line, 0), Position(line, len(model.line_text(line))), case(f"r{seed}", query))
        assert model.findings() == fresh(workspace, source, model.text)


def test_a_screening_sends_what_a_registered_grouping_keeps(tmp_path: Path, with_the_rule: None) -> None:
    """A helper's screening of plain lines sends, for each, what every registered grouping keeps of
    it: here a case id and a query; an answer keeping anything else is not believed."""
    lines = [case("a", "q1"), case("b", "q1")]
    workspace, _ = workspace_with(tmp_path, "\n".join(lines) + "\n")
    answer = screen_batch(workspace, DATASET, DatasetUse(), None, lines)
    assert answer[1] == [("a", "q1"), ("b", "q1")]
    assert is_answer(answer, 2, DATASET, 0)
    assert not is_answer((answer[0], [("a", 1), ("b", "q1")], *answer[2:]), 2, DATASET, 0)


FEW_PATHS = registry.rule_of("Few expected paths.", "RAG998", "few-expected-paths", Severity.INFORMATION)


@FEW_PATHS.check(registry.DATASET)
def few_expected_paths(context):
    tally = context.paths
    if tally is not None and 0 < tally.listed < 3:
        yield FEW_PATHS.finding(Range(Position(0, 0), Position(0, 0)), f"the dataset lists only {tally.listed} expected paths")


@pytest.fixture
def with_a_whole_dataset_rule(monkeypatch: pytest.MonkeyPatch):
    """The registry with RAG998, a check over the whole dataset that groups no rows, beside the project's rules."""
    rules = {**registry.all_rules(), FEW_PATHS.code: FEW_PATHS}
    for cached in (registry.checks_for, registry.groupings, registry.whole_dataset_checks):
        cached.cache_clear()
    monkeypatch.setattr(registry, "all_rules", lambda: rules)
    yield
    for cached in (registry.checks_for, registry.groupings, registry.whole_dataset_checks):
        cached.cache_clear()


def test_a_registered_whole_dataset_check_is_given_the_dataset_s_facts_by_both_analyses(tmp_path: Path, with_a_whole_dataset_rule: None) -> None:
    """A check over the whole dataset reads its tally of expected paths in the one-shot analysis and in a model, through edits."""
    text = case("a", "q1") + "\n"
    workspace, source = workspace_with(tmp_path, text)
    found = fresh(workspace, source, text)
    assert [finding.message for finding in found if finding.code == "RAG998"] == ["the dataset lists only 1 expected paths"]
    model = DatasetModel(workspace, DATASET, text)
    assert model.findings() == found
    model.edit(Position(1, 0), Position(1, 0), case("b", "q2") + "\n" + case("c", "q3") + "\n")  # three paths now
    assert not any(finding.code == "RAG998" for finding in model.findings())
    assert model.findings() == fresh(workspace, source, model.text)
    model.edit(Position(1, 0), Position(3, 0), "")  # one again
    assert [finding.message for finding in model.findings() if finding.code == "RAG998"] == ["the dataset lists only 1 expected paths"]
    assert model.findings() == fresh(workspace, source, model.text)
