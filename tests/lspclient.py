"""The test client for the language server: a pytest-lsp client over stdio that
keeps what the server sends, and helpers to start a session, open and edit files
and wait (never sleep) for what comes back."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any, Callable, Union

from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

TIMEOUT_S = 20


def converter():
    """pygls's converter, reading a code action with a command as a CodeAction:
    lsprotocol takes every answer item that has a `command` for a Command, though
    a Command's `command` is a string and a CodeAction's an object."""
    converter = default_converter()
    union = Union[types.Command, types.CodeAction]

    def command_or_action(value: Any, _: type) -> Any:
        kind = types.Command if isinstance(value.get("command"), str) else types.CodeAction
        return converter.structure(value, kind)

    converter.register_structure_hook(union, command_or_action)
    return converter


def make_client() -> LanguageClient:
    """The pytest-lsp client, also keeping the last publishDiagnostics (with its
    version) per URI, every version ever published, the capabilities the server
    registers dynamically, and events set by each workspace/diagnostic/refresh and
    workspace/codeLens/refresh."""
    client = LanguageClient(converter_factory=converter)
    client.published = {}  # type: ignore[attr-defined]
    client.history = []  # type: ignore[attr-defined]
    client.registrations = []  # type: ignore[attr-defined]
    client.refreshed = asyncio.Event()  # type: ignore[attr-defined]
    client.lenses_refreshed = asyncio.Event()  # type: ignore[attr-defined]

    def publish(client: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
        client.diagnostics[params.uri] = params.diagnostics
        client.published[params.uri] = params  # type: ignore[attr-defined]
        client.history.append(params)  # type: ignore[attr-defined]

    def register_capability(client: LanguageClient, params: types.RegistrationParams) -> None:
        client.registrations.extend(params.registrations)  # type: ignore[attr-defined]

    def diagnostic_refresh(client: LanguageClient, params: None) -> None:
        client.diagnostic_refresh_count += 1
        client.refreshed.set()  # type: ignore[attr-defined]

    def code_lens_refresh(client: LanguageClient, params: None) -> None:
        client.lenses_refreshed.set()  # type: ignore[attr-defined]

    register_lsp_features(
        client,
        {
            **DEFAULT_CLIENT_FEATURES,
            types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: publish,
            types.CLIENT_REGISTER_CAPABILITY: register_capability,
            types.WORKSPACE_DIAGNOSTIC_REFRESH: diagnostic_refresh,
            types.WORKSPACE_CODE_LENS_REFRESH: code_lens_refresh,
        },
    )
    return client


SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "rag_lsp", "serve"], client_factory=make_client)


async def start(
    client: LanguageClient,
    root: Path | None,
    *,
    options: Any = None,
    encodings: list[str] | None = None,
    pull: bool = False,
) -> types.InitializeResult:
    capabilities = client_capabilities("visual-studio-code")
    if encodings is not None:
        capabilities.general = types.GeneralClientCapabilities(position_encodings=encodings)
    if pull:
        capabilities.text_document.diagnostic = types.DiagnosticClientCapabilities(related_document_support=False)
        capabilities.workspace.diagnostics = types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
    folders = [types.WorkspaceFolder(uri=root.as_uri(), name=root.name)] if root is not None else None
    return await client.initialize_session(
        types.InitializeParams(capabilities=capabilities, workspace_folders=folders, initialization_options=options)
    )


async def until(client: LanguageClient, method: str, predicate: Callable[[], bool]) -> None:
    """Wait for notifications of ``method`` until ``predicate`` holds."""

    async def wait() -> None:
        while not predicate():
            await client.wait_for_notification(method)

    await asyncio.wait_for(wait(), TIMEOUT_S)


async def published_when(client: LanguageClient, uri: str, predicate: Callable[[list[types.Diagnostic]], bool]) -> list[types.Diagnostic]:
    """The diagnostics published for ``uri`` once they satisfy ``predicate``."""

    def arrived() -> bool:
        params = client.published.get(uri)  # type: ignore[attr-defined]
        return params is not None and predicate(list(params.diagnostics))

    await until(client, types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, arrived)
    return list(client.published[uri].diagnostics)  # type: ignore[attr-defined]


async def scanned(client: LanguageClient) -> None:
    """Wait until the server's start-up scan has ended (its work-done progress ends)."""

    def ended() -> bool:
        return any(
            isinstance(report, types.WorkDoneProgressEnd) for reports in client.progress_reports.values() for report in reports
        )

    await until(client, types.PROGRESS, ended)


async def refreshed(client: LanguageClient) -> None:
    """Wait for the server's next workspace/diagnostic/refresh request."""
    await asyncio.wait_for(client.refreshed.wait(), TIMEOUT_S)  # type: ignore[attr-defined]
    client.refreshed.clear()  # type: ignore[attr-defined]


def codes(items: list[types.Diagnostic]) -> list[str]:
    return sorted(str(item.code) for item in items)


