"""Run results placed in files: what a run shows, and where.

A run (:mod:`.runner`) answers with a :class:`~.runner.SuiteResult`. An editor
shows it in two files: each case's result on its dataset line (RAG400 figures,
RAG401 broken, RAG402 keyword fallback, RAG405 target failure), and the suite's
verdict in the suite file (RAG403 / RAG404 on each threshold's key, RAG401 on
`match` when the hits lack that field, RAG405 on the target when the suite could
not reach it). Each of those is a :class:`Mark`: a code, a place on one line, a
message, and the code-lens title and hover (:mod:`.case_hover`) the line shows
after the run. One file's marks follow its edits in :mod:`.line_marks`.

Pure: no I/O, no protocol types; columns are code points.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, Iterable, Mapping


from .case_hover import CaseRun
from .compare import compare_case, compare_figures, compare_suite
from .comparison import (
    CaseChange,
    Direction,
    default_direction,
    describe_hits,
    describe_significance,
    keyed,
    vs_baseline,
)
from ..reading.findings import Severity
from .report import RunFigures, SuiteFigures
from .results import (
    BROKEN_CASE,
    CASE_RESULT,
    HIT_AT_K,
    KEYWORD_FALLBACK,
    RESULT_CODES,
    TARGET_FAILED,
    THRESHOLD_FAILED,
    THRESHOLD_MET,
    UNKNOWN_TARGET,
    CaseResult,
    SuiteResult,
    describe_case,
    describe_threshold,
)
from .scorer import MRR, RECALL, SEMANTIC, label
from ..reading.text import LineIndex
from ..reading.wording import counted
from ..workspace.suitefacts import SuiteInfo


# What a new run replaces: the marks of the cases it ran, or every mark of its suite.
CASE = "case"
SUITE = "suite"



@lru_cache(maxsize=1)
def _severities() -> dict[str, Severity]:
    """The severity of each code a mark can have, as its rule declares it."""
    from ..checking.rules import all_rules

    rules = all_rules()
    return {code: rules[code].severity for code in RESULT_CODES}


_TITLE_REASON = 60


@dataclass(frozen=True, slots=True, eq=False)
class Mark:
    """One run result on one line of a file. Compared and hashed by identity."""

    # The suite the run was of (see selection.suite_key), and what a new run replaces.
    suite: str
    scope: str
    # RAG400–RAG405, or None for a mark only the code lens shows (a suite's verdict).
    code: str | None
    start: int
    end: int
    message: str
    # The line's text the result was computed from.
    text: str
    lens: str | None = None
    run: CaseRun | None = None
    # The lines the result was computed from, from its own down: a suite's verdict
    # covers its suite's lines, and an edit of any of them (a threshold, an
    # option) makes every result of that run stale.
    lines: int = 1

    @property
    def severity(self) -> Severity | None:
        return _severities().get(self.code) if self.code is not None else None


def case_id_of(line_text: str, gdi: bool = False) -> str | None:
    """The id the runner gives the case on this dataset line: its ``id`` (``input_id``
    for a gdi_text_v1 row), else ``line N`` (the runner's name for a line without one);
    None for a blank line."""
    if not line_text.strip():
        return None
    try:
        value = json.loads(line_text)
    except (ValueError, RecursionError):
        return None
    key = "input_id" if gdi else "id"
    found = value.get(key) if isinstance(value, dict) else None
    return found if isinstance(found, str) and found else None


_ID_KEY = {False: re.compile(r'"id"\s*:\s*'), True: re.compile(r'"input_id"\s*:\s*')}


def id_span(line_text: str, case_id: str, gdi: bool = False) -> tuple[int, int]:
    """Where a case's id value is on its line (the quoted string), else the line's content."""
    written = json.dumps(case_id)
    if not gdi and line_text.startswith('{"id": ' + written):  # the usual line: the id first
        return 7, 7 + len(written)
    forms = {json.dumps(case_id, ensure_ascii=False), written}
    for key in _ID_KEY[gdi].finditer(line_text):
        start = key.end()
        for form in forms:
            if line_text.startswith(form, start):
                return start, start + len(form)
    stripped = line_text.rstrip()
    start = len(stripped) - len(stripped.lstrip())
    return start, max(start, len(stripped))


# ---------------------------------------------------------------- titles


def _short(text: str | None, limit: int = _TITLE_REASON) -> str:
    text = (text or "").strip().split("; ")[0]
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _carry_no_field(case: CaseResult, match: str, k: int | None) -> bool:
    considered = case.hits[:k] if k is not None else case.hits
    return bool(considered) and all(getattr(hit, match, None) is None for hit in considered)


def case_title(case: CaseResult, match: str = "path", k: int | None = None, versus: Callable[[str], str] = lambda _: "") -> str:
    """The lens title of a case that ran: ``recall 0.50 · MRR 0.33`` (with a
    baseline ``recall 0.50 (−0.50 vs baseline) · MRR 0.33``),
    ``broken: hits carry no path field``, ``target failed: …``."""
    scores = case.scores
    if scores is not None:
        if HIT_AT_K in scores:
            return _beside(f"hit@k {scores[HIT_AT_K]:g}", versus(HIT_AT_K))
        parts = []
        if RECALL in scores:
            parts.append(_beside(f"recall {scores[RECALL]:.2f}", versus(RECALL)))
        if MRR in scores:
            parts.append(_beside(f"MRR {scores[MRR]:.2f}", versus(MRR)))
        return " · ".join(parts) or "scored"
    if case.code == TARGET_FAILED:
        return "target failed: " + _short(case.reason)
    if _carry_no_field(case, match, k):
        return f"broken: hits carry no {match} field"
    if (case.reason or "").startswith("nothing relevant declared"):
        return "broken: nothing relevant declared"
    return "broken: " + _short(case.reason)


def _beside(text: str, note: str) -> str:
    return f"{text} ({note})" if note else text


def _figures(aggregates: dict[str, float], versus: Callable[[str], str]) -> str:
    parts = []
    for metric in (RECALL, MRR, HIT_AT_K):
        if metric in aggregates:
            parts.append(_beside(f"{label(metric)} {aggregates[metric]:.2f}", versus(metric)))
    return " · ".join(parts)


def _cases(count: int) -> str:
    return counted(count, "case")


def suite_title(result: SuiteResult, versus: Callable[[str], str] = lambda _: "") -> str:
    """The lens title of a suite that ran: ``passed · recall 0.96 · MRR 0.90 (10 cases)``
    (with a baseline ``passed · recall 0.96 (+0.02 vs baseline) · MRR 0.90 (10 cases)``)."""
    if result.reason is not None:
        return "not run: " + _short(result.reason.removeprefix("not run: "))
    total = len(result.cases)
    if result.cancelled:
        return f"cancelled after {_cases(total)}"
    broken = total - result.scored
    if broken:
        head = f"broken: {broken:,} of {_cases(total)}"
    elif result.passed:
        head = "passed"
    else:
        failed = [threshold for threshold in result.thresholds if not threshold.passed]
        head = "failed: " + ", ".join(describe_threshold(threshold) for threshold in failed[:2])
    figures = _figures(result.aggregates, versus)
    return head + (f" · {figures}" if figures else "") + f" ({_cases(total)})"


# ---------------------------------------------------------------- against a baseline


@dataclass(frozen=True)
class Baseline:
    """A previous run report (``ragLsp.baseline``) as a run's marks read it: each
    figure is shown with how far it moved since (``recall 0.50 (−0.50 vs
    baseline)``), and what a case lost or gained is named."""

    report: RunFigures
    direction: Direction = default_direction

    def suite(self, suite_id: str | None) -> SuiteFigures | None:
        return keyed(self.report.suites).get(suite_id) if suite_id is not None else None


def _versus(
    figures: Mapping[str, float | None] | None, current: Mapping[str, float] | None, direction: Direction
) -> Callable[[str], str]:
    """``versus(metric)``: ``−0.50 vs baseline`` for a figure that moved, "" otherwise."""
    deltas = {delta.metric: delta for delta in compare_figures(figures, current, direction)}
    return lambda metric: vs_baseline(deltas.get(metric))


def _how_sure(before: Any, result: SuiteResult, direction: Direction) -> Callable[[str], str]:
    """``how_sure(metric)``: how sure the suite mean's move since the baseline is
    (``+0.10 recall (95% CI −0.05 to +0.25, p = 0.37, 2 better, 1 worse): not
    distinguishable from noise on 10 cases``), computed when first asked."""
    said: dict[str, str] = {}

    def how_sure(metric: str) -> str:
        if not said:
            said.update((delta.metric, describe_significance(delta)) for delta in compare_suite(before, result, direction).aggregates)
            said.setdefault("", "")
        return said.get(metric, "")

    return how_sure


def _case_tail(change: CaseChange | None) -> str:
    """What a case's message adds after its figures about the baseline."""
    if change is None:
        return " — not in the baseline"
    if change.broken is not None and change.baseline_scores is not None:
        known = {metric: value for metric, value in change.baseline_scores.items() if value is not None}
        scored = _figures(known, lambda _: "")
        return f" — the baseline scored it: {scored}" if scored else " — the baseline scored it"
    if change.baseline_broken is not None:
        return f" — broken in the baseline: {change.baseline_broken}"
    # The case's own result says why each value it lost is missed now.
    hits = describe_hits(change, why_now=False)
    if hits:
        return f" — vs baseline: {hits}"
    return " — same as the baseline" if not change.changed else ""


# ---------------------------------------------------------------- marks of a run


def case_marks(
    result: SuiteResult,
    suite: SuiteInfo,
    key: str,
    line_text: Callable[[int], str],
    lines: Iterable[int] | None = None,
    baseline: Baseline | None = None,
    named: bool = False,
) -> list[tuple[int, Mark]]:
    """Each case's marks on its dataset line (only on ``lines`` when given), with
    each case's figures against the same case in ``baseline`` when one is given;
    ``named``: each message starts with the suite's id (several suites read the
    dataset, and their results share its lines)."""
    wanted = set(lines) if lines is not None else None
    gdi = suite.scores_metrics_only
    before = baseline.suite(result.id) if baseline is not None else None
    before_cases = keyed(before.cases) if before is not None else {}
    placed: list[tuple[int, Mark]] = []
    for case in result.cases:
        line = case.line
        if wanted is not None and line not in wanted:
            continue
        text = line_text(line)
        start, end = id_span(text, case.id, gdi)
        run = CaseRun(case, suite.id or "?", suite.target, suite.match, suite.k)
        versus: Callable[[str], str] = lambda _: ""
        tail = ""
        if baseline is not None:
            old = before_cases.get(case.id)
            change = compare_case(old, case, baseline.direction) if old is not None else None
            versus = _versus(old.scores if old is not None else None, case.scores, baseline.direction)
            tail = _case_tail(change)
        title = case_title(case, suite.match, suite.k, versus)
        message = describe_case(case, versus) + tail
        if named:
            message = f"{suite.id or '?'}: {message}"
        if case.scores is not None:
            placed.append((line, Mark(key, CASE, CASE_RESULT, start, end, message, text, title, run)))
            semantic = case.scores.get(SEMANTIC)
            if semantic is not None and semantic < 1:
                placed.append((line, Mark(key, CASE, KEYWORD_FALLBACK, start, end, _fallback(case), text)))
        else:
            code = case.code or BROKEN_CASE
            placed.append((line, Mark(key, CASE, code, start, end, message, text, title, run)))
    return placed


def _fallback(case: CaseResult) -> str:
    answered = f"`mode: {case.mode}`" if case.mode else "no `mode`"
    return (
        f"keyword fallback: the target answered {answered}, so rag.mode.semantic is 0 for this case; "
        "these figures describe a keyword search, not the semantic search the suite measures"
    )


def refusal_marks(
    result: SuiteResult, key: str, line_text: Callable[[int], str], lines: Iterable[int], gdi: bool = False
) -> list[tuple[int, Mark]]:
    """A suite that was not run, on each of ``lines`` (the cases asked for): RAG405
    when its target was refused or unreachable (untrusted, not configured), else
    only the lens says why (its suite file's own findings show the errors)."""
    code = TARGET_FAILED if _target_refusal(result) else None
    message = result.error or ""
    placed = []
    for line in lines:
        text = line_text(line)
        start, end = id_span(text, case_id_of(text, gdi) or "", gdi)
        title = "not run: " + _short((result.reason or "").removeprefix("not run: "))
        placed.append((line, Mark(key, CASE, code, start, end, message, text, title)))
    return placed


def _target_refusal(result: SuiteResult) -> bool:
    """Whether the suite was not run for its target (refused, unreachable, or not configured)."""
    return not result.findings and result.error_code in (TARGET_FAILED, UNKNOWN_TARGET)


def suite_marks(
    result: SuiteResult, suite: SuiteInfo, key: str, lines: LineIndex, baseline: Baseline | None = None
) -> list[tuple[int, Mark]]:
    """A suite run's marks in its suite file: its verdict (lens) on its first line,
    RAG403 / RAG404 on each threshold's key, RAG401 on `match` when hits lack that
    field, RAG405 on the target when the suite could not reach it. With a
    ``baseline``, the verdict and each threshold show how far the suite's means moved."""
    placed: list[tuple[int, Mark]] = []
    versus: Callable[[str], str] = lambda _: ""
    how_sure: Callable[[str], str] = lambda _: ""
    new_suite = ""
    if baseline is not None:
        before = baseline.suite(result.id)
        if before is None:
            new_suite = " · not in the baseline"
        else:
            versus = _versus(before.aggregates, result.aggregates, baseline.direction)
            how_sure = _how_sure(before, result, baseline.direction)

    def mark(start: int, end: int, code: str | None, message: str, lens: str | None = None, covered: int = 1) -> None:
        position = lines.position(start)
        text = lines.line_text(position.line)
        stop = lines.position(end)
        end_character = stop.character if stop.line == position.line else len(text)
        placed.append(
            (position.line, Mark(key, SUITE, code, position.character, end_character, message, text, lens, lines=covered))
        )

    first = suite.node.start
    # The verdict covers the suite's lines: editing any of them makes it stale.
    covered = lines.position(max(first, suite.node.end - 1)).line - lines.position(first).line + 1
    mark(first, first, None, "", suite_title(result, versus) + new_suite, covered)
    if result.error is not None:
        if _target_refusal(result):
            # Its target's id; a target written as no mapping, itself.
            target = suite.node.get("target")
            named = suite.target_id_node if target is None or target.is_map else target
            node = named or suite.node.get("id") or suite.node
            mark(node.start, node.end, TARGET_FAILED, result.error)
        return placed
    if not result.cancelled:
        scored = result.scored
        broken = len(result.cases) - scored
        for threshold in result.thresholds:
            span = result.threshold_spans.get(threshold.metric)
            if span is None:
                continue
            message = describe_threshold(threshold)
            moved = versus(threshold.metric)
            if moved:
                message += f" ({moved})"
            if threshold.value is not None:
                message += f" (mean over {counted(scored, 'scored case')})"
            if moved:
                # Whether the move is real or noise, over the cases both runs scored.
                sure = how_sure(threshold.metric)
                message += f"; {sure}" if sure else ""
            if broken:
                message += f"; the suite fails as broken: {broken:,} of {_cases(len(result.cases))} have no figures"
            mark(span[0], span[1], THRESHOLD_MET if threshold.passed else THRESHOLD_FAILED, message)
    lacking = [case for case in result.cases if case.scores is None and case.code == BROKEN_CASE and _carry_no_field(case, suite.match, suite.k)]
    if lacking:
        node = suite.match_node
        carried = sorted({name for case in lacking for hit in case.hits for name in ("path", "id", "corpus") if getattr(hit, name, None) is not None})
        carry = f"they carry {', '.join(carried)}" if carried else "they carry none of path, id, corpus"
        message = (
            f"{len(lacking):,} of {_cases(len(result.cases))} broken: the hits carry no `{suite.match}` field ({carry}); "
            "set options.rag.match to a field the target's hits carry"
        )
        target = node or suite.node.get("id") or suite.node
        mark(target.start, target.end, BROKEN_CASE, message)
    return placed
