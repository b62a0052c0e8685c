"""Run results as marks in files (rag_lsp.core.running.marks, line_marks and
case_hover): where they go, what they say, and how they follow edits. Pure
functions, no server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from workspaces import make_workspace

from rag_lsp.core.running.case_hover import hover_markdown
from rag_lsp.core.running.line_marks import LineMarks
from rag_lsp.core.running.marks import (
    CASE,
    Mark,
    case_id_of,
    case_marks,
    case_title,
    id_span,
    suite_marks,
    suite_title,
)
from rag_lsp.core.running.results import CaseResult
from rag_lsp.core.running.runner import Runner
from rag_lsp.core.running.selection import suite_key
from rag_lsp.core.running.targets import Hit
from rag_lsp.core.workspace.workspace import Workspace


def mark(text: str, code: str | None = "RAG400") -> Mark:
    return Mark("suite", CASE, code, 0, 1, "m", text)


def marks_on(lines: list[str], codes: dict[int, str] | None = None) -> LineMarks:
    held = LineMarks()
    held.add([(number, mark(text, (codes or {}).get(number, "RAG400"))) for number, text in enumerate(lines)])
    return held


def placed(held: LineMarks) -> list[tuple[int, str]]:
    return [(line, item.text) for line, item in held]


LINES = ["a", "b", "c", "d"]


def after(lines: list[str], edits: list[tuple[int, int, int, int, str]]) -> list[str]:
    """The lines after applying edits (code points), one after the other."""
    text = "\n".join(lines)
    for start_line, start, end_line, end, new in edits:
        rows = text.split("\n")

        def offset(line: int, column: int, rows: list[str] = rows) -> int:
            return sum(len(row) + 1 for row in rows[:line]) + column

        text = text[: offset(start_line, start)] + new + text[offset(end_line, end) :]
    return text.split("\n")


def edited(edits: list[tuple[int, int, int, int, str]], lines: list[str] = LINES) -> list[tuple[int, str]]:
    held = marks_on(lines)
    for edit in edits:
        held.edit(*edit)
    now = after(lines, edits)
    held.settle(lambda line: now[line] if 0 <= line < len(now) else "")
    return placed(held)


# ---------------------------------------------------------------- following edits


def test_typing_on_a_line_drops_its_mark() -> None:
    """A mark is dropped the moment its line is edited; the others stay where they are."""
    assert edited([(1, 1, 1, 1, "x")]) == [(0, "a"), (2, "c"), (3, "d")]


def test_inserting_lines_above_moves_marks_down() -> None:
    """Lines inserted at the start of a line move that line's mark and every mark below it."""
    assert edited([(1, 0, 1, 0, "new\nnewer\n")]) == [(0, "a"), (3, "b"), (4, "c"), (5, "d")]


def test_deleting_a_line_moves_marks_up_and_drops_its_own() -> None:
    """Deleting a whole line drops its mark and moves the marks below it up."""
    assert edited([(1, 0, 2, 0, "")]) == [(0, "a"), (1, "c"), (2, "d")]


def test_enter_at_the_end_of_a_line_keeps_its_mark() -> None:
    """A line break typed at the end of a line leaves that line as it was: its mark stays."""
    assert edited([(1, 1, 1, 1, "\n")]) == [(0, "a"), (1, "b"), (3, "c"), (4, "d")]


def test_a_multi_line_replacement_drops_the_marks_it_covers() -> None:
    """Text replaced across lines takes the marks of those lines with it."""
    assert edited([(0, 1, 2, 0, "X")]) == [(1, "d")]


def test_edits_in_one_notification_are_applied_in_order() -> None:
    """Several changes of one notification: each applies to the text the one before left."""
    assert edited([(0, 0, 0, 0, "top\n"), (4, 1, 4, 1, "!")]) == [(1, "a"), (2, "b"), (3, "c")]


def test_a_whole_text_replacement_keeps_marks_whose_line_reads_the_same() -> None:
    """When the client sends the whole text, marks stay only where their line is unchanged."""
    held = marks_on(LINES)
    held.replace_all()
    now = ["a", "B", "c", "d"]
    held.settle(lambda line: now[line])
    assert placed(held) == [(0, "a"), (2, "c"), (3, "d")]


def test_many_marks_move_in_one_step() -> None:
    """An edit above 100,000 marks moves them all; one on an edited line goes."""
    lines = [f"case {n}" for n in range(100_000)]
    held = marks_on(lines)
    held.edit(10, 0, 10, 0, "inserted\n")
    held.edit(50_001, 2, 50_001, 2, "x")
    now = after(lines, [(10, 0, 10, 0, "inserted\n"), (50_001, 2, 50_001, 2, "x")])
    held.settle(lambda line: now[line])
    assert len(held) == 99_999
    assert held.at(11)[0].text == "case 10" and held.at(50_001) == [] and held.at(99_999 + 1)[0].text == "case 99999"


def test_shown_marks_put_errors_first_within_the_limit() -> None:
    """At most `limit` marks are shown: errors, then warnings, then the rest, each by line; marks without a code are never shown."""
    codes = {0: "RAG400", 1: "RAG405", 2: "RAG402", 3: "RAG401"}
    held = marks_on(LINES, codes)
    held.add([(0, mark("a", None))])
    assert [(line, item.code) for line, item in held.shown(3)] == [(1, "RAG405"), (2, "RAG402"), (3, "RAG401")]
    assert [item.code for _, item in held.shown(10)] == ["RAG400", "RAG405", "RAG402", "RAG401"]


