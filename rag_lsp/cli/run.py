"""``rag-lsp run``: suites through their targets and the scorer, for CI.

    rag-lsp run [PATH ...] [--suite ID] [--case ID] [--format text|json|junit] [--no-exec]

PATHs are folders (the suites in suite files under them), suite files (their
suites) or datasets (the suites that use them); the default is the workspace of
the current folder. Exit 0 when every suite passed, 1 when a threshold failed, a
case is broken, a target failed or a suite could not run, 2 on usage or internal
errors. The run is explicit, so ``command`` and ``http`` targets run;
``--no-exec`` refuses them (those suites fail with RAG405).
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..core.runner import CaseNotFound, Runner, SuiteResult
from ..core.workspace import DATASET_FILE, SUITE_FILE, SuiteInfo, Workspace, find_root
from . import EXIT_FINDINGS, EXIT_OK, UsageError

FORMATS = ("text", "json", "junit")

# A run longer than this shows a progress bar (on a terminal's stderr).
PROGRESS_AFTER_S = 0.3


def add_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "run",
        help="run suites through their targets and compare with their thresholds",
        description="Run suites through their targets, print each case's figures and the suite means against "
        "the thresholds. PATHs are folders, suite files or datasets (default: the workspace of the current "
        "folder). Exit 0 when every suite passed, 1 when a threshold failed or a case is broken, 2 on usage errors.",
    )
    parser.add_argument("paths", nargs="*", metavar="PATH", help="folders, suite files or datasets")
    parser.add_argument("--suite", action="append", metavar="ID", help="run only this suite (repeatable)")
    parser.add_argument("--case", action="append", metavar="ID", help="run only this case (repeatable)")
    parser.add_argument("--format", choices=FORMATS, default="text", help="output format (default: text)")
    parser.add_argument(
        "--no-exec",
        action="store_true",
        help="do not run command targets or call http targets (their suites fail with RAG405)",
    )
    parser.set_defaults(handler=run_command)


@dataclass
class Run:
    """What a run did: each suite's result with its workspace, and how long it took."""

    results: list[tuple[Workspace, SuiteResult]] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return all(result.passed for _, result in self.results)


def run_command(arguments: argparse.Namespace) -> int:
    # A one-shot process building many small acyclic objects: the cycle collector
    # would only re-scan them.
    gc.disable()
    selected = select([Path(path) for path in arguments.paths] or [Path.cwd()], arguments.suite)
    run = execute(selected, arguments.case, no_exec=arguments.no_exec, show_progress=arguments.format == "text" or None)
    from . import run_formats

    output = run_formats.FORMATS[arguments.format](run)
    if arguments.format != "text":
        # The reasons suites did not run, for people reading the log.
        for _, result in run.results:
            if result.error:
                print(f"rag-lsp: suite {result.id}: {result.error}", file=sys.stderr)
    data = output if isinstance(output, bytes) else output.encode("utf-8")
    out = getattr(sys.stdout, "buffer", None)
    if out is not None:
        sys.stdout.flush()
        out.write(data)
        out.flush()
    else:
        sys.stdout.write(data.decode("utf-8"))
    return EXIT_OK if run.passed else EXIT_FINDINGS


def select(paths: list[Path], suite_ids: list[str] | None) -> list[tuple[Workspace, SuiteInfo]]:
    """The suites the paths name, each with its workspace, in workspace order."""
    workspaces: dict[Path, Workspace] = {}
    chosen: dict[tuple[Path, str, int], tuple[Workspace, SuiteInfo]] = {}
    for path in paths:
        if not path.exists():
            raise UsageError(f"{path}: no such file or folder")
        root = find_root(path)
        workspace = workspaces.get(root) or workspaces.setdefault(root, Workspace(root))
        relative = workspace.relative(path)
        if path.is_dir():
            prefix = "" if relative in ("", ".") else relative + "/"
            suites = [suite for suite in workspace.suites() if suite.file.startswith(prefix)]
        else:
            kind = workspace.kind_of(relative)
            if kind == SUITE_FILE:
                suites = workspace.suites_of(relative)
            elif kind == DATASET_FILE:
                suites = [suite for suite in workspace.suites() if suite.dataset == relative]
            else:
                raise UsageError(f"{path}: neither a suite file nor a dataset")
        for suite in suites:
            chosen[(root, suite.file, suite.node.start)] = (workspace, suite)
    found = list(chosen.values())
    if suite_ids:
        known = sorted({suite.id for _, suite in found if suite.id})
        missing = [suite_id for suite_id in suite_ids if suite_id not in known]
        if missing:
            listed = ", ".join(known) if known else "none"
            raise UsageError(f"no suite {', '.join(map(repr, missing))} here; suites: {listed}")
        found = [(workspace, suite) for workspace, suite in found if suite.id in suite_ids]
    if not found:
        where = ", ".join(str(path) for path in paths)
        raise UsageError(f"no suites found in {where} (suite files are YAML files with a top-level `suites:`)")
    return found


def execute(
    selected: list[tuple[Workspace, SuiteInfo]],
    case_ids: list[str] | None = None,
    *,
    no_exec: bool = False,
    show_progress: bool | None = None,
) -> Run:
    """Run the selected suites; the CLI's run is explicit, so it may execute targets."""
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
                    # No output format shows hits: targets may read only the match field.
                    keep_hits=False,
                )
            callback = progress.callback(suite.id or "?") if progress is not None else None
            try:
                result = runner.run_suite(suite, case_ids=case_ids, progress=callback)
            except CaseNotFound:
                continue
            finally:
                if progress is not None:
                    progress.finish()
            found_cases.update(case.id for case in result.cases)
            run.results.append((workspace, result))
    finally:
        for runner in runners.values():
            runner.close()
    if case_ids:
        missing = [case_id for case_id in case_ids if case_id not in found_cases]
        if missing:
            suites = ", ".join(suite.id or "?" for _, suite in selected)
            raise UsageError(f"no case {', '.join(map(repr, missing))} in the suites run ({suites})")
    run.seconds = time.perf_counter() - started
    return run


class _ProgressBar:
    """A rich progress bar on stderr, shown once a suite has run for a moment."""

    def __init__(self) -> None:
        self._progress = None
        self._task = None

    def callback(self, name: str) -> Callable[[int, int], None]:
        started = time.monotonic()

        def update(done: int, total: int) -> None:
            if self._progress is None:
                if time.monotonic() - started < PROGRESS_AFTER_S or done >= total:
                    return
                from rich.console import Console
                from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

                self._progress = Progress(
                    TextColumn("{task.description}"),
                    BarColumn(),
                    MofNCompleteColumn(),
                    TimeRemainingColumn(),
                    console=Console(file=sys.stderr),
                    transient=True,
                )
                self._progress.start()
                self._task = self._progress.add_task(name, total=total)
            self._progress.update(self._task, completed=done, total=total)

        return update

    def finish(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
            self._task = None
