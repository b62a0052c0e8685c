"""The language server, end to end: a real client talks to ``rag-lsp serve`` over stdio.

Each test starts its own server and initializes it with the capabilities it needs.
Nothing sleeps: tests wait for the notifications the server sends (with a timeout,
so a missing notification fails instead of hanging).
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from lspclient import SERVER, codes, diagnostics, edit, edit_range, lenses, open_file, published_when, quick_fixes, replace_lines, span, spans, start, until, value_span
from pygls.uris import to_fs_path
from pytest_lsp import LanguageClient

from rag_lsp.cli import main as cli_main
from rag_lsp.core.workspace.workspace import Workspace

# Slow (end-to-end sessions with the server over stdio): `pytest -m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

RULE_FIXTURES = Path(__file__).parent / "fixtures" / "rules"

SUITE = """\
suites:
  - id: code
    target: {kind: capability, id: vectors.query}
    dataset: .punica/evals/code.jsonl
    engines: [rga]
    thresholds:
      rag.recall: 0.8
      rag.mode.semantic: 1
"""

DATASET_LINES = [
    '{"id": "ok", "input": {"query": "app"}, "expect": {"relevant": ["src/app.py"]}}',
    '{"id": "empty", "input": {"query": "nothing"}, "expect": {"relevant": []}}',
    '{"id": "ok", "input": {"query": "main"}, "expect": {"relevant": ["./src/app.py"]}}',
]
DATASET = "\n".join(DATASET_LINES) + "\n"


# ---------------------------------------------------------------- client


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


def make_workspace(root: Path, dataset: str = DATASET, suite: str = SUITE) -> tuple[Path, Path]:
    (root / ".punica" / "evals").mkdir(parents=True)
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("print('hi')\n", encoding="utf-8")
    suite_path = root / ".punica" / "evals" / "code.suite.yaml"
    dataset_path = root / ".punica" / "evals" / "code.jsonl"
    suite_path.write_text(suite, encoding="utf-8")
    dataset_path.write_text(dataset, encoding="utf-8")
    return suite_path, dataset_path


# ---------------------------------------------------------------- tests


async def test_open_broken_suite_and_dataset(client: LanguageClient, tmp_path: Path) -> None:
    """Opening a broken suite and dataset publishes each finding with its code, exact range, version, fix and related place."""
    suite_path, dataset_path = make_workspace(tmp_path)
    result = await start(client, tmp_path)
    assert result.server_info is not None
    assert result.server_info.name == "rag-lsp"
    assert result.capabilities.text_document_sync.change == types.TextDocumentSyncKind.Incremental
    assert result.capabilities.diagnostic_provider is None  # this client does not pull
    suite_uri = open_file(client, suite_path)
    dataset_uri = open_file(client, dataset_path)

    suite_diagnostics = await diagnostics(client, suite_uri, 1)
    assert spans(suite_diagnostics) == [("RAG100", span(4, *value_span(SUITE.splitlines()[4], "rga")))]
    assert suite_diagnostics[0].source == "rag-lsp"
    assert suite_diagnostics[0].severity == types.DiagnosticSeverity.Error

    found = await diagnostics(client, dataset_uri, 1)
    assert spans(found) == sorted(
        [
            ("RAG200", span(1, *value_span(DATASET_LINES[1], "[]"))),
            ("RAG202", span(2, *value_span(DATASET_LINES[2], '"ok"'))),
            ("RAG206", span(2, *value_span(DATASET_LINES[2], '"./src/app.py"'))),
        ]
    )
    duplicate = next(d for d in found if d.code == "RAG202")
    assert duplicate.related_information is not None
    assert duplicate.related_information[0].location.uri == dataset_path.as_uri()
    assert duplicate.related_information[0].location.range.start.line == 0
    unnormalized = next(d for d in found if d.code == "RAG206")
    assert unnormalized.severity == types.DiagnosticSeverity.Warning
    # Its fix stays with the server, which looks it up when the client asks.
    assert unnormalized.data is None
    fixes = await quick_fixes(client, dataset_uri, unnormalized)
    assert [(fix.title, change.text_document.uri, edit.new_text) for fix in fixes for change in fix.edit.document_changes for edit in change.edits] == [
        ("Normalize to 'src/app.py'", dataset_uri, '"src/app.py"')
    ]


async def test_incremental_edits_publish_the_edited_version(client: LanguageClient, tmp_path: Path) -> None:
    """An incremental edit is checked and published with its version; closing a workspace file shows its on-disk findings."""
    _, dataset_path = make_workspace(tmp_path)
    await start(client, tmp_path)
    uri = open_file(client, dataset_path)
    assert "RAG200" in [d.code for d in await diagnostics(client, uri, 1)]

    # Fill the empty list on line 1: its RAG200 goes away.
    start_column = DATASET_LINES[1].index("[]") + 1
    edit(client, uri, 2, 1, start_column, start_column, '"src/app.py"')
    assert "RAG200" not in [d.code for d in await diagnostics(client, uri, 2)]

    # Two edits in a row: empty line 0's list, then rename its id to end the duplicate.
    line0 = DATASET_LINES[0]
    list_start, list_end = value_span(line0, '["src/app.py"]')
    edit(client, uri, 3, 0, list_start, list_end, "[]")
    id_start, id_end = value_span(line0, '"ok"')
    edit(client, uri, 4, 0, id_start, id_end, '"first"')
    final = await diagnostics(client, uri, 4)
    renamed = line0[:id_start] + '"first"' + line0[id_end:list_start] + "[]"
    assert spans(final) == sorted(
        [
            ("RAG200", span(0, len(renamed) - 2, len(renamed))),
            ("RAG206", span(2, *value_span(DATASET_LINES[2], '"./src/app.py"'))),
        ]
    )
    versions = [p.version for p in client.history if p.uri == uri]  # type: ignore[attr-defined]
    assert versions == sorted(versions), "an older version was published after a newer one"

    client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri)))
    on_disk = await diagnostics(client, uri, None)
    assert [d.code for d in on_disk if d.code == "RAG200"] == ["RAG200"]


async def test_opening_a_dataset_the_scan_read_publishes_its_version(client: LanguageClient, tmp_path: Path) -> None:
    """A dataset opened unchanged after the start-up scan read it gets its diagnostics for the opened version, and edits follow."""
    _, dataset_path = make_workspace(tmp_path)
    await start(client, tmp_path)
    uri = dataset_path.as_uri()
    scanned_codes = [d.code for d in await diagnostics(client, uri, None)]
    assert "RAG200" in scanned_codes
    open_file(client, dataset_path, version=7)
    assert [d.code for d in await diagnostics(client, uri, 7)] == scanned_codes
    start_column = DATASET_LINES[1].index("[]") + 1
    edit(client, uri, 8, 1, start_column, start_column, '"src/app.py"')
    assert "RAG200" not in [d.code for d in await diagnostics(client, uri, 8)]


async def test_a_dataset_in_utf16_is_one_finding_on_disk_and_none_once_an_editor_reads_it(client: LanguageClient, tmp_path: Path) -> None:
    """A dataset saved in UTF-16 that nobody opened has one RAG002 for the file beside its rows' findings;
    opened, the editor's text holds no encoding, and only the rows' findings stay."""
    _, dataset_path = make_workspace(tmp_path)
    dataset_path.write_bytes(dataset_path.read_text(encoding="utf-8").encode("utf-16"))
    await start(client, tmp_path)
    uri = dataset_path.as_uri()
    scanned = await diagnostics(client, uri, None)
    (read_in,) = [d for d in scanned if "UTF-16LE" in d.message]
    assert read_in.code == "RAG002" and read_in.range == types.Range(types.Position(0, 0), types.Position(0, 0))
    rows = sorted(str(d.code) for d in scanned if d is not read_in)
    assert "RAG200" in rows
    open_file(client, dataset_path, dataset_path.read_bytes().decode("utf-16"), version=3)
    opened = await diagnostics(client, uri, 3)
    assert sorted(str(d.code) for d in opened) == rows


async def test_closing_a_file_outside_the_scan_clears_its_diagnostics(client: LanguageClient, tmp_path: Path) -> None:
    """A suite file that the workspace scan does not cover loses its diagnostics when closed."""
    make_workspace(tmp_path, dataset=DATASET_LINES[0] + "\n", suite=SUITE.replace("[rga]", "[rag]"))
    loose = tmp_path / "notes" / "extra.yaml"
    loose.parent.mkdir()
    loose.write_text(SUITE.replace("id: code", "id: extra"), encoding="utf-8")
    await start(client, tmp_path)
    uri = open_file(client, loose)
    assert [d.code for d in await diagnostics(client, uri, 1)] == ["RAG100"]
    client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri)))
    assert await diagnostics(client, uri, None) == []


async def test_a_suite_in_a_new_buffer_counts_before_it_is_saved(client: LanguageClient, tmp_path: Path) -> None:
    """A suite file typed into a new buffer (not on disk, no word from a file watcher) is a suite at once: the
    dataset it names is checked with its `match`, and it has its Run suite lens; closed unsaved, it counts no more."""
    make_workspace(tmp_path, dataset=DATASET_LINES[0] + "\n", suite=SUITE.replace("[rga]", "[rag]"))
    other = tmp_path / ".punica" / "evals" / "other.jsonl"
    other.write_text('{"id": "gone", "input": {"query": "x"}, "expect": {"relevant": ["docs/gone.md"]}}\n', encoding="utf-8")
    await start(client, tmp_path)
    other_uri = other.as_uri()
    assert codes(await diagnostics(client, other_uri, None)) == ["RAG203"]
    typed = SUITE.replace("[rga]", "[rag]").replace("id: code", "id: by-id").replace("code.jsonl", "other.jsonl")
    new = tmp_path / ".punica" / "evals" / "by-id.suite.yaml"
    uri = open_file(client, new, typed + "    options: {rag: {match: id}}\n")
    await published_when(client, other_uri, lambda found: codes(found) == [])
    assert [lens.command.title for lens in await lenses(client, uri)] == ["Run suite (1 case)"]
    client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri)))
    await published_when(client, other_uri, lambda found: codes(found) == ["RAG203"])
    assert not new.exists()


async def test_workspace_scan_reports_unopened_files(client: LanguageClient, tmp_path: Path) -> None:
    """On start the server scans the workspace with progress and publishes findings of files nobody opened."""
    suite_path, dataset_path = make_workspace(tmp_path)
    await start(client, tmp_path)
    found = await diagnostics(client, dataset_path.as_uri(), None)
    assert sorted({str(d.code) for d in found}) == ["RAG200", "RAG202", "RAG206"]
    assert [d.code for d in await diagnostics(client, suite_path.as_uri(), None)] == ["RAG100"]

    def ended() -> bool:
        return any(
            isinstance(report, types.WorkDoneProgressEnd) for reports in client.progress_reports.values() for report in reports
        )

    await until(client, types.PROGRESS, ended)
    (reports,) = client.progress_reports.values()
    assert isinstance(reports[0], types.WorkDoneProgressBegin)


async def test_workspace_scan_counts_its_files_once(client: LanguageClient, tmp_path: Path) -> None:
    """A document opened while the start-up scan runs does not make its progress count the workspace's files a second time."""
    evals = tmp_path / ".punica" / "evals"
    evals.mkdir(parents=True)
    for n in range(150):
        (evals / f"s{n}.suite.yaml").write_text(SUITE.replace("id: code", f"id: s{n}").replace("code.jsonl", f"d{n}.jsonl"), encoding="utf-8")
        (evals / f"d{n}.jsonl").write_text(DATASET_LINES[0] + "\n", encoding="utf-8")
    await start(client, tmp_path)

    def scan_reports() -> list:
        return [report for reports in client.progress_reports.values() for report in reports]

    await until(client, types.PROGRESS, lambda: any(isinstance(report, types.WorkDoneProgressReport) for report in scan_reports()))
    open_file(client, evals / "s3.suite.yaml")
    await until(client, types.PROGRESS, lambda: any(isinstance(report, types.WorkDoneProgressEnd) for report in scan_reports()))
    counted = [report for report in scan_reports() if isinstance(report, types.WorkDoneProgressReport)]
    percentages = [report.percentage for report in counted]
    assert percentages == sorted(set(percentages)), percentages
    assert percentages[-1] == 100, percentages
    assert [report.message for report in counted].count("300/300 files") == 1


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16"])
async def test_columns_follow_the_negotiated_encoding(client: LanguageClient, tmp_path: Path, encoding: str) -> None:
    """A client that offers UTF-8 gets byte columns; a default client gets UTF-16 columns, on a line with non-ASCII text."""
    line = '{"input": {"query": "café 🚀 naïve"}, "id": "ok", "expect": {"relevant": ["src/app.py"]}}'
    _, dataset_path = make_workspace(tmp_path, dataset=DATASET_LINES[0] + "\n" + line + "\n")
    result = await start(client, tmp_path, encodings=["utf-8"] if encoding == "utf-8" else None)
    assert (result.capabilities.position_encoding or "utf-16") == encoding
    uri = open_file(client, dataset_path)
    (duplicate,) = [d for d in await diagnostics(client, uri, 1) if d.code == "RAG202"]

    start_cp, end_cp = value_span(line, '"ok"')
    codec = "utf-8" if encoding == "utf-8" else "utf-16-le"
    width = 1 if encoding == "utf-8" else 2
    expected = [len(line[:column].encode(codec)) // width for column in (start_cp, end_cp)]
    assert [duplicate.range.start.character, duplicate.range.end.character] == expected
    assert expected != [start_cp, end_cp]  # the line really tells the encodings apart


async def test_bad_setting_is_reported_and_good_settings_apply(client: LanguageClient, tmp_path: Path) -> None:
    """A bad initialization option is shown as a warning and replaced by its default; workspace/configuration applies."""
    _, dataset_path = make_workspace(tmp_path)
    client.set_configuration({"severity": {"RAG200": "warning"}}, section="ragLsp")
    await start(client, tmp_path, options={"ragLsp": {"maxFileBytes": "big"}})
    await until(client, types.WINDOW_SHOW_MESSAGE, lambda: bool(client.messages))
    (message,) = client.messages
    assert message.type == types.MessageType.Warning
    assert "maxFileBytes" in message.message

    uri = open_file(client, dataset_path)
    found = await diagnostics(client, uri, 1)
    assert {str(d.code): d.severity for d in found}["RAG200"] == types.DiagnosticSeverity.Warning


async def test_pull_client_pulls_every_file_and_is_never_pushed(client: LanguageClient, tmp_path: Path) -> None:
    """A client that pulls gets document and workspace diagnostic reports (unchanged ones by result id), and no publishDiagnostics."""
    suite_path, dataset_path = make_workspace(tmp_path)
    result = await start(client, tmp_path, pull=True)
    provider = result.capabilities.diagnostic_provider
    assert provider is not None
    assert provider.workspace_diagnostics
    assert provider.inter_file_dependencies
    uri = open_file(client, dataset_path)
    expected = sorted(
        [
            ("RAG200", span(1, *value_span(DATASET_LINES[1], "[]"))),
            ("RAG202", span(2, *value_span(DATASET_LINES[2], '"ok"'))),
            ("RAG206", span(2, *value_span(DATASET_LINES[2], '"./src/app.py"'))),
        ]
    )
    report = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert isinstance(report, types.RelatedFullDocumentDiagnosticReport)
    assert spans(report.items) == expected
    again = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri), previous_result_id=report.result_id)
    )
    assert isinstance(again, types.RelatedUnchangedDocumentDiagnosticReport)
    assert again.result_id == report.result_id

    workspace = await client.workspace_diagnostic_async(types.WorkspaceDiagnosticParams(previous_result_ids=[]))
    by_uri = {item.uri: item for item in workspace.items}
    assert by_uri[uri].version == 1
    assert spans(by_uri[uri].items) == expected
    suite_report = by_uri[suite_path.as_uri()]
    assert suite_report.version is None  # not open: found by the workspace scan
    assert spans(suite_report.items) == [("RAG100", span(4, *value_span(SUITE.splitlines()[4], "rga")))]

    previous = [types.PreviousResultId(uri=item.uri, value=item.result_id) for item in workspace.items]
    unchanged = await client.workspace_diagnostic_async(types.WorkspaceDiagnosticParams(previous_result_ids=previous))
    assert {item.uri for item in unchanged.items} == set(by_uri)
    assert all(isinstance(item, types.WorkspaceUnchangedDocumentDiagnosticReport) for item in unchanged.items)
    assert client.history == []  # type: ignore[attr-defined]


