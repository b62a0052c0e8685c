"""The paired comparison of two sides over the same cases: its interval, p-value and counts
agree with scipy.stats, and hold their properties on random figures."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from rag_lsp.core.running.significance import (
    RESAMPLES,
    bootstrap_interval,
    describe,
    paired,
    sign_flip_p_value,
)

# Slow: exact permutations and resamples checked against scipy's.
pytestmark = pytest.mark.slow


def mean_difference(b, a, axis=-1):
    return np.mean(b - a, axis=axis)


def scipy_p_value(a: np.ndarray, b: np.ndarray, resamples: float) -> float:
    """scipy's two-sided paired permutation p-value of the mean difference B − A."""
    result = stats.permutation_test(
        (b, a),
        mean_difference,
        permutation_type="samples",
        vectorized=True,
        n_resamples=resamples,
        alternative="two-sided",
        random_state=7,
    )
    return float(result.pvalue)


def scipy_interval(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """scipy's paired percentile bootstrap interval of the mean difference B − A."""
    result = stats.bootstrap(
        (b, a),
        mean_difference,
        paired=True,
        vectorized=True,
        method="percentile",
        n_resamples=RESAMPLES,
        random_state=7,
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def recall_like(rng: np.random.Generator, n: int, shift: float) -> tuple[np.ndarray, np.ndarray]:
    """Two sides of figures in steps of a quarter, B moved by about ``shift``."""
    a = rng.choice([0.0, 0.25, 0.5, 0.75, 1.0], size=n)
    b = np.clip(a + rng.choice([-0.25, 0.0, 0.0, 0.25], size=n) + shift, 0.0, 1.0)
    return a, b


# scipy takes seconds to count 2^20 assignments: 20 cases on two seeds only.
@pytest.mark.parametrize(("n", "seed"), [(n, seed) for n in (2, 5, 9, 14, 17) for seed in range(5)] + [(20, 0), (20, 1)])
def test_the_exact_p_value_equals_scipys_exact_permutation_test(n: int, seed: int) -> None:
    """Up to 20 cases every sign assignment is counted: the p-value is scipy's exact one (within 0.005)."""
    a, b = recall_like(np.random.default_rng(seed), n, shift=0.1 * (seed % 3))
    ours = paired(a, b)
    assert ours.exact
    assert ours.p_value == pytest.approx(scipy_p_value(a, b, np.inf), abs=0.005)


@pytest.mark.parametrize("n", [21, 60, 400])
@pytest.mark.parametrize("seed", range(3))
def test_the_sampled_p_value_agrees_with_scipys_within_monte_carlo_error(n: int, seed: int) -> None:
    """Past 20 cases 10,000 random sign flips are drawn: scipy's p-value is within Monte Carlo error."""
    a, b = recall_like(np.random.default_rng(100 + seed), n, shift=0.03 * seed)
    ours = paired(a, b)
    theirs = scipy_p_value(a, b, RESAMPLES)
    assert not ours.exact
    # Two independent estimates of one p: their difference has a standard error of
    # at most sqrt(2 * 0.25 / 10,000) = 0.0071; four of them.
    assert ours.p_value == pytest.approx(theirs, abs=0.03)


def test_many_distinct_differences_are_resampled_case_by_case_and_still_agree() -> None:
    """Figures of many distinct values (a latency) take the case-by-case path, with the same answers as scipy."""
    rng = np.random.default_rng(3)
    a = rng.normal(100.0, 10.0, size=1_500)
    b = a + rng.normal(0.5, 5.0, size=1_500)
    ours = paired(a, b, higher_is_better=False)
    assert ours.p_value == pytest.approx(scipy_p_value(a, b, RESAMPLES), abs=0.03)
    low, high = scipy_interval(a, b)
    width = high - low
    assert ours.low == pytest.approx(low, abs=0.05 * width)
    assert ours.high == pytest.approx(high, abs=0.05 * width)


@pytest.mark.parametrize(("n", "seed"), [(8, 0), (15, 1), (30, 2), (200, 3), (2_000, 4)])
def test_the_interval_agrees_with_scipys_paired_percentile_bootstrap(n: int, seed: int) -> None:
    """The 95% interval is scipy's paired percentile bootstrap within Monte Carlo error (5% of its width)."""
    a, b = recall_like(np.random.default_rng(seed), n, shift=0.05)
    ours = paired(a, b)
    low, high = scipy_interval(a, b)
    width = max(high - low, 1e-9)
    # The quantiles of discrete resampled means sit on a grid: one step of it too.
    step = 0.25 / n
    assert ours.low == pytest.approx(low, abs=0.05 * width + step)
    assert ours.high == pytest.approx(high, abs=0.05 * width + step)


def test_counts_follow_the_metrics_direction() -> None:
    """Better and worse are counted in the metric's sense; equal cases are those that did not move."""
    a = [1.0, 0.5, 0.5, 0.0]
    b = [0.5, 1.0, 0.5, 0.5]
    higher = paired(a, b)
    assert (higher.better, higher.worse, higher.equal) == (2, 1, 1)
    lower = paired(a, b, higher_is_better=False)
    assert (lower.better, lower.worse, lower.equal) == (1, 2, 1)
    assert higher.difference == pytest.approx(0.125)


def test_the_same_figures_always_give_the_same_answer() -> None:
    """The seed is fixed: a comparison computed twice is the same to the last digit."""
    a, b = recall_like(np.random.default_rng(9), 300, shift=0.02)
    assert paired(a, b) == paired(a, b)


def test_identical_sides_are_noise_with_p_one() -> None:
    """Two sides with the same figures differ by 0, with an interval of 0 and p = 1."""
    comparison = paired([0.5, 1.0, 0.0], [0.5, 1.0, 0.0])
    assert (comparison.difference, comparison.low, comparison.high, comparison.p_value) == (0.0, 0.0, 0.0, 1.0)
    assert describe(comparison, "recall") == "±0.00 recall: the same on all 3 cases"


def test_the_words_a_team_reads() -> None:
    """The sentence gives the move, its interval, p, the counts and what it amounts to."""
    noise = paired([0.5, 1.0, 0.5, 1.0, 0.5, 1.0, 0.5, 1.0, 1.0, 0.0], [1.0, 1.0, 0.5, 1.0, 1.0, 0.5, 0.5, 1.0, 1.0, 0.0])
    assert describe(noise, "recall") == (
        "+0.05 recall (95% CI −0.10 to +0.20, p = 1.00, 2 better, 1 worse): not distinguishable from noise on 10 cases"
    )
    gain = paired([0.0] * 12, [1.0] * 12)
    assert describe(gain, "recall").endswith("p < 0.001, 12 better, 0 worse): a real gain on 12 cases")
    loss = paired([0.0] * 12, [1.0] * 12, higher_is_better=False)
    assert describe(loss, "latency").endswith(": a real loss on 12 cases")


@pytest.mark.parametrize(
    ("a", "b", "message"),
    [
        ([], [], "at least one case"),
        ([1.0], [1.0, 2.0], "one length"),
        ([float("nan")], [1.0], "finite"),
    ],
)
def test_figures_that_cannot_be_paired_are_refused(a, b, message: str) -> None:
    """No cases, sides of different lengths or a figure that is not a number raise ValueError saying which."""
    with pytest.raises(ValueError, match=message):
        paired(a, b)


figures = st.lists(st.sampled_from([0.0, 0.25, 1 / 3, 0.5, 2 / 3, 1.0]), min_size=1, max_size=40)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_properties_of_any_paired_comparison(data) -> None:
    """p lies in (0, 1], the counts add up, the interval is ordered and holds the difference,
    and swapping the sides negates the difference and its interval, keeps p and swaps better and worse."""
    a = data.draw(figures)
    b = data.draw(st.lists(st.sampled_from([0.0, 0.25, 1 / 3, 0.5, 2 / 3, 1.0]), min_size=len(a), max_size=len(a)))
    forward = paired(a, b)
    backward = paired(b, a)
    assert 0.0 < forward.p_value <= 1.0
    assert forward.better + forward.worse + forward.equal == forward.cases == len(a)
    assert forward.low <= forward.difference + 1e-9
    assert forward.difference <= forward.high + 1e-9
    assert backward.difference == pytest.approx(-forward.difference, abs=1e-12)
    assert backward.p_value == pytest.approx(forward.p_value, abs=1e-12)
    assert (backward.better, backward.worse, backward.equal) == (forward.worse, forward.better, forward.equal)
    # The bootstrap draws the same cases for both; only the signs differ.
    assert backward.low == pytest.approx(-forward.high, abs=1e-9)
    assert backward.high == pytest.approx(-forward.low, abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-1.0, 1.0), min_size=1, max_size=12))
