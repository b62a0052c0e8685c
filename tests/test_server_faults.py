"""Malformed LSP traffic gets protocol errors or empty answers, never a dead server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from lspclient import SERVER, diagnostics, open_file, start
from pytest_lsp import LanguageClient
from workspaces import GOOD_SUITE, make_workspace

# Slow (end-to-end sessions with the server over stdio): `pytest -m "not slow"` leaves it out.
pytestmark = pytest.mark.slow


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


def send_raw(client: LanguageClient, message: dict) -> None:
    """Write a JSON-RPC message as it is, past the client's own type checks."""
    body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
    client.protocol.writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)


async def still_answers(client: LanguageClient, root: Path) -> None:
    """The server still checks documents after the bad traffic."""
    suite = root / ".punica" / "evals" / "code.suite.yaml"
    uri = open_file(client, suite, GOOD_SUITE.replace("engines: [rag]", "engines: [rga]"), version=5)
    assert "RAG100" in [d.code for d in await diagnostics(client, uri, 5)]


async def test_unknown_methods_and_bad_params_get_errors(client: LanguageClient, tmp_path: Path) -> None:
    """An unknown request is MethodNotFound, bad params an error response; notifications are ignored."""
    make_workspace(tmp_path)
    await start(client, tmp_path)
    with pytest.raises(Exception) as unknown:
        await client.protocol.send_request_async("rag/doesNotExist", {"x": 1})
    assert "not found" in str(unknown.value).lower() or "-32601" in str(unknown.value)
    send_raw(client, {"id": 9001, "method": types.TEXT_DOCUMENT_HOVER, "params": {"textDocument": 3, "position": "here"}})
    send_raw(client, {"method": "rag/unknownNotification", "params": {"x": 1}})
    send_raw(client, {"method": types.TEXT_DOCUMENT_DID_CHANGE, "params": {"textDocument": {"uri": "file:///nowhere.jsonl", "version": 2}, "contentChanges": [{"text": "x"}]}})
    send_raw(client, {"method": types.TEXT_DOCUMENT_DID_OPEN, "params": {"textDocument": {"uri": 7}}})
    await still_answers(client, tmp_path)


async def test_requests_for_closed_documents_and_out_of_range_positions(client: LanguageClient, tmp_path: Path) -> None:
    """Hover, completion and symbols for a closed document or a position past the end answer without failing."""
    make_workspace(tmp_path)
    await start(client, tmp_path)
    closed = (tmp_path / "nope.suite.yaml").as_uri()
    far = types.Position(line=10_000, character=10_000)
    document = types.TextDocumentIdentifier(uri=closed)
    assert await client.text_document_hover_async(types.HoverParams(text_document=document, position=far)) is None
    await client.text_document_completion_async(types.CompletionParams(text_document=document, position=far))
    suite = tmp_path / ".punica" / "evals" / "code.suite.yaml"
    uri = open_file(client, suite, GOOD_SUITE)
    opened = types.TextDocumentIdentifier(uri=uri)
    await client.text_document_hover_async(types.HoverParams(text_document=opened, position=far))
    await client.text_document_completion_async(types.CompletionParams(text_document=opened, position=far))
    await client.text_document_document_symbol_async(types.DocumentSymbolParams(text_document=opened))
    await client.text_document_code_lens_async(types.CodeLensParams(text_document=document))
    await still_answers(client, tmp_path)
