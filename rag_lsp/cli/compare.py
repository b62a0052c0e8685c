"""``rag-lsp compare``: two suites over one dataset, run and compared case by case.

    rag-lsp compare SUITE_A SUITE_B [PATH ...] [--case ID] [--format text|json] [--no-exec]

Two choices (two chunkings, two embedding models, two targets) asked the same
questions: each suite is run, and one paired table says, for each mean, B − A
with its 95% interval, p-value and the cases better, worse and equal; then the
cases each side wins with the ranks that differ, and the relevant values both
miss. A is the reference, B the choice being weighed. PATHs are found as
``rag-lsp run`` finds them (default: the workspace of the current folder).

Exit 0 when both suites ran and were compared (whatever the comparison says),
1 when one of them could not be run, 2 on usage errors: a suite that does not
exist (or two of that name), the same suite twice, suites over different datasets.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .exits import EXIT_FINDINGS, EXIT_OK, UsageError


def add_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "compare",
        help="run two suites over one dataset and compare them case by case",
        description="Run two suites that read the same dataset (two chunkings, two models, two targets) and "
        "compare them case by case: for each mean, SUITE_B − SUITE_A with a 95% paired bootstrap interval, "
        "a paired randomization p-value and the cases better, worse and equal; then the cases each suite wins "
        "(with the ranks that differ) and the relevant values both miss. Exit 0 when both ran, 1 when one could "
        "not be run, 2 on usage errors.",
    )
    parser.add_argument("suite_a", metavar="SUITE_A", help="the reference suite's id")
    parser.add_argument("suite_b", metavar="SUITE_B", help="the id of the suite weighed against it")
    parser.add_argument("paths", nargs="*", metavar="PATH", help="folders, suite files or datasets holding them")
    parser.add_argument("--case", action="append", metavar="ID", help="compare only this case (repeatable)")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    parser.add_argument(
        "--no-exec",
        action="store_true",
        help="do not run command targets or call http targets (their suites cannot be run)",
    )
    parser.set_defaults(handler=compare_command)


def compare_command(arguments: argparse.Namespace) -> int:
    from ..core.workspace.roots import find_root
    from . import run, run_suites

    run.one_shot_process()
    if arguments.suite_a == arguments.suite_b:
        raise UsageError(f"compare needs two different suites, not {arguments.suite_a!r} twice")
    paths = [Path(path) for path in arguments.paths] or [find_root(Path.cwd())]
    selected = run_suites.select(paths, [arguments.suite_a, arguments.suite_b])
    side_a = _the_suite(selected, arguments.suite_a)
    side_b = _the_suite(selected, arguments.suite_b)
    dataset = _shared_dataset(side_a, side_b)
    done = run_suites.execute([side_a, side_b], arguments.case, no_exec=arguments.no_exec, show_progress=arguments.format == "text" or None)
    results = {result.id: result for _, result in done.results}
    result_a, result_b = results.get(arguments.suite_a), results.get(arguments.suite_b)
    unrun = [result for result in (result_a, result_b) if result is None or result.error is not None]
    if unrun:
        for result in unrun:
            name = result.id if result is not None else "?"
            reason = result.error if result is not None else "not run"
            print(f"rag-lsp: suite {name} could not be run: {reason}", file=sys.stderr)
        return EXIT_FINDINGS
    from ..core.running.pairs import compare_pair
    from . import pair_formats

    pair = compare_pair(result_a, result_b, run._direction(done), dataset)
    if arguments.format == "json":
        from ..core.running.report import json_bytes

        run._write_stdout(json_bytes(pair_formats.pair_json(pair)))
    else:
        run._write_stdout(pair_formats.format_text(pair, sys.stdout))
    return EXIT_OK


def _the_suite(selected, suite_id: str):
    """The one suite of that id (with its workspace); two of that name are a usage error."""
    found = [(workspace, suite) for workspace, suite in selected if not isinstance(suite, str) and suite.id == suite_id]
    if len(found) > 1:
        files = ", ".join(f"{workspace.root / suite.file}" for workspace, suite in found)
        raise UsageError(f"{len(found)} suites have the id {suite_id!r} ({files}): give the PATH of one of them")
    return found[0]


def _shared_dataset(side_a, side_b) -> str:
    """The dataset both suites read; suites over different datasets are a usage error."""
    (workspace_a, suite_a), (workspace_b, suite_b) = side_a, side_b
    dataset_a = workspace_a.root / suite_a.dataset if suite_a.dataset else None
    dataset_b = workspace_b.root / suite_b.dataset if suite_b.dataset else None
    if dataset_a is None or dataset_a != dataset_b:
        raise UsageError(
            f"suite {suite_a.id} reads {suite_a.dataset or 'no dataset'} and suite {suite_b.id} reads "
            f"{suite_b.dataset or 'no dataset'}: a case-by-case comparison needs two suites over the same dataset"
        )
    return suite_a.dataset
