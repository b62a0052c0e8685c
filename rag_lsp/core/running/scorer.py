"""The scorer: the figures of the ``rag`` engine, and a suite's verdict.

Pure functions, no I/O. A rag case is scored from three things: the values it
declares relevant (``expect.relevant``), the value of the suite's ``match`` field
on each hit, in rank order, and the mode the target answered in. Taking the
field's values rather than the hits keeps the scorer indifferent to how a target
shapes its hits, and makes "the hit has no such field" a plain ``None``.

* considered ``C`` = the first ``k`` hits (all when ``k`` is unset);
  ``rag.retrieved`` = |C|, a counter;
* ``rag.recall`` = share of the distinct expected values some hit in C carries;
* ``rag.precision`` = share of the hits in C whose value is expected (0 when C is
  empty): the share of returned hits that were declared, not P@k;
* ``rag.mrr`` = 1 / rank of the first relevant hit in C, 0 when none;
* ``rag.hit@1`` = 1 when the first hit is relevant;
* ``rag.mode.semantic`` = 1 when the target answered ``"mode": "semantic"``.

Matching is exact string equality on that one field. A case that declares
nothing relevant, or whose considered hits carry none of the field, is *broken*:
it gets no figures, says why, and fails its suite as broken, rather than
reporting a recall of zero that would blame the retrieval for a mistake in the
suite.

Beside the figures, a case keeps what the whole answer held (:class:`AnswerRanks`:
every rank at which each expected value came back, before the cut at k), so that
it can be read again at any k, and says why each missed value was missed
(:class:`Miss`): it came back below the cut, it did not come back at all, or it
is not a file of the workspace the target searches.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, Callable, Collection, Iterable, Mapping, Sequence

from ..workspace.expected import BELOW_K, NEVER_SEARCHED, NOT_IN_WORKSPACE, NOT_RETURNED
from ..workspace.manifests import HIGHER, LOWER, ManifestRegistry

RECALL = "rag.recall"
PRECISION = "rag.precision"
MRR = "rag.mrr"
HIT_AT_1 = "rag.hit@1"
RETRIEVED = "rag.retrieved"
SEMANTIC = "rag.mode.semantic"

#: The figures of a scored rag case, in the order they are reported.
RAG_METRICS = (RECALL, PRECISION, MRR, HIT_AT_1, RETRIEVED, SEMANTIC)

#: The short name every report gives a metric ("recall 0.50 · MRR 0.33"), the
#: rag figures and the Hit@K metric's (``rag.hit_at_k``, whose module is not
#: imported here); any other metric is shown by its full name.
LABELS = {
    RECALL: "recall",
    PRECISION: "precision",
    MRR: "MRR",
    HIT_AT_1: "hit@1",
    RETRIEVED: "retrieved",
    SEMANTIC: "semantic",
    "rag.hit_at_k": "hit@k",
}


def label(metric: str) -> str:
    """The short name reports give ``metric`` (see LABELS)."""
    return LABELS.get(metric, metric)

SEMANTIC_MODE = "semantic"

#: Why a case is broken (``Broken.kind``).
NOTHING_RELEVANT = "nothing-relevant"
NO_MATCH_FIELD = "no-match-field"


# Means are sums of floats: 0.1 + 0.2 + ... may land a hair under a threshold it
# meets on paper. A threshold holds within this tolerance.
TOLERANCE = 1e-9


@dataclass(frozen=True, slots=True)
class Broken:
    """Why a case has no figures: ``kind`` is stable, ``message`` is for people."""

    kind: str
    message: str

    def __str__(self) -> str:
        return self.message


# Not frozen, as are the others built once per case: a frozen dataclass sets
# each field through object.__setattr__.
@dataclass(slots=True)
class Miss:
    """Why one expected value is missed: ``reason`` is stable (BELOW_K,
    NOT_RETURNED, NOT_IN_WORKSPACE, NEVER_SEARCHED), ``rank`` is the first rank at which it came
    back past the cut (BELOW_K only), ``message`` says it for people
    (``rank 4, k = 3``). ``str()`` gives the value with it: ``b.md (rank 4, k = 3)``.

    Its fields are what ``rag-lsp run --format json`` writes for it.
    """

    value: str
    reason: str
    rank: int | None
    message: str

    def __str__(self) -> str:
        return f"{self.value} ({self.message})"


@dataclass(slots=True)
class AnswerRanks:
    """What the target's whole answer held for a case, before the cut at k: how
    many hits it returned, each distinct expected value (in declaration order)
    with every 1-based rank at which a hit carries it (empty when none does),
    and the rank of the first hit that carries the ``match`` field (None when
    none does). Enough to score the case again at any k (:func:`figures_from_answer`).

    Its fields are what ``rag-lsp run --format json`` writes for it.
    """

    hits: int
    ranks: dict[str, list[int]]
    first_with_field: int | None


@dataclass(slots=True)
class CaseScore:
    """The result of one rag case: its figures, or why it has none."""

    # Metric name -> value (see RAG_METRICS), or None when the case is broken.
    scores: dict[str, float] | None
    broken: Broken | None
    # Expected values no considered hit carries, in declaration order.
    missed: tuple[str, ...]
    # 1-based rank of the first relevant hit within the first k, or None.
    first_relevant_rank: int | None
    # 1-based ranks of every relevant hit within the first k (for hover).
    relevant_ranks: tuple[int, ...] = ()
    # Distinct expected values that came back, and how many were declared.
    found: int = 0
    expected: int = 0
    # Each expected value that came back -> the 1-based rank of the first hit
    # within the first k that carries it, in rank order (None when broken).
    ranks: dict[str, int] | None = None
    # What the whole answer held (None when nothing relevant was declared), the
    # ranks of every relevant hit in it (ascending), and why each missed value
    # was missed (in the order of ``missed``).
    answer: AnswerRanks | None = None
    answer_relevant_ranks: list[int] | None = None
    why_missed: tuple[Miss, ...] = ()

    @property
    def scored(self) -> bool:
        return self.scores is not None


def match_values(hits: Iterable[Any], match: str) -> list[str | None]:
    """The ``match`` field of each hit (mappings or objects), None where absent."""
    values: list[str | None] = []
    for hit in hits:
        value = hit.get(match) if isinstance(hit, Mapping) else getattr(hit, match, None)
        values.append(value if isinstance(value, str) else None)
    return values


def score_case(
    expected: Sequence[str],
    values: Sequence[str | None],
    mode: str | None,
    match: str = "path",
    k: int | None = None,
    unreachable: Callable[[str], tuple[str, str] | None] | None = None,
) -> CaseScore:
    """Score one rag case.

    ``expected`` are the declared relevant values (duplicates count once),
    ``values`` the ``match`` field of each hit in rank order (None where a hit has
    no such field), ``mode`` the target's reported mode, ``k`` the number of hits
    considered (all when None). ``unreachable``, when given, says why an expected
    value names nothing the target can return (a path that is not a file of the
    workspace it searches, or one the builtin target never searches), as a Miss
    reason and message, or None: a missed value it answers for is missed for that reason.
    """
    wanted = set(expected)
    if not wanted:
        return CaseScore(None, _NOTHING_RELEVANT, (), None)
    returned = len(values)
    cut = returned if k is None or returned <= k else k
    semantic = 1.0 if mode == SEMANTIC_MODE else 0.0
    distinct = expected if len(expected) == len(wanted) else tuple(dict.fromkeys(expected))
    every: dict[str, list[int]] = {value: [] for value in distinct}
    with_field = 1 if returned and values[0] is not None else _first_with_field(values)
    if wanted.isdisjoint(values):
        # Nothing relevant came back at all (the common case of a bad retrieval,
        # and the cheap one). None (a hit without the field) is never in `wanted`.
        answer = AnswerRanks(returned, every, with_field)
        considered = values if cut == returned else values[:cut]
        if cut and considered.count(None) == cut:
            return CaseScore(None, _no_match_field(match, cut), (), None, answer=answer, answer_relevant_ranks=[])
        missed = tuple(distinct)
        scores = {RECALL: 0.0, PRECISION: 0.0, MRR: 0.0, HIT_AT_1: 0.0, RETRIEVED: float(cut), SEMANTIC: semantic}
        return CaseScore(
            scores, None, missed, None, (), 0, len(wanted), {}, answer, [], why_missed(missed, answer, k, unreachable)
        )
    # The ranks of every relevant hit of the answer, and those within the first k;
    # each value found within k, at the rank of its first hit (a value may come
    # back twice).
    everywhere = [rank for rank, value in enumerate(values, 1) if value in wanted]
    found: dict[str, int] = {}
    for rank in everywhere:
        value = values[rank - 1]
        seen = every[value]  # type: ignore[index]
        if not seen and rank <= cut:
            found[value] = rank  # type: ignore[index]
        seen.append(rank)
    answer = AnswerRanks(returned, every, with_field)
    ranks = everywhere if everywhere[-1] <= cut else everywhere[: bisect_right(everywhere, cut)]
    if not ranks:
        # Relevant hits came back, all of them past the cut.
        considered = values[:cut]
        if cut and considered.count(None) == cut:
            return CaseScore(None, _no_match_field(match, cut), (), None, answer=answer, answer_relevant_ranks=everywhere)
        missed = tuple(distinct)
        scores = {RECALL: 0.0, PRECISION: 0.0, MRR: 0.0, HIT_AT_1: 0.0, RETRIEVED: float(cut), SEMANTIC: semantic}
        return CaseScore(
            scores, None, missed, None, (), 0, len(wanted), {}, answer, everywhere, why_missed(missed, answer, k, unreachable)
        )
    first = ranks[0]
    if len(found) == len(wanted):
        missed = ()
        misses: tuple[Miss, ...] = ()
    else:
        missed = tuple([value for value in distinct if value not in found])
        misses = why_missed(missed, answer, k, unreachable)
    scores = {
        RECALL: len(found) / len(wanted),
        PRECISION: len(ranks) / cut,
        MRR: 1.0 / first,
        HIT_AT_1: 1.0 if first == 1 else 0.0,
        RETRIEVED: float(cut),
        SEMANTIC: semantic,
    }
    return CaseScore(
        scores, None, missed, first, tuple(ranks), len(found), len(wanted), found, answer, everywhere, misses
    )


def _first_with_field(values: Sequence[str | None]) -> int | None:
    """The 1-based rank of the first hit that carries the field, None when none does."""
    for rank, value in enumerate(values, 1):
        if value is not None:
            return rank
    return None


def why_missed(
    missed: Sequence[str], answer: AnswerRanks, k: int | None, unreachable: Callable[[str], tuple[str, str] | None] | None = None
) -> tuple[Miss, ...]:
    """Why each of ``missed`` was missed, from the whole answer: it came back past
    the cut (at which rank), it names nothing the target can return (what
    ``unreachable`` says: not a file of the workspace the target searches, or
    one the builtin target never searches), or the target did not return it."""
    misses = []
    for value in missed:
        ranks = answer.ranks.get(value)
        if ranks:
            misses.append(Miss(value, BELOW_K, ranks[0], f"rank {ranks[0]}, k = {k}"))
        elif unreachable is not None and (why := unreachable(value)) is not None:
            misses.append(Miss(value, why[0], None, why[1]))
        else:
            misses.append(Miss(value, NOT_RETURNED, None, _not_returned(answer.hits)))
    return tuple(misses)


def _not_returned(hits: int) -> str:
    message = _NOT_RETURNED.get(hits)
    if message is None:
        if hits == 0:
            message = "the target returned no hits"
        elif hits == 1:
            message = "not the one hit the target returned"
        else:
            message = f"not among the {hits:,} hits the target returned"
        if len(_NOT_RETURNED) < 1000:
            _NOT_RETURNED[hits] = message
    return message


# The messages by number of hits: a run's answers mostly have the same number.
_NOT_RETURNED: dict[int, str] = {}


def score_case_at(
    expected: Sequence[str],
    values: Sequence[str | None],
    mode: str | None,
    ks: Sequence[int],
    match: str = "path",
) -> dict[int, dict[str, float] | None]:
    """The figures of one rag case at each of ``ks`` (ascending, distinct, >= 1),
    from one list of hits: ``{k: scores, or None where the case is broken at k}``.

    Each entry equals ``score_case(expected, values, mode, match, k).scores``
    exactly: the case is scored once at the largest k, and each smaller k counts
    the relevant hits at or above it (:func:`figures_at_ks`). A case can be broken
    at a small k and scored at a larger one (its first hits carry no ``match``
    field, a later one does).
    """
    full = score_case(expected, values, mode, match, ks[-1])
    if full.scores is None:
        # Broken at the largest k (nothing declared, or none of its hits carries
        # the field): so at every smaller k.
        return dict.fromkeys(ks)
    return figures_at_ks(
        full.relevant_ranks,
        tuple(full.ranks.values()) if full.ranks else (),
        int(full.scores[RETRIEVED]),
        full.expected,
        full.scores[SEMANTIC],
        carries_from(values),
        ks,
    )


def carries_from(values: Sequence[str | None]) -> int:
    """The 1-based rank of the first hit that carries the field (1 when the first
    does, or there are no hits; past the end when none does)."""
    if not values or values[0] is not None:
        return 1
    for rank, value in enumerate(values, 1):
        if value is not None:
            return rank
    return len(values) + 1


def figures_at_ks(
    relevant_ranks: Sequence[int],
    first_ranks: Sequence[int],
    retrieved: int,
    expected: int,
    semantic: float,
    field_from: int,
    ks: Sequence[int],
) -> dict[int, dict[str, float] | None]:
    """A scored case's figures at each k of ``ks``, from its result at a k at least
    as large as every one of them: the ranks of its relevant hits, the rank of the
    first hit of each distinct value found (both ascending), how many hits were
    considered, how many distinct values were declared, its mode figure, and the
    rank of the first hit that carries the ``match`` field.

    The arithmetic is :func:`score_case`'s on the same counts, so each figure
    equals a run at that k exactly.
    """
    at: dict[int, dict[str, float] | None] = {}
    first = relevant_ranks[0] if relevant_ranks else None
    for k in ks:
        considered = retrieved if retrieved < k else k
        if first is None or first > k:
            # No relevant hit within k: broken when none of those hits carries
            # the field, else zeros.
            if considered and field_from > k:
                at[k] = None
            else:
                at[k] = {RECALL: 0.0, PRECISION: 0.0, MRR: 0.0, HIT_AT_1: 0.0, RETRIEVED: float(considered), SEMANTIC: semantic}
            continue
        at[k] = {
            RECALL: bisect_right(first_ranks, k) / expected,
            PRECISION: bisect_right(relevant_ranks, k) / considered,
            MRR: 1.0 / first,
            HIT_AT_1: 1.0 if first == 1 else 0.0,
            RETRIEVED: float(considered),
            SEMANTIC: semantic,
        }
    return at


def figures_from_answer(
    ranks: Mapping[str, Sequence[int]], hits: int, first_with_field: int | None, semantic: float, ks: Sequence[int]
) -> dict[int, dict[str, float] | None]:
    """A case's figures at each k of ``ks`` from what its target's whole answer
    held (:class:`AnswerRanks`: every rank of each distinct expected value, the
    number of hits, the rank of the first hit carrying the ``match`` field) and
    its mode figure: exactly :func:`score_case`'s figures at each k, whatever k
    the answer was first scored at."""
    pattern = answer_pattern(ranks, hits, first_with_field, semantic)
    return dict.fromkeys(ks) if pattern is None else figures_at_ks(*pattern, ks)


def answer_pattern(
    ranks: Mapping[str, Sequence[int]],
    hits: int,
    first_with_field: int | None,
    semantic: float,
    relevant: Sequence[int] | None = None,
) -> tuple[tuple[int, ...], tuple[int, ...], int, int, float, int] | None:
    """The arguments of :func:`figures_at_ks` (but ``ks``) for a whole answer, as
    a hashable key (cases with the same key have the same figures at every k);
    None when the case has figures at no k: nothing declared, or hits none of
    which carries the field. ``relevant``: the ranks of every relevant hit
    (ascending), when known."""
    if not ranks or (hits and first_with_field is None):
        return None
    if relevant is None:
        relevant = sorted([rank for found in ranks.values() for rank in found])
    firsts = sorted([found[0] for found in ranks.values() if found])
    return (tuple(relevant), tuple(firsts), hits, len(ranks), semantic, first_with_field or 1)


_NOTHING_RELEVANT = Broken(NOTHING_RELEVANT, "nothing relevant declared: expect.relevant is empty, so there is nothing to count")


def _no_match_field(match: str, retrieved: int) -> Broken:
    which = "the only hit considered does not carry" if retrieved == 1 else f"none of the {retrieved} hits considered carries"
    message = (
        f"{which} the `{match}` field that `match: {match}` compares; "
        "set options.rag.match to a field the target's hits carry"
    )
    return Broken(NO_MATCH_FIELD, message)


# ---------------------------------------------------------------- suites


@dataclass(frozen=True, slots=True)
class ThresholdResult:
    """One suite threshold against the suite's figure."""

    metric: str
    threshold: float
    # The mean over scored cases; None when no case was scored.
    value: float | None
    passed: bool
    higher_is_better: bool = True

    @property
    def comparison(self) -> str:
        return "≥" if self.higher_is_better else "≤"


