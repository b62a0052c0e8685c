"""The rag-lsp language server: live diagnostics for suites, datasets and manifests,
completion, hover, links, definitions and symbols to write them, and runs of cases
and suites from the editor with their results inline.

:func:`create_server` builds a fresh server with its handlers; there is no
module-global instance. Handlers stay thin: documents are kept by pygls (incremental
sync), checks are scheduled by the :class:`~rag_lsp.server.checking.session.Session`,
and the analysis itself is the core's one way into checking (:class:`~rag_lsp.core.checking.analysis.Analysis`), the same as ``rag-lsp check``'s;
the editing features are the core's pure functions behind
:mod:`rag_lsp.server.checking.features`, quick fixes
:mod:`rag_lsp.server.checking.actions`'s; runs and their results are
:mod:`rag_lsp.server.running.runs`'s, code lenses and the run actions
:mod:`rag_lsp.server.running.lenses`'s and :mod:`rag_lsp.server.running.run_actions`'s.

This module is where the two rooms meet: checking (:mod:`rag_lsp.server.checking`)
and running (:mod:`rag_lsp.server.running`) never import each other, and each is
handed the other here as the narrow interface it declares.
"""

from __future__ import annotations

import logging
from typing import Any, Callable
from urllib.parse import unquote

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer

from .. import __version__
from ..core.checking.analysis import Analysis
from ..core.workspace.settings import EditorSettings, editor_values
from .base.document import use_line_documents
from .base.protocol import RagProtocol
from .base.uris import path_of
from .checking import actions, features
from .checking.actions import Actions
from .checking.session import DEBOUNCE_S, Session
from .running import lenses, run_actions, run_commands
from .running.lenses import Lenses
from .running.run_actions import RunActions
from .running.runs import RunManager

log = logging.getLogger(__name__)

SECTION = "ragLsp"

# Quick fixes (and the index's top hit) are the checking room's, runs the running room's.
CODE_ACTION_KINDS = [types.CodeActionKind.QuickFix, *run_actions.KINDS, actions.ADD_RELEVANT_KIND]

# A request of our own: the text the server holds for an open document.
DOCUMENT_TEXT = "ragLsp/documentText"


class RagLanguageServer(LanguageServer):
    """A pygls server holding one diagnostics session."""

    def __init__(self, analysis: Analysis | None = None) -> None:
        """``analysis``: what its checks go through, with the helper process that
        shares large readings (see Checker); by default one of its own."""
        super().__init__(
            "rag-lsp", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental, protocol_cls=RagProtocol
        )
        # Each part is given what it uses (see base.client, checking.roles and
        # running.roles), the server being the client: the session is what the
        # running room's Checks are, the run manager what the checking room's
        # Suggestions are.
        self.session = Session(self, analysis)
        self.runs = RunManager(self, self.session)
        self.lenses = Lenses(self.session, self.runs)
        self.actions = Actions(self, self.session, self.runs)
        self.run_actions = RunActions(self.session)
        # Run results are published with each file's findings.
        self.session.extra = self.runs.decorate
        self.protocol.on_cancel = self.runs.cancel_request
        # Settings from initializationOptions: workspace/configuration applies on top.
        self.initial_settings = EditorSettings()
        self.setting_problems: list[str] = []

    def large_message_coming(self, length: int) -> Callable[[], None]:
        """A message of ``length`` bytes is arriving: most likely a large dataset
        opened, whose first reading a helper process shares; it starts now, while
        the message arrives and decodes, rather than when the reading begins. A
        pass waits for the message (see Session.message_arriving): what to call
        once it has been handled."""
        checker = self.session.checker
        checker.large_document_coming.set()
        checker.analysis.expect_large()
        return self.session.message_arriving()

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


# Datasets, suites, manifests and the targets config: every change counts. Any
# other file (one a case names in ``relevant``, a folder): only its creation or
# deletion. ``.gitignore`` files decide which files are workspace files.
WATCHERS = (
    types.FileSystemWatcher(glob_pattern="**/*.{yaml,yml,jsonl}"),
    types.FileSystemWatcher(glob_pattern="**/*", kind=types.WatchKind.Create | types.WatchKind.Delete),
    types.FileSystemWatcher(glob_pattern="**/.gitignore"),
    # The workspace's settings file: every change re-reads the settings.
    types.FileSystemWatcher(glob_pattern="**/{.punica/rag-lsp.toml,pyproject.toml}"),
)


async def _watch_files(ls: RagLanguageServer) -> None:
    """Ask the client to report changes of workspace files, when it can register dynamically."""
    if not get_capability(ls.client_capabilities, "workspace.did_change_watched_files.dynamic_registration", False):
        return
    registration = types.Registration(
        id="rag-lsp/watched-files",
        method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
        register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=list(WATCHERS)),
    )
    try:
        await ls.client_register_capability_async(types.RegistrationParams(registrations=[registration]))
    except Exception:  # a client that refuses still gets diagnostics; it re-checks on edits only
        log.warning("the client refused to watch files", exc_info=True)


async def _load_configuration(ls: RagLanguageServer, pushed: Any = None) -> None:
    """The editor's settings: initializationOptions, then the client's ``ragLsp``
    section (each workspace's settings file lies below them); a bad value is
    shown to the user and left out."""
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
    values, more = editor_values(client_options(value))
    settings = ls.initial_settings.then(EditorSettings(values))
    problems += more
    if problems:
        ls.warn("rag-lsp: " + "; ".join(problems))
    if settings != ls.session.settings:
        ls.session.settings = settings
        ls.session.changed(full=True)
        ls.runs.settings_changed()


