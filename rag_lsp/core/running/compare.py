"""Comparing a run with a baseline: which figures moved, which cases got better or worse.

Pure: no I/O beyond :func:`load_baseline`, no protocol types. Both shells can use
it: ``rag-lsp run --baseline RUN.json`` compares a whole run, and an editor can put
``recall 0.50 (−0.50 vs baseline)`` beside one case with :func:`compare_case` and
:func:`~.comparison.vs_baseline`.

A baseline is what ``rag-lsp run --format json`` printed: SPEC §6's keys, plus the
extra keys this version writes (``ranks``: each expected value that came back →
the rank of its first hit within k; ``why_missed``; ``answer``: every rank of
each expected value in the target's whole answer; ``error``; ``at_k``). A report
without ``ranks`` (an older rag-lsp) still compares; a lost hit is then named
without the rank it moved from.

* **Aggregates**: each suite mean of the baseline beside this run's, with the
  delta. A mean *regresses* when it moves the wrong way (down for
  ``higher_is_better``, up for ``lower_is_better``, from the manifests) by more
  than the tolerance, or when the baseline had it and this run has none (the suite
  was not run, or no case was scored). Counters (``rag.retrieved``) never regress.
* **Cases**, by id: a case is *worse* when any of its figures moved the wrong way
  or it lost its figures (now broken), *better* when some moved the right way and
  none the wrong way, or it has figures again; otherwise unchanged. Each changed
  case carries its deltas and the relevant hits it lost, gained, or that moved
  rank; a hit lost or gained says why it was missed on the side that missed it
  (``now rank 7, k = 5``). Cases only in this run are *added*, cases only in the
  baseline *removed*; both are listed. Suites likewise.
* **How sure**: each suite mean (not a counter) carries the paired comparison of
  its cases scored on both sides, by id (:mod:`.significance`): the difference,
  its 95% bootstrap interval, the randomization p-value and the counts of cases
  better, worse and equal. With an ``alpha``, a mean regresses only when its
  move is also significant at that level (``--significance``).
* **Means at each k of a sweep** (``--k``): beside the baseline's own means at
  that k when it swept it too, else scored again from its cases' whole answers
  (``answer``), so a baseline run at one k compares at every k.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Collection, Mapping, NamedTuple, Sequence


from .comparison import (
    BETTER,
    COMPARED,
    COUNTER,
    NEW,
    REMOVED,
    SAME,
    WORSE,
    CaseChange,
    CaseLike,
    Comparison,
    Direction,
    HitChange,
    MetricDelta,
    SuiteComparison,
    default_direction,
    keyed,
)
from ..workspace.manifests import LOWER
from .report import RunFigures, SuiteFigures
from .significance import PairedComparison, paired
from .scorer import (
    RAG_METRICS,
    SEMANTIC_MODE,
    aggregate,
    figures_from_answer,
)


def _metric_order(*mappings: Mapping[str, Any] | None) -> list[str]:
    names: list[str] = [name for name in RAG_METRICS if any(m and name in m for m in mappings)]
    for mapping in mappings:
        for name in mapping or ():
            if name not in names:
                names.append(name)
    return names


def _number(value: Any) -> float | None:
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return None if math.isnan(value) else float(value)


def compare_figures(
    baseline: Mapping[str, Any] | None, current: Mapping[str, Any] | None, direction: Direction = default_direction
) -> tuple[MetricDelta, ...]:
    """Each figure either side has, baseline beside now."""
    return tuple(
        MetricDelta(
            name,
            _number(baseline.get(name)) if baseline else None,
            _number(current.get(name)) if current else None,
            direction(name),
        )
        for name in _metric_order(baseline, current)
    )


def compare_case(baseline: CaseLike, current: CaseLike, direction: Direction = default_direction) -> CaseChange:
    """One case now against the same case in the baseline.

    For an editor: ``vs_baseline(compare_case(old, new).delta_of("rag.recall"))``
    is ``−0.50 vs baseline``.
    """
    deltas = compare_figures(baseline.scores, current.scores, direction)
    if current.scores is None and baseline.scores is not None:
        change = WORSE
    elif current.scores is not None and baseline.scores is None:
        change = BETTER
    else:
        moves = {delta.change for delta in deltas}
        change = WORSE if WORSE in moves else BETTER if BETTER in moves else SAME
    lost: list[HitChange] = []
    gained: list[HitChange] = []
    moved: list[HitChange] = []
    if current.scores is not None and baseline.scores is not None:
        before = baseline.ranks
        after = current.ranks or {}
        missed_now = set(current.missed)
        # Why a value lost was missed now, and why one gained was missed then.
        why_now = _reasons(current)
        why_then = _reasons(baseline)
        if before is not None:
            for value, rank in before.items():
                now = after.get(value)
                if now is None:
                    if value in missed_now:  # still expected, no longer found
                        lost.append(HitChange(value, rank, None, why_now.get(value)))
                elif now != rank:
                    moved.append(HitChange(value, rank, now))
            for value, rank in after.items():
                if value not in before:
                    gained.append(HitChange(value, None, rank, why_then.get(value)))
        else:
            # An older report without ranks: what it missed tells what it found.
            missed_before = set(baseline.missed)
            for value in current.missed:
                if value not in missed_before:
                    lost.append(HitChange(value, None, None, why_now.get(value)))
            for value, rank in after.items():
                if value in missed_before:
                    gained.append(HitChange(value, None, rank, why_then.get(value)))
        lost.sort(key=lambda hit: (hit.before or 0, hit.value))
        gained.sort(key=lambda hit: (hit.after or 0, hit.value))
        moved.sort(key=lambda hit: (hit.before or 0, hit.value))
    return CaseChange(
        current.id,
        change,
        baseline.scores,
        current.scores,
        deltas,
        current.broken if current.scores is None else None,
        baseline.broken if baseline.scores is None else None,
        tuple(lost),
        tuple(gained),
        tuple(moved),
    )


def _reasons(case: CaseLike) -> dict[str, str]:
    """Why the case missed each value it missed, by value (empty when its run did not say)."""
    misses = getattr(case, "why_missed", None)
    return {miss.value: miss.message for miss in misses if miss.message} if misses else {}


def baseline_at_k(suite: SuiteFigures, ks: Sequence[int]) -> dict[int, dict[str, float]] | None:
    """A suite's means at each of ``ks`` (ascending) scored again from its cases'
    whole answers (``answer``), exactly as a run at that k gives them; None when
    a scored case has no answer to read (a report of an older rag-lsp, or of a
    metric suite)."""
    at: list[dict[int, dict[str, float] | None]] = []
    for case in suite.cases:
        answer = case.answer
        if answer is None:
            if case.scores is not None:
                return None
            continue  # no answer and no figures (broken, or the target failed): none at any k
        semantic = 1.0 if case.mode == SEMANTIC_MODE else 0.0
        at.append(figures_from_answer(answer.ranks, answer.hits, answer.first_with_field, semantic, ks))
    return {k: aggregate([figures[k] for figures in at])[0] for k in ks}


def paired_figures(
    side_a: Mapping[str, CaseLike], side_b: Mapping[str, CaseLike], metric: str
) -> tuple[list[float], list[float]]:
    """The metric's figures of the cases (by id) scored with it on both sides, in
    side B's order."""
    figures_a: list[float] = []
    figures_b: list[float] = []
    for key, case_b in side_b.items():
        case_a = side_a.get(key)
        if case_a is None or case_a.scores is None or case_b.scores is None:
            continue
        value_a = _number(case_a.scores.get(metric))
        value_b = _number(case_b.scores.get(metric))
        if value_a is not None and value_b is not None:
            figures_a.append(value_a)
            figures_b.append(value_b)
    return figures_a, figures_b