def test_new_marks_replace_what_they_supersede() -> None:
    """Adding marks first removes those the replace rule names, here the old result of the same line."""
    held = marks_on(LINES)
    held.add([(1, mark("b", "RAG401"))], replaces=lambda line, item: line == 1)
    assert [(line, item.code) for line, item in held] == [(0, "RAG400"), (1, "RAG401"), (2, "RAG400"), (3, "RAG400")]


# ---------------------------------------------------------------- places and words


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('{"id": "a", "input": {}}', '"a"'),
        ('{"input": {"id": "x"}, "id": "a"}', '"a"'),
        ('{"id": "caf\\u00e9"}', '"caf\\u00e9"'),
        ('{"id":"café"}', '"café"'),
    ],
)
def test_the_id_span_is_the_case_ids_value(line: str, expected: str) -> None:
    """A case's result sits on its id's value, however the line writes it."""
    case_id = json.loads(line)["id"]
    start, end = id_span(line, case_id)
    assert line[start:end] == expected


def test_a_line_without_the_id_is_marked_on_its_content() -> None:
    """A case without an id (the runner names it `line N`) is marked over its content."""
    assert id_span('  {"x": 1}  ', "line 3") == (2, 10)
    assert case_id_of('{"x": 1}') is None and case_id_of('{"id": "a"}') == "a" and case_id_of("not json") is None
    assert case_id_of('{"input_id": "g"}', gdi=True) == "g"


def case(scores: dict | None = None, **fields) -> CaseResult:
    return CaseResult("a", 0, scores, **fields)


def test_case_titles_say_the_figures_or_why_there_are_none() -> None:
    """The lens of a case that ran: recall and MRR, a broken case's reason, a target's failure."""
    assert case_title(case({"rag.recall": 0.5, "rag.mrr": 1 / 3})) == "recall 0.50 · MRR 0.33"
    assert case_title(case(None, reason="none of the 2 hits…", code="RAG401", hits=(Hit(id="x"), Hit(id="y")))) == (
        "broken: hits carry no path field"
    )
    assert case_title(case(None, reason="nothing relevant declared: …", code="RAG401")) == "broken: nothing relevant declared"
    assert case_title(case(None, reason="`ids.search` did not answer within 1 s; it was stopped", code="RAG405")) == (
        "target failed: `ids.search` did not answer within 1 s"
    )
    assert case_title(case({"rag.hit_at_k": 1.0})) == "hit@k 1"


RECORDED_SUITE = """\
suites:
  - id: code
    target: {kind: capability, id: rec}
    dataset: .punica/evals/code.jsonl
    engines: [rag]
    options: {rag: {match: path, k: 2}}
    thresholds:
      rag.recall: 0.9
      rag.mode.semantic: 1
"""


def test_a_suite_run_marks_its_cases_and_thresholds(tmp_path: Path) -> None:
    """After a suite run: RAG400/RAG402 per case on its id, RAG403/RAG404 per threshold on its key, the verdict as the lens."""
    cases = [
        json.dumps({"id": "a", "input": {"query": "a"}, "expect": {"relevant": ["src/app.py", "docs/b.md"]}}),
        json.dumps({"id": "b", "input": {"query": "b"}, "expect": {"relevant": ["src/app.py"]}}),
    ]
    make_workspace(tmp_path, suite=RECORDED_SUITE, dataset="\n".join(cases) + "\n")
    (tmp_path / ".punica" / "targets.yaml").write_text("targets:\n  rec:\n    recorded: .punica/runs/rec.jsonl\n", encoding="utf-8")
    (tmp_path / ".punica" / "runs").mkdir()
    answers = [
        {"id": "a", "hits": [{"path": "x"}, {"path": "src/app.py"}, {"path": "docs/b.md"}], "mode": "semantic"},
        {"id": "b", "hits": [{"path": "src/app.py"}], "mode": "keyword"},
    ]
    (tmp_path / ".punica" / "runs" / "rec.jsonl").write_text("\n".join(map(json.dumps, answers)) + "\n", encoding="utf-8")
    workspace = Workspace(tmp_path)
    (suite,) = workspace.suites()
    with Runner(workspace, allow_exec=False) as runner:
        result = runner.run_suite(suite)
    key = suite_key(suite, 0)
    on_cases = case_marks(result, suite, key, lambda line: cases[line])
    assert [(line, item.code, item.lens) for line, item in on_cases] == [
        (0, "RAG400", "recall 0.50 · MRR 0.50"),
        (1, "RAG400", "recall 1.00 · MRR 1.00"),
        (1, "RAG402", None),
    ]
    first = on_cases[0][1]
    assert cases[0][first.start : first.end] == '"a"'
    assert first.message == (
        "recall 0.50 (1/2) · precision 0.50 · MRR 0.50 (first relevant at rank 2) · hit@1 0 · retrieved 2 · semantic 1"
        " — missed: docs/b.md (rank 3, k = 2)"
    )
    in_suite = suite_marks(result, suite, key, workspace.parsed_yaml(suite.file).lines)
    assert [(line, item.code, item.message) for line, item in in_suite] == [
        (1, None, ""),
        (7, "RAG403", "rag.recall 0.75 < 0.9 (mean over 2 scored cases)"),
        (8, "RAG403", "rag.mode.semantic 0.50 < 1 (mean over 2 scored cases)"),
    ]
    assert in_suite[0][1].lens == suite_title(result) == (
        "failed: rag.recall 0.75 < 0.9, rag.mode.semantic 0.50 < 1 · recall 0.75 · MRR 0.75 (2 cases)"
    )
    text = hover_markdown(first.run)
    assert "1. `x`" in text and "2. **`src/app.py`** — ✓ relevant" in text
    assert "3. `docs/b.md` — beyond k = 2, not scored" in text and "**Missed:** `docs/b.md`" in text
