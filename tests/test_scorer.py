"""The scorer of SPEC §4: figures, broken cases, k, suite means and thresholds."""

from __future__ import annotations

import random
from types import SimpleNamespace

import pytest

from rag_lsp.core.workspace.manifests import ManifestRegistry, manifest_from
from rag_lsp.core.running.scorer import (
    BELOW_K,
    HIT_AT_1,
    MRR,
    NO_MATCH_FIELD,
    NOT_IN_WORKSPACE,
    NOT_RETURNED,
    NOTHING_RELEVANT,
    PRECISION,
    RECALL,
    RETRIEVED,
    SEMANTIC,
    check_thresholds,
    match_values,
    score_case,
    score_suite,
)

TEN = [f"docs/other-{n}.md" for n in range(10)]


def test_worked_example_of_the_engine_manifest() -> None:
    """Two declared, ten hits, the first relevant at rank 3, the other missing: 0.50 / 0.10 / 0.33 / 0 / 10."""
    hits = list(TEN)
    hits[2] = "src/gateway.ts"
    result = score_case(["src/gateway.ts", "docs/approvals.md"], hits, "semantic")
    assert result.scores == {
        RECALL: 0.5,
        PRECISION: 0.1,
        MRR: pytest.approx(1 / 3),
        HIT_AT_1: 0.0,
        RETRIEVED: 10.0,
        SEMANTIC: 1.0,
    }
    assert result.missed == ("docs/approvals.md",)
    assert result.first_relevant_rank == 3
    assert result.relevant_ranks == (3,)
    assert (result.found, result.expected) == (1, 2)


def test_k_scores_only_the_first_k_hits() -> None:
    """With k, hits after the k-th neither count for recall nor for precision, and retrieved is k."""
    hits = ["a", "x", "y", "b", "z"]
    at_all = score_case(["a", "b"], hits, "semantic")
    at_three = score_case(["a", "b"], hits, "semantic", k=3)
    assert at_all.scores[RECALL] == 1.0 and at_all.scores[PRECISION] == 0.4
    assert at_three.scores[RECALL] == 0.5
    assert at_three.scores[PRECISION] == pytest.approx(1 / 3)
    assert at_three.scores[RETRIEVED] == 3.0
    assert at_three.missed == ("b",)


def test_k_larger_than_the_hits_considers_them_all() -> None:
    """k above the number of hits considers every hit; precision divides by the hits, not by k."""
    result = score_case(["a"], ["a", "x"], "semantic", k=10)
    assert result.scores[RETRIEVED] == 2.0
    assert result.scores[PRECISION] == 0.5


def test_nothing_relevant_is_broken_not_zero() -> None:
    """A case that declares nothing relevant has no figures and says why."""
    result = score_case([], ["a", "b"], "semantic")
    assert result.scores is None
    assert result.broken is not None and result.broken.kind == NOTHING_RELEVANT
    assert "nothing relevant" in result.broken.message


def test_hits_without_the_match_field_are_broken_not_zero() -> None:
    """Hits that carry none of the match field make the case broken, naming the field."""
    result = score_case(["src/a.py"], [None, None, None], "semantic", match="path")
    assert result.scores is None
    assert result.broken.kind == NO_MATCH_FIELD
    assert "`path`" in result.broken.message and "none of the 3 hits" in result.broken.message


def test_only_the_considered_hits_decide_whether_the_field_is_missing() -> None:
    """A hit beyond k that carries the field does not rescue the first k."""
    assert score_case(["a"], [None, "a"], "semantic", k=1).broken.kind == NO_MATCH_FIELD
    assert score_case(["a"], [None, "a"], "semantic", k=2).scores[RECALL] == 1.0


def test_some_hits_with_the_field_are_scored() -> None:
    """When at least one considered hit carries the field, the case is scored; the others just do not match."""
    result = score_case(["a"], [None, "a"], "keyword")
    assert result.scores[RECALL] == 1.0 and result.scores[MRR] == 0.5 and result.scores[SEMANTIC] == 0.0


def test_no_hits_scores_zero() -> None:
    """An empty answer is a bad retrieval, not a broken case: every figure is 0."""
    result = score_case(["a"], [], "semantic")
    assert result.scores == {RECALL: 0.0, PRECISION: 0.0, MRR: 0.0, HIT_AT_1: 0.0, RETRIEVED: 0.0, SEMANTIC: 1.0}
    assert result.missed == ("a",)
    assert result.first_relevant_rank is None


