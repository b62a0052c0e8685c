"""``rag-lsp run --html FILE``: the run as one self-contained HTML page.

The page needs nothing but itself: its style and script are inline, its plots
are SVG drawn here, and a Content-Security-Policy forbids it to fetch anything
(``default-src 'none'``; the script runs only because its hash is allowed). It
shows, in this order:

* the suites, each with its verdict and its means against its thresholds;
* recall and MRR against k, when the run swept k (``--k``);
* the comparison with the baseline (``--baseline``): each mean with its paired
  interval and p-value, and the cases that got worse or better;
* the slices (``--by``);
* the trend of each suite's means across earlier reports (``--history DIR``);
* every case in one table, sorted and filtered by the inline script.

Every string a dataset or a report gives (ids, paths, messages) is escaped: in
the HTML written here by :func:`html.escape`; the cases travel as JSON in a
``<script type="application/json">`` element, where ``<``, ``>`` and ``&`` are
written as ``\\u003c``-style escapes (so ``</script>`` in a case id cannot end
the element), and the script puts them in the page as text, never as markup.
The cases are written once, compactly: each as an array, the values missed
(paths that repeat from case to case) and the reasons for them as indices into
one table of strings.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import operator
import time
from importlib import resources
from typing import TYPE_CHECKING, Iterable, Sequence

import orjson

from ..core.running.comparison import COUNTER, describe_change, describe_significance
from ..core.running.results import SuiteResult, describe_threshold
from ..core.running.scorer import MRR, RAG_METRICS, RECALL, label
from .outcome import Run

if TYPE_CHECKING:
    from ..core.running.comparison import Comparison, MetricDelta
    from ..core.running.history import Point

# The cases that got worse (and better) listed per suite in the comparison; the
# table of cases marks every one of them.
LISTED_CHANGES = 50

# Change of a case against the baseline, as the table's data writes it.
_SAME, _WORSE, _BETTER, _ADDED = 0, 1, 2, 3

_PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2")


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def e(value: object) -> str:
    """``value`` as HTML text (quotes too: it may stand in an attribute)."""
    return html.escape(str(value), quote=True)


def _figure(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _signed(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:+.3f}".replace("-", "−")


# ---------------------------------------------------------------- plots


def line_plot(
    title: str,
    x_labels: Sequence[str],
    series: Sequence[tuple[str, Sequence[float | None]]],
    *,
    x_title: str = "",
    width: int = 520,
    height: int = 240,
) -> str:
    """An inline SVG line plot of ``series`` (name, one value per x label, None
    where there is none) on a y axis from 0 to 1, with a legend and a tooltip
    (``<title>``) on every point."""
    left, right, top, bottom = 44, 130, 24, 40
    plot_w, plot_h = width - left - right, height - top - bottom
    count = len(x_labels)

    def x_at(index: int) -> float:
        return left + (plot_w / 2 if count == 1 else plot_w * index / (count - 1))

    def y_at(value: float) -> float:
        return top + plot_h * (1 - max(0.0, min(1.0, value)))

    parts = [
        f'<svg class="plot" role="img" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'xmlns="http://www.w3.org/2000/svg"><title>{e(title)}</title>'
    ]
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = y_at(tick)
        parts.append(
            f'<line class="grid" x1="{left}" x2="{left + plot_w}" y1="{y:.1f}" y2="{y:.1f}"/>'
            f'<text class="tick" x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{tick:g}</text>'
        )
    # At most about 8 labels along x; every point keeps its tooltip.
    step = max(1, -(-count // 8))
    for index, name in enumerate(x_labels):
        if index % step == 0 or index == count - 1:
            parts.append(
                f'<text class="tick" x="{x_at(index):.1f}" y="{top + plot_h + 16}" text-anchor="middle">{e(name)}</text>'
            )
    if x_title:
        parts.append(f'<text class="axis" x="{left + plot_w / 2:.1f}" y="{height - 4}" text-anchor="middle">{e(x_title)}</text>')
    for number, (name, values) in enumerate(series):
        colour = _PALETTE[number % len(_PALETTE)]
        # A line through consecutive points that have a value.
        run: list[str] = []
        lines: list[list[str]] = []
        for index, value in enumerate(values):
            if value is None:
                if run:
                    lines.append(run)
                run = []
                continue
            run.append(f"{x_at(index):.1f},{y_at(value):.1f}")
        if run:
            lines.append(run)
        for points in lines:
            if len(points) > 1:
                parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{" ".join(points)}"/>')
        for index, value in enumerate(values):
            if value is not None:
                parts.append(
                    f'<circle cx="{x_at(index):.1f}" cy="{y_at(value):.1f}" r="3" fill="{colour}">'
                    f"<title>{e(name)} at {e(x_labels[index])}: {value:.3f}</title></circle>"
                )
        y = top + 14 * number + 6
        parts.append(
            f'<line x1="{left + plot_w + 12}" x2="{left + plot_w + 28}" y1="{y}" y2="{y}" stroke="{colour}" stroke-width="2"/>'
            f'<text class="legend" x="{left + plot_w + 32}" y="{y + 4}">{e(name)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


# ---------------------------------------------------------------- sections


def _metric_order(results: Iterable[SuiteResult]) -> list[str]:
    seen: dict[str, None] = {}
    for result in results:
        for name in result.aggregates:
            seen.setdefault(name, None)
        for case in result.cases[:1000]:
            for name in case.scores or ():
                seen.setdefault(name, None)
    known = [name for name in RAG_METRICS if name in seen]
    return known + [name for name in seen if name not in known]


def _suites_section(results: Sequence[SuiteResult]) -> str:
    parts = ['<section id="suites"><h2>Suites</h2>']
    for index, result in enumerate(results):
        if result.error is not None:
            verdict, css = "not run", "fail"
        elif result.passed:
            verdict, css = "passed", "pass"
        else:
            verdict, css = "failed", "fail"
        broken = sum(1 for case in result.cases if case.scores is None)
        parts.append(
            f'<div class="suite" data-suite="{e(result.id)}" id="suite-{index}">'
            f'<h3><span class="suite-id">{e(result.id)}</span> <span class="verdict {css}">{verdict}</span></h3>'
            f'<p class="meta">{e(result.file)}'
            + (f" · dataset {e(result.dataset)}" if result.dataset else "")
            + (f" · target {e(result.target)}" if result.target else "")
            + f" · {len(result.cases):,} cases, {result.scored:,} scored"
            + (f', <span class="fail">{broken:,} broken</span>' if broken else "")
            + "</p>"
        )
        if result.error is not None:
            parts.append(f'<p class="error">{e(result.error)}</p>')
        for note in result.notes:
            parts.append(f'<p class="note">{e(note)}</p>')
        thresholds = {threshold.metric: threshold for threshold in result.thresholds}
        metrics = list(result.aggregates) + [name for name in thresholds if name not in result.aggregates]
        if metrics:
            parts.append('<table class="means"><thead><tr><th>metric</th><th>mean</th><th>threshold</th><th></th></tr></thead><tbody>')
            for metric in metrics:
                value = result.aggregates.get(metric)
                threshold = thresholds.get(metric)
                if threshold is None:
                    limit, status = "", ""
                else:
                    limit = f"{threshold.comparison} {threshold.threshold:g}"
                    status = (
                        '<span class="verdict pass">passed</span>'
                        if threshold.passed
                        else f'<span class="verdict fail" title="{e(describe_threshold(threshold))}">failed</span>'
                    )
                parts.append(
                    f'<tr data-metric="{e(metric)}"><td>{e(metric)}</td><td class="num" data-value="{"" if value is None else repr(value)}">'
                    f"{_figure(value)}</td><td class=\"num\">{e(limit)}</td><td>{status}</td></tr>"
                )
            parts.append("</tbody></table>")
        parts.append("</div>")
    parts.append("</section>")
    return "".join(parts)


def _sweep_section(results: Sequence[SuiteResult]) -> str:
    swept = [result for result in results if result.ks and result.at_k]
    if not swept:
        return ""
    parts = ['<section id="at-k"><h2>Recall and MRR against k</h2><div class="plots">']
    for result in swept:
        ks = sorted(result.at_k)
        series = [
            (label(metric), [result.at_k[k].get(metric) for k in ks])
            for metric in (RECALL, MRR)
            if any(metric in result.at_k[k] for k in ks)
        ]
        parts.append(f'<figure data-suite="{e(result.id)}">')
        parts.append(line_plot(f"{result.id}: recall and MRR against k", [str(k) for k in ks], series, x_title="k"))
        parts.append(f"<figcaption>{e(result.id)}</figcaption>")
        parts.append('<table class="means"><thead><tr><th>k</th>')
        parts.extend(f"<th>{e(label(metric))}</th>" for metric, _ in ((RECALL, 0), (MRR, 0)))
        parts.append("</tr></thead><tbody>")
        for k in ks:
            means = result.at_k[k]
            parts.append(
                f'<tr data-k="{k}"><td class="num">{k}</td><td class="num">{_figure(means.get(RECALL))}</td>'
                f'<td class="num">{_figure(means.get(MRR))}</td></tr>'
            )
        parts.append("</tbody></table></figure>")
    parts.append("</div></section>")
    return "".join(parts)


def _delta_row(delta: MetricDelta, comparison: Comparison) -> str:
    paired = delta.significance
    regressed = delta.regressed(comparison.tolerance, comparison.alpha)
    interval = "—" if paired is None else f"{_signed(paired.low)} to {_signed(paired.high)}"
    p_value = "—" if paired is None else f"{paired.p_value:.3g}"
    counts = "—" if paired is None else f"{paired.better:,} / {paired.worse:,} / {paired.equal:,}"
    words = describe_significance(delta, comparison.alpha)
    row_class = ' class="regressed"' if regressed else ""
    mark = '<span class="verdict fail">regressed</span> ' if regressed else ""
    return (
        f'<tr data-metric="{e(delta.metric)}"{row_class}><td>{e(delta.metric)}</td>'
        f'<td class="num">{_figure(delta.baseline)}</td><td class="num">{_figure(delta.current)}</td>'
        f'<td class="num">{"" if delta.direction == COUNTER else _signed(delta.delta)}</td><td class="num">{interval}</td>'
        f'<td class="num">{p_value}</td><td class="num">{counts}</td>'
        f"<td>{mark}{e(words)}</td></tr>"
    )


def _comparison_section(comparison: Comparison) -> str:
    parts = [
        f'<section id="comparison"><h2>Against the baseline</h2><p class="meta">baseline {e(comparison.baseline)}'
        f" · tolerance {comparison.tolerance:g}"
        + (f" · significance {comparison.alpha:g}" if comparison.alpha is not None else "")
        + " · intervals: 95% paired bootstrap over the cases both runs scored; p: paired randomization test</p>"
    ]
    for suite in comparison.suites:
        parts.append(f'<div class="suite-comparison" data-suite="{e(suite.id)}"><h3>{e(suite.id)}')
        if suite.status != "compared":
            parts.append(f' <span class="verdict">{e(suite.status)}</span>')
        parts.append("</h3>")
        if suite.error:
            parts.append(f'<p class="error">{e(suite.error)}</p>')
        if suite.aggregates:
            parts.append(
                '<table class="deltas"><thead><tr><th>metric</th><th>baseline</th><th>this run</th><th>delta</th>'
                "<th>95% CI</th><th>p</th><th>better / worse / equal</th><th></th></tr></thead><tbody>"
            )
            parts.extend(_delta_row(delta, comparison) for delta in suite.aggregates)
            parts.append("</tbody></table>")
        for k, deltas in sorted(suite.at_k.items()):
            moved = ", ".join(
                f"{label(d.metric)} {_figure(d.baseline)} → {_figure(d.current)}" for d in deltas if d.direction != COUNTER
            )
            parts.append(f'<p class="meta">at k = {k}: {e(moved)}</p>')
        parts.append(
            f'<p class="meta">{len(suite.worse):,} worse · {len(suite.better):,} better · {len(suite.added):,} added · '
            f"{len(suite.removed):,} removed · {suite.unchanged:,} unchanged</p>"
        )
        for title, changes in (("worse", suite.worse), ("better", suite.better)):
            if not changes:
                continue
            parts.append(f'<details open class="moved {title}"><summary>{len(changes):,} {title}</summary><ul>')
            for change in changes[:LISTED_CHANGES]:
                parts.append(f'<li><code>{e(change.id)}</code> {e(describe_change(change))}</li>')
            if len(changes) > LISTED_CHANGES:
                parts.append(f"<li>… and {len(changes) - LISTED_CHANGES:,} more (the table of cases marks each)</li>")
            parts.append("</ul></details>")
        for title, ids in (("added", suite.added), ("removed", suite.removed)):
            if ids:
                shown = ", ".join(ids[:LISTED_CHANGES]) + (f" … and {len(ids) - LISTED_CHANGES:,} more" if len(ids) > LISTED_CHANGES else "")
                parts.append(f'<p class="meta">{title}: {e(shown)}</p>')
        parts.append("</div>")
    parts.append("</section>")
    return "".join(parts)


def _slices_section(results: Sequence[SuiteResult]) -> str:
    sliced = [result for result in results if result.slices]
    if not sliced:
        return ""
    parts = ['<section id="slices"><h2>Slices</h2>']
    for result in sliced:
        for by, slices in result.slices.items():
            metrics: list[str] = []
            for part in slices.values():
                metrics.extend(name for name in part.aggregates if name not in metrics)
            parts.append(
                f'<div class="slices" data-suite="{e(result.id)}" data-by="{e(by)}"><h3>{e(result.id)} by {e(by)}</h3>'
                '<table class="means"><thead><tr><th>slice</th><th>cases</th><th>scored</th>'
                + "".join(f"<th>{e(label(metric))}</th>" for metric in metrics)
                + "</tr></thead><tbody>"
            )
            for name, part in slices.items():
                parts.append(
                    f"<tr><td>{e(name)}</td><td class=\"num\">{part.cases:,}</td><td class=\"num\">{part.scored:,}</td>"
                    + "".join(f'<td class="num">{_figure(part.aggregates.get(metric))}</td>' for metric in metrics)
                    + "</tr>"
                )
            parts.append("</tbody></table></div>")
    parts.append("</section>")
    return "".join(parts)


def trend_metrics(result: SuiteResult) -> list[str]:
    """The means a suite's trend plots: those with a threshold, and recall and MRR."""
    chosen = [threshold.metric for threshold in result.thresholds]
    chosen += [metric for metric in (RECALL, MRR) if metric in result.aggregates and metric not in chosen]
    return chosen


