"""Findings move with their lines: every place at or below an edit, and nothing else."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rag_lsp.core.reading.findings import Finding, Fix, Related, Severity, TextEdit
from rag_lsp.core.reading.text import Position, Range

lines = st.integers(0, 50)
ranges = st.builds(lambda line, start, length: Range(Position(line, start), Position(line, start + length)), lines, st.integers(0, 80), st.integers(0, 20))
edits = st.builds(TextEdit, ranges, st.sampled_from(['"src/a.py"', "", "x"]))
fixes = st.builds(lambda title, edits: Fix(title, tuple(edits)), st.sampled_from(["Change", "Remove"]), st.lists(edits, min_size=1, max_size=2))
related = st.builds(Related, st.just("d.jsonl"), ranges, st.just("first here"))


def moved_place(range: Range, lines: int, below: int) -> Range:
    if range.start.line < below:
        return range
    return Range(Position(range.start.line + lines, range.start.character), Position(range.end.line + lines, range.end.character))


@st.composite
def findings(draw) -> Finding:
    range = draw(ranges)
    fix_list = draw(st.lists(fixes, max_size=2))
    if fix_list and draw(st.booleans()):
        # The fix edits the finding's own range, as RAG203's and RAG206's do.
        first = fix_list[0]
        fix_list[0] = Fix(first.title, (TextEdit(range, first.edits[0].new_text), *first.edits[1:]))
    return Finding("RAG203", Severity.WARNING, range, "message", "d.jsonl", tuple(fix_list), tuple(draw(st.lists(related, max_size=1))))


@settings(max_examples=500)
@given(findings(), st.integers(-5, 5), st.integers(0, 60))
def test_a_moved_finding_moves_each_place_at_or_below_the_edit(finding: Finding, lines: int, below: int) -> None:
    """Moving a finding by some lines from a line down moves its range, each fix edit and each related
    place that starts there or further down, keeps the others, and keeps everything else it says; a
    finding with no place there is itself."""
    moved = finding.moved(lines, below)
    assert moved.range == moved_place(finding.range, lines, below)
    assert [[edit.range for edit in fix.edits] for fix in moved.fixes] == [
        [moved_place(edit.range, lines, below) for edit in fix.edits] for fix in finding.fixes
    ]
    assert [item.range for item in moved.related] == [moved_place(item.range, lines, below) for item in finding.related]
    assert [(fix.title, [edit.new_text for edit in fix.edits], fix.create_file) for fix in moved.fixes] == [
        (fix.title, [edit.new_text for edit in fix.edits], fix.create_file) for fix in finding.fixes
    ]
    assert (moved.code, moved.severity, moved.message, moved.path, moved.unfinished) == (
        finding.code,
        finding.severity,
        finding.message,
        finding.path,
        finding.unfinished,
    )
    places = [finding.range, *(edit.range for fix in finding.fixes for edit in fix.edits), *(item.range for item in finding.related)]
    if lines == 0 or all(place.start.line < below for place in places):
        assert moved is finding  # unmoved: whoever converted it may keep its conversion
