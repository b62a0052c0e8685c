"""What a comparison of a run with a baseline holds, and how it is said.

Each figure in the baseline and now (:class:`MetricDelta`, which says whether it
regressed), each case (:class:`CaseChange`: its figures and the relevant hits it
lost, gained or moved) and each suite (:class:`SuiteComparison`), and the run's
(:class:`Comparison`); the directions of the metrics; and the words and JSON data
of all of them (``recall 1.00 → 0.50 (−0.50)``, ``--compare-json``). What is
compared, and how, is :mod:`.compare`'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Protocol, Sequence


from ..workspace.manifests import HIGHER, LOWER, ManifestRegistry
from .significance import PairedComparison, describe, signed
from .scorer import RETRIEVED, label

#: A metric's direction for a comparison: HIGHER, LOWER or COUNTER.
COUNTER = "counter"
Direction = Callable[[str], str]

# Changes smaller than this are float noise, not changes.
EPSILON = 1e-9

BETTER = "better"
WORSE = "worse"
SAME = "same"

# How a suite of the run relates to the baseline.
COMPARED = "compared"
NEW = "new"
REMOVED = "removed"

def default_direction(metric: str) -> str:
    """The built-in metrics' directions: every rag figure is higher-is-better but
    the ``rag.retrieved`` counter."""
    return COUNTER if metric == RETRIEVED else HIGHER


def direction_from(registry: ManifestRegistry | None) -> Direction:
    """Directions from the manifests (counters as COUNTER); built-ins when unknown."""

    def direction(metric: str) -> str:
        info = registry.metric(metric) if registry is not None else None
        if info is None:
            return default_direction(metric)
        if info.counter:
            return COUNTER
        return LOWER if info.direction == LOWER else HIGHER

    return direction


# ---------------------------------------------------------------- what is compared


class MissLike(Protocol):
    """Why a value was missed: a :class:`~.scorer.Miss` or a :class:`MissFigures`."""

    value: str
    message: str


class AnswerLike(Protocol):
    """What a case's whole answer held: a :class:`~.scorer.AnswerRanks` or an
    :class:`AnswerFigures`."""

    hits: int
    ranks: Mapping[str, Sequence[int]]
    first_with_field: int | None


class CaseLike(Protocol):
    """What a comparison reads of a case: a :class:`~.runner.CaseResult` or a
    :class:`CaseFigures` read from a report."""

    id: str
    scores: dict[str, float] | None
    broken: str | None
    missed: Sequence[str]
    ranks: Mapping[str, int] | None
    why_missed: Sequence[MissLike]


def keyed(items: Iterable[Any]) -> dict[str, Any]:
    """Items by id; a repeated id gets ``#2``, ``#3`` ... so nothing is dropped."""
    found: dict[str, Any] = {}
    for item in items:
        key = item.id
        if key in found:
            number = 2
            while f"{item.id} #{number}" in found:
                number += 1
            key = f"{item.id} #{number}"
        found[key] = item
    return found


# ---------------------------------------------------------------- results


@dataclass(frozen=True, slots=True)
class MetricDelta:
    """One figure in the baseline and now."""

    metric: str
    baseline: float | None
    current: float | None
    direction: str = HIGHER
    # The cases scored on both sides, paired by id: how sure the move is.
    significance: PairedComparison | None = None

    @property
    def delta(self) -> float | None:
        if self.baseline is None or self.current is None:
            return None
        return self.current - self.baseline

    @property
    def change(self) -> str:
        """BETTER, WORSE or SAME (a counter, or a figure only one side has, is SAME
        here; see :meth:`regressed` for a figure that disappeared)."""
        delta = self.delta
        if delta is None or self.direction == COUNTER or abs(delta) <= EPSILON:
            return SAME
        if self.direction == LOWER:
            delta = -delta
        return BETTER if delta > 0 else WORSE

    def regressed(self, tolerance: float = 0.0, alpha: float | None = None) -> bool:
        """Whether this figure moved the wrong way by more than ``tolerance``, or
        the baseline had it and now there is none. With ``alpha``, a move counts
        only when its cases also moved the wrong way significantly at that level
        (a move of the mean its cases cannot tell from noise does not)."""
        if self.direction == COUNTER or self.baseline is None:
            return False
        if self.current is None:
            return True
        drop = self.baseline - self.current if self.direction != LOWER else self.current - self.baseline
        if drop <= tolerance + EPSILON:
            return False
        return alpha is None or self.significant_loss(alpha)

    def significant_loss(self, alpha: float) -> bool:
        """Whether the cases scored on both sides got worse, significantly at ``alpha``."""
        cases = self.significance
        if cases is None or cases.difference == 0.0:
            return False
        return cases.significant(alpha) and not cases.improved


