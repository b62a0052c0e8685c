"""The rag-lsp language server: live diagnostics for suites, datasets and manifests.

:func:`create_server` builds a fresh server with its handlers; there is no
module-global instance. Handlers stay thin: documents are kept by pygls (incremental
sync), checks are scheduled by the :class:`~rag_lsp.server.session.Session`, and the
analysis itself is the core's ``analyze_file``, the same as ``rag-lsp check``.
"""

from __future__ import annotations

import logging
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from .. import __version__
from ..core.settings import Settings, settings_from
from .session import DEBOUNCE_S, Session

log = logging.getLogger(__name__)

SECTION = "ragLsp"


class RagLanguageServer(LanguageServer):
    """A pygls server holding one diagnostics session."""

    def __init__(self) -> None:
        super().__init__("rag-lsp", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.session = Session(self)
        # Settings from initializationOptions: workspace/configuration applies on top.
        self.initial_settings = Settings()
        self.setting_problems: list[str] = []

    def warn(self, message: str) -> None:
        self.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=message))


def client_options(value: Any) -> Any:
    """The rag-lsp settings in a client's object: ``{"ragLsp": {...}}`` or flat."""
    if isinstance(value, dict) and isinstance(value.get(SECTION), dict):
        rest = {key: item for key, item in value.items() if key != SECTION}
        return {**rest, **value[SECTION]}
    return value


def _supports_pull(capabilities: types.ClientCapabilities) -> bool:
    return bool(capabilities.text_document and capabilities.text_document.diagnostic is not None)


def _supports_configuration(capabilities: types.ClientCapabilities) -> bool:
    return bool(capabilities.workspace and capabilities.workspace.configuration)


async def _load_configuration(ls: RagLanguageServer, pushed: Any = None) -> None:
    """Settings = defaults, then initializationOptions, then the client's ``ragLsp``
    section; a bad value is shown to the user and replaced by its default."""
    problems = list(ls.setting_problems)
    ls.setting_problems = []
    value = pushed
    if _supports_configuration(ls.client_capabilities):
        try:
            answer = await ls.workspace_configuration_async(
                types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)])
            )
            value = answer[0] if answer else None
        except Exception:  # a client that fails the request keeps the settings it gave at start
            log.warning("workspace/configuration failed", exc_info=True)
    settings, more = settings_from(client_options(value), ls.initial_settings)
    problems += more
    if problems:
        ls.warn("rag-lsp: " + "; ".join(problems))
    if settings != ls.session.settings:
        ls.session.settings = settings
        ls.session.changed(full=True)


def create_server() -> RagLanguageServer:
    """A new rag-lsp server with its handlers registered."""
    server = RagLanguageServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: RagLanguageServer, params: types.InitializeParams) -> None:
        settings, problems = settings_from(client_options(params.initialization_options))
        ls.initial_settings = ls.session.settings = settings
        ls.setting_problems = problems
        if _supports_pull(params.capabilities):
            # Registered here so the capability is declared only to clients that pull.
            ls.feature(
                types.TEXT_DOCUMENT_DIAGNOSTIC,
                types.DiagnosticOptions(identifier="rag-lsp", inter_file_dependencies=True, workspace_diagnostics=False),
            )(document_diagnostic)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: RagLanguageServer, params: types.InitializedParams) -> None:
        await _load_configuration(ls)
        ls.session.start()
        await ls.session.scan()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: RagLanguageServer, params: types.DidChangeConfigurationParams) -> None:
        await _load_configuration(ls, pushed=params.settings)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: RagLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.session.changed()

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: RagLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.session.changed(delay=DEBOUNCE_S)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: RagLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.session.changed()

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: RagLanguageServer, params: None) -> None:
        ls.session.shutdown()

    async def document_diagnostic(
        ls: RagLanguageServer, params: types.DocumentDiagnosticParams
    ) -> types.RelatedFullDocumentDiagnosticReport:
        await ls.session.settled()
        return types.RelatedFullDocumentDiagnosticReport(items=ls.session.diagnostics_for(params.text_document.uri))

    return server
