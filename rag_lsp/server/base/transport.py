"""Reading the client's messages: pygls's message loop, made for large documents.

Opening a 100,000-line dataset is one ``didOpen`` of about 20 MB. pygls's loop
(``pygls.io_.run_async``) decodes each message with the standard library, on
the event loop: a tenth of a second for such a message, in which no other
message is read. This loop is the same (headers, then a body of the length
they give, then ``protocol.handle_message``) with four differences:

* **Bodies are decoded by orjson**, about three times faster. A body orjson
  refuses (a lone surrogate escaped in a string, say) is decoded by the standard
  library as pygls does, so nothing it reads is lost. Only the message itself is
  turned into pygls's typed message (its ``structure_message``), not objects
  inside its parameters that happen to hold a ``jsonrpc`` key.
* **A large document is opened straight into its lines**: a ``didOpen`` of
  2 MB or more is read with its text left as JSON (msgspec), and the text read
  into lines a piece at a time (orjson), never as one string: decoded whole,
  a 25 MB text is that string and a copy, twice or four times the size once a
  line holds an accent or an emoji, then copied again into lines. What this
  reading cannot take (a lone surrogate, say) is decoded as any message is.
* **A large message is announced by its header**, before its body has arrived:
  ``on_large`` lets the server prepare what checking a large document needs
  while the body arrives and decodes, and may give back what to call once the
  message has been handled (a pass due meanwhile then waits for it).
* **The pipes are widened**: over stdio, a body arrives in pieces of the pipe's
  size, 64 KiB by default, each a wake-up of the reading thread; with 1 MiB
  pipes (the most Linux grants any user by default) a 20 MB document comes in
  twenty. Answers as large (the code lenses of such a dataset) leave the same way.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import sys
from threading import Event
from typing import Any, Callable

import msgspec
import orjson
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.io_ import StdinAsyncReader, StdoutWriter
from pygls.protocol import JsonRPCProtocol

from ...core.checking.analysis import LARGE_DATASET_BYTES
from ...core.checking.parallel import widen_pipe
from ...core.reading.sources import utf8_size
from .document import TextInLines

log = logging.getLogger(__name__)

# Messages at least this large are announced (see on_large): most likely a
# dataset the analysis reads with its helper process (see core.checking.analysis).
LARGE_MESSAGE_BYTES = LARGE_DATASET_BYTES

# A message announced as longer than this is skipped, not read: no document the
# server reads comes near it (max-file-bytes is 64 MiB by default), and reading it
# would take that much memory at once.
# ``RAG_LSP_MAX_MESSAGE_BYTES`` sets another limit.
MAX_MESSAGE_BYTES = 1 << 30
SKIP_PIECE_BYTES = 1 << 20
_CONTENT_LENGTH = re.compile(rb"^Content-Length: (\d+)\r\n$")

# Told a large message's length as its header arrives; may give back what to
# call once the message has been handled (or its reading has failed).
OnLarge = Callable[[int], Callable[[], None] | None]


# An opened document's text is read into its lines a piece of about this many
# bytes at a time (see lines_of_json_string): the memory a piece takes is then
# small enough for the allocator to give to the next piece, where pieces of a
# megabyte each got fresh pages from the system (measured over a 25 MB text:
# 64 KB pieces took two thirds of the page faults of 1 MB ones, and a third
# where lines hold emoji).
PIECE_BYTES = 1 << 16


# What a large didOpen is read as first: its text left as the JSON it is written
# in, to be read into lines a piece at a time.
class _OpenedItem(msgspec.Struct):
    uri: str
    languageId: str
    version: int
    text: msgspec.Raw


class _OpenedParams(msgspec.Struct):
    textDocument: _OpenedItem


class _Opened(msgspec.Struct):
    jsonrpc: str
    method: str
    params: _OpenedParams
    id: Any = msgspec.UNSET


_read_opened = msgspec.json.Decoder(_Opened).decode
_DID_OPEN = types.TEXT_DOCUMENT_DID_OPEN.encode()
# A line break in a JSON string: an escaped "n" after any number of escaped
# backslashes, which follow no other backslash (the end of the match is past the "n").
_LINE_BREAK = re.compile(rb"(?<!\\)(?:\\\\)*\\n")


def decode(body: bytes, protocol: JsonRPCProtocol) -> Any:
    """The message in ``body``, as pygls's typed message."""
    if len(body) >= LARGE_MESSAGE_BYTES and _DID_OPEN in body:
        opened = _opened_in_lines(body, protocol)
        if opened is not None:
            return opened
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        # What orjson refuses and JSON allows, read as pygls reads it (or its error).
        return json.loads(body, object_hook=protocol.structure_message)
    if type(data) is not dict or not ("method" in data or "result" in data or "error" in data):
        return data  # no message pygls knows (see _refuse_non_message)
    return protocol.structure_message(data)


