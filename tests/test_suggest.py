"""What the index suggests for a case being written (rag_lsp.core.editing.suggest): the
case's input read from a line however unfinished, the values it lists already,
the edit that adds a path, and the suggestions from a builtin target's index."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag_lsp.core.editing.completion import INDEX_DETAIL, complete
from rag_lsp.core.editing.suggest import add_relevant, case_input, index_target, listed, suggestions, top_hit
from rag_lsp.core.running.targets import TargetPool
from rag_lsp.core.workspace.workspace import DATASET_FILE, Workspace
from tinymodel import write_model
from workspaces import write_files

QUERY = '{"id": "c", "input": {"query": "automobile", "topK": 3}, '


@pytest.mark.parametrize(
    "line",
    [
        QUERY + '"expect": {"relevant": ["docs/a.md", "',  # cut in the string being written
        QUERY + '"expect": {"relevant": ["docs/a.md", "do]}}',  # the closing quote not yet typed
        QUERY + '"expect": {"relevant": ["docs/a.md",',  # a dangling comma
        QUERY + '"expect": {"rel',  # a key being written
        QUERY + '"expect": {"relevant": ["docs/a.md" "x"]}}',  # a missing comma: only the input parses
    ],
)
def test_the_input_of_an_unfinished_case_is_read(line: str) -> None:
    """The case's input comes first on its line, so it is read whatever is unfinished after it."""
    assert case_input(line) == {"query": "automobile", "topK": 3}


def test_listed_values_leave_out_the_one_being_written() -> None:
    """The strings of `expect.relevant`, but the element at the cursor, on a valid line and on a cut one."""
    assert listed(QUERY + '"expect": {"relevant": ["docs/a.md", "docs/b.md"]}}', skip=1) == {"docs/a.md"}
    assert listed(QUERY + '"expect": {"relevant": ["docs/a.md", "doc', skip=1) == {"docs/a.md"}
    assert case_input('{"id": "c", "input": {"query": "  "}}') is None


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('{"expect": {"relevant": ["a.md"]}, "id": 1}', '{"expect": {"relevant": ["a.md", "docs/é \\"q\\".md"]}, "id": 1}'),
        ('{"expect": {"relevant": [ ]}}', '{"expect": {"relevant": ["docs/é \\"q\\".md"]}}'),
        ('{"expect":{"relevant":[]}}', '{"expect":{"relevant":["docs/é \\"q\\".md"]}}'),
    ],
)
def test_adding_a_path_changes_only_the_bytes_it_must(line: str, expected: str) -> None:
    """The path is appended after the last value, or put inside an empty list; the rest of the line is kept as written."""
    start, end, text = add_relevant(line, 'docs/é "q".md')
    assert line[:start] + text + line[end:] == expected
    assert json.loads(expected)["expect"]["relevant"][-1] == 'docs/é "q".md'


def test_no_edit_for_a_line_without_a_relevant_list() -> None:
    """A line that is not valid JSON, or has no `expect.relevant` list, gets no edit; with the key repeated, the
    list that counts (the last) gets the path."""
    assert add_relevant('{"expect": {"relevant": ["a.md"', "b.md") is None
    assert add_relevant('{"expect": {}}', "b.md") is None
    assert add_relevant('{"expect": {"relevant": "a.md"}}', "b.md") is None
    repeated = '{"expect": {"relevant": [], "relevant": ["a.md"]}}'
    start, end, text = add_relevant(repeated, "b.md")
    assert repeated[:start] + text + repeated[end:] == '{"expect": {"relevant": [], "relevant": ["a.md", "b.md"]}}'


def workspace_with_index(root: Path) -> tuple[Workspace, TargetPool]:
    files = {
        ".punica/evals/cars.suite.yaml": "suites:\n  - id: cars\n    target: {kind: capability, id: vectors.query}\n"
        "    dataset: .punica/evals/cars.jsonl\n    engines: [rag]\n    thresholds: {rag.recall: 0.5, rag.mode.semantic: 1}\n",
        ".punica/evals/cars.jsonl": "",
        ".punica/targets.yaml": "targets:\n  vectors.query:\n    builtin: {corpora: {docs: [docs/**]}, model: models/tiny}\n",
        "docs/cars.md": "A car has a wheel.\n",
        "docs/fruit.md": "A banana is a fruit.\n",
    }
    write_files(root, files)
    write_model(root / "models" / "tiny")
    workspace = Workspace(root)
    return workspace, TargetPool(workspace)


def test_suggestions_come_only_from_an_index_already_built(tmp_path: Path) -> None:
    """A target that holds no index suggests nothing and builds none; once prepared, its files come best first."""
    workspace, pool = workspace_with_index(tmp_path)
    info = index_target(workspace, ".punica/evals/cars.jsonl")
    assert info is not None and info.id == "vectors.query" and info.kind == "builtin"
    target = pool.get(info)
    line = QUERY + '"expect": {"relevant": [""]}}'

    def search(asked, value):
        answer = pool.get(asked).built_answer(value)
        return answer.hits if answer is not None else None

    assert suggestions(workspace, ".punica/evals/cars.jsonl", line, search, skip=0) == []
    assert target.load_cached() is False  # nothing cached for this workspace yet, and nothing built
    target.prepare()
    found = suggestions(workspace, ".punica/evals/cars.jsonl", line, search, skip=0)
    assert [s.path for s in found] == ["docs/cars.md", "docs/fruit.md"]
    assert found[0].chunk == "docs/cars.md#L1-1" and found[0].text == "A car has a wheel."
    assert "```\nA car has a wheel.\n```" in found[0].markdown()
    assert top_hit(workspace, ".punica/evals/cars.jsonl", QUERY + '"expect": {"relevant": ["docs/cars.md"]}}', search) is None

    text = line + "\n"
    result = complete(workspace, ".punica/evals/cars.jsonl", DATASET_FILE, text, 0, line.index('[""]') + 2, search)
    assert result is not None
    assert [item.label for item in result.items if item.detail == INDEX_DETAIL] == ["docs/cars.md", "docs/fruit.md"]

    fresh = TargetPool(Workspace(tmp_path)).get(info)  # another process: the cache holds the index
    assert fresh.load_cached() is True
    assert [hit.path for hit in fresh.built_answer({"query": "automobile"}).hits] == ["docs/cars.md", "docs/fruit.md"]
    pool.close()
