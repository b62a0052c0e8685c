"""Completion, hover, document links, go-to-definition and document symbols.

The protocol edge of the core's pure functions (``core.editing.completion``,
``core.editing.hover``, ``core.editing.navigation``): each handler takes the document's current
text from pygls, converts the client's position to code points, asks the core on
the worker thread (where the workspace facts live), and converts the answer's
ranges back to the negotiated encoding. What the client declares it can show
(Markdown, tooltips, hierarchical symbols, location links, label details)
decides the shape of the answer.

Completion inside a case's ``expect.relevant`` also asks the builtin target's
index for the files it finds for the case (:mod:`rag_lsp.core.editing.suggest`), through
the run manager, which answers only from an index a run already built or the
cache holds (:meth:`~rag_lsp.server.checking.roles.Suggestions.index_search`): a
request never builds one nor waits for one.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from lsprotocol import types
from pygls.capabilities import get_capability

from ...core.editing.completion import CORPUS, ENGINE, ENUM, FILE, METRIC, PROPERTY, TARGET, VALUE_KIND, complete
from ...core.workspace.documents import document_relative
from ...core.editing.hover import hover
from ...core.editing.navigation import CASE, ENTRY, KEY_SYMBOL, SUITE, Symbol, definition, links, symbols
from ...core.reading.text import LineIndex, Position, Range
from ...core.reading.sources import SourceText
from ...core.workspace.workspace import Workspace
from ..base.convert import COMPLETION_MARKUP, HOVER_MARKUP, Positions, encoding_name, file_uri, markup
from ..base.uris import path_of

if TYPE_CHECKING:
    from .roles import Editing

log = logging.getLogger(__name__)

T = TypeVar("T")

TRIGGER_CHARACTERS = ['"', "/", ".", ":", " ", "[", "{", ","]

_COMPLETION_KINDS = {
    PROPERTY: types.CompletionItemKind.Property,
    VALUE_KIND: types.CompletionItemKind.Value,
    ENUM: types.CompletionItemKind.EnumMember,
    ENGINE: types.CompletionItemKind.Module,
    METRIC: types.CompletionItemKind.Field,
    TARGET: types.CompletionItemKind.Reference,
    FILE: types.CompletionItemKind.File,
    CORPUS: types.CompletionItemKind.Folder,
}

_SYMBOL_KINDS = {
    SUITE: types.SymbolKind.Module,
    KEY_SYMBOL: types.SymbolKind.Property,
    ENTRY: types.SymbolKind.Field,
    CASE: types.SymbolKind.Object,
}


class DocumentView:
    """A document as the core sees it: its workspace, path, kind and current text."""

    def __init__(self, workspace: Workspace, relative: str, kind: str | None, text: str, positions: Positions) -> None:
        self.workspace = workspace
        self.relative = relative
        self.kind = kind
        self.text = text
        self.positions = positions

    def uri_of(self, relative: str) -> str:
        return file_uri(self.workspace.absolute(relative))


def _kind(workspace: Workspace, relative: str, text: str) -> str | None:
    """What the document is, judged on its current text (not the last checked one)."""
    if relative.endswith((".yaml", ".yml")):
        return workspace.kind_of(relative, workspace.parsed_yaml(relative, SourceText(text)))
    return workspace.kind_of(relative)


async def _with_document(ls: Editing, uri: str, job: Callable[[DocumentView], T]) -> T | None:
    """Run ``job`` on the worker thread with the current text of ``uri``; None (and
    a log entry) when the document is not a file or the job fails."""
    path = path_of(uri)
    if path is None:
        return None
    document = ls.workspace.get_text_document(uri)
    try:
        text = document.source
    except OSError:
        return None
    session = ls.session
    folders = session.folders()
    settings = session.settings
    encoding = encoding_name(ls.workspace.position_encoding)

    def run(checker: Any) -> T | None:
        workspace = checker.workspace_for(path, folders, settings)
        if not workspace.contains(path):
            return None
        relative = document_relative(workspace, path)
        view = DocumentView(workspace, relative, _kind(workspace, relative, text), text, Positions(LineIndex(text), encoding))
        return job(view)

    try:
        return await session.on_worker(run)
    except Exception:  # one failing feature is logged and never stops the others
        log.exception("answering a request on %s failed", uri)
        return None


# ---------------------------------------------------------------- completion


async def completion(ls: Editing, params: types.CompletionParams) -> types.CompletionList | None:
    label_details = bool(get_capability(ls.client_capabilities, "text_document.completion.completion_item.label_details_support", False))

    def job(view: DocumentView) -> types.CompletionList | None:
        position = view.positions.to_core(params.position)
        search = ls.runs.index_search(view.workspace.root)
        result = complete(view.workspace, view.relative, view.kind, view.text, position.line, position.character, search)
        if result is None:
            return None
        items = []
        for item in result.items:
            edit_range = view.positions.range(Range(Position(result.line, item.start), Position(result.line, item.end)))
            items.append(
                types.CompletionItem(
                    label=item.label,
                    label_details=types.CompletionItemLabelDetails(description=item.description)
                    if label_details and item.description
                    else None,
                    kind=_COMPLETION_KINDS.get(item.kind),
                    detail=item.detail or None,
                    documentation=documentation(item.documentation) if item.documentation else None,
                    sort_text=item.sort or None,
                    filter_text=item.filter,
                    text_edit=types.TextEdit(range=edit_range, new_text=item.insert),
                )
            )
        return types.CompletionList(is_incomplete=result.incomplete, items=items)

    def documentation(markdown: str) -> types.MarkupContent | str:
        return markup(ls.client_capabilities, COMPLETION_MARKUP, markdown)

    try:
        return await _with_document(ls, params.text_document.uri, job)
    finally:
        # A builtin target that had no index to suggest from: its cache is looked for, in the background.
        ls.runs.load_wanted()


# ---------------------------------------------------------------- hover


async def hover_at(ls: Editing, params: types.HoverParams) -> types.Hover | None:
    def job(view: DocumentView) -> types.Hover | None:
        position = view.positions.to_core(params.position)
        found = hover(view.workspace, view.relative, view.kind, view.text, position.line, position.character)
        if found is None:
            return None
        contents = markup(ls.client_capabilities, HOVER_MARKUP, found.markdown)
        return types.Hover(contents=contents, range=view.positions.range(found.range))

    return await _with_document(ls, params.text_document.uri, job)


# ---------------------------------------------------------------- links and definition


async def document_links(ls: Editing, params: types.DocumentLinkParams) -> list[types.DocumentLink] | None:
    tooltips = bool(get_capability(ls.client_capabilities, "text_document.document_link.tooltip_support", False))

    def job(view: DocumentView) -> list[types.DocumentLink]:
        return [
            types.DocumentLink(
                range=view.positions.range(link.range),
                target=view.uri_of(link.target),
                tooltip=link.tooltip if tooltips and link.tooltip else None,
            )
            for link in links(view.workspace, view.kind, view.text)
        ]

    return await _with_document(ls, params.text_document.uri, job)


async def goto_definition(
    ls: Editing, params: types.DefinitionParams
) -> list[types.LocationLink] | list[types.Location] | None:
    link_support = bool(get_capability(ls.client_capabilities, "text_document.definition.link_support", False))

    def job(view: DocumentView) -> list[types.LocationLink] | list[types.Location] | None:
        position = view.positions.to_core(params.position)
        found = definition(view.workspace, view.kind, view.text, position.line, position.character)
        if found is None:
            return None
        target = view.uri_of(found.target)
        start = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0))
        if link_support:
            origin = view.positions.range(found.range)
            return [types.LocationLink(target_uri=target, target_range=start, target_selection_range=start, origin_selection_range=origin)]
        return [types.Location(uri=target, range=start)]

    return await _with_document(ls, params.text_document.uri, job)


# ---------------------------------------------------------------- symbols


async def document_symbols(
    ls: Editing, params: types.DocumentSymbolParams
) -> list[types.DocumentSymbol] | list[types.SymbolInformation] | None:
    hierarchical = bool(
        get_capability(ls.client_capabilities, "text_document.document_symbol.hierarchical_document_symbol_support", False)
    )
    uri = params.text_document.uri

    def job(view: DocumentView) -> list[types.DocumentSymbol] | list[types.SymbolInformation]:
        found, _ = symbols(view.kind, view.text)
        if hierarchical:
            return [_document_symbol(symbol, view.positions) for symbol in found]
        flat: list[types.SymbolInformation] = []
        _flatten(found, None, uri, view.positions, flat)
        return flat

    return await _with_document(ls, uri, job)


def _document_symbol(symbol: Symbol, positions: Positions) -> types.DocumentSymbol:
    return types.DocumentSymbol(
        name=symbol.name or "?",
        kind=_SYMBOL_KINDS.get(symbol.kind, types.SymbolKind.Key),
        range=positions.range(symbol.range),
        selection_range=positions.range(symbol.selection),
        detail=symbol.detail or None,
        children=[_document_symbol(child, positions) for child in symbol.children] or None,
    )


def _flatten(
    found: tuple[Symbol, ...] | list[Symbol], container: str | None, uri: str, positions: Positions, out: list[types.SymbolInformation]
) -> None:
    for symbol in found:
        out.append(
            types.SymbolInformation(
                name=symbol.name or "?",
                kind=_SYMBOL_KINDS.get(symbol.kind, types.SymbolKind.Key),
                location=types.Location(uri=uri, range=positions.range(symbol.range)),
                container_name=container,
            )
        )
        _flatten(symbol.children, symbol.name, uri, positions, out)


__all__ = ["TRIGGER_CHARACTERS", "completion", "document_links", "document_symbols", "goto_definition", "hover_at"]
