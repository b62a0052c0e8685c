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
from hypothesis import example, given, settings
from hypothesis import strategies as st
from lsprotocol import types

from rag_lsp.server import create_server
from rag_lsp.server.base.document import LineDocument
from rag_lsp.server.base.transport import LARGE_MESSAGE_BYTES, decode, lines_of_json_string, read_messages, widen_pipe

# Slow (end-to-end sessions with the server over stdio): `pytest -m "not slow"` leaves it out.
pytestmark = pytest.mark.slow


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


# Characters that each take another path through a JSON string: escapes of one
# character, escaped backslashes before an "n", accents and letters of other
# scripts (written as themselves or as \u escapes), an emoji (a surrogate pair
# when escaped), line breaks of both kinds.
_STRING_CHARACTERS = st.sampled_from(['a', 'n', 'u', '0', '\\', '"', '/', '\n', '\r', '\t', '\u2028', 'é', 'ж', '日', '😀', ' '])


def _written(text: str, ascii: bool, breaks_as_escapes: bool) -> bytes:
    """``text`` as a JSON string, as a client may write it: non-ASCII as itself or
    escaped, a line break as ``\\n`` or ``\\u000a``."""
    if breaks_as_escapes:  # each line break written as a NUL would be, then named as a line break
        return json.dumps(text.replace("\n", "\x00"), ensure_ascii=ascii).replace("\\u0000", "\\u000a").encode("utf-8")
    return json.dumps(text, ensure_ascii=ascii).encode("utf-8")


@settings(max_examples=300, deadline=None)
@given(
    text=st.lists(_STRING_CHARACTERS, max_size=80).map("".join),
    ascii=st.booleans(),
    breaks_as_escapes=st.booleans(),
    piece_bytes=st.integers(1, 40),
)
@example(text='a\\\nb\\n', ascii=True, breaks_as_escapes=False, piece_bytes=1)  # an escaped backslash, then a line break
def test_a_json_string_is_read_into_the_lines_of_its_text(text: str, ascii: bool, breaks_as_escapes: bool, piece_bytes: int) -> None:
    """A JSON string read a piece at a time, each piece cut at a line break, gives the lines of the
    text decoded whole and its UTF-8 size, whatever the escapes, the characters and the pieces' size."""
    written = _written(text, ascii, breaks_as_escapes)
    assert json.loads(written) == text
    assert lines_of_json_string(memoryview(written), piece_bytes) == (text.split("\n"), len(text.encode("utf-8")))


def test_the_short_lines_of_a_document_written_with_indentation_are_kept_once_each() -> None:
    """The lines of a JSON array written with indentation are its text's lines, and a short line written
    alike on many (a brace, a key) is one string each time: a million-line document is not a million strings."""
    rows = [{"id": f"c{n}", "input": {"query": f"q{n}"}, "expect": {"relevant": ["src/app.py"]}} for n in range(200)]
    text = json.dumps(rows, indent=2)
    lines, size = lines_of_json_string(memoryview(json.dumps(text).encode()), 512)
    assert lines == text.split("\n") and size == len(text)
    braces = [line for line in lines if line == "  },"]
    assert len(braces) == 199 and len({id(line) for line in braces}) == 1


@pytest.mark.parametrize("written", [b"12", b'"lone \\ud800 surrogate"', b'"unterminated', b'"a\x01b"'], ids=["number", "surrogate", "cut", "control"])
def test_what_is_no_string_orjson_reads_is_not_read_into_lines(written: bytes) -> None:
    """A value that is no JSON string orjson reads is left to the decoding of the whole message."""
    assert lines_of_json_string(memoryview(written), 4) is None