def _opened_in_lines(body: bytes, protocol: JsonRPCProtocol) -> Any:
    """A large didOpen's typed message, its text read into lines (a
    :class:`TextInLines`) without the whole text ever being one string: decoded
    whole, a 25 MB text is that string and a copy of it at once, and four bytes
    a character when a line holds an emoji; its lines are copies of it again.
    None for any other message, or one this reading cannot take (a string that
    is not JSON, a lone surrogate): it is then decoded as any message is."""
    try:
        opened = _read_opened(body)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    if opened.method != types.TEXT_DOCUMENT_DID_OPEN or opened.id is not msgspec.UNSET:
        return None
    item = opened.params.textDocument
    read = lines_of_json_string(memoryview(item.text))
    if read is None:
        return None
    message = protocol.structure_message(
        {
            "jsonrpc": opened.jsonrpc,
            "method": opened.method,
            "params": {"textDocument": {"uri": item.uri, "languageId": item.languageId, "version": item.version, "text": ""}},
        }
    )
    message.params.text_document.text = TextInLines.of(*read)
    return message


# The mean length under which the lines of a piece are most likely a document
# written with indentation (a dataset's rows are hundreds of characters each).
_SHORT_LINE = 48


def lines_of_json_string(string: memoryview, piece_bytes: int = PIECE_BYTES) -> tuple[list[str], int] | None:
    """The lines of the JSON string ``string`` (its quotes included) and its
    text's UTF-8 size, or None when it is no string orjson reads. It is read a
    piece of about ``piece_bytes`` at a time, each cut at a line break (see
    _LINE_BREAK): the memory a piece takes while it is read and split (its
    text, orjson's buffer) is small enough for the allocator to keep for the
    next piece, where a whole text's would be fresh memory from the system,
    page by page."""
    if len(string) < 2 or string[0] != ord('"') or string[-1] != ord('"'):
        return None
    lines: list[str] = []
    # Short lines written alike (the braces and keys of a JSON document written
    # with indentation, a million of them) are kept once each.
    alike: dict[str, str] = {}
    size = 0
    start, end = 1, len(string) - 1
    while start <= end:
        cut = _LINE_BREAK.search(string, min(start + piece_bytes, end), end)
        stop = cut.end() - 2 if cut is not None else end
        try:
            text = orjson.loads(b"".join((b'"', string[start:stop], b'"')))
        except orjson.JSONDecodeError:
            return None
        parts = text.split("\n")
        lines.extend(map(alike.setdefault, parts, parts) if len(text) < _SHORT_LINE * len(parts) else parts)
        size += utf8_size(text)
        if cut is None:
            break
        size += 1  # the line break between two pieces
        start = cut.end()
    return lines, size


def _refused_request(body: bytes, protocol: JsonRPCProtocol, error: Exception) -> bool:
    """Answer a request whose params pygls could not read (a negative line, a
    missing ``textDocument``) with InvalidParams, as JSON-RPC asks: the client
    would otherwise wait for an answer for ever. False when ``body`` is no request."""
    data = _json_or_none(body)
    if type(data) is not dict or "method" not in data or type(data.get("id")) not in (int, str):
        return False
    log.warning("refused %s: its params are not valid: %s", data["method"], error)
    protocol._send_response(
        data["id"],
        error=types.ResponseError(types.ErrorCodes.InvalidParams, f"{data['method']}: the params are not valid: {error}"),
    )
    return True


