"""What a run gives: each case's result and each suite's, the codes run results
are reported with, and how a result reads in one line.

A case has figures, or the reason it has none and the code of the check that
reports it (a broken case, RAG401; a target that did not answer it, RAG405). A
suite has its cases, its means against its thresholds, or why it was not run.
The runner (:mod:`.runner`) makes them, and raises :class:`CaseNotFound` when
asked for cases a dataset does not hold; both shells show them
(:func:`describe_case` is RAG400's message) and the run report writes them
(:mod:`.report`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from . import ir
from ..workspace.expected import joined
from ..reading.findings import Finding
from .scorer import (
    HIT_AT_1,
    MRR,
    PRECISION,
    RECALL,
    RETRIEVED,
    SEMANTIC,
    AnswerRanks,
    CaseScore,
    Miss,
    ThresholdResult,
    label,
)
from .targets import Hit

if TYPE_CHECKING:
    from .hit_at_k import HitAtKResult
    from .slices import Slice

HIT_AT_K = "rag.hit_at_k"

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
