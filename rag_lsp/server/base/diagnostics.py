"""A file's diagnostics, as checking hands them to what publishes them.

A check pass (:mod:`rag_lsp.server.checking`) leaves one :class:`FileDiagnostics`
per file; the runs (:mod:`rag_lsp.server.running`) add their results after the
findings before the file is published.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from lsprotocol import types


@dataclass
class FileDiagnostics:
    uri: str
    version: int | None
    diagnostics: Sequence[types.Diagnostic]
    root: Path
    # Each diagnostic as JSON, kept with the diagnostic across passes: a push of a
    # thousand diagnostics is then a join, not a thousand conversions.
    json: list[str] = field(default_factory=list)

    @property
    def complete_json(self) -> list[str] | None:
        """``json``, when it has every diagnostic's."""
        return self.json if len(self.json) == len(self.diagnostics) else None
