"""``rag.hit_at_k``: does the right evidence appear among the top k retrieved chunks?

Pure functions, no I/O; the metric of the seed manifest (``schemas/manifests/
rag.hit_at_k.yaml``). On a gdi_text_v1 row it takes the first ``k`` chunks of
``retrieved_context`` and compares each with each of ``reference_contexts`` by a
two-stage gate, with both strings through ``rapidfuzz.utils.default_process``:

* stage 1: ``token_set_ratio(chunk, reference) >= t1``;
* stage 2: ``partial_ratio(chunk, reference) >= t2`` or
  ``overlap(chunk, reference) >= coverage``, where overlap is the share of the
  reference's distinct lower-cased word tokens found in the chunk.

Ratios are rapidfuzz's, on 0..1. The score is 1.0 when any pair passes, else 0.0;
a row without reference contexts is broken (no score). The result names the
matching pair with its three figures (or, on a miss, the closest pair), in the
configured language. ``inverted``, ``min``, ``max``, ``weight`` and ``metric_name``
are scoring metadata: validated and carried into the result, not applied.

Many rows are scored with ``rapidfuzz.process.cpdist`` (the pairwise sibling of
``cdist``) over every pair at once, on all cores; a few rows pair by pair, stopping
at the first hit. Both give the same figures: the same functions on the same
pre-processed strings.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Sequence

import numpy
from rapidfuzz import fuzz, process
from rapidfuzz.utils import default_process

from ..workspace.hit_at_k_config import METADATA, NAME, ConfigError, HitAtKConfig, builtin_schema


# Pairs in a batch from which the vectorised path pays off.
VECTORISE_FROM_PAIRS = 2_000
# The partial ratio of a pair is computed for an explanation alone (it did not
# decide the verdict: the overlap did, or the token-set ratio fell short) only
# when the shorter of its strings has at most this many characters. rapidfuzz
# slides the shorter string along the longer, comparing it whole at each place:
# two passages of 1,000 characters take 0.08 s, of 3,700 two seconds, of 10,000
# a minute, while 500 against 20,000 take 7 ms. A suite's explanations would
# otherwise cost hours on rows of long passages.
FOR_SHOW_UP_TO = 500

# ---------------------------------------------------------------- figures


def tokens(processed: str) -> frozenset[str]:
    """The distinct word tokens of a string already through ``default_process``."""
    return frozenset(processed.split())


def overlap_of(chunk_tokens: frozenset[str], reference_tokens: frozenset[str]) -> float:
    """Share of the reference's distinct tokens found in the chunk (0 for no tokens)."""
    if not reference_tokens:
        return 0.0
    return len(reference_tokens & chunk_tokens) / len(reference_tokens)


def overlap(chunk: str, reference: str) -> float:
    """Share of ``reference``'s distinct lower-cased word tokens found in ``chunk``."""
    return overlap_of(tokens(default_process(chunk)), tokens(default_process(reference)))


@dataclass(frozen=True, slots=True)
class PairFigures:
    """The three figures of one (chunk, reference) pair; indexes are 0-based."""

    chunk: int
    reference: int
    token_set_ratio: float
    # None when it did not decide the verdict and the pair is too long to
    # compute it for show (see FOR_SHOW_UP_TO).
    partial_ratio: float | None
    overlap: float


@dataclass(frozen=True)
class HitAtKResult:
    """One row's Hit@K: its score (None when broken), the pair that decided it, and why."""

    score: float | None
    config: HitAtKConfig
    broken: str | None = None
    # (chunk index, reference index) of the first matching pair, or of the closest
    # pair on a miss; None when nothing was compared.
    pair: tuple[int, int] | None = None
    # How many chunks were compared (the first k that exist).
    compared: int = 0
    # The processed strings of the pair, to compute its figures when asked.
    _strings: tuple[str, str] | None = field(default=None, repr=False, compare=False)
    _known: dict[str, float] = field(default_factory=dict, repr=False, compare=False)

    @property
    def hit(self) -> bool:
        return self.score == 1.0

    @property
    def metadata(self) -> dict[str, Any]:
        return self.config.metadata

    @cached_property
    def figures(self) -> PairFigures | None:
        """The pair's token-set ratio, partial ratio and overlap (computed on first use:
        a bulk run needs only the verdict, partial_ratio is the costly figure)."""
        if self.pair is None or self._strings is None:
            return None
        chunk, reference = self._strings
        known = self._known
        if "pr" in known:
            partial = known["pr"]
        elif min(len(chunk), len(reference)) <= FOR_SHOW_UP_TO:
            partial = fuzz.partial_ratio(chunk, reference) / 100.0
        else:
            partial = None
        return PairFigures(
            self.pair[0],
            self.pair[1],
            known["tsr"] if "tsr" in known else fuzz.token_set_ratio(chunk, reference) / 100.0,
            partial,
            known["ov"] if "ov" in known else overlap_of(tokens(chunk), tokens(reference)),
        )

    @cached_property
    def explanation(self) -> str:
        return explain(self)


