"""The server's checker on its own: diagnostics after edits equal those of a fresh
checker of the same text, whether they were converted anew or shifted with their
lines from an earlier pass."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pygls.protocol import default_converter
from workspaces import GOOD_CASE, GOOD_SUITE, make_workspace

from rag_lsp.core.workspace.settings import EditorSettings
from rag_lsp.core.reading.text import Position
from rag_lsp.core.workspace.workspace import Workspace
from rag_lsp.server.checking.checker import Checker
from rag_lsp.server.checking.snapshot import OpenDocument, Snapshot
from rag_lsp.core.checking.analysis import Analysis
from rag_lsp.server.base.transport import LARGE_MESSAGE_BYTES

# Findings with fixes on their own line (RAG206, RAG205), with UTF-16 columns that
# differ from code points (the emoji), a repeated id (RAG202, related places), and
# a message only the standard JSON encoder writes.
ROWS = [
    '{"id": "a😀", "input": {"query": "x"}, "expect": {"relevant": ["./src/app.py"]}}',
    '{"id": "b", "input": {"query": "y"}, "expect": {"relevant": []}}',
    '{"id": "c", "input": {"query": "é😀"}, "expect": {"relevant": ["src/app.py", "src/app.py"]}}',
    '{"id": "b", "input": {"query": "z"}, "expect": {"relevant": ["missing.md"]}}',
    # A lone surrogate in a message: its JSON is written by the standard encoder, spaced.
    '{"id": "e", "input": {"query": "q"}, "expect": {"relevant": ["lone-\\ud800.md"]}}',
]


def published(checker: Checker, root: Path, path: Path, version: int, text: str | None, changes=()) -> list[dict]:
    snapshot = Snapshot(version, {path: OpenDocument(path.as_uri(), version, text, tuple(changes))}, (root,), EditorSettings(), "utf-16")
    file = checker.run(snapshot).files[path]
    kept = [json.loads(json.dumps(default_converter().unstructure(d))) for d in file.diagnostics]
    # The client is sent each diagnostic the server keeps, without its fixes.
    assert [json.loads(item) for item in file.json] == [{key: value for key, value in d.items() if key != "data"} for d in kept]
    return kept


def test_diagnostics_moved_by_inserted_and_removed_lines_equal_a_fresh_check(tmp_path: Path) -> None:
    """After lines are inserted and removed above, between and below findings (moved again after
    they moved, and one edited after it moved), the published diagnostics and their JSON equal a
    fresh checker's of the same text."""
    root = make_workspace(tmp_path, suite=GOOD_SUITE, dataset="\n".join(ROWS) + "\n")
    path = root / ".punica/evals/code.jsonl"
    text = "\n".join(ROWS) + "\n"
    checker = Checker()
    published(checker, root, path, 1, text)
    edits = [
        (Position(0, 0), Position(0, 0), ROWS[1].replace('"b"', '"d"') + "\n"),  # a line above all of them
        (Position(0, 0), Position(0, 0), "\n\n"),  # two blank lines
        (Position(1, 0), Position(3, 0), ""),  # both removed again
        (Position(2, 0), Position(2, 0), "\n"),  # between findings
        (Position(0, 0), Position(0, 0), "\n"),  # above them again: moved a second time
        (Position(4, 1), Position(4, 1), " "),  # a moved line edited
        (Position(0, 0), Position(1, 0), ""),  # moved back up
    ]
    for version, (start, end, new_text) in enumerate(edits, start=2):
        lines = text.split("\n")
        offsets = [sum(len(line) + 1 for line in lines[:n]) for n in range(len(lines))]
        text = text[: offsets[start.line] + start.character] + new_text + text[offsets[end.line] + end.character :]
        moved = published(checker, root, path, version, None, [(start, end, new_text)])
        fresh = published(Checker(), root, path, version, text)
        assert moved == fresh
        assert {item["code"] for item in moved} >= {"RAG202", "RAG205", "RAG206", "RAG203", "RAG200"}


def test_workspaces_read_before_the_first_pass_serve_it(tmp_path: Path) -> None:
    """A workspace prepared with the first pass's settings is the one that pass checks with (and it
    checks as a fresh checker does); prepared with other settings, it is read afresh."""
    root = make_workspace(tmp_path, suite=GOOD_SUITE, dataset="\n".join(ROWS) + "\n")
    path = root / ".punica/evals/code.jsonl"
    text = "\n".join(ROWS) + "\n"
    checker = Checker()
    checker.prepare((root,), EditorSettings())
    prepared = checker.workspaces[root]
    assert published(checker, root, path, 1, text) == published(Checker(), root, path, 1, text)
    assert checker.workspaces[root] is prepared
    checker.prepare((root,), EditorSettings({"max_line_bytes": 10}))  # after a pass: nothing to do
    assert checker.workspaces[root] is prepared

    other = Checker()
    other.prepare((root,), EditorSettings({"max_line_bytes": 10}))
    stale = other.workspaces[root]
    assert published(other, root, path, 1, text) == published(Checker(), root, path, 1, text)
    assert other.workspaces[root] is not stale


