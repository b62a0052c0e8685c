"""The run thread: each root's workspace and target pool as runs see them, and
the job that runs what a command asked for.

Runs happen on one daemon thread (:class:`Worker`), in order, off the message
loop and off the checker. Each workspace root has its own core workspace there
(:class:`RunRoot`: the editor's open documents put in front of the disk when a
run starts) and one long-lived :class:`~rag_lsp.core.running.targets.TargetPool`, so
command processes and the builtin index are kept between runs. A job
(:meth:`RunThread.job`) chooses the suites (:mod:`rag_lsp.core.running.selection`), runs
them through the same :class:`~rag_lsp.core.running.runner.Runner` as ``rag-lsp run``,
and answers an :class:`Outcome`: the marks to place, the messages to show, a
summary of each suite.
"""

from __future__ import annotations

import concurrent.futures
import logging
import queue
import threading
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Callable

from lsprotocol import types

from ... import collector
from ...core.running.comparison import direction_from
from ...core.workspace.documents import document_relative, drop_closed, hold_text
from ...core.running.report import BaselineError, RunFigures, load_baseline, suite_summary
from ...core.running.marks import Baseline, case_id_of, case_marks, refusal_marks, suite_marks
from ...core.running.results import TARGET_FAILED, CaseNotFound, SuiteResult
from ...core.running.runner import Runner
from ...core.running.selection import choose_for_case, choose_for_suite, indexed_suites, shares_dataset
from ...core.workspace.settings import EditorSettings, Settings
from ...core.workspace.suitefacts import SuiteInfo, TargetInfo
from ...core.running.targets import TargetPool
from ...core.reading.wording import counted
from ...core.workspace.roots import read_workspace_config, settings_source
from ...core.workspace.workspace import Workspace
from ..base.uris import near
from .run_commands import RUN_CASE, RunRequest
from .run_marks import Placed, lines_of

log = logging.getLogger(__name__)

UNTRUSTED = (
    "the workspace is not trusted, so rag-lsp starts no process and sends no request for it; "
    "trust the workspace in your editor or set ragLsp.trusted to true to run it"
)

# Called on the run thread with (suite or target, done, total).
Report = Callable[[str, int, int], None]


@dataclass(frozen=True, slots=True)
class _Job:
    future: concurrent.futures.Future[Any]
    job: Callable[..., Any]
    args: tuple[Any, ...]


