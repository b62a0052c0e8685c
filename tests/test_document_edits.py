"""A model of a dataset written as one JSON document follows edits row by row (an edit inside one row
reads that row alone, see core.reading.documentedits) and gives, after every edit, what a fresh check
of its text gives: the same finding, slip and count of lines, whatever the edit breaks or mends."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag_lsp.core.checking.incremental import DatasetModel
from rag_lsp.core.reading.text import LineIndex, Position

from test_json_document import DATASET, cases, fresh_check_of, workspace_with


def _two_rows_a_line(rows: list[dict]) -> str:
    pairs = [", ".join(json.dumps(row) for row in rows[at : at + 2]) for at in range(0, len(rows), 2)]
    return "[\n" + ",\n".join(pairs) + "\n]\n"


ROWS = cases(14)
LAYOUTS = {
    "indented-array": json.dumps(ROWS, indent=2) + "\n",
    "indented-objects": "\n".join(json.dumps(row, indent=1) for row in ROWS) + "\n",
    # Rows on lines of their own, and two to a line: a row's end and the next
    # row's start share a line, which an edit moves along.
    "a-row-a-line": "[\n" + ",\n".join(json.dumps(row) for row in ROWS) + "\n]\n",
    "two-rows-a-line": _two_rows_a_line(ROWS),
}

# What a person types into a JSON document, the slips included.
TYPED = st.sampled_from(['"', ",", "{", "}", "[", "]", ":", "\n", "x", " ", "", '"k": 1,', '\n    "note": "x",', "}, {", "NaN", "\\", "\t", "1e5"])


@st.composite
def edits(draw: st.DrawFn, count: int) -> list[tuple[float, float, str]]:
    """Edits as where they start and end (shares of the text) and what they type."""
    made = []
    for _ in range(count):
        start = draw(st.floats(0, 1))
        made.append((start, min(1.0, start + draw(st.sampled_from([0.0, 0.0, 0.001, 0.01, 0.05]))), draw(TYPED)))
    return made


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(layout=st.sampled_from(sorted(LAYOUTS)), steps=edits(8))
def test_a_document_edited_anywhere_reads_as_a_fresh_check(layout: str, steps: list[tuple[float, float, str]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        workspace, source = workspace_with(Path(folder), LAYOUTS[layout])
        model = DatasetModel(workspace, DATASET, LAYOUTS[layout])
        assert model.findings() == fresh_check_of(model, source)
        text = model.text
        for start_share, end_share, typed in steps:
            index = LineIndex(text)
            start, end = int(start_share * len(text)), int(end_share * len(text))
            model.edit(index.position(start), index.position(end), typed)
            text = text[:start] + typed + text[end:]
            assert model.text == text
            assert model.findings() == fresh_check_of(model, source)


def test_an_edit_inside_a_row_of_a_long_document_reads_that_row_alone(tmp_path) -> None:
    """Keys typed into rows far below the head of an indented array, a slip made and mended there: each is
    what a fresh check says, and none reads the whole text again once its rows are placed."""
    pretty = json.dumps(cases(200), indent=2) + "\n"
    workspace, source = workspace_with(tmp_path, pretty)
    model = DatasetModel(workspace, DATASET, pretty)
    reads = []
    original = model._read_as_document
    model._read_as_document = lambda: reads.append(1) or original()  # type: ignore[method-assign]
    row = next(number for number, line in enumerate(model.lines) if '"id": "c150"' in line)
    model.edit(Position(row + 1, 0), Position(row + 1, 0), '    "note": "x",\n')
    assert model.findings() == fresh_check_of(model, source)
    assert model.findings()[0].message.startswith("this dataset is one JSON array of 200 rows")
    model.edit(Position(row + 1, 0), Position(row + 1, 0), '    "broken": ,\n')
    (slip,) = model.findings()
    assert slip == fresh_check_of(model, source)[0] and (slip.range.start.line, slip.range.start.character) == (row + 1, 14)
    model.edit(Position(row + 1, 0), Position(row + 2, 0), "")
    assert model.findings() == fresh_check_of(model, source) and "not valid JSON" not in model.findings()[0].message
    assert reads == []
