"""How a command of the ``rag-lsp`` command line ends: its exit codes, and the
error that ends it as a usage error (exit code 2)."""

from __future__ import annotations

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_ERROR = 2


class UsageError(Exception):
    """A problem with how the command was called; exit code 2."""