@dataclass(frozen=True, slots=True)
class SuiteScore:
    """A suite's means over its scored cases, its thresholds, and its verdict."""

    aggregates: dict[str, float]
    thresholds: tuple[ThresholdResult, ...]
    scored: int
    broken: int
    total: int

    @property
    def passed(self) -> bool:
        return self.broken == 0 and all(threshold.passed for threshold in self.thresholds)


def aggregate(scores: Iterable[Mapping[str, float] | None]) -> tuple[dict[str, float], int]:
    """Means of each metric over the scored cases (None: broken, left out), and their count.

    Each mean is over the cases that have that metric, summed exactly (fsum).
    """
    scored = [case for case in scores if case is not None]
    if not scored:
        return {}, 0
    # The metrics in the order the cases give them (every rag case has all six).
    names = list(scored[0])
    if set(map(len, scored)) == {len(names)}:
        # The common case, every case with the same metrics: no test per case (a
        # case with another set of as many metrics raises KeyError).
        try:
            return {name: math.fsum(map(itemgetter(name), scored)) / len(scored) for name in names}, len(scored)
        except KeyError:
            pass
    known = set(names)
    for name in sorted(set().union(*scored) - known):
        names.append(name)
    means: dict[str, float] = {}
    for name in names:
        values = [case[name] for case in scored if name in case]
        means[name] = math.fsum(values) / len(values)
    return means, len(scored)


