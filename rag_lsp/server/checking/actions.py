"""Code actions: the quick fixes findings carry, and the index's top hit.

* **Quick fixes** (``quickfix``, bound to their diagnostic): looked up, never
  recomputed. Each finding that a person can fix mechanically carries its fixes
  in the ``data.fixes`` of the diagnostic the server keeps for it
  (:func:`~rag_lsp.server.base.convert.fix_json`: titles and text edits already in the
  client's encoding, or a file to create; the client is sent the diagnostic
  without them, see :func:`~rag_lsp.server.base.convert.wire_json`), so an action is
  the published diagnostic's own edit: RAG101 did-you-mean, RAG102 remove the threshold,
  RAG103 add ``rag.mode.semantic: 1``, RAG105 create the dataset (a ``CreateFile``
  resource operation, offered to clients that support it), RAG202 make the id
  unique, RAG206 normalize the path. Edits are versioned when the client takes
  document changes, so a fix computed for an older text is refused, not misapplied.
* **The index's top hit** (``refactor.rewrite.ragLsp.addRelevant``): on a case
  line, "Add the top hit as relevant: <path>" appends the first file the
  dataset's builtin target finds for the case's query to its ``expect.relevant``
  (only the bytes it must: ``, "<path>"`` after the last element, or the path
  inside ``[]``), when an index is already built and the file is not listed yet.

The actions that run a case or a suite are the running side's
(:mod:`rag_lsp.server.running.run_actions`); the server answers both together.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence
from urllib.parse import unquote

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.protocol import default_converter

from ... import collector
from ...core.checking.rules import fix_of_every_occurrence
from ...core.reading.datasetlines import dataset_lines
from ...core.workspace.documents import document_relative
from ...core.reading.findings import SOURCE
from ...core.editing.suggest import add_relevant, top_hit
from ...core.reading.text import LineIndex
from ...core.workspace.workspace import DATASET_FILE
from ..base.client import asks_for
from ..base.convert import Positions, client_column, encoding_name, fix_json
from ..base.document import LineDocument
from ..base.uris import path_of
from .checker import Checker
from .conversions import ConvertedDiagnostics

if TYPE_CHECKING:
    from ..base.client import Client
    from .roles import Suggestions
    from .session import Session

log = logging.getLogger(__name__)

ADD_RELEVANT_KIND = "refactor.rewrite.ragLsp.addRelevant"
KINDS = [types.CodeActionKind.QuickFix, ADD_RELEVANT_KIND]

def _key(diagnostic: types.Diagnostic) -> tuple:
    r = diagnostic.range
    return (str(diagnostic.code), r.start.line, r.start.character, r.end.line, r.end.character, diagnostic.message)


def _on_lines(diagnostics: Sequence[types.Diagnostic], first: int, last: int) -> list[types.Diagnostic]:
    """The diagnostics that start on a line from ``first`` to ``last``."""
    if isinstance(diagnostics, ConvertedDiagnostics):
        return diagnostics.starting_on(first, last)
    return [d for d in diagnostics if first <= d.range.start.line <= last]


def _overlaps(diagnostic: types.Diagnostic, range: types.Range) -> bool:
    start, end = diagnostic.range.start, diagnostic.range.end
    return (start.line, start.character) <= (range.end.line, range.end.character) and (
        range.start.line,
        range.start.character,
    ) <= (end.line, end.character)


class Actions:
    def __init__(self, client: Client, session: Session, runs: Suggestions) -> None:
        self.client = client
        self.session = session
        self.runs = runs
        self._structure = default_converter()

    async def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        uri = params.text_document.uri
        path = path_of(uri)
        if path is None:
            return None
        only = params.context.only
        actions: list[types.CodeAction] = []
        if asks_for(only, types.CodeActionKind.QuickFix):
            # A fix is made for the text as it is: an edit whose check has not
            # run yet would give the last version's fixes, at the old places.
            await self.session.settled()
            try:
                actions.extend(await self._quick_fixes(params, path))
            except Exception:  # one failing feature is logged and never stops the others
                log.exception("quick fixes for %s failed", uri)
        if asks_for(only, ADD_RELEVANT_KIND):
            try:
                actions.extend(await self._add_top_hit(params, path))
            finally:
                self.runs.load_wanted()
        return actions

    # -------------------------------------------------- the index's top hit

    async def _add_top_hit(self, params: types.CodeActionParams, path: Path) -> list[types.CodeAction]:
        """"Add the top hit as relevant" on a case line: the first file the index
        of the dataset's builtin target finds for the case's query, appended to
        its ``expect.relevant``; offered only from an index already built, and
        only when that file is not listed yet. Asked at every move of the cursor,
        so only the cursor's line is read."""
        ls = self.client
        uri = params.text_document.uri
        line = params.range.start.line
        document = ls.workspace.text_documents.get(unquote(uri))
        line_text = document.line_text(line) if isinstance(document, LineDocument) else ""
        if '"expect"' not in line_text:
            return []  # not a case (or not an open document)
        version = document.version
        session = self.session
        folders, settings = session.folders(), session.settings
        runs = self.runs

        def job(checker: Checker) -> tuple[str, tuple[int, int, str]] | None:
            workspace = checker.workspace_for(path, folders, settings)
            if not workspace.contains(path):
                return None
            relative = document_relative(workspace, path)
            if workspace.kind_of(relative) != DATASET_FILE:
                return None
            hit = top_hit(workspace, relative, line_text, runs.index_search(workspace.root))
            edit = add_relevant(line_text, hit.path) if hit is not None else None
            return (hit.path, edit) if hit is not None and edit is not None else None

        try:
            found = await session.on_worker(job)
        except Exception:  # one failing feature is logged and never stops the others
            log.exception("the index's top hit for %s failed", uri)
            return []
        if found is None:
            return []
        hit_path, (start, end, new_text) = found
        encoding = encoding_name(ls.workspace.position_encoding)
        edit_range = types.Range(
            start=types.Position(line=line, character=client_column(line_text, start, encoding)),
            end=types.Position(line=line, character=client_column(line_text, end, encoding)),
        )
        edits = [types.TextEdit(range=edit_range, new_text=new_text)]
        if get_capability(ls.client_capabilities, "workspace.workspace_edit.document_changes", False):
            identifier = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
            workspace_edit = types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(text_document=identifier, edits=edits)])
        else:
            workspace_edit = types.WorkspaceEdit(changes={uri: edits})
        return [types.CodeAction(title=f"Add the top hit as relevant: {hit_path}", kind=ADD_RELEVANT_KIND, edit=workspace_edit)]

    # -------------------------------------------------- quick fixes

    async def _quick_fixes(self, params: types.CodeActionParams, path: Path) -> list[types.CodeAction]:
        ls = self.client
        uri = params.text_document.uri
        published = self.session.published.get(path)
        asked = [d for d in params.context.diagnostics if d.source == SOURCE]
        # Only the published diagnostics on the lines asked about are looked at: a
        # large dataset's are built as objects only when read (see ConvertedDiagnostics).
        lines = [params.range.start.line, params.range.end.line]
        lines += [line for d in asked for line in (d.range.start.line, d.range.end.line)]
        near = _on_lines(published.diagnostics, min(lines), max(lines)) if published is not None else []
        current = {_key(diagnostic): diagnostic for diagnostic in near}
        if not asked:
            # A client that sends no diagnostics: those published under the cursor.
            asked = [d for d in current.values() if _overlaps(d, params.range)]
        document_changes = bool(get_capability(ls.client_capabilities, "workspace.workspace_edit.document_changes", False))
        operations = get_capability(ls.client_capabilities, "workspace.workspace_edit.resource_operations", None) or []
        actions = []
        for diagnostic in asked:
            # Only fixes of what the server has published for this text: the fix of a
            # stale diagnostic would edit text that has moved.
            own = current.get(_key(diagnostic))
            data = own.data if own is not None else None
            fixes = data.get("fixes") if isinstance(data, dict) else None
            if not fixes:
                continue
            for index, fix in enumerate(fixes):
                if fix.get("every") and not fix.get("edits"):
                    fix = await self._every_occurrence(path, diagnostic, fix)
                edit = self._edit(uri, path, fix, published.version if published else None, document_changes, operations)
                if edit is None:
                    continue
                actions.append(
                    types.CodeAction(
                        title=fix.get("title", "Fix"),
                        kind=types.CodeActionKind.QuickFix,
                        diagnostics=[diagnostic],
                        edit=edit,
                        is_preferred=index == 0 or None,
                    )
                )
        return actions

    async def _every_occurrence(self, path: Path, diagnostic: types.Diagnostic, fix: dict[str, Any]) -> dict[str, Any]:
        """The fix of every occurrence of a folded finding (or of a finding over the
        whole dataset) with its edits: an editor is shown it without them (see
        core.reading.findings.for_editor), and they are made here from the dataset's
        findings when it is asked for (see rules.fix_of_every_occurrence)."""
        session = self.session
        folders, settings = session.folders(), session.settings
        encoding = encoding_name(self.client.workspace.position_encoding)
        line, title = diagnostic.range.start.line, fix.get("title")

        @collector.pausing  # tens of thousands of edits are made (see rag_lsp.collector)
        def job(checker: Checker) -> dict[str, Any]:
            workspace = checker.workspace_for(path, folders, settings)
            relative = document_relative(workspace, path)
            model = checker.models.get(path)
            if model is not None:
                findings, lines, texts = model.findings(), model, model.lines
            else:
                source = workspace.read(relative)
                text = source.text if source is not None else ""
                findings, lines, texts = checker.analysis.findings_in_one_go(workspace, relative), LineIndex(text), dataset_lines(text)
            for finding in findings:
                if finding.code == diagnostic.code and finding.range.start.line == line:
                    for every in finding.fixes:
                        if every.every and every.title == title:
                            return fix_json(fix_of_every_occurrence(workspace, relative, texts, finding, every), Positions(lines, encoding))
            return fix

        return await session.on_worker(job)

    def _edit(
        self, uri: str, path: Path, fix: dict[str, Any], version: int | None, document_changes: bool, operations: list
    ) -> types.WorkspaceEdit | None:
        created = fix.get("createFile")
        if created:
            if not document_changes or types.ResourceOperationKind.Create not in operations:
                return None  # the client cannot create files from an edit
            session = self.session
            root = session.checker.root_of(path, session.folders())
            target = (root / created).as_uri()
            return types.WorkspaceEdit(
                document_changes=[types.CreateFile(uri=target, options=types.CreateFileOptions(ignore_if_exists=True))]
            )
        edits = [
            types.TextEdit(range=self._structure.structure(edit["range"], types.Range), new_text=edit["newText"])
            for edit in fix.get("edits", [])
        ]
        if not edits:
            return None
        if document_changes:
            identifier = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
            return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(text_document=identifier, edits=edits)])
        return types.WorkspaceEdit(changes={uri: edits})
