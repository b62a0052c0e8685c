"""A dataset written as one JSON document (an indented array, or objects over several lines) is one
finding for the file, read whole, however many lines it has; JSON Lines are read line by line as before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag_lsp.cli import main
from rag_lsp.core.checking import rules as registry
from rag_lsp.core.checking.analyze import analyze_file
from rag_lsp.core.checking.analysis import Analysis
from rag_lsp.core.checking.incremental import MODELLED_FROM_BYTES, DatasetModel
from rag_lsp.core.reading import jsondocument
from rag_lsp.core.reading.jsondocument import ARRAY, OBJECTS, Table, read_document
from rag_lsp.core.reading.sources import DiskSource, OverlaySource
from rag_lsp.core.reading.text import LineIndex, Position, apply_edits
from rag_lsp.core.workspace.workspace import Workspace

DATASET = ".punica/evals/cases.jsonl"
SUITE = (
    "suites:\n  - id: s\n    target: {kind: capability, id: vectors.query}\n"
    f"    dataset: {DATASET}\n    engines: [rag]\n    thresholds: {{rag.recall: 0.5, rag.mode.semantic: 1}}\n"
)


def cases(count: int) -> list[dict]:
    """``count`` cases, the first expecting a file the workspace lacks."""
    return [{"id": f"c{n}", "input": {"query": f"q{n}", "topK": 5}, "expect": {"relevant": ["src/gone.py" if n == 0 else "src/app.py"]}} for n in range(count)]


def json_lines(rows: list[dict]) -> str:
    return "".join(json.dumps(row, separators=(",", ":")) + "\n" for row in rows)


def fresh_check_of(model: DatasetModel, source: OverlaySource) -> list:
    """The findings of a fresh check of the text ``model`` holds now."""
    workspace = model.workspace
    source.texts[workspace.absolute(DATASET)] = model.text
    workspace.invalidate()
    return analyze_file(workspace, DATASET)


def workspace_with(root: Path, text: str) -> tuple[Workspace, OverlaySource]:
    (root / ".punica" / "evals").mkdir(parents=True)
    (root / ".punica" / "evals" / "s.suite.yaml").write_text(SUITE)
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("x\n")
    (root / DATASET).write_text(text, encoding="utf-8")
    source = OverlaySource(DiskSource(1 << 30))
    return Workspace(root, source=source), source


ROWS = cases(3)


@pytest.mark.parametrize(
    ("text", "kind", "rows", "place", "lines"),
    [
        (json.dumps(ROWS, indent=2), ARRAY, 3, (0, 0), json.dumps(ROWS, indent=2).count("\n") + 1),
        ("\n\n  " + json.dumps(ROWS, indent=2) + "\n\n", ARRAY, 3, (2, 2), json.dumps(ROWS, indent=2).count("\n") + 1),
        (json.dumps(ROWS), ARRAY, 3, (0, 0), 1),
        ("\n".join(json.dumps(row, indent=2) for row in ROWS) + "\n", OBJECTS, 3, (0, 0), 3 * json.dumps(ROWS[0], indent=2).count("\n") + 3),
    ],
    ids=["indented-array", "after-blank-lines", "array-on-one-line", "indented-objects"],
)
def test_a_text_written_as_one_document_is_read_whole(text: str, kind: str, rows: int, place: tuple[int, int], lines: int) -> None:
    """An array of the rows, indented or on one line, and objects each written over several lines are one
    document: its kind, its rows, where it begins and how many lines it is written over."""
    document = read_document(text)
    assert document is not None and document.error is None
    assert (document.kind, len(document.rows), (document.first_line, document.first_column), document.lines) == (kind, rows, place, lines)
    assert document.as_json_lines() == json_lines(ROWS)


@pytest.mark.parametrize(
    "text",
    [
        json_lines(ROWS),
        "{\n" + json_lines(ROWS)[1:],  # JSON Lines whose first row was broken over two lines
        "".join(f"[{json.dumps(row)}]\n" for row in ROWS),  # rows written as lists
        '[{"id": "c0", \n' + json_lines(ROWS),  # JSON Lines whose first row is cut off
        "",
        "\n  \n",
    ],
    ids=["json-lines", "first-row-split", "rows-as-lists", "first-row-cut-off", "empty", "blank"],
)
def test_json_lines_are_no_document(text: str) -> None:
    """JSON Lines, even with a first line that begins like a document, are read line by line."""
    assert read_document(text) is None


@pytest.mark.parametrize(
    ("text", "kind", "columns"),
    [
        ("id,query,relevant\nc1,how does x start,src/a.py\nc2,\"where, then\",src/b.py;src/c.py\n", "CSV", ["id", "query", "relevant"]),
        ("id\tquery\r\nc1\thow\r\nc2\twhy\r\n", "TSV", ["id", "query"]),
        ("\nid;query\nc1;how\nc2;why\n", "semicolon-separated", ["id", "query"]),
    ],
    ids=["csv-with-quoted-commas", "tsv-crlf", "semicolons-after-a-blank-line"],
)
def test_a_table_of_delimited_values_is_read_whole(text: str, kind: str, columns: list[str]) -> None:
    """A spreadsheet's export (CSV, TSV, ...) is a table: its kind, its columns and how many lines it takes."""
    table = read_document(text)
    assert isinstance(table, Table) and (table.kind, table.columns) == (kind, columns)
    assert table.lines == len(text.strip().splitlines())


