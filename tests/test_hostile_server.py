"""Hostile and broken input through the language server, over stdio as an editor
talks to it: the server keeps publishing diagnostics for every other file,
answers every run, reads nothing outside the workspace through a setting, and
keeps serving after a message it refuses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from lspclient import SERVER, diagnostics, execute, lenses, open_file, published_when, start, until
from pytest_lsp import LanguageClient
from test_hostile_cli import deep_toml, make_deep_folders, remove_deep_folders
from workspaces import GOOD_CASE, GOOD_SUITE, make_workspace

# Slow (end-to-end sessions with the server over stdio): `pytest -m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

UNKNOWN_METRIC_SUITE = GOOD_SUITE.replace("rag.recall: 0.8", "rag.recal: 0.8")
MISSING_PATH_CASE = '{"id": "gone", "input": {"query": "q"}, "expect": {"relevant": ["src/gone.py"]}}'


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


def codes_of(items: list[types.Diagnostic]) -> set[str]:
    return {str(item.code) for item in items}


async def test_deep_settings_file_leaves_other_files_checked(client: LanguageClient, tmp_path: Path) -> None:
    """With a settings file nested 500 deep, a suite's RAG101 is still published, and the settings file gets RAG005."""
    root = make_workspace(tmp_path, suite=UNKNOWN_METRIC_SUITE)
    settings = root / ".punica" / "rag-lsp.toml"
    settings.write_text(deep_toml(), encoding="utf-8")
    await start(client, root)
    suite_uri = open_file(client, root / ".punica" / "evals" / "code.suite.yaml")
    assert "RAG101" in codes_of(await diagnostics(client, suite_uri, 1))
    settings_uri = open_file(client, settings)
    assert "RAG005" in codes_of(await published_when(client, settings_uri, lambda items: bool(items)))


async def test_folders_nested_990_deep(client: LanguageClient, tmp_path: Path) -> None:
    """A workspace with folders nested 990 deep still gets its diagnostics."""
    root = make_workspace(tmp_path, suite=UNKNOWN_METRIC_SUITE)
    make_deep_folders(root, 990)
    try:
        await start(client, root)
        suite_uri = open_file(client, root / ".punica" / "evals" / "code.suite.yaml")
        assert "RAG101" in codes_of(await diagnostics(client, suite_uri, 1))
    finally:
        remove_deep_folders(root)


async def test_settings_file_linked_from_outside_is_refused(client: LanguageClient, tmp_path: Path) -> None:
    """A settings file that is a link out of the workspace is RAG005, and its severities do not apply."""
    root = make_workspace(tmp_path / "w", dataset=GOOD_CASE + "\n" + MISSING_PATH_CASE + "\n")
    (tmp_path / "outside.toml").write_text('[severity]\nRAG203 = "off"\n', encoding="utf-8")
    (root / ".punica" / "rag-lsp.toml").symlink_to(tmp_path / "outside.toml")
    await start(client, root)
    dataset_uri = open_file(client, root / ".punica" / "evals" / "code.jsonl")
    assert "RAG203" in codes_of(await diagnostics(client, dataset_uri, 1))
    settings_uri = open_file(client, root / ".punica" / "rag-lsp.toml", text='[severity]\nRAG203 = "off"\n')
    found = await published_when(client, settings_uri, lambda items: bool(items))
    assert codes_of(found) == {"RAG005"}
    assert "outside the workspace" in found[0].message


async def test_closing_an_unsaved_settings_buffer_reverts_to_the_disk(client: LanguageClient, tmp_path: Path) -> None:
    """Unsaved `RAG203 = "error"` makes RAG203 an error; closing the buffer unsaved brings back the disk's warning."""
    root = make_workspace(tmp_path, dataset=GOOD_CASE + "\n" + MISSING_PATH_CASE + "\n")
    await start(client, root)
    dataset_uri = open_file(client, root / ".punica" / "evals" / "code.jsonl")

    def severity_of_203(items: list[types.Diagnostic]) -> types.DiagnosticSeverity | None:
        return next((item.severity for item in items if item.code == "RAG203"), None)

    assert severity_of_203(await diagnostics(client, dataset_uri, 1)) == types.DiagnosticSeverity.Warning
    settings_uri = open_file(client, root / ".punica" / "rag-lsp.toml", text='[severity]\nRAG203 = "error"\n')
    await published_when(client, dataset_uri, lambda items: severity_of_203(items) == types.DiagnosticSeverity.Error)
    client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=settings_uri)))
    await published_when(client, dataset_uri, lambda items: severity_of_203(items) == types.DiagnosticSeverity.Warning)


@pytest.mark.parametrize("kind", ["fifo", "device", "outside"])
async def test_a_baseline_that_is_no_workspace_file_is_refused_and_the_run_answers(
    client: LanguageClient, tmp_path: Path, kind: str
) -> None:
    """ragLsp.baseline naming a FIFO, /dev/zero or a file outside the workspace: a warning saying why, and the run's results."""
    root = make_workspace(tmp_path / "w")
    (tmp_path / "outside.json").write_text('{"suites": []}', encoding="utf-8")
    if kind == "fifo":
        os.mkfifo(root / "pipe")
    named = {"fifo": "pipe", "device": "/dev/zero", "outside": "../outside.json"}[kind]
    await start(client, root, options={"baseline": named})
    uri = open_file(client, root / ".punica/evals/code.jsonl")
    await diagnostics(client, uri, 1)
    (lens,) = [lens for lens in await lenses(client, uri) if lens.range.start.line == 0]
    await execute(client, lens.command)
    await until(client, types.WINDOW_SHOW_MESSAGE, lambda: any("baseline" in m.message for m in client.messages))
    (warning,) = [m for m in client.messages if "baseline" in m.message]
    assert {"fifo": "named pipe", "device": "outside the workspace", "outside": "outside the workspace"}[kind] in warning.message
    await published_when(client, uri, lambda items: any(item.code == "RAG400" for item in items))


def _message(body: dict) -> bytes:
    data = json.dumps({"jsonrpc": "2.0", **body}).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(data) + data


def test_a_message_past_the_size_limit_is_skipped_and_the_server_serves_on() -> None:
    """A message longer than the limit is skipped with a logged error; the next request is answered, and an
    announced length of 100 GB is no MemoryError."""
    server = subprocess.Popen(
        [sys.executable, "-m", "rag_lsp", "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "RAG_LSP_MAX_MESSAGE_BYTES": "1000000"},
    )
    requests = (
        _message({"id": 1, "method": "initialize", "params": {"capabilities": {}, "rootUri": None}})
        + b"Content-Length: 2000000\r\n\r\n"
        + b"x" * 2_000_000
        + _message({"id": 2, "method": "shutdown"})
        + b"Content-Length: 100000000000\r\n\r\n{}"
    )
    out, err = server.communicate(requests, timeout=30)
    assert server.returncode == 0, err[-2000:]
    assert b'"id": 2' in out and b'"result": null' in out
    assert b"above the limit" in err
    assert b"MemoryError" not in err and b"Traceback" not in err and b"internal error" not in err