def check_json(case: Path) -> list[dict[str, Any]]:
    """``rag-lsp check --format json CASE``, run in this process."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        cli_main(["check", "--format", "json", str(case)])
    return json.loads(out.getvalue())


async def test_server_diagnostics_equal_check_on_every_rule_fixture(client: LanguageClient) -> None:
    """For every rule fixture, the diagnostics of the opened files equal `rag-lsp check --format json`'s findings."""
    cases = sorted(path for path in RULE_FIXTURES.glob("RAG*/*") if path.is_dir())
    assert cases
    await start(client, None)
    labels = {1: "error", 2: "warning", 3: "information", 4: "hint"}
    expected: dict[str, list[tuple]] = {}
    for case in cases:
        for relative in Workspace(case).discover():
            expected[(case / relative).as_uri()] = []
        for item in check_json(case):
            r = item["range"]
            where = (r["start"]["line"], r["start"]["character"], r["end"]["line"], r["end"]["character"])
            expected[(case / item["path"]).as_uri()].append((item["code"], where, item["severity"], item["message"]))
    assert sum(len(findings) for findings in expected.values()) >= len(cases) // 2
    for uri in expected:
        open_file(client, Path(to_fs_path(uri)))
    for uri, findings in expected.items():
        got = [
            (
                str(d.code),
                (d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character),
                labels[int(d.severity or 1)],
                d.message,
            )
            for d in await diagnostics(client, uri, 1)
        ]
        assert sorted(got) == sorted(findings), uri