@pytest.mark.parametrize(
    "text",
    [
        'id: 1, x\n{"id": "a", "input": {"query": "q, r"}}\n{"id": "b", "input": {"query": "q, s"}}\n',
        "a,b\n",
        "id,query\nc1,how\nc2,why,extra,fields\nc3\nc4,a,b,c\n",
        '\xff{"input_id": "q1", "x": 1}\r{"input_id": "q2", "x": 2}\r\n{"input_id": "q3"}\r{"input_id": "q4"}\r',
    ],
    ids=["json-lines-after-a-broken-first-line", "one-line", "ragged", "carriage-returns-inside-lines"],
)
def test_lines_that_are_no_table_are_read_line_by_line(text: str) -> None:
    """JSON Lines whose first line is broken, a single line, lines of as many
    fields as they like, and lines with a bare carriage return inside (which the
    table reader refuses) are no table."""
    assert read_document(text) is None


@pytest.mark.parametrize("piece", [1, 7, 300, 1 << 20])
def test_objects_side_by_side_read_a_piece_at_a_time_are_the_rows_read_whole(monkeypatch: pytest.MonkeyPatch, piece: int) -> None:
    """Objects side by side are read a piece of text at a time (no copy of the whole text is written with
    its commas): whatever the pieces, the rows and their count are those of the text read whole, a slip in
    any piece is the document's, and a reading for the count alone keeps no row."""
    rows = cases(40)
    text = "\n\n".join(json.dumps(row, indent=2) for row in rows) + "\n"
    monkeypatch.setattr(jsondocument, "_PIECE_CHARACTERS", piece)
    document = read_document(text)
    assert document.count == 40 and [json.loads(bytes(row)) for row in document.rows] == rows
    counted = read_document(text, keep_rows=False)
    assert counted.count == 40 and counted.rows == [] and counted.described == document.described
    broken = text.replace('"q33",', '"q33"', 1)
    slip = read_document(broken)
    assert slip.error is not None and slip.error[0] == broken[: broken.index('"q33"')].count("\n") + 1


def test_a_broken_document_is_one_slip_where_the_standard_decoder_stops() -> None:
    """A document that is not valid JSON is still one document: its slip is where the standard decoder
    stops, said as what to do; in objects side by side, in the first object that is not one."""
    pretty = json.dumps(ROWS, indent=2).splitlines()
    at = next(number for number, line in enumerate(pretty) if '"src/gone.py"' in line)
    pretty[at] += ","
    document = read_document("\n".join(pretty))
    assert document is not None and document.kind == ARRAY and not document.rows
    assert document.error == (at + 1, pretty[at + 1].index("]"), "a trailing comma before ']': remove the comma")
    objects = "\n".join(json.dumps(row, indent=2) for row in ROWS).splitlines()
    second = [number for number, line in enumerate(objects) if line == "{"][1]
    objects[second + 1] = objects[second + 1].replace('"id"', "id")
    document = read_document("\n".join(objects))
    assert document is not None and document.kind == OBJECTS
    assert document.error == (second + 1, objects[second + 1].index("id"), 'a key without quotes: write "id"')


