"""What ``rag-lsp run`` did, as the run command and its output formats share it:
the command fills a :class:`Run`, the formats (:mod:`.run_formats`,
:mod:`.compare_formats`) write it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..core.running.results import SuiteResult
    from ..core.workspace.workspace import Workspace


@dataclass
class Run:
    """What a run did: each suite's result with its workspace, and how long it took."""

    results: list[tuple[Workspace, SuiteResult]] = field(default_factory=list)
    seconds: float = 0.0
    # The match field and k of each suite run, by id() of its result (the TREC format reads them).
    scoring: dict[int, tuple[str, int | None]] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return all(result.passed for _, result in self.results)