def _json_or_none(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return None


def _refuse_non_message(data: Any, protocol: JsonRPCProtocol) -> None:
    """JSON that is no JSON-RPC message pygls knows (``{}``, ``null``, a batch, an
    id without a method): answered InvalidRequest when it carries an id to answer,
    else only logged. The user is not told: it is the client's fault, not theirs."""
    if isinstance(data, dict):
        shown = "an object with keys " + ", ".join(map(str, data)) if data else "{}"
    else:
        shown = "null" if data is None else type(data).__name__
    log.warning("ignored a message that is not a JSON-RPC request, response or notification: %s", shown)
    if isinstance(data, dict) and type(data.get("id")) in (int, str):
        protocol._send_response(
            data["id"], error=types.ResponseError(types.ErrorCodes.InvalidRequest, "not a JSON-RPC request: it has no method")
        )


def _handle(body: bytes, protocol: JsonRPCProtocol, error_handler: Callable[[Exception, type[JsonRpcException]], Any] | None) -> None:
    """Decode one message and hand it to pygls; a failure is logged and reported,
    and a request that cannot be read is answered (see _refused_request)."""
    try:
        message = decode(body, protocol)
    except Exception as exc:
        if _refused_request(body, protocol, exc):
            return
        data = _json_or_none(body)
        if isinstance(data, dict) and "method" not in data and "result" not in data and "error" not in data:
            _refuse_non_message(data, protocol)
            return
        log.exception("Unable to read message")
        if error_handler is not None:
            error_handler(exc, JsonRpcException)
        return
    if type(message) is dict or type(message) is list or message is None:
        _refuse_non_message(message, protocol)
        return
    try:
        protocol.handle_message(message)
    except Exception as exc:
        log.exception("Unable to handle message")
        if error_handler is not None:
            error_handler(exc, JsonRpcException)


def max_message_bytes() -> int:
    """The longest message read: ``$RAG_LSP_MAX_MESSAGE_BYTES``, else MAX_MESSAGE_BYTES."""
    written = os.environ.get("RAG_LSP_MAX_MESSAGE_BYTES", "")
    if written.isascii() and written.isdigit() and 0 < len(written) <= 15 and int(written) > 0:
        return int(written)
    return MAX_MESSAGE_BYTES


async def read_messages(
    stop_event: Event,
    reader: Any,
    protocol: JsonRPCProtocol,
    error_handler: Callable[[Exception, type[JsonRpcException]], Any] | None = None,
    on_large: OnLarge | None = None,
) -> None:
    """Read and handle messages until the input ends or ``stop_event`` is set.

    ``reader`` has ``readline()`` and ``readexactly(n)`` coroutines (pygls's
    stdin reader, or an asyncio stream)."""
    content_length = 0
    handled: Callable[[], None] | None = None  # what the announcement asked to call
    limit = max_message_bytes()
    while not stop_event.is_set():
        header = await reader.readline()
        if not header:
            break
        if not content_length:
            match = _CONTENT_LENGTH.fullmatch(header)
            if match:
                digits = match.group(1)
                # More digits than any length could have: the rest of the stream.
                content_length = int(digits) if len(digits) <= 15 else 10**15
                if on_large is not None and LARGE_MESSAGE_BYTES <= content_length <= limit:
                    try:
                        handled = on_large(content_length)
                    except Exception:  # a preparation only: the message is read regardless
                        log.exception("preparing for a large message failed")
        # The headers end with an empty line.
        if content_length and not header.strip() and content_length > limit:
            # Past any document the server would read: skipped a piece at a time,
            # never held, and the next message is read as usual.
            log.error(
                "a message of %s bytes was announced, above the limit of %s: it is skipped", f"{content_length:,}", f"{limit:,}"
            )
            left, content_length = content_length, 0
            try:
                while left:
                    piece = await reader.readexactly(min(left, SKIP_PIECE_BYTES))
                    if not piece:
                        return
                    left -= len(piece)
            except (asyncio.IncompleteReadError, EOFError):
                return
            finally:
                if handled is not None:
                    handled, done = None, handled
                    done()
            continue
        if content_length and not header.strip():
            try:
                body = await reader.readexactly(content_length)
                if not body:
                    break
                _handle(body, protocol, error_handler)
                # A document of 20 MB is kept by the workspace as lines: its
                # body is not kept as well while the server checks it.
                del body
            finally:
                content_length = 0
                if handled is not None:
                    handled, done = None, handled
                    done()


def serve_stdio(server: Any, on_large: OnLarge | None = None) -> None:
    """``server.start_io()`` with :func:`read_messages` as its loop (as pygls's
    ``_start_io_async``, over this process's stdin and stdout)."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    widen_pipe(stdin)
    widen_pipe(stdout)
    server._stop_event = Event()
    server.protocol.set_writer(StdoutWriter(stdout))
    reader = StdinAsyncReader(stdin, server.thread_pool)
    try:
        asyncio.run(read_messages(server._stop_event, reader, server.protocol, server.report_server_error, on_large))
    except BrokenPipeError:
        log.error("Connection to the client is lost! Shutting down the server.")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()


def serve_tcp(server: Any, host: str, port: int, on_large: OnLarge | None = None) -> None:
    """``server.start_tcp(host, port)`` with :func:`read_messages` as its loop."""
    server._stop_event = stop_event = Event()

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        server.protocol.set_writer(writer)
        await read_messages(stop_event, reader, server.protocol, server.report_server_error, on_large)
        server.shutdown()

    async def listen() -> None:
        server._server = await asyncio.start_server(connection, host, port)
        async with server._server:
            await server._server.serve_forever()

    try:
        asyncio.run(listen())
    except asyncio.CancelledError:
        log.debug("the server was cancelled")
