"""Malformed LSP traffic gets protocol errors or empty answers, never a dead server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from lspclient import SERVER, diagnostics, open_file, start
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient
from workspaces import GOOD_CASE, GOOD_SUITE, make_workspace

from rag_lsp.server.checking.session import SCAN_DELAY_S
from rag_lsp.server.base.transport import LARGE_MESSAGE_BYTES

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


async def request_raw(client: LanguageClient, request_id: int, method: str, params: object) -> object:
    """Send a request as it is, past the client's own checks (which would refuse
    these params before sending), and wait for its answer: the client's protocol
    is given the future it resolves when the answer of that id arrives."""
    answered = asyncio.get_running_loop().create_future()
    client.protocol._request_futures[request_id] = answered
    send_raw(client, {"id": request_id, "method": method, "params": params})
    return await asyncio.wait_for(answered, 10)


async def still_answers(client: LanguageClient, root: Path) -> None:
    """The server still checks documents after the bad traffic."""
    suite = root / ".punica" / "evals" / "code.suite.yaml"
    uri = open_file(client, suite, GOOD_SUITE.replace("engines: [rag]", "engines: [rga]"), version=5)
    assert "RAG100" in [d.code for d in await diagnostics(client, uri, 5)]


async def test_unknown_methods_and_bad_params_get_errors(client: LanguageClient, tmp_path: Path) -> None:
    """An unknown request is MethodNotFound, a request with params that are not valid InvalidParams; notifications are ignored, and a change to a document that is not open shows the user nothing."""
    make_workspace(tmp_path)
    suite = tmp_path / ".punica" / "evals" / "code.suite.yaml"
    await start(client, tmp_path)
    with pytest.raises(Exception) as unknown:
        await client.protocol.send_request_async("rag/doesNotExist", {"x": 1})
    assert "not found" in str(unknown.value).lower() or "-32601" in str(unknown.value)
    for request_id, params in enumerate((
        {"textDocument": 3, "position": "here"},
        {"textDocument": {"uri": suite.as_uri()}, "position": {"line": -1, "character": 0}},
        {"position": {"line": 0, "character": 0}},
    ), start=9001):
        with pytest.raises(JsonRpcException) as refused:
            await request_raw(client, request_id, types.TEXT_DOCUMENT_HOVER, params)
        assert refused.value.code == types.ErrorCodes.InvalidParams, params
    send_raw(client, {"method": "rag/unknownNotification", "params": {"x": 1}})
    send_raw(client, {"method": types.TEXT_DOCUMENT_DID_CHANGE, "params": {"textDocument": {"uri": "file:///nowhere.jsonl", "version": 2}, "contentChanges": [{"text": "x"}]}})
    send_raw(client, {"method": types.TEXT_DOCUMENT_DID_OPEN, "params": {"textDocument": {"uri": 7}}})
    await still_answers(client, tmp_path)
    assert [message.message for message in client.messages if "nowhere.jsonl" in message.message] == []


async def test_json_that_is_no_message_is_refused_without_a_word_to_the_user(client: LanguageClient, tmp_path: Path) -> None:
    """`{}`, `null`, a batch and an id without a method are no JSON-RPC message: the last is answered InvalidRequest,
    none pops an error at the user, and the server goes on."""
    make_workspace(tmp_path)
    await start(client, tmp_path)
    for body in (b"{}", b"null", b"[]"):
        client.protocol.writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    answered = asyncio.get_running_loop().create_future()
    client.protocol._request_futures[77] = answered
    send_raw(client, {"id": 77})
    with pytest.raises(JsonRpcException) as refused:
        await asyncio.wait_for(answered, 10)
    assert refused.value.code == types.ErrorCodes.InvalidRequest
    await still_answers(client, tmp_path)
    assert [message.message for message in client.messages if message.type == types.MessageType.Error] == []


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



async def test_a_document_holding_half_of_a_character_is_checked_and_answered(client: LanguageClient, tmp_path: Path) -> None:
    """A lone surrogate (which JSON can carry, "\\ud800") counts as one UTF-16 unit: the findings after it
    are placed where the editor counts them, and symbols and hover answer on its line."""
    make_workspace(tmp_path)
    await start(client, tmp_path)
    dataset = tmp_path / ".punica" / "evals" / "code.jsonl"
    line = '{"id": "half\ud800", "input": {"query": "app"}, "expect": {"relevant": ["src/nope.py"]}}'
    send_raw(client, {"method": types.TEXT_DOCUMENT_DID_OPEN, "params": {"textDocument": {"uri": dataset.as_uri(), "languageId": "jsonl", "version": 3, "text": line + "\n"}}})
    found = await diagnostics(client, dataset.as_uri(), 3)
    (missing,) = [diagnostic for diagnostic in found if diagnostic.code == "RAG203"]
    column = line.index('"src/nope.py"')  # code points, each one UTF-16 unit on this line
    assert (missing.range.start.line, missing.range.start.character, missing.range.end.character) == (0, column, column + len('"src/nope.py"'))
    symbols = await client.text_document_document_symbol_async(types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=dataset.as_uri())))
    assert symbols and "half" in symbols[0].name
    position = types.Position(line=0, character=column + 2)
    await client.text_document_hover_async(types.HoverParams(text_document=types.TextDocumentIdentifier(uri=dataset.as_uri()), position=position))
    await still_answers(client, tmp_path)


async def test_a_pass_waits_for_a_large_document_that_is_arriving(tmp_path: Path) -> None:
    """A large didOpen whose body arrives after the start-up scan was due is checked in that pass: no diagnostics of the disk's text come first."""
    broken_on_disk = '{"id": "app", "input": {"query": "app"}, "expect": {"relevant": []}}\n'
    make_workspace(tmp_path, dataset=broken_on_disk)
    dataset = tmp_path / ".punica" / "evals" / "code.jsonl"
    rows = [GOOD_CASE.replace('"id": "app"', f'"id": "app-{number}"') for number in range(40_000)]
    text = "\n".join(rows) + "\n"
    assert len(text) >= LARGE_MESSAGE_BYTES
    # A raw client: pytest-lsp's would answer the server's requests in the middle
    # of the body. With no capabilities, the server asks the client nothing.
    server = await asyncio.create_subprocess_exec(
        *SERVER.server_command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL, limit=1 << 26
    )
    try:
        send(server, {"id": 1, "method": "initialize", "params": {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}})
        assert (await receive(server))["id"] == 1
        send(server, {"method": "initialized", "params": {}})
        open_message = {"method": types.TEXT_DOCUMENT_DID_OPEN, "params": {"textDocument": {"uri": dataset.as_uri(), "languageId": "jsonl", "version": 1, "text": text}}}
        body = json.dumps({"jsonrpc": "2.0", **open_message}).encode("utf-8")
        server.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body))
        # A slow client: the body comes well after the scan was due.
        await asyncio.sleep(4 * SCAN_DELAY_S)
        server.stdin.write(body)
        published = []
        while not published or published[-1]["version"] != 1:
            message = await asyncio.wait_for(receive(server), 60)
            if message.get("method") == types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS and message["params"]["uri"] == dataset.as_uri():
                published.append(message["params"])
        assert [(params.get("version"), params["diagnostics"]) for params in published] == [(1, [])]
    finally:
        server.kill()
        await server.wait()


def send(server: asyncio.subprocess.Process, message: dict) -> None:
    body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
    server.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)


async def receive(server: asyncio.subprocess.Process) -> dict:
    """The server's next message."""
    header = await server.stdout.readuntil(b"\r\n\r\n")
    length = next(int(line.split(b":")[1]) for line in header.split(b"\r\n") if line.lower().startswith(b"content-length"))
    return json.loads(await server.stdout.readexactly(length))
