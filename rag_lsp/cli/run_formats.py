"""Output formats of ``rag-lsp run``: text, json, junit, trec.

* ``text``: per suite, a table of its cases (recall, precision, MRR, hit@1, what
  was missed) and its means against its thresholds, coloured on a terminal (rich;
  ``NO_COLOR`` is honoured). A suite of more than 50 cases lists its 50 weakest
  (broken first, then by recall and MRR); ``--format json`` lists every case.
* ``json``: SPEC §6's keys: ``{"suites": [{"id", "passed", "broken", "aggregates",
  "thresholds": [{"metric", "threshold", "value", "passed"}], "cases": [{"id",
  "scores", "broken", "missed", "first_relevant_rank", "mode"}]}]}``, and beside
  them: per suite ``error`` (why it was not run, or null) and ``metrics`` (the
  scoring metadata of each metric's config: ``{"rag.hit_at_k": {"inverted",
  "min", "max", "weight", "metric_name"}}``); per case ``ranks``
  (each expected value that came back -> the rank of its first hit within k, what
  ``--baseline`` needs to name a lost hit and the rank it had), ``why_missed``
  (one ``{"value", "reason", "rank", "message"}`` per value of ``missed``: see
  :class:`~..core.scorer.Miss`) and ``answer`` (``{"hits", "ranks",
  "first_with_field"}``: every rank of each expected value in the target's whole
  answer, not only within k, so a baseline can be read at any k; null when the
  target gave no answer, see :class:`~..core.scorer.AnswerRanks`); with ``--k``,
  ``at_k`` per suite (``{"5": {metric: mean}}``) and per case (``{"5": {metric:
  value} | null}``, written on one line); with ``--by metadata.KEY``, ``slices``
  per suite (``{"metadata.KEY": {value: {"cases", "scored", "aggregates"}}}``, see
  :mod:`..core.slices`).
* ``trec``: the run in TREC run format, a line per hit within the suite's k:
  ``qid Q0 docid rank score tag``; ``qid`` is the case id, ``docid`` the hit's
  ``match`` field (a value named twice is written at its first rank: a TREC run
  holds a document once), ``score`` descends with the rank (k, k − 1, …), so every
  tool ranks as the run did, and ``tag`` is the suite id. Cases that are broken
  or whose target failed have no lines. With the qrels of :func:`format_qrels`,
  trec_eval's ``set_recall``, ``set_P`` and ``recip_rank`` (ir-measures'
  ``R@k``, ``SetP`` over the run and ``RR@k``) equal ``rag.recall``,
  ``rag.precision`` and ``rag.mrr``.
* ``junit``: JUnit XML for CI test reports: a test suite per suite, a test case
  per case (a failure when it is broken or its target failed), a test case per
  threshold (a failure when it is not met), and one for a suite that did not run.
"""

from __future__ import annotations

import io
import os
import re
import xml.etree.ElementTree as ET
from typing import Callable


from ..core.running.results import (
    BROKEN_CASE,
    HIT_AT_K,
    KEYWORD_FALLBACK,
    TARGET_FAILED,
    THRESHOLD_FAILED,
    CaseResult,
    SuiteResult,
    describe_case,
    describe_missed,
    describe_threshold,
)
from ..core.running.report import report_bytes
from ..core.running.scorer import HIT_AT_1, LABELS, MRR, PRECISION, RAG_METRICS, RECALL, RETRIEVED, SEMANTIC
from ..core.reading.wording import counted
from .outcome import Run

TABLE_ROWS = 50


# ---------------------------------------------------------------- json


def format_json(run: Run) -> bytes:
    return report_bytes([result for _, result in run.results])


# ---------------------------------------------------------------- trec


_SPACE = re.compile(r"\s")


def _trec_id(value: object) -> str:
    """An id as a TREC file can hold it: whitespace would split it, so it is
    written as "_"."""
    return _SPACE.sub("_", str(value)) or "_"


