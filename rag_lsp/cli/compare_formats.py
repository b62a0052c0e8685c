"""How ``rag-lsp run`` shows a comparison with its baseline, and its Markdown summary.

* :func:`format_text`: per suite, its means beside the baseline's with the deltas
  (a regression beyond the tolerance marked), each mean's move over the cases
  both runs scored with how sure it is, then the cases that got worse and
  better (each with its figures before → after, and the relevant hits it lost,
  gained or that moved), the cases added and removed; suites new or gone.
  Printed after the text report, or on stderr beside a json/junit report.
* :func:`format_markdown`: the run (a row per suite: verdict, means, failed
  thresholds) and, with a baseline, the comparison, for a CI job summary
  (``$GITHUB_STEP_SUMMARY``). Long lists are cut: the JSON reports hold everything.
"""

from __future__ import annotations

import io
from typing import Sequence

from ..core.running.comparison import (
    COMPARED,
    COUNTER,
    NEW,
    REMOVED,
    CaseChange,
    Comparison,
    MetricDelta,
    SuiteComparison,
    describe_change,
    describe_significance,
    figure,
)
from ..core.running.results import describe_threshold
from ..core.running.scorer import RAG_METRICS, label
from ..core.running.significance import signed
from ..core.reading.wording import counted
from .outcome import Run

# Cases listed per kind (worse, better) in the text output and the summary.
TEXT_CASES = 50
MARKDOWN_CASES = 20
LISTED_IDS = 30


def _ids(ids: Sequence[str], limit: int = LISTED_IDS) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f", … {len(ids) - limit:,} more" if len(ids) > limit else "")


def _delta_text(delta: MetricDelta) -> str:
    return "—" if delta.delta is None else signed(delta.delta)


def _note(delta: MetricDelta, comparison: Comparison) -> str:
    """What a mean's move amounts to: counter, regressed, better, within the
    tolerance or (with --significance) within noise; "" when it did not move."""
    if delta.direction == COUNTER:
        return "counter"
    if delta.regressed(comparison.tolerance, comparison.alpha):
        return "regressed"
    if delta.change == "better":
        return "better"
    if delta.change == "worse":
        return "within noise" if delta.regressed(comparison.tolerance) else "within tolerance"
    return ""


def _alpha_words(comparison: Comparison) -> str:
    """``tolerance 0.01`` / ``tolerance 0.01, significance 0.05``."""
    words = f"tolerance {comparison.tolerance:g}"
    return words + (f", significance {comparison.alpha:g}" if comparison.alpha is not None else "")


def _limits(comparison: Comparison) -> str:
    """``0.01`` (the tolerance) / ``tolerance 0.01, significance 0.05``."""
    return f"{comparison.tolerance:g}" if comparison.alpha is None else _alpha_words(comparison)


def _counts(suite: SuiteComparison) -> str:
    parts = [f"{len(suite.worse):,} worse", f"{len(suite.better):,} better", f"{suite.unchanged:,} unchanged"]
    if suite.added:
        parts.append(f"{len(suite.added):,} added")
    if suite.removed:
        parts.append(f"{len(suite.removed):,} removed")
    return ", ".join(parts)


# ---------------------------------------------------------------- text


