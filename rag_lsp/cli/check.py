"""``rag-lsp check``: the server's checks, for CI and pre-commit.

The checks' modules are imported when the command runs, not when the command
line is read (nor are those of the other commands): the helper process that
shares a large dataset's reading starts first, and its own start (an
interpreter, the same modules) overlaps theirs.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .. import collector
from ..core.checking.parallel import Helper, reading_helper
from .exits import EXIT_FINDINGS, EXIT_OK, UsageError

if TYPE_CHECKING:
    from ..core.reading.findings import Finding
    from ..core.workspace.workspace import Workspace
    from .formats import Checked

FAIL_LEVELS = ("error", "warning", "information", "hint", "never")


def add_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "check",
        help="check suites, datasets, manifests and the targets config",
        description="Check suites, datasets, manifests, the targets config and the settings file, with the same "
        "checks and settings as the language server. PATHs are files or folders (default: the whole workspace of "
        "the current folder, from whichever subfolder it is called).",
    )
    parser.add_argument("paths", nargs="*", metavar="PATH", help="files or folders to check")
    parser.add_argument("--format", choices=FORMAT_NAMES, default="text", help="output format (default: text)")
    parser.add_argument(
        "--fail-on",
        choices=FAIL_LEVELS,
        default="error",
        help="exit 1 when a finding has this severity or worse (default: error)",
    )
    parser.add_argument("--explain", metavar="CODE", help="print the documentation of a rule and exit")
    parser.add_argument(
        "--show-settings",
        action="store_true",
        help="print the settings in force in the workspace of each PATH (or of the current folder), each with "
        "where it comes from, and exit",
    )
    parser.add_argument(
        "--unfold",
        action="store_true",
        help="list every occurrence of a finding that most rows of a dataset share for one cause, instead of one "
        "finding that stands for them all",
    )
    # A check holds no process, file or connection to close: see cli._end_now.
    parser.set_defaults(handler=run_check, ends_at_once=True)


def run_check(arguments: argparse.Namespace) -> int:
    if arguments.explain:
        return explain(arguments.explain)
    if arguments.show_settings:
        return show_settings([Path(path) for path in arguments.paths] or [Path.cwd()])
    collector.one_shot()
    unfold = arguments.unfold
    # A folder may hold a large dataset: the helper starts now (see the module's
    # docstring); a check that finds none stops it unused.
    helper = reading_helper(one_reading=True) if not arguments.paths or any(os.path.isdir(path) for path in arguments.paths) else None
    if helper is not None:
        helper.start_soon()
    from .formats import FORMATS

    if arguments.paths:
        checked = check_paths([Path(path) for path in arguments.paths], unfold, helper)
    else:
        checked = check_workspace(Path.cwd(), unfold, helper)
    sys.stdout.write(FORMATS[arguments.format](checked))
    return EXIT_FINDINGS if fails(checked.findings, arguments.fail_on) else EXIT_OK


# The output formats (see cli.formats), named here without importing the checks.
FORMAT_NAMES = ["github", "json", "sarif", "text"]


def explain(code: str) -> int:
    from ..core.checking.rules import all_rules

    rule = all_rules().get(code.strip().upper())
    if rule is None:
        known = ", ".join(all_rules())
        raise UsageError(f"unknown code {code!r}; known codes: {known}")
    print(f"{rule.code} ({rule.name}, {rule.severity.label})\n")
    print(rule.documentation)
    return EXIT_OK


def fails(findings: list[Finding], level: str) -> bool:
    from ..core.reading.findings import Severity

    if level == "never":
        return False
    threshold = Severity.parse(level)
    return any(finding.severity <= threshold for finding in findings)


def check_workspace(folder: Path, unfold: bool = False, helper: Helper | None = None) -> Checked:
    """Check the whole workspace holding ``folder`` (a CI job started in a
    subfolder checks what one started at the root would); a workspace with
    nothing to check is a usage error: the job most likely runs in the wrong place."""
    from ..core.workspace.roots import find_root

    root = find_root(folder)
    checked = check_paths([root], unfold, helper)
    if not checked.files:
        raise UsageError(
            f"nothing to check in the workspace at {root}: no suite, dataset, manifest or settings file "
            "(suites are found at .punica/**/*.yaml and **/*.suite.yaml; the workspace root is the nearest folder "
            "upwards holding .punica/, else the git root)"
        )
    return checked


def check_paths(paths: list[Path], unfold: bool = False, helper: Helper | None = None) -> Checked:
    """Check files and folders; each is checked in the workspace it belongs to
    (files that are none of ours, as pre-commit passes them, are skipped).
    ``unfold``: list every occurrence of a folded finding (see core.checking.folding).
    ``helper``: the helper process started already, if any."""
    from ..core.checking.analysis import Analysis
    from .formats import Checked

    analysis = Analysis(helper) if helper is not None else Analysis()
    # A helper for a large dataset's reading starts before the workspaces are
    # listed: its start then overlaps the listing. A check that finds no large
    # dataset stops it unused.
    analysis.expect_large_in(paths)
    try:
        files = [(workspace, relative, kind) for (_, relative), (workspace, kind) in _selected(paths, unfold)]
        checked = Checked()
        for (workspace, relative, _), found in zip(files, analysis.check(files)):
            checked.add(workspace, relative, found)
        return checked
    finally:
        analysis.close()


def _selected(paths: list[Path], unfold: bool) -> list[tuple[tuple[Path, str], tuple[Workspace, str | None]]]:
    """The files ``paths`` name or hold, each with its workspace and kind, by root and path."""
    from ..core.workspace.config import CONFIG_PATHS
    from ..core.workspace.roots import find_root
    from ..core.workspace.workspace import Workspace

    workspaces: dict[Path, Workspace] = {}
    selected: dict[tuple[Path, str], tuple[Workspace, str | None]] = {}

    def workspace_at(root: Path) -> Workspace:
        workspace = workspaces.get(root)
        if workspace is None:
            workspace = workspaces[root] = Workspace.configured(root)
            workspace.folds_findings = not unfold
        return workspace

    def select_folder(workspace: Workspace, prefix: str) -> None:
        for relative, kind in workspace.discover().items():
            if relative.startswith(prefix):
                selected[(workspace.root, relative)] = (workspace, kind)
        # A folder below holding .punica/ is a workspace of its own (a
        # monorepo's): its files are checked there, with its settings.
        for root in workspace.nested_workspaces(prefix):
            select_folder(workspace_at(root), "")

    for path in paths:
        if not os.path.exists(path):  # pathlib raises for a name too long, os.path says False
            raise UsageError(f"{path}: no such file or folder")
        root = find_root(path)
        workspace = workspace_at(root)
        if path.is_dir():
            prefix = workspace.relative(path)
            select_folder(workspace, "" if prefix in ("", ".") else prefix + "/")
        else:
            relative = workspace.relative(path)
            # Files that are none of ours (pre-commit passes every YAML file) are
            # skipped, and so is a link that leads out of the workspace: nothing
            # outside is read (the suite naming it is told so, RAG106).
            # The settings file is the exception: one that leads out is reported, not read.
            kind = workspace.kind_of(relative) if workspace.contains(path) or relative in CONFIG_PATHS else None
            if kind is not None:
                selected[(root, relative)] = (workspace, kind)
    return sorted(selected.items(), key=lambda item: (str(item[0][0]), item[0][1]))


def show_settings(paths: list[Path]) -> int:
    """Print the settings in force in each PATH's workspace, with their origins."""
    from ..core.workspace.config import FIELD_KEYS, origins
    from ..core.workspace.roots import find_root
    from ..core.workspace.workspace import Workspace

    roots: dict[Path, None] = {}
    for path in paths:
        if not os.path.exists(path):  # pathlib raises for a name too long, os.path says False
            raise UsageError(f"{path}: no such file or folder")
        roots[find_root(path)] = None
    for index, root in enumerate(roots):
        workspace = Workspace.configured(root)
        config = workspace.config
        print(("\n" if index else "") + f"workspace: {root}")
        print(f"settings file: {config.origin if config is not None else 'none (.punica/rag-lsp.toml or [tool.rag-lsp] in pyproject.toml)'}")
        if config is not None and config.findings:
            noun = "problem" if len(config.findings) == 1 else "problems"
            print(f"  {len(config.findings):,} {noun} in it, left out below (rag-lsp check {config.path} lists them)")
        where = origins(config)
        settings = workspace.settings
        for name, key in FIELD_KEYS.items():
            print(f"{key} = {_shown(getattr(settings, name))}  ({where[name]})")
        print("trusted: not read from workspace files (the editor's setting; `rag-lsp run` runs command and http targets unless --no-exec)")
    return EXIT_OK


def _shown(value: object) -> str:
    """A setting's value as TOML would write it."""
    import json

    if isinstance(value, tuple):
        value = list(value)
    if isinstance(value, dict):
        inner = ", ".join(f"{json.dumps(key)} = {_shown(sorted(item) if isinstance(item, frozenset) else getattr(item, 'label', item))}" for key, item in sorted(value.items()))
        return "{" + inner + "}"
    if value is None:
        return "(not set)"
    return json.dumps(value)
