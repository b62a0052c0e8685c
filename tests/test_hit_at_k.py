"""rag.hit_at_k per the seed manifest: the gate, its config, explanations, and the vectorised path."""

from __future__ import annotations

import random

import pytest
from rapidfuzz import fuzz
from rapidfuzz.utils import default_process

from rag_lsp.core.running.hit_at_k import FOR_SHOW_UP_TO, ConfigError, HitAtKConfig, builtin_schema, hit_at_k, hit_at_k_many, overlap

REFERENCE = "The gateway approves a request once two distinct approvers have signed it."
MATCH = "the gateway approves a request once two distinct approvers have signed it, then forwards it upstream"
NOISE = "Rate limits use a token bucket per tenant with burst and refill."


def test_defaults_come_from_the_manifest() -> None:
    """Without config, every option has the default of the manifest's config_schema."""
    config = HitAtKConfig.from_config(None)
    assert (config.k, config.t1, config.t2, config.coverage, config.language) == (5, 0.7, 0.65, 0.5, "en")
    assert config.metadata == {"inverted": False, "min": 0.0, "max": 1.0, "weight": 1.0, "metric_name": "hit_at_k"}


def test_a_workspace_manifest_default_is_honoured() -> None:
    """A manifest that changes a default changes the config the metric runs with."""
    schema = builtin_schema()
    schema["properties"] = {**schema["properties"], "k": {**schema["properties"]["k"], "default": 3}}
    assert HitAtKConfig.from_config({}, schema).k == 3


@pytest.mark.parametrize(
    ("config", "fragment"),
    [
        ({"t1": 2}, "'t1': 2 is out of range"),
        ({"k": 0}, "'k': 0 is out of range"),
        ({"language": "es"}, "'language': 'es' is not allowed"),
        ({"inverted": "yes"}, "'inverted': expected true or false"),
        ({"metric_name": 3}, "'metric_name': expected a string"),
        ({"tl": 0.8}, "unknown key 'tl'"),
    ],
)
def test_every_config_key_is_validated(config: dict, fragment: str) -> None:
    """A value outside the config_schema, or a key the metric does not implement, is refused with a message."""
    with pytest.raises(ConfigError) as raised:
        HitAtKConfig.from_config(config)
    assert fragment in str(raised.value)


def test_figures_are_rapidfuzz_ratios_on_processed_strings() -> None:
    """The pair's figures are token_set_ratio and partial_ratio / 100 on default_process'd strings, and the token overlap."""
    result = hit_at_k([REFERENCE], [NOISE, MATCH])
    assert result.score == 1.0 and result.pair == (1, 0)
    figures = result.figures
    assert figures.token_set_ratio == fuzz.token_set_ratio(MATCH, REFERENCE, processor=default_process) / 100
    assert figures.partial_ratio == fuzz.partial_ratio(MATCH, REFERENCE, processor=default_process) / 100
    assert figures.overlap == overlap(MATCH, REFERENCE) == 1.0


GATEWAY_WORDS = "the approval gateway quorum signs each request once two distinct approvers".split()
BUCKET_WORDS = "the tenant bucket refills slowly at night and each request takes a token".split()


def long_passage(seed: int, vocabulary: list[str] = GATEWAY_WORDS, words: int = 2_000) -> str:
    """Prose-like text of about 14,000 characters: two of them take rapidfuzz minutes to compare by partial ratio."""
    import random

    rng = random.Random(seed)
    return " ".join(rng.choice(vocabulary) for _ in range(words))


def test_the_partial_ratio_of_long_passages_is_left_out_of_the_explanation_when_it_did_not_decide() -> None:
    """A hit decided by overlap, and a miss stopped at stage 1, name their other figures but not the partial ratio of two long passages."""
    reference = long_passage(1)
    by_overlap = hit_at_k([reference], [long_passage(2)], HitAtKConfig.from_config({"t1": 0.0, "coverage": 0.0}))
    assert by_overlap.score == 1.0
    assert by_overlap.figures.partial_ratio is None and by_overlap.figures.overlap == 1.0
    assert "partial ratio — (not computed: the texts are long, and it did not decide)" in by_overlap.explanation
    stopped = hit_at_k([reference], [long_passage(3, BUCKET_WORDS)], HitAtKConfig.from_config({"language": "fr"}))
    assert stopped.score == 0.0 and stopped.figures.partial_ratio is None
    assert "un ratio partiel de — (non calculé : les textes sont longs, et il n'a pas décidé)" in stopped.explanation


