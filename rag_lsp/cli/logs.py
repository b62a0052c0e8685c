"""Where log records go: stderr, for the person reading it, one handler for every
command.

Why it is configured here and not left to ``logging.basicConfig``: a library may
set its own logger's level (bm25s sets its logger to DEBUG when imported), and a
record that passes its own logger's level reaches the root's handlers whatever
the root's level is. Under the server that printed ``DEBUG:bm25s:Building index
from tokens`` on stderr; and a library calling ``logging.warning`` before any
configuration configures the root itself. So the level is a filter on the one
handler: rag-lsp's own records from the level asked (``warning`` by default), and
other packages' records (bm25s, jsonschema, pygls, ...) only at ``debug``, or when
they are errors.
"""

from __future__ import annotations

import logging
import sys

_OWN = "rag_lsp"


class _Shown(logging.Filter):
    def __init__(self, level: int) -> None:
        super().__init__()
        self.level = level

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name == _OWN or record.name.startswith(_OWN + "."):
            return record.levelno >= self.level
        if self.level <= logging.DEBUG:
            return True
        return record.levelno >= logging.ERROR


class _Handler(logging.StreamHandler):
    """The handler these settings install (so that configuring again replaces it)."""


def configure(level_name: str = "warning") -> None:
    """Send log records to stderr: rag-lsp's from ``level_name`` up, other
    packages' only at ``debug`` or as errors."""
    level = getattr(logging, level_name.upper())
    root = logging.getLogger()
    for handler in [handler for handler in root.handlers if isinstance(handler, _Handler)]:
        root.removeHandler(handler)
    # stdout carries reports and the protocol: logs go to stderr only.
    handler = _Handler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)s:%(name)s:%(message)s"))
    handler.addFilter(_Shown(level))
    root.addHandler(handler)
    root.setLevel(level)