class _StartRecorder:
    """A helper that notes when it is asked to start and to stop."""

    def __init__(self) -> None:
        self.starts = 0
        self.stops = 0

    def start_soon(self) -> None:
        self.starts += 1

    def stop(self, wait: bool = True) -> None:
        self.stops += 1

    def close(self) -> None:
        pass


@pytest.mark.parametrize(
    "lines, starts, stops", [(10, 0, 1), (LARGE_MESSAGE_BYTES // len(GOOD_CASE) + 1, 1, 0)], ids=["small", "large"]
)
def test_preparing_a_workspace_with_a_large_dataset_starts_the_helper(tmp_path: Path, lines: int, starts: int, stops: int) -> None:
    """A workspace holding a dataset as large as a message that starts the helper gets the helper
    started while it is prepared (the scan reads that dataset with it); with small datasets only, the
    helper (started ahead, with the server) is stopped."""
    root = make_workspace(tmp_path, suite=GOOD_SUITE, dataset=(GOOD_CASE + "\n") * lines)
    recorder = _StartRecorder()
    checker = Checker(Analysis(recorder))  # type: ignore[arg-type]
    checker.prepare((root,), EditorSettings())
    assert (recorder.starts, recorder.stops) == (starts, stops)


def test_a_large_document_arriving_keeps_the_helper_and_leaves_the_path_index_to_its_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While a large document is announced, preparing a workspace keeps the helper (the document is most
    likely a dataset it shares) and leaves the index of workspace paths to the reading that first needs
    it; with none coming, the index is built ahead."""
    indexed: list[Path] = []
    index_of = Workspace.path_index
    monkeypatch.setattr(Workspace, "path_index", lambda self: indexed.append(self.root) or index_of(self))
    root = make_workspace(tmp_path, suite=GOOD_SUITE, dataset=(GOOD_CASE + "\n") * 10)
    coming = _StartRecorder()
    checker = Checker(Analysis(coming))  # type: ignore[arg-type]
    checker.large_document_coming.set()
    checker.prepare((root,), EditorSettings())
    assert indexed == [] and coming.stops == 0
    calm = _StartRecorder()
    Checker(Analysis(calm)).prepare((root,), EditorSettings())  # type: ignore[arg-type]
    assert indexed == [root] and calm.stops == 1


GDI_ROW = '{"input_id": "g1", "prompt": "p", "reference_contexts": ["a"], "sut_response": "r", "retrieved_context": ["a"]}'


def test_a_dataset_reopened_with_another_row_shape_than_the_disk_rechecks_its_suites(tmp_path: Path) -> None:
    """Closing a dataset lets its suites read the disk's rows; reopening it with rows of another
    shape checks them again against the editor's (RAG110 comes and goes with the shape)."""
    root = make_workspace(tmp_path, suite=GOOD_SUITE, dataset=GDI_ROW + "\n")
    suite, dataset = root / ".punica/evals/code.suite.yaml", root / ".punica/evals/code.jsonl"
    edited = GOOD_CASE + "\n" + GDI_ROW + "\n"  # a tie reads as rag cases: no RAG110
    checker = Checker()
    shown: list[str] = []  # the suite's diagnostics as last published

    def codes(generation: int, documents: dict[Path, str]) -> list[str]:
        opened = {path: OpenDocument(path.as_uri(), generation, text) for path, text in documents.items()}
        snapshot = Snapshot(generation, opened, (root,), EditorSettings(), "utf-16", full=generation == 1)
        result = checker.run(snapshot)
        if suite in result.files:
            shown[:] = [json.loads(item)["code"] for item in result.files[suite].json]
        return shown

    suite_text = suite.read_text()
    assert "RAG110" in codes(1, {suite: suite_text, dataset: GDI_ROW + "\n"})
    assert "RAG110" not in codes(2, {suite: suite_text, dataset: edited})
    assert "RAG110" in codes(3, {suite: suite_text})  # closed: the disk's gdi row counts
    assert "RAG110" not in codes(4, {suite: suite_text, dataset: edited})