def hit_at_k(
    reference_contexts: Sequence[str],
    retrieved_context: Sequence[str],
    config: HitAtKConfig | None = None,
) -> HitAtKResult:
    """Hit@K of one row, pair by pair, stopping at the first hit."""
    config = config or HitAtKConfig()
    if not reference_contexts:
        return _broken(config)
    chunks = [default_process(chunk) for chunk in retrieved_context[: config.k]]
    references = [default_process(reference) for reference in reference_contexts]
    reference_tokens = [tokens(reference) for reference in references]
    best: tuple[float, int, int] | None = None
    for i, chunk in enumerate(chunks):
        chunk_tokens = None
        for j, reference in enumerate(references):
            tsr = fuzz.token_set_ratio(chunk, reference) / 100.0
            if best is None or tsr > best[0]:
                best = (tsr, i, j)
            if tsr < config.t1:
                continue
            if chunk_tokens is None:
                chunk_tokens = tokens(chunk)
            decided = _stage_two(chunk, reference, chunk_tokens, reference_tokens[j], config)
            if decided is not None:
                return HitAtKResult(1.0, config, None, (i, j), len(chunks), (chunk, reference), {"tsr": tsr, **decided})
    return _miss(config, chunks, references, best)


def hit_at_k_many(
    rows: Sequence[tuple[Sequence[str], Sequence[str]]],
    config: HitAtKConfig | None = None,
    *,
    vectorise: bool | None = None,
    workers: int = -1,
) -> list[HitAtKResult]:
    """Hit@K of many ``(reference_contexts, retrieved_context)`` rows.

    With many pairs (or ``vectorise=True``) the stage-1 ratios are computed by
    ``rapidfuzz.process.cpdist`` on ``workers`` threads (-1: all cores), one call
    per chunk rank; the results are those of :func:`hit_at_k`.
    """
    config = config or HitAtKConfig()
    k = config.k
    pairs = sum(min(len(chunks), k) * len(references) for references, chunks in rows)
    if vectorise is None:
        vectorise = pairs >= VECTORISE_FROM_PAIRS
    if not vectorise:
        return [hit_at_k(references, chunks, config) for references, chunks in rows]
    # Rank by rank: wave i compares the i-th chunk of every undecided row with its
    # references, all pairs of the wave in one cpdist call on all cores. A row
    # leaves at its first hit, as the scalar path stops there, so the work is the
    # scalar path's, spread over the cores.
    processed = [
        ([default_process(chunk) for chunk in chunks[:k]], [default_process(ref) for ref in references])
        for references, chunks in rows
    ]
    results: list[HitAtKResult | None] = [None] * len(rows)
    tokens_of: list[list[frozenset[str]] | None] = [None] * len(rows)
    best: list[tuple[float, int, int] | None] = [None] * len(rows)
    undecided = []
    for index, (row_chunks, row_references) in enumerate(processed):
        if not row_references:
            results[index] = _broken(config)
        elif not row_chunks:
            results[index] = _miss(config, row_chunks, row_references, None)
        else:
            undecided.append(index)
    wave = 0
    while undecided:
        left: list[str] = []
        right: list[str] = []
        for index in undecided:
            row_chunks, row_references = processed[index]
            chunk = row_chunks[wave]
            for reference in row_references:
                left.append(chunk)
                right.append(reference)
        # float64, as the scalar path's figures are (cpdist defaults to float32).
        ratios = process.cpdist(left, right, scorer=fuzz.token_set_ratio, workers=workers, dtype=numpy.float64)
        at = 0
        next_wave = []
        for index in undecided:
            row_chunks, row_references = processed[index]
            chunk = row_chunks[wave]
            chunk_tokens = None
            found = None
            for j, reference in enumerate(row_references):
                tsr = float(ratios[at + j]) / 100.0
                row_best = best[index]
                if row_best is None or tsr > row_best[0]:
                    best[index] = (tsr, wave, j)
                if tsr < config.t1:
                    continue
                if chunk_tokens is None:
                    chunk_tokens = tokens(chunk)
                references_tokens = tokens_of[index]
                if references_tokens is None:
                    references_tokens = tokens_of[index] = [tokens(reference) for reference in row_references]
                decided = _stage_two(chunk, reference, chunk_tokens, references_tokens[j], config)
                if decided is not None:
                    figures = {"tsr": tsr, **decided}
                    found = HitAtKResult(1.0, config, None, (wave, j), len(row_chunks), (chunk, reference), figures)
                    break
            at += len(row_references)
            if found is not None:
                results[index] = found
            elif wave + 1 < len(row_chunks):
                next_wave.append(index)
            else:
                results[index] = _miss(config, row_chunks, row_references, best[index])
        undecided = next_wave
        wave += 1
    return [result for result in results if result is not None]