def test_what_only_the_standard_decoder_reads_or_refuses_is_said_of_a_document() -> None:
    """NaN in a document is its one slip, where it is (not in a string); an escape of half a character,
    which msgspec refuses and JSON allows, leaves a valid document whose row is written again as JSON."""
    document = read_document('[\n  {\n    "note": "NaN",\n    "score": NaN\n  }\n]\n')
    assert document is not None and document.error == (3, 13, "NaN is not valid JSON; use null or a number")
    document = read_document('[\n  {\n    "id": "\\ud800",\n    "k": 1\n  }\n]\n')
    assert document is not None and document.error is None
    assert document.as_json_lines() == '{"id":"\\ud800","k":1}\n'


def test_rows_written_on_lines_of_their_own_keep_their_text() -> None:
    """The rows written as JSON Lines keep their keys in order, their numbers as written and their escapes."""
    text = '[\n  {\n    "id": "\\u00e9t\\u00e9",\n    "b": 2.50,\n    "a": [1e3, true, null]\n  }\n]\n'
    document = read_document(text)
    assert document is not None
    assert document.as_json_lines() == '{"id":"\\u00e9t\\u00e9","b":2.50,"a":[1e3,true,null]}\n'


def test_a_check_reads_no_row_of_a_document_and_its_fix_gives_rows_that_are_read(tmp_path: Path) -> None:
    """A fresh check of a dataset that is one document gives one RAG002 and nothing about its rows (the
    suite sees no row either); the fix of every occurrence, made when asked for, writes the rows one per line,
    after which the rows are read and their own findings come."""
    pretty = json.dumps(cases(30), indent=2) + "\n"
    workspace, source = workspace_with(tmp_path, pretty)
    (found,) = analyze_file(workspace, DATASET)
    assert found.code == "RAG002" and str(found.range) == "0:0-0:1"
    assert found.message.startswith(f"this dataset is one JSON array of 30 rows, written over {pretty.count(chr(10)):,} lines, not JSON Lines")
    assert workspace.dataset_shape(DATASET) is None and workspace.top_ks_asked(DATASET) == (workspace.top_ks_asked(DATASET)[0], 0)
    (fix,) = found.fixes
    assert fix.every and not fix.edits
    lines = pretty.split("\n")
    made = registry.fix_of_every_occurrence(workspace, DATASET, lines, found, fix)
    (edit,) = made.edits
    fixed = apply_edits(pretty, [(edit.range, edit.new_text)])
    assert fixed == json_lines(cases(30))
    source.texts[workspace.absolute(DATASET)] = fixed
    workspace.invalidate()
    assert [(finding.code, finding.range.start.line) for finding in analyze_file(workspace, DATASET)] == [("RAG203", 0)]


def test_a_model_of_a_document_follows_edits_as_a_fresh_check(tmp_path: Path) -> None:
    """A model of a dataset that is one document gives what a fresh check gives after each edit: a slip typed
    into it, the slip mended, the text replaced by its rows as JSON Lines (rows read, line by line), and JSON
    Lines replaced by a document again."""
    rows = cases(30)
    pretty = json.dumps(rows, indent=2) + "\n"
    workspace, source = workspace_with(tmp_path, pretty)
    model = DatasetModel(workspace, DATASET, pretty)

    assert model.findings() == fresh_check_of(model, source) and len(model.findings()) == 1
    # Words typed into strings, and a quote typed into one (the document then breaks there).
    query = next(number for number, line in enumerate(model.lines) if '"q1"' in line)
    column = model.lines[query].index('"q1"') + 2
    for typed in ("ab", "c d", ""):
        model.edit(Position(query, column), Position(query, column + (typed == "")), typed)
        assert model.findings() == fresh_check_of(model, source) and model.text == source.texts[workspace.absolute(DATASET)]
    model.edit(Position(query, column), Position(query, column), '"')
    assert model.findings() == fresh_check_of(model, source) and "not valid JSON here" in model.findings()[0].message
    model.edit(Position(query, column), Position(query, column + 1), "")
    assert model.findings() == fresh_check_of(model, source) and model.size == len(model.text.encode())
    lines = model.text.split("\n")
    at = next(number for number, line in enumerate(lines) if line.endswith('"topK": 5'))
    end_of_line = Position(at, len(lines[at]))
    model.edit(end_of_line, end_of_line, ",")  # a trailing comma before the `}` of the next line
    (slip,) = model.findings()
    assert (slip.range.start.line, slip.range.start.character) == (at + 1, lines[at + 1].index("}"))
    assert "not valid JSON here: a trailing comma before '}'" in slip.message
    assert model.findings() == fresh_check_of(model, source) and model.shown(2) == model.findings()
    model.edit(end_of_line, Position(at, len(lines[at]) + 1), "")
    assert model.findings() == fresh_check_of(model, source) and model.findings()[0].message.startswith("this dataset is one JSON array of 30 rows")
    end = LineIndex(model.text).position(len(model.text))
    model.edit(Position(0, 0), end, json_lines(rows))
    assert [(finding.code, finding.range.start.line) for finding in model.findings()] == [("RAG203", 0)] == [(f.code, f.range.start.line) for f in fresh_check_of(model, source)]
    assert model.case_count == 30
    end = LineIndex(model.text).position(len(model.text))
    model.edit(Position(0, 0), end, pretty)
    assert model.findings() == fresh_check_of(model, source) and model.case_count == 0