def format_trec(run: Run) -> str:
    out = io.StringIO()
    for _, result in run.results:
        match, k = run.scoring.get(id(result), ("path", None))
        tag = _trec_id(result.id)
        for case in result.cases:
            if case.scores is None:
                continue
            considered = case.hits[:k] if k is not None else case.hits
            written: list[str] = []
            seen: set[str] = set()
            for hit in considered:
                value = getattr(hit, match, None)
                if value is None or value in seen:
                    continue
                seen.add(value)
                written.append(_trec_id(value))
            qid = _trec_id(case.id)
            for rank, docid in enumerate(written, 1):
                out.write(f"{qid} Q0 {docid} {rank} {len(written) - rank + 1} {tag}\n")
    return out.getvalue()


def format_qrels(run: Run) -> str:
    """The judgments of the datasets of the suites run, as TREC qrels: ``qid 0
    docid grade`` for each expected value of each case (its grade from
    ``expect.grades``, else 1); each dataset once."""
    import orjson

    out = io.StringIO()
    done: set[tuple[str, str]] = set()
    for workspace, result in run.results:
        if not result.dataset or (str(workspace.root), result.dataset) in done:
            continue
        done.add((str(workspace.root), result.dataset))
        try:
            data = workspace.absolute(result.dataset).read_bytes()
        except OSError:
            continue
        for line in data.split(b"\n"):
            try:
                row = orjson.loads(line) if line.strip() else None
            except orjson.JSONDecodeError:
                continue
            expect = row.get("expect") if isinstance(row, dict) else None
            relevant = expect.get("relevant") if isinstance(expect, dict) else None
            if not isinstance(relevant, list) or not isinstance(row.get("id"), (str, int)):
                continue
            grades = expect.get("grades") if isinstance(expect.get("grades"), dict) else {}
            qid = _trec_id(row["id"])
            for value in dict.fromkeys(v for v in relevant if isinstance(v, str)):
                grade = grades.get(value, 1)
                grade = grade if isinstance(grade, int) and not isinstance(grade, bool) else 1
                out.write(f"{qid} 0 {_trec_id(value)} {grade}\n")
    return out.getvalue()


# ---------------------------------------------------------------- junit

# Characters XML 1.0 cannot hold, even escaped (a target may answer them).
# Characters XML 1.0 cannot hold, even as references (lone surrogates included).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_text(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def format_junit(run: Run) -> str:
    root = ET.Element("testsuites", name="rag-lsp run")
    totals = {"tests": 0, "failures": 0}
    for _, result in run.results:
        suite = ET.SubElement(root, "testsuite", name=_xml_text(result.id), file=result.file)
        tests = failures = 0
        if result.aggregates:
            properties = ET.SubElement(suite, "properties")
            for metric, value in result.aggregates.items():
                ET.SubElement(properties, "property", name=metric, value=repr(value))
        if result.error is not None:
            case = ET.SubElement(suite, "testcase", classname=_xml_text(result.id), name="(suite)")
            failure = ET.SubElement(case, "failure", message=_xml_text(result.error), type=result.error_code or BROKEN_CASE)
            failure.text = _xml_text(result.error)
            tests, failures = tests + 1, failures + 1
        for case_result in result.cases:
            attributes = {"classname": _xml_text(result.id), "name": _xml_text(case_result.id), "time": "0"}
            if result.dataset:
                attributes.update(file=result.dataset, line=str(case_result.line + 1))
            case = ET.SubElement(suite, "testcase", attributes)
            tests += 1
            described = _xml_text(describe_case(case_result))
            if case_result.scores is None:
                failures += 1
                failure = ET.SubElement(case, "failure", message=described, type=case_result.code or BROKEN_CASE)
                failure.text = described
            else:
                ET.SubElement(case, "system-out").text = described
        for threshold in result.thresholds:
            name = f"threshold {threshold.metric} {threshold.comparison} {threshold.threshold:g}"
            case = ET.SubElement(suite, "testcase", classname=_xml_text(result.id), name=name, time="0")
            tests += 1
            described = describe_threshold(threshold)
            if not threshold.passed:
                failures += 1
                ET.SubElement(case, "failure", message=described, type=THRESHOLD_FAILED).text = described
            else:
                ET.SubElement(case, "system-out").text = described
        suite.set("tests", str(tests))
        suite.set("failures", str(failures))
        suite.set("errors", "0")
        suite.set("skipped", "0")
        totals["tests"] += tests
        totals["failures"] += failures
    root.set("tests", str(totals["tests"]))
    root.set("failures", str(totals["failures"]))
    root.set("errors", "0")
    root.set("time", f"{run.seconds:.3f}")
    ET.indent(root)
    buffer = io.BytesIO()
    ET.ElementTree(root).write(buffer, encoding="utf-8", xml_declaration=True)
    return buffer.getvalue().decode("utf-8") + "\n"