class Worker:
    """One daemon thread running jobs in order (a run never keeps the server from exiting)."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    def submit(self, job: Callable[..., Any], *args: Any) -> concurrent.futures.Future[Any]:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._jobs.put(_Job(future, job, args))
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name=self._name, daemon=True)
            self._thread.start()
        return future

    def _loop(self) -> None:
        while True:
            item = self._jobs.get()
            if item is None:
                return
            future = item.future
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(item.job(*item.args))
            except BaseException as error:  # noqa: BLE001 - handed to the waiting coroutine
                future.set_exception(error)

    def stop(self) -> None:
        self._jobs.put(None)


class RunRoot:
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
            self._baseline = (stamp, load_baseline(path, self.workspace.root))
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
        drop_closed(workspace, wanted)
        for path, text in wanted.items():
            hold_text(workspace, path, text)
        return workspace

    def forget(self, changed: list[Path]) -> None:
        workspace = self.workspace
        root = workspace.root
        for path in changed:
            if path == root or root in path.parents:
                workspace.invalidate(document_relative(workspace, path))


# ---------------------------------------------------------------- a job


@dataclass(frozen=True, slots=True)
class Message:
    """A message the run shows the user once it has ended."""

    kind: types.MessageType
    text: str


@dataclass
class Outcome:
    placed: list[Placed] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    suites: list[dict[str, Any]] = field(default_factory=list)
    note: str | None = None


class RunThread:
    """The run thread's roots, and the jobs it runs (all on that thread but
    :meth:`submit` and :meth:`stop`).

    ``in_force`` is filled with the settings in force at each workspace root that
    ran, for the results' severities (read on the message loop).
    """

    def __init__(self, in_force: dict[Path, Settings]) -> None:
        self._worker = Worker("rag-lsp-run")
        self._roots: dict[Path, RunRoot] = {}
        self._in_force = in_force

    def submit(self, job: Callable[..., Any], *args: Any) -> concurrent.futures.Future[Any]:
        return self._worker.submit(job, *args)

    def stop(self) -> None:
        self._worker.stop()

    # -------------------------------------------------- closing targets

    def close_outside(self, folders: tuple[Path, ...], open_paths: list[Path]) -> None:
        if not folders:
            return
        for root, state in list(self._roots.items()):
            if not near(root, folders) and not any(path == root or root in path.parents for path in open_paths):
                state.pool.close()
                del self._roots[root]

    def close_stale(self, settings: EditorSettings) -> None:
        for root, state in list(self._roots.items()):
            if state.settings != settings:
                state.pool.close()
                del self._roots[root]

    def held_target(self, root: Path, info: TargetInfo) -> Any:
        """The target of ``info`` that runs opened at ``root``, if any (callable on
        any thread: it never opens one)."""
        state = self._roots.get(root)
        return state.pool.held(info) if state is not None else None

    def load_cached(
        self, root: Path, target_id: str, documents: dict[Path, str], settings: EditorSettings, loading: Callable[[], None]
    ) -> bool:
        """Load the cached index of the builtin target ``target_id`` at ``root``
        (embedding nothing); whether one was loaded."""
        state = self._roots.get(root)
        if state is not None and state.settings != settings:
            return False  # the next run opens the root anew
        if state is None:
            state = self._roots[root] = RunRoot(root, settings, documents)
            self._in_force[state.workspace.root] = state.workspace.settings
        else:
            state.sync(documents, [])
        info = state.workspace.targets().get(target_id)
        if info is None or info.kind != "builtin":
            return False
        try:
            target = state.pool.get(info)
        except Exception:  # noqa: BLE001 - a target that cannot be opened is the runs' to report
            return False
        load_cached = getattr(target, "load_cached", None)
        return bool(load_cached(loading)) if load_cached is not None else False

    def close_all(self) -> None:
        for state in self._roots.values():
            state.pool.close()
        self._roots.clear()

    # -------------------------------------------------- the job

    @collector.pausing  # a run reads datasets and scores every case (see rag_lsp.collector)
    def job(
        self,
        root: Path,
        request: RunRequest,
        documents: dict[Path, str],
        changed: list[Path],
        settings: EditorSettings,
        cancel: threading.Event,
        progress: Report,
        indexing: Report | None = None,
    ) -> Outcome:
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
            state = self._roots[root] = RunRoot(root, settings, documents)
            # For the results' severities, read on the message loop.
            self._in_force[state.workspace.root] = state.workspace.settings
        workspace = state.sync(documents, changed)
        outcome = Outcome()
        relative = document_relative(workspace, request.path)
        if request.command == RUN_CASE:
            choice = choose_for_case(workspace, relative, request.suite)
        else:
            choice = choose_for_suite(workspace, relative, request.line, request.suite)
        if choice.note is not None:
            return _note(outcome, choice.note)
        indexed = indexed_suites(workspace)

        runner = Runner(workspace, allow_exec=settings.trusted, exec_refusal=UNTRUSTED, pool=state.pool)
        try:
            baseline = state.baseline()
        except BaselineError as error:
            baseline = None
            outcome.messages.append(Message(types.MessageType.Warning, f"rag-lsp: ragLsp.baseline: {error}; results are shown without deltas"))
        texts: dict[str, Callable[[int], str]] = {}

        def line_text_of(file: str) -> Callable[[int], str]:
            if file not in texts:
                source = workspace.read(file)
                texts[file] = lines_of(source.text if source is not None else "")
            return texts[file]

        for chosen in choice.suites:
            if cancel.is_set():
                break
            suite, key = chosen.suite, chosen.key
            name = suite.id or "?"
            # The index's progress, said of this suite's target.
            building = partial(indexing, suite.target or "?") if indexing is not None else None
            if request.command == RUN_CASE:
                self._run_case(outcome, runner, suite, key, request, line_text_of, workspace, cancel, baseline, building)
                continue

            def report(done: int, total: int, name: str = name) -> None:
                progress(name, done, total)

            try:
                result = runner.run_suite(suite, cancel=cancel, progress=report, building=building)
            except Exception as error:  # noqa: BLE001 - one suite failing must not stop the others
                log.exception("running suite %s failed", name)
                outcome.messages.append(Message(types.MessageType.Error, f"rag-lsp: running suite {name!r} failed: {error}"))
                continue
            outcome.suites.append(suite_summary(result))
            suite_path = workspace.absolute(suite.file)
            parsed = workspace.parsed_yaml(suite.file)
            if parsed is not None:
                outcome.placed.append(Placed(suite_path, suite_marks(result, suite, key, parsed.lines, baseline), key, True))
            if suite.dataset is not None and result.error is None:
                dataset_lines = line_text_of(suite.dataset)
                outcome.placed.append(
                    Placed(workspace.absolute(suite.dataset), case_marks(result, suite, key, dataset_lines, baseline=baseline, named=shares_dataset(indexed, suite)), key, True)
                )
            _tell(outcome, result, name)
        return outcome

    def _run_case(
        self,
        outcome: Outcome,
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
        gdi = suite.scores_metrics_only
        if not line_text(line).strip():
            # Lines as line_text reads them (split at "\n" alone), but for the
            # empty one after a final line break.
            text = source.text if (source := workspace.read(suite.dataset)) is not None else ""
            count = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
            if line >= count:
                _note(outcome, f"line {line + 1} is past the end of {suite.dataset} ({count:,} lines): there is no case to run")
            else:
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
            outcome.messages.append(Message(types.MessageType.Error, f"rag-lsp: running {case_id!r} of {name!r} failed: {error}"))
            return
        outcome.suites.append(suite_summary(result))
        path = workspace.absolute(suite.dataset)
        if result.error is not None and result.findings:
            # Errors in its suite file stop the suite whichever case is asked for:
            # said once, on the dataset's first case and on the suite, not on every
            # line a case is run from.
            first = next((number for number in range(line + 1) if line_text(number).strip()), line)
            outcome.placed.append(Placed(path, refusal_marks(result, key, line_text, [first], gdi), key, True))
            parsed = workspace.parsed_yaml(suite.file)
            if parsed is not None:
                outcome.placed.append(Placed(workspace.absolute(suite.file), suite_marks(result, suite, key, parsed.lines), key, True))
            _tell(outcome, result, name)
            return
        if result.error is not None:
            marks = refusal_marks(result, key, line_text, [line], gdi)
        else:
            marks = case_marks(result, suite, key, line_text, [line], baseline, named=shares_dataset(indexed_suites(workspace), suite))
        outcome.placed.append(Placed(path, marks, key, False))
        _tell(outcome, result, name)


def _note(outcome: Outcome, text: str) -> Outcome:
    """Say why nothing was run, once (each suite that reads a dataset finds the same)."""
    outcome.note = text
    message = Message(types.MessageType.Warning, f"rag-lsp: {text}")
    if message not in outcome.messages:
        outcome.messages.append(message)
    return outcome


def _tell(outcome: Outcome, result: SuiteResult, name: str) -> None:
    for note in result.notes:
        # Said once per target (a fallback to keyword search): the results alone would not say why.
        log.warning("suite %s: %s", name, note)
        outcome.messages.append(Message(types.MessageType.Warning, f"rag-lsp: {note}"))
    if result.error is not None:
        kind = types.MessageType.Error if result.error_code == TARGET_FAILED else types.MessageType.Warning
        error = result.error.removeprefix("not run: ")
        outcome.messages.append(Message(kind, f"rag-lsp: suite {name!r} was not run: {error}"))
    elif result.cancelled:
        outcome.messages.append(
            Message(types.MessageType.Info, f"rag-lsp: the run of {name!r} was cancelled after {counted(len(result.cases), 'case')}")
        )
