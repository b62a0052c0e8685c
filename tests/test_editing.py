"""The editing features' pure functions: where a cursor is, what completes there,
what hover says, which paths are links, what the outline holds.

Positions are code points; ``|`` in a text marks the cursor.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from workspaces import make_workspace

from rag_lsp.core.editing.completion import complete, fuzzy_paths
from rag_lsp.core.editing.cursor import ITEM, KEY, VALUE, json_cursor, yaml_cursor
from rag_lsp.core.editing.hover import hover
from rag_lsp.core.editing.navigation import MAX_CASE_SYMBOLS, definition, links, symbols
from rag_lsp.core.workspace.workspace import DATASET_FILE, SUITE_FILE, Workspace


def cursor_at(marked: str) -> tuple[str, int, int]:
    """The text without its ``|``, and the line and column of the ``|``."""
    offset = marked.index("|")
    text = marked.replace("|", "", 1)
    return text, text.count("\n", 0, offset), offset - (text.rfind("\n", 0, offset) + 1)


@pytest.mark.parametrize(
    ("marked", "path", "role", "token"),
    [
        ("suites:\n  - id: a\n    thresholds:\n      rag.re|\n", ("suites", ITEM, "thresholds"), KEY, "rag.re"),
        ("suites:\n- id: a\n  dataset: x\n  eng|\n", ("suites", ITEM), KEY, "eng"),
        ("suites:\n  - id: a\n    engines:\n      - ra|\n", ("suites", ITEM, "engines", ITEM), KEY, "ra"),
        ("suites:\n  - id: a\n    options:\n      rag:\n        match: pa|\n", ("suites", ITEM, "options", "rag", "match"), VALUE, "pa"),
        ("suites:\n  - id: a\n    options: {rag: {match: pa|th, k: 5}}\n", ("suites", ITEM, "options", "rag", "match"), VALUE, "path"),
        ("suites:\n  - id: a\n    engines: [rag, r|]\n", ("suites", ITEM, "engines", ITEM), VALUE, "r"),
        ("suites:\n  - id: a\n    target: {ki|}\n", ("suites", ITEM, "target"), KEY, "ki"),
        ('suites:\n  - id: a\n    dataset: ".punica/ev|als/x.jsonl"  # here\n', ("suites", ITEM, "dataset"), VALUE, ".punica/evals/x.jsonl"),
    ],
)
def test_yaml_cursor_reads_the_path_from_indentation_even_when_the_text_does_not_parse(
    marked: str, path: tuple, role: str, token: str
) -> None:
    """The cursor's path, role and token come from the lines, block or flow, half-written or not."""
    cursor = yaml_cursor(*cursor_at(marked))
    assert cursor is not None
    assert (cursor.path, cursor.role, cursor.text) == (path, role, token)


def test_yaml_cursor_knows_the_other_keys_of_its_mapping() -> None:
    """Keys above and below the cursor in the same mapping are its siblings (not offered again)."""
    cursor = yaml_cursor(*cursor_at("suites:\n  - id: a\n    dataset: x\n    |\n    engines: [rag]\n  - id: b\n"))
    assert cursor is not None and cursor.siblings == {"id", "dataset", "engines"}


@pytest.mark.parametrize(
    ("marked", "path", "role", "in_string", "closed"),
    [
        ('{"id": "a", "expect": {"relevant": ["src/ap|p.py"]}}', ("expect", "relevant", 0), VALUE, True, True),
        ('{"id": "a", "expect": {"relevant": ["x", "src/ap|', ("expect", "relevant", 1), VALUE, True, False),
        ('{"id": "a", "expect": {"relevant": [|]}}', ("expect", "relevant", 0), VALUE, False, False),
        ('{"id": "a", "inp|', (), KEY, True, False),
    ],
)
def test_json_cursor_reads_incomplete_lines(marked: str, path: tuple, role: str, in_string: bool, closed: bool) -> None:
    """A dataset line's cursor knows its path, whether it is inside a string and whether that string is closed."""
    text, _, column = cursor_at(marked)
    cursor = json_cursor(text, column)
    assert cursor is not None
    assert (cursor.path, cursor.role, cursor.in_string, cursor.closed) == (path, role, in_string, closed)