def _stage_two(
    chunk: str, reference: str, chunk_tokens: frozenset[str], reference_tokens: frozenset[str], config: HitAtKConfig
) -> dict[str, float] | None:
    """The figures that passed stage 2, or None. Overlap first: it is cheap."""
    shared = overlap_of(chunk_tokens, reference_tokens)
    if shared >= config.coverage:
        return {"ov": shared}
    partial = fuzz.partial_ratio(chunk, reference) / 100.0
    if partial >= config.t2:
        return {"ov": shared, "pr": partial}
    return None


def _broken(config: HitAtKConfig) -> HitAtKResult:
    return HitAtKResult(None, config, explain_no_references(config))


def explain_no_references(config: HitAtKConfig | None = None) -> str:
    """Why a row without reference contexts has no score, in the configured language."""
    language = config.language if config is not None and config.language in _MESSAGES else "en"
    return _MESSAGES[language]["broken"]


def _miss(config: HitAtKConfig, chunks: list[str], references: list[str], best: tuple[float, int, int] | None) -> HitAtKResult:
    if best is None:
        return HitAtKResult(0.0, config, None, None, len(chunks))
    tsr, i, j = best
    return HitAtKResult(0.0, config, None, (i, j), len(chunks), (chunks[i], references[j]), {"tsr": tsr})


# ---------------------------------------------------------------- explanations

