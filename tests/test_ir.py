"""The ``ir`` engine: its measures equal trec_eval's, its names and options, and how it reads a case.

The engine hands its qrels and run to ir-measures, which computes nDCG, AP, P, R
and RR with trec_eval's own C code (pytrec_eval) and Judged@k in Python. No
``trec_eval`` binary is installable here, so the figures are held against two
references that share nothing with the engine's path:

* pytrec_eval called directly, with trec_eval's own measure names
  (``ndcg_cut_10``, ``map``, ``P_5``, ``recall_100``, ``recip_rank``) on a run the
  test writes from the raw hits: this holds the engine's translation (which
  document sits at which rank, repeated and unmatched hits, grades, the cut at k,
  ir-measures' names for trec_eval's measures) to trec_eval;
* the textbook definitions trec_eval implements, written out here (and only
  here: the engine never computes a measure itself), which hold the C code's
  figures too, Judged@k included, which trec_eval does not compute.
"""

from __future__ import annotations

import math
import random

import pytest

from rag_lsp.core.running import ir

ir_measures = pytest.importorskip("ir_measures")
pytrec_eval = pytest.importorskip("pytrec_eval")

MEASURES = ("nDCG@10", "nDCG@3", "nDCG", "AP", "P@5", "P@1", "R@10", "R@3", "RR", "Judged@5", "Judged@10")
# ir-measures' name -> trec_eval's own.
TREC_NAMES = {
    "nDCG@10": "ndcg_cut_10",
    "nDCG@3": "ndcg_cut_3",
    "nDCG": "ndcg",
    "AP": "map",
    "P@5": "P_5",
    "P@1": "P_1",
    "R@10": "recall_10",
    "R@3": "recall_3",
    "RR": "recip_rank",
}


# ---------------------------------------------------------------- reading a case


def test_a_listed_value_without_a_grade_has_grade_one() -> None:
    """`expect.grades` grades the listed values; one it does not grade is 1, and a grade for an unlisted value is no judgment."""
    assert ir.judgments(["a", "b", "a"], {"a": 2, "z": 3}) == {"a": 2, "b": 1}
    assert ir.judgments(["a"], None) == {"a": 1}
    assert ir.judgments(["a", "b"], {"a": 0, "b": "2"}) == {"a": 0, "b": 1}


def test_every_hit_keeps_its_rank_in_the_run() -> None:
    """A hit without the match field, or repeating a value, stays in the run at its rank as an unjudged document."""
    qrels, run = ir.qrels_and_run([ir.Judged({"a": 2, "b": 1}, [None, "b", "x", "b", "a"])])
    assert qrels == [("0", "d0", 2), ("0", "d1", 1)]
    assert run == [("0", "u1", 5.0), ("0", "d1", 4.0), ("0", "u3", 3.0), ("0", "u4", 2.0), ("0", "d0", 1.0)]


def test_values_are_never_read_as_the_run_s_own_ids() -> None:
    """A value spelled like an internal id (`u1`, `d0`) or holding spaces is judged as itself."""
    figures = ir.score_ir([ir.Judged({"u1": 1}, ["d0", "u1 x", "u1"])], ["RR", "Judged@3"])
    assert figures == [{"ir.RR": pytest.approx(1 / 3), "ir.Judged@3": pytest.approx(1 / 3)}]


def test_a_case_with_no_hits_scores_zero_on_every_measure() -> None:
    """As trec_eval -c counts a query the run does not answer."""
    assert ir.score_ir([ir.Judged({"a": 1}, [])], ["nDCG@10", "AP", "Judged@5"]) == [
        {"ir.nDCG@10": 0.0, "ir.AP": 0.0, "ir.Judged@5": 0.0}
    ]


def test_the_measures_of_a_suite_are_its_list_then_its_thresholds() -> None:
    """options.ir.measures (the defaults when absent), then the measures thresholds name, each once."""
    assert ir.suite_measures(["P@5", "AP"], ["ir.AP", "ir.nDCG@20", "rag.recall"]) == ("P@5", "AP", "nDCG@20")
    assert ir.suite_measures(None, []) == ir.DEFAULT_MEASURES
    assert ir.suite_measures(["MAP", "P@0", "R@100"], ["ir.recall"]) == ("R@100",)


@pytest.mark.parametrize("name", ["nDCG", "nDCG@10", "AP", "AP@100", "P@5", "R@1000", "RR", "RR@10", "Judged@10"])
def test_measures_the_engine_computes(name: str) -> None:
    """ir-measures' names, at any positive integer cutoff, and each one ir-measures parses back to itself."""
    assert ir.is_measure(name)
    assert str(ir_measures.parse_measure(name)) == name


@pytest.mark.parametrize("name", ["ndcg@10", "nDCG@0", "P", "R", "Judged", "MAP", "P@05", "nDCG@10 ", "P@-1", "ERR@10"])
def test_names_that_are_no_measure(name: str) -> None:
    """Another case, no cutoff where one is needed, a cutoff of 0 or written with a leading zero."""
    assert not ir.is_measure(name)


def test_missing_reason_is_none_when_ir_measures_is_installed() -> None:
    """The engine runs where ir-measures imports."""
    assert ir.missing_reason() is None


# ---------------------------------------------------------------- equal to trec_eval