def format_text(comparison: Comparison, stream=None) -> str:
    from rich.table import Table
    from rich.text import Text

    from .run_formats import make_console

    buffer = io.StringIO()
    console = make_console(buffer, stream)
    tolerance = comparison.tolerance
    console.print(Text(f"vs baseline {comparison.baseline} ({_alpha_words(comparison)})", style="bold"), soft_wrap=True)
    console.print()
    for suite in comparison.suites:
        header = Text()
        header.append(f"{suite.id}  ", style="bold")
        if suite.status == NEW:
            header.append(f"new: not in the baseline ({counted(len(suite.added), 'case')})", style="cyan")
            console.print(header, soft_wrap=True)
            console.print()
            continue
        if suite.status == REMOVED:
            header.append(f"not in this run (the baseline has it, {counted(len(suite.removed), 'case')})", style="yellow")
            console.print(header, soft_wrap=True)
            console.print()
            continue
        regressions = suite.regressions(tolerance, comparison.alpha)
        if regressions:
            header.append(f"✗ {counted(len(regressions), 'mean')} regressed", style="bold red")
        else:
            header.append("✓ no mean regressed", style="green")
        header.append(f"  ({_counts(suite)})", style="dim")
        console.print(header, soft_wrap=True)
        if suite.error is not None:
            console.print(Text(f"  not run now: {suite.error.removeprefix('not run: ')}", style="red"), soft_wrap=True)
        table = Table(box=None, show_header=True, header_style="bold", pad_edge=True, padding=(0, 1, 0, 2))
        for name, justify in (("metric", "left"), ("baseline", "right"), ("now", "right"), ("delta", "right"), ("", "left")):
            table.add_column(name, justify=justify)  # type: ignore[arg-type]
        for delta in suite.aggregates:
            note = _note(delta, comparison)
            note, style = {
                "counter": ("counter", "dim"),
                "regressed": ("✗ regressed", "bold red"),
                "better": ("✓ better", "green"),
                "within tolerance": ("within tolerance", "yellow"),
                "within noise": ("within noise", "yellow"),
            }.get(note, ("", ""))
            table.add_row(
                Text(delta.metric, style=style if style == "bold red" else ""),
                figure(delta.baseline),
                figure(delta.current),
                Text(_delta_text(delta), style=style),
                Text(note, style=style),
            )
        console.print(table)
        sureness = [describe_significance(delta, comparison.alpha) for delta in suite.aggregates]
        if any(sureness):
            console.print(Text("  over the cases both runs scored, paired by id:", style="bold"))
        for line in filter(None, sureness):
            console.print(Text(f"    {line}", style="" if "real" in line else "dim"), soft_wrap=True)
        for word, changes, style in (("worse", suite.worse, "red"), ("better", suite.better, "green")):
            if not changes:
                continue
            console.print(Text(f"  {word} ({len(changes):,}):", style=f"bold {style}"))
            for change in _ordered(changes)[:TEXT_CASES]:
                line = Text("    ")
                line.append(change.id, style="bold")
                line.append("  " + describe_change(change), style=style)
                console.print(line, soft_wrap=True)
            if len(changes) > TEXT_CASES:
                console.print(Text(f"    … {len(changes) - TEXT_CASES:,} more (--compare-json lists every case)", style="dim"))
        if suite.added:
            console.print(Text(f"  added since the baseline ({len(suite.added):,}): {_ids(suite.added)}", style="cyan"),
                          soft_wrap=True)
        if suite.removed:
            console.print(Text(f"  removed since the baseline ({len(suite.removed):,}): {_ids(suite.removed)}",
                               style="yellow"), soft_wrap=True)
        console.print()
    regressions = comparison.regressions()
    if regressions:
        listed = "; ".join(
            f"{suite} {delta.metric} {figure(delta.baseline)} → {figure(delta.current)} ({_delta_text(delta)})"
            for suite, delta in regressions[:10]
        )
        more = f"; … {len(regressions) - 10:,} more" if len(regressions) > 10 else ""
        console.print(
            Text(f"{counted(len(regressions), 'mean')} regressed beyond the {_beyond(comparison)}: {listed}{more}", style="bold red"),
            soft_wrap=True,
        )
    else:
        console.print(Text(f"no mean regressed beyond the {_beyond(comparison)} ({_limits(comparison)})", style="bold green"), soft_wrap=True)
    return buffer.getvalue()


def _beyond(comparison: Comparison) -> str:
    """What a regression is beyond: ``tolerance``, or ``tolerance and noise``."""
    return "tolerance" if comparison.alpha is None else "tolerance and noise"


def _ordered(changes: list[CaseChange]) -> list[CaseChange]:
    """Largest moves first: broken ones, then by the recall / main figure's move."""

    def size(change: CaseChange) -> tuple:
        if change.broken is not None or change.baseline_broken is not None:
            return (0, 0.0, change.id)
        moved = [abs(d.delta or 0.0) for d in change.deltas if d.direction != COUNTER]
        return (1, -max(moved, default=0.0), change.id)

    return sorted(changes, key=size)


# ---------------------------------------------------------------- markdown


def _md(text: str) -> str:
    """Text safe in Markdown prose and table cells."""
    text = " ".join(str(text).split())
    for char in "\\`*_[]<>|#~":
        text = text.replace(char, "\\" + char)
    return text