# ---------------------------------------------------------------- text


def _weakest(cases: list[CaseResult]) -> list[CaseResult]:
    def key(case: CaseResult) -> tuple:
        if case.scores is None:
            return (0, 0.0, 0.0)
        return (1, case.scores.get(RECALL, case.scores.get(HIT_AT_K, 1.0)), case.scores.get(MRR, 1.0))

    return sorted(cases, key=key)[:TABLE_ROWS]


def _number(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _at(case: CaseResult, k: int, metric: str) -> float | None:
    scores = case.at_k.get(k) if case.at_k is not None else None
    return scores.get(metric) if scores is not None else None


def make_console(buffer: io.StringIO, stream=None):
    """A rich console writing into ``buffer``, coloured when ``stream`` (stdout)
    is a terminal and NO_COLOR is not set."""
    import sys

    from rich.console import Console

    terminal = (stream or sys.stdout).isatty()
    return Console(
        file=buffer,
        force_terminal=terminal and "NO_COLOR" not in os.environ,
        no_color="NO_COLOR" in os.environ or not terminal,
        # A CI log has no width: wide enough that tables of paths stay readable.
        width=None if terminal else max(120, int(os.environ.get("COLUMNS", "0") or 0)),
        highlight=False,
        # Ids, paths and messages come from datasets and targets: `[red]` or
        # `[/]` in them is text, never a style to apply.
        markup=False,
        soft_wrap=False,
    )


def format_text(run: Run, before_summary: str = "") -> str:
    """The run for people; ``before_summary``: text set before its last line (the
    comparisons of suites over one dataset), which stays the run's verdict."""
    from rich.table import Table
    from rich.text import Text

    buffer = io.StringIO()
    console = make_console(buffer)
    counts = {"passed": 0, "failed": 0, "broken": 0}
    total_cases = 0
    for _, result in run.results:
        total_cases += len(result.cases)
        verdict = "passed" if result.passed else "broken" if result.broken else "failed"
        counts[verdict] += 1
        style = {"passed": "bold green", "failed": "bold red", "broken": "bold red"}[verdict]
        mark = {"passed": "✓ passed", "failed": "✗ failed", "broken": "✗ broken"}[verdict]
        header = Text()
        header.append(f"{result.id}  ", style="bold")
        header.append(mark, style=style)
        failed = [describe_threshold(t) for t in result.thresholds if not t.passed and result.error is None]
        if failed:
            header.append(": " + "; ".join(failed), style=style)
        where = [result.file]
        if result.target:
            where.append(f"target {result.target}")
        if result.cases:
            scored = result.scored
            where.append(f"{counted(len(result.cases), 'case')}, {scored:,} scored")
        header.append("  (" + " · ".join(where) + ")", style="dim")
        console.print(header, soft_wrap=True)
        for note in result.notes:
            console.print(Text(f"  note: {note}", style="yellow"), soft_wrap=True)
        if result.error is not None:
            console.print(Text(f"  {result.error}", style="red"), soft_wrap=True)
            console.print()
            continue
        if result.cancelled:
            console.print(Text("  cancelled before every case ran", style="yellow"))
        cases = result.cases if len(result.cases) <= TABLE_ROWS else _weakest(result.cases)
        metric_suite = any(case.scores and HIT_AT_K in case.scores for case in result.cases)
        # A suite scored by the ir engine alone shows its first figures per case.
        ir_columns = [] if metric_suite else _ir_only_columns(result)
        # A sweep shows each case's recall at each k (its first ir figure, without rag).
        swept_metric = ir_columns[0] if ir_columns else RECALL
        swept_label = f"{swept_metric} " if ir_columns else "recall"
        table = Table(show_edge=True, header_style="bold", pad_edge=True)
        table.add_column("case", overflow="fold")
        if metric_suite:
            table.add_column("hit@k", justify="right")
            table.add_column("why", overflow="fold")
        else:
            for metric in ir_columns or (RECALL, PRECISION, MRR, HIT_AT_1):
                table.add_column(LABELS.get(metric, metric), justify="right")
            # A sweep: the case's recall at each k (every figure at each k is in
            # the means below and in --format json).
            for k in result.ks:
                table.add_column(f"{swept_label}@{k}", justify="right", style="cyan")
            table.add_column("missed", overflow="fold")
        for case in cases:
            swept = [_number(_at(case, k, swept_metric)) for k in result.ks] if not metric_suite else []
            if case.scores is None:
                label = "target failed" if case.code == TARGET_FAILED else "broken"
                reason = Text(f"{label}: {case.broken}", style="red")
                if metric_suite:
                    table.add_row(case.id, Text("—", style="red"), reason)
                else:
                    table.add_row(case.id, *(Text("—", style="red") for _ in range(len(ir_columns) or 4)), *swept, reason)
                continue
            scores = case.scores
            if metric_suite:
                explanation = getattr(case.detail, "explanation", "")
                table.add_row(case.id, _number(scores.get(HIT_AT_K)), explanation)
                continue
            if ir_columns:
                cells = [_number(scores.get(metric)) for metric in ir_columns]
                table.add_row(case.id, *cells, *swept, Text(describe_missed(case), style="yellow"))
                continue
            recall = scores.get(RECALL)
            cells = [
                Text(_number(recall), style="yellow" if recall is not None and recall < 1 else ""),
                _number(scores.get(PRECISION)),
                _number(scores.get(MRR)),
                f"{scores.get(HIT_AT_1, 0):g}",
            ]
            table.add_row(case.id, *cells, *swept, Text(describe_missed(case), style="yellow"))
        if result.cases:
            console.print(table)
        if len(result.cases) > TABLE_ROWS:
            hidden = len(result.cases) - TABLE_ROWS
            console.print(Text(f"  the {TABLE_ROWS} weakest of {len(result.cases):,} cases; {hidden:,} more not shown "
                               "(--format json lists every case)", style="dim"))
        _print_means(console, result)
        _print_slices(console, result)
        console.print()
    buffer.write(before_summary)
    summary = Text()
    parts = [f"{counts[name]:,} {name}" for name in ("passed", "failed", "broken") if counts[name]]
    summary.append(", ".join(parts), style="bold green" if run.passed else "bold red")
    suites = len(run.results)
    summary.append(f" ({counted(suites, 'suite')}, {counted(total_cases, 'case')}, {run.seconds:.2f} s)")
    console.print(summary)
    return buffer.getvalue()


# The means a slice table shows (the json report has every one).
SLICE_COLUMNS = 6


def _print_slices(console, result: SuiteResult) -> None:
    """A table per ``--by``: each slice with its case count and means (the
    suite's thresholded metrics first, counters left out), the suite's own
    means as the first row to read the slices against."""
    from rich.table import Table
    from rich.text import Text

    thresholded = {threshold.metric for threshold in result.thresholds}
    ordered = [name for name in result.aggregates if name != RETRIEVED]
    # The thresholded means first to be kept, then the others, shown in the suite's order.
    kept = set(sorted(ordered, key=lambda name: name not in thresholded)[:SLICE_COLUMNS])
    columns = [name for name in ordered if name in kept]
    for by, parts in result.slices.items():
        console.print(Text(f"  by {by}", style="bold"))
        table = Table(box=None, show_header=True, header_style="bold", pad_edge=True, padding=(0, 1, 0, 2))
        table.add_column("slice", overflow="fold")
        table.add_column("cases", justify="right")
        for name in columns:
            table.add_column(LABELS.get(name, name), justify="right")
        table.add_row(Text("(all)", style="dim"), f"{len(result.cases):,}", *(_number(result.aggregates.get(name)) for name in columns))
        for value, part in parts.items():
            cases = f"{part.cases:,}" if part.scored == part.cases else f"{part.cases:,} ({part.scored:,} scored)"
            table.add_row(value, cases, *(_number(part.aggregates.get(name)) for name in columns))
        console.print(table)


def _ir_only_columns(result: SuiteResult) -> list[str]:
    """The ir figures a case table shows (the first four) when the suite's cases
    have no rag figures; empty otherwise."""
    scored = next((case.scores for case in result.cases if case.scores), None)
    if scored is None or RECALL in scored:
        return []
    return [metric for metric in scored if metric.startswith("ir.")][:4]


def _print_means(console, result: SuiteResult) -> None:
    from rich.table import Table
    from rich.text import Text

    thresholds = {threshold.metric: threshold for threshold in result.thresholds}
    names = [name for name in (*RAG_METRICS, HIT_AT_K) if name in result.aggregates or name in thresholds]
    # Then the other figures (the ir engine's, in the order the suite chose them).
    names = list(dict.fromkeys((*names, *result.aggregates, *thresholds)))
    if not names:
        return
    table = Table(box=None, show_header=True, header_style="bold", pad_edge=True, padding=(0, 1, 0, 2))
    table.add_column("metric")
    table.add_column("mean", justify="right")
    table.add_column("threshold", justify="right")
    table.add_column("")
    # A sweep: a column of means per k (the thresholds hold at the suite's own k).
    for k in result.ks:
        table.add_column(f"@{k}", justify="right", style="cyan")
    for name in names:
        value = result.aggregates.get(name)
        threshold = thresholds.get(name)
        swept = [_number(result.at_k.get(k, {}).get(name)) for k in result.ks]
        if threshold is None:
            note = Text("counter" if name == RETRIEVED else "", style="dim")
            table.add_row(name, _number(value), "", note, *swept)
            continue
        bound = f"{threshold.comparison} {threshold.threshold:g}"
        if threshold.passed:
            table.add_row(name, _number(value), bound, Text("✓ met", style="green"), *swept)
        else:
            why = "no scored case" if value is None else "✗ not met"
            red = "bold red"
            table.add_row(Text(name, style=red), Text(_number(value), style=red), bound, Text(why, style=red), *swept)
    console.print(table)
    if result.ks:
        console.print(
            Text(
                f"  @k: the means over the first k hits of the same answers (k = {', '.join(map(str, result.ks))}); "
                "thresholds are checked at the suite's own k",
                style="dim",
            ),
            soft_wrap=True,
        )
    scored = result.scored
    broken = len(result.cases) - scored
    note = f"  means over {counted(scored, 'scored case')}"
    if broken:
        fail = "fails" if broken == 1 else "fail"
        note += f"; {counted(broken, 'broken case')} {fail} the suite as broken"
    console.print(Text(note, style="red" if broken else "dim"), soft_wrap=True)
    not_semantic = [case for case in result.cases if case.scores is not None and case.scores.get(SEMANTIC) == 0.0]
    keyword = sum(1 for case in not_semantic if case.mode is not None)
    if keyword:
        console.print(
            Text(
                f"  {keyword:,} of {counted(scored, 'scored case')} ran on keyword search, not semantic ({KEYWORD_FALLBACK}): "
                "their figures do not describe the semantic retrieval",
                style="yellow",
            ),
            soft_wrap=True,
        )
    if len(not_semantic) > keyword:
        console.print(
            Text(
                f"  {len(not_semantic) - keyword:,} of {counted(scored, 'scored case')} answered no `mode`, so "
                f"rag.mode.semantic is 0 for them ({KEYWORD_FALLBACK}): a target answers `mode: semantic` when it "
                "searched by meaning",
                style="yellow",
            ),
            soft_wrap=True,
        )


FORMATS: dict[str, Callable[[Run], str | bytes]] = {
    "text": format_text,
    "json": format_json,
    "junit": format_junit,
    "trec": format_trec,
}
