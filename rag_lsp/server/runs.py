"""Runs from the editor, and their results shown with the findings.

The commands ``ragLsp.runCase``, ``ragLsp.runSuite`` and ``ragLsp.clearResults``
(``workspace/executeCommand``, typed arguments below) run cases through the same
:class:`~rag_lsp.core.runner.Runner` as ``rag-lsp run``:

* **Off the message loop and off the checker.** A run happens on its own thread,
  over its own core workspace per root (the editor's open documents put in front
  of the disk when the run starts), with one long-lived
  :class:`~rag_lsp.core.targets.TargetPool` per root, so command processes and
  the builtin index are kept between runs. Typing and checking go on meanwhile;
  runs wait for each other.
* **Trust.** ``command`` and ``http`` targets run only when the workspace is
  trusted (``ragLsp.trusted``); otherwise nothing is started or sent, the user is
  told why and the cases get RAG405.
* **Progress and cancellation.** A suite run reports work-done progress
  (cancellable); ``window/workDoneProgress/cancel`` and ``$/cancelRequest`` of the
  command stop it (a command target's process is stopped mid-case). Each case may
  take at most ``ragLsp.runTimeout`` seconds (a target's ``timeout_s`` overrides it).
* **The builtin index** is built (or brought up to date) on the run thread before
  the first case is asked, with work-done progress (``indexing vectors.query:
  12/40 files``), a Run case click's included: the case waits for its index, and
  typing goes on meanwhile. The index is kept by the root's target pool, and in
  the user's cache folder between sessions.
* **Results** become :class:`~rag_lsp.core.results.Mark` s kept per file in a
  :class:`~rag_lsp.core.results.LineMarks`, published with the file's findings
  through the session (at most :data:`RESULT_DIAGNOSTICS` per file, errors first).
  Every edit of an open file moves them with their lines and drops those on edited
  lines; edits made while a run is out are replayed on its results when they come.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import queue
import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, TypeVar
from urllib.parse import unquote

import attrs
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.protocol import default_converter
from pygls.workspace import TextDocument

from ..core.compare import BaselineError, RunFigures, direction_from, load_baseline
from ..core.findings import Severity
from ..core.results import (
    CASE,
    Baseline,
    LineMarks,
    Mark,
    case_id_of,
    case_marks,
    hover_markdown,
    refusal_marks,
    suite_key,
    suite_marks,
)
from ..core.runner import TARGET_FAILED, CaseNotFound, Runner, SuiteResult, describe_case
from ..core.settings import EditorSettings, Settings
from ..core.targets import TargetPool
from ..core.wording import counted
from ..core.suitefacts import SuiteInfo
from ..core.workspace import DATASET_FILE, SUITE_FILE, read_workspace_config, settings_source, Workspace
from .checker import FileDiagnostics, document_relative, near
from .convert import JSON_LINE, diagnostic_json, encoding_name, json_text, line_diagnostic, on_line
from .session import path_of

if TYPE_CHECKING:
    from .server import RagLanguageServer

log = logging.getLogger(__name__)

T = TypeVar("T")

RUN_CASE = "ragLsp.runCase"
RUN_SUITE = "ragLsp.runSuite"
CLEAR_RESULTS = "ragLsp.clearResults"
COMMANDS = (RUN_CASE, RUN_SUITE, CLEAR_RESULTS)

# How long shutdown waits for cancelled runs to end.
SHUTDOWN_WAIT_S = 3.0

# Run results shown as diagnostics per file, at most (errors first); every case's
# lens and hover show its result whatever the count.
RESULT_DIAGNOSTICS = 1000

UNTRUSTED = (
    "the workspace is not trusted, so rag-lsp starts no process and sends no request for it; "
    "trust the workspace in your editor or set ragLsp.trusted to true to run it"
)


# ---------------------------------------------------------------- typed arguments


def _file_uri(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    if value is not None and not (isinstance(value, str) and value.startswith("file:")):
        raise ValueError(f"`{attribute.name}` must be a file: URI, got {value!r}")


_line = attrs.validators.optional([attrs.validators.instance_of(int), attrs.validators.ge(0)])
_name = attrs.validators.optional(attrs.validators.instance_of(str))


@attrs.define
class RunCaseArguments:
    """``ragLsp.runCase``: the case on ``line`` (0-based) of the dataset ``uri``, in
    the suite named ``suite`` (default: every suite that reads the dataset)."""

    uri: str = attrs.field(validator=_file_uri)
    line: int = attrs.field(validator=[attrs.validators.instance_of(int), attrs.validators.ge(0)])
    suite: str | None = attrs.field(default=None, validator=_name)


@attrs.define
class RunSuiteArguments:
    """``ragLsp.runSuite``: in a suite file ``uri``, the suite named ``suite``, else
    the one at ``line``, else every suite of the file; in a dataset, the suites that
    read it (only ``suite`` when given)."""

    uri: str = attrs.field(validator=_file_uri)
    line: int | None = attrs.field(default=None, validator=_line)
    suite: str | None = attrs.field(default=None, validator=_name)


@attrs.define
class ClearResultsArguments:
    """``ragLsp.clearResults``: the results shown in ``uri`` (and elsewhere for the
    same suites), or every result when no ``uri`` is given."""

    uri: str | None = attrs.field(default=None, validator=_file_uri)


# ---------------------------------------------------------------- the run thread


class _Worker:
    """One daemon thread running jobs in order (a run never keeps the server from exiting)."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    def submit(self, job: Callable[..., Any], *args: Any) -> concurrent.futures.Future[Any]:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._jobs.put((future, job, args))
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name=self._name, daemon=True)
            self._thread.start()
        return future

    def _loop(self) -> None:
        while True:
            item = self._jobs.get()
            if item is None:
                return
            future, job, args = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(job(*args))
            except BaseException as error:  # noqa: BLE001 - handed to the waiting coroutine
                future.set_exception(error)

    def stop(self) -> None:
        self._jobs.put(None)


