"""The builtin target over a corpus of documents (a JSON Lines file of `_id`, `title`, `text`), through the
real command line, on tests/fixtures/documents."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from workspaces import rag_lsp

# Slow (runs the command line in processes of its own): `pytest -m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

FIXTURE = Path(__file__).parent / "fixtures" / "documents"
CORPUS = ".punica/corpora/gateway.jsonl"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(FIXTURE, root)
    return root


def _recorded(root: Path, *args: str) -> tuple[int, dict[str, dict[str, list[dict]]], str]:
    """Run the workspace, recording every answer; (exit code, suite -> case -> hits, stderr)."""
    result = rag_lsp("run", *args, "--record", str(root.parent / "answers-{suite}.jsonl"), "--format", "json", cwd=root)
    assert "Traceback" not in result.stderr, result.stderr
    answers = {}
    for file in root.parent.glob("answers-*.jsonl"):
        suite = file.stem.removeprefix("answers-")
        answers[suite] = {line["id"]: line["hits"] for line in map(json.loads, filter(str.strip, file.read_text(encoding="utf-8").split("\n")))}
    return result.returncode, answers, result.stderr


def test_each_document_is_one_hit_named_by_its_id(workspace: Path) -> None:
    """By meaning and by keyword, a hit is a document: id = its `_id` (an integer written as a string), path =
    the documents file, text = its title and text; `match: id` suites pass with no service."""
    code, answers, _ = _recorded(workspace)
    assert code == 0
    for suite in ("docs-semantic", "docs-keyword"):
        hits = answers[suite]
        assert hits["throttling"][0]["id"] == "d1"
        assert hits["audit-chain"][0]["id"] == "3"
        assert hits["webhook-retry"][0]["id"] == "d5"
        every = [hit for case in hits.values() for hit in case]
        assert {hit["path"] for hit in every} == {CORPUS}
        assert {hit["corpus"] for hit in every} == {"gateway"}
        # A line that is not a document, and a document with no words, are never hits.
        assert {hit["id"] for hit in every} <= {"d1", "d2", "3", "d5"}
        first = hits["throttling"][0]
        assert first["text"].startswith("Token buckets\nEach tenant gets its own token bucket")
        # A JSON string holding U+2028 does not cut its line in two.
        assert "backoff.\u2028A second paragraph." in hits["webhook-retry"][0]["text"]
    semantic = answers["docs-semantic"]
    # Each document is one hit, once: the four documents, for topK 10.
    assert all(sorted(hit["id"] for hit in case) == ["3", "d1", "d2", "d5"] for case in semantic.values())


def test_the_index_follows_the_corpus_file_content(workspace: Path) -> None:
    """A changed documents file is indexed again (the cache keys on its content): a document renamed in it
    comes back under its new id on the next run."""
    code, answers, _ = _recorded(workspace, "--suite", "docs-semantic")
    assert code == 0 and answers["docs-semantic"]["throttling"][0]["id"] == "d1"
    corpus = workspace / CORPUS
    corpus.write_text(corpus.read_text(encoding="utf-8").replace('"_id": "d1"', '"_id": "bucket-1"'), encoding="utf-8")
    _, answers, _ = _recorded(workspace, "--suite", "docs-semantic")
    assert answers["docs-semantic"]["throttling"][0]["id"] == "bucket-1"


def test_the_documents_corpus_checks_clean_and_is_no_dataset(workspace: Path) -> None:
    """`rag-lsp check` passes on the workspace; a documents file under .punica/evals is not read as a dataset."""
    result = rag_lsp("check", "--format", "json", cwd=workspace)
    assert result.returncode == 0, result.stdout + result.stderr
    # The keyword suite thresholds no rag.mode.semantic, on purpose: that warning alone.
    assert [f["code"] for f in json.loads(result.stdout)] == ["RAG103"]
    moved = ".punica/evals/corpus.jsonl"
    shutil.move(workspace / CORPUS, workspace / moved)
    targets = workspace / ".punica" / "targets.yaml"
    targets.write_text(targets.read_text(encoding="utf-8").replace(CORPUS, moved), encoding="utf-8")
    result = rag_lsp("check", "--format", "json", cwd=workspace)
    assert result.returncode == 0, result.stdout + result.stderr
    assert [f["code"] for f in json.loads(result.stdout)] == ["RAG103"]


def test_a_missing_documents_file_is_reported_where_it_is_named(workspace: Path) -> None:
    """A documents file that does not exist is RAG004 on its path in the targets config; a run of its suites
    says so and does not run them."""
    (workspace / CORPUS).unlink()
    result = rag_lsp("check", "--format", "json", cwd=workspace)
    assert result.returncode == 1
    findings = [f for f in json.loads(result.stdout) if f["path"] == ".punica/targets.yaml"]
    assert {f["code"] for f in findings} == {"RAG004"}
    assert all("does not exist" in f["message"] for f in findings)
    assert findings[0]["range"]["start"]["line"] == 4
    run = rag_lsp("run", "--suite", "docs-keyword", cwd=workspace)
    assert run.returncode == 1
    assert "Traceback" not in run.stderr
    assert "the documents file '.punica/corpora/gateway.jsonl' does not exist" in run.stdout


def test_a_documents_file_outside_the_workspace_is_refused(workspace: Path) -> None:
    """A documents path that leaves the workspace is never read: RAG004 from check, a clear failure from run."""
    targets = workspace / ".punica" / "targets.yaml"
    targets.write_text(targets.read_text(encoding="utf-8").replace(CORPUS, "../outside.jsonl"), encoding="utf-8")
    (workspace.parent / "outside.jsonl").write_text('{"_id": "x", "text": "token bucket"}\n', encoding="utf-8")
    result = rag_lsp("check", "--format", "json", cwd=workspace)
    assert result.returncode == 1
    assert any("outside the workspace" in f["message"] for f in json.loads(result.stdout))
    run = rag_lsp("run", "--suite", "docs-keyword", "--format", "json", cwd=workspace)
    assert run.returncode == 1
    assert "Traceback" not in run.stderr
    assert "outside the workspace" in run.stdout + run.stderr
