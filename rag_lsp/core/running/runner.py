"""The runner: a suite, or some of its cases, through its target and the scorer.

Both shells use it: ``rag-lsp run`` and the language server's run commands. It
never raises for anything a workspace can contain; every outcome is a typed
result:

* a **suite that is not run** (:attr:`SuiteResult.error`): its suite file has
  error findings of ``rag-lsp check`` (a misspelled metric, an invalid option, a
  missing dataset, an unknown target: its figures would be garbage), its dataset
  cannot be read, it needs a scorer rag-lsp does not have, or its target runs code
  (``command``, ``http``) and the caller does not allow that. It counts as broken;
* a **broken case** (RAG401): nothing relevant declared, hits that carry none of
  the ``match`` field, or a dataset line that cannot be run (not JSON, no id, an
  id used before, no ``input``): no figures, a reason, and the suite fails as
  broken. Other dataset findings (an expected file that does not exist, a value
  listed twice) are ``rag-lsp check``'s and do not stop a run;
* a **target failure** (RAG405): the target did not answer this case; the case is
  broken with the target's message;
* otherwise the case's figures, and the suite's means against its thresholds.

Runs are cancellable (an event checked between cases) and report progress through
a callback, at most every 50 ms. A target that must build something before it
answers (the builtin target's index) does so first, reporting through a second
callback; what it has to say about the run (its model could not be loaded, and it
searched by keyword) is kept in :attr:`SuiteResult.notes`.
"""

from __future__ import annotations

import logging
import operator
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Collection, Iterable, Sequence

import msgspec
from msgspec import UNSET

from . import ir
from ..checking.analyze import analyze_file
from ..checking.contexts import unreachable_paths
from .datasets import CaseRow, DatasetProblem, KnownShapes, RunDataset, Unreadable, read_dataset
from ..workspace.expected import DUPLICATE_ID, NOTHING_RELEVANT, SCHEMA, Expected, Flaw, joined, judge_expected
from ..reading.findings import Finding, Severity
from ..reading.jsonrows import Row
from ..workspace.manifests import GDI_TEXT, RAG_CASE
from ..workspace.rowschema import non_finite_message, row_checker, row_issues
from ..reading.schemacheck import non_finite_issues
from .scorer import (
    HIT_AT_1,
    MRR,
    PRECISION,
    RECALL,
    RETRIEVED,
    SEMANTIC,
    SEMANTIC_MODE,
    AnswerRanks,
    CaseScore,
    Miss,
    ThresholdResult,
    aggregate,
    answer_pattern,
    figures_at_ks,
    label,
    score_case,
    score_suite,
)
from ..workspace.rows import row_shape
from ..workspace.suitefacts import SuiteInfo, builtin_corpora
from .targets import TRUSTED_KINDS, Answer, Cancelled, Hit, Request, TargetError, TargetPool
from ..reading.wording import counted
from ..workspace.workspace import Workspace
from ..reading.yamltree import TooLarge, to_python

if TYPE_CHECKING:
    from .hit_at_k import HitAtKConfig, HitAtKResult
    from .slices import Slice
    from ..reading.schemacheck import SchemaChecker

log = logging.getLogger(__name__)

HIT_AT_K = "rag.hit_at_k"
ENGINES = frozenset({"rag", ir.ENGINE})
METRICS = frozenset({HIT_AT_K})

# The codes of a run's results (their severities are their rules').
CASE_RESULT = "RAG400"
# Which diagnostic explains a case without figures.
BROKEN_CASE = "RAG401"
KEYWORD_FALLBACK = "RAG402"
THRESHOLD_FAILED = "RAG403"
THRESHOLD_MET = "RAG404"
TARGET_FAILED = "RAG405"
RESULT_CODES = (CASE_RESULT, BROKEN_CASE, KEYWORD_FALLBACK, THRESHOLD_FAILED, THRESHOLD_MET, TARGET_FAILED)
# Why a suite is not run when its target id is configured nowhere.
UNKNOWN_TARGET = "RAG111"
# A value the checks refuse to read (too large, too deep).
UNSAFE_INPUT = "RAG005"
# A gdi_text_v1 row without reference contexts.
NO_REFERENCES = "RAG208"

Progress = Callable[[int, int], None]
# Called while a target builds its index, with (files read, files to read).
Building = Callable[[int, int], None]
# Called with each answer a target gave (or its failure), by case id.
Record = Callable[[str, "Answer | TargetError"], None]


# Not frozen: a frozen dataclass sets each field through object.__setattr__,
# which triples the cost of building 100k results.
@dataclass(slots=True)
class CaseResult:
    """One case of a run."""

    id: str
    # 0-based line of the case in the dataset.
    line: int
    # Metric -> value, or None when the case has no figures (see ``reason``).
    scores: dict[str, float] | None
    # The fields below are given by name (see scored(), the one exception).
    # Why there are no figures, for people; None when scored.
    reason: str | None = None
    # The code of the check that reports that reason on the case's line (RAG200,
    # RAG004, ...), when one does.
    reason_code: str | None = None
    # RAG401 (broken case) or RAG405 (the target failed) when broken.
    code: str | None = None
    missed: tuple[str, ...] = ()
    first_relevant_rank: int | None = None
    mode: str | None = None
    hits: tuple[Hit, ...] = ()
    # 1-based ranks (within the first k) of the hits that were relevant.
    relevant_ranks: tuple[int, ...] = ()
    # Distinct expected values found, and declared ("recall 0.50 (1/2)").
    found: int = 0
    expected: int = 0
    # The target's failure (RAG405), when that is why the case is broken.
    error: str | None = None
    # The Hit@K result of a gdi row (its explanation names the deciding pair).
    detail: HitAtKResult | None = None
    # Each expected value that came back -> the rank of its first hit within the
    # first k (what a comparison with an earlier run needs to say which hit was
    # lost, and from which rank); None when the case has no figures.
    ranks: dict[str, int] | None = None
    # A sweep (``run_suite(ks=...)``): k -> the case's figures at that k, or None
    # where it has none at that k; None when the run swept no k.
    at_k: dict[int, dict[str, float] | None] | None = None
    # Why each value of ``missed`` was missed, in its order.
    why_missed: tuple[Miss, ...] = ()
    # What the target's whole answer held, before the cut at k (every rank of
    # each expected value): None when the target gave no answer to score.
    answer: AnswerRanks | None = None
    # The case's `metadata` object in the dataset (the team's own data), if any.
    metadata: dict[str, Any] | None = None

    @classmethod
    def scored_case(cls, case_id: str, line: int, outcome: CaseScore, mode: str | None, hits: tuple[Hit, ...]) -> CaseResult:
        """A case the scorer gave figures (``outcome``), with the target's answer
        mode and the hits kept. The fields are given by position, in their order
        above: a run builds one per case, and naming them would cost each a
        microsecond more (a tenth of a 100k-case run)."""
        return cls(
            case_id, line, outcome.scores, None, None, None, outcome.missed, outcome.first_relevant_rank, mode, hits,
            outcome.relevant_ranks, outcome.found, outcome.expected, None, None, outcome.ranks, None, outcome.why_missed,
            outcome.answer,
        )

    @property
    def scored(self) -> bool:
        return self.scores is not None

    @property
    def broken(self) -> str | None:
        """Why there are no figures, as people read it: the reason and, in
        brackets, the code of the check that reports it; None when scored."""
        reason = self.reason
        if reason is None or self.reason_code is None:
            return reason
        return f"{reason} ({self.reason_code})"


