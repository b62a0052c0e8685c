"""The editor, as each part of the server speaks to it.

The server (:mod:`rag_lsp.server.server`) owns one diagnostics session, one run
manager, the code lenses and the code actions. Each part is given the narrow
interface it uses, never the server itself: what a part may touch is read in
its signature, and a part can be tested with only that. This is the one both
rooms use, the client; what a room uses of the other it declares itself
(:mod:`rag_lsp.server.checking.roles`, :mod:`rag_lsp.server.running.roles`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from lsprotocol import types

if TYPE_CHECKING:
    from pygls.progress import Progress
    from pygls.protocol import JsonRPCProtocol
    from pygls.workspace import Workspace


class Client(Protocol):
    """The editor, as pygls's LanguageServer speaks to it: its open documents and
    capabilities, and what is sent to it (diagnostics, progress, messages)."""

    @property
    def workspace(self) -> Workspace: ...

    @property
    def client_capabilities(self) -> types.ClientCapabilities: ...

    @property
    def work_done_progress(self) -> Progress: ...

    @property
    def protocol(self) -> JsonRPCProtocol: ...

    def text_document_publish_diagnostics(self, params: types.PublishDiagnosticsParams) -> None: ...

    def workspace_diagnostic_refresh(self, params: None) -> Any: ...

    def workspace_code_lens_refresh(self, params: None) -> Any: ...

    def window_show_message(self, params: types.ShowMessageParams) -> None: ...



def asks_for(only: list[str] | None, kind: str) -> bool:
    """Whether a client asking for code actions of the kinds ``only`` (None: of
    every kind) asks for those of ``kind``: one of them, or a kind under one."""
    return only is None or any(kind == asked or kind.startswith(asked + ".") for asked in only)