def _history_section(results: Sequence[SuiteResult], history: Sequence[Point]) -> str:
    parts = [
        '<section id="history"><h2>Trend</h2><p class="meta">'
        f"{len(history):,} earlier report{'' if len(history) == 1 else 's'}, ordered by when their files were written, "
        "then this run</p>"
    ]
    if not history:
        parts.append('<p class="note">No earlier run report was read from the history folder.</p>')
    labels = [time.strftime("%Y-%m-%d %H:%M", time.localtime(point.time)) for point in history] + ["this run"]
    parts.append('<div class="plots">')
    for result in results:
        series = []
        for metric in trend_metrics(result):
            values = [point.means.get(result.id, {}).get(metric) for point in history] + [result.aggregates.get(metric)]
            # A plot from 0 to 1: a count (rag.retrieved) has no place on it.
            if any(value is not None and not 0.0 <= value <= 1.0 for value in values):
                continue
            if any(value is not None for value in values):
                series.append((metric, values))
        if not series:
            continue
        parts.append(f'<figure data-suite="{e(result.id)}">')
        parts.append(line_plot(f"{result.id}: means across runs", labels, series))
        files = ", ".join(point.name for point in history)
        parts.append(f"<figcaption>{e(result.id)}" + (f' <span class="meta">({e(files)})</span>' if files else "") + "</figcaption></figure>")
    parts.append("</div></section>")
    return "".join(parts)