@dataclass
class SuiteResult:
    """One suite of a run."""

    id: str
    file: str
    dataset: str | None
    target: str | None
    cases: list[CaseResult] = field(default_factory=list)
    aggregates: dict[str, float] = field(default_factory=dict)
    thresholds: tuple[ThresholdResult, ...] = ()
    # Offsets (start, end) in the suite file of each threshold's key, by metric.
    threshold_spans: dict[str, tuple[int, int]] = field(default_factory=dict)
    # Why the suite was not run; None when it ran.
    reason: str | None = None
    # The code of the finding that says why it was not run (RAG111 for a target
    # not configured, RAG405 for one refused or unreachable, ...), when one does.
    error_code: str | None = None
    # The error findings that stopped it, when that is why.
    findings: tuple[Finding, ...] = ()
    cancelled: bool = False
    # The k values of a sweep (ascending), and the suite's means at each; empty
    # when the run swept no k. Thresholds are checked at the suite's own k only.
    ks: tuple[int, ...] = ()
    at_k: dict[int, dict[str, float]] = field(default_factory=dict)
    # The scoring metadata of each metric's config (``metric_name``, ``weight``,
    # ``inverted``, ``min``, ``max``), by metric: not applied, carried into the
    # report for whoever combines the figures.
    metadata: dict[str, dict[str, Any]] = field(default_factory=dict)
    # What the target said about this run, once (e.g. that it fell back to keyword search).
    notes: tuple[str, ...] = ()
    # ``rag-lsp run --by metadata.KEY``: per `--by` as written, the suite's means
    # per value of that key (see slices.slice_cases); empty when not asked.
    slices: dict[str, dict[str, Slice]] = field(default_factory=dict)

    @property
    def error(self) -> str | None:
        """Why the suite was not run, as people read it (its code in brackets at
        the end, when it has one); None when it ran."""
        return joined(self.reason, self.error_code) if self.reason is not None else None

    @property
    def broken(self) -> bool:
        return self.reason is not None or any(case.scores is None for case in self.cases)

    @property
    def passed(self) -> bool:
        return not self.broken and not self.cancelled and all(threshold.passed for threshold in self.thresholds)

    @property
    def scored(self) -> int:
        return sum(1 for case in self.cases if case.scores is not None)


class CaseNotFound(LookupError):
    """``--case`` names an id no case of the suite has."""