def _large_text(line: str) -> str:
    """Lines of ``line`` (with a CRLF line among them) past the size of a large message."""
    count = LARGE_MESSAGE_BYTES // len(line) + 1
    return "\n".join([line] * (count // 2) + [line + "\r"] + [line] * (count // 2)) + "\n"


@pytest.mark.parametrize("ascii", [True, False], ids=["escaped", "as-written"])
def test_a_large_document_opens_into_its_lines(ascii: bool) -> None:
    """A didOpen past the size of a large message is the message pygls reads, and its document holds
    the text's lines and knows its UTF-8 size, accents, emoji and escapes included."""
    text = _large_text('{"id": "é-😀", "input": {"query": "a \\"quoted\\" C:\\\\path ж 日本"}}')
    body = json.dumps(did_open(text), ensure_ascii=ascii).encode("utf-8")
    assert len(body) >= LARGE_MESSAGE_BYTES
    protocol = Recorder()
    ours = decode(body, protocol)  # type: ignore[arg-type]
    theirs = json.loads(body, object_hook=protocol.structure_message)
    assert isinstance(ours, types.DidOpenTextDocumentNotification)
    opened, expected = ours.params.text_document, theirs.params.text_document
    assert (opened.uri, opened.language_id, opened.version) == (expected.uri, expected.language_id, expected.version)
    document = LineDocument(opened.uri, source=opened.text, version=opened.version)
    assert document.source == text
    assert document.line_text(0) == text.split("\n")[0]
    assert document.whole_size == len(text.encode("utf-8"))


def test_a_large_document_holding_a_lone_surrogate_is_decoded_whole() -> None:
    """A large didOpen whose text orjson refuses (a lone surrogate) is decoded as any such message
    is, by the standard decoder, and its text is kept whole."""
    text = _large_text('{"id": "lone \ud800 surrogate"}')
    body = json.dumps(did_open(text)).encode("utf-8")
    protocol = Recorder()
    ours = decode(body, protocol)  # type: ignore[arg-type]
    assert ours == json.loads(body, object_hook=protocol.structure_message)
    assert ours.params.text_document.text == text


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


def test_what_an_announcement_gives_back_is_called_once_the_message_is_handled() -> None:
    """The callable an announcement returns is called after its message is handled, and also when the input ends inside the body."""
    protocol = Recorder()
    events: list = []
    large = framed(did_open("x" * LARGE_MESSAGE_BYTES))
    read_all(large + framed(did_open("{}")), protocol, lambda length: lambda: events.append(("handled", len(protocol.handled))))
    assert events == [("handled", 1)]
    events.clear()
    with pytest.raises(asyncio.IncompleteReadError):  # the stream ends inside the body
        read_all(large[: len(large) // 2], Recorder(), lambda length: lambda: events.append("ended"))
    assert events == ["ended"]


def test_a_failing_announcement_loses_no_message() -> None:
    """An announcement that raises is logged; the large message is still read and handled."""
    protocol = Recorder()

    def on_large(length: int) -> None:
        raise RuntimeError("preparing failed")

    read_all(framed(did_open("y" * LARGE_MESSAGE_BYTES)), protocol, on_large)
    opened = [message.params.text_document for message in protocol.handled]
    assert [LineDocument(item.uri, source=item.text).source[:3] for item in opened] == ["yyy"]


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


def _send(connection, message: dict) -> None:
    connection.sendall(framed(message))


def _receive(stream) -> dict:
    length = None
    while (header := stream.readline()) not in (b"\r\n", b""):
        name, _, value = header.decode("ascii").partition(":")
        if name.lower() == "content-length":
            length = int(value)
    assert length is not None, "the server closed the connection"
    return json.loads(stream.read(length))


def test_the_tcp_server_reads_with_the_same_loop(tmp_path) -> None:
    """`rag-lsp serve --tcp` answers initialize, publishes a dataset's diagnostics, and exits on exit."""
    import socket
    import subprocess
    import time

    (tmp_path / ".punica" / "evals").mkdir(parents=True)
    dataset = tmp_path / ".punica" / "evals" / "broken.jsonl"
    dataset.write_text('{"id": "a", "input": \n', encoding="utf-8")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "rag_lsp", "serve", "--tcp", f"127.0.0.1:{port}"], cwd=tmp_path)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                connection = socket.create_connection(("127.0.0.1", port), timeout=20)
                break
            except OSError:
                assert time.monotonic() < deadline, "the server did not listen"
                time.sleep(0.05)
        with connection, connection.makefile("rb") as stream:
            _send(connection, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}})
            answer = _receive(stream)
            assert answer["id"] == 1
            assert "capabilities" in answer["result"]
            _send(connection, {"jsonrpc": "2.0", "method": "initialized", "params": {}})
            document = {"uri": dataset.as_uri(), "languageId": "jsonl", "version": 1, "text": dataset.read_text(encoding="utf-8")}
            _send(connection, {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": document}})
            while True:
                message = _receive(stream)
                if message.get("id") is not None and "method" in message:  # a request of the server's
                    _send(connection, {"jsonrpc": "2.0", "id": message["id"], "result": None})
                elif message.get("method") == "textDocument/publishDiagnostics" and message["params"]["uri"] == dataset.as_uri():
                    break
            assert [item["code"] for item in message["params"]["diagnostics"]] == ["RAG002"]
            _send(connection, {"jsonrpc": "2.0", "id": 2, "method": "shutdown", "params": None})
            while _receive(stream).get("id") != 2:
                pass
            _send(connection, {"jsonrpc": "2.0", "method": "exit", "params": None})
        assert server.wait(20) == 0
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