class _RunRoot:
    """A root's workspace and target pool as runs see them (used on the run thread only)."""

    def __init__(self, root: Path, settings: EditorSettings, documents: dict[Path, str]) -> None:
        # The editor's settings; those in force are the workspace's (its settings
        # file under the editor's), read as the editor has the file.
        self.settings = settings
        self.overlay = settings_source(root, documents)
        self.workspace = Workspace.configured(root, settings.values, self.overlay)
        self.overlay.limit(self.workspace.settings.max_file_bytes)
        self.pool = TargetPool(self.workspace, self.workspace.settings.run_timeout_s)
        # The baseline report as last read, with the file's (mtime, size) then.
        self._baseline: tuple[tuple[int, int], RunFigures] | None = None

    def baseline(self) -> Baseline | None:
        """The ``ragLsp.baseline`` report (relative to the root, or absolute), read
        again only when the file changed; None when no baseline is set.
        BaselineError when it cannot be read or is not a run report."""
        name = self.workspace.settings.baseline
        if name is None:
            return None
        path = self.workspace.root / Path(name).expanduser()
        try:
            status = path.stat()
        except OSError:
            status = None
        stamp = (status.st_mtime_ns, status.st_size) if status is not None else (0, -1)
        if self._baseline is None or self._baseline[0] != stamp:
            self._baseline = None
            self._baseline = (stamp, load_baseline(path))
        # Directions from the manifests as they are now (they may have changed).
        return Baseline(self._baseline[1], direction_from(self.workspace.manifests()))

    def settings_file_changed(self, documents: dict[Path, str]) -> bool:
        """Whether the workspace's settings file says something else now."""
        root = self.workspace.root
        return read_workspace_config(root, settings_source(root, documents)) != self.workspace.config

    def sync(self, documents: dict[Path, str], changed: list[Path]) -> Workspace:
        """Put the editor's open documents in front of the disk, and forget what was
        derived from files changed on disk."""
        workspace = self.workspace
        self.forget(changed)
        wanted = {workspace.absolute(document_relative(workspace, path)): text for path, text in documents.items()}
        for path in [path for path in self.overlay.texts if path not in wanted]:
            del self.overlay.texts[path]
            workspace.invalidate(document_relative(workspace, path), files_changed=False)
        for path, text in wanted.items():
            if self.overlay.texts.get(path) != text:
                self.overlay.texts[path] = text
                workspace.invalidate(document_relative(workspace, path), files_changed=False)
        return workspace

    def forget(self, changed: list[Path]) -> None:
        workspace = self.workspace
        root = workspace.root
        for path in changed:
            if path == root or root in path.parents:
                workspace.invalidate(document_relative(workspace, path))


# ---------------------------------------------------------------- a run


@dataclass
class RunRequest:
    command: str
    path: Path
    line: int | None
    suite: str | None


@dataclass
class _Placed:
    """What one suite's run leaves in one file, and which marks there it replaces."""

    path: Path
    marks: list[tuple[int, Mark]]
    key: str
    # None: every mark of the suite; else only its case marks on the new marks' lines.
    whole: bool


@dataclass
class _Outcome:
    placed: list[_Placed] = field(default_factory=list)
    messages: list[_Message] = field(default_factory=list)
    suites: list[dict[str, Any]] = field(default_factory=list)
    note: str | None = None