def test_fuzzy_paths_find_a_misspelled_file_among_fifty_thousand() -> None:
    """Substring matches come first, then near misses, so a typo still finds the file in a large workspace."""
    paths = [f"src/m{index % 50}/p{index % 500}/f{index}.py" for index in range(50_000)] + ["docs/approvals.md"]
    assert fuzzy_paths("aprovals", paths)[0] == "docs/approvals.md"
    assert fuzzy_paths("f4999", paths)[0] == "src/m49/p499/f4999.py"
    assert len(fuzzy_paths("", paths)) == 50


def test_dataset_completion_escapes_and_closes_json_strings(tmp_path: Path) -> None:
    """A path completed in an unterminated string gets its closing quote; a path with a quote is escaped."""
    make_workspace(tmp_path)
    (tmp_path / 'say "hi".md').write_text("hi\n", encoding="utf-8")
    workspace = Workspace(tmp_path)
    text, line, column = cursor_at('{"id": "a", "input": {"query": "q"}, "expect": {"relevant": ["say|')
    result = complete(workspace, ".punica/evals/code.jsonl", DATASET_FILE, text, line, column)
    assert result is not None and result.items[0].insert == 'say \\"hi\\".md"'
    assert (result.items[0].start, result.items[0].end) == (text.index("say"), column)


@pytest.mark.parametrize(
    "written, absent",
    [
        ("suites:\n  - id: code\n    engines: [rag]\n    thresholds: {rag.mode.semantic: 1, rag.|}\n", {"rag.mode.semantic"}),
        ("suites:\n  - id: code\n    engines: [rag]\n    options: {rag: {match: path, |}}\n", {"match"}),
        ("suites:\n  - id: code\n    engines: [rag]\n    options: {rag: {|, match: path}}\n", {"match"}),
    ],
)
def test_completion_leaves_out_the_keys_a_flow_mapping_has(tmp_path: Path, written: str, absent: set[str]) -> None:
    """In a flow mapping, as in block style, completion offers no key the mapping already has (it would be RAG003)."""
    make_workspace(tmp_path)
    text, line, column = cursor_at(written)
    result = complete(Workspace(tmp_path), ".punica/evals/code.suite.yaml", SUITE_FILE, text, line, column)
    assert result is not None and result.items
    assert not absent & {item.label for item in result.items}


def test_threshold_completion_offers_the_metrics_the_suite_computes(tmp_path: Path) -> None:
    """Under `thresholds` of a suite whose engine is rag, completion offers rag's metrics, not rag.hit_at_k,
    which such a suite does not compute (RAG101)."""
    make_workspace(tmp_path)
    text, line, column = cursor_at("suites:\n  - id: code\n    engines: [rag]\n    thresholds:\n      |\n")
    result = complete(Workspace(tmp_path), ".punica/evals/code.suite.yaml", SUITE_FILE, text, line, column)
    labels = {item.label for item in result.items} if result is not None else set()
    assert {"rag.recall", "rag.mode.semantic"} <= labels and "rag.hit_at_k" not in labels


def test_dataset_key_completion_leaves_out_the_keys_the_row_has(tmp_path: Path) -> None:
    """A row's key completion offers only the keys it does not have yet."""
    make_workspace(tmp_path)
    text, line, column = cursor_at('{"id": "a", "input": {"query": "q"}, "|')
    result = complete(Workspace(tmp_path), ".punica/evals/code.jsonl", DATASET_FILE, text, line, column)
    assert result is not None and [item.label for item in result.items] == ["expect", "metadata"]


def test_corpus_completion_offers_what_every_target_of_the_dataset_serves(tmp_path: Path) -> None:
    """Inside input.corpora, completion offers the corpora each target of the dataset's suites serves (those the check accepts), and hover says which one is not."""
    suite = (
        "suites:\n"
        "  - {id: a, target: {kind: capability, id: vectors.query}, dataset: .punica/evals/code.jsonl, engines: [rag]}\n"
        "  - {id: b, target: {kind: capability, id: tickets.search}, dataset: .punica/evals/code.jsonl, engines: [rag]}\n"
    )
    make_workspace(tmp_path, suite=suite)
    (tmp_path / ".punica" / "targets.yaml").write_text(
        "targets:\n  vectors.query:\n    builtin: {corpora: {code: ['src/**'], docs: ['docs/**']}}\n"
        "  tickets.search:\n    command: [python, search.py]\n    corpora: [tickets, code]\n",
        encoding="utf-8",
    )
    workspace = Workspace(tmp_path)
    text, line, column = cursor_at('{"id": "a", "input": {"query": "q", "corpora": ["|"]}, "expect": {"relevant": ["src/app.py"]}}')
    result = complete(workspace, ".punica/evals/code.jsonl", DATASET_FILE, text, line, column)
    assert result is not None and [item.label for item in result.items] == ["code"]
    text = '{"id": "a", "input": {"query": "q", "corpora": ["docs"]}, "expect": {"relevant": ["src/app.py"]}}'
    said = hover(workspace, ".punica/evals/code.jsonl", DATASET_FILE, text, 0, text.index("docs") + 1)
    assert said is not None and "not among the corpora its targets declare: code" in said.markdown


