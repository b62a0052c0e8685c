"""Scheduling checks and publishing their diagnostics, on the message loop.

Every open, change or close (and every watched file created, changed or deleted
on disk) bumps a generation and (after a short debounce) starts a check pass on
the worker thread; the loop keeps reading messages meanwhile. When a pass ends,
each file's diagnostics are kept only if they were computed for the document
version the editor has now, and sent only if they differ from what the editor was
last told. A newer version always gets a pass of its own.

A client that pulls diagnostics (it declares ``textDocument.diagnostic``) is
never also sent them: it asks with ``textDocument/diagnostic`` and
``workspace/diagnostic``, and is told to ask again (``workspace/diagnostic/refresh``)
when files it is not editing changed. Other clients get
``textDocument/publishDiagnostics`` with the document version.

Everything that reads the core's workspaces (checks, and the completion, hover,
links and symbols of :mod:`rag_lsp.server.checking.features`) runs on the one worker
thread, since the core's caches are not shared between threads.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import json
import logging
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence, TypeVar

from lsprotocol import types

from ...core.checking.analysis import Analysis
from ...core.workspace.settings import EditorSettings
from ...core.reading.wording import counted
from ..base.convert import encoding_name
from ..base.diagnostics import FileDiagnostics
from ..base.document import LineDocument
from ..base.protocol import RawJson
from ..base.uris import path_of
from .checker import Checker
from .snapshot import OpenDocument, PassResult, Snapshot

if TYPE_CHECKING:
    from ..base.client import Client

log = logging.getLogger(__name__)

T = TypeVar("T")

# Quiet time after a keystroke before checking: typing bursts cost one pass.
# Dataset edits re-check only their lines and need none: changes that arrive
# while a pass runs are taken together by the next one.
DEBOUNCE_S = 0.05

# The start-up scan waits this long for the documents an editor opens right after
# `initialized` (the files it restores): then they are checked in the scan's own
# pass, from the editor's text, instead of after a scan of the disk's.
SCAN_DELAY_S = 0.25

# A pass waits at most this long for a large message that is arriving (see
# message_arriving): a client that stops halfway through one delays no check
# for longer.
ARRIVAL_WAIT_S = 5.0


@dataclass
class Published:
    uri: str
    version: int | None
    diagnostics: Sequence[types.Diagnostic]
    root: Path
    # Names this exact list of diagnostics for pull clients ("unchanged" reports).
    result_id: str = ""
    # The diagnostics as JSON, when each has it (see FileDiagnostics.json).
    json: list[str] | None = None


def _same_diagnostics(last: Published, file: FileDiagnostics) -> bool:
    """Whether ``file`` has the diagnostics last published: compared by their JSON
    where both have it (a string comparison each, where comparing diagnostics
    compares their every field: a line inserted above a thousand moves them all)."""
    json = file.complete_json
    if last.json is not None and json is not None:
        return last.json == json
    return last.diagnostics == file.diagnostics


def _object_with_list(fields: dict[str, object], key: str, items: Sequence[str]) -> str:
    """A JSON object of ``fields`` and, last, ``key`` holding ``items`` (each a JSON
    text already): a file's thousands of diagnostics are joined as they are kept,
    not converted again."""
    head = json.dumps(fields)[:-1] + ", " if fields else "{"
    return head + json.dumps(key) + ": [" + ", ".join(items) + "]}"


def _full_report(last: Published, with_uri: bool = False) -> str:
    """A full diagnostic report of ``last`` as JSON, its diagnostics as they are
    pushed (see FileDiagnostics.json); with its URI and version for a workspace
    report."""
    head: dict[str, object] = {"uri": last.uri, "version": last.version} if with_uri else {}
    head.update(kind="full", resultId=last.result_id)
    return _object_with_list(head, "items", last.json or ())


class Session:
    """The server's diagnostics state: what is scheduled, checked and published."""

    def __init__(self, client: Client, analysis: Analysis | None = None) -> None:
        """``analysis``: see Checker."""
        self.client = client
        self.settings = EditorSettings()
        self.checker = Checker(analysis)
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rag-lsp-check")
        self.published: dict[Path, Published] = {}
        # Pull clients: files whose diagnostics went away since the last workspace
        # pull (deleted, or closed and not covered by the scan), to report empty once.
        self.dropped: dict[Path, str] = {}
        # Set at initialize: the client pulls diagnostics, and may be asked to pull again.
        self.pull = False
        self.refresh_support = False
        # Adds what is shown with a file's findings (run results, set by the
        # server), and the findings of each file as the last pass left them.
        self.extra: Callable[[Path, FileDiagnostics], FileDiagnostics] | None = None
        self._base: dict[Path, FileDiagnostics] = {}
        self._result_ids = itertools.count(1)
        self._changed_files: dict[Path, None] = {}
        # Open documents whose diagnostics were computed for a superseded version.
        self._recheck: dict[Path, None] = {}
        self.generation = 0
        self._checked = 0
        self._full = False
        self._deadline = 0.0
        # Set when a change moves the deadline of the pass waiting for it earlier.
        self._sooner: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._ready: asyncio.Event | None = None
        self._idle: asyncio.Event | None = None
        self._progress_token: types.ProgressToken | None = None
        self._progress_percent = -1
        self._shut_down = False
        # Large messages arriving (see message_arriving), each set once handled.
        self._arriving: list[asyncio.Event] = []

    # -------------------------------------------------- events (loop thread)

    def _events(self) -> tuple[asyncio.Event, asyncio.Event]:
        # Created lazily: they belong to the loop the server runs in. Not idle until
        # the first pass (the start-up scan) has run: a pull before it must wait.
        if self._ready is None or self._idle is None:
            self._ready, self._idle = asyncio.Event(), asyncio.Event()
        return self._ready, self._idle

    def start(self) -> None:
        """Initialization is over: settings are known, checks may run."""
        ready, _ = self._events()
        ready.set()

    def changed(self, *, delay: float = 0.0, full: bool = False) -> None:
        """Something the diagnostics depend on changed: schedule a pass."""
        if self._shut_down:
            return
        _, idle = self._events()
        loop = asyncio.get_running_loop()
        self.generation += 1
        self._full |= full
        deadline = loop.time() + delay
        if deadline < self._deadline and self._sooner is not None:
            self._sooner.set()  # a pass waiting for a later deadline starts now
        self._deadline = deadline
        idle.clear()
        if self._task is None or self._task.done():
            self._task = loop.create_task(self._run())

    def message_arriving(self) -> Callable[[], None]:
        """A large message is arriving (a dataset the editor opens, most likely):
        a pass due before it has been handled waits for it, and what to call
        once it has. Twenty megabytes take a few tenths of a second to arrive and
        decode; a pass that started meanwhile would check the disk's text of that
        dataset, and the editor's would wait for a second one."""
        arrived = asyncio.Event()
        self._arriving.append(arrived)

        def handled() -> None:
            arrived.set()
            if arrived in self._arriving:
                self._arriving.remove(arrived)

        return handled

    async def _messages_arrived(self) -> None:
        """Wait (at most ARRIVAL_WAIT_S) for the large messages arriving."""
        for arrived in list(self._arriving):
            try:
                await asyncio.wait_for(arrived.wait(), ARRIVAL_WAIT_S)
            except asyncio.TimeoutError:
                log.warning("a large message did not arrive in %.0f s; checking without it", ARRIVAL_WAIT_S)
                if arrived in self._arriving:
                    self._arriving.remove(arrived)

    def files_changed(self, paths: list[Path]) -> None:
        """Watched files were created, changed or deleted on disk: re-check what depends on them."""
        for path in paths:
            self._changed_files[path] = None
        if paths:
            self.changed(delay=DEBOUNCE_S)

    async def on_worker(self, job: Callable[[Checker], T]) -> T:
        """Run ``job`` with the checker on the worker thread (after any pass already queued)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.executor, job, self.checker)

    async def settled(self) -> None:
        """Wait until every scheduled pass has run and been published."""
        _, idle = self._events()
        await idle.wait()

    def shutdown(self) -> None:
        self._shut_down = True
        if self._task is not None:
            self._task.cancel()
        self.executor.shutdown(wait=False, cancel_futures=True)
        self.checker.close()

    # -------------------------------------------------- passes

    async def _run(self) -> None:
        ready, idle = self._events()
        loop = asyncio.get_running_loop()
        try:
            await ready.wait()
            while self._checked != self.generation:
                # Debounce: a newer change pushes the deadline back.
                while (wait := self._deadline - loop.time()) > 0:
                    self._sooner = asyncio.Event()
                    try:
                        await asyncio.wait_for(self._sooner.wait(), wait)
                    except asyncio.TimeoutError:
                        pass
                    self._sooner = None
                if self._arriving:
                    await self._messages_arrived()
                    continue  # handling them may have pushed the deadline back
                snapshot = self._snapshot()
                self._full = False
                try:
                    result = await loop.run_in_executor(self.executor, self.checker.run, snapshot, self._progress_from_thread(loop))
                except Exception:  # a failed pass is logged; the next change retries
                    log.exception("check pass failed")
                    result = None
                self._checked = snapshot.generation
                if result is not None and result.resync:
                    self._resend(result.resync)
                if result is not None:
                    try:
                        self._publish(snapshot, result)
                    except Exception:
                        log.exception("publishing diagnostics failed")
        finally:
            # Done, or cancelled at shutdown: nobody should wait for more.
            idle.set()

    def _resend(self, paths: set[Path]) -> None:
        """The checker could not follow these documents' changes: send them whole."""
        for key, document in self.client.workspace.text_documents.items():
            if path_of(key) in paths and isinstance(document, LineDocument):
                document.resend()
        self.generation += 1

    def folders(self) -> tuple[Path, ...]:
        """The editor's workspace folders (its root when it names no folders)."""
        workspace = self.client.workspace
        folders = []
        for uri in [folder.uri for folder in workspace.folders.values()] or [workspace.root_uri]:
            path = path_of(uri) if uri else None
            if path is not None:
                try:
                    folders.append(path.resolve())
                except (OSError, RuntimeError):
                    folders.append(path)
        return tuple(folders)

    def _snapshot(self) -> Snapshot:
        workspace = self.client.workspace
        documents: dict[Path, OpenDocument] = {}
        for key, document in workspace.text_documents.items():
            path = path_of(key)
            if path is None:
                continue
            # pygls keys documents by the unquoted URI; the client knows the one it sent.
            if isinstance(document, LineDocument) and path.suffix == ".jsonl":
                # A dataset travels as its changes since the last pass: the checker
                # keeps a model of it and checks only the edited lines. The first
                # time, its lines: a large dataset's text is not joined for it.
                lines, changes = document.take_changes()
                size = document.whole_size if lines is not None else None
                documents[path] = OpenDocument(document.uri, document.version, None, tuple(changes), lines, size)
            else:
                documents[path] = OpenDocument(document.uri, document.version, document.source)
        changed_files = tuple(self._changed_files)
        self._changed_files = {}
        recheck = tuple(self._recheck)
        self._recheck = {}
        capabilities = self.client.client_capabilities
        publish = capabilities.text_document.publish_diagnostics if capabilities.text_document else None
        return Snapshot(
            generation=self.generation,
            documents=documents,
            folders=self.folders(),
            settings=self.settings,
            encoding=encoding_name(workspace.position_encoding),
            related_information=bool(publish and publish.related_information),
            full=self._full,
            changed_files=changed_files,
            recheck=recheck,
        )

    def _open_versions(self) -> dict[Path, int | None]:
        versions = {}
        for uri, document in self.client.workspace.text_documents.items():
            path = path_of(uri)
            if path is not None:
                versions[path] = document.version
        return versions

    def _publish(self, snapshot: Snapshot, result: PassResult) -> None:
        now = self._open_versions()
        # Pull clients are asked to pull again when files they are not editing changed.
        refresh = False
        external = snapshot.full or bool(snapshot.changed_files)
        for path, file in result.files.items():
            was = snapshot.documents.get(path)
            if (was is not None or path in now) and (was is None or path not in now or now[path] != was.version):
                # Computed for a superseded version (or open state): a newer pass
                # follows. It checks the file again even if the newer version has
                # the same text (an edit that changed nothing), or these findings,
                # never published, would be lost.
                if path in now:
                    self._recheck[path] = None
                continue
            if self._send(path, file):
                refresh |= external or path not in now
        for path, last in list(self.published.items()):
            if last.root in result.checked_roots and path not in result.files and path not in now:
                del self.published[path]
                self._base.pop(path, None)
                if last.diagnostics:
                    if self.pull:
                        self.dropped[path] = last.uri
                        refresh = True
                    else:
                        self._notify(last.uri, None, [])
        if refresh and self.pull and self.refresh_support:
            self.client.workspace_diagnostic_refresh(None)

    def republish(self, paths: list[Path]) -> None:
        """Send the files' last findings again, with what ``extra`` adds to them now
        (a run's results came or went); not for a file whose newer version has a
        pass on its way, which will carry them."""
        now = self._open_versions()
        refresh = False
        for path in paths:
            file = self._base.get(path)
            if file is not None and (path not in now or now[path] == file.version):
                refresh |= self._send(path, file)
        if refresh and self.pull and self.refresh_support:
            self.client.workspace_diagnostic_refresh(None)

    def _send(self, path: Path, file: FileDiagnostics) -> bool:
        """Keep (and push) a file's diagnostics; whether they changed."""
        self._base[path] = file
        if self.extra is not None:
            file = self.extra(path, file)
        last = self.published.get(path)
        if last is not None and last.uri != file.uri and last.diagnostics:
            if self.pull:
                self.dropped[path] = last.uri
            else:
                self._notify(last.uri, None, [])  # the editor now names the file differently
            last = None
        unchanged = last is not None and _same_diagnostics(last, file)
        if last is None:
            needed = bool(file.diagnostics) or file.version is not None
        else:
            needed = last.version != file.version or not unchanged
        result_id = last.result_id if unchanged and last is not None else str(next(self._result_ids))
        self.published[path] = Published(file.uri, file.version, file.diagnostics, file.root, result_id, file.complete_json)
        self.dropped.pop(path, None)
        if needed and not self.pull:
            self._notify(file.uri, file.version, file.diagnostics, file.json)
        return not unchanged and (last is not None or bool(file.diagnostics))

    def _notify(
        self, uri: str, version: int | None, diagnostics: Sequence[types.Diagnostic], as_json: list[str] | None = None
    ) -> None:
        writer = getattr(self.client.protocol, "writer", None)
        if as_json is None or len(as_json) != len(diagnostics) or writer is None:
            self.client.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=list(diagnostics), version=version)
            )
            return
        # The message is written from the diagnostics' JSON, kept from pass to pass:
        # converting a thousand diagnostics again for every version would cost more
        # than checking the edit (the same bytes pygls would write).
        params = _object_with_list({"uri": uri, "version": version}, "diagnostics", as_json)
        body = '{"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": ' + params + "}"
        data = body.encode("utf-8")
        written = writer.write(b"Content-Length: %d\r\n\r\n" % len(data) + data)
        if inspect.isawaitable(written):  # as pygls does for asynchronous writers
            asyncio.ensure_future(written)

    # -------------------------------------------------- pull diagnostics

    def document_report(self, uri: str, previous_result_id: str | None) -> types.DocumentDiagnosticReport | RawJson:
        """The ``textDocument/diagnostic`` answer for ``uri``, as of the last pass:
        a full report written from the diagnostics' JSON, as a push is."""
        path = path_of(uri)
        last = self.published.get(path) if path is not None else None
        if last is None:
            return types.RelatedFullDocumentDiagnosticReport(items=[])
        if previous_result_id is not None and previous_result_id == last.result_id:
            return types.RelatedUnchangedDocumentDiagnosticReport(result_id=last.result_id)
        if last.json is not None:
            return RawJson(_full_report(last))
        return types.RelatedFullDocumentDiagnosticReport(items=list(last.diagnostics), result_id=last.result_id)

    def workspace_report(self, previous: dict[str, str]) -> types.WorkspaceDiagnosticReport | RawJson:
        """The ``workspace/diagnostic`` answer: every checked file, open or not;
        "unchanged" for those whose ``previous`` result id is still current, and an
        empty report for files whose findings went away (deleted, closed)."""
        if all(last.json is not None for last in self.published.values()):
            # Written from the diagnostics' JSON, as a push is: converting the
            # diagnostics of every file again would cost more than checking them.
            reports = [
                json.dumps({"uri": last.uri, "version": last.version, "kind": "unchanged", "resultId": last.result_id})
                if previous.get(last.uri) == last.result_id
                else _full_report(last, with_uri=True)
                for last in self.published.values()
            ]
            reports += [json.dumps({"uri": uri, "version": None, "kind": "full", "items": []}) for uri in self.dropped.values()]
            self.dropped.clear()
            return RawJson(_object_with_list({}, "items", reports))
        items: list[types.WorkspaceDocumentDiagnosticReport] = []
        for last in self.published.values():
            if previous.get(last.uri) == last.result_id:
                items.append(
                    types.WorkspaceUnchangedDocumentDiagnosticReport(uri=last.uri, version=last.version, result_id=last.result_id)
                )
            else:
                items.append(
                    types.WorkspaceFullDocumentDiagnosticReport(
                        uri=last.uri, version=last.version, items=list(last.diagnostics), result_id=last.result_id
                    )
                )
        for uri in self.dropped.values():
            items.append(types.WorkspaceFullDocumentDiagnosticReport(uri=uri, version=None, items=[]))
        self.dropped.clear()
        return types.WorkspaceDiagnosticReport(items=items)

    # -------------------------------------------------- progress

    async def scan(self) -> None:
        """Check the whole workspace, with work-done progress when the client has it."""
        # The workspace's files and suites are read at once, on the checking thread,
        # while the scan waits for the editor's first documents.
        if not self._shut_down:
            self.executor.submit(self.checker.prepare, self.folders(), self.settings)
        token = await self._create_progress()
        if token is not None:
            self._progress_token, self._progress_percent = token, 0
            self.client.work_done_progress.begin(
                token,
                types.WorkDoneProgressBegin(title="rag-lsp: checking the workspace", percentage=0, cancellable=False),
            )
        try:
            # Documents opened already (during the configuration round trip) need no wait.
            self.changed(full=True, delay=0.0 if self.client.workspace.text_documents else SCAN_DELAY_S)
            await self.settled()
        finally:
            if token is not None:
                self._progress_token = None
                self.client.work_done_progress.end(token, types.WorkDoneProgressEnd(message="workspace checked"))

    async def _create_progress(self) -> types.ProgressToken | None:
        capabilities = self.client.client_capabilities
        if not (capabilities.window and capabilities.window.work_done_progress):
            return None
        token = f"rag-lsp/scan/{uuid.uuid4()}"
        try:
            await self.client.work_done_progress.create_async(token)
        except Exception:  # the client refused: scan without a progress bar
            log.warning("the client refused a progress token", exc_info=True)
            return None
        return token

    def _progress_from_thread(self, loop: asyncio.AbstractEventLoop):
        def report(done: int, total: int) -> None:
            loop.call_soon_threadsafe(self._report, done, total)

        return report

    def _report(self, done: int, total: int) -> None:
        token = self._progress_token
        if token is None or total <= 0:
            return
        percent = min(100, done * 100 // total)
        # A scan may take more than one pass (a document opened while it runs is
        # checked again, with the files that read it): its progress counts the
        # first pass only and never goes back.
        if percent <= self._progress_percent:
            return
        self._progress_percent = percent
        self.client.work_done_progress.report(
            token, types.WorkDoneProgressReport(message=f"{done:,}/{counted(total, 'file')}", percentage=percent)
        )