def direction_of(metric: str, registry: ManifestRegistry | None) -> str:
    """The metric's direction from its manifest; higher is better when unknown."""
    info = registry.metric(metric) if registry is not None else None
    return info.direction if info is not None else HIGHER


def check_thresholds(
    aggregates: Mapping[str, float],
    thresholds: Mapping[str, float],
    registry: ManifestRegistry | None = None,
) -> tuple[ThresholdResult, ...]:
    """Each threshold against its mean: at least it (at most, for lower_is_better)."""
    results = []
    for metric, threshold in thresholds.items():
        higher = direction_of(metric, registry) != LOWER
        value = aggregates.get(metric)
        if value is None or math.isnan(value):
            passed = False
        elif higher:
            passed = value >= threshold - TOLERANCE
        else:
            passed = value <= threshold + TOLERANCE
        results.append(ThresholdResult(metric, float(threshold), value, passed, higher))
    return tuple(results)


def score_suite(
    cases: Collection[Mapping[str, float] | None],
    thresholds: Mapping[str, float],
    registry: ManifestRegistry | None = None,
    broken: int | None = None,
) -> SuiteScore:
    """A suite's verdict from its cases' figures (None for a broken case).

    ``broken`` counts the cases that have no figures; by default every None in
    ``cases``. A suite with a broken case fails as broken, whatever its means.
    """
    aggregates, scored = aggregate(cases)
    unscored = len(cases) - scored if broken is None else broken
    return SuiteScore(aggregates, check_thresholds(aggregates, thresholds, registry), scored, unscored, len(cases))