class Runner:
    """Runs suites of one workspace.

    ``allow_exec`` says whether ``command`` and ``http`` targets may run: the CLI
    allows them unless ``--no-exec``; the language server only on an explicit run
    in a trusted workspace. ``exec_refusal`` is the reason given when they may not.

    A runner reads each dataset and checks each suite file once, so make one per
    run; pass a long-lived :class:`TargetPool` to keep command processes and the
    builtin index between runs. Close the runner (or its pool) to stop the
    processes its targets started.
    """

    def __init__(
        self,
        workspace: Workspace,
        *,
        allow_exec: bool,
        exec_refusal: str = "targets that run commands or reach services are not allowed in this run",
        pool: TargetPool | None = None,
        keep_hits: bool = True,
    ) -> None:
        self.workspace = workspace
        # Whether results keep the ranked hits (the server's hover shows them; the
        # CLI prints none, and then targets may decode only the `match` field).
        self.keep_hits = keep_hits
        self.allow_exec = allow_exec
        self.exec_refusal = exec_refusal
        self._own_pool = pool is None
        self.pool = pool or TargetPool(workspace, workspace.settings.run_timeout_s)
        self._findings: dict[str, list[Finding]] = {}
        self._datasets: dict[str, RunDataset | str] = {}

    def _dataset(self, relative: str) -> RunDataset | DatasetProblem:
        """The dataset's rows, read once per runner, or why it cannot be read."""
        found = self._datasets.get(relative)
        if found is None:
            try:
                found = read_dataset(self.workspace, relative)
            except DatasetProblem as problem:
                found = problem
            self._datasets[relative] = found
        return found

    def close(self) -> None:
        if self._own_pool:
            self.pool.close()

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -------------------------------------------------- preflight

    def blocking_findings(self, suite: SuiteInfo) -> list[Finding]:
        """Error findings of the suite (in its own lines of the suite file, or of the
        file as a whole) that make its figures meaningless."""
        findings = self._findings.get(suite.file)
        if findings is None:
            # The datasets of the file's suites are read once, the run's way; the
            # checks get their shapes from that read instead of decoding them again.
            shapes = {}
            for other in self.workspace.suites_of(suite.file):
                if other.dataset is not None:
                    dataset = self._dataset(other.dataset)
                    if isinstance(dataset, RunDataset):
                        shapes[other.dataset] = dataset.shape
            checked = KnownShapes(self.workspace, shapes)
            findings = self._findings[suite.file] = analyze_file(checked, suite.file)  # type: ignore[arg-type]
        parsed = self.workspace.parsed_yaml(suite.file)
        if parsed is None:
            return [finding for finding in findings if finding.severity == Severity.ERROR]

        def lines_of(other: SuiteInfo) -> range:
            # A block mapping ends where the next item starts: its last line is the
            # one before, unless it ends mid-line (flow style).
            end = parsed.lines.position(max(other.node.start, other.node.end - 1))
            return range(parsed.lines.position(other.node.start).line, end.line + 1)

        own = lines_of(suite)
        others = {
            line for other in self.workspace.suites_of(suite.file) if other.node is not suite.node for line in lines_of(other)
        }
        blocking = []
        for finding in findings:
            if finding.severity != Severity.ERROR:
                continue
            line = finding.range.start.line
            # Findings outside every suite (the file's own) concern each suite of it.
            if line in own or line not in others:
                blocking.append(finding)
        return blocking

    def target_config_errors(self, target_id: str) -> list[Finding]:
        """Error findings of the targets config that concern ``target_id``: those in
        its own entry, and those outside every entry (YAML that is not well-formed,
        a `targets` that is not a mapping), which leave every target unknown. While
        they stand, what a run would reach is not what the config says: a tab left
        in the file would quietly run the default target instead."""
        relative = self.workspace.targets_file()
        if relative is None:
            return []
        findings = self._findings.get(relative)
        if findings is None:
            findings = self._findings[relative] = analyze_file(self.workspace, relative)
        errors = [finding for finding in findings if finding.severity == Severity.ERROR]
        if not errors:
            return []
        parsed = self.workspace.parsed_yaml(relative)
        entries = _entry_lines(parsed)
        # Lines of other entries only (a flow mapping may hold several on one line:
        # what is found there concerns each of them).
        others = {line for entry_id, lines in entries.items() if entry_id != target_id for line in lines}
        others.difference_update(entries.get(target_id, ()))
        # A model that cannot be loaded stops nothing: the target searches by
        # keyword and says why, the fallback a `rag.mode.semantic` threshold catches.
        model = _model_position(parsed, target_id)
        return [
            finding for finding in errors
            if finding.range.start.line not in others
            and (finding.range.start.line, finding.range.start.character) != model
        ]

    # -------------------------------------------------- running

    def run_suite(
        self,
        suite: SuiteInfo,
        *,
        case_ids: Collection[str] | None = None,
        cancel: threading.Event | None = None,
        progress: Progress | None = None,
        ks: Iterable[int] | None = None,
        record: Record | None = None,
        building: Building | None = None,
    ) -> SuiteResult:
        """Run ``suite`` (only the cases in ``case_ids`` when given).

        ``building`` is called while the target prepares to answer (the builtin
        target builds or updates its index), with (files read, files to read).

        ``ks`` sweeps k: each case of a rag suite is asked of the target once and
        also scored at each of these k (:attr:`CaseResult.at_k`,
        :attr:`SuiteResult.at_k`); its own figures and the thresholds stay at the
        suite's k. ``record`` is called with ``(case id, answer)`` for every
        answer the target gives (a :class:`TargetError` when it failed), for
        :class:`~.recording.Recorder`; recording does not change any figure.

        Raises :class:`CaseNotFound` when the dataset holds none of ``case_ids``
        (ids it does not hold are left out); every other problem is in the result.
        """
        result = SuiteResult(suite.id or "?", suite.file, suite.dataset, suite.target)
        thresholds = self._thresholds(suite, result)
        refusal = self._refusal(suite, result)
        if refusal is not None:
            return self._refuse(result, refusal.reason, thresholds, refusal.code)
        if suite.scores_metrics_only:
            # A metric's k is part of its config: a sweep does not apply.
            return self._run_metric_suite(suite, result, thresholds, case_ids, cancel, progress)
        sweep = tuple(sorted(set(ks))) if ks else ()
        if any(type(k) is not int or k < 1 for k in sweep):
            raise ValueError(f"k must be integers of at least 1, not {sweep!r}")
        result.ks = sweep
        return self._run_rag_suite(suite, result, thresholds, case_ids, cancel, progress, record, building)

    def unread_suite_file(self, relative: str) -> SuiteResult | None:
        """A suite file that holds no suite that can be read (its YAML is not
        well-formed, is refused, or has no list of suites), as a suite that was
        not run, named by the file; None when the checks find no error in it (a
        file with an empty list of suites)."""
        errors = [finding for finding in analyze_file(self.workspace, relative) if finding.severity == Severity.ERROR]
        if not errors:
            return None
        result = SuiteResult(relative, relative, None, None, findings=tuple(errors))
        reason = f"not run: no suite of {relative} can be read ({_first_three(errors)}); `rag-lsp check` lists them"
        return self._refuse(result, reason, {}, errors[0].code)

    def _refuse(self, result: SuiteResult, reason: str, thresholds: dict[str, float], code: str | None = None) -> SuiteResult:
        result.reason = reason
        result.error_code = code
        result.thresholds = tuple(ThresholdResult(metric, value, None, False) for metric, value in thresholds.items())
        return result

    def _refusal(self, suite: SuiteInfo, result: SuiteResult) -> Flaw | None:
        """Why the suite cannot run, and the code the checks report it with (None
        where rag-lsp checks what it cannot score); None when it can run."""
        blocking = self.blocking_findings(suite)
        if blocking:
            result.findings = tuple(blocking)
            return Flaw(_describe_findings(blocking, suite.file))
        unknown_engines = [engine for engine in suite.engines if engine not in ENGINES]
        if unknown_engines:
            return Flaw(f"rag-lsp has no scorer for engine {', '.join(map(repr, unknown_engines))}; it can only check it")
        unknown_metrics = [metric for metric in suite.metrics if metric not in METRICS]
        if unknown_metrics:
            return Flaw(f"rag-lsp has no scorer for metric {', '.join(map(repr, unknown_metrics))}; it can only check it")
        if suite.engines and suite.metrics:
            return Flaw("a suite with both `engines` and `metrics` cannot be scored: its dataset has one row shape")
        if not suite.engines and not suite.metrics:
            return Flaw("the suite has neither `engines` nor `metrics`: nothing scores its cases")
        if suite.dataset is None:
            return Flaw("the suite names no dataset inside the workspace")
        if ir.ENGINE in suite.engines and (missing := ir.missing_reason()) is not None:
            return Flaw(missing)
        dataset = self._dataset(suite.dataset)
        return Flaw(dataset.reason, dataset.code) if isinstance(dataset, DatasetProblem) else None

    def _thresholds(self, suite: SuiteInfo, result: SuiteResult) -> dict[str, float]:
        node = suite.node.get("thresholds")
        thresholds: dict[str, float] = {}
        if node is None:
            return thresholds
        for key, value in node.items():
            name, number = key.scalar(), value.scalar()
            if isinstance(name, str) and isinstance(number, (int, float)) and not isinstance(number, bool):
                thresholds[name] = float(number)
                result.threshold_spans[name] = (key.start, key.end)
        return thresholds

    def _finish(self, result: SuiteResult, thresholds: dict[str, float]) -> SuiteResult:
        verdict = score_suite(
            [case.scores for case in result.cases], thresholds, self.workspace.manifests()
        )
        result.aggregates = verdict.aggregates
        result.thresholds = verdict.thresholds
        if result.ks:
            # Means at each k over the cases scored at that k, as a run at that k
            # would compute them.
            swept = [case.at_k for case in result.cases if case.at_k is not None]
            for k in result.ks:
                result.at_k[k] = aggregate([at[k] for at in swept])[0]
        return result

    # -------------------------------------------------- rag suites

    def _run_rag_suite(
        self,
        suite: SuiteInfo,
        result: SuiteResult,
        thresholds: dict[str, float],
        case_ids: Collection[str] | None,
        cancel: threading.Event | None,
        progress: Progress | None,
        record: Record | None = None,
        building: Building | None = None,
    ) -> SuiteResult:
        config_errors = self.target_config_errors(suite.target or "")
        if config_errors:
            result.findings = tuple(config_errors)
            relative = self.workspace.targets_file() or ""
            parsed = self.workspace.parsed_yaml(relative)
            reason = _describe_findings(
                config_errors, relative, f"its target {suite.target!r}", parsed.lines.line_text if parsed is not None else None
            )
            return self._refuse(result, reason, thresholds, config_errors[0].code)
        info = self.workspace.targets().get(suite.target or "")
        if info is None:
            return self._refuse(result, f"target {suite.target!r} is not configured", thresholds, UNKNOWN_TARGET)
        if info.kind in TRUSTED_KINDS and not self.allow_exec:
            return self._refuse(
                result, f"target {info.id!r} is a {info.kind} target and is not run: {self.exec_refusal}", thresholds, TARGET_FAILED
            )
        try:
            target = self.pool.get(info)
        except TargetError as error:
            return self._refuse(result, error.message, thresholds, TARGET_FAILED)
        dataset = self._dataset(suite.dataset or "")
        assert isinstance(dataset, RunDataset)  # refused otherwise
        planned = _plan_rag_cases(dataset.rows, case_ids, dataset.flaws)
        report = _Reporter(progress, len(planned))
        cases: list[CaseResult | None] = [None] * len(planned)
        requests: list[_Plan] = []
        sweep = result.ks
        # The figures at every k of a case that has none (one shared, read-only dict).
        none_at = dict.fromkeys(sweep) if sweep else None
        # A recorded target replays by id; every other target reads the input.
        reads_input = target.kind != "recorded"
        for position, plan in enumerate(planned):
            if reads_input and plan.broken is None:
                _decode_input(plan)
            if plan.broken is not None:
                cases[position] = CaseResult(
                    plan.case_id, plan.line, None,
                    reason=plan.broken.reason, reason_code=plan.broken.code, code=BROKEN_CASE, at_k=none_at,
                )
                report.one()
            else:
                plan.position = position
                requests.append(plan)
        match, k = suite.match, suite.k
        values_of = operator.attrgetter(match)
        keep = self.keep_hits
        # A recording keeps every field of the hits, whatever the run reads.
        fields = None if keep or record is not None else frozenset({match})
        every = report.every
        count = 0
        # A sweep is read off each case's whole answer (the ranks of its relevant
        # hits are all it takes, whatever the suite's k). Cases with the same
        # ranks share one read-only `at_k`: a 100k-case suite has a few thousand
        # patterns.
        patterns: dict[tuple, dict[int, dict[str, float] | None]] = {}
        if requests and not (cancel is not None and cancel.is_set()):
            try:
                target.prepare(building, cancel)
            except Cancelled:
                pass  # the cancel event is set: no case is asked
            except Exception:  # noqa: BLE001 - answer_many reports it, case by case
                log.warning("target %s could not prepare", info.id, exc_info=True)
        # Where RAG203 applies, a missed path that is not a workspace file, or
        # one the builtin target never searches, is missed for that reason (the
        # files are listed once, before the run; a file the target's index holds
        # text of is not read to tell).
        unreachable = None
        if match == "path" and info.workspace_paths:
            corpora = builtin_corpora(info) if info.kind == "builtin" else None
            unreachable = unreachable_paths(self.workspace, corpora, target.held_files() if corpora is not None else None)
        answers = target.answer_many(requests, cancel, self.workspace.settings.run_concurrency, fields)
        # The ir engine scores every scored case at once, after the loop (one
        # call of ir-measures per suite): here each gets its judgments and hits.
        scores_ir = ir.ENGINE in suite.engines
        judged: list[tuple[int, ir.Judged]] = []
        # The loop runs once per case: names are bound locally, the scoring inlined.
        for count, (index, answer) in enumerate(answers, 1):
            plan = requests[index]
            if record is not None:
                record(plan.case_id, answer)
            if type(answer) is TargetError:
                case = CaseResult(
                    plan.case_id, plan.line, None,
                    reason=answer.message, code=TARGET_FAILED, error=answer.message, at_k=none_at,
                )
            else:
                hits = answer.hits
                values = list(map(values_of, hits))
                outcome = score_case(plan.expected, values, answer.mode, match, k, unreachable)
                if outcome.scores is None:
                    case = CaseResult(
                        plan.case_id, plan.line, None,
                        reason=outcome.broken.message, code=BROKEN_CASE,
                        mode=answer.mode, hits=tuple(hits) if keep else (), answer=outcome.answer,
                    )
                else:
                    case = CaseResult.scored_case(plan.case_id, plan.line, outcome, answer.mode, tuple(hits) if keep else ())
                    if scores_ir:
                        judged.append((plan.position, ir.Judged(ir.judgments(plan.expected, plan.grades), values)))
                if sweep:
                    whole = outcome.answer
                    key = answer_pattern(
                        whole.ranks, whole.hits, whole.first_with_field,
                        1.0 if answer.mode == SEMANTIC_MODE else 0.0, outcome.answer_relevant_ranks,
                    )
                    if key is None:
                        case.at_k = none_at  # no hit carries the field: broken at every k
                    else:
                        at = patterns.get(key)
                        if at is None:
                            at = patterns[key] = figures_at_ks(*key, sweep)
                        case.at_k = at
            cases[plan.position] = case
            if not count % every:
                report.at(count)
        report.done(report.offset + count)
        result.notes = tuple(target.take_notes())
        result.cancelled = any(case is None for case in cases)
        if scores_ir:
            _score_ir(cases, judged, suite, thresholds, k, sweep, self.workspace.yaml_limits)
        result.cases = [case for case in cases if case is not None]
        _carry_metadata(result.cases, dataset.rows)
        return self._finish(result, thresholds)

    # -------------------------------------------------- metric suites

    def _run_metric_suite(
        self,
        suite: SuiteInfo,
        result: SuiteResult,
        thresholds: dict[str, float],
        case_ids: Collection[str] | None,
        cancel: threading.Event | None,
        progress: Progress | None,
    ) -> SuiteResult:
        from .hit_at_k import ConfigError, HitAtKConfig, hit_at_k_many

        manifest = self.workspace.manifests().metric_manifest(HIT_AT_K)
        node = suite.node.get("metrics")
        config_node = node.get(HIT_AT_K) if node is not None else None
        try:
            raw = to_python(config_node, self.workspace.yaml_limits) if config_node is not None else None
            schema = manifest.config_schema if manifest is not None else None
            config = HitAtKConfig.from_config(raw if isinstance(raw, dict) else None, schema)
        except (ConfigError, TooLarge) as error:
            code = error.code if isinstance(error, ConfigError) else "RAG005"
            return self._refuse(result, f"metric {HIT_AT_K!r}: {error}", thresholds, code)
        result.metadata[HIT_AT_K] = config.metadata
        dataset = self._dataset(suite.dataset or "")
        assert isinstance(dataset, RunDataset)  # refused otherwise
        planned = _plan_gdi_rows(dataset.rows, case_ids, dataset.flaws, config)
        report = _Reporter(progress, len(planned))
        cases: list[CaseResult] = []
        runnable = [plan for plan in planned if plan.broken is None]
        batch = 512
        outcomes: dict[int, HitAtKResult] = {}
        for start in range(0, len(runnable), batch):
            if cancel is not None and cancel.is_set():
                result.cancelled = True
                break
            chunk = runnable[start : start + batch]
            for plan, outcome in zip(chunk, hit_at_k_many([(p.references, p.chunks) for p in chunk], config)):
                outcomes[plan.line] = outcome
            report.many(len(chunk))
        for plan in planned:
            if plan.broken is not None:
                cases.append(
                    CaseResult(plan.id, plan.line, None, reason=plan.broken.reason, reason_code=plan.broken.code, code=BROKEN_CASE)
                )
                continue
            outcome = outcomes.get(plan.line)
            if outcome is None:
                continue  # cancelled before it ran
            if outcome.score is None:
                cases.append(CaseResult(plan.id, plan.line, None, reason=outcome.broken, code=BROKEN_CASE, detail=outcome))
                continue
            rank = outcome.pair[0] + 1 if outcome.hit and outcome.pair is not None else None
            cases.append(CaseResult(plan.id, plan.line, {HIT_AT_K: outcome.score}, first_relevant_rank=rank, detail=outcome))
        report.many(len(planned) - len(runnable))
        report.done()
        result.cases = cases
        _carry_metadata(result.cases, dataset.rows)
        return self._finish(result, thresholds)


