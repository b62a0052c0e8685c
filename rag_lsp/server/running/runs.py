"""Runs from the editor, and their results shown with the findings.

The commands ``ragLsp.runCase`` and ``ragLsp.runSuite`` (:mod:`.run_commands`)
run cases through the same :class:`~rag_lsp.core.running.runner.Runner` as ``rag-lsp
run``. :class:`RunManager` is what the message loop knows of runs:

* **Off the message loop and off the checker.** A run happens on the run thread
  (:mod:`.run_worker`), over its own core workspace per root (the editor's open
  documents put in front of the disk when the run starts), with one long-lived
  target pool per root, so command processes and the builtin index are kept
  between runs. Typing and checking go on meanwhile; runs wait for each other.
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
  the user's cache folder between sessions. Completion and code actions suggest
  expected files from it (:meth:`RunManager.index_search`) without ever building
  it; a target with none yet has its cached index loaded in the background, on
  the run thread, when the cache holds one (:meth:`RunManager.load_wanted`).
* **Results** are kept per file and follow edits (:mod:`.run_marks`), published
  with the file's findings through the diagnostics session (as much of it as
  :class:`~.roles.Checks` says); edits made while a run is out are replayed on
  its results when they come.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable
from urllib.parse import unquote

from lsprotocol import types

from ...core.running.marks import Mark
from ...core.workspace.settings import Settings
from ...core.editing.suggest import IndexSearch
from ...core.workspace.suitefacts import TargetInfo
from ...core.reading.wording import counted
from ..base.convert import encoding_name
from ..base.diagnostics import FileDiagnostics
from ..base.uris import path_of
from .run_commands import RUN_SUITE, RunRequest
from .run_marks import Edit, RunMarks
from .run_worker import Outcome, RunThread

if TYPE_CHECKING:
    from ..base.client import Client
    from .roles import Checks

log = logging.getLogger(__name__)

# How often a builtin target's cached index is looked for, at most, for suggestions.
LOOK_AGAIN_S = 10.0

# How long shutdown waits for cancelled runs to end.
SHUTDOWN_WAIT_S = 3.0


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
    # The last report of an index build made while its progress was being begun
    # (the client is asked for a token first): shown once it is begun. A small
    # index is built before the client answers.
    waiting_report: str | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)



class RunManager:
    """The server's runs and the results they left, by file."""

    def __init__(self, client: Client, session: Checks) -> None:
        self.client = client
        self.session = session
        # Root -> settings in force of the roots that ran (written by the run thread).
        in_force: dict[Path, Settings] = {}
        # The server's workspace exists once the client initialized it.
        self.results = RunMarks(
            lambda key: client.workspace.text_documents.get(key),
            lambda: encoding_name(client.workspace.position_encoding),
            in_force,
        )
        self._thread = RunThread(in_force)
        self._runs: list[_Run] = []
        self._changed: list[Path] = []
        # Builtin targets (root, target id) a suggestion found with no index yet,
        # and when each was last looked for in the cache (monotonic seconds).
        self._wanted: set[tuple[Path, str]] = set()
        self._looked: dict[tuple[Path, str], float] = {}

    # -------------------------------------------------- documents (loop thread)

    def opened(self, uri: str) -> None:
        self.results.opened(uri)

    def closed(self, uri: str) -> None:
        self.results.closed(uri)

    def edited(self, params: types.DidChangeTextDocumentParams) -> None:
        """An open document changed: its results move with their lines, and the
        runs out note the edits to replay them on theirs."""
        path = self.results.open_path(unquote(params.text_document.uri))
        if path is None:
            return
        journals = [run.journal[path] for run in self._runs if path in run.journal]
        dropped = self.results.edited(path, params.content_changes, journals)
        if dropped:
            # A suite was edited: its verdict, and its cases' results in its dataset, went with it.
            self._republish(dropped)

    def files_changed(self, paths: list[Path]) -> None:
        """Files changed on disk: the next run reads them again, and results in
        files that are not open no longer match them."""
        self._changed.extend(paths)
        self.results.files_changed(paths)

    # -------------------------------------------------- publishing (the session's `extra`)

    def decorate(self, path: Path, file: FileDiagnostics) -> FileDiagnostics:
        """A file's findings with its run results after them."""
        return self.results.decorate(path, file)

    def _republish(self, paths: set[Path]) -> None:
        try:
            self.session.republish(sorted(paths))
        except Exception:  # results not shown must not fail the run
            log.exception("publishing run results failed")
        self.refresh_lenses()

    def refresh_lenses(self) -> None:
        capabilities = self.client.client_capabilities
        workspace = capabilities.workspace if capabilities else None
        if workspace is not None and workspace.code_lens is not None and workspace.code_lens.refresh_support:
            try:
                self.client.workspace_code_lens_refresh(None)
            except Exception:
                log.warning("workspace/codeLens/refresh failed", exc_info=True)

    # -------------------------------------------------- reading results (loop thread)

    def marks_at(self, path: Path, line: int) -> list[Mark]:
        return self.results.marks_at(path, line)

    def hover(self, path: Path, line: int) -> str | None:
        return self.results.hover(path, line)

    # -------------------------------------------------- the index, while a case is written

    def index_search(self, root: Path) -> IndexSearch:
        """Asks the builtin targets that runs opened for ``root`` about a case, from
        the index each already holds (callable on any thread): it never opens a
        target, builds an index or waits for one. A target with no index to answer
        from is noted, so that :meth:`load_wanted` may load one from the cache."""

        def search(info: TargetInfo, value: dict) -> list[Any] | None:
            target = self._thread.held_target(root, info)
            built_answer = getattr(target, "built_answer", None)
            answer = built_answer(value) if built_answer is not None else None
            if answer is None:
                self._wanted.add((root, info.id))
                return None
            return list(answer.hits)

        return search

    def load_wanted(self) -> None:
        """Load, in the background, the cached index of each builtin target a
        suggestion found without one (each looked for at most every
        :data:`LOOK_AGAIN_S` seconds): on the run thread, after the runs asked
        before, reading the cache only (nothing is embedded; no cache, nothing
        is done), with work-done progress while the model and index load."""
        wanted, self._wanted = self._wanted, set()
        now = asyncio.get_running_loop().time()
        for key in sorted(wanted):
            if now - self._looked.get(key, -LOOK_AGAIN_S) < LOOK_AGAIN_S:
                continue
            self._looked[key] = now
            asyncio.ensure_future(self._load(*key))

    async def _load(self, root: Path, target_id: str) -> None:
        ls = self.client
        documents: dict[Path, str] = {}
        for key, document in ls.workspace.text_documents.items():
            path = self.results.open_path(key) or path_of(key)
            if path is not None and (path == root or root in path.parents):
                documents[path] = document.source
        loop = asyncio.get_running_loop()
        run = _Run(None)
        self._runs.append(run)

        def loading() -> None:
            loop.call_soon_threadsafe(
                lambda: asyncio.ensure_future(self._begin_progress(run, f"rag-lsp: loading the index of {target_id}"))
            )

        try:
            future = self._thread.submit(self._thread.load_cached, root, target_id, documents, self.session.settings, loading)
            loaded = await asyncio.wrap_future(future)
            if run.token is not None and not run.ended:
                run.ended = True
                message = "loaded" if loaded else "not loaded"
                ls.work_done_progress.end(run.token, types.WorkDoneProgressEnd(message=message))
        except Exception:  # a suggestion that cannot be made must not disturb anything else
            log.exception("loading the index of %s failed", target_id)
        finally:
            self._runs.remove(run)
            self._end_progress(run, None)
            run.done.set()

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
        self._thread.submit(self._thread.close_stale, self.session.settings)

    def folders_changed(self) -> None:
        """Workspace folders were added or removed: the targets of a root that no
        folder holds any more (and no open document is in) are closed, so no
        process of a removed folder lives on."""
        self._thread.submit(self._thread.close_outside, self.session.folders(), self.results.open_paths())

    async def shutdown(self) -> None:
        """Stop the runs (waiting a moment for them to end, so no request is left
        open), then the targets' processes."""
        for run in self._runs:
            run.cancel.set()
        waiting = [asyncio.ensure_future(run.done.wait()) for run in self._runs]
        if waiting:
            await asyncio.wait(waiting, timeout=SHUTDOWN_WAIT_S)
        self._thread.submit(self._thread.close_all)
        self._thread.stop()

    # -------------------------------------------------- clearing

    def clear(self, uri: str | None) -> dict[str, Any]:
        paths = self.results.clear(uri)
        self._republish(paths)
        return {"cleared": len(paths)}

    # -------------------------------------------------- running

    async def run(self, request: RunRequest) -> dict[str, Any]:
        """Run what ``request`` asks for; answer a summary of each suite run."""
        ls = self.client
        session = self.session
        folders = session.folders()
        root = session.checker.root_of(request.path, folders)
        run = _Run(ls.protocol.msg_id)
        # The editor's text of every open document under the root, as of now.
        documents: dict[Path, str] = {}
        for key, document in ls.workspace.text_documents.items():
            path = self.results.open_path(key) or path_of(key)
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
            future = self._thread.submit(
                self._thread.job, root, request, documents, changed, settings, run.cancel, self._progress(loop, run),
                self._indexing(loop, run),
            )
            try:
                outcome: Outcome = await asyncio.wrap_future(future)
            except asyncio.CancelledError:
                run.cancel.set()
                raise
            touched = self.results.install(outcome.placed, run.journal)
            if touched:
                self._republish(touched)
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

    # -------------------------------------------------- progress

    async def _begin_progress(self, run: _Run, title: str) -> None:
        capabilities = self.client.client_capabilities
        if not (capabilities.window and capabilities.window.work_done_progress):
            return
        token = f"rag-lsp/run/{uuid.uuid4()}"
        try:
            await self.client.work_done_progress.create_async(token)
        except Exception:
            log.warning("the client refused a progress token", exc_info=True)
            return
        if run.done.is_set() or run.ended:
            return  # begun for an index build that ended meanwhile: nothing to show
        run.token = token
        run.percent = 0
        self.client.work_done_progress.begin(token, types.WorkDoneProgressBegin(title=title, cancellable=True, percentage=0))
        if run.waiting_report is not None:
            self.client.work_done_progress.report(token, types.WorkDoneProgressReport(message=run.waiting_report))
            run.waiting_report = None

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
        message = f"indexing {target}: {done}/{total} files"
        if run.token is None:
            run.waiting_report = message
            if not run.indexing:
                run.indexing = True
                asyncio.ensure_future(self._begin_progress(run, f"rag-lsp: indexing {target}"))
            return
        self.client.work_done_progress.report(run.token, types.WorkDoneProgressReport(message=message))

    def _report(self, run: _Run, suite: str, done: int, total: int) -> None:
        if run.token is None or run.ended:
            return
        percent = min(100, done * 100 // total) if total else 100
        if percent == run.percent and done != total:
            return
        run.percent = percent
        self.client.work_done_progress.report(
            run.token, types.WorkDoneProgressReport(message=f"{suite}: {done:,}/{counted(total, 'case')}", percentage=percent)
        )

    def _end_progress(self, run: _Run, outcome: Outcome | None) -> None:
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
        self.client.work_done_progress.end(run.token, types.WorkDoneProgressEnd(message=message))
