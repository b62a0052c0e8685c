"""The command line run in this process, for tests that run it thousands of times:
its exit code, what it printed, and the errors it logged."""

from __future__ import annotations

import contextlib
import gc
import io
import logging
from dataclasses import dataclass

from rag_lsp.cli import main


class Errors(logging.Handler):
    """Errors logged while a command ran: a rule or a target that raised is a bug,
    even when the command carried on without it."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@dataclass(frozen=True)
class Ran:
    code: int
    stdout: str
    stderr: str
    errors: list[logging.LogRecord]

    def logged(self) -> str:
        """The errors logged, each with its traceback."""
        return "".join(f"{record.getMessage()}\n{record.exc_text or ''}" for record in self.errors)


def run_in_process(arguments: list[str]) -> Ran:
    """``rag-lsp ARGUMENTS`` through the command line's entry point, in this process."""
    out, err, errors = io.StringIO(), io.StringIO(), Errors()
    logger = logging.getLogger("rag_lsp")
    logger.addHandler(errors)
    collecting = gc.isenabled()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(arguments)
    finally:
        logger.removeHandler(errors)
        if collecting:
            gc.enable()  # the command line turns the cycle collector off for its one-shot run
    return Ran(code, out.getvalue(), err.getvalue(), errors.records)