def _random_cases(count: int, seed: int) -> list[tuple[dict[str, int], list[str | None], int | None]]:
    """Random graded judgments (grades 0-3, some cases with no relevant value at
    all), hits that repeat values and lack the field, and a suite k or none."""
    rng = random.Random(seed)
    docs = [f"doc {n}" for n in range(30)]
    cases = []
    for _ in range(count):
        judged = rng.sample(docs, rng.randint(1, 8))
        grades = {doc: rng.choice((0, 1, 1, 2, 3)) for doc in judged}
        hits: list[str | None] = [rng.choice(docs) if rng.random() > 0.1 else None for _ in range(rng.randint(0, 20))]
        cases.append((grades, hits, rng.choice((None, 3, 5, 10, 15))))
    return cases


def _trec_run(hits: list[str | None]) -> dict[str, float]:
    """The run trec_eval reads for these hits, written from the definition: each
    rank holds one document; a repeat or a hit without the field is a document
    no judgment names."""
    run: dict[str, float] = {}
    for rank, value in enumerate(hits, 1):
        doc = value if value is not None and value not in run else f"unjudged {rank}"
        run[doc] = float(len(hits) - rank + 1)
    return run


def _ranked(hits: list[str | None]) -> list[str | None]:
    """The documents of the hits at their ranks, None where the rank holds no judged document."""
    seen: set[str] = set()
    ranked: list[str | None] = []
    for value in hits:
        ranked.append(value if value is not None and value not in seen else None)
        if value is not None:
            seen.add(value)
    return ranked


def _by_definition(grades: dict[str, int], hits: list[str | None]) -> dict[str, float]:
    """trec_eval's definitions (gain = grade, log2 discount, relevant = grade ≥ 1),
    and Judged@k as ir-measures defines it (share of the first min(k, n) judged)."""
    ranked = _ranked(hits)
    relevant = {doc for doc, grade in grades.items() if grade >= 1}
    gain = [grades.get(doc, 0) if doc is not None else 0 for doc in ranked]
    ideal = sorted(grades.values(), reverse=True)

    def dcg(gains: list[int], k: int | None) -> float:
        return math.fsum(g / math.log2(rank + 1) for rank, g in enumerate(gains[:k], 1))

    def ndcg(k: int | None) -> float:
        best = dcg(ideal, k)
        return dcg(gain, k) / best if best else 0.0

    hit_ranks = [rank for rank, doc in enumerate(ranked, 1) if doc in relevant]
    figures = {
        "nDCG@10": ndcg(10),
        "nDCG@3": ndcg(3),
        "nDCG": ndcg(None),
        "AP": math.fsum((n / rank) for n, rank in enumerate(hit_ranks, 1)) / len(relevant) if relevant else 0.0,
        "P@5": sum(1 for rank in hit_ranks if rank <= 5) / 5,
        "P@1": sum(1 for rank in hit_ranks if rank <= 1) / 1,
        "R@10": sum(1 for rank in hit_ranks if rank <= 10) / len(relevant) if relevant else 0.0,
        "R@3": sum(1 for rank in hit_ranks if rank <= 3) / len(relevant) if relevant else 0.0,
        "RR": 1 / hit_ranks[0] if hit_ranks else 0.0,
    }
    for k in (5, 10):
        shown = ranked[:k]
        figures[f"Judged@{k}"] = sum(1 for doc in shown if doc in grades) / len(shown) if shown else 0.0
    return figures


def test_every_figure_equals_trec_eval_on_thousands_of_random_cases() -> None:
    """On 3,000 random graded cases (repeats, unmatched hits, grade 0, no hits, a suite k), every figure of the engine
    equals pytrec_eval's under trec_eval's own measure names, and the definitions trec_eval implements, to 1e-9."""
    cases = _random_cases(3000, seed=43)
    considered = [hits[:k] if k is not None else hits for _, hits, k in cases]
    ours = ir.score_ir([ir.Judged(grades, hits) for (grades, _, _), hits in zip(cases, considered)], MEASURES)
    qrels = {str(index): grades for index, (grades, _, _) in enumerate(cases)}
    run = {str(index): _trec_run(hits) for index, hits in enumerate(considered) if hits}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(TREC_NAMES.values()))
    theirs = evaluator.evaluate(run)
    compared = 0
    for index, ((grades, _, _), hits) in enumerate(zip(cases, considered)):
        mine = ours[index]
        assert set(mine) == {ir.metric_name(measure) for measure in MEASURES}
        defined = _by_definition(grades, hits)
        trec = theirs.get(str(index))
        for measure in MEASURES:
            value = mine[ir.metric_name(measure)]
            assert value == pytest.approx(defined[measure], abs=1e-9), (index, measure)
            if measure in TREC_NAMES:
                # A query the run does not answer is left out by trec_eval, and counts 0 with -c.
                expected = trec[TREC_NAMES[measure]] if trec is not None else 0.0
                assert value == pytest.approx(expected, abs=1e-9), (index, measure)
                compared += 1
    assert compared > 20_000


def test_a_sweep_scores_the_first_k_hits() -> None:
    """score_ir_at at k equals score_ir on each case's first k hits."""
    cases = [ir.Judged(grades, hits) for grades, hits, _ in _random_cases(200, seed=5)]
    swept = ir.score_ir_at(cases, ("nDCG@10", "AP", "P@5"), (1, 3, 10))
    for k, figures in swept.items():
        assert figures == ir.score_ir([ir.Judged(case.grades, case.values[:k]) for case in cases], ("nDCG@10", "AP", "P@5"))