def watched(client: LanguageClient, *events: tuple[Path, types.FileChangeType]) -> None:
    """Tell the server that files changed on disk, as an editor's file watcher does."""
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(changes=[types.FileEvent(uri=path.as_uri(), type=kind) for path, kind in events])
    )


async def diagnostics(client: LanguageClient, uri: str, version: int | None) -> list[types.Diagnostic]:
    """The diagnostics published for ``uri`` at ``version`` (None: a file not open)."""

    def arrived() -> bool:
        params = client.published.get(uri)  # type: ignore[attr-defined]
        return params is not None and params.version == version

    await until(client, types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, arrived)
    return list(client.published[uri].diagnostics)  # type: ignore[attr-defined]


def open_file(client: LanguageClient, path: Path, text: str | None = None, version: int = 1) -> str:
    uri = path.as_uri()
    language = "yaml" if path.suffix in (".yaml", ".yml") else "jsonl"
    # As an editor does: a byte-order mark is not part of the document's text.
    text = path.read_text(encoding="utf-8-sig") if text is None else text
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=uri, language_id=language, version=version, text=text))
    )
    return uri


def edit(client: LanguageClient, uri: str, version: int, line: int, start: int, end: int, text: str) -> None:
    edit_range(client, uri, version, types.Range(types.Position(line, start), types.Position(line, end)), text)


def replace_lines(client: LanguageClient, uri: str, version: int, first: int, stop: int, text: str) -> None:
    """Replace lines ``first`` up to ``stop`` (whole lines) with ``text``, as version ``version``."""
    edit_range(client, uri, version, types.Range(types.Position(first, 0), types.Position(stop, 0)), text)


def edit_range(client: LanguageClient, uri: str, version: int, where: types.Range, text: str) -> None:
    change = types.TextDocumentContentChangePartial(range=where, text=text)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version), content_changes=[change]
        )
    )


def spans(items: list[types.Diagnostic]) -> list[tuple[str, str]]:
    """Diagnostics as (code, "line:col-line:col"), sorted."""
    return sorted(
        (str(d.code), f"{d.range.start.line}:{d.range.start.character}-{d.range.end.line}:{d.range.end.character}")
        for d in items
    )


def span(line: int, start: int, end: int) -> str:
    return f"{line}:{start}-{line}:{end}"


def value_span(line: str, value: str, occurrence: int = 1) -> tuple[int, int]:
    index = -1
    for _ in range(occurrence):
        index = line.index(value, index + 1)
    return index, index + len(value)


def document(uri: str) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=uri)


async def quick_fixes(client: LanguageClient, uri: str, diagnostic: types.Diagnostic) -> list[types.CodeAction]:
    """The quick fixes the server offers for ``diagnostic`` (as the client was sent it), each bound to it."""
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=document(uri),
            range=diagnostic.range,
            context=types.CodeActionContext(diagnostics=[diagnostic], only=[types.CodeActionKind.QuickFix]),
        )
    )
    assert actions is not None
    assert all(isinstance(action, types.CodeAction) for action in actions)
    assert all(action.kind == types.CodeActionKind.QuickFix and list(action.diagnostics) == [diagnostic] for action in actions)
    return actions  # type: ignore[return-value]


async def lenses(client: LanguageClient, uri: str) -> list[types.CodeLens]:
    """The document's code lenses, each resolved as an editor resolves a visible one."""
    found = await client.text_document_code_lens_async(types.CodeLensParams(text_document=document(uri)))
    assert found is not None and all(lens.command is None for lens in found)  # resolved lazily
    return [await client.code_lens_resolve_async(lens) for lens in found]


async def execute(client: LanguageClient, command: types.Command) -> Any:
    return await asyncio.wait_for(
        client.workspace_execute_command_async(types.ExecuteCommandParams(command=command.command, arguments=command.arguments)),
        TIMEOUT_S,
    )


def children_of(pid: int) -> list[int]:
    """Every process below ``pid`` (Linux /proc)."""
    found, parents = [], {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    frontier = [pid]
    while frontier:
        parent = frontier.pop()
        for child, its_parent in parents.items():
            if its_parent == parent:
                found.append(child)
                frontier.append(child)
    return found


def _is_server(cmdline: bytes) -> bool:
    return b"rag_lsp" in cmdline and b"rag_lsp.core.checking.parallel" not in cmdline


def server_pid() -> int:
    """The rag-lsp server this test process started."""
    # Not the server's helper process (rag_lsp.core.checking.parallel), which runs below it.
    mine = [pid for pid in children_of(os.getpid()) if _is_server(Path(f"/proc/{pid}/cmdline").read_bytes())]
    assert len(mine) == 1, mine
    return mine[0]


def apply_text_edits(text: str, edits: list[types.TextEdit]) -> str:
    """``text`` with LSP edits applied (ASCII text: UTF-16 columns are code points)."""
    lines = text.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)

    def offset(position: types.Position) -> int:
        return offsets[position.line] + position.character

    for item in sorted(edits, key=lambda e: offset(e.range.start), reverse=True):
        text = text[: offset(item.range.start)] + item.new_text + text[offset(item.range.end) :]
    return text