def test_the_exact_p_value_is_the_share_of_sign_assignments_as_extreme(differences: list[float]) -> None:
    """Counted by hand over every assignment of signs, the share as far from 0 as observed is the p-value."""
    values = np.array(differences)
    values[np.abs(values) <= 1e-9] = 0.0
    observed = abs(values.sum())
    signs = np.array(np.meshgrid(*[[1.0, -1.0]] * len(values))).reshape(len(values), -1).T
    sums = np.abs(signs @ values)
    expected = np.mean(sums >= observed - max(1e-9, 1e-12 * observed))
    assert sign_flip_p_value(values) == pytest.approx(expected, abs=1e-12)


def test_an_interval_of_one_value_is_that_value() -> None:
    """Every case moved by the same amount: the interval is that amount, on both ends."""
    assert bootstrap_interval(np.full(7, 0.25)) == (0.25, 0.25)


def test_comparing_never_imports_scipy() -> None:
    """scipy is a test dependency only: the comparison modules and their formats load without it."""
    code = (
        "import sys\n"
        "import rag_lsp.core.running.significance, rag_lsp.core.running.pairs, rag_lsp.core.running.compare\n"
        "import rag_lsp.cli.compare, rag_lsp.cli.pair_formats, rag_lsp.cli.compare_formats\n"
        "print(sorted(name for name in sys.modules if name.split('.')[0] == 'scipy'))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
