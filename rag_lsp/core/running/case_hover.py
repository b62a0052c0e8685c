"""A case's run result as its hover shows it: the figures, the ranked hits
(relevant ones marked, those beyond `k` set apart) and what was missed, each
value with why.

Pure: no I/O, no protocol types.
"""

from __future__ import annotations

from dataclasses import dataclass

from .results import CaseResult, describe_case


# Hits listed by a case's hover.
HOVER_HITS = 20


@dataclass(frozen=True, slots=True)
class CaseRun:
    """A case's result with what it was run under (for the hover)."""

    case: CaseResult
    suite: str
    target: str | None
    match: str
    k: int | None


def hover_markdown(run: CaseRun) -> str:
    """A case's result for its hover: the figures, the ranked hits (relevant ones
    marked, those beyond `k` set apart, an expected one among them named) and
    what was missed, each value with why."""
    case = run.case
    expected = case.answer.ranks if case.answer is not None else {}
    header = f"**Run result** · suite `{run.suite}`" + (f" · target `{run.target}`" if run.target else "")
    header += f" · match `{run.match}`" + (f" · k {run.k}" if run.k is not None else "")
    parts = [header, describe_case(case)]
    if case.hits:
        relevant = set(case.relevant_ranks)
        rows = []
        for rank, hit in enumerate(case.hits[:HOVER_HITS], 1):
            value = getattr(hit, run.match, None)
            label = f"`{value}`" if value is not None else f"*(no {run.match})*"
            extra = [f"score {hit.score:.3g}"] if hit.score is not None else []
            if run.match != "corpus" and hit.corpus is not None:
                extra.append(f"corpus {hit.corpus}")
            note = ""
            if rank in relevant:
                label = f"**{label}**"
                note = " — ✓ relevant"
            elif run.k is not None and rank > run.k:
                note = f" — beyond k = {run.k}, not scored"
                if value in expected:
                    note += " (expected: counted as missed)"
            rows.append(f"{rank}. {label}" + (f" ({', '.join(extra)})" if extra else "") + note)
        if len(case.hits) > HOVER_HITS:
            rows.append(f"… and {len(case.hits) - HOVER_HITS:,} more hits")
        parts.append(f"**Hits** ({case.mode or 'no'} mode):\n\n" + "\n".join(rows))
    elif case.scores is not None:
        parts.append("No hits came back.")
    if case.missed:
        if len(case.why_missed) == len(case.missed):
            missed = [f"`{miss.value}` ({miss.message})" for miss in case.why_missed]
        else:
            missed = [f"`{value}`" for value in case.missed]
        parts.append("**Missed:** " + ", ".join(missed))
    return "\n\n".join(parts)