@dataclass(frozen=True, slots=True)
class HitChange:
    """A relevant value whose rank changed: ``before``/``after`` are 1-based ranks
    within k, None where it did not come back (or the baseline does not say);
    ``why``: why it was missed on the side where it was (``rank 7, k = 5``), when
    that run said."""

    value: str
    before: int | None
    after: int | None
    why: str | None = None


@dataclass(frozen=True, slots=True)
class CaseChange:
    """One case in the baseline and now."""

    id: str
    change: str  # BETTER, WORSE or SAME
    baseline_scores: Mapping[str, float | None] | None
    scores: Mapping[str, float | None] | None
    # Every figure either side has, in report order.
    deltas: tuple[MetricDelta, ...] = ()
    # Why it has no figures now / had none in the baseline.
    broken: str | None = None
    baseline_broken: str | None = None
    # Relevant values that no longer came back (still expected), came back anew,
    # or came back at another rank.
    lost: tuple[HitChange, ...] = ()
    gained: tuple[HitChange, ...] = ()
    moved: tuple[HitChange, ...] = ()

    @property
    def changed(self) -> tuple[MetricDelta, ...]:
        """The figures that moved (counters included)."""
        return tuple(d for d in self.deltas if d.delta is not None and abs(d.delta) > EPSILON)

    def delta_of(self, metric: str) -> MetricDelta | None:
        for delta in self.deltas:
            if delta.metric == metric:
                return delta
        return None


@dataclass
class SuiteComparison:
    """One suite in the baseline and now."""

    id: str
    status: str  # COMPARED, NEW or REMOVED
    aggregates: tuple[MetricDelta, ...] = ()
    # k -> the means at that k, for the k both runs swept.
    at_k: dict[int, tuple[MetricDelta, ...]] = field(default_factory=dict)
    worse: list[CaseChange] = field(default_factory=list)
    better: list[CaseChange] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0
    # Why the suite has no figures now (it was not run), when that is so.
    error: str | None = None

    def regressions(self, tolerance: float = 0.0, alpha: float | None = None) -> list[MetricDelta]:
        return [delta for delta in self.aggregates if delta.regressed(tolerance, alpha)]


@dataclass
class Comparison:
    """A run against its baseline."""

    suites: list[SuiteComparison]
    tolerance: float = 0.0
    baseline: str = ""
    # A regression must also be significant at this level; None: any move beyond the tolerance.
    alpha: float | None = None

    def regressions(self) -> list[tuple[str, MetricDelta]]:
        """(suite id, figure) for each suite mean that regressed beyond the tolerance
        (and, with an ``alpha``, significantly)."""
        return [(suite.id, delta) for suite in self.suites for delta in suite.regressions(self.tolerance, self.alpha)]

    @property
    def regressed(self) -> bool:
        return bool(self.regressions())


# ---------------------------------------------------------------- words