def test_a_partial_ratio_that_decides_is_computed_and_shown_however_long_the_texts() -> None:
    """Stage 2 by partial ratio alone: the verdict and the explanation carry rapidfuzz's figure for a pair above the explanation's limit."""
    reference = "two distinct approvers sign the gateway request " * 12 + "once"  # 580 characters
    chunk = "two distinct approvers sign the gateway request " * 12 + "and the bucket refills"
    config = HitAtKConfig.from_config({"t1": 0.0, "t2": 0.9, "coverage": 1.0})
    result = hit_at_k([reference], [chunk], config)
    expected = fuzz.partial_ratio(chunk, reference, processor=default_process) / 100
    assert len(default_process(reference)) > FOR_SHOW_UP_TO
    assert result.score == 1.0 and result.figures.partial_ratio == expected
    assert "not computed" not in result.explanation


def test_overlap_is_the_share_of_the_references_distinct_words() -> None:
    """overlap(c, r) is the share of r's distinct lower-cased word tokens found in c."""
    assert overlap("Alpha beta", "alpha ALPHA gamma delta") == pytest.approx(1 / 3)
    assert overlap("anything", "") == 0.0


def test_k_is_honoured() -> None:
    """A matching chunk at rank 6 is no hit with k=5 and a hit with k=6."""
    chunks = [NOISE] * 5 + [MATCH]
    assert hit_at_k([REFERENCE], chunks, HitAtKConfig.from_config({"k": 5})).score == 0.0
    assert hit_at_k([REFERENCE], chunks, HitAtKConfig.from_config({"k": 6})).score == 1.0


def test_t1_is_honoured() -> None:
    """Stage 1: a pair hits at t1 equal to its token-set ratio and not a hair above, whatever stage 2 says."""
    chunk = "every tenant bucket refills slowly at night"
    tsr = hit_at_k([NOISE], [chunk]).figures.token_set_ratio
    assert 0.3 < tsr < 0.9
    at = HitAtKConfig.from_config({"t1": tsr, "t2": 0.0, "coverage": 0.0})
    above = HitAtKConfig.from_config({"t1": tsr + 0.01, "t2": 0.0, "coverage": 0.0})
    assert hit_at_k([NOISE], [chunk], at).score == 1.0
    assert hit_at_k([NOISE], [chunk], above).score == 0.0


def test_t2_and_coverage_are_honoured() -> None:
    """Stage 2: a pair passing t1 hits when partial ratio ≥ t2 or overlap ≥ coverage, and not when both fall short."""
    chunk = "approvers signed distinct request gateway two once"
    reference = "two distinct approvers signed the gateway request once more today please"
    base = hit_at_k([reference], [chunk], HitAtKConfig.from_config({"t1": 0.0, "t2": 1.0, "coverage": 1.0}))
    figures = base.figures
    assert base.score == 0.0 and figures.partial_ratio < 1.0 and figures.overlap < 1.0
    by_overlap = HitAtKConfig.from_config({"t1": 0.0, "t2": 1.0, "coverage": figures.overlap})
    by_partial = HitAtKConfig.from_config({"t1": 0.0, "t2": figures.partial_ratio, "coverage": 1.0})
    assert hit_at_k([reference], [chunk], by_overlap).score == 1.0
    assert hit_at_k([reference], [chunk], by_partial).score == 1.0


def test_scoring_metadata_is_carried_not_applied() -> None:
    """inverted, min, max, weight and metric_name reach the result but do not change the score."""
    config = HitAtKConfig.from_config({"inverted": True, "min": -1.0, "max": 2.0, "weight": 0.5, "metric_name": "evidence"})
    result = hit_at_k([REFERENCE], [MATCH], config)
    assert result.score == 1.0
    assert result.metadata == {"inverted": True, "min": -1.0, "max": 2.0, "weight": 0.5, "metric_name": "evidence"}


def test_no_reference_contexts_is_broken() -> None:
    """A row without reference contexts has no score and says why."""
    result = hit_at_k([], [MATCH])
    assert result.score is None and "reference" in result.broken
    assert result.explanation == result.broken