def test_links_name_only_files_inside_the_workspace(tmp_path: Path) -> None:
    """Expected paths that are missing or leave the workspace are not links; existing ones are, inside their quotes."""
    make_workspace(tmp_path)
    (tmp_path.parent / "secret.md").write_text("x\n", encoding="utf-8")
    line = '{"id": "a", "input": {"query": "q"}, "expect": {"relevant": ["src/app.py", "../secret.md", "nope.md"]}}'
    found = links(Workspace(tmp_path), DATASET_FILE, line + "\n")
    assert [(str(link.range), link.target) for link in found] == [
        (f"0:{line.index('src/app.py')}-0:{line.index('src/app.py') + 10}", "src/app.py")
    ]


def test_definition_of_a_workspace_metric_is_its_manifest(tmp_path: Path) -> None:
    """Go-to-definition on a metric that a workspace manifest declares opens that manifest."""
    suite = "suites:\n  - id: code\n    dataset: .punica/evals/code.jsonl\n    metrics:\n      answer.len: {}\n"
    make_workspace(tmp_path, suite=suite)
    manifest = tmp_path / ".punica" / "metrics" / "answer.yaml"
    manifest.parent.mkdir()
    manifest.write_text(
        "manifest_version: '1'\nkind: metric\nname: answer.len\nversion: 1.0.0\ndirection: higher_is_better\n"
        "accepts: [{name: gdi_text_v1}]\nconfig_schema: {type: object}\n",
        encoding="utf-8",
    )
    text, line, column = cursor_at(suite.replace("answer.len:", "answer.l|en:"))
    found = definition(Workspace(tmp_path), SUITE_FILE, text, line, column)
    assert found is not None and found.target == ".punica/metrics/answer.yaml" and str(found.range) == "4:6-4:16"


def test_hover_on_an_unknown_metric_says_so(tmp_path: Path) -> None:
    """Hovering a threshold on a metric no manifest declares says it is not a metric, rather than nothing."""
    make_workspace(tmp_path)
    text, line, column = cursor_at("suites:\n  - id: code\n    thresholds:\n      rag.reca|ll: 0.8\n")
    found = hover(Workspace(tmp_path), ".punica/evals/code.suite.yaml", SUITE_FILE, text, line, column)
    assert found is not None and "Recall" in found.markdown
    text, line, column = cursor_at("suites:\n  - id: code\n    thresholds:\n      rag.reca|lll: 0.8\n")
    found = hover(Workspace(tmp_path), ".punica/evals/code.suite.yaml", SUITE_FILE, text, line, column)
    assert found is not None and found.markdown == "`rag.recalll` is not a metric any manifest declares."


@pytest.mark.parametrize(
    "written", ["    thresholds:\n      |rag.recall: 0.8", "    thresholds: {|rag.recall: 0.8}", "    options: {rag: {|k: 5}}"]
)
def test_hover_on_the_first_character_of_a_key_documents_it(tmp_path: Path, written: str) -> None:
    """A position at a key's first character is on that key: its hover documents it, in block and flow style."""
    make_workspace(tmp_path)
    text, line, column = cursor_at(f"suites:\n  - id: code\n    engines: [rag]\n{written}\n")
    found = hover(Workspace(tmp_path), ".punica/evals/code.suite.yaml", SUITE_FILE, text, line, column)
    assert found is not None and found.range.start.character == column
    assert ("Recall" if "rag.recall" in written else "**K**") in found.markdown


def test_dataset_outline_stops_at_its_limit() -> None:
    """A dataset's outline lists its first MAX_CASE_SYMBOLS cases by id and says it was cut."""
    text = "".join(f'{{"id": "c{index}", "input": {{"query": "q"}}, "expect": {{"relevant": ["a"]}}}}\n' for index in range(MAX_CASE_SYMBOLS + 1))
    found, cut = symbols(DATASET_FILE, text)
    assert cut and len(found) == MAX_CASE_SYMBOLS and found[0].name == "c0" and str(found[0].selection) == "0:7-0:11"