def paired_comparison(
    side_a: Mapping[str, CaseLike], side_b: Mapping[str, CaseLike], metric: str, direction: str
) -> PairedComparison | None:
    """B against A on one metric over the cases both scored; None for a counter,
    or when no case was scored with it on both sides."""
    if direction == COUNTER:
        return None
    figures_a, figures_b = paired_figures(side_a, side_b, metric)
    if not figures_a:
        return None
    return paired(figures_a, figures_b, higher_is_better=direction != LOWER)


class _ScoresAt(NamedTuple):
    """A case as a paired comparison reads it at one k of a sweep (see _cases_at)."""

    scores: dict[str, float] | None


def _cases_at(cases: Mapping[str, Any], k: int) -> dict[str, _ScoresAt]:
    """The cases (by id) with their figures at ``k``: from each case's own ``at_k``
    (a run's, or a report's that swept k), else read again from its whole
    answer as baseline_at_k does (a baseline that did not sweep k)."""
    at: dict[str, _ScoresAt] = {}
    for key, case in cases.items():
        swept = getattr(case, "at_k", None)
        scores = (swept.get(k) or swept.get(str(k))) if swept else None
        answer = getattr(case, "answer", None)
        if scores is None and answer is not None and case.scores is not None:
            semantic = 1.0 if getattr(case, "mode", None) == SEMANTIC_MODE else 0.0
            scores = figures_from_answer(answer.ranks, answer.hits, answer.first_with_field, semantic, [k])[k]
        at[key] = _ScoresAt(scores)
    return at