@dataclass(frozen=True, slots=True)
class LineEdit:
    """An edit of an open file: the text between two positions replaced by ``text``."""

    start_line: int
    start_character: int
    end_line: int
    end_character: int
    text: str


@dataclass(frozen=True, slots=True)
class WholeText:
    """An edit of an open file that replaced its whole text."""


Edit = LineEdit | WholeText


def edit_of(change: types.TextDocumentContentChangeEvent) -> Edit:
    if isinstance(change, types.TextDocumentContentChangePartial):
        start, end = change.range.start, change.range.end
        return LineEdit(start.line, start.character, end.line, end.character, change.text)
    return WholeText()


@dataclass(slots=True)
class _MarkDiagnostic:
    """A mark converted for the client, kept while it stays on its line in the
    same encoding with the same severity."""

    line: int
    encoding: str
    severity: Severity | None
    diagnostic: types.Diagnostic
    json: str
    # ``json`` split where its line number is, once the mark has moved.
    json_parts: list[str] | None = None

    def moved_to(self, line: int) -> _MarkDiagnostic:
        """The same diagnostic on another line (the mark moved with its text)."""
        parts = self.json_parts
        if parts is None:
            parts = self.json_parts = JSON_LINE.split(self.json)
        return _MarkDiagnostic(line, self.encoding, self.severity, on_line(self.diagnostic, line), str(line).join(parts), parts)


@dataclass(frozen=True, slots=True)
class _Message:
    """A message the run shows the user once it has ended."""

    kind: types.MessageType
    text: str


@dataclass
class _Run:
    request_id: int | str | None
    cancel: threading.Event = field(default_factory=threading.Event)
    token: types.ProgressToken | None = None
    # Edits of open files since the run took their text, replayed on its results.
    journal: dict[Path, list[Edit]] = field(default_factory=dict)
    percent: int = -1
    ended: bool = False
    # Whether a progress was begun for an index build (a Run case has none of its own).
    indexing: bool = False
    done: asyncio.Event = field(default_factory=asyncio.Event)


def _summary(result: SuiteResult) -> dict[str, Any]:
    return {
        "id": result.id,
        "file": result.file,
        "passed": result.passed,
        "broken": result.broken,
        "cancelled": result.cancelled,
        "error": result.error,
        "cases": len(result.cases),
        "scored": result.scored,
        "aggregates": result.aggregates,
        "thresholds": [
            {"metric": t.metric, "threshold": t.threshold, "value": t.value, "passed": t.passed} for t in result.thresholds
        ],
    }


def _lines_of(text: str) -> Callable[[int], str]:
    rows = text.split("\n")

    def line_text(line: int) -> str:
        if not 0 <= line < len(rows):
            return ""
        row = rows[line]
        return row[:-1] if row.endswith("\r") else row

    return line_text


def _apply(marks: LineMarks, edit: Edit) -> None:
    if type(edit) is LineEdit:
        marks.edit(edit.start_line, edit.start_character, edit.end_line, edit.end_character, edit.text)
    else:
        marks.replace_all()