# ---------------------------------------------------------------- cases


def _changes(comparison: Comparison | None) -> dict[str, dict[str, int]]:
    """Suite id -> case id -> how it changed against the baseline."""
    if comparison is None:
        return {}
    changes: dict[str, dict[str, int]] = {}
    for suite in comparison.suites:
        marks = changes.setdefault(suite.id, {})
        for change in suite.worse:
            marks[change.id] = _WORSE
        for change in suite.better:
            marks[change.id] = _BETTER
        for case_id in suite.added:
            marks[case_id] = _ADDED
    return changes


def cases_data(results: Sequence[SuiteResult], comparison: Comparison | None) -> dict:
    """The table's data: ``{"metrics", "labels", "suites", "strings", "figures",
    "compared", "cases": [[suite, id, figures, first relevant rank, [[value,
    rank, reason]...], broken, change]]}``: a case's figures (one per metric) are
    an index into ``figures`` (cases share them: a 100k-case run has a few
    hundred distinct ones), its values missed and their reasons indices into
    ``strings``."""
    metrics = _metric_order(results)
    strings: list[str] = []
    index_of: dict[str, int] = {}

    def intern(text: str) -> int:
        found = index_of.get(text)
        if found is None:
            found = index_of[text] = len(strings)
            strings.append(text)
        return found

    figures: list[list[float | None]] = []
    figures_of: dict[tuple, int] = {}
    every = operator.itemgetter(*metrics) if len(metrics) > 1 else None
    changes = _changes(comparison)
    rows: list[list] = []
    append = rows.append
    for number, result in enumerate(results):
        marks = changes.get(result.id, {})
        for case in result.cases:
            scores = case.scores
            figure = None
            if scores is not None:
                try:
                    key = every(scores) if every is not None else tuple(scores.get(m) for m in metrics)
                except KeyError:
                    key = tuple(scores.get(metric) for metric in metrics)
                figure = figures_of.get(key)
                if figure is None:
                    figure = figures_of[key] = len(figures)
                    figures.append(list(key))
            why = case.why_missed
            if why:
                missed = [[intern(miss.value), miss.rank, intern(miss.message)] for miss in why]
            elif case.missed:
                missed = [[intern(value), None, intern("")] for value in case.missed]
            else:
                missed = []
            append([number, case.id, figure, case.first_relevant_rank, missed, case.broken, marks.get(case.id, _SAME) if marks else _SAME])
    return {
        "metrics": metrics,
        "labels": [label(metric) for metric in metrics],
        "suites": [result.id for result in results],
        "strings": strings,
        "figures": figures,
        "compared": comparison is not None,
        "cases": rows,
    }