# ---------------------------------------------------------------- the ir engine


def _score_ir(
    cases: list[CaseResult | None],
    judged: list[tuple[int, ir.Judged]],
    suite: SuiteInfo,
    thresholds: dict[str, float],
    k: int | None,
    sweep: tuple[int, ...],
    limits: Any,
) -> None:
    """Give each scored case of a suite naming engine ``ir`` its ir figures (at
    the suite's k, and at each k of a sweep), beside the rag figures when the
    suite lists ``rag`` too, in their place when it does not. ``judged``: each
    scored case's position in ``cases`` and what ir-measures reads of it (every
    hit of its answer: the cut at k is made here)."""
    measures = ir.suite_measures(_listed_measures(suite, limits), thresholds)
    keeps_rag = "rag" in suite.engines
    at_suite_k = [ir.Judged(case.grades, case.values[:k] if k is not None else case.values) for _, case in judged]
    figures = ir.score_ir(at_suite_k, measures)
    swept = ir.score_ir_at([case for _, case in judged], measures, sweep) if sweep else {}
    for index, ((position, _), own) in enumerate(zip(judged, figures)):
        case = cases[position]
        if case is None or case.scores is None:
            continue
        case.scores = {**case.scores, **own} if keeps_rag else own
        if sweep and case.at_k is not None:
            # A case's `at_k` may be shared with cases of the same ranks: a new one.
            case.at_k = {
                at: None if rag is None else ({**rag, **swept[at][index]} if keeps_rag else swept[at][index])
                for at, rag in case.at_k.items()
            }


