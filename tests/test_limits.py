"""Size and safety limits: input past them is refused with RAG005, quickly, where it happened."""

from __future__ import annotations

from pathlib import Path

from rag_lsp.core.checking.analyze import analyze_workspace
from rag_lsp.core.running.datasets import Unreadable, read_dataset
from rag_lsp.core.workspace.settings import Settings
from rag_lsp.core.reading.text import Range
from rag_lsp.core.editing.completion import complete
from rag_lsp.core.editing.hover import hover
from rag_lsp.core.editing.navigation import links
from rag_lsp.core.workspace.workspace import DATASET_FILE, Workspace
from workspaces import GOOD_CASE, make_workspace

FIXTURES = Path(__file__).parent / "fixtures" / "rules" / "RAG005"

SHORT_ROW = GOOD_CASE


def _workspace(root: Path, dataset: str, settings: Settings) -> Workspace:
    return Workspace(make_workspace(root, dataset=dataset), settings)


def _codes(findings: dict, path: str) -> list[tuple[str, str]]:
    return [(finding.code, str(finding.range)) for finding in findings[path]]


def test_alias_bomb_is_refused_on_the_alias() -> None:
    """The billion laughs (nine levels of nine aliases) yields one RAG005 on an alias, not an expansion."""
    findings = analyze_workspace(Workspace(FIXTURES / "alias-bomb"))
    (finding,) = findings[".punica/evals/code.suite.yaml"]
    assert finding.code == "RAG005"
    assert "alias bomb" in finding.message
    assert finding.range == Range.of(6, 20, 6, 25)  # a `*lol5` on the line of `lol6`


def test_alias_bomb_stops_at_the_node_budget() -> None:
    """A lower node budget refuses the bomb earlier, on an earlier line."""
    findings = analyze_workspace(Workspace(FIXTURES / "alias-bomb", Settings(max_yaml_nodes=100)))
    (finding,) = findings[".punica/evals/code.suite.yaml"]
    assert finding.code == "RAG005" and "more than 100 nodes" in finding.message
    assert finding.range.start.line < 6


def test_deep_nesting_is_refused_at_the_first_level_too_deep() -> None:
    """Nesting past maxYamlDepth is refused on the one bracket that goes too deep."""
    findings = analyze_workspace(Workspace(FIXTURES / "deep-nesting", Settings(max_yaml_depth=10)))
    assert _codes(findings, ".punica/evals/deep.suite.yaml") == [("RAG005", "4:26-4:27")]


def test_long_dataset_line_is_refused_on_that_line(tmp_path: Path) -> None:
    """A dataset line above maxLineBytes gets RAG005 over the line (its first 200 characters) and is not read."""
    long_row = '{"id": "long", "input": {"query": "' + "x" * 300 + '"}, "expect": {"relevant": ["src/app.py"]}}'
    workspace = _workspace(tmp_path, f"{SHORT_ROW}\n{long_row}\n", Settings(max_line_bytes=100))
    findings = analyze_workspace(workspace)
    assert _codes(findings, ".punica/evals/code.jsonl") == [("RAG005", "1:0-1:200")]
    (finding,) = findings[".punica/evals/code.jsonl"]
    assert f"line is {len(long_row):,} bytes, above the max-line-bytes limit of 100" in finding.message
    assert findings[".punica/evals/code.suite.yaml"] == []


def test_line_at_the_limit_is_read(tmp_path: Path) -> None:
    """A dataset line exactly maxLineBytes long is read and checked as usual."""
    workspace = _workspace(tmp_path, SHORT_ROW + "\n", Settings(max_line_bytes=len(SHORT_ROW)))
    assert analyze_workspace(workspace)[".punica/evals/code.jsonl"] == []


def test_the_line_and_yaml_limits_count_bytes_not_characters(tmp_path: Path) -> None:
    """A line of 150 CJK characters is 450 bytes: above a max-line-bytes of 300, as a suite file of 479 bytes is above a max-yaml-bytes of 300; `check` and `run` read the line alike."""
    long_row = '{"id": "cjk", "input": {"query": "' + "中" * 150 + '"}, "expect": {"relevant": ["src/app.py"]}}'
    workspace = _workspace(tmp_path, f"{SHORT_ROW}\n{long_row}\n", Settings(max_line_bytes=300))
    assert len(long_row) < 300 < len(long_row.encode())
    findings = analyze_workspace(workspace)
    (finding,) = findings[".punica/evals/code.jsonl"]
    assert finding.code == "RAG005" and f"line is {len(long_row.encode()):,} bytes" in finding.message
    read = read_dataset(workspace, ".punica/evals/code.jsonl")
    assert [isinstance(row, Unreadable) for _, row in read.rows] == [False, True]

    suite = tmp_path / ".punica" / "evals" / "code.suite.yaml"
    text = "# " + "中" * 100 + "\n" + suite.read_text(encoding="utf-8")
    suite.write_text(text, encoding="utf-8")
    assert len(text) < 400 < len(text.encode())
    findings = analyze_workspace(Workspace(tmp_path, Settings(max_yaml_bytes=400)))
    assert [(finding.code, f"YAML file is {len(text.encode()):,} bytes, above the max-yaml-bytes limit of 400" in finding.message) for finding in findings[".punica/evals/code.suite.yaml"]] == [("RAG005", True)]


def test_the_editing_features_leave_a_refused_line_alone(tmp_path: Path) -> None:
    """On a dataset line above max-line-bytes, hover, completion and links find nothing (the checks refuse it, RAG005); within the limit the same line has all three."""
    long_row = '{"id": "long", "input": {"query": "' + "x" * 300 + '"}, "expect": {"relevant": ["src/app.py"]}}'
    at = long_row.index("src/app.py") + 2
    text = long_row + "\n"
    root = make_workspace(tmp_path, dataset=text)
    for limit, answered in ((100, False), (1000, True)):
        workspace = Workspace(root, Settings(max_line_bytes=limit))
        relative = ".punica/evals/code.jsonl"
        assert (hover(workspace, relative, DATASET_FILE, text, 0, at) is not None) is answered
        assert (complete(workspace, relative, DATASET_FILE, text, 0, at) is not None) is answered
        assert bool(links(workspace, DATASET_FILE, text)) is answered


def test_file_above_max_file_bytes_is_refused_whole(tmp_path: Path) -> None:
    """A dataset above maxFileBytes gets one RAG005 at its start and none of its rows are read."""
    rows = "\n".join(SHORT_ROW.replace('"app"', f'"app-{n}"', 1) for n in range(40)) + "\n"
    workspace = _workspace(tmp_path, rows, Settings(max_file_bytes=1000))
    findings = analyze_workspace(workspace)
    (finding,) = findings[".punica/evals/code.jsonl"]
    assert (finding.code, str(finding.range)) == ("RAG005", "0:0-0:0")
    assert f"file is {len(rows.encode()):,} bytes, above the max-file-bytes limit of 1,000" in finding.message
    assert findings[".punica/evals/code.suite.yaml"] == []
