"""``rag-lsp serve``: the language server, over stdio (default) or TCP."""

from __future__ import annotations

import argparse
import os
import sys

from .exits import EXIT_OK, UsageError

SWITCH_INTERVAL_S = 0.001


def add_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "serve",
        help="run the language server (stdio by default)",
        description="Run the language server. Editors start it over stdio; --tcp serves one client on a socket.",
    )
    parser.add_argument("--tcp", metavar="HOST:PORT", help="listen on HOST:PORT instead of stdio")
    parser.add_argument("--stdio", action="store_true", help="talk over stdin/stdout (the default)")
    parser.add_argument(
        "--log-level",
        choices=("debug", "info", "warning", "error"),
        default="debug" if os.environ.get("RAG_LSP_DEBUG") else "warning",
        help="level of the log written to stderr (default: warning)",
    )
    parser.set_defaults(handler=run_serve)


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6) as a host and a port."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"--tcp expects HOST:PORT, got {text!r}")
    return host.strip("[]"), int(port)


def run_serve(arguments: argparse.Namespace) -> int:
    if arguments.tcp and arguments.stdio:
        raise UsageError("choose one of --stdio and --tcp")
    address = parse_address(arguments.tcp) if arguments.tcp else None
    # The message loop, the checking thread and the thread collecting the helper
    # process's answers share the interpreter's lock: one waiting for it gets it
    # within a millisecond instead of five, so requests are answered while a long
    # check holds the lock.
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    # The helper process that shares the reading of large datasets starts first:
    # its interpreter and modules load while this process loads the server's
    # (half a second), where an editor opening a large dataset right away would
    # wait for it. The first check of the workspace stops it if no dataset
    # there needs it.
    from ..core.checking.analysis import Analysis

    analysis = Analysis()
    analysis.expect_large()
    from ..server import create_server
    from ..server.base.transport import serve_stdio, serve_tcp

    server = create_server(analysis)
    if address is not None:
        serve_tcp(server, *address, on_large=server.large_message_coming)
    else:
        serve_stdio(server, on_large=server.large_message_coming)
    return EXIT_OK