def test_serve_rejects_a_malformed_tcp_address(capsys: pytest.CaptureFixture[str]) -> None:
    """`rag-lsp serve --tcp` without HOST:PORT is a usage error (exit 2), not a crash."""
    assert cli_main(["serve", "--tcp", "localhost"]) == 2
    assert "HOST:PORT" in capsys.readouterr().err


async def test_a_cause_on_most_rows_is_one_diagnostic_whose_fix_repairs_every_occurrence(client: LanguageClient, tmp_path: Path) -> None:
    """A dataset whose 30 rows write their path from `./` shows one RAG206 saying so; its quick fix of every
    occurrence normalizes the 30 paths in one edit, and typing in a query keeps the one diagnostic."""
    rows = [json.dumps({"id": f"c{n}", "input": {"query": f"q{n}"}, "expect": {"relevant": ["./src/app.py"]}}) for n in range(30)]
    _, dataset_path = make_workspace(tmp_path, dataset="\n".join(rows) + "\n")
    await start(client, tmp_path)
    uri = open_file(client, dataset_path)
    (folded,) = [d for d in await diagnostics(client, uri, 1) if d.code == "RAG206"]
    assert folded.message.startswith("30 of the 30 rows (lines 1, 2, 3, …) share this finding")
    assert folded.range.start.line == 0
    fixes = await quick_fixes(client, uri, folded)
    every = next(fix for fix in fixes if fix.title == "Normalize every such path (30 places)")
    (change,) = every.edit.document_changes
    assert [(edit.range.start.line, edit.new_text) for edit in change.edits] == [(line, '"src/app.py"') for line in range(30)]
    assert all(edit.range.start.character == rows[edit.range.start.line].index('"./src') for edit in change.edits)

    column = rows[12].index('"q12"') + 1
    edit(client, uri, 2, 12, column, column, "more ")
    assert [d.code for d in await diagnostics(client, uri, 2)] == ["RAG206"]