def test_matching_is_exact() -> None:
    """No case folding, no prefix, no normalisation: only the exact string matches."""
    result = score_case(["src/gateway.ts"], ["src/Gateway.ts", "src/gateway", "./src/gateway.ts"], "semantic")
    assert result.scores[RECALL] == 0.0


def test_duplicates() -> None:
    """An expected value listed twice counts once; a relevant hit returned twice counts twice for precision."""
    result = score_case(["a", "a", "b"], ["a", "a", "x", "x"], "semantic")
    assert result.scores[RECALL] == 0.5
    assert result.scores[PRECISION] == 0.5
    assert result.missed == ("b",)
    assert result.expected == 2


def test_mode_semantic_only_for_semantic() -> None:
    """rag.mode.semantic is 1 only for the mode "semantic"; keyword, other or no mode give 0."""
    for mode, expected in (("semantic", 1.0), ("keyword", 0.0), (None, 0.0), ("Semantic", 0.0)):
        assert score_case(["a"], ["a"], mode).scores[SEMANTIC] == expected


def test_each_missed_value_says_why_once() -> None:
    """A value past k gives its first rank, one never returned says so, one `unreachable` answers for is missed for its reason; a value listed twice is explained once."""
    gone = (NOT_IN_WORKSPACE, "not a file in the workspace, RAG203")
    result = score_case(["a", "b", "c", "d", "d"], ["x", "a", "y", "b", "b"], "semantic", k=2, unreachable=lambda value: gone if value == "d" else None)
    assert result.missed == ("b", "c", "d")
    assert [(miss.reason, miss.rank, str(miss)) for miss in result.why_missed] == [
        (BELOW_K, 4, "b (rank 4, k = 2)"),
        (NOT_RETURNED, None, "c (not among the 5 hits the target returned)"),
        (NOT_IN_WORKSPACE, None, "d (not a file in the workspace, RAG203)"),
    ]
    assert result.answer.ranks == {"a": [2], "b": [4, 5], "c": [], "d": []}
    assert [str(miss) for miss in score_case(["a"], ["x"], "semantic").why_missed] == ["a (not the one hit the target returned)"]


def test_match_values_reads_mappings_and_objects() -> None:
    """The match field is read from dict hits and attribute hits alike; absent or non-string is None."""
    hits = [{"path": "a"}, {"id": "x"}, SimpleNamespace(path="b"), {"path": 3}]
    assert match_values(hits, "path") == ["a", None, "b", None]


# ---------------------------------------------------------------- suites


def test_suite_means_leave_broken_cases_out_and_fail_as_broken() -> None:
    """Means are over scored cases only; a broken case fails the suite even when every threshold holds."""
    scored = score_case(["a"], ["a"], "semantic").scores
    missed = score_case(["a"], ["x"], "semantic").scores
    verdict = score_suite([scored, missed, None], {RECALL: 0.5})
    assert verdict.aggregates[RECALL] == 0.5
    assert verdict.scored == 2 and verdict.broken == 1
    assert all(threshold.passed for threshold in verdict.thresholds)
    assert not verdict.passed


def test_threshold_holds_at_equality_despite_float_sums() -> None:
    """A mean equal to the threshold on paper holds, even when float sums land a hair below."""
    cases = [{RECALL: value} for value in (0.1, 0.9, 0.2)]
    assert (0.1 + 0.9 + 0.2) / 3 < 0.4
    (threshold,) = check_thresholds(score_suite(cases, {}).aggregates, {RECALL: 0.4})
    assert threshold.passed


def test_threshold_direction_comes_from_the_manifest() -> None:
    """A lower_is_better metric holds when its mean is at most the threshold."""
    registry = ManifestRegistry.builtins()
    registry.add(
        manifest_from(
            {"name": "latency", "kind": "metric", "manifest_version": "1", "direction": "lower_is_better"}, "m.yaml"
        )
    )
    (low,) = check_thresholds({"latency": 0.3}, {"latency": 0.5}, registry)
    (high,) = check_thresholds({"latency": 0.7}, {"latency": 0.5}, registry)
    assert low.passed and not low.higher_is_better and low.comparison == "≤"
    assert not high.passed
    (recall,) = check_thresholds({RECALL: 0.3}, {RECALL: 0.5}, registry)
    assert not recall.passed and recall.higher_is_better


