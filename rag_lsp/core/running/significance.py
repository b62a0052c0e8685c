"""How sure a paired comparison is: two sets of figures over the same cases.

Pure and small, on numpy only (SPEC §4, "Comparisons"). Given each case's figure
on side A and on side B (paired by case, in the same order), :func:`paired` gives

* the **difference** of the means, B − A (the mean of the per-case differences);
* a **95% confidence interval** of that difference: a paired bootstrap over cases
  (10,000 resamples, percentile method, fixed seed);
* a **two-sided p-value** from a paired randomization test over cases: under "the
  two sides are the same", each case's difference is as likely negated, so the
  observed mean is set among the means of every sign assignment: all 2^n of them
  when there are at most 20 cases, else 10,000 random ones (fixed seed);
* the counts of cases where B is **better**, **worse** or **equal**, by the
  metric's direction.

When the differences take few distinct values (recall over short expected
lists, MRR at a small k), both resamplings draw from the distinct values and how
often each occurs, not from the cases one by one: resampling n cases with
replacement is a multinomial draw over the distinct values, and flipping the
signs of the c cases that share a value moves the sum by that value times
(2 · Binomial(c, ½) − c). The distributions are exactly those of the
case-by-case procedures, while the work grows with the distinct differences,
not with the cases: 100,000 such cases cost what 100 do. Figures with many
distinct differences (a latency) are resampled case by case.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

# numpy is imported in the functions that compute: the language server loads this
# module with the run results it shows, and starts without numpy (its model and
# numeric libraries wait for a run).
if TYPE_CHECKING:
    import numpy as np

RESAMPLES = 10_000
CONFIDENCE = 0.95
# At most this many paired cases: every sign assignment is counted (2^20 sums).
EXACT_UP_TO = 20
# Fixed, so the same figures always give the same interval and p-value.
SEED = 20_240_601
# Differences within this of each other are one: float noise, not a move.
EPSILON = 1e-9
# Up to this many distinct differences, draws are made over the distinct values.
GROUPED_UP_TO = 1_000
# Resamples drawn at a time, so memory stays small with many distinct values.
_BLOCK_CELLS = 4_000_000


@dataclass(frozen=True, slots=True)
class PairedComparison:
    """A metric over the same cases on two sides: B − A with its uncertainty."""

    cases: int
    difference: float
    low: float
    high: float
    p_value: float
    better: int
    worse: int
    equal: int
    # Whether the p-value counts every sign assignment (at most 20 cases).
    exact: bool
    # Which way is better for this metric: it decides gain or loss.
    higher_is_better: bool = True

    @property
    def improved(self) -> bool:
        """Whether B's mean is better than A's, in the metric's sense of better."""
        return self.difference > 0 if self.higher_is_better else self.difference < 0

    def significant(self, alpha: float) -> bool:
        """Whether the difference is distinguishable from noise at level ``alpha``."""
        return self.p_value < alpha


