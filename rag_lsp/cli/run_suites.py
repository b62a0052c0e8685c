"""The suites a run is of, and running them: which suites PATHs name (folders,
suite files, datasets, each in its own workspace), and the run itself, with a
progress bar on a terminal. ``rag-lsp run`` and ``rag-lsp compare`` share it.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from ..core.workspace.suitefacts import SuiteInfo
from ..core.running.selection import suite_files_without_suites, suites_named_by_file, suites_under
from ..core.workspace.roots import find_root
from ..core.workspace.workspace import SUITE_FILE, Workspace
from .exits import UsageError
from .outcome import Run

if TYPE_CHECKING:  # imported where a run starts: `rag-lsp check` need not load them
    from ..core.running.recording import Recordings

# A run longer than this shows a progress bar (on a terminal's stderr).
PROGRESS_AFTER_S = 0.3


def select(paths: list[Path], suite_ids: list[str] | None) -> list[tuple[Workspace, SuiteInfo | str]]:
    """The suites the paths name, each with its workspace, in workspace order;
    and, without ``suite_ids``, the suite files among them that hold no suite that
    can be read (by their path: the run reports them as not run)."""
    workspaces: dict[Path, Workspace] = {}
    chosen: dict[tuple[Path, str, int], tuple[Workspace, SuiteInfo]] = {}
    unread: dict[tuple[Path, str], tuple[Workspace, str]] = {}

    def workspace_at(root: Path) -> Workspace:
        return workspaces.get(root) or workspaces.setdefault(root, Workspace.configured(root))

    def choose_under(workspace: Workspace, relative: str) -> None:
        for suite in suites_under(workspace, relative):
            chosen[(workspace.root, suite.file, suite.node.start)] = (workspace, suite)
        for file in suite_files_without_suites(workspace, relative):
            unread[(workspace.root, file)] = (workspace, file)
        # A folder below holding .punica/ is a workspace of its own (as `check` reads it).
        for root in workspace.nested_workspaces("" if relative in ("", ".") else relative + "/"):
            choose_under(workspace_at(root), "")

    for path in paths:
        if not os.path.exists(path):  # pathlib raises for a name too long, os.path says False
            raise UsageError(f"{path}: no such file or folder")
        workspace = workspace_at(find_root(path))
        relative = workspace.relative(path)
        if path.is_dir():
            choose_under(workspace, relative)
            continue
        named = suites_named_by_file(workspace, relative)
        if named is None:
            raise UsageError(f"{path}: neither a suite file nor a dataset")
        if not named and workspace.kind_of(relative) == SUITE_FILE:
            unread[(workspace.root, relative)] = (workspace, relative)
        for suite in named:
            chosen[(workspace.root, suite.file, suite.node.start)] = (workspace, suite)
    found: list[tuple[Workspace, SuiteInfo | str]] = list(chosen.values())
    if suite_ids:
        known = sorted({suite.id for _, suite in chosen.values() if suite.id})
        missing = [suite_id for suite_id in suite_ids if suite_id not in known]
        if missing:
            listed = ", ".join(known) if known else "none"
            unreadable = ""
            if unread:
                files = ", ".join(file for _, file in unread.values())
                unreadable = f" (no suite of {files} can be read: `rag-lsp check` says why)"
            raise UsageError(f"no suite {', '.join(map(repr, missing))} here; suites: {listed}{unreadable}")
        found = [(workspace, suite) for workspace, suite in chosen.values() if suite.id in suite_ids]
    else:
        found += unread.values()
    if not found:
        raise no_suites(paths)
    return found


def no_suites(paths: list[Path]) -> UsageError:
    where = ", ".join(str(path) for path in paths)
    return UsageError(f"no suites found in {where} (suite files are YAML files with a top-level `suites:`)")


def execute(
    selected: list[tuple[Workspace, SuiteInfo | str]],
    case_ids: list[str] | None = None,
    *,
    no_exec: bool = False,
    show_progress: bool | None = None,
    ks: tuple[int, ...] = (),
    recordings: Recordings | None = None,
    keep_hits: bool = False,
) -> Run:
    """Run the selected suites; the CLI's run is explicit, so it may execute targets.

    ``ks`` sweeps k (every case also scored at each); ``recordings`` receive every
    answer the targets give, and are written when the run ends (thrown away when
    it fails with an error)."""
    from ..core.running.results import CaseNotFound
    from ..core.running.runner import Runner

    run = Run()
    started = time.perf_counter()
    runners: dict[Path, Runner] = {}
    found_cases: set[str] = set()
    progress = _ProgressBar() if show_progress is not False and sys.stderr.isatty() else None
    try:
        for workspace, suite in selected:
            runner = runners.get(workspace.root)
            if runner is None:
                runner = runners[workspace.root] = Runner(
                    workspace,
                    allow_exec=not no_exec,
                    exec_refusal="--no-exec forbids running commands and calling services",
                    # Only the TREC format shows hits (their match field); else targets
                    # may read only the match field.
                    keep_hits=keep_hits,
                )
            if isinstance(suite, str):
                unread = runner.unread_suite_file(suite)
                if unread is not None:
                    run.results.append((workspace, unread))
                continue
            callback = progress.callback(suite.id or "?") if progress is not None else None
            building = progress.building(suite.target or "?") if progress is not None else None
            try:
                record = recordings.for_suite(suite.id, suite.target) if recordings is not None and suite.target else None
            except OSError as error:
                raise UsageError(f"--record {recordings.pattern}: cannot write: {error.strerror or error}") from None
            try:
                result = runner.run_suite(
                    suite, case_ids=case_ids, progress=callback, ks=ks, record=record, building=building
                )
            except CaseNotFound:
                continue
            finally:
                if progress is not None:
                    progress.finish()
            found_cases.update(case.id for case in result.cases)
            run.results.append((workspace, result))
            run.scoring[id(result)] = (suite.match, suite.k)
        # A suite that was not run has no cases to look the ids up in: it is
        # reported with why, and the ids may well be its own.
        if case_ids and all(result.reason is None for _, result in run.results):
            missing = [case_id for case_id in case_ids if case_id not in found_cases]
            if missing:
                suites = ", ".join(suite.id or "?" for _, suite in selected if not isinstance(suite, str))
                raise UsageError(f"no case {', '.join(map(repr, missing))} in the suites run ({suites})")
    except BaseException:
        if recordings is not None:
            recordings.close(keep=False)
        raise
    finally:
        for runner in runners.values():
            runner.close()
    if recordings is not None:
        try:
            recordings.close()
        except OSError as error:
            raise UsageError(f"--record {recordings.pattern}: cannot write: {error.strerror or error}") from None
    run.seconds = time.perf_counter() - started
    return run


class _ProgressBar:
    """A rich progress bar on stderr, shown once a suite has run (or its target's
    index has been building) for a moment."""

    def __init__(self) -> None:
        self._progress = None
        self._task = None
        self._name = ""

    def callback(self, name: str) -> Callable[[int, int], None]:
        return self._updater(name)

    def building(self, target: str) -> Callable[[int, int], None]:
        """The bar of a target's index being built: files read of files to read."""
        return self._updater(f"indexing {target} (files)")

    def _updater(self, name: str) -> Callable[[int, int], None]:
        started = time.monotonic()

        def update(done: int, total: int) -> None:
            if self._progress is None:
                if time.monotonic() - started < PROGRESS_AFTER_S or done >= total:
                    return
                from rich.console import Console
                from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

                self._progress = Progress(
                    TextColumn("{task.description}", markup=False),  # a suite id is text
                    BarColumn(),
                    # Counts as the reports write them ("1,200/100,000").
                    TextColumn("{task.completed:,.0f}/{task.total:,.0f}"),
                    TimeRemainingColumn(),
                    console=Console(file=sys.stderr),
                    transient=True,
                )
                self._progress.start()
            if self._task is None or self._name != name:
                if self._task is not None:
                    self._progress.remove_task(self._task)
                self._task = self._progress.add_task(name, total=total)
                self._name = name
            self._progress.update(self._task, completed=done, total=total)

        return update

    def finish(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
            self._task = None
            self._name = ""