async def test_a_prefix_before_most_paths_is_one_diagnostic_whose_fix_takes_it_off_every_path(client: LanguageClient, tmp_path: Path) -> None:
    """A dataset whose 30 rows write their path from the folder of the machine that wrote it shows one
    RAG203 naming that folder; its quick fix of every occurrence takes the folder off the 30 paths in one edit."""
    rows = [json.dumps({"id": f"c{n}", "input": {"query": f"q{n}"}, "expect": {"relevant": ["/home/ci/repo/src/app.py"]}}) for n in range(30)]
    _, dataset_path = make_workspace(tmp_path, dataset="\n".join(rows) + "\n")
    await start(client, tmp_path)
    uri = open_file(client, dataset_path)
    (once,) = [d for d in await diagnostics(client, uri, 1) if d.code == "RAG203"]
    assert "with '/home/ci/repo/' before it" in once.message
    fixes = await quick_fixes(client, uri, once)
    every = next(fix for fix in fixes if fix.title == "Remove '/home/ci/repo/' before every expected path")
    (change,) = every.edit.document_changes
    assert [(edit.range.start.line, edit.new_text) for edit in change.edits] == [(line, '"src/app.py"') for line in range(30)]
    assert all(edit.range.start.character == rows[edit.range.start.line].index('"/home') for edit in change.edits)


