"""How two suites over one dataset are shown side by side (``rag-lsp compare``,
and the suites of a ``rag-lsp run`` that share a dataset).

* :func:`format_text`: the means of A and B with B − A, each mean's paired
  comparison in words, then the cases each side wins with the ranks that
  differ, the mixed ones, the relevant values both miss and the cases one side
  has no figures for.
* :func:`format_brief`: each mean's paired comparison in words, under one line
  naming the two suites (a run's report already shows each suite's means).
* :func:`pair_json`: the same as JSON data (``rag-lsp compare --format json``).
"""

from __future__ import annotations

import io
from typing import Any

from ..core.running.comparison import describe_significance, figure, side_by_side, significance_json
from ..core.running.pairs import A_WINS, B_WINS, MIXED, CaseWin, PairComparison, ranks_text
from ..core.running.significance import signed, verdict
from ..core.reading.wording import counted

# Cases listed per kind (wins of A, wins of B, mixed, both miss) in the text.
TEXT_CASES = 50


def format_text(pair: PairComparison, stream=None) -> str:
    from rich.table import Table
    from rich.text import Text

    from .run_formats import make_console

    buffer = io.StringIO()
    console = make_console(buffer, stream)
    header = Text()
    header.append(f"{pair.b} vs {pair.a}", style="bold")
    where = f"same dataset {pair.dataset}, " if pair.dataset else ""
    header.append(f"  ({where}{counted(pair.paired, 'case')} scored by both)", style="dim")
    console.print(header, soft_wrap=True)
    table = Table(box=None, show_header=True, header_style="bold", pad_edge=True, padding=(0, 1, 0, 2))
    for name, justify in (("metric", "left"), (pair.a, "right"), (pair.b, "right"), ("difference", "right")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for delta in pair.metrics:
        difference = "—" if delta.delta is None else signed(delta.delta)
        table.add_row(delta.metric, figure(delta.baseline), figure(delta.current), difference)
    console.print(table)
    if any(delta.significance is not None for delta in pair.metrics):
        console.print(Text(f"  {pair.b} against {pair.a}, over the cases both scored:", style="bold"), soft_wrap=True)
    _print_sureness(console, pair)
    _print_cases(console, pair)
    return buffer.getvalue()


def format_brief(pair: PairComparison, stream=None) -> str:
    from rich.text import Text

    from .run_formats import make_console

    buffer = io.StringIO()
    console = make_console(buffer, stream)
    where = f" (dataset {pair.dataset})" if pair.dataset else ""
    console.print(
        Text(f"{pair.b} against {pair.a}, over the {counted(pair.paired, 'case')} both scored{where}:", style="bold"),
        soft_wrap=True,
    )
    _print_sureness(console, pair)
    return buffer.getvalue()


def _print_sureness(console, pair: PairComparison) -> None:
    """Each mean's difference with its interval, p-value and counts, in words."""
    from rich.text import Text

    for line in filter(None, (describe_significance(delta) for delta in pair.metrics)):
        console.print(Text(f"    {line}", style="" if "real" in line else "dim"), soft_wrap=True)


def _print_cases(console, pair: PairComparison) -> None:
    from rich.text import Text

    for winner, title, style in (
        (B_WINS, f"{pair.b} wins", "green"),
        (A_WINS, f"{pair.a} wins", "red"),
        (MIXED, "mixed (better on one figure, worse on another)", "yellow"),
    ):
        wins = pair.won_by(winner)
        if not wins:
            continue
        console.print(Text(f"  {title} ({len(wins):,}):", style=f"bold {style}"), soft_wrap=True)
        for win in wins[:TEXT_CASES]:
            line = Text("    ")
            line.append(win.id, style="bold")
            line.append("  " + describe_win(win))
            console.print(line, soft_wrap=True)
        if len(wins) > TEXT_CASES:
            console.print(Text(f"    … {len(wins) - TEXT_CASES:,} more (--format json lists every case)", style="dim"))
    if pair.both_miss:
        console.print(Text(f"  both miss ({len(pair.both_miss):,}):", style="bold"), soft_wrap=True)
        for miss in pair.both_miss[:TEXT_CASES]:
            line = Text("    ")
            line.append(miss.id, style="bold")
            line.append("  " + ", ".join(miss.values))
            console.print(line, soft_wrap=True)
        if len(pair.both_miss) > TEXT_CASES:
            console.print(Text(f"    … {len(pair.both_miss) - TEXT_CASES:,} more", style="dim"))
    if pair.unpaired:
        console.print(Text(f"  not scored by both ({len(pair.unpaired):,}):", style="bold yellow"), soft_wrap=True)
        for item in pair.unpaired[:TEXT_CASES]:
            why = "; ".join(
                f"{side}: {reason}" for side, reason in ((pair.a, item.a_broken), (pair.b, item.b_broken)) if reason
            )
            console.print(Text(f"    {item.id}  {why}"), soft_wrap=True)
    if not pair.wins and not pair.both_miss:
        console.print(Text("  every case has the same figures on both sides", style="dim"))


def describe_win(win: CaseWin) -> str:
    """``MRR 0.50 vs 1.00 · hit@1 0.00 vs 1.00 — docs/a.md rank 2 vs 1``."""
    figures = side_by_side(win.deltas, "vs", with_delta=False)
    ranks = ranks_text(win)
    return figures + (f" — {ranks}" if ranks else "")


def pair_json(pair: PairComparison) -> dict[str, Any]:
    """The comparison of two suites as JSON data: B − A for each mean, with its
    paired comparison; every case won, mixed, missed by both or not paired."""

    def metric(delta) -> dict[str, Any]:
        return {
            "metric": delta.metric,
            "a": delta.baseline,
            "b": delta.current,
            "difference": delta.delta,
            "direction": delta.direction,
            "paired": significance_json(delta.significance),
            "verdict": verdict(delta.significance) if delta.significance is not None else None,
        }

    def win(item: CaseWin) -> dict[str, Any]:
        return {
            "id": item.id,
            "winner": {A_WINS: pair.a, B_WINS: pair.b}.get(item.winner),
            "figures": {delta.metric: {"a": delta.baseline, "b": delta.current} for delta in item.deltas},
            "ranks": [{"value": hit.value, "a": hit.before, "b": hit.after} for hit in item.ranks],
        }

    return {
        "a": pair.a,
        "b": pair.b,
        "dataset": pair.dataset,
        "cases": pair.paired,
        "metrics": [metric(delta) for delta in pair.metrics],
        "a_wins": [win(item) for item in pair.won_by(A_WINS)],
        "b_wins": [win(item) for item in pair.won_by(B_WINS)],
        "mixed": [win(item) for item in pair.won_by(MIXED)],
        "both_miss": [{"id": item.id, "values": list(item.values)} for item in pair.both_miss],
        "unpaired": [{"id": item.id, "a": item.a_broken, "b": item.b_broken} for item in pair.unpaired],
    }
