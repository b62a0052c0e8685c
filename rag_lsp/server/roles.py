"""What each part of the server uses of the others.

The server (:mod:`rag_lsp.server.server`) owns one diagnostics session, one run
manager, the code lenses and the code actions. Each part is given the narrow
interface it uses, never the server itself: what a part may touch is read in
its signature, and a part can be tested with only that.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from lsprotocol import types

if TYPE_CHECKING:
    from pygls.progress import Progress
    from pygls.protocol import JsonRPCProtocol
    from pygls.workspace import Workspace

    from .runs import RunManager
    from .session import Session


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


class Editing(Client, Protocol):
    """What the editing features (completion, hover, links, definitions, symbols)
    use: the client, the session whose worker answers them, and the runs (the
    results shown beside a case, the builtin target's index)."""

    @property
    def session(self) -> Session: ...

    @property
    def runs(self) -> RunManager: ...
