"""Code lenses and the hover of a case that ran.

* **"Run case"** on every line of a dataset that a suite reads: one lens per line
  however many suites read it ("Run case (6 suites)" runs the case in each), so
  the lenses never drown the data; and **"Run suite (N cases)"** on each suite's
  first line in a suite file. After a run the lens shows the figures
  (``recall 0.50 · MRR 0.33``, ``broken: hits carry no path field``, a suite's
  verdict; ``good: recall 1.00 · typos: recall 0.50`` for several) and still runs
  it again.
* **Lazily resolved.** ``textDocument/codeLens`` answers each lens as a range and
  ``data`` (``[document, suite]``, two small numbers), computed from the checker's
  model of the dataset (which lines hold rows) without parsing anything again, and
  written as JSON text (see :class:`~rag_lsp.server.base.protocol.RawJson`): a
  100,000-line dataset gets its lenses in milliseconds. ``codeLens/resolve`` then
  gives the lens the client shows its title and a command with typed arguments
  (:class:`~rag_lsp.server.running.run_commands.RunCaseArguments`,
  :class:`~rag_lsp.server.running.run_commands.RunSuiteArguments`).
* **Hover** on a case that ran adds its ranked hits (relevant ones marked, those
  beyond ``k`` set apart) and what was missed to the usual hover.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from ...core.workspace.documents import document_relative
from ...core.running.selection import indexed_readers_of, indexed_suites
from ...core.reading.wording import counted
from ...core.workspace.workspace import DATASET_FILE, SUITE_FILE
from ..base.convert import HOVER_MARKUP, markup
from ..base.protocol import RawJson
from ..base.uris import path_of
from .run_commands import RUN_CASE, RUN_SUITE, RunCaseArguments, RunSuiteArguments

if TYPE_CHECKING:
    from .roles import Checks, Workspaces
    from .runs import RunManager

log = logging.getLogger(__name__)

CASE_LENS = "case"
SUITE_LENS = "suite"
# A case lens's suite index when it runs the case in every suite that reads the dataset.
EVERY_SUITE = -1
# Past this many characters, a lens of several suites' results points to the hover.
LENS_TITLE_CHARS = 90


@dataclass(frozen=True)
class SuiteEntry:
    """A suite as a document's lenses and actions name it."""

    key: str
    id: str | None
    # Cases in its dataset (None when the dataset cannot be read).
    cases: int | None
    # The line of the suite's first key in its suite file.
    line: int


@dataclass(frozen=True)
class DocumentSuites:
    """What can be run from a document: its kind, the suites concerned, and (for a
    dataset) the lines that hold its rows."""

    kind: str  # CASE_LENS (a dataset) or SUITE_LENS (a suite file)
    suites: tuple[SuiteEntry, ...]
    lines: list[int]


def _case_count(checker: Workspaces, workspace: Any, dataset: str | None) -> int | None:
    if dataset is None:
        return None
    model = checker.models.get(workspace.absolute(dataset))
    if model is not None:
        return model.case_count
    source = workspace.read(dataset)
    if source is None or source.refused:
        return None
    return sum(1 for line in source.text.split("\n") if line.strip())


def document_suites(checker: Workspaces, path: Path, folders: tuple[Path, ...], settings: Any) -> DocumentSuites | None:
    """What ``path`` can run (on the worker thread, after the checks settled)."""
    workspace = checker.workspace_for(path, folders, settings)
    if not workspace.contains(path):
        return None
    relative = document_relative(workspace, path)
    kind = workspace.kind_of(relative)
    indexed = indexed_suites(workspace)
    if kind == DATASET_FILE:
        readers = indexed_readers_of(indexed, relative)
        if not readers:
            return None
        count = _case_count(checker, workspace, relative)
        model = checker.models.get(path)
        if model is not None:
            lines = [number for number, row in enumerate(model.rows) if row is not None]
        else:
            source = workspace.read(relative)
            text = source.text if source is not None and not source.refused else ""
            lines = [number for number, line in enumerate(text.split("\n")) if line.strip()]
        entries = tuple(SuiteEntry(item.key, item.suite.id, count, 0) for item in readers)
        return DocumentSuites(CASE_LENS, entries, lines)
    if kind == SUITE_FILE:
        parsed = workspace.parsed_yaml(relative)
        if parsed is None:
            return None
        entries = tuple(
            SuiteEntry(
                item.key,
                item.suite.id,
                _case_count(checker, workspace, item.suite.dataset),
                parsed.lines.position(item.suite.node.start).line,
            )
            for item in indexed
            if item.suite.file == relative
        )
        return DocumentSuites(SUITE_LENS, entries, []) if entries else None
    return None


@dataclass(frozen=True)
class _LensDocument:
    uri: str
    path: Path
    suites: DocumentSuites