class RunManager:
    """The server's runs and the results they left, by file."""

    def __init__(self, server: RagLanguageServer) -> None:
        self.server = server
        self.marks: dict[Path, LineMarks] = {}
        self._worker = _Worker("rag-lsp-run")
        self._roots: dict[Path, _RunRoot] = {}  # the run thread's
        # Root -> (workspace root, settings in force) of the roots that ran.
        self._in_force: dict[Path, Settings] = {}
        self._runs: list[_Run] = []
        self._changed: list[Path] = []
        # Open documents: URI as pygls keys it -> path, and back.
        self._paths: dict[str, Path] = {}
        self._keys: dict[Path, str] = {}
        # Diagnostics made from marks, by file and mark.
        self._converted: dict[Path, dict[Mark, _MarkDiagnostic]] = {}
        self._json = default_converter()

    def structure(self, value: object, kind: type[T]) -> T:
        """Typed command arguments from their JSON, or an InvalidParams error saying what is wrong."""
        try:
            return self._json.structure(value, kind)
        except Exception as error:  # cattrs groups the validators' errors
            causes = getattr(error, "exceptions", None) or [error]
            raise JsonRpcInvalidParams(f"{kind.__name__}: " + "; ".join(str(cause) for cause in causes)) from None

    # -------------------------------------------------- documents (loop thread)

    def _document(self, path: Path) -> TextDocument | None:
        key = self._keys.get(path)
        return self.server.workspace.text_documents.get(key) if key is not None else None

    @staticmethod
    def _line_text(document: TextDocument) -> Callable[[int], str]:
        if hasattr(document, "line_text"):
            return document.line_text
        lines = document.lines
        return lambda line: lines[line].rstrip("\r\n") if 0 <= line < len(lines) else ""

    def opened(self, uri: str) -> None:
        path = path_of(uri)
        if path is None:
            return
        key = unquote(uri)
        self._paths[key] = path
        self._keys[path] = key
        marks = self.marks.get(path)
        document = self._document(path)
        if marks and document is not None:
            marks.verify(self._line_text(document))  # the editor's text may not be the one the run read

    def closed(self, uri: str) -> None:
        path = self._paths.pop(unquote(uri), None)
        if path is None:
            return
        self._keys.pop(path, None)
        marks = self.marks.get(path)
        if marks:
            # The disk's text counts again: keep only results that read the same there.
            try:
                text = path.read_text(encoding="utf-8-sig", errors="replace")
            except OSError:
                text = ""
            marks.verify(_lines_of(text))

    def edited(self, params: types.DidChangeTextDocumentParams) -> None:
        """An open document changed: move its results with their lines (cheap when it has none)."""
        path = self._paths.get(unquote(params.text_document.uri))
        if path is None:
            return
        marks = self.marks.get(path)
        journals = [run.journal[path] for run in self._runs if path in run.journal]
        if not marks and not journals:
            return
        for change in params.content_changes:
            edit = edit_of(change)
            if marks:
                _apply(marks, edit)
            for journal in journals:
                journal.append(edit)
        document = self._document(path)
        if marks and document is not None:
            marks.settle(self._line_text(document))

    def files_changed(self, paths: list[Path]) -> None:
        """Files changed on disk: results in files that are not open no longer match them."""
        self._changed.extend(paths)
        for path in paths:
            if path not in self._keys and self.marks.pop(path, None) is not None:
                self._converted.pop(path, None)

    # -------------------------------------------------- publishing (the session's `extra`)

    def decorate(self, path: Path, file: FileDiagnostics) -> FileDiagnostics:
        """A file's findings with its run results after them."""
        marks = self.marks.get(path)
        if not marks:
            self._converted.pop(path, None)
            return file
        document = self._document(path)
        line_text = self._line_text(document) if document is not None else None
        encoding = encoding_name(self.server.workspace.position_encoding)
        # The settings in force where the results were made (the deepest root holding the file).
        holders = [root for root in self._in_force if root in path.parents]
        root = max(holders, key=lambda root: len(root.parts)) if holders else None
        settings = self._in_force[root] if root is not None else Settings()
        relative = path.relative_to(root).as_posix() if root is not None else path.name
        before = self._converted.get(path, {})
        now: dict[Mark, _MarkDiagnostic] = {}
        diagnostics: list[types.Diagnostic] = []
        as_json: list[str] = []
        stale: set[Mark] = set()
        for line, mark in marks.shown(RESULT_DIAGNOSTICS):
            if line_text is not None and line_text(line) != mark.text:
                stale.add(mark)  # a safety net: edits should have dropped it already
                continue
            # The `severity` setting applies to results as to findings ("off" hides them).
            if mark.code is not None:
                severity = settings.severity_of(relative, mark.code, mark.severity)
                if severity is None:
                    continue
            else:
                severity = None
            entry = before.get(mark)
            if entry is None or entry.encoding != encoding or entry.severity != severity:
                entry = self._diagnostic(mark, line, encoding, severity)
            elif entry.line != line:
                entry = entry.moved_to(line)
            now[mark] = entry
            diagnostics.append(entry.diagnostic)
            as_json.append(entry.json)
        self._converted[path] = now
        if stale:
            marks.remove(lambda _, mark: mark in stale)
        if not diagnostics:
            return file
        combined = file.json + as_json if file.complete_json is not None else []
        return FileDiagnostics(file.uri, file.version, file.diagnostics + diagnostics, file.root, combined)

    @staticmethod
    def _diagnostic(mark: Mark, line: int, encoding: str, severity: Severity | None) -> _MarkDiagnostic:
        """A mark's diagnostic on ``line``, and its JSON, as the findings' are converted."""
        diagnostic = line_diagnostic(line, mark.text, mark.start, mark.end, mark.message, severity, mark.code, encoding)
        return _MarkDiagnostic(line, encoding, severity, diagnostic, json_text(diagnostic_json(diagnostic)))

    def _republish(self, paths: set[Path]) -> None:
        try:
            self.server.session.republish(sorted(paths))
        except Exception:  # results not shown must not fail the run
            log.exception("publishing run results failed")
        self.refresh_lenses()

    def refresh_lenses(self) -> None:
        capabilities = self.server.client_capabilities
        workspace = capabilities.workspace if capabilities else None
        if workspace is not None and workspace.code_lens is not None and workspace.code_lens.refresh_support:
            try:
                self.server.workspace_code_lens_refresh(None)
            except Exception:
                log.warning("workspace/codeLens/refresh failed", exc_info=True)

    # -------------------------------------------------- reading results (loop thread)

    def marks_at(self, path: Path, line: int) -> list[Mark]:
        marks = self.marks.get(path)
        return marks.at(line) if marks else []

    def hover(self, path: Path, line: int) -> str | None:
        """The results of the case on ``line``: with several suites, one line per
        suite first, then each suite's hits."""
        marks = [mark for mark in self.marks_at(path, line) if mark.run is not None]
        if not marks:
            return None
        details = "\n\n---\n\n".join(hover_markdown(mark.run) for mark in marks)
        if len(marks) == 1:
            return details
        lines = "\n".join(f"- `{mark.run.suite}`: {describe_case(mark.run.case)}" for mark in marks)
        return f"**Run results** · {len(marks)} suites\n\n{lines}\n\n---\n\n{details}"

    # -------------------------------------------------- cancelling

    def cancel_request(self, request_id: int | str | None) -> None:
        for run in self._runs:
            if run.request_id == request_id:
                run.cancel.set()

    def cancel_progress(self, token: types.ProgressToken) -> None:
        for run in self._runs:
            if run.token == token:
                run.cancel.set()

    def settings_changed(self) -> None:
        """New settings (trust, timeout, limits): targets are opened anew by the next run."""
        self._worker.submit(self._close_stale, self.server.session.settings)

    def folders_changed(self) -> None:
        """Workspace folders were added or removed: the targets of a root that no
        folder holds any more (and no open document is in) are closed, so no
        process of a removed folder lives on."""
        self._worker.submit(self._close_outside, self.server.session.folders(), list(self._paths.values()))

    def _close_outside(self, folders: tuple[Path, ...], open_paths: list[Path]) -> None:
        if not folders:
            return
        for root, state in list(self._roots.items()):
            if not near(root, folders) and not any(path == root or root in path.parents for path in open_paths):
                state.pool.close()
                del self._roots[root]

    def _close_stale(self, settings: EditorSettings) -> None:
        for root, state in list(self._roots.items()):
            if state.settings != settings:
                state.pool.close()
                del self._roots[root]

    async def shutdown(self) -> None:
        """Stop the runs (waiting a moment for them to end, so no request is left
        open), then the targets' processes."""
        for run in self._runs:
            run.cancel.set()
        waiting = [asyncio.ensure_future(run.done.wait()) for run in self._runs]
        if waiting:
            await asyncio.wait(waiting, timeout=SHUTDOWN_WAIT_S)
        self._worker.submit(self._close_all)
        self._worker.stop()

    def _close_all(self) -> None:
        for state in self._roots.values():
            state.pool.close()
        self._roots.clear()

    # -------------------------------------------------- clearing

    def clear(self, uri: str | None) -> dict[str, Any]:
        if uri is None:
            paths = set(self.marks)
            self.marks.clear()
        else:
            path = path_of(uri)
            marks = self.marks.get(path) if path is not None else None
            suites = {mark.suite for _, mark in marks} if marks else set()
            paths = set()
            for other, held in list(self.marks.items()):
                if other == path or held.remove(lambda _, mark: mark.suite in suites):
                    paths.add(other)
            if path is not None:
                self.marks.pop(path, None)
        for path in [path for path, held in self.marks.items() if not len(held)]:
            del self.marks[path]
        self._republish(paths)
        return {"cleared": len(paths)}

    # -------------------------------------------------- running

    async def run(self, request: RunRequest) -> dict[str, Any]:
        """Run what ``request`` asks for; answer a summary of each suite run."""
        ls = self.server
        session = ls.session
        folders = session.folders()
        root = session.checker.root_of(request.path, folders)
        run = _Run(ls.protocol.msg_id)
        # The editor's text of every open document under the root, as of now.
        documents: dict[Path, str] = {}
        for key, document in ls.workspace.text_documents.items():
            path = self._paths.get(key) or path_of(key)
            if path is not None and (path == root or root in path.parents):
                documents[path] = document.source
                run.journal[path] = []
        changed, self._changed = self._changed, []
        settings = session.settings
        loop = asyncio.get_running_loop()
        self._runs.append(run)
        try:
            if request.command == RUN_SUITE:
                await self._begin_progress(run, f"rag-lsp: running {request.suite or 'suites'}")
            future = self._worker.submit(
                self._job, root, request, documents, changed, settings, run.cancel, self._progress(loop, run),
                self._indexing(loop, run),
            )
            try:
                outcome: _Outcome = await asyncio.wrap_future(future)
            except asyncio.CancelledError:
                run.cancel.set()
                raise
            self._install(run, outcome)
            for message in outcome.messages:
                ls.window_show_message(types.ShowMessageParams(type=message.kind, message=message.text))
            answer: dict[str, Any] = {"suites": outcome.suites}
            if outcome.note is not None:
                answer["message"] = outcome.note
            self._end_progress(run, outcome)
            return answer
        finally:
            self._runs.remove(run)
            self._end_progress(run, None)
            run.done.set()

    def _install(self, run: _Run, outcome: _Outcome) -> None:
        """Put a run's marks in place: replayed through the edits made meanwhile,
        replacing what they supersede, then published."""
        touched: set[Path] = set()
        for placed in outcome.placed:
            fresh = LineMarks()
            fresh.add(placed.marks)
            journal = run.journal.get(placed.path, ())
            for op in journal:
                _apply(fresh, op)
            document = self._document(placed.path)
            if document is not None:
                fresh.verify(self._line_text(document))
            new = list(fresh)
            lines = {line for line, _ in new}
            key = placed.key
            if placed.whole:

                def replaces(line: int, mark: Mark, key: str = key) -> bool:
                    return mark.suite == key

            else:

                def replaces(line: int, mark: Mark, key: str = key, lines: set[int] = lines) -> bool:
                    return mark.suite == key and mark.scope == CASE and line in lines

            held = self.marks.setdefault(placed.path, LineMarks())
            held.add(new, replaces)
            if not len(held):
                del self.marks[placed.path]
            touched.add(placed.path)
        if touched:
            self._republish(touched)

    # -------------------------------------------------- progress

    async def _begin_progress(self, run: _Run, title: str) -> None:
        capabilities = self.server.client_capabilities
        if not (capabilities.window and capabilities.window.work_done_progress):
            return
        token = f"rag-lsp/run/{uuid.uuid4()}"
        try:
            await self.server.work_done_progress.create_async(token)
        except Exception:
            log.warning("the client refused a progress token", exc_info=True)
            return
        if run.done.is_set() or run.ended:
            return  # begun for an index build that ended meanwhile: nothing to show
        run.token = token
        run.percent = 0
        self.server.work_done_progress.begin(token, types.WorkDoneProgressBegin(title=title, cancellable=True, percentage=0))

    def _progress(self, loop: asyncio.AbstractEventLoop, run: _Run) -> Callable[[str, int, int], None]:
        def report(suite: str, done: int, total: int) -> None:
            loop.call_soon_threadsafe(self._report, run, suite, done, total)

        return report

    def _indexing(self, loop: asyncio.AbstractEventLoop, run: _Run) -> Callable[[str, int, int], None]:
        """The callback of a target building its index (on the run thread): at most
        one report per percent reaches the message loop."""
        last = [-1]

        def report(target: str, done: int, total: int) -> None:
            percent = done * 100 // total if total else 100
            if percent != last[0] or done == total:
                last[0] = percent
                loop.call_soon_threadsafe(self._report_indexing, run, target, done, total)

        return report

    def _report_indexing(self, run: _Run, target: str, done: int, total: int) -> None:
        """Progress of an index build: a Run case click shows it too (its progress is
        begun by the first report), and waits for the index rather than failing."""
        if run.ended or run.done.is_set():
            return
        if run.token is None:
            if not run.indexing:
                run.indexing = True
                asyncio.ensure_future(self._begin_progress(run, f"rag-lsp: indexing {target}"))
            return
        self.server.work_done_progress.report(
            run.token, types.WorkDoneProgressReport(message=f"indexing {target}: {done}/{total} files")
        )

    def _report(self, run: _Run, suite: str, done: int, total: int) -> None:
        if run.token is None or run.ended:
            return
        percent = min(100, done * 100 // total) if total else 100
        if percent == run.percent and done != total:
            return
        run.percent = percent
        self.server.work_done_progress.report(
            run.token, types.WorkDoneProgressReport(message=f"{suite}: {done:,}/{counted(total, 'case')}", percentage=percent)
        )

    def _end_progress(self, run: _Run, outcome: _Outcome | None) -> None:
        if run.token is None or run.ended:
            return
        run.ended = True
        if outcome is None:
            message = "stopped"
        elif run.cancel.is_set():
            message = "cancelled"
        else:
            verdicts = [
                "not run" if s["error"] else "cancelled" if s["cancelled"] else "broken" if s["broken"] else "passed" if s["passed"] else "failed"
                for s in outcome.suites
            ]
            message = ", ".join(f"{s['id']} {verdict}" for s, verdict in zip(outcome.suites, verdicts)) or "nothing ran"
        self.server.work_done_progress.end(run.token, types.WorkDoneProgressEnd(message=message))

    # -------------------------------------------------- the job (run thread)

    def _job(
        self,
        root: Path,
        request: RunRequest,
        documents: dict[Path, str],
        changed: list[Path],
        settings: EditorSettings,
        cancel: threading.Event,
        progress: Callable[[str, int, int], None],
        indexing: Callable[[str, int, int], None] | None = None,
    ) -> _Outcome:
        for other_root, state in list(self._roots.items()):
            if state.settings != settings:
                state.pool.close()
                del self._roots[other_root]
            elif other_root != root:
                state.forget(changed)
        state = self._roots.get(root)
        if state is not None and state.settings_file_changed(documents):
            state.pool.close()
            state = None
        if state is None:
            state = self._roots[root] = _RunRoot(root, settings, documents)
            # For the results' severities, read on the message loop.
            self._in_force[state.workspace.root] = state.workspace.settings
        workspace = state.sync(documents, changed)
        outcome = _Outcome()
        relative = document_relative(workspace, request.path)
        kind = workspace.kind_of(relative)
        indexed = indexed_suites(workspace)
        if request.command == RUN_CASE:
            if kind != DATASET_FILE:
                return _note(outcome, f"{relative} is not a dataset: Run case runs a dataset line")
            chosen = [(s, i) for s, i in indexed if s.dataset == relative and (request.suite is None or s.id == request.suite)]
            if not chosen:
                named = f"suite {request.suite!r}" if request.suite else "any suite"
                return _note(outcome, f"{relative} is not the dataset of {named}: name it as a suite's `dataset` to run its cases")
        elif kind == SUITE_FILE:
            own = [(s, i) for s, i in indexed if s.file == relative]
            if request.suite is not None:
                chosen = [(s, i) for s, i in own if s.id == request.suite]
            elif request.line is not None:
                parsed = workspace.parsed_yaml(relative)
                above = [(s, i) for s, i in own if parsed is not None and parsed.lines.position(s.node.start).line <= request.line]
                chosen = above[-1:] or own[:1]
            else:
                chosen = own
            if not chosen:
                return _note(outcome, f"{relative} has no suite {request.suite!r}" if request.suite else f"{relative} has no suite to run")
        elif kind == DATASET_FILE:
            chosen = [(s, i) for s, i in indexed if s.dataset == relative and (request.suite is None or s.id == request.suite)]
            if not chosen:
                return _note(outcome, f"no suite reads {relative}")
        else:
            return _note(outcome, f"{relative} is neither a suite file nor a dataset")

        runner = Runner(workspace, allow_exec=settings.trusted, exec_refusal=UNTRUSTED, pool=state.pool)
        try:
            baseline = state.baseline()
        except BaselineError as error:
            baseline = None
            outcome.messages.append(_Message(types.MessageType.Warning, f"rag-lsp: ragLsp.baseline: {error}; results are shown without deltas"))
        texts: dict[str, Callable[[int], str]] = {}

        def line_text_of(file: str) -> Callable[[int], str]:
            if file not in texts:
                source = workspace.read(file)
                texts[file] = _lines_of(source.text if source is not None else "")
            return texts[file]

        for suite, index in chosen:
            if cancel.is_set():
                break
            key = suite_key(suite, index)
            name = suite.id or "?"
            building = None
            if indexing is not None:

                def building(done: int, total: int, target: str = suite.target or "?") -> None:
                    indexing(target, done, total)

            if request.command == RUN_CASE:
                self._run_case(outcome, runner, suite, key, request, line_text_of, workspace, cancel, baseline, building)
                continue

            def report(done: int, total: int, name: str = name) -> None:
                progress(name, done, total)

            try:
                result = runner.run_suite(suite, cancel=cancel, progress=report, building=building)
            except Exception as error:  # noqa: BLE001 - one suite failing must not stop the others
                log.exception("running suite %s failed", name)
                outcome.messages.append(_Message(types.MessageType.Error, f"rag-lsp: running suite {name!r} failed: {error}"))
                continue
            outcome.suites.append(_summary(result))
            suite_path = workspace.absolute(suite.file)
            parsed = workspace.parsed_yaml(suite.file)
            if parsed is not None:
                outcome.placed.append(_Placed(suite_path, suite_marks(result, suite, key, parsed.lines, baseline), key, True))
            if suite.dataset is not None and result.error is None:
                dataset_lines = line_text_of(suite.dataset)
                outcome.placed.append(
                    _Placed(workspace.absolute(suite.dataset), case_marks(result, suite, key, dataset_lines, baseline=baseline, named=_shared(indexed, suite)), key, True)
                )
            _tell(outcome, result, name)
        return outcome

    def _run_case(
        self,
        outcome: _Outcome,
        runner: Runner,
        suite: SuiteInfo,
        key: str,
        request: RunRequest,
        line_text_of: Callable[[str], Callable[[int], str]],
        workspace: Workspace,
        cancel: threading.Event,
        baseline: Baseline | None,
        building: Callable[[int, int], None] | None = None,
    ) -> None:
        assert suite.dataset is not None and request.line is not None
        line = request.line
        line_text = line_text_of(suite.dataset)
        name = suite.id or "?"
        gdi = bool(suite.metrics) and not suite.engines
        if not line_text(line).strip():
            _note(outcome, f"line {line + 1} of {suite.dataset} is blank: there is no case to run")
            return
        case_id = case_id_of(line_text(line), gdi) or f"line {line + 1}"
        try:
            # A builtin target builds (or updates) its index first: the case waits for it.
            result = runner.run_suite(suite, case_ids=[case_id], cancel=cancel, building=building)
        except CaseNotFound:
            _note(outcome, f"suite {name!r} has no case {case_id!r} on line {line + 1}")
            return
        except Exception as error:  # noqa: BLE001
            log.exception("running a case of %s failed", name)
            outcome.messages.append(_Message(types.MessageType.Error, f"rag-lsp: running {case_id!r} of {name!r} failed: {error}"))
            return
        outcome.suites.append(_summary(result))
        path = workspace.absolute(suite.dataset)
        if result.error is not None and result.findings:
            # Errors in its suite file stop the suite whichever case is asked for:
            # said once, on the dataset's first case and on the suite, not on every
            # line a case is run from.
            first = next((number for number in range(line + 1) if line_text(number).strip()), line)
            outcome.placed.append(_Placed(path, refusal_marks(result, key, line_text, [first], gdi), key, True))
            parsed = workspace.parsed_yaml(suite.file)
            if parsed is not None:
                outcome.placed.append(_Placed(workspace.absolute(suite.file), suite_marks(result, suite, key, parsed.lines), key, True))
            _tell(outcome, result, name)
            return
        if result.error is not None:
            marks = refusal_marks(result, key, line_text, [line], gdi)
        else:
            marks = case_marks(result, suite, key, line_text, [line], baseline, named=_shared(indexed_suites(workspace), suite))
        outcome.placed.append(_Placed(path, marks, key, False))
        _tell(outcome, result, name)


def _shared(indexed: list[tuple[SuiteInfo, int]], suite: SuiteInfo) -> bool:
    """Whether other suites read ``suite``'s dataset too (their results share its lines)."""
    return sum(1 for other, _ in indexed if other.dataset == suite.dataset) > 1


def indexed_suites(workspace: Workspace) -> list[tuple[SuiteInfo, int]]:
    """Every suite with its place in its file (what names a suite without an id)."""
    counts: dict[str, int] = {}
    indexed = []
    for suite in workspace.suites():
        index = counts.get(suite.file, 0)
        counts[suite.file] = index + 1
        indexed.append((suite, index))
    return indexed


def _note(outcome: _Outcome, text: str) -> _Outcome:
    outcome.note = text
    outcome.messages.append(_Message(types.MessageType.Warning, f"rag-lsp: {text}"))
    return outcome


def _tell(outcome: _Outcome, result: SuiteResult, name: str) -> None:
    for note in result.notes:
        # Said once per target (a fallback to keyword search): the results alone would not say why.
        log.warning("suite %s: %s", name, note)
        outcome.messages.append(_Message(types.MessageType.Warning, f"rag-lsp: {note}"))
    if result.error is not None:
        kind = types.MessageType.Error if result.error_code == TARGET_FAILED else types.MessageType.Warning
        error = result.error.removeprefix("not run: ")
        outcome.messages.append(_Message(kind, f"rag-lsp: suite {name!r} was not run: {error}"))
    elif result.cancelled:
        outcome.messages.append(
            _Message(types.MessageType.Info, f"rag-lsp: the run of {name!r} was cancelled after {counted(len(result.cases), 'case')}")
        )