def test_threshold_without_scored_cases_fails() -> None:
    """With no scored case there is no mean: the threshold has no value and fails."""
    verdict = score_suite([None, None], {RECALL: 0.1})
    (threshold,) = verdict.thresholds
    assert threshold.value is None and not threshold.passed
    assert verdict.aggregates == {}


# ---------------------------------------------------------------- cross-check


def _random_cases(count: int, seed: int) -> list[tuple[list[str], list[str], int]]:
    rng = random.Random(seed)
    docs = [f"d{n}" for n in range(40)]
    cases = []
    for _ in range(count):
        expected = rng.sample(docs, rng.randint(1, 6))
        hits = rng.sample(docs, rng.randint(1, 15))  # no repeats: a run holds a doc once
        cases.append((expected, hits, rng.randint(1, 12)))
    return cases


def test_recall_mrr_hit_at_1_and_precision_agree_with_trec_eval() -> None:
    """On 3,000 random cases, recall, MRR and hit@1 equal pytrec_eval's to 1e-9, and precision is set_P on the first k."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    cases = _random_cases(3000, seed=7)
    qrels, run = {}, {}
    ours = {}
    for index, (expected, hits, k) in enumerate(cases):
        query = f"q{index}"
        qrels[query] = {doc: 1 for doc in expected}
        considered = hits[:k]
        # Scores strictly decreasing by rank, so trec_eval ranks as we do.
        run[query] = {doc: float(len(considered) - rank) for rank, doc in enumerate(considered)}
        ours[query] = score_case(expected, hits, "semantic", k=k).scores
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"set_recall", "set_P", "recip_rank", "success_1", "P_5", "P_10"})
    theirs = evaluator.evaluate(run)
    differs_from_p_at_k = 0
    for index, (_, hits, k) in enumerate(cases):
        query = f"q{index}"
        mine, trec = ours[query], theirs[query]
        assert mine[RECALL] == pytest.approx(trec["set_recall"], abs=1e-9)
        assert mine[MRR] == pytest.approx(trec["recip_rank"], abs=1e-9)
        assert mine[HIT_AT_1] == pytest.approx(trec["success_1"], abs=1e-9)
        # Our precision is the share of returned hits that were declared: set_P on C.
        assert mine[PRECISION] == pytest.approx(trec["set_P"], abs=1e-9)
        # P@k divides by k even when fewer than k hits came back; ours does not.
        if k in (5, 10) and len(hits) < k and mine[PRECISION] > 0:
            assert trec[f"P_{k}"] < mine[PRECISION]
            assert trec[f"P_{k}"] == pytest.approx(mine[PRECISION] * len(hits) / k, abs=1e-9)
            differs_from_p_at_k += 1
    assert differs_from_p_at_k > 10


def test_recall_and_mrr_at_k_agree_with_ir_measures() -> None:
    """On 2,000 random cases with k = 5, R@5, RR@5 and P@5 of ir-measures match ours (P@5 where 5 hits came back)."""
    ir_measures = pytest.importorskip("ir_measures")
    from ir_measures import RR, P, R, Success

    cases = _random_cases(2000, seed=11)
    qrels, run = [], []
    ours = {}
    for index, (expected, hits, _) in enumerate(cases):
        query = f"q{index}"
        qrels += [ir_measures.Qrel(query, doc, 1) for doc in expected]
        run += [ir_measures.ScoredDoc(query, doc, float(len(hits) - rank)) for rank, doc in enumerate(hits)]
        ours[query] = (score_case(expected, hits, "semantic", k=5).scores, len(hits))
    measured: dict[str, dict[str, float]] = {}
    for metric in ir_measures.iter_calc([R @ 5, RR @ 5, P @ 5, Success @ 1], qrels, run):
        measured.setdefault(metric.query_id, {})[str(metric.measure)] = metric.value
    for query, (mine, returned) in ours.items():
        theirs = measured[query]
        assert mine[RECALL] == pytest.approx(theirs["R@5"], abs=1e-9)
        assert mine[MRR] == pytest.approx(theirs["RR@5"], abs=1e-9)
        assert mine[HIT_AT_1] == pytest.approx(theirs["Success@1"], abs=1e-9)
        if returned >= 5:
            assert mine[PRECISION] == pytest.approx(theirs["P@5"], abs=1e-9)