async def test_a_dataset_written_as_one_json_document_is_one_diagnostic_whose_fix_writes_json_lines(client: LanguageClient, tmp_path: Path) -> None:
    """A dataset written as one indented JSON array shows one RAG002 on its first line; its quick fix
    replaces the text with the rows one per line, and once applied the rows are read (a missing path is
    found on its line); a slip typed into the array is then one RAG002 where it is."""
    rows = [{"id": f"c{n}", "input": {"query": f"q{n}"}, "expect": {"relevant": ["src/app.py" if n else "src/gone.py"]}} for n in range(30)]
    pretty = json.dumps(rows, indent=2) + "\n"
    _, dataset_path = make_workspace(tmp_path, dataset=pretty)
    await start(client, tmp_path)
    uri = open_file(client, dataset_path)
    (once,) = await diagnostics(client, uri, 1)
    assert once.code == "RAG002" and once.message.startswith("this dataset is one JSON array of 30 rows, written over")
    fixes = await quick_fixes(client, uri, once)
    whole = next(fix for fix in fixes if fix.title == "Write each row on a line of its own (JSON Lines)")
    (change,) = whole.edit.document_changes
    (replaced,) = change.edits
    assert (replaced.range.start.line, replaced.range.start.character) == (0, 0)
    assert replaced.range.end.line == pretty.count("\n")
    assert replaced.new_text == "".join(json.dumps(row, separators=(",", ":")) + "\n" for row in rows)

    edit_range(client, uri, 2, replaced.range, replaced.new_text)
    assert [(d.code, d.range.start.line) for d in await diagnostics(client, uri, 2)] == [("RAG203", 0)]

    edit_range(client, uri, 3, types.Range(types.Position(0, 0), types.Position(30, 0)), pretty)
    assert [d.code for d in await diagnostics(client, uri, 3)] == ["RAG002"]
    column = pretty.splitlines()[4].index('"q0"') + 4
    edit(client, uri, 4, 4, column, column, ",")  # a trailing comma before the `}` of the next line
    (slip,) = await diagnostics(client, uri, 4)
    assert slip.code == "RAG002" and (slip.range.start.line, slip.range.start.character) == (5, 4)
    assert "not valid JSON here: a trailing comma before '}'" in slip.message