class Lenses:
    """The documents lenses were given for, by the small number their ``data`` carries."""

    def __init__(self, session: Checks, runs: RunManager) -> None:
        self.session = session
        self.runs = runs
        self._numbers: dict[str, int] = {}
        self._documents: dict[int, _LensDocument] = {}

    def _number(self, uri: str) -> int:
        if uri not in self._numbers:
            self._numbers[uri] = len(self._numbers)
        return self._numbers[uri]

    async def code_lens(self, params: types.CodeLensParams) -> RawJson | None:
        uri = params.text_document.uri
        path = path_of(uri)
        if path is None:
            return None
        number = self._number(uri)
        session = self.session
        await session.settled()
        folders, settings = session.folders(), session.settings

        def job(checker: Workspaces) -> tuple[DocumentSuites, str] | None:
            found = document_suites(checker, path, folders, settings)
            if found is None:
                return None
            template = '{"range":{"start":{"line":%d,"character":0},"end":{"line":%d,"character":0}},"data":[%d,%d]}'
            if found.kind == CASE_LENS:
                # One lens per case line; with several suites it stands for them all.
                index = 0 if len(found.suites) == 1 else EVERY_SUITE
                parts = [template % (line, line, number, index) for line in found.lines]
            else:
                parts = [template % (suite.line, suite.line, number, index) for index, suite in enumerate(found.suites)]
            return found, "[" + ",".join(parts) + "]"

        try:
            answer = await session.on_worker(job)
        except Exception:  # one failing feature is logged and never stops the others
            log.exception("code lenses of %s failed", uri)
            return None
        if answer is None:
            self._documents.pop(number, None)
            return RawJson("[]")
        found, text = answer
        self._documents[number] = _LensDocument(uri, path, found)
        return RawJson(text)

    def resolve(self, lens: types.CodeLens) -> types.CodeLens:
        data = lens.data
        if not (isinstance(data, list) and len(data) == 2 and all(isinstance(item, int) for item in data)):
            return lens
        document = self._documents.get(data[0])
        if document is None:
            return lens
        line = lens.range.start.line
        if document.suites.kind == CASE_LENS and data[1] == EVERY_SUITE:
            title = case_title(document.suites.suites, self.runs.marks_at(document.path, line))
            lens.command = types.Command(title=title, command=RUN_CASE, arguments=[RunCaseArguments(document.uri, line, None)])
            return lens
        if not 0 <= data[1] < len(document.suites.suites):
            return lens
        suite = document.suites.suites[data[1]]
        title = None
        for mark in self.runs.marks_at(document.path, line):
            if mark.suite == suite.key and mark.lens:
                title = mark.lens
        if document.suites.kind == CASE_LENS:
            command = types.Command(title=title or "Run case", command=RUN_CASE, arguments=[RunCaseArguments(document.uri, line, suite.id)])
        else:
            if title is None:
                title = f"Run suite ({counted(suite.cases, 'case')})" if suite.cases is not None else "Run suite"
            command = types.Command(title=title, command=RUN_SUITE, arguments=[RunSuiteArguments(document.uri, line, suite.id)])
        lens.command = command
        return lens


def case_title(suites: tuple[SuiteEntry, ...], marks: list[Any]) -> str:
    """The title of a case line's one lens over several suites: "Run case (N
    suites)", or once it ran, each suite's figures ("good: recall 1.00 · typos:
    recall 0.50"), or how many ran when that is too long for a lens (the hover
    has one line per suite)."""
    lens_of = {mark.suite: mark.lens for mark in marks if mark.lens}
    ran = [(suite.id or "?", lens_of[suite.key]) for suite in suites if suite.key in lens_of]
    if not ran:
        return f"Run case ({len(suites)} suites)"
    title = " · ".join(f"{name}: {text}" for name, text in ran)
    if len(ran) < len(suites):
        title += f" · run in all {len(suites)}"
    if len(title) > LENS_TITLE_CHARS:
        title = f"Ran in {len(ran)} of {len(suites)} suites (hover for each) · run again"
    return title


def hover(
    runs: RunManager, capabilities: types.ClientCapabilities, params: types.HoverParams, found: types.Hover | None
) -> types.Hover | None:
    """The usual hover (``found``, the checking side's), with the result of a
    case that ran on this line before it."""
    path = path_of(params.text_document.uri)
    result = runs.hover(path, params.position.line) if path is not None else None
    if result is None:
        return found
    if found is None:
        return types.Hover(contents=markup(capabilities, HOVER_MARKUP, result))
    contents = found.contents
    usual = contents.value if isinstance(contents, types.MarkupContent) else contents if isinstance(contents, str) else ""
    return types.Hover(contents=markup(capabilities, HOVER_MARKUP, result + ("\n\n---\n\n" + usual if usual else "")), range=found.range)