def figure(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def vs_baseline(delta: MetricDelta | None) -> str:
    """``−0.50 vs baseline`` for a figure that moved; "" otherwise."""
    if delta is None or delta.delta is None or abs(delta.delta) <= EPSILON:
        return ""
    return f"{signed(delta.delta)} vs baseline"


def describe_hits(change: CaseChange, limit: int = 3, why_now: bool = True) -> str:
    """``lost docs/a.md (was rank 2, now rank 7, k = 5); src/b.ts moved from rank 1
    to 3; gained src/c.ts (rank 4, was rank 12, k = 10)``: each hit lost or gained
    with why it was missed on the side that missed it, when that run said
    (``why_now=False``: not for the hits lost, where the case's own result says it)."""
    parts: list[str] = []

    def listed(items: Sequence[HitChange], word: Callable[[HitChange], str]) -> None:
        for hit in items[:limit]:
            parts.append(word(hit))
        if len(items) > limit:
            parts.append(f"{len(items) - limit:,} more")

    def within(notes: list[str]) -> str:
        notes = [note for note in notes if note]
        return f" ({', '.join(notes)})" if notes else ""

    def lost(hit: HitChange) -> str:
        return f"lost {hit.value}" + within(
            [f"was rank {hit.before}" if hit.before else "", f"now {hit.why}" if why_now and hit.why else ""]
        )

    def gained(hit: HitChange) -> str:
        return f"gained {hit.value}" + within(
            [f"rank {hit.after}" if hit.after else "", f"was {hit.why}" if hit.why else ""]
        )

    listed(change.lost, lost)
    listed(change.moved, lambda hit: f"{hit.value} moved from rank {hit.before} to {hit.after}")
    listed(change.gained, gained)
    return "; ".join(parts)


def describe_change(change: CaseChange) -> str:
    """A changed case in one line: ``recall 1.00 → 0.50 (−0.50) · MRR 1.00 → 0.33
    (−0.67) — lost docs/approvals.md (was rank 1)``."""
    if change.broken is not None:
        head = f"now broken: {change.broken}"
    elif change.baseline_broken is not None:
        head = "scored again (was broken: " + change.baseline_broken + ")"
    else:
        head = side_by_side(change.changed)
    hits = describe_hits(change)
    return head + (f" — {hits}" if hits else "")


def side_by_side(deltas: Iterable[MetricDelta], between: str = "→", with_delta: bool = True) -> str:
    """Each figure but the counters, one side then the other: ``recall 1.00 → 0.50
    (−0.50) · MRR 1.00 → 0.33 (−0.67)``; ``between="vs"``, no delta: ``MRR 0.33 vs 0.50``."""
    return " · ".join(
        f"{label(delta.metric)} {figure(delta.baseline)} {between} {figure(delta.current)}"
        + (f" ({signed(delta.delta or 0.0)})" if with_delta else "")
        for delta in deltas
        if delta.direction != COUNTER
    )


def report_json(comparison: Comparison) -> dict[str, Any]:
    """The comparison as JSON data (``--compare-json``)."""

    def delta(item: MetricDelta) -> dict[str, Any]:
        return {
            "metric": item.metric,
            "baseline": item.baseline,
            "current": item.current,
            "delta": item.delta,
            "direction": item.direction,
            "regressed": item.regressed(comparison.tolerance, comparison.alpha),
            "paired": significance_json(item.significance),
        }

    def hit(item: HitChange) -> dict[str, Any]:
        return {"value": item.value, "from": item.before, "to": item.after, "why": item.why}

    def case(item: CaseChange) -> dict[str, Any]:
        return {
            "id": item.id,
            "baseline": item.baseline_scores,
            "current": item.scores,
            "deltas": {d.metric: d.delta for d in item.changed},
            "broken": item.broken,
            "baseline_broken": item.baseline_broken,
            "lost": [hit(h) for h in item.lost],
            "gained": [hit(h) for h in item.gained],
            "moved": [hit(h) for h in item.moved],
        }

    return {
        "baseline": comparison.baseline,
        "tolerance": comparison.tolerance,
        "significance": comparison.alpha,
        "regressed": comparison.regressed,
        "regressions": [{"suite": suite, **delta(item)} for suite, item in comparison.regressions()],
        "suites": [
            {
                "id": suite.id,
                "status": suite.status,
                "error": suite.error,
                "aggregates": [delta(item) for item in suite.aggregates],
                "at_k": {str(k): [delta(item) for item in items] for k, items in suite.at_k.items()},
                "worse": [case(item) for item in suite.worse],
                "better": [case(item) for item in suite.better],
                "added": suite.added,
                "removed": suite.removed,
                "unchanged": suite.unchanged,
            }
            for suite in comparison.suites
        ],
    }


def significance_json(item: PairedComparison | None) -> dict[str, Any] | None:
    """A paired comparison as JSON data: the difference over the cases both sides
    scored, its 95% interval, the p-value and the counts."""
    if item is None:
        return None
    return {
        "cases": item.cases,
        "difference": item.difference,
        "ci95": [item.low, item.high],
        "p": item.p_value,
        "exact": item.exact,
        "better": item.better,
        "worse": item.worse,
        "equal": item.equal,
    }


def describe_significance(delta: MetricDelta, alpha: float | None = None) -> str:
    """``+0.10 recall (95% CI −0.05 to +0.25, p = 0.37, 2 better, 1 worse): not
    distinguishable from noise on 10 cases``; "" for a counter or a figure no
    case has on both sides."""
    if delta.significance is None:
        return ""
    return describe(delta.significance, label(delta.metric), 0.05 if alpha is None else alpha)