def create_server(analysis: Analysis | None = None) -> RagLanguageServer:
    """A new rag-lsp server with its handlers registered; ``analysis``: see
    RagLanguageServer."""
    server = RagLanguageServer(analysis)

    @server.feature(types.INITIALIZE)
    def initialize(ls: RagLanguageServer, params: types.InitializeParams) -> None:
        # Documents are kept as lines: an edit of a 100k-line dataset costs its lines.
        use_line_documents(ls.workspace)
        values, problems = editor_values(client_options(params.initialization_options))
        ls.initial_settings = ls.session.settings = EditorSettings(values)
        ls.setting_problems = problems
        if _supports_pull(params.capabilities):
            # Registered here so the capability is declared only to clients that pull;
            # they are then never pushed the same diagnostics.
            ls.session.pull = True
            ls.session.refresh_support = bool(
                get_capability(params.capabilities, "workspace.diagnostics.refresh_support", False)
            )
            ls.feature(
                types.TEXT_DOCUMENT_DIAGNOSTIC,
                types.DiagnosticOptions(identifier="rag-lsp", inter_file_dependencies=True, workspace_diagnostics=True),
            )(document_diagnostic)
            ls.feature(types.WORKSPACE_DIAGNOSTIC)(workspace_diagnostic)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: RagLanguageServer, params: types.InitializedParams) -> None:
        await _load_configuration(ls)
        await _watch_files(ls)
        ls.session.start()
        await ls.session.scan()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: RagLanguageServer, params: types.DidChangeConfigurationParams) -> None:
        await _load_configuration(ls, pushed=params.settings)

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def did_change_workspace_folders(ls: RagLanguageServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        # pygls has updated its folders: scan the new ones, forget the removed ones
        # (and stop their targets' processes).
        ls.session.changed(full=True)
        ls.runs.folders_changed()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: RagLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.runs.opened(params.text_document.uri)
        ls.session.changed()

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: RagLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        # Run results move with their lines (and go with the lines edited).
        ls.runs.edited(params)
        # A dataset edit is checked line by line: no need to wait for typing to stop.
        ls.session.changed(delay=0.0 if params.text_document.uri.endswith(".jsonl") else DEBOUNCE_S)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: RagLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.runs.closed(params.text_document.uri)
        ls.session.changed()

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls: RagLanguageServer, params: types.DidChangeWatchedFilesParams) -> None:
        open_documents = ls.workspace.text_documents
        paths = []
        for event in params.changes:
            if event.type == types.FileChangeType.Changed and unquote(event.uri) in open_documents:
                continue  # the editor's text, not the disk's, is what is checked
            path = path_of(event.uri)
            if path is not None:
                paths.append(path)
        ls.runs.files_changed(paths)
        ls.session.files_changed(paths)

    @server.feature(types.SHUTDOWN)
    async def shutdown(ls: RagLanguageServer, params: None) -> None:
        await ls.runs.shutdown()
        ls.session.shutdown()

    async def document_diagnostic(
        ls: RagLanguageServer, params: types.DocumentDiagnosticParams
    ) -> types.DocumentDiagnosticReport:
        await ls.session.settled()
        return ls.session.document_report(params.text_document.uri, params.previous_result_id)

    async def workspace_diagnostic(
        ls: RagLanguageServer, params: types.WorkspaceDiagnosticParams
    ) -> types.WorkspaceDiagnosticReport:
        await ls.session.settled()
        previous = {item.uri: item.value for item in params.previous_result_ids}
        return ls.session.workspace_report(previous)

    server.feature(
        types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=features.TRIGGER_CHARACTERS)
    )(features.completion)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: RagLanguageServer, params: types.HoverParams) -> types.Hover | None:
        # The usual hover, with the result of a case that ran on this line before it.
        return lenses.hover(ls.runs, ls.client_capabilities, params, await features.hover_at(ls, params))

    server.feature(types.TEXT_DOCUMENT_DOCUMENT_LINK, types.DocumentLinkOptions())(features.document_links)
    server.feature(types.TEXT_DOCUMENT_DEFINITION)(features.goto_definition)
    server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)(features.document_symbols)
    server.feature(DOCUMENT_TEXT)(document_text)

    # ------------------------------------------------------------ runs

    @server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=True))
    async def code_lens(ls: RagLanguageServer, params: types.CodeLensParams) -> Any:
        return await ls.lenses.code_lens(params)

    @server.feature(types.CODE_LENS_RESOLVE)
    def code_lens_resolve(ls: RagLanguageServer, params: types.CodeLens) -> types.CodeLens:
        return ls.lenses.resolve(params)

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(code_action_kinds=CODE_ACTION_KINDS))
    async def code_action(ls: RagLanguageServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        fixes = await ls.actions.code_actions(params)
        if fixes is None:
            return None  # not a file
        return fixes + (await ls.run_actions.code_actions(params) or [])

    run_commands.register(server)

    return server


def document_text(ls: RagLanguageServer, params: Any) -> dict[str, Any]:
    """``ragLsp/documentText {uri}``: the text and version the server holds for an
    open document.

    The editor and the server each apply the same incremental changes to their own
    copy of a document; when diagnostics sit in the wrong place, comparing the two
    copies tells whether the edits went astray on the way (a position encoding, a
    line ending) or the checks did. A document that is not open is refused.
    """
    uri = getattr(params, "uri", None)
    if not isinstance(uri, str):
        raise JsonRpcInvalidParams(f'{DOCUMENT_TEXT} takes {{"uri": <the URI of an open document>}}')
    document = ls.workspace.text_documents.get(unquote(uri))
    if document is None:
        raise JsonRpcInvalidParams(f"not an open document: {uri}")
    return {"uri": uri, "version": document.version, "text": document.source}