def _code(text: str) -> str:
    """An id or path as inline code, whatever it holds (and safe in a table cell)."""
    text = " ".join(str(text).split()).replace("|", "\\|")
    fence = "``" if "`" in text else "`"
    pad = " " if fence == "``" else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def format_markdown(run: Run, comparison: Comparison | None = None, fail_on_regression: bool = False) -> str:
    """The run (and its comparison) as the Markdown of a CI job's summary; its
    heading says whether the job fails: a failed suite, or a regression that
    ``--fail-on-regression`` fails the job for."""
    out: list[str] = []
    counts = {"passed": 0, "failed": 0, "broken": 0}
    for _, result in run.results:
        counts["passed" if result.passed else "broken" if result.broken else "failed"] += 1
    regressed = fail_on_regression and comparison is not None and comparison.regressed
    verdict = "✅" if run.passed and not regressed else "❌"
    parts = [f"{counts[name]:,} {name}" for name in ("passed", "failed", "broken") if counts[name]]
    if regressed:
        parts.append("regressed from the baseline")
    out.append(f"## {verdict} rag-lsp run: {', '.join(parts) or 'no suites'}")
    out.append("")
    deltas: dict[str, SuiteComparison] = {}
    if comparison is not None:
        deltas = {suite.id: suite for suite in comparison.suites if suite.status == COMPARED}
    metrics = [name for name in RAG_METRICS if any(name in result.aggregates for _, result in run.results)]
    metrics += sorted({name for _, result in run.results for name in result.aggregates} - set(metrics))
    header = ["suite", "verdict", "cases", *(label(name) for name in metrics)]
    out.append("| " + " | ".join(header) + " |")
    out.append("|" + "|".join(["---", "---", "---:"] + ["---:"] * len(metrics)) + "|")
    for _, result in run.results:
        mark = "✅ passed" if result.passed else "❌ broken" if result.broken else "❌ failed"
        compared = deltas.get(result.id)
        cells = []
        for name in metrics:
            value = result.aggregates.get(name)
            cell = figure(value)
            delta = next((d for d in compared.aggregates if d.metric == name), None) if compared else None
            if delta is not None and delta.delta is not None and delta.direction != COUNTER and abs(delta.delta) >= 0.005:
                cell += f" ({signed(delta.delta)})"
            cells.append(cell)
        cases = f"{len(result.cases):,}" + (f" ({len(result.cases) - result.scored:,} broken)" if result.scored < len(result.cases) else "")
        out.append(f"| {_code(result.id)} | {mark} | {cases} | " + " | ".join(cells) + " |")
    out.append("")
    problems = []
    for _, result in run.results:
        if result.error is not None:
            problems.append(f"- {_code(result.id)} was not run: {_md(result.error.removeprefix('not run: '))}")
            continue
        failed = [describe_threshold(t) for t in result.thresholds if not t.passed]
        if failed:
            problems.append(f"- {_code(result.id)}: {_md('; '.join(failed))}")
        broken = len(result.cases) - result.scored
        if broken:
            problems.append(f"- {_code(result.id)}: {counted(broken, 'broken case')} (no figures; the suite fails as broken)")
    if problems:
        out.extend(problems)
        out.append("")
    if comparison is not None:
        out.extend(_markdown_comparison(comparison))
    return "\n".join(out) + "\n"


def _markdown_comparison(comparison: Comparison) -> list[str]:
    out = [f"### Compared with the baseline {_code(comparison.baseline)}", ""]
    regressions = comparison.regressions()
    if regressions:
        out.append(f"**❌ {counted(len(regressions), 'mean')} regressed** beyond the {_beyond(comparison)} ({_limits(comparison)}):")
        out.append("")
        for suite, delta in regressions:
            out.append(
                f"- {_code(suite)} {_code(delta.metric)}: {figure(delta.baseline)} → {figure(delta.current)} ({_delta_text(delta)})"
            )
    else:
        out.append(f"✅ No mean regressed beyond the {_beyond(comparison)} ({_limits(comparison)}).")
    out.append("")
    for suite in comparison.suites:
        if suite.status == NEW:
            out.append(f"#### {_code(suite.id)}: new, not in the baseline ({counted(len(suite.added), 'case')})")
            out.append("")
            continue
        if suite.status == REMOVED:
            out.append(f"#### {_code(suite.id)}: in the baseline, not in this run")
            out.append("")
            continue
        out.append(f"#### {_code(suite.id)}: {_counts(suite)}")
        out.append("")
        moved = [d for d in suite.aggregates if d.delta is None or abs(d.delta) > 1e-9]
        if moved:
            out.append("| metric | baseline | now | Δ | |")
            out.append("|---|---:|---:|---:|---|")
            for delta in moved:
                note = _note(delta, comparison)
                note = {"regressed": "❌ regressed", "better": "✅ better"}.get(note, note)
                out.append(
                    f"| {_code(delta.metric)} | {figure(delta.baseline)} | {figure(delta.current)} | {_delta_text(delta)} | {note} |"
                )
            out.append("")
            sureness = [describe_significance(delta, comparison.alpha) for delta in moved]
            if any(sureness):
                out.append("Over the cases both runs scored, paired by id:")
                out.append("")
                out.extend(f"- {_md(line)}" for line in sureness if line)
                out.append("")
        else:
            out.append("No mean moved.")
            out.append("")
        for word, changes in (("Worse", suite.worse), ("Better", suite.better)):
            if not changes:
                continue
            out.append(f"<details{' open' if word == 'Worse' else ''}><summary>{word} ({len(changes):,})</summary>")
            out.append("")
            for change in _ordered(changes)[:MARKDOWN_CASES]:
                out.append(f"- {_code(change.id)}: {_md(describe_change(change))}")
            if len(changes) > MARKDOWN_CASES:
                out.append(f"- … {len(changes) - MARKDOWN_CASES:,} more (the `--compare-json` report lists every case)")
            out.append("")
            out.append("</details>")
            out.append("")
        for word, ids in (("Added since the baseline", suite.added), ("Removed since the baseline", suite.removed)):
            if ids:
                shown = ", ".join(_code(case_id) for case_id in ids[:LISTED_IDS])
                more = f", … {len(ids) - LISTED_IDS:,} more" if len(ids) > LISTED_IDS else ""
                out.append(f"**{word} ({len(ids):,}):** {shown}{more}")
                out.append("")
    return out
