"""``rag-lsp run``: suites through their targets and the scorer, for CI.

    rag-lsp run [PATH ...] [--suite ID] [--case ID] [--format text|json|junit|trec] [--no-exec]
                [--qrels-out FILE]
                [--k 1,3,5,10] [--record FILE]
                [--baseline RUN.json [--fail-on-regression] [--tolerance T] [--significance ALPHA]
                 [--compare-json FILE]]
                [--summary-md FILE] [--html FILE [--history DIR]]

PATHs are folders (the suites in suite files under them), suite files (their
suites) or datasets (the suites that use them); the default is the workspace of
the current folder. Exit 0 when every suite passed, 1 when a threshold failed, a
case is broken, a target failed or a suite could not run (or, with
``--fail-on-regression``, a suite mean regressed against the baseline), 2 on
usage or internal errors (a baseline that is not a run report included). The run
is explicit, so ``command`` and ``http`` targets run; ``--no-exec`` refuses them
(those suites fail with RAG405).

* ``--k 1,3,5,10``: each case is asked once and scored at every k as well.
* ``--record FILE``: every answer the targets gave, as a ``recorded`` target's file.
* ``--baseline RUN.json``: a previous ``--format json`` report; prints what moved,
  each mean with how sure the move is (a paired interval and p-value over cases).
* ``--significance ALPHA``: with a baseline, a mean regresses only when it moved
  the wrong way beyond the tolerance *and* significantly at ALPHA (p < ALPHA).
* ``--summary-md FILE``: a Markdown summary appended to FILE ($GITHUB_STEP_SUMMARY).
* ``--html FILE``: the run as one self-contained HTML page (see html_report);
  ``--history DIR``: with it, each suite mean across the reports kept in DIR.
* ``--format trec``: the run as TREC run lines (see run_formats.format_trec);
  ``--qrels-out FILE``: the judgments of the suites' datasets as TREC qrels, so
  trec_eval, ir-measures and ranx read the run as this run scores it.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path

from typing import TYPE_CHECKING

from .. import collector
from .exits import EXIT_FINDINGS, EXIT_OK, UsageError
from .outcome import Run

if TYPE_CHECKING:
    from ..core.workspace.suitefacts import SuiteInfo
    from ..core.workspace.workspace import Workspace

FORMATS = ("text", "json", "junit", "trec")


def add_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "run",
        help="run suites through their targets and compare with their thresholds",
        description="Run suites through their targets, print each case's figures and the suite means against "
        "the thresholds. PATHs are folders, suite files or datasets (default: the workspace of the current "
        "folder). Exit 0 when every suite passed, 1 when a threshold failed or a case is broken (or, with "
        "--fail-on-regression, a mean regressed against the baseline), 2 on usage errors.",
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
    parser.add_argument(
        "--k",
        metavar="K,K,...",
        help="also score every case at each of these k (e.g. 1,3,5,10) from the same answers: one retrieval per case; "
        "thresholds still apply at the suite's own k",
    )
    parser.add_argument(
        "--record",
        metavar="FILE",
        help="write every answer the targets gave to FILE, one {\"id\", \"hits\", \"mode\"} line per case "
        "(a `recorded` target replays it); {target} or {suite} in FILE give a file per target or suite",
    )
    parser.add_argument(
        "--baseline",
        metavar="RUN.json",
        help="compare with a previous `rag-lsp run --format json` report: the means that moved, "
        "the cases that got better or worse, the cases added or removed",
    )
    parser.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="with --baseline: exit 1 when a suite mean moved the wrong way by more than --tolerance",
    )
    parser.add_argument(
        "--tolerance",
        type=float,
        default=0.0,
        metavar="T",
        help="with --baseline: how far a mean may drop before it counts as a regression (default 0)",
    )
    parser.add_argument(
        "--significance",
        type=float,
        metavar="ALPHA",
        help="with --baseline: a mean counts as regressed only when it dropped beyond --tolerance and its cases "
        "got worse significantly at ALPHA (paired randomization test over cases, p < ALPHA), e.g. 0.05; "
        "with --fail-on-regression the job then fails only on a regression that is not noise",
    )
    parser.add_argument(
        "--compare-json", metavar="FILE", help="with --baseline: write the comparison as JSON to FILE"
    )
    parser.add_argument(
        "--qrels-out",
        metavar="FILE",
        help="write the judgments of the datasets run as TREC qrels (`qid 0 docid grade`) to FILE: with "
        "--format trec, what trec_eval, ir-measures and ranx read",
    )
    parser.add_argument(
        "--summary-md",
        metavar="FILE",
        help="append a Markdown summary of the run (and of the comparison) to FILE, e.g. $GITHUB_STEP_SUMMARY",
    )
    parser.add_argument(
        "--by",
        action="append",
        metavar="metadata.KEY",
        help="also give every suite mean per value of KEY in the cases' `metadata` (a list value, such as tags, "
        "puts a case in each of its values' slices; cases without the key form the slice \"(none)\"), "
        "with each slice's case count; repeatable; text and json formats",
    )
    parser.add_argument(
        "--html",
        metavar="FILE",
        help="also write the run as one self-contained HTML page to FILE: the suites, every case in a table "
        "that sorts and filters, and (when given) the sweep over k, the comparison, the slices and the trend",
    )
    parser.add_argument(
        "--history",
        metavar="DIR",
        help="with --html: plot each suite mean across the `rag-lsp run --format json` reports (*.json) in DIR, "
        "oldest first by file modification time, then this run",
    )
    parser.set_defaults(handler=run_command)


def parse_ks(text: str | None) -> tuple[int, ...]:
    """``"1,3,5,10"`` -> (1, 3, 5, 10); UsageError for anything but integers >= 1."""
    if text is None:
        return ()
    ks: set[int] = set()
    for part in text.replace(" ", "").split(","):
        if not part:
            continue
        # Digits 0-9 only: int() would also take "1_0" and digits of other scripts ("٣").
        if not (part.isascii() and part.isdigit()) or len(part) > 9:
            if part.startswith("-") and part[1:].isascii() and part[1:].isdigit():
                raise UsageError(f"--k {text!r}: k must be at least 1, not {part}")
            reason = "is not an integer of at most 9 digits 0-9" if part.isascii() and part.isdigit() else "is not an integer written in the digits 0-9"
            raise UsageError(f"--k {text!r}: {part!r} {reason}; give k values like 1,3,5,10")
        k = int(part)
        if k < 1:
            raise UsageError(f"--k {text!r}: k must be at least 1, not {k}")
        ks.add(k)
    if not ks:
        raise UsageError("--k needs at least one k, e.g. --k 1,3,5,10")
    return tuple(sorted(ks))


def parse_slices(written: list[str] | None, output: str, html: bool = False) -> dict[str, str]:
    """Each ``--by`` as written -> the metadata key it names; UsageError for one
    that names none, or for an output format that has no place for slices (the
    HTML page has one, whatever the format)."""
    if not written:
        return {}
    from ..core.running.slices import NotAMetadataKey, metadata_key

    if output not in ("text", "json") and not html:
        raise UsageError(f"--by gives slices in the text and json reports, not in --format {output} (and in the page of --html)")
    try:
        return {text: metadata_key(text) for text in written}
    except NotAMetadataKey as error:
        raise UsageError(f"--by {error}") from None


def one_shot_process() -> None:
    """This process runs one command and ends (``run``, ``compare``): see collector."""
    collector.one_shot()


def run_command(arguments: argparse.Namespace) -> int:
    # The runner's modules are imported when a run starts, not when the
    # command line is read (see cli.check).
    from ..core.workspace.roots import find_root
    from .run_suites import execute, no_suites, select

    one_shot_process()
    ks = parse_ks(arguments.k)
    slice_keys = parse_slices(arguments.by, arguments.format, arguments.html is not None)
    history = _read_history(arguments)
    baseline = _read_baseline(arguments)
    # With no PATH, the whole workspace of the current folder, as `check` reads it.
    selected = select([Path(path) for path in arguments.paths] or [find_root(Path.cwd())], arguments.suite)
    _say_settings_problems(selected)
    if baseline is None:
        baseline, arguments.baseline = _configured_baseline(selected)
    if baseline is None:
        for flag, given in (
            ("--fail-on-regression", arguments.fail_on_regression),
            ("--tolerance", arguments.tolerance != 0.0),
            ("--significance", arguments.significance is not None),
            ("--compare-json", arguments.compare_json is not None),
        ):
            if given:
                raise UsageError(f"{flag} compares with a baseline: give one with --baseline RUN.json")
    from ..core.running.recording import Recordings

    recordings = Recordings(arguments.record) if arguments.record else None
    run = execute(
        selected,
        arguments.case,
        no_exec=arguments.no_exec,
        show_progress=arguments.format == "text" or None,
        ks=ks,
        recordings=recordings,
        keep_hits=arguments.format == "trec",
    )
    if not run.results and all(isinstance(suite, str) for _, suite in selected):
        # Only suite files that hold no suite, and no error either (an empty file).
        raise no_suites([Path(path) for path in arguments.paths] or [Path.cwd()])
    if slice_keys:
        from ..core.running.slices import slice_cases

        for _, result in run.results:
            result.slices = {written: slice_cases(result.cases, key) for written, key in slice_keys.items()}
    from . import run_formats

    if arguments.format == "text":
        output: str | bytes = run_formats.format_text(run, before_summary=_same_dataset_comparisons(run))
    else:
        output = run_formats.FORMATS[arguments.format](run)
    if arguments.format != "text":
        # The reasons suites did not run, and what targets said about their
        # answers, for people reading the log (the text report shows them).
        for _, result in run.results:
            if result.error:
                print(f"rag-lsp: suite {result.id}: {result.error}", file=sys.stderr)
            for note in result.notes:
                print(f"rag-lsp: suite {result.id}: {note}", file=sys.stderr)
    comparison = None
    if baseline is not None:
        from ..core.running.compare import compare_run

        comparison = compare_run(
            baseline,
            [result for _, result in run.results],
            tolerance=arguments.tolerance,
            direction=_direction(run),
            name=arguments.baseline,
            case_ids=arguments.case,
            alpha=arguments.significance,
        )
    _write_stdout(output)
    if comparison is not None:
        from . import compare_formats

        # The comparison follows the text report; beside a json or junit report on
        # stdout (kept parseable), it goes to stderr for people reading the log.
        text = compare_formats.format_text(comparison, sys.stdout if arguments.format == "text" else sys.stderr)
        if arguments.format == "text":
            _write_stdout("\n" + text)
        else:
            sys.stderr.write(text)
    if recordings is not None:
        for note in recordings.notes():
            print(f"rag-lsp: {note}", file=sys.stderr)
    if comparison is not None and arguments.compare_json:
        from ..core.running.comparison import report_json

        from ..core.running.report import json_bytes

        report = json_bytes(report_json(comparison))
        _write_file(arguments.compare_json, report, "--compare-json")
    if arguments.qrels_out:
        from . import run_formats as formats

        _write_file(arguments.qrels_out, formats.format_qrels(run).encode("utf-8"), "--qrels-out")
    if arguments.html:
        from .html_report import format_html

        _write_replacing(arguments.html, format_html(run, comparison, history), "--html")
    if arguments.summary_md:
        from . import compare_formats

        summary = compare_formats.format_markdown(run, comparison, arguments.fail_on_regression).encode("utf-8")
        _write_file(arguments.summary_md, summary, "--summary-md", append=True)
    if not run.passed:
        return EXIT_FINDINGS
    if comparison is not None and arguments.fail_on_regression and comparison.regressed:
        return EXIT_FINDINGS
    return EXIT_OK


def _same_dataset_comparisons(run: Run) -> str:
    """Each two suites of the run that read one dataset, compared case by case
    (their means with how sure each difference is); "" when no two do."""
    from ..core.running.pairs import compare_pair, same_dataset_pairs

    ran = [
        ((workspace.root, result.dataset) if result.dataset else None, result)
        for workspace, result in run.results
        if result.error is None
    ]
    pairs = same_dataset_pairs(ran)
    if not pairs:
        return ""
    from . import pair_formats

    direction = _direction(run)
    parts = ["Suites over the same dataset, case by case (`rag-lsp compare A B` lists the cases each wins):\n\n"]
    for first, second in pairs:
        pair = compare_pair(first, second, direction, first.dataset)
        parts.append(pair_formats.format_brief(pair, sys.stdout) + "\n")
    return "".join(parts)


def _read_baseline(arguments: argparse.Namespace):
    """The baseline report, read before the run (a bad one is a usage error, exit 2)."""
    if not math.isfinite(arguments.tolerance) or arguments.tolerance < 0:
        raise UsageError(f"--tolerance must be a number of at least 0, not {arguments.tolerance:g}")
    alpha = arguments.significance
    if alpha is not None and not 0 < alpha < 1:  # NaN fails both comparisons
        raise UsageError(f"--significance must be a level between 0 and 1 (e.g. 0.05), not {alpha:g}")
    if arguments.baseline is None:
        return None
    from ..core.running.report import BaselineError, load_baseline

    try:
        return load_baseline(Path(arguments.baseline))
    except BaselineError as error:
        raise UsageError(str(error)) from None


def _read_history(arguments: argparse.Namespace):
    """The earlier reports of ``--history``, read before the run (a folder that
    does not exist is a usage error, exit 2; a file in it that is not a run
    report is skipped, with a warning); and a ``--html`` destination that cannot
    be replaced (a link, a pipe, a folder) refused before the run."""
    if arguments.html is not None:
        from ..core.reading.safefiles import Refused, writable_target

        try:
            writable_target(arguments.html)
        except Refused as error:
            raise UsageError(f"--html {error}") from None
    if arguments.history is None:
        return None
    if arguments.html is None:
        raise UsageError("--history plots the trend in the HTML report: give --html FILE too")
    from ..core.running.history import HistoryError, read_history

    try:
        points, notes = read_history(Path(arguments.history))
    except HistoryError as error:
        raise UsageError(f"--history {error}") from None
    for note in notes:
        print(f"rag-lsp: --history {note}", file=sys.stderr)
    return points


def _say_settings_problems(selected: list[tuple[Workspace, SuiteInfo | str]]) -> None:
    """The errors of each workspace's settings file, on stderr: the run uses the
    default of a setting that is not valid, which would otherwise pass unseen."""
    from ..core.reading.findings import Severity

    for workspace in {id(workspace): workspace for workspace, _ in selected}.values():
        config = workspace.config
        for finding in config.findings if config is not None else ():
            if finding.severity != Severity.ERROR:
                continue
            where = f"{config.origin}:{finding.range.start.line + 1}:{finding.range.start.character + 1}"
            print(f"rag-lsp: {where}: {finding.code} {finding.message}; the run leaves it out (a setting left out has its default)", file=sys.stderr)


def _configured_baseline(selected: list[tuple[Workspace, SuiteInfo | str]]):
    """The baseline the workspace's settings name (``baseline`` in its settings
    file), when no --baseline is given: (report, name), or (None, None). A
    baseline not written yet (the first run) is noted and skipped; one that is not
    a run report is a usage error, as with --baseline."""
    from ..core.running.report import BaselineError, load_baseline

    named = {(workspace.root, workspace.settings.baseline) for workspace, _ in selected if workspace.settings.baseline}
    if not named:
        return None, None
    if len(named) > 1:
        raise UsageError("the workspaces of this run name different baselines: run them one at a time, or give --baseline")
    ((root, name),) = named
    path = root / Path(name).expanduser()
    if not os.path.lexists(path):
        print(f"rag-lsp: baseline {name} (from the workspace settings) does not exist yet: nothing to compare with", file=sys.stderr)
        return None, None
    try:
        return load_baseline(path, root), name
    except BaselineError as error:
        raise UsageError(f"{error} (baseline from the workspace settings)") from None


def _direction(run: Run):
    """Each metric's direction from the manifests of the run's workspaces."""
    from ..core.running.comparison import COUNTER, default_direction, direction_from

    known = [direction_from(workspace.manifests()) for workspace in {id(w): w for w, _ in run.results}.values()]

    def direction(metric: str) -> str:
        found = [of(metric) for of in known]
        # A metric any workspace counts as a counter is one; else the first's say.
        if COUNTER in found:
            return COUNTER
        return found[0] if found else default_direction(metric)

    return direction


def _write_stdout(output: str | bytes) -> None:
    # A lone surrogate (a case id written "\ud800" in its dataset) is shown escaped.
    data = output if isinstance(output, bytes) else output.encode("utf-8", "backslashreplace")
    out = getattr(sys.stdout, "buffer", None)
    if out is not None:
        sys.stdout.flush()
        out.write(data)
        out.flush()
    else:
        sys.stdout.write(data.decode("utf-8"))


def _write_file(name: str, data: bytes, flag: str, append: bool = False) -> None:
    path = Path(name)
    try:
        if path.parent != Path("."):
            path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "ab" if append else "wb") as file:
            file.write(data)
    except OSError as error:
        raise UsageError(f"{flag} {name}: cannot write: {error.strerror or error}") from None


def _write_replacing(name: str, data: bytes, flag: str) -> None:
    """``data`` written to a new file beside ``name`` and moved into its place;
    a link, a pipe or a folder there is refused, not replaced (exit 2)."""
    from ..core.reading.safefiles import Refused, write_replacing

    path = Path(name)
    try:
        if path.parent != Path("."):
            path.parent.mkdir(parents=True, exist_ok=True)
        write_replacing(path, data)
    except Refused as error:
        raise UsageError(f"{flag} {error}") from None
    except OSError as error:
        raise UsageError(f"{flag} {name}: cannot write: {error.strerror or error}") from None