def _listed_measures(suite: SuiteInfo, limits: Any) -> list[Any] | None:
    """``options.ir.measures`` as written (None when it is not)."""
    options = suite.node.get("options")
    engine = options.get(ir.ENGINE) if options is not None and options.is_map else None
    listed = engine.get("measures") if engine is not None and engine.is_map else None
    if listed is None:
        return None
    value = to_python(listed, limits)
    return value if isinstance(value, list) else None


# ---------------------------------------------------------------- planning


@dataclass(slots=True)
class _Plan(Request):
    """A case to run: the request the target gets, and what the scorer needs."""

    line: int = 0
    expected: Sequence[str] = ()
    broken: Flaw | None = None
    position: int = 0
    # `expect.grades` as written (the ir engine reads it), or None.
    grades: Any = None


@dataclass(frozen=True, slots=True)
class _GdiPlan:
    id: str
    line: int
    references: list[str] = field(default_factory=list)
    chunks: list[str] = field(default_factory=list)
    broken: Flaw | None = None


def _plan_rag_cases(
    rows: list[tuple[int, Any]], case_ids: Collection[str] | None, flaws: dict[int, Flaw] | None = None
) -> list[_Plan]:
    # One pass over the rows with the checks inlined: for 100k cases every
    # function call per row shows in the run's time. Each broken case names the
    # code `rag-lsp check` reports on its line.
    wanted = set(case_ids) if case_ids is not None else None
    seen: dict[str, int] = {}
    plans: list[_Plan] = []
    append = plans.append
    for line, value in rows:
        if type(value) is CaseRow:
            # The common line: typed and checked as it was decoded.
            case_id = value.id
            if case_id:
                if wanted is not None and case_id not in wanted:
                    continue
                if case_id in seen:
                    append(_Plan(case_id, None, line, (), _repeated(case_id, seen[case_id])))
                    continue
                seen[case_id] = line
                relevant = value.expect.relevant
                if relevant:
                    grades = value.expect.grades
                    append(_Plan(case_id, value.input, line, relevant, grades=None if grades is UNSET else grades))
                else:
                    append(_Plan(case_id, None, line, (), _NOTHING_DECLARED))
                continue
            value = msgspec.json.decode(_encode(value))
        if type(value) is dict:
            case_id = value.get("id")
            if type(case_id) is str and case_id:
                if wanted is not None and case_id not in wanted:
                    continue
                if row_shape(value) == GDI_TEXT:
                    # Not a case (RAG004), so its id is no case's: as the checks count ids.
                    append(_Plan(case_id, None, line, (), _GDI_AMONG_CASES))
                    continue
                if case_id in seen:
                    append(_Plan(case_id, None, line, (), _repeated(case_id, seen[case_id])))
                    continue
                seen[case_id] = line
                plan = _plan_case(case_id, line, value)
                if plan.broken is None and flaws and line in flaws:
                    plan = _Plan(case_id, None, line, (), flaws[line])
                append(plan)
                continue
        case_id = f"line {line + 1}"
        if wanted is not None and case_id not in wanted:
            continue
        seen.setdefault(case_id, line)
        append(_Plan(case_id, None, line, (), _no_id(value, line, "id")))
    _check_found(wanted, seen)
    return plans