def _script_json(document: object) -> str:
    """``document`` as JSON that may stand in a ``<script>`` element: ``<``, ``>``
    and ``&`` escaped, so no string can end the element or open a comment."""
    try:
        text = orjson.dumps(document).decode("utf-8")
    except orjson.JSONEncodeError:
        # A lone surrogate (a case id "\ud800"), which the standard encoder escapes.
        text = json.dumps(document, separators=(",", ":"))
    return (
        text.replace("&", "\\u0026")
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


# ---------------------------------------------------------------- the page


def format_html(run: Run, comparison: Comparison | None = None, history: Sequence[Point] | None = None) -> bytes:
    """The page of a run (with its comparison and its history, when given), as UTF-8 bytes."""
    results = [result for _, result in run.results]
    script = _asset("html_report.js")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    passed = sum(1 for result in results if result.passed)
    cases = sum(len(result.cases) for result in results)
    verdict = "passed" if run.passed else "failed"
    body = [
        '<header><h1>rag-lsp run</h1>'
        f'<p class="summary"><span class="verdict {"pass" if run.passed else "fail"}" id="verdict">{verdict}</span> '
        f"{passed:,} of {len(results):,} suites passed · {cases:,} cases · {run.seconds:.1f} s · "
        f'{e(time.strftime("%Y-%m-%d %H:%M:%S %Z"))}</p>'
        '<nav><a href="#suites">suites</a>'
        + (' · <a href="#at-k">k</a>' if any(result.ks for result in results) else "")
        + (' · <a href="#comparison">baseline</a>' if comparison is not None else "")
        + (' · <a href="#slices">slices</a>' if any(result.slices for result in results) else "")
        + (' · <a href="#history">trend</a>' if history is not None else "")
        + ' · <a href="#cases">cases</a></nav></header><main>',
        _suites_section(results),
        _sweep_section(results),
        _comparison_section(comparison) if comparison is not None else "",
        _slices_section(results),
        _history_section(results, history) if history is not None else "",
        '<section id="cases"><h2>Cases</h2><div class="filters">'
        '<input id="filter" type="search" placeholder="filter: case id or value missed" aria-label="filter cases">'
        '<select id="suite-filter" aria-label="suite"><option value="">every suite</option></select>'
        '<select id="status-filter" aria-label="status"><option value="">every case</option>'
        '<option value="missed">something missed</option><option value="complete">nothing missed</option>'
        '<option value="broken">broken</option></select>'
        '<span id="count" class="meta"></span></div>'
        '<table id="case-table"><thead></thead><tbody></tbody></table>'
        '<p><button id="more" type="button" hidden>show more</button> '
        '<button id="all" type="button" hidden>show all</button></p>'
        "<noscript><p>The table of cases needs JavaScript; the suites above do not.</p></noscript></section></main>",
    ]
    page = (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        f"style-src 'unsafe-inline'; img-src data:; script-src 'sha256-{digest}'\">"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>rag-lsp run: {verdict}</title><style>{_asset('html_report.css')}</style></head><body>"
        + "".join(body)
        + f'<script type="application/json" id="cases-data">{_script_json(cases_data(results, comparison))}</script>'
        + f"<script>{script}</script></body></html>\n"
    )
    return page.encode("utf-8", "backslashreplace")