def test_the_command_line_checks_a_large_document_as_one_finding_and_runs_none_of_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`rag-lsp check` of a dataset written as one indented array, larger than a model is made for, gives
    the one RAG002; `rag-lsp run` says the suite is broken because its dataset is not JSON Lines."""
    rows = cases(2_000)
    pretty = json.dumps(rows, indent=2) + "\n"
    assert len(pretty) > MODELLED_FROM_BYTES
    workspace_with(tmp_path, pretty)
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--format", "json"]) == 1
    (finding,) = json.loads(capsys.readouterr().out)
    assert finding["code"] == "RAG002" and finding["message"].startswith("this dataset is one JSON array of 2,000 rows")
    assert main(["run", "--no-exec", "--format", "json"]) == 1
    (suite,) = json.loads(capsys.readouterr().out)["suites"]
    assert "not JSON Lines (one JSON object per line)" in json.dumps(suite) and suite["broken"] and suite["cases"] == []


def test_an_analysis_stands_a_document_on_disk_for_its_dataset(tmp_path: Path) -> None:
    """Checked from disk, a large document is one finding and stands for its dataset in the workspace's facts
    (no row, no shape) without its lines being read as rows."""
    pretty = json.dumps(cases(2_000), indent=2) + "\n"
    workspace, _ = workspace_with(tmp_path, pretty)
    analysis = Analysis(helper=None)
    (found,) = analysis.check([(workspace, DATASET, "dataset")])
    assert [finding.code for finding in found] == ["RAG002"]
    live = workspace.live_datasets[DATASET]
    assert live.shape is None and live.top_ks_asked()[1] == 0 and live.line_text(0) == "["
    assert workspace.lines_of(DATASET).line_text(1) == "  {"


def test_a_model_of_a_table_follows_edits_as_a_fresh_check(tmp_path: Path) -> None:
    """A model of a dataset that is a CSV table gives what a fresh check gives after each edit: a field typed
    into, a line added, a column named in the first line, and the table replaced by JSON Lines."""
    table = "id,query,relevant\n" + "".join(f'c{n},"how, {n}",src/app.py\n' for n in range(30))
    workspace, source = workspace_with(tmp_path, table)
    model = DatasetModel(workspace, DATASET, table)

    (found,) = model.findings()
    assert found.message.startswith("this dataset is a CSV table of 31 lines (columns id, query, relevant)") and found == fresh_check_of(model, source)[0]
    model.edit(Position(3, 6), Position(3, 6), "more ")  # inside a quoted field
    model.edit(Position(31, 0), Position(31, 0), "c99,why,docs/x.md\n")
    assert model.findings() == fresh_check_of(model, source) and "table of 32 lines" in model.findings()[0].message
    model.edit(Position(0, len("id,query,relevant")), Position(0, len("id,query,relevant")), ",grade")
    assert model.findings() == fresh_check_of(model, source)
    end = LineIndex(model.text).position(len(model.text))
    model.edit(Position(0, 0), end, json_lines(cases(3)))
    assert [(finding.code, finding.range.start.line) for finding in model.findings()] == [("RAG203", 0)] == [(f.code, f.range.start.line) for f in fresh_check_of(model, source)]