_NOTHING_DECLARED = Flaw("nothing relevant declared: `expect.relevant` is empty, so there is nothing to count", NOTHING_RELEVANT)
_GDI_AMONG_CASES = Flaw("a gdi_text_v1 row among rag cases: the rag engine cannot score it", SCHEMA)
_NO_INPUT = Flaw("the case has no `input` object to send to the target", SCHEMA)


def _repeated(case_id: str, first: int) -> Flaw:
    return Flaw(f"the case id {case_id!r} is used before, on line {first + 1}", DUPLICATE_ID)


def _encode(case: CaseRow) -> bytes:
    expect: dict[str, Any] = {"relevant": case.expect.relevant}
    if case.expect.grades is not UNSET:
        expect["grades"] = case.expect.grades
    row = {"id": case.id, "input": case.input, "expect": expect}
    if case.metadata is not UNSET:
        row["metadata"] = case.metadata
    return msgspec.json.encode(row)


def _metadata_of(value: Any) -> Any:
    if type(value) is CaseRow:
        return value.metadata
    return value.get("metadata", UNSET) if type(value) is dict else UNSET


def _carry_metadata(cases: list[CaseResult], rows: list[tuple[int, Any]]) -> None:
    """Give each case the `metadata` object of its row (a value of another type
    is RAG004's and is not carried)."""
    by_line = {line: metadata for line, value in rows if type(metadata := _metadata_of(value)) is dict}
    if by_line:
        for case in cases:
            case.metadata = by_line.get(case.line)


def _decode_input(plan: _Plan) -> None:
    """Decode an input kept as JSON text; a case whose input is no object is broken."""
    if type(plan.input) is msgspec.Raw:
        try:
            plan.input = msgspec.json.decode(plan.input)
        except msgspec.ValidationError as error:
            # Well-formed JSON the decoder cannot hold: a number past a double's
            # range, or an integer past the digits Python converts.
            plan.broken = _unread_input(plan.input, error)
            plan.input = None
            return
        except RecursionError as error:
            # Nesting past the decoder's depth.
            plan.input = None
            plan.broken = Flaw(f"the case's `input` is not read: {error}", UNSAFE_INPUT)
            return
    if type(plan.input) is not dict:
        plan.broken = _NO_INPUT


def _unread_input(raw: msgspec.Raw, error: Exception) -> Flaw:
    """Why a case whose `input` the fast decoder refused is broken, with the code
    the checks give it, read as they read it: a number beyond a double's range is
    infinity there (RAG004), an integer of too many digits is not read (RAG005)."""
    row = Row(bytes(raw).decode("utf-8", "surrogatepass"))
    if row.refused:
        return Flaw(f"the case's `input` is not read: {row.refused}", UNSAFE_INPUT)
    flaw = next(non_finite_issues(row.value), None) if row.error is None else None
    if flaw is not None:
        return Flaw(non_finite_message(("input", *flaw.path)), SCHEMA)
    return Flaw(f"the case's `input` is not read: {error}", UNSAFE_INPUT)


