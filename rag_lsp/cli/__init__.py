"""The ``rag-lsp`` command line.

Exit codes: 0 clean, 1 findings at or above ``--fail-on`` (or a failed run), 2 usage
or internal errors. Nothing escapes as a traceback: an unexpected error is reported
in one line (with ``RAG_LSP_DEBUG=1`` for the full trace).
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback

from .. import __version__
from . import logs
from .exits import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, UsageError

__all__ = ["EXIT_ERROR", "EXIT_FINDINGS", "EXIT_OK", "UsageError", "build_parser", "entry", "main"]


def build_parser() -> argparse.ArgumentParser:
    from . import check, compare, import_, run, serve

    parser = argparse.ArgumentParser(
        prog="rag-lsp",
        description="Check retrieval eval suites, datasets and metric manifests; serve them to editors.",
    )
    parser.add_argument("--version", action="version", version=f"rag-lsp {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True
    check.add_parser(commands)
    run.add_parser(commands)
    compare.add_parser(commands)
    import_.add_parser(commands)
    serve.add_parser(commands)
    return parser


def main(argv: list[str] | None = None, *, standalone: bool = False) -> int:
    """Run one command; its exit code. ``standalone``: this process exists only to
    run it (the console command), so a command that leaves nothing to clean up
    may end the process at once (see _end_now)."""
    for stream in (sys.stdout, sys.stderr):
        # Text from datasets may hold lone surrogates ("\ud800" is valid JSON):
        # they are written escaped, never as an error.
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    parser = build_parser()
    try:
        arguments = parser.parse_args(argv)
    except SystemExit as exit:  # argparse exits 2 on usage errors, 0 on --help
        return int(exit.code or 0)
    # Once, for every command: libraries' own log lines stay off stderr (see logs).
    logs.configure(getattr(arguments, "log_level", None) or ("debug" if os.environ.get("RAG_LSP_DEBUG") else "warning"))
    code = _handle(arguments)
    if standalone and getattr(arguments, "ends_at_once", False):
        _end_now(code)
    return code


def entry() -> None:
    """The ``rag-lsp`` console command."""
    sys.exit(main(standalone=True))


def _handle(arguments: argparse.Namespace) -> int:
    try:
        os.getcwd()
    except OSError as error:
        print(
            f"rag-lsp: the current folder cannot be used ({error.strerror or error}: was it deleted?); "
            "run rag-lsp from a folder that exists",
            file=sys.stderr,
        )
        return EXIT_ERROR
    try:
        return arguments.handler(arguments)
    except UsageError as error:
        print(f"rag-lsp: {error}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("rag-lsp: interrupted", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        # The reader went away (e.g. `| head`); nothing more to say.
        return EXIT_ERROR
    except Exception as error:  # noqa: BLE001 - the last line of defence
        if os.environ.get("RAG_LSP_DEBUG"):
            traceback.print_exc()
        print(f"rag-lsp: internal error: {type(error).__name__}: {error}", file=sys.stderr)
        return EXIT_ERROR


def _end_now(code: int) -> None:
    """End the process with ``code`` once the output is written, skipping the
    interpreter's teardown: after checking a large dataset that is freeing
    millions of objects one by one, a tenth of the whole run, for nothing."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:
        code = EXIT_ERROR
    os._exit(code)