_MESSAGES: dict[str, dict[str, str]] = {
    "en": {
        "hit": "hit: retrieved chunk {chunk} of the top {k} matches reference context {reference} "
        "(token-set ratio {tsr} ≥ {t1}; partial ratio {pr}, token overlap {ov}; "
        "stage 2 needs partial ratio ≥ {t2} or overlap ≥ {coverage})",
        "miss": "no hit in the top {k}: the closest pair, retrieved chunk {chunk} and reference context {reference}, "
        "has token-set ratio {tsr}, partial ratio {pr}, token overlap {ov} "
        "(a hit needs token-set ratio ≥ {t1}, then partial ratio ≥ {t2} or overlap ≥ {coverage})",
        "empty": "no hit: nothing was retrieved, so no chunk can match a reference context",
        "broken": "no reference contexts: there is nothing to compare the retrieved chunks against; "
        "add the expected evidence to reference_contexts",
    },
    "de": {
        "hit": "Treffer: abgerufener Abschnitt {chunk} der Top {k} passt zu Referenzkontext {reference} "
        "(Token-Set-Ratio {tsr} ≥ {t1}; Partial-Ratio {pr}, Token-Überdeckung {ov}; "
        "Stufe 2 verlangt Partial-Ratio ≥ {t2} oder Überdeckung ≥ {coverage})",
        "miss": "kein Treffer in den Top {k}: das ähnlichste Paar, abgerufener Abschnitt {chunk} und "
        "Referenzkontext {reference}, hat Token-Set-Ratio {tsr}, Partial-Ratio {pr}, Token-Überdeckung {ov} "
        "(ein Treffer verlangt Token-Set-Ratio ≥ {t1}, dann Partial-Ratio ≥ {t2} oder Überdeckung ≥ {coverage})",
        "empty": "kein Treffer: es wurde nichts abgerufen, also kann kein Abschnitt zu einem Referenzkontext passen",
        "broken": "keine Referenzkontexte: es gibt nichts, womit die abgerufenen Abschnitte verglichen werden "
        "könnten; tragen Sie die erwarteten Belege in reference_contexts ein",
    },
    "fr": {
        "hit": "trouvé : le passage récupéré {chunk} du top {k} correspond au contexte de référence {reference} "
        "(ratio token-set {tsr} ≥ {t1} ; ratio partiel {pr}, recouvrement des mots {ov} ; "
        "l'étape 2 exige un ratio partiel ≥ {t2} ou un recouvrement ≥ {coverage})",
        "miss": "aucun passage trouvé dans le top {k} : la paire la plus proche, passage récupéré {chunk} et "
        "contexte de référence {reference}, a un ratio token-set de {tsr}, un ratio partiel de {pr} et un "
        "recouvrement des mots de {ov} (il faut un ratio token-set ≥ {t1}, puis un ratio partiel ≥ {t2} "
        "ou un recouvrement ≥ {coverage})",
        "empty": "aucun passage trouvé : rien n'a été récupéré, aucun passage ne peut donc correspondre à un "
        "contexte de référence",
        "broken": "aucun contexte de référence : rien à quoi comparer les passages récupérés ; ajoutez les "
        "preuves attendues dans reference_contexts",
    },
}


# In place of a partial ratio that was not computed (see FOR_SHOW_UP_TO).
_NOT_COMPUTED = {
    "en": "— (not computed: the texts are long, and it did not decide)",
    "de": "— (nicht berechnet: die Texte sind lang, und sie hat nicht entschieden)",
    "fr": "— (non calculé : les textes sont longs, et il n'a pas décidé)",
}


# Decimals a figure is written with at most: past these a figure and its
# threshold are one number for every purpose.
_MAX_DECIMALS = 9


def _decimals(value: float) -> str:
    """``value`` with two decimals, or as many more as it takes to be exact (a
    threshold of 0.695 is not written 0.69 or 0.70)."""
    for decimals in range(2, _MAX_DECIMALS + 1):
        text = f"{value:.{decimals}f}"
        if float(text) == value:
            return text
    return repr(float(value))


def _beside(value: float, threshold: float) -> str:
    """``value`` with two decimals, or as many more as it takes to stay on its
    side of ``threshold``: 0.697 beside a threshold of 0.7 is written 0.697, never
    0.70, which would read as a pass."""
    below = value < threshold
    for decimals in range(2, _MAX_DECIMALS + 1):
        text = f"{value:.{decimals}f}"
        if (float(text) < threshold) == below:
            return text
    return f"{value:.{_MAX_DECIMALS}f}"


def _localized(text: str, language: str) -> str:
    return text.replace(".", ",") if language in ("de", "fr") else text


def explain(result: HitAtKResult) -> str:
    """Why the row scored what it did, in the configured language (en, de or fr)."""
    config = result.config
    language = config.language if config.language in _MESSAGES else "en"
    messages = _MESSAGES[language]
    if result.broken is not None:
        return messages["broken"]
    figures = result.figures
    if figures is None:
        return messages["empty"]

    def figure(value: float, threshold: float) -> str:
        return _localized(_beside(value, threshold), language)

    def threshold(value: float) -> str:
        return _localized(_decimals(value), language)

    return messages["hit" if result.hit else "miss"].format(
        chunk=figures.chunk + 1,
        reference=figures.reference + 1,
        k=config.k,
        tsr=figure(figures.token_set_ratio, config.t1),
        pr=_NOT_COMPUTED[language] if figures.partial_ratio is None else figure(figures.partial_ratio, config.t2),
        ov=figure(figures.overlap, config.coverage),
        t1=threshold(config.t1),
        t2=threshold(config.t2),
        coverage=threshold(config.coverage),
    )