def _no_id(value: Any, line: int, key: str) -> Flaw:
    if isinstance(value, Unreadable):
        return value
    if type(value) is not dict:
        return Flaw(f"line {line + 1} is not a JSON object", SCHEMA)
    return Flaw(f"line {line + 1} has no string `{key}`", SCHEMA)


def _plan_case(case_id: str, line: int, value: dict) -> _Plan:
    """A case read as plain JSON: its expected values judged as the checks judge them."""
    verdict = judge_expected(value)
    given = value.get("input")
    if verdict is None and type(given) is dict:
        if "input_id" not in value and "retrieved_context" not in value and "reference_contexts" not in value:
            return _Plan(case_id, given, line, value["expect"]["relevant"], grades=value["expect"].get("grades"))
    if row_shape(value) == GDI_TEXT:
        problem = _GDI_AMONG_CASES
    elif verdict is not None and verdict.kind is not Expected.NOT_A_STRING:
        problem = _EXPECTED_FLAWS[verdict.kind]
    elif type(given) is not dict:
        problem = _NO_INPUT
    else:
        assert verdict is not None
        problem = Flaw(f"`expect.relevant[{verdict.index}]` is not a string", verdict.code)
    return _Plan(case_id, None, line, (), problem)


# A case's expected values that cannot be scored, as a run says it.
_EXPECTED_FLAWS = {
    # Declared, but not as a list: the schema's finding, not RAG201's.
    Expected.NOT_A_LIST: Flaw("`expect.relevant` must be a list of strings", Expected.NOT_A_LIST.code),
    Expected.MISSING: Flaw("nothing relevant declared: the case has no `expect.relevant` list", Expected.MISSING.code),
    Expected.EMPTY: _NOTHING_DECLARED,
}


def _plan_gdi_rows(
    rows: list[tuple[int, Any]], case_ids: Collection[str] | None, flaws: dict[int, Flaw], config: HitAtKConfig
) -> list[_GdiPlan]:
    """The gdi_text_v1 rows to score. A row is broken with the code `rag-lsp
    check` reports on its line: no usable `input_id` or a row that fails the
    gdi_text_v1 schema (the seed manifest's required columns) is RAG004, a
    repeated `input_id` RAG202, a row without reference contexts RAG208."""
    wanted = set(case_ids) if case_ids is not None else None
    seen: dict[str, int] = {}
    plans: list[_GdiPlan] = []
    checker = row_checker(GDI_TEXT)
    for line, value in rows:
        if type(value) is CaseRow:
            value = msgspec.json.decode(_encode(value))
        case_id = value.get("input_id") if type(value) is dict else None
        problem: Flaw | None = None
        if type(case_id) is not str or not case_id:
            case_id = f"line {line + 1}"
            problem = _no_id(value, line, "input_id")
        if wanted is not None and case_id not in wanted:
            continue
        if problem is None and row_shape(value) == RAG_CASE:
            # Not a gdi row (RAG004), so its input_id is no row's: as the checks count ids.
            problem = Flaw("a rag case among gdi_text_v1 rows: rag.hit_at_k cannot score it", SCHEMA)
        if problem is None and case_id in seen:
            problem = Flaw(f"the input_id {case_id!r} is used before, on line {seen[case_id] + 1}", DUPLICATE_ID)
        if problem is None:
            seen[case_id] = line
            problem = _gdi_problem(value, flaws.get(line), checker, config)
        else:
            seen.setdefault(case_id, line)
        if problem is not None:
            plans.append(_GdiPlan(case_id, line, broken=problem))
        else:
            plans.append(_GdiPlan(case_id, line, value["reference_contexts"], value["retrieved_context"]))
    _check_found(wanted, seen)
    return plans


def _gdi_problem(value: dict, flaw: Flaw | None, checker: SchemaChecker, config: HitAtKConfig) -> Flaw | None:
    """Why a gdi row with a usable, unrepeated input_id cannot be scored (``flaw``:
    what reading it found, see RunDataset.flaws), or None."""
    references = value.get("reference_contexts")
    if ("reference_contexts" not in value) or (type(references) is list and not references):
        # The row is broken, not zero: said in the metric's language, as its
        # result would say it, with the code of the check.
        from .hit_at_k import explain_no_references

        return Flaw(explain_no_references(config), NO_REFERENCES)
    if flaw is not None:
        return flaw
    if checker.is_valid(value):
        return None
    issues = row_issues(value, GDI_TEXT, exact=False)
    if not issues:
        return None
    issue = issues[0]
    where = "".join(f"[{part}]" if type(part) is int else f".{part}" for part in issue.path).lstrip(".")
    said = f"`{where}`: {issue.message}" if where and issue.anchor != "key" else issue.message
    return Flaw(f"not a valid gdi_text_v1 row: {said}", SCHEMA)


def _check_found(wanted: set[str] | None, seen: dict[str, int]) -> None:
    # Asked for cases of which the dataset holds none: say so rather than run nothing.
    if wanted is not None and not wanted & seen.keys():
        raise CaseNotFound(", ".join(sorted(wanted)))


# ---------------------------------------------------------------- helpers


class _Reporter:
    """Calls the progress callback at most every 50 ms, and once at the end.

    The run loop reports every ``every`` cases (one case at a time when a
    callback listens; never when none does), so a 100k-case replay does not pay
    for a clock read per case.
    """

    def __init__(self, callback: Progress | None, total: int) -> None:
        self.callback = callback
        self.total = total
        self.count = 0
        self.offset = 0
        self._last = 0.0
        self.every = 1 if callback is not None else max(total, 1) + 1

    def one(self) -> None:
        self.offset += 1
        self.at(0)

    def at(self, done: int) -> None:
        self.count = self.offset + done
        if self.callback is not None:
            now = time.monotonic()
            if now - self._last >= 0.05:
                self._last = now
                self.callback(self.count, self.total)

    def many(self, count: int) -> None:
        self.count += count
        if self.callback is not None and count:
            self._last = time.monotonic()
            self.callback(self.count, self.total)

    def done(self, count: int | None = None) -> None:
        if count is not None:
            self.count = count
        if self.callback is not None:
            self.callback(self.count, self.total)