async def test_slips_typed_deep_in_a_long_json_document_are_found_where_they_are(client: LanguageClient, tmp_path: Path) -> None:
    """In an indented array of a hundred rows, a key typed into a row far below its first lines is one
    RAG002 still; a key with no value typed there is the array's slip, at its place; a slip typed into a row
    above it is the slip then; mending both gives the one RAG002 of the array again."""
    rows = [{"id": f"c{n}", "input": {"query": f"q{n}"}, "expect": {"relevant": ["src/app.py"]}} for n in range(100)]
    pretty = json.dumps(rows, indent=2) + "\n"
    lines = pretty.splitlines()
    _, dataset_path = make_workspace(tmp_path, dataset=pretty)
    await start(client, tmp_path)
    uri = open_file(client, dataset_path)
    (once,) = await diagnostics(client, uri, 1)
    assert once.message.startswith("this dataset is one JSON array of 100 rows")
    below = lines.index('    "id": "c90",')
    above = lines.index('    "id": "c60",')
    replace_lines(client, uri, 2, below, below, '    "note": "x",\n')
    (kept,) = await diagnostics(client, uri, 2)
    assert kept.message.startswith(f"this dataset is one JSON array of 100 rows, written over {len(lines) + 1:,} lines")
    replace_lines(client, uri, 3, below, below + 1, '    "note": ,\n')
    (slip,) = await diagnostics(client, uri, 3)
    assert (slip.range.start.line, slip.range.start.character) == (below, 12) and "not valid JSON here" in slip.message
    replace_lines(client, uri, 4, above, above, '    "topK" 3,\n')
    (slip,) = await diagnostics(client, uri, 4)
    assert (slip.range.start.line, slip.range.start.character) == (above, 11) and "not valid JSON here" in slip.message
    replace_lines(client, uri, 5, above, above + 1, "")
    (slip,) = await diagnostics(client, uri, 5)
    assert (slip.range.start.line, slip.range.start.character) == (below, 12)
    replace_lines(client, uri, 6, below, below + 1, "")
    (mended,) = await diagnostics(client, uri, 6)
    assert mended.message.startswith(f"this dataset is one JSON array of 100 rows, written over {len(lines):,} lines")