def with_significance(
    deltas: Sequence[MetricDelta], before: Mapping[str, CaseLike], after: Mapping[str, CaseLike]
) -> tuple[MetricDelta, ...]:
    """Each suite mean with the paired comparison of its cases (baseline as A)."""
    return tuple(
        replace(delta, significance=paired_comparison(before, after, delta.metric, delta.direction))
        for delta in deltas
    )


def compare_suite(
    baseline: SuiteFigures | None,
    current: Any | None,
    direction: Direction = default_direction,
) -> SuiteComparison:
    """A suite now (a :class:`~.runner.SuiteResult` or :class:`SuiteFigures`)
    against the same suite in the baseline; either may be None (new, removed)."""
    if current is None:
        assert baseline is not None
        return SuiteComparison(baseline.id, REMOVED, removed=[case.id for case in baseline.cases])
    if baseline is None:
        return SuiteComparison(current.id, NEW, added=[case.id for case in current.cases], error=current.error)
    result = SuiteComparison(current.id, COMPARED, error=current.error)
    before = keyed(baseline.cases)
    after = keyed(current.cases)
    result.aggregates = with_significance(
        compare_figures(baseline.aggregates, current.aggregates, direction), before, after
    )
    base_at: dict[str, Any] = dict(baseline.at_k or {})
    now_at = {str(k): means for k, means in (current.at_k or {}).items()}
    # The k this run swept and the baseline did not: its means there are read
    # again from its cases' whole answers.
    unswept = sorted(int(key) for key in now_at.keys() - base_at.keys() if key.isdigit() and int(key) >= 1)
    if unswept:
        derived = baseline_at_k(baseline, unswept)
        if derived is not None:
            base_at.update((str(k), means) for k, means in derived.items())
    for k in sorted((int(key) for key in base_at.keys() & now_at.keys() if key.isdigit()), key=int):
        result.at_k[k] = with_significance(
            compare_figures(base_at[str(k)], now_at[str(k)], direction), _cases_at(before, k), _cases_at(after, k)
        )
    for key, case in after.items():
        old = before.get(key)
        if old is None:
            result.added.append(key)
            continue
        changed = compare_case(old, case, direction)
        if changed.change == WORSE:
            result.worse.append(changed)
        elif changed.change == BETTER:
            result.better.append(changed)
        else:
            result.unchanged += 1
    if current.error is None:
        # A suite not run now has no cases now: its cases were not removed.
        result.removed = [key for key in before if key not in after]
    return result


def compare_run(
    baseline: RunFigures,
    current: Sequence[Any],
    *,
    tolerance: float = 0.0,
    direction: Direction = default_direction,
    name: str = "",
    case_ids: Collection[str] | None = None,
    alpha: float | None = None,
) -> Comparison:
    """Each suite of this run (SuiteResults, in run order) against the baseline's
    suite of the same id, then the baseline's suites this run does not have.

    ``case_ids``: the run was narrowed to these cases (``--case``), so the
    baseline is too, and its means are taken again over those cases alone.
    ``alpha``: a regression must also be significant at this level.
    """
    if case_ids is not None:
        baseline = RunFigures([_narrowed(suite, set(case_ids)) for suite in baseline.suites])
    before = keyed(baseline.suites)
    after = keyed(current)
    suites = [compare_suite(before.get(key), suite, direction) for key, suite in after.items()]
    suites += [compare_suite(suite, None, direction) for key, suite in before.items() if key not in after]
    return Comparison(suites, tolerance, name, alpha)


def _narrowed(suite: SuiteFigures, wanted: set[str]) -> SuiteFigures:
    """The baseline suite over only the wanted cases, with its means over them."""
    cases = [case for case in suite.cases if case.id in wanted]
    figures = [
        {metric: value for metric, value in case.scores.items() if _number(value) is not None}
        if case.scores is not None
        else None
        for case in cases
    ]
    means = aggregate(figures)[0] if cases else {}
    return SuiteFigures(suite.id, dict(means), cases, suite.passed, suite.broken, suite.error, None)