def _describe_findings(
    findings: list[Finding], path: str, concerning: str = "this suite", line_text: Callable[[int], str] | None = None
) -> str:
    count = counted(len(findings), "error")
    return f"not run: {path} has {count} for {concerning} ({_first_three(findings, line_text)}); `rag-lsp check` lists them"


def _first_three(findings: list[Finding], line_text: Callable[[int], str] | None = None) -> str:
    """The first three findings with their lines; with ``line_text``, each line's
    text too (a message that names no key, `.inf is not a number here`, then
    says of what)."""

    def where(finding: Finding) -> str:
        line = finding.range.start.line
        text = line_text(line).strip() if line_text is not None else ""
        return f"line {line + 1} (`{text}`)" if text and len(text) <= 80 else f"line {line + 1}"

    shown = "; ".join(f"{where(f)}: {f.code} {f.message}" for f in findings[:3])
    return shown + (f"; and {len(findings) - 3:,} more" if len(findings) > 3 else "")


def _model_position(parsed: Any, target_id: str) -> tuple[int, int] | None:
    """Where the `model` value of a builtin target's entry begins (line, column),
    where the check reports a model it cannot find; None when it has none."""
    root = parsed.document.root if parsed is not None else None
    targets = root.get("targets") if root is not None and root.is_map else None
    entry = targets.get(target_id) if targets is not None and targets.is_map else None
    builtin = entry.get("builtin") if entry is not None and entry.is_map else None
    model = builtin.get("model") if builtin is not None and builtin.is_map else None
    if model is None:
        return None
    start = parsed.lines.position(model.start)
    return start.line, start.character


def _entry_lines(parsed: Any) -> dict[str, range]:
    """The lines of each entry of a targets config's `targets` mapping, by target id."""
    root = parsed.document.root if parsed is not None else None
    targets = root.get("targets") if root is not None and root.is_map else None
    if targets is None or not targets.is_map:
        return {}
    entries = {}
    for key, value in targets.items():
        name = key.scalar()
        if isinstance(name, str):
            last = parsed.lines.position(max(key.start, value.end - 1)).line
            entries[name] = range(parsed.lines.position(key.start).line, last + 1)
    return entries


def _figure(value: float) -> str:
    return f"{value:.2f}"


# Missed values a case's line names (the text and JUnit reports, RAG400): a case
# may list thousands, and its line would be megabytes; the JSON report lists all.
MISSED_SHOWN = 10


def describe_case(case: CaseResult, versus: Callable[[str], str] | None = None) -> str:
    """A case's result in one line, as RAG400 shows it:
    ``recall 0.50 (1/2) · precision 0.10 · MRR 0.33 (first relevant at rank 3) · hit@1 0
    · retrieved 10 · semantic 1 — missed: docs/approvals.md (rank 12, k = 10)``,
    each missed value with why (:func:`describe_missed`).

    ``versus(metric)``: what to say beside a figure, e.g. ``−0.50 vs baseline``
    (empty when nothing is to be said); it joins the figure's parentheses.
    """
    if case.scores is None:
        return f"broken: {case.broken}" if case.code != TARGET_FAILED else f"target failed: {case.broken}"
    scores = case.scores

    def figure(metric: str, text: str, *notes: str) -> str:
        said = [note for note in (*notes, versus(metric) if versus is not None else "") if note]
        return text + (f" ({', '.join(said)})" if said else "")

    if HIT_AT_K in scores:
        explanation = getattr(case.detail, "explanation", "")
        return figure(HIT_AT_K, f"{label(HIT_AT_K)} {scores[HIT_AT_K]:g}") + (f" — {explanation}" if explanation else "")
    notes = {
        RECALL: f"{case.found}/{case.expected}",
        MRR: f"first relevant at rank {case.first_relevant_rank}" if case.first_relevant_rank else "",
    }
    # Shares as 0.50, counts and flags as they are (hit@1 0, retrieved 10).
    shares = (RECALL, PRECISION, MRR)
    parts = [
        figure(metric, f"{label(metric)} {_figure(scores[metric]) if metric in shares else format(scores[metric], 'g')}", notes.get(metric, ""))
        for metric in (RECALL, PRECISION, MRR, HIT_AT_1, RETRIEVED, SEMANTIC)
        if metric in scores
    ]
    # The ir engine's figures, in the order the suite chose its measures.
    parts += [figure(metric, f"{metric} {_figure(value)}") for metric, value in scores.items() if metric.startswith(ir.PREFIX)]
    line = " · ".join(parts)
    return line + (f" — missed: {describe_missed(case)}" if case.missed else "")


def describe_missed(case: CaseResult) -> str:
    """What a case missed, each value with why: ``b.md (rank 4, k = 3), c.md (not
    among the 10 hits the target returned)``; the bare values when the run did
    not say why. The first MISSED_SHOWN, and how many more."""
    described = case.why_missed if len(case.why_missed) == len(case.missed) else case.missed
    shown = ", ".join(map(str, described[:MISSED_SHOWN]))
    more = len(described) - MISSED_SHOWN
    return shown + (f" and {more:,} more (`rag-lsp run --format json` lists them all)" if more > 0 else "")


def describe_threshold(threshold: ThresholdResult) -> str:
    """``rag.recall 0.62 < 0.8`` / ``rag.recall 0.91 ≥ 0.8`` / ``rag.recall: no scored case``."""
    if threshold.value is None:
        return f"{threshold.metric}: no scored case to compare with {threshold.threshold:g}"
    if threshold.passed:
        relation = threshold.comparison
    else:
        relation = "<" if threshold.higher_is_better else ">"
    return f"{threshold.metric} {_figure(threshold.value)} {relation} {threshold.threshold:g}"
