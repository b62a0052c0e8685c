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

What a run gives is :mod:`.results`'s; which cases it asks, :mod:`.plans`'s;
what stops a suite before it runs, :mod:`.preflight`'s.
"""

from __future__ import annotations

import logging
import operator
import threading
from typing import TYPE_CHECKING, Any, Callable, Collection, Iterable

from . import ir
from ..checking.analyze import analyze_file
from ..checking.expectedpaths import unreachable_paths
from .datasets import DatasetProblem, RunDataset, read_dataset
from ..reading.findings import Severity
from .plans import Plan, carry_metadata, decode_input, plan_gdi_rows, plan_rag_cases
from .preflight import Preflight, describe_findings, first_three
from .progress import Progress, Reporter
from .results import BROKEN_CASE, HIT_AT_K, TARGET_FAILED, UNKNOWN_TARGET, CaseResult, SuiteResult
from .scorer import (
    SEMANTIC_MODE,
    ThresholdResult,
    aggregate,
    answer_pattern,
    figures_at_ks,
    score_case,
    score_suite,
)
from ..workspace.suitefacts import SuiteInfo, builtin_corpora
from .targets import TRUSTED_KINDS, Answer, Cancelled, TargetError, TargetPool
from ..workspace.workspace import Workspace
from ..reading.yamltree import TooLarge, to_python

if TYPE_CHECKING:
    from .hit_at_k import HitAtKResult

log = logging.getLogger(__name__)

# Called while a target builds its index, with (files read, files to read).
Building = Callable[[int, int], None]
# Called with each answer a target gave (or its failure), by case id.
Record = Callable[[str, "Answer | TargetError"], None]


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
        self._datasets: dict[str, RunDataset | str] = {}
        self._preflight = Preflight(workspace, self._dataset)

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
        refusal = self._preflight.refusal(suite, result)
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
        reason = f"not run: no suite of {relative} can be read ({first_three(errors)}); `rag-lsp check` lists them"
        return self._refuse(result, reason, {}, errors[0].code)

    def _refuse(self, result: SuiteResult, reason: str, thresholds: dict[str, float], code: str | None = None) -> SuiteResult:
        result.reason = reason
        result.error_code = code
        result.thresholds = tuple(ThresholdResult(metric, value, None, False) for metric, value in thresholds.items())
        return result

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
        config_errors = self._preflight.target_config_errors(suite.target or "")
        if config_errors:
            result.findings = tuple(config_errors)
            relative = self.workspace.targets_file() or ""
            parsed = self.workspace.parsed_yaml(relative)
            reason = describe_findings(
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
        planned = plan_rag_cases(dataset.rows, case_ids, dataset.flaws)
        report = Reporter(progress, len(planned))
        cases: list[CaseResult | None] = [None] * len(planned)
        requests: list[Plan] = []
        sweep = result.ks
        # The figures at every k of a case that has none (one shared, read-only dict).
        none_at = dict.fromkeys(sweep) if sweep else None
        # A recorded target replays by id; every other target reads the input.
        reads_input = target.kind != "recorded"
        for position, plan in enumerate(planned):
            if reads_input and plan.broken is None:
                decode_input(plan)
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
        carry_metadata(result.cases, dataset.rows)
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
        planned = plan_gdi_rows(dataset.rows, case_ids, dataset.flaws, config)
        report = Reporter(progress, len(planned))
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
        carry_metadata(result.cases, dataset.rows)
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