def paired(
    side_a: Sequence[float],
    side_b: Sequence[float],
    *,
    higher_is_better: bool = True,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> PairedComparison:
    """B − A over cases paired by position, with its interval, p-value and counts.

    ``higher_is_better`` only decides which cases count as better or worse: the
    difference, interval and p-value are those of B − A either way."""
    import numpy as np
    a = np.asarray(side_a, dtype=np.float64)
    b = np.asarray(side_b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired figures need two lists of one length, not {a.shape} and {b.shape}")
    if a.size == 0:
        raise ValueError("a paired comparison needs at least one case on both sides")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("paired figures must be finite numbers")
    differences = b - a
    differences[np.abs(differences) <= EPSILON] = 0.0
    up = int((differences > 0).sum())
    down = int((differences < 0).sum())
    low, high = bootstrap_interval(differences, resamples=resamples, seed=seed)
    exact = differences.size <= EXACT_UP_TO
    p_value = sign_flip_p_value(differences, resamples=None if exact else resamples, seed=seed)
    return PairedComparison(
        cases=int(differences.size),
        difference=float(differences.mean()),
        low=low,
        high=high,
        p_value=p_value,
        better=up if higher_is_better else down,
        worse=down if higher_is_better else up,
        equal=int(differences.size) - up - down,
        exact=exact,
        higher_is_better=higher_is_better,
    )


def _distinct(differences: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct differences, in the order the cases first show them, and how
    many cases have each. That order (not sorted) makes the draws for B − A those
    for A − B with the signs turned: swapping the sides negates the interval."""
    import numpy as np
    values, first, counts = np.unique(differences, return_index=True, return_counts=True)
    order = np.argsort(first, kind="stable")
    return values[order], counts[order]


def _blocks(total: int, width: int) -> list[int]:
    """Sizes of the blocks ``total`` draws are made in, each about _BLOCK_CELLS cells."""
    size = max(1, _BLOCK_CELLS // max(1, width))
    return [min(size, total - start) for start in range(0, total, size)]


def bootstrap_interval(
    differences: np.ndarray, *, resamples: int = RESAMPLES, confidence: float = CONFIDENCE, seed: int = SEED
) -> tuple[float, float]:
    """The percentile interval of the mean difference over ``resamples`` bootstrap
    resamples of the cases (each n cases drawn with replacement)."""
    import numpy as np
    n = differences.size
    values, counts = _distinct(differences)
    if values.size == 1:
        return float(values[0]), float(values[0])
    rng = np.random.default_rng(seed)
    if values.size <= GROUPED_UP_TO:
        shares = counts / n
        means = np.concatenate(
            [rng.multinomial(n, shares, size=block) @ values / n for block in _blocks(resamples, values.size)]
        )
    else:
        means = np.concatenate(
            [differences[rng.integers(0, n, size=(block, n))].mean(axis=1) for block in _blocks(resamples, n)]
        )
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return float(low), float(high)


def sign_flip_p_value(differences: np.ndarray, *, resamples: int | None = None, seed: int = SEED) -> float:
    """The two-sided p-value of the mean difference under random signs: the share
    of sign assignments whose mean is at least as far from 0 as the observed one.

    ``resamples`` None: every assignment, exactly; else that many random ones,
    the observed assignment counted among them ((hits + 1) / (resamples + 1), so
    a sampled p-value is never 0)."""
    import numpy as np
    nonzero = differences[differences != 0.0]
    if nonzero.size == 0:
        return 1.0
    observed = abs(float(nonzero.sum()))
    # Sums that differ from the observed one only by rounding count as reaching it.
    reach = observed - max(EPSILON, 1e-12 * observed)
    if resamples is None:
        sums = _every_signed_sum(nonzero)
        return float(np.count_nonzero(np.abs(sums) >= reach) / sums.size)
    rng = np.random.default_rng(seed)
    reached = sum(
        int(np.count_nonzero(np.abs(sums) >= reach)) for sums in _random_signed_sums(nonzero, resamples, rng)
    )
    return (reached + 1) / (resamples + 1)


def _random_signed_sums(nonzero: np.ndarray, resamples: int, rng: np.random.Generator):
    """Blocks of sums of ``nonzero`` under random signs, ``resamples`` sums in all."""
    import numpy as np
    values, counts = _distinct(nonzero)
    if values.size <= GROUPED_UP_TO:
        for block in _blocks(resamples, values.size):
            # Of the c cases sharing a value, Binomial(c, ½) keep their sign.
            kept = rng.binomial(counts, 0.5, size=(block, values.size))
            yield (2 * kept - counts) @ values
        return
    total = float(nonzero.sum())
    for block in _blocks(resamples, nonzero.size):
        # One random bit per case: the cases whose bit is set keep their sign.
        bits = rng.integers(0, 256, size=(block, (nonzero.size + 7) // 8), dtype=np.uint8)
        kept = np.unpackbits(bits, axis=1, count=nonzero.size)
        yield 2.0 * (kept @ nonzero) - total


def _every_signed_sum(values: np.ndarray) -> np.ndarray:
    """The sum of ``values`` under each of the 2^n assignments of signs."""
    import numpy as np
    sums = np.zeros(1)
    for value in values:
        sums = np.concatenate([sums + value, sums - value])
    return sums


# ---------------------------------------------------------------- words


def signed(value: float) -> str:
    """``+0.10`` / ``−0.05`` (a real minus sign) / ``±0.00``."""
    if abs(value) < 0.005:
        return "±0.00"
    return f"+{value:.2f}" if value > 0 else f"−{-value:.2f}"


def p_text(p_value: float) -> str:
    """``p = 0.37``; ``p < 0.001`` below that, where two decimals would say 0."""
    if p_value < 0.001:
        return "p < 0.001"
    if p_value < 0.01:
        return f"p = {p_value:.3f}"
    return f"p = {p_value:.2f}"


def verdict(comparison: PairedComparison, alpha: float = 0.05) -> str:
    """``a real gain``, ``a real loss`` (significant at ``alpha``, in the metric's
    own sense of better) or ``not distinguishable from noise``."""
    if not comparison.significant(alpha) or comparison.difference == 0.0:
        return "not distinguishable from noise"
    return "a real gain" if comparison.improved else "a real loss"


def describe(comparison: PairedComparison, name: str, alpha: float = 0.05) -> str:
    """``+0.10 recall (95% CI −0.05 to +0.25, p = 0.37, 2 better, 1 worse): not
    distinguishable from noise on 10 cases``."""
    cases = f"{comparison.cases:,} case" + ("" if comparison.cases == 1 else "s")
    if comparison.better == comparison.worse == 0:
        return f"±0.00 {name}: the same on all {cases}" if comparison.cases > 1 else f"±0.00 {name}: the same on the one case"
    return (
        f"{signed(comparison.difference)} {name} (95% CI {signed(comparison.low)} to "
        f"{signed(comparison.high)}, {p_text(comparison.p_value)}, {comparison.better:,} better, "
        f"{comparison.worse:,} worse): {verdict(comparison, alpha)} on {cases}"
    )


__all__ = [
    "CONFIDENCE",
    "EXACT_UP_TO",
    "RESAMPLES",
    "SEED",
    "PairedComparison",
    "bootstrap_interval",
    "describe",
    "paired",
    "p_text",
    "sign_flip_p_value",
    "signed",
    "verdict",
]
