"""The JSON-RPC protocol of the server: pygls's, with three additions.

* **Cancelled requests reach the runs.** pygls answers ``$/cancelRequest`` for a
  ``workspace/executeCommand`` by cancelling the request's future, but the
  command's coroutine keeps running; :meth:`RagProtocol.handle_message` also
  tells the server, which stops the run the request started.
* **Answers already written as JSON.** A handler may answer a :class:`RawJson`:
  its text is written as the response's result as it is. A code-lens answer for
  a 100,000-line dataset is 100,000 lenses; as lsprotocol objects converted by
  cattrs it takes seconds on the message loop, as one joined string milliseconds.
* **Handlers leave nothing behind.** pygls (2.1) files the future of each
  handler it runs as a coroutine, a generator or on a thread, and only a
  request's answer removes it: the future of a notification, and that of each
  step of a generator handler (pygls's own ``didOpen``, ``didChange``,
  ``executeCommand`` … run the server's handlers as such steps), stay filed
  under a fresh id for the life of the server, with their results (a run's
  summary): every keystroke and every run would keep one.
  :meth:`RagProtocol._execute_handler` removes each when it is done.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from typing import Any, Callable

from lsprotocol import types
from pygls.protocol import LanguageServerProtocol

log = logging.getLogger(__name__)


class RawJson:
    """A result already serialized: ``text`` is a JSON value."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


class RagProtocol(LanguageServerProtocol):
    """pygls's language server protocol, telling the server about cancelled requests
    and writing :class:`RawJson` results as they are."""

    # Called with the id of each request the client cancels (set by the server).
    on_cancel: Callable[[Any], None] | None = None

    def handle_message(self, message: Any) -> None:
        if getattr(message, "method", None) == types.CANCEL_REQUEST and self.on_cancel is not None:
            try:
                self.on_cancel(message.params.id)
            except Exception:  # a failing listener must not lose the cancellation
                log.exception("handling a cancelled request failed")
        super().handle_message(message)

    def _execute_handler(self, msg_id: Any, handler: Any, callback: Any, args: Any = None, kwargs: Any = None) -> None:
        super()._execute_handler(msg_id, handler, callback, args, kwargs)
        # A request's own future is forgotten by pygls when it answers; this also
        # forgets those of notifications and of generator steps, which it keeps.
        future = self._request_futures.get(msg_id)
        if future is None:
            return
        if future.done():
            del self._request_futures[msg_id]
        else:
            # Forgotten on the loop's next turn, not in the callback itself: a thread's
            # future runs it at once when cancelled, and at shutdown pygls cancels
            # these futures while it iterates over them.
            loop = asyncio.get_running_loop()
            futures = self._request_futures

            def forget() -> None:
                if futures.get(msg_id) is future:  # not a later request that reused the id
                    del futures[msg_id]

            def forget_later(_: Any) -> None:
                if not loop.is_closed():
                    loop.call_soon_threadsafe(forget)

            future.add_done_callback(forget_later)

    def _send_data(self, data: Any) -> None:
        result = getattr(data, "result", None)
        if isinstance(result, RawJson) and self.writer is not None:
            body = '{"jsonrpc": "2.0", "id": ' + json.dumps(data.id) + ', "result": ' + result.text + "}"
            payload = body.encode("utf-8")
            written = self.writer.write(b"Content-Length: %d\r\n\r\n" % len(payload) + payload)
            if inspect.isawaitable(written):  # as pygls does for asynchronous writers
                asyncio.ensure_future(written)
            return
        super()._send_data(data)