def test_nothing_retrieved_is_a_miss() -> None:
    """No retrieved chunk: score 0, and the explanation says nothing was retrieved."""
    result = hit_at_k([REFERENCE], [])
    assert result.score == 0.0 and "nothing was retrieved" in result.explanation


@pytest.mark.parametrize(
    ("language", "words"),
    [("en", ["hit", "chunk 2", "reference context 1", "token-set ratio"]),
     ("de", ["Treffer", "Abschnitt 2", "Referenzkontext 1", "Token-Set-Ratio"]),
     ("fr", ["trouvé", "passage récupéré 2", "contexte de référence 1", "ratio token-set"])],
)
def test_the_explanation_names_the_pair_and_its_figures_in_each_language(language: str, words: list[str]) -> None:
    """The explanation names the matching pair (1-based) with its three figures, in en, de or fr."""
    result = hit_at_k([REFERENCE], [NOISE, MATCH], HitAtKConfig.from_config({"language": language}))
    text = result.explanation
    for word in words:
        assert word in text
    figures = result.figures
    decimal = "," if language != "en" else "."
    for value in (figures.token_set_ratio, figures.partial_ratio, figures.overlap):
        assert f"{value:.2f}".replace(".", decimal) in text


def test_a_miss_names_the_closest_pair() -> None:
    """On a miss, the explanation names the closest pair and what a hit needs."""
    result = hit_at_k([REFERENCE, NOISE], ["completely unrelated words here", "every tenant bucket refills slowly at night"])
    assert result.score == 0.0
    assert result.pair == (1, 1)
    assert "closest pair" in result.explanation and "≥ 0.70" in result.explanation


def _random_rows(count: int, seed: int) -> list[tuple[list[str], list[str]]]:
    rng = random.Random(seed)
    words = [f"w{n}" for n in range(60)] + ["Gateway", "approval", "tenant", "bucket", "sign"]
    def sentence(size: int) -> str:
        return " ".join(rng.choice(words) for _ in range(size))
    rows = []
    for _ in range(count):
        references = [sentence(rng.randint(3, 12)) for _ in range(rng.randint(0, 3))]
        chunks = []
        for _ in range(rng.randint(0, 7)):
            if references and rng.random() < 0.3:
                chunks.append(rng.choice(references) + " " + sentence(rng.randint(0, 5)))
            else:
                chunks.append(sentence(rng.randint(2, 15)))
        rows.append((references, chunks))
    return rows


def test_the_vectorised_path_equals_the_scalar_path() -> None:
    """Scored with cpdist over every pair at once, 600 random rows get the scalar path's scores, pairs and figures."""
    rows = _random_rows(600, seed=3)
    config = HitAtKConfig.from_config({"k": 4, "t1": 0.5, "coverage": 0.6})
    vectorised = hit_at_k_many(rows, config, vectorise=True)
    scalar = [hit_at_k(references, chunks, config) for references, chunks in rows]
    assert {result.score for result in scalar} >= {0.0, 1.0, None}
    for fast, slow in zip(vectorised, scalar):
        assert (fast.score, fast.broken, fast.pair, fast.compared) == (slow.score, slow.broken, slow.pair, slow.compared)
        assert fast.figures == slow.figures
        assert fast.explanation == slow.explanation


def test_many_rows_choose_the_vectorised_path_by_themselves() -> None:
    """Without a choice, a large batch is vectorised and a small one scored pair by pair, with the same results."""
    rows = _random_rows(800, seed=5)
    automatic = hit_at_k_many(rows)
    assert [r.score for r in automatic] == [r.score for r in hit_at_k_many(rows, vectorise=False)]


def test_the_options_know_every_language_the_explanations_are_written_in() -> None:
    """The options' reader (which the checks use without the scorer) accepts exactly the languages
    the scorer explains its verdicts in."""
    from rag_lsp.core.running import hit_at_k
    from rag_lsp.core.workspace.hit_at_k_config import LANGUAGES

    assert set(LANGUAGES) == set(hit_at_k._MESSAGES)
    with pytest.raises(ConfigError):
        HitAtKConfig.from_config({"language": "xx"})