def thirty_cases(**asked: object) -> str:
    """Thirty cases expecting src/app.py, each asking its target for ``asked`` too (`topK`, `corpora`)."""
    return "".join(
        json.dumps({"id": f"c{n}", "input": {"query": f"q{n}", **asked}, "expect": {"relevant": ["src/app.py"]}}) + "\n" for n in range(30)
    )


async def test_a_suites_k_above_what_most_cases_ask_follows_edits_of_the_dataset(client: LanguageClient, tmp_path: Path) -> None:
    """When edits of an open dataset make most of its cases ask for fewer hits than the suite's `k`, the suite's
    `k` gets its RAG207 (the dataset's own findings fold into one), as `rag-lsp check` gives it for that text;
    when they ask for enough again, it goes."""
    def rows(top_k: int) -> str:
        return thirty_cases(topK=top_k)

    suite = SUITE.replace("engines: [rga]", "engines: [rag]\n    options: {rag: {k: 5}}")
    suite_path, dataset_path = make_workspace(tmp_path, dataset=rows(10), suite=suite)
    await start(client, tmp_path)
    suite_uri = open_file(client, suite_path)
    dataset_uri = open_file(client, dataset_path)
    assert "RAG207" not in codes(await diagnostics(client, suite_uri, 1))
    assert "RAG207" not in codes(await diagnostics(client, dataset_uri, 1))

    replace_lines(client, dataset_uri, 2, 0, 30, rows(3))
    on_k = await published_when(client, suite_uri, lambda found: "RAG207" in codes(found))
    (hint,) = [d for d in on_k if d.code == "RAG207"]
    k_line = suite.splitlines().index("    options: {rag: {k: 5}}")
    assert hint.range.start.line == k_line
    assert hint.message.startswith("k: 5 is above the topK most cases of .punica/evals/code.jsonl ask for (3)")
    dataset_path.write_text(rows(3), encoding="utf-8")
    assert [item["message"] for item in check_json(tmp_path) if item["code"] == "RAG207" and item["path"].endswith(".yaml")] == [hint.message]
    (folded,) = [d for d in await diagnostics(client, dataset_uri, 2) if d.code == "RAG207"]
    assert folded.message.startswith("30 of the 30 rows")

    replace_lines(client, dataset_uri, 3, 0, 30, rows(10))
    await published_when(client, suite_uri, lambda found: "RAG207" not in codes(found))


async def test_a_target_serving_no_corpus_most_cases_ask_follows_edits_of_the_dataset(client: LanguageClient, tmp_path: Path) -> None:
    """When edits of an open dataset make most cases ask for a corpus the suite's target does not serve, the
    suite's target gets its RAG004 (the cases' own findings fold into one), as `rag-lsp check` gives it."""
    def rows(corpus: str) -> str:
        return thirty_cases(corpora=[corpus])

    suite = SUITE.replace("engines: [rga]", "engines: [rag]")
    suite_path, dataset_path = make_workspace(tmp_path, dataset=rows("code"), suite=suite)
    (tmp_path / ".punica" / "targets.yaml").write_text('targets:\n  vectors.query:\n    builtin: {corpora: {code: ["src/**"]}}\n')
    await start(client, tmp_path)
    suite_uri = open_file(client, suite_path)
    dataset_uri = open_file(client, dataset_path)
    assert "RAG004" not in codes(await diagnostics(client, suite_uri, 1))
    assert "RAG004" not in codes(await diagnostics(client, dataset_uri, 1))

    replace_lines(client, dataset_uri, 2, 0, 30, rows("issues"))
    on_target = await published_when(client, suite_uri, lambda found: "RAG004" in codes(found))
    (error,) = [d for d in on_target if d.code == "RAG004"]
    assert error.range.start.line == suite.splitlines().index("    target: {kind: capability, id: vectors.query}")
    assert "ask to search 'issues', which target 'vectors.query' does not serve (it serves: code)" in error.message
    dataset_path.write_text(rows("issues"), encoding="utf-8")
    assert [item["message"] for item in check_json(tmp_path) if item["code"] == "RAG004" and item["path"].endswith(".yaml")] == [error.message]
    (folded,) = [d for d in await diagnostics(client, dataset_uri, 2) if d.code == "RAG004"]
    assert folded.message.startswith("30 of the 30 rows")
