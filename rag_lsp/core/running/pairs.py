"""Two suites over one dataset, compared case by case: which choice is better, and how sure.

Pure: two suite results in (a :class:`~.runner.SuiteResult` or a report's
:class:`~.report.SuiteFigures`), one :class:`PairComparison` out. Side A is the
reference and side B the choice being weighed, as a baseline and a run are: each
difference is B − A. Cases are paired by id; only the cases both sides scored
count.

* **Metrics**: each suite mean of A beside B's, with the paired comparison of
  their cases (:mod:`.significance`): difference, 95% interval, p-value, and the
  cases where B is better, worse or equal.
* **Wins**: the cases where one side is better on some figure and worse on none,
  each with the relevant values whose rank differs (``docs/a.md`` rank 1 vs 4);
  cases better on one figure and worse on another are *mixed*.
* **Both miss**: the relevant values neither side found within its k, by case:
  what no chunking choice fixes.
* **Unpaired**: the cases one side (or both) has no figures for (broken, or the
  target failed), with why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from .compare import compare_case, compare_figures, with_significance
from .comparison import (
    BETTER,
    COUNTER,
    WORSE,
    CaseChange,
    CaseLike,
    Direction,
    HitChange,
    MetricDelta,
    default_direction,
    keyed,
)

A_WINS = "a"
B_WINS = "b"
MIXED = "mixed"


@dataclass(frozen=True, slots=True)
class CaseWin:
    """A case where the two sides' figures differ: who wins it, and how."""

    id: str
    winner: str  # A_WINS, B_WINS or MIXED
    # The figures that differ, A as the baseline and B as now.
    deltas: tuple[MetricDelta, ...]
    # The relevant values whose rank differs: ``before`` on A, ``after`` on B
    # (None where that side did not find it within its k).
    ranks: tuple[HitChange, ...]


@dataclass(frozen=True, slots=True)
class BothMiss:
    """A case and the relevant values neither side found."""

    id: str
    values: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Unpaired:
    """A case one side has no figures for, with why (None: that side scored it)."""

    id: str
    a_broken: str | None
    b_broken: str | None


@dataclass
class PairComparison:
    """Suite B against suite A over the same cases."""

    a: str
    b: str
    dataset: str | None
    metrics: tuple[MetricDelta, ...] = ()
    # How many cases both sides scored.
    paired: int = 0
    wins: list[CaseWin] = field(default_factory=list)
    both_miss: list[BothMiss] = field(default_factory=list)
    unpaired: list[Unpaired] = field(default_factory=list)

    def won_by(self, winner: str) -> list[CaseWin]:
        return [win for win in self.wins if win.winner == winner]


def compare_pair(a: Any, b: Any, direction: Direction = default_direction, dataset: str | None = None) -> PairComparison:
    """Suite ``b`` against suite ``a`` (two results over one dataset), case by case."""
    cases_a = keyed(a.cases)
    cases_b = keyed(b.cases)
    result = PairComparison(a.id, b.id, dataset)
    result.metrics = with_significance(compare_figures(a.aggregates, b.aggregates, direction), cases_a, cases_b)
    for key in list(cases_a) + [key for key in cases_b if key not in cases_a]:
        case_a = cases_a.get(key)
        case_b = cases_b.get(key)
        if case_a is None or case_b is None or case_a.scores is None or case_b.scores is None:
            result.unpaired.append(Unpaired(key, _why_unscored(case_a), _why_unscored(case_b)))
            continue
        result.paired += 1
        change = compare_case(case_a, case_b, direction)
        win = _case_win(key, change)
        if win is not None:
            result.wins.append(win)
        missed = _both_missed(case_a, case_b)
        if missed:
            result.both_miss.append(BothMiss(key, missed))
    return result


def _why_unscored(case: CaseLike | None) -> str | None:
    """Why a side has no figures for a case; None when it scored it."""
    if case is None:
        return "not in this suite's run"
    if case.scores is None:
        return case.broken or "no figures"
    return None


def _case_win(key: str, change: CaseChange) -> CaseWin | None:
    """Who wins a case both sides scored; None when no figure differs."""
    moved = [delta for delta in change.changed if delta.direction != COUNTER]
    moves = {delta.change for delta in moved}
    ranks = tuple(sorted(change.lost + change.gained + change.moved, key=_rank_order))
    if moves == {BETTER}:
        return CaseWin(key, B_WINS, tuple(moved), ranks)
    if moves == {WORSE}:
        return CaseWin(key, A_WINS, tuple(moved), ranks)
    if BETTER in moves and WORSE in moves:
        return CaseWin(key, MIXED, tuple(moved), ranks)
    return None


def _rank_order(hit: HitChange) -> tuple[int, str]:
    """The value found highest on either side first."""
    found = [rank for rank in (hit.before, hit.after) if rank is not None]
    return (min(found, default=1 << 30), hit.value)


def _both_missed(case_a: CaseLike, case_b: CaseLike) -> tuple[str, ...]:
    """The relevant values both sides missed, in A's order."""
    missed_b = set(case_b.missed)
    return tuple(value for value in case_a.missed if value in missed_b)


def rank_text(hit: HitChange) -> str:
    """``docs/a.md rank 1 vs 4``; a side that missed it says ``missed``."""
    before = f"rank {hit.before}" if hit.before is not None else "missed"
    after = str(hit.after) if hit.before is not None and hit.after is not None else (
        f"rank {hit.after}" if hit.after is not None else "missed"
    )
    return f"{hit.value} {before} vs {after}"


def ranks_text(win: CaseWin, limit: int = 3) -> str:
    """The values of a case whose rank differs: ``docs/a.md rank 1 vs 4; src/b.ts missed vs rank 2``."""
    shown = [rank_text(hit) for hit in win.ranks[:limit]]
    if len(win.ranks) > limit:
        shown.append(f"{len(win.ranks) - limit:,} more")
    return "; ".join(shown)


def same_dataset_pairs(results: Sequence[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """Each two results of one run (``(dataset key, result)`` in run order) that
    read the same dataset and both ran, in run order."""
    pairs: list[tuple[Any, Any]] = []
    for index, (dataset, first) in enumerate(results):
        for other, second in results[index + 1 :]:
            if dataset is not None and other == dataset:
                pairs.append((first, second))
    return pairs
