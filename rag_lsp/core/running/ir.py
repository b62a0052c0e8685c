"""The ``ir`` engine: trec_eval's measures on a rag case's hits, by ir-measures.

A suite that lists engine ``ir`` gets, per case, the measures IR work reports,
under ir-measures' names with the prefix ``ir.``: ``ir.nDCG@10``, ``ir.AP``,
``ir.P@5``, ``ir.R@100``, ``ir.RR``, ``ir.Judged@10``. They are computed by
ir-measures (which runs trec_eval's own code, through pytrec_eval, for all but
Judged@k), never here: a figure named nDCG@10 is trec_eval's nDCG@10.

What a case gives them:

* the **qrels**: each distinct value of ``expect.relevant``, judged with its grade
  from ``expect.grades`` (1 when it has none; grade 0 is judged not relevant);
* the **run**: the considered hits (the first ``k``, all when unset), each at its
  rank, as the document its ``match`` field names, scored ``n, n − 1, …`` so
  that every tool ranks them as the target did. A hit without the field, or one
  naming a value an earlier hit named, keeps its rank as a document no judgment
  names: trec_eval holds a document once, and moving the hits below it up a rank
  would credit the target with an answer it did not give.

Documents are given to ir-measures under ids of their own (``d0``, ``d1``, …; ``u3``
for the unjudged hit at rank 3), so no value a dataset holds (spaces, NUL, a
value like ``u3``) can be read as another.

ir-measures is an optional dependency (``pip install 'rag-lsp[ir]'``): the checks
know the measures without it (:data:`MEASURE`), and a run of a suite naming the
engine says how to install it (:func:`missing_reason`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

ENGINE = "ir"
PREFIX = "ir."

#: The measures the engine computes, in ir-measures' syntax: a measure that takes
#: a cutoff is valid at any positive integer cutoff.
MEASURE = re.compile(r"(?:nDCG|AP|RR)(?:@[1-9][0-9]*)?|(?:P|R|Judged)@[1-9][0-9]*")

#: The measures a suite that names none gets: what BEIR and MTEB report first,
#: and the two every IR paper does.
DEFAULT_MEASURES = ("nDCG@10", "AP", "RR")

INSTALL_HINT = "pip install 'rag-lsp[ir]'"


def is_measure(name: str) -> bool:
    """Whether ``name`` (without the prefix) is a measure the engine computes."""
    return MEASURE.fullmatch(name) is not None


def metric_name(measure: str) -> str:
    """The metric a suite thresholds for ``measure``: ``nDCG@10`` -> ``ir.nDCG@10``."""
    return PREFIX + measure


def measure_of(metric: str) -> str | None:
    """The measure a metric name names (``ir.nDCG@10`` -> ``nDCG@10``), or None
    when it names none the engine computes."""
    if not metric.startswith(PREFIX):
        return None
    measure = metric[len(PREFIX):]
    return measure if is_measure(measure) else None


def suite_measures(listed: Iterable[Any] | None, thresholded: Iterable[str]) -> tuple[str, ...]:
    """The measures a suite's cases get: those ``options.ir.measures`` lists (the
    defaults when it lists none), then those its thresholds name, each once and
    in that order. Names that are no measure are left out (RAG108 and RAG101
    report them, and such a suite is not run)."""
    chosen = list(DEFAULT_MEASURES) if listed is None else [name for name in listed if isinstance(name, str)]
    chosen += [measure for metric in thresholded if (measure := measure_of(metric)) is not None]
    return tuple(dict.fromkeys(name for name in chosen if is_measure(name)))


def missing_reason() -> str | None:
    """Why the engine cannot run here (ir-measures is not installed, with how to
    install it), or None when it can."""
    try:
        import ir_measures  # noqa: F401
    except ImportError as error:
        return (
            f"engine 'ir' needs the ir-measures package, which is not installed ({error}); "
            f"install it with `{INSTALL_HINT}`"
        )
    return None


@dataclass(slots=True)
class Judged:
    """One case as ir-measures reads it: the grade of each distinct expected
    value, and the ``match`` field of each considered hit in rank order (None
    where a hit has no such field)."""

    grades: dict[str, int]
    values: Sequence[str | None]


def judgments(relevant: Sequence[str], grades: Mapping[str, Any] | None) -> dict[str, int]:
    """The grade of each distinct value of ``relevant``: its ``expect.grades``
    entry when that is an integer, else 1. A grade for a value not listed in
    ``relevant`` is not a judgment (the schema says grades grade listed values)."""
    given = grades if isinstance(grades, Mapping) else {}
    judged: dict[str, int] = {}
    for value in relevant:
        if value in judged:
            continue
        grade = given.get(value, 1)
        judged[value] = grade if type(grade) is int else 1
    return judged


def qrels_and_run(cases: Sequence[Judged]) -> tuple[list[tuple[str, str, int]], list[tuple[str, str, float]]]:
    """The qrels ``(query, doc, grade)`` and run ``(query, doc, score)`` of
    ``cases``, the i-th case as query ``str(i)`` (see the module's docstring)."""
    qrels: list[tuple[str, str, int]] = []
    run: list[tuple[str, str, float]] = []
    for index, case in enumerate(cases):
        query = str(index)
        ids = {value: f"d{number}" for number, value in enumerate(case.grades)}
        qrels += [(query, ids[value], grade) for value, grade in case.grades.items()]
        seen: set[str] = set()
        count = len(case.values)
        for rank, value in enumerate(case.values, 1):
            if value is None or value in seen:
                doc = f"u{rank}"
            else:
                seen.add(value)
                doc = ids.get(value) or f"u{rank}"
            run.append((query, doc, float(count - rank + 1)))
    return qrels, run


def score_ir(cases: Sequence[Judged], measures: Sequence[str]) -> list[dict[str, float]]:
    """Each case's figures, ``{"ir.<measure>": value}``, computed by ir-measures.

    A case with no hits scores 0 on every measure, as trec_eval's ``-c`` counts a
    query the run does not answer. Raises ImportError when ir-measures is not
    installed (see :func:`missing_reason`).
    """
    import ir_measures

    if not cases or not measures:
        return [{} for _ in cases]
    parsed = {ir_measures.parse_measure(name): metric_name(name) for name in measures}
    qrels, run = qrels_and_run(cases)
    figures: list[dict[str, float]] = [dict.fromkeys(parsed.values(), 0.0) for _ in cases]
    named = {str(measure): metric for measure, metric in parsed.items()}
    for found in ir_measures.iter_calc(
        list(parsed),
        [ir_measures.Qrel(*judgment) for judgment in qrels],
        [ir_measures.ScoredDoc(*scored) for scored in run],
    ):
        figures[int(found.query_id)][named[str(found.measure)]] = float(found.value)
    return figures


def score_ir_at(cases: Sequence[Judged], measures: Sequence[str], ks: Sequence[int]) -> dict[int, list[dict[str, float]]]:
    """Each case's figures at each k of ``ks``: the measures on its first k hits."""
    return {k: score_ir([Judged(case.grades, case.values[:k]) for case in cases], measures) for k in ks}
