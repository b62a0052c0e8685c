"""The server's message loop reads what pygls's reads, decodes it faster, and
announces large messages before their bodies arrive."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading

import orjson
import pytest
from lsprotocol import types

from rag_lsp.server import create_server
from rag_lsp.server.transport import LARGE_MESSAGE_BYTES, decode, read_messages, widen_pipe


def body_of(message: dict) -> bytes:
    return json.dumps(message).encode("utf-8")


def framed(message: dict) -> bytes:
    body = body_of(message)
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def did_open(text: str) -> dict:
    document = {"uri": "file:///w/data.jsonl", "languageId": "jsonl", "version": 1, "text": text}
    return {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": document}}


class Recorder:
    """A protocol that keeps what it is handed, typed by a real server's protocol."""

    def __init__(self) -> None:
        self.structure_message = create_server().protocol.structure_message
        self.handled: list = []

    def handle_message(self, message: object) -> None:
        self.handled.append(message)


@pytest.mark.parametrize(
    "text",
    ['{"id": "ünï", "n": 12}', '{"id": "lone \ud800 surrogate"}', ""],
    ids=["non-ascii", "lone-surrogate", "empty"],
)
def test_a_message_decodes_as_pygls_decodes_it(text: str) -> None:
    """Whichever decoder reads a body (orjson, or the standard one for what orjson refuses), the typed message is pygls's."""
    body = json.dumps(did_open(text)).encode("utf-8")
    if "\ud800" in text:  # a body orjson refuses: the standard decoder reads it
        with pytest.raises(orjson.JSONDecodeError):
            orjson.loads(body)
    protocol = Recorder()
    ours = decode(body, protocol)  # type: ignore[arg-type]
    theirs = json.loads(body, object_hook=protocol.structure_message)
    assert isinstance(ours, types.DidOpenTextDocumentNotification)
    assert ours == theirs
    assert ours.params.text_document.text == json.loads(body)["params"]["textDocument"]["text"]


def test_only_the_message_itself_is_typed() -> None:
    """An object inside a message's parameters that holds a jsonrpc key stays the client's object."""
    message = {"jsonrpc": "2.0", "method": "workspace/didChangeConfiguration", "params": {"settings": {"jsonrpc": "2.0", "id": 1}}}
    decoded = decode(json.dumps(message).encode(), Recorder())  # type: ignore[arg-type]
    assert decoded.params.settings == {"jsonrpc": "2.0", "id": 1}


def read_all(data: bytes, protocol: Recorder, on_large) -> None:
    async def main() -> None:
        reader = asyncio.StreamReader()
        reader.feed_data(data)
        reader.feed_eof()
        await read_messages(threading.Event(), reader, protocol, on_large=on_large)  # type: ignore[arg-type]

    asyncio.run(main())


def test_a_large_message_is_announced_before_its_body_is_read() -> None:
    """The announcement comes with the header: before the body is handled, with the body's length."""
    protocol = Recorder()
    events: list = []
    large = did_open("x" * LARGE_MESSAGE_BYTES)
    small = framed(did_open("{}"))

    def on_large(length: int) -> None:
        events.append(("announced", length, len(protocol.handled)))

    read_all(small + framed(large) + small, protocol, on_large)
    assert events == [("announced", len(body_of(large)), 1)]  # after the first message, before the second
    assert len(protocol.handled) == 3


def test_a_failing_announcement_loses_no_message() -> None:
    """An announcement that raises is logged; the large message is still read and handled."""
    protocol = Recorder()

    def on_large(length: int) -> None:
        raise RuntimeError("preparing failed")

    read_all(framed(did_open("y" * LARGE_MESSAGE_BYTES)), protocol, on_large)
    assert [message.params.text_document.text[:3] for message in protocol.handled] == ["yyy"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pipe sizes are Linux's")
def test_pipes_are_widened_and_other_streams_left_alone(tmp_path) -> None:
    """A pipe gets a 1 MiB buffer; a regular file is left as it is, without an error."""
    import fcntl

    read_end, write_end = os.pipe()
    with os.fdopen(read_end, "rb") as reading, os.fdopen(write_end, "wb"):
        widen_pipe(reading)
        assert fcntl.fcntl(reading.fileno(), fcntl.F_GETPIPE_SZ) == 1 << 20
    with open(tmp_path / "file", "wb") as regular:
        widen_pipe(regular)
