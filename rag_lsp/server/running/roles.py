"""What the running side uses of the checking side.

The runs, the code lenses and the run actions are given the diagnostics
session as these narrow interfaces, never the session or its checker itself
(see :mod:`rag_lsp.server.base.client`): the folders and settings in force, a
way onto the checker's worker thread, and a way to publish a file's findings
again when its results change. The checking room's
:class:`~rag_lsp.server.checking.session.Session` has all of it, and the
server (:mod:`rag_lsp.server.server`) hands it over; neither room imports the
other.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping, Protocol, TypeVar

if TYPE_CHECKING:
    from ...core.checking.incremental import DatasetModel
    from ...core.workspace.settings import EditorSettings
    from ...core.workspace.workspace import Workspace

T = TypeVar("T")


class Workspaces(Protocol):
    """The checker's core workspaces, as runs and lenses read them: which root a
    file belongs to, its workspace, and the models of the open datasets (the
    last two on the checker's worker thread only)."""

    @property
    def models(self) -> Mapping[Path, DatasetModel]: ...

    def root_of(self, path: Path, folders: tuple[Path, ...]) -> Path: ...

    def workspace_for(self, path: Path, folders: tuple[Path, ...], settings: EditorSettings) -> Workspace: ...


class Checks(Protocol):
    """The diagnostics session, as the running side uses it."""

    @property
    def settings(self) -> EditorSettings: ...

    @property
    def checker(self) -> Workspaces: ...

    def folders(self) -> tuple[Path, ...]:
        """The editor's workspace folders."""
        ...

    async def settled(self) -> None:
        """Wait until every scheduled check has run and been published."""
        ...

    async def on_worker(self, job: Callable[[Workspaces], T]) -> T:
        """Run ``job`` with the checker on its worker thread."""
        ...

    def republish(self, paths: list[Path]) -> None:
        """Send the files' last findings again, with the results shown with them now."""
        ...
