"""Runs from the editor, end to end over stdio: code lenses, the run commands, results
as diagnostics that follow their lines, hover, quick fixes and source actions,
cancellation, timeouts and trust.

Each test starts its own server; nothing sleeps (tests wait for the notification
or the response they need).
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lspclient import (
    SERVER,
    TIMEOUT_S,
    apply_text_edits,
    children_of,
    diagnostics,
    document,
    edit,
    execute,
    lenses,
    open_file,
    published_when,
    quick_fixes,
    refreshed,
    server_pid,
    start,
    until,
    value_span,
)
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient
from workspaces import write_files

# Slow (end-to-end sessions with the server over stdio): `pytest -m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

SUITE_FILE = ".punica/evals/code.suite.yaml"
DATASET_FILE = ".punica/evals/code.jsonl"
RECORDING = ".punica/runs/rec.jsonl"

SUITE = """\
# The suite under test.
suites:
  - id: code            # recorded answers
    target: {kind: capability, id: rec}
    dataset: .punica/evals/code.jsonl
    engines: [rag]
    thresholds:
      rag.recall: 0.9   # fails: one case misses a file
      rag.mode.semantic: 1
"""
TARGETS = "targets:\n  rec:\n    recorded: .punica/runs/rec.jsonl\n"

CASES = [
    '{"id": "approval", "input": {"query": "how does the gateway decide an approval", "corpora": ["code"], "topK": 10}, '
    '"expect": {"relevant": ["src/gateway.ts", "docs/approvals.md"]}}',
    '{"id": "quorum", "input": {"query": "quorum"}, "expect": {"relevant": ["src/policy.ts"]}}',
    '{"id": "expiry", "input": {"query": "expiry"}, "expect": {"relevant": ["src/store.ts"]}}',
]
# The figures SPEC §5 shows: 10 hits, the first relevant at rank 3, one file missed
# (said with why: it is not among the hits).
APPROVAL_HITS = [f"docs/other-{n}.md" for n in (1, 2)] + ["src/gateway.ts"] + [f"docs/other-{n}.md" for n in range(4, 11)]
APPROVAL_RESULT = (
    "recall 0.50 (1/2) · precision 0.10 · MRR 0.33 (first relevant at rank 3) · hit@1 0 · retrieved 10 · semantic 1"
    " — missed: docs/approvals.md (not among the 10 hits the target returned)"
)


def answer(case_id: str, paths: list[str], mode: str = "semantic", **hit: Any) -> str:
    return json.dumps({"id": case_id, "hits": [{"path": path, "score": 1 - n / 20, **hit} for n, path in enumerate(paths)], "mode": mode})


ANSWERS = [
    answer("approval", APPROVAL_HITS),
    answer("quorum", ["src/policy.ts", "src/store.ts"]),
    answer("expiry", ["src/store.ts"]),
]


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


def make_workspace(root: Path, suite: str = SUITE, cases: list[str] = CASES, answers: list[str] = ANSWERS, targets: str = TARGETS) -> tuple[Path, Path]:
    """A workspace whose one suite replays recorded answers (no trust needed)."""
    write_files(
        root,
        {
            SUITE_FILE: suite,
            DATASET_FILE: "\n".join(cases) + "\n",
            RECORDING: "\n".join(answers) + "\n",
            ".punica/targets.yaml": targets,
            "src/gateway.ts": "export {}\n",
            "src/policy.ts": "export {}\n",
            "src/store.ts": "export {}\n",
            "docs/approvals.md": "# Approvals\n",
        },
    )
    return root / SUITE_FILE, root / DATASET_FILE


def titles(resolved: list[types.CodeLens]) -> dict[int, str]:
    return {lens.range.start.line: lens.command.title for lens in resolved if lens.command is not None}


async def run_case(client: LanguageClient, uri: str, line: int) -> Any:
    (lens,) = [lens for lens in await lenses(client, uri) if lens.range.start.line == line]
    return await execute(client, lens.command)


def results(items: list[types.Diagnostic]) -> list[tuple[str, int, str]]:
    """Run results among diagnostics, as (code, line, message)."""
    return sorted((str(d.code), d.range.start.line, d.message) for d in items if str(d.code).startswith("RAG40"))




# ---------------------------------------------------------------- running cases


async def test_run_case_shows_its_figures_on_the_case_line(client: LanguageClient, tmp_path: Path) -> None:
    """Run case on a recorded target puts RAG400 with SPEC §5's figures on the case's id, and its lens shows recall and MRR."""
    _, dataset_path = make_workspace(tmp_path)
    await start(client, tmp_path)
    uri = open_file(client, dataset_path)
    await diagnostics(client, uri, 1)
    before = await lenses(client, uri)
    assert titles(before) == {0: "Run case", 1: "Run case", 2: "Run case"}
    assert before[1].command.command == "ragLsp.runCase"
    assert list(before[1].command.arguments) == [{"uri": uri, "line": 1, "suite": "code"}]

    client.lenses_refreshed.clear()  # type: ignore[attr-defined]
    answered = await execute(client, before[0].command)
    assert answered["suites"][0]["id"] == "code"
    assert answered["suites"][0]["cases"] == 1
    found = await published_when(client, uri, lambda items: bool(results(items)))
    (result,) = [d for d in found if d.code == "RAG400"]
    assert result.message == APPROVAL_RESULT
    assert result.severity == types.DiagnosticSeverity.Information
    assert result.source == "rag-lsp"
    start_column, end_column = value_span(CASES[0], '"approval"')
    assert (result.range.start.line, result.range.start.character, result.range.end.character) == (0, start_column, end_column)
    # The server asked for fresh lenses; the case's lens shows its figures.
    await asyncio.wait_for(client.lenses_refreshed.wait(), TIMEOUT_S)  # type: ignore[attr-defined]
    assert titles(await lenses(client, uri)) == {0: "recall 0.50 · MRR 0.33", 1: "Run case", 2: "Run case"}


async def test_run_suite_marks_threshold_lines_and_every_case(client: LanguageClient, tmp_path: Path) -> None:
    """Run suite reports progress, puts RAG403 on the failed threshold's line and RAG404 on the met one, each case's result on its line, and its verdict in the lens."""
    suite_path, dataset_path = make_workspace(tmp_path)
    await start(client, tmp_path)
    suite_uri = open_file(client, suite_path)
    await diagnostics(client, suite_uri, 1)
    (lens,) = await lenses(client, suite_uri)
    assert lens.range.start.line == 2
    assert lens.command.title == "Run suite (3 cases)"
    assert lens.command.command == "ragLsp.runSuite"

    answered = await execute(client, lens.command)
    (summary,) = answered["suites"]
    assert not summary["passed"]
    assert not summary["broken"]
    assert summary["cases"] == 3
    found = await published_when(client, suite_uri, lambda items: bool(results(items)))
    assert results(found) == [
        ("RAG403", 7, "rag.recall 0.83 < 0.9 (mean over 3 scored cases)"),
        ("RAG404", 8, "rag.mode.semantic 1.00 ≥ 1 (mean over 3 scored cases)"),
    ]
    failed = next(d for d in found if d.code == "RAG403")
    assert failed.severity == types.DiagnosticSeverity.Error
    assert (failed.range.start.character, failed.range.end.character) == (6, 16)  # the key `rag.recall`
    on_cases = await diagnostics(client, dataset_path.as_uri(), None)
    assert [(code, line) for code, line, _ in results(on_cases)] == [("RAG400", 0), ("RAG400", 1), ("RAG400", 2)]
    # Work-done progress: begun (cancellable), reported, ended with the verdict.
    (reports,) = [r for r in client.progress_reports.values() if isinstance(r[0], types.WorkDoneProgressBegin) and "running" in r[0].title]
    assert reports[0].cancellable
    assert isinstance(reports[-1], types.WorkDoneProgressEnd)
    assert reports[-1].message == "code failed"
    (after,) = await lenses(client, suite_uri)
    assert after.command.title == "failed: rag.recall 0.83 < 0.9 · recall 0.83 · MRR 0.78 (3 cases)"


async def test_broken_and_keyword_cases_get_rag401_and_rag402(client: LanguageClient, tmp_path: Path) -> None:
    """Hits without the `match` field break the case (RAG401 on its line and on `match`), a keyword answer gets RAG402."""
    suite = SUITE.replace("    engines: [rag]\n", "    engines: [rag]\n    options: {rag: {match: path}}\n")
    answers = [
        json.dumps({"id": "approval", "hits": [{"id": "a"}, {"id": "b"}], "mode": "semantic"}),
        answer("quorum", ["src/policy.ts"], mode="keyword"),
        answer("expiry", ["src/store.ts"]),
    ]
    suite_path, dataset_path = make_workspace(tmp_path, suite=suite, answers=answers)
    await start(client, tmp_path)
    suite_uri = open_file(client, suite_path)
    await diagnostics(client, suite_uri, 1)
    (lens,) = await lenses(client, suite_uri)
    await execute(client, lens.command)
    found = await published_when(client, suite_uri, lambda items: bool(results(items)))
    (on_match,) = [d for d in found if d.code == "RAG401"]
    assert on_match.range.start.line == 6
    assert on_match.range.start.character == suite.splitlines()[6].index("path")
    assert "the hits carry no `path` field (they carry id)" in on_match.message
    dataset_uri = dataset_path.as_uri()
    cases = results(await diagnostics(client, dataset_uri, None))
    assert [(code, line) for code, line, _ in cases] == [("RAG400", 1), ("RAG400", 2), ("RAG401", 0), ("RAG402", 1)]
    assert cases[2][2].startswith("broken: none of the 2 hits considered carries the `path` field")
    assert cases[3][2].startswith("keyword fallback: the target answered `mode: keyword`")
    opened = open_file(client, dataset_path)
    await diagnostics(client, opened, 1)
    assert titles(await lenses(client, opened))[0] == "broken: hits carry no path field"


# ---------------------------------------------------------------- results follow their lines


async def test_a_run_leaves_no_library_log_lines_on_stderr(client: LanguageClient, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """A run through the builtin keyword target writes none of its libraries' log lines (bm25s logs at DEBUG) to the server's stderr."""
    make_workspace(
        tmp_path,
        suite=SUITE.replace("id: rec}", "id: vectors.query}"),
        targets="targets:\n  vectors.query:\n    builtin: {retrieval: keyword}\n",
    )
    await start(client, tmp_path)
    uri = open_file(client, tmp_path / SUITE_FILE)
    (lens,) = await lenses(client, uri)
    await execute(client, lens.command)
    await published_when(client, uri, lambda items: any(str(d.code) in ("RAG403", "RAG404") for d in items))
    # One more round trip: what the server wrote to stderr before its results has
    # been read and forwarded to this process's stderr by then.
    await lenses(client, uri)
    sys.stderr.flush()
    stderr = capfd.readouterr().err
    assert "bm25s" not in stderr, stderr
    assert "DEBUG:" not in stderr, stderr


async def test_editing_the_case_line_drops_its_result(client: LanguageClient, tmp_path: Path) -> None:
    """A result is gone as soon as its line is edited; a result on another line stays."""
    _, dataset_path = make_workspace(tmp_path)
    await start(client, tmp_path)
    uri = open_file(client, dataset_path)
    await diagnostics(client, uri, 1)
    await run_case(client, uri, 0)
    await run_case(client, uri, 2)
    await published_when(client, uri, lambda items: len(results(items)) == 2)
    column = CASES[2].index("expiry")
    edit(client, uri, 2, 2, column, column, "x")
    after = await diagnostics(client, uri, 2)
    assert [(code, line) for code, line, _ in results(after)] == [("RAG400", 0)]
    assert titles(await lenses(client, uri))[2] == "Run case"


async def test_editing_a_suite_drops_every_result_of_its_run(client: LanguageClient, tmp_path: Path) -> None:
    """A suite's verdict, its thresholds' results and its cases' results in the dataset were computed from its
    lines: an edit of any of them (a threshold, an option) drops them all; an edit above the suite moves them."""
    suite_path, dataset_path = make_workspace(tmp_path)
    await start(client, tmp_path)
    suite_uri = open_file(client, suite_path)
    dataset_uri = open_file(client, dataset_path)
    await diagnostics(client, suite_uri, 1)
    (lens,) = await lenses(client, suite_uri)
    await execute(client, lens.command)
    await published_when(client, dataset_uri, lambda items: len(results(items)) == 3)
    # A comment line added above the suite: the results move with their lines.
    edit(client, suite_uri, 2, 0, 0, 0, "# the gateway's suites\n")
    moved = await diagnostics(client, suite_uri, 2)
    assert [(code, line) for code, line, _ in results(moved)] == [("RAG403", 8), ("RAG404", 9)]
    assert titles(await lenses(client, suite_uri))[3].startswith("failed: rag.recall 0.83 < 0.9")
    # The threshold of rag.mode.semantic lowered: every result of the run is gone.
    line = SUITE.splitlines()[8]
    column = line.index("1")
    edit(client, suite_uri, 3, 9, column, column + 1, "0.5")
    assert results(await diagnostics(client, suite_uri, 3)) == []
    assert titles(await lenses(client, suite_uri)) == {3: "Run suite (3 cases)"}
    await published_when(client, dataset_uri, lambda items: results(items) == [])


async def test_a_result_moves_with_its_line(client: LanguageClient, tmp_path: Path) -> None:
    """Inserting a line above a result moves it down with its case; removing it moves it back; Enter at a line's end keeps it."""
    _, dataset_path = make_workspace(tmp_path)
    await start(client, tmp_path)
    uri = open_file(client, dataset_path)
    await diagnostics(client, uri, 1)
    await run_case(client, uri, 1)
    await published_when(client, uri, lambda items: bool(results(items)))

    new_case = '{"id": "new", "input": {"query": "new"}, "expect": {"relevant": ["src/store.ts"]}}\n'
    edit(client, uri, 2, 0, 0, 0, new_case)
    moved = await diagnostics(client, uri, 2)
    (result,) = [d for d in moved if d.code == "RAG400"]
    assert result.range.start.line == 2
    assert result.message.startswith("recall 1.00 (1/1)")
    assert titles(await lenses(client, uri))[2] == "recall 1.00 · MRR 1.00"

    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=3),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(types.Position(0, 0), types.Position(1, 0)), text=""
                )
            ],
        )
    )
    back = await diagnostics(client, uri, 3)
    assert [(code, line) for code, line, _ in results(back)] == [("RAG400", 1)]
    edit(client, uri, 4, 1, len(CASES[1]), len(CASES[1]), "\n")
    kept = await diagnostics(client, uri, 4)
    assert [(code, line) for code, line, _ in results(kept)] == [("RAG400", 1)]


async def test_clear_results_removes_them(client: LanguageClient, tmp_path: Path) -> None:
    """ragLsp.clearResults with a suite file's URI clears that suite's results there and in its dataset."""
    suite_path, dataset_path = make_workspace(tmp_path)
    await start(client, tmp_path)
    suite_uri = open_file(client, suite_path)
    await diagnostics(client, suite_uri, 1)
    (lens,) = await lenses(client, suite_uri)
    await execute(client, lens.command)
    await published_when(client, suite_uri, lambda items: bool(results(items)))
    await execute(client, types.Command(title="Clear", command="ragLsp.clearResults", arguments=[{"uri": suite_uri}]))
    assert results(await published_when(client, suite_uri, lambda items: not results(items))) == []
    assert results(await published_when(client, dataset_path.as_uri(), lambda items: not results(items))) == []


async def test_hover_on_a_case_that_ran_lists_its_ranked_hits(client: LanguageClient, tmp_path: Path) -> None:
    """Hovering a case that ran shows its figures, its ranked hits with the relevant one marked, and what was missed."""
    _, dataset_path = make_workspace(tmp_path)
    await start(client, tmp_path)
    uri = open_file(client, dataset_path)
    await diagnostics(client, uri, 1)
    await run_case(client, uri, 0)
    await published_when(client, uri, lambda items: bool(results(items)))
    hover = await client.text_document_hover_async(types.HoverParams(text_document=document(uri), position=types.Position(0, 3)))
    assert hover is not None
    assert isinstance(hover.contents, types.MarkupContent)
    text = hover.contents.value
    assert APPROVAL_RESULT in text
    assert "1. `docs/other-1.md`" in text
    assert "3. **`src/gateway.ts`** (score 0.9) — ✓ relevant" in text
    assert "10. `docs/other-10.md`" in text
    assert "**Missed:** `docs/approvals.md`" in text


async def test_bad_command_arguments_are_refused(client: LanguageClient, tmp_path: Path) -> None:
    """Run commands check their typed arguments: none, a negative line, a line of true, a suite of 5, a URI that is no file, or a string for an object is an InvalidParams error, never a traceback."""
    _, dataset_path = make_workspace(tmp_path)
    await start(client, tmp_path)
    uri = dataset_path.as_uri()
    for command, arguments in (
        ("ragLsp.runCase", [{"uri": uri, "line": -1}]),
        ("ragLsp.runCase", [{"uri": "untitled:1", "line": 0}]),
        ("ragLsp.runCase", [{"uri": uri, "line": True}]),
        ("ragLsp.runCase", [{"uri": uri, "line": 0, "suite": 5}]),
        ("ragLsp.runCase", []),
        ("ragLsp.runCase", None),
        ("ragLsp.runSuite", None),
        ("ragLsp.runSuite", [{"uri": uri}, {"uri": uri}]),
        ("ragLsp.clearResults", ["x"]),
    ):
        with pytest.raises(JsonRpcException) as raised:
            await execute(client, types.Command(title="Run", command=command, arguments=arguments))
        assert raised.value.code == -32602, (command, arguments)
        assert "Traceback" not in str(raised.value.data or ""), (command, arguments)


# ---------------------------------------------------------------- code actions


QUICK_SUITE = """\
# Quick fixes: each edit must keep this comment and the layout.
suites:
  - id: code
    target: {kind: capability, id: rec}    # recorded
    dataset: .punica/evals/code.jsonl
    engines: [rag]
    thresholds:
      rag.recal: 0.8      # typo
      rag.retrieved: 5    # a counter
  - id: missing
    target: {kind: capability, id: rec}
    dataset: .punica/evals/missing.jsonl
    metrics: {rag.hit_at_k: {k: 5}}
"""
QUICK_CASES = [
    '{"id": "a", "input": {"query": "a"}, "expect": {"relevant": ["./src/gateway.ts"]}}',
    '{"id": "a", "input": {"query": "b"}, "expect": {"relevant": ["src/store.ts"]}}',
]


def edited(text: str, action: types.CodeAction, uri: str, version: int | None) -> str:
    (change,) = action.edit.document_changes
    assert isinstance(change, types.TextDocumentEdit)
    assert change.text_document.uri == uri
    assert change.text_document.version == version
    return apply_text_edits(text, change.edits)


async def test_each_quick_fix_changes_only_the_bytes_it_must(client: LanguageClient, tmp_path: Path) -> None:
    """Every quick fix is a quickfix action bound to its diagnostic; applying it changes only its own bytes, comments and layout kept."""
    suite_path, dataset_path = make_workspace(tmp_path, suite=QUICK_SUITE, cases=QUICK_CASES)
    await start(client, tmp_path)
    suite_uri = open_file(client, suite_path)
    dataset_uri = open_file(client, dataset_path)
    suite_found = {str(d.code): d for d in await diagnostics(client, suite_uri, 1)}
    dataset_found = {str(d.code): d for d in await diagnostics(client, dataset_uri, 1)}
    assert {"RAG101", "RAG102", "RAG103", "RAG105"} <= set(suite_found)
    assert {"RAG202", "RAG206"} <= set(dataset_found)

    expected_suite = {
        "RAG101": ("Change to 'rag.recall'", QUICK_SUITE.replace("rag.recal: 0.8 ", "rag.recall: 0.8 ")),
        "RAG102": ("Remove threshold", QUICK_SUITE.replace("      rag.retrieved: 5    # a counter\n", "")),
        "RAG103": (
            "Add rag.mode.semantic: 1",
            QUICK_SUITE.replace("# a counter\n", "# a counter\n      rag.mode.semantic: 1\n"),
        ),
    }
    for code, (title, text) in expected_suite.items():
        (action, *_) = await quick_fixes(client, suite_uri, suite_found[code])
        assert action.title == title
        assert action.is_preferred
        assert edited(QUICK_SUITE, action, suite_uri, 1) == text, code

    dataset_text = "\n".join(QUICK_CASES) + "\n"
    expected_dataset = {
        "RAG202": dataset_text.replace('{"id": "a", "input": {"query": "b"}', '{"id": "a-2", "input": {"query": "b"}'),
        "RAG206": dataset_text.replace('"./src/gateway.ts"', '"src/gateway.ts"'),
    }
    for code, text in expected_dataset.items():
        (action,) = await quick_fixes(client, dataset_uri, dataset_found[code])
        assert edited(dataset_text, action, dataset_uri, 1) == text, code

    # RAG105: create the missing dataset, as a resource operation.
    create = next(a for a in await quick_fixes(client, suite_uri, suite_found["RAG105"]) if a.title.startswith("Create"))
    (operation,) = create.edit.document_changes
    assert isinstance(operation, types.CreateFile)
    assert operation.uri == (tmp_path / ".punica/evals/missing.jsonl").as_uri()
    assert not (tmp_path / ".punica/evals/missing.jsonl").exists()  # the editor creates it, not the server


async def test_source_actions_run_the_case_and_the_suite(client: LanguageClient, tmp_path: Path) -> None:
    """On a dataset line the source actions are "Run this case" and "Run suite code (3 cases)"; running the first gives the case its result."""
    suite_path, dataset_path = make_workspace(tmp_path)
    await start(client, tmp_path)
    uri = open_file(client, dataset_path)
    await diagnostics(client, uri, 1)
    here = types.Range(types.Position(1, 0), types.Position(1, 0))
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(text_document=document(uri), range=here, context=types.CodeActionContext(diagnostics=[], only=["source"]))
    )
    assert [(a.title, a.kind) for a in actions] == [
        ("Run this case", "source.ragLsp.runCase"),
        ("Run suite code (3 cases)", "source.ragLsp.runSuite"),
    ]
    await execute(client, actions[0].command)
    found = await published_when(client, uri, lambda items: bool(results(items)))
    assert [(code, line) for code, line, _ in results(found)] == [("RAG400", 1)]
    suite_uri = open_file(client, suite_path)
    await diagnostics(client, suite_uri, 1)
    in_suite = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=document(suite_uri),
            range=types.Range(types.Position(6, 0), types.Position(6, 0)),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    assert [a.title for a in in_suite] == ["Run suite code (3 cases)"]
    assert list(in_suite[0].command.arguments) == [{"uri": suite_uri, "line": 2, "suite": "code"}]


# ---------------------------------------------------------------- trust, cancellation, timeouts

SLOW_TARGET = """\
import json, os, sys, time
with open(os.environ.get("MARKER", "started.txt"), "a") as marker:
    marker.write(f"{os.getpid()}\\n")
for number, line in enumerate(sys.stdin):
    if number >= ANSWERED:
        time.sleep(120)
    print(json.dumps({"hits": [{"path": "src/store.ts"}], "mode": "semantic"}), flush=True)
"""


def command_workspace(root: Path, answered: int) -> tuple[Path, Path, Path]:
    """A workspace whose suite asks a command target that answers ``answered`` cases, then hangs."""
    targets = f"targets:\n  rec:\n    command: [{json.dumps(sys.executable)}, tools/search.py]\n"
    suite_path, dataset_path = make_workspace(root, targets=targets)
    write_files(root, {"tools/search.py": SLOW_TARGET.replace("ANSWERED", str(answered))})
    return suite_path, dataset_path, root / "started.txt"


async def test_an_untrusted_workspace_starts_no_process(client: LanguageClient, tmp_path: Path) -> None:
    """Untrusted (the default), a run of a command target starts nothing: RAG405 on the case, a message that says how to trust."""
    _, dataset_path, marker = command_workspace(tmp_path, answered=3)
    await start(client, tmp_path)
    await refused_run(client, dataset_path, "is a command target and is not run")
    assert not marker.exists()
    assert children_of(server_pid()) == []


async def test_an_untrusted_workspace_sends_no_request(client: LanguageClient, tmp_path: Path) -> None:
    """Untrusted, a run of an http target connects nowhere: RAG405 on the case, and its server is never called."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.setblocking(False)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/query"
        _, dataset_path = make_workspace(tmp_path, targets=f"targets:\n  rec:\n    http: {{url: {json.dumps(url)}}}\n")
        await start(client, tmp_path)
        await refused_run(client, dataset_path, "is a http target and is not run")
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody connected


async def refused_run(client: LanguageClient, dataset_path: Path, said: str) -> None:
    """Run the first case of an untrusted workspace and check how it is refused."""
    uri = open_file(client, dataset_path)
    await diagnostics(client, uri, 1)
    answered = await run_case(client, uri, 0)
    assert "not trusted" in answered["suites"][0]["error"]
    found = await published_when(client, uri, lambda items: bool(results(items)))
    (refused,) = [d for d in found if d.code == "RAG405"]
    assert refused.range.start.line == 0
    assert refused.severity == types.DiagnosticSeverity.Error
    assert said in refused.message
    assert "ragLsp.trusted" in refused.message
    await until(client, types.WINDOW_SHOW_MESSAGE, lambda: bool(client.messages))
    (message,) = client.messages
    assert message.type == types.MessageType.Error
    assert "ragLsp.trusted" in message.message


async def test_cancelling_the_progress_stops_a_slow_run_and_typing_goes_on(client: LanguageClient, tmp_path: Path) -> None:
    """While a trusted command target hangs on a case, edits are still checked; cancelling the progress stops the run and the process at once."""
    suite_path, dataset_path, marker = command_workspace(tmp_path, answered=1)
    await start(client, tmp_path, options={"trusted": True})
    suite_uri = open_file(client, suite_path)
    dataset_uri = open_file(client, dataset_path)
    await diagnostics(client, dataset_uri, 1)
    (lens,) = await lenses(client, suite_uri)
    running = asyncio.ensure_future(execute(client, lens.command))

    def reported() -> types.ProgressToken | None:
        for token, reports in client.progress_reports.items():
            if any(isinstance(r, types.WorkDoneProgressReport) and "1/3 cases" in (r.message or "") for r in reports):
                return token
        return None

    await until(client, types.PROGRESS, lambda: reported() is not None)
    # The target now hangs on the second case: typing is still checked.
    edit(client, dataset_uri, 2, 1, 0, 1, "")
    assert "RAG002" in [d.code for d in await diagnostics(client, dataset_uri, 2)]
    client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=reported()))
    answered = await running
    (summary,) = answered["suites"]
    assert summary["cancelled"]
    assert summary["cases"] == 1
    (pid,) = marker.read_text().split()
    assert not Path(f"/proc/{pid}").exists()  # the process was stopped, not left to finish


async def test_cancel_request_stops_a_run(client: LanguageClient, tmp_path: Path) -> None:
    """$/cancelRequest of a run command answers RequestCancelled and stops the run (its process too)."""
    suite_path, _, marker = command_workspace(tmp_path, answered=1)
    await start(client, tmp_path, options={"trusted": True})
    suite_uri = open_file(client, suite_path)
    await diagnostics(client, suite_uri, 1)
    (lens,) = await lenses(client, suite_uri)
    params = types.ExecuteCommandParams(command=lens.command.command, arguments=lens.command.arguments)
    running = asyncio.ensure_future(client.protocol.send_request_async(types.WORKSPACE_EXECUTE_COMMAND, params, msg_id="run-1"))

    def reported() -> bool:
        return any(
            isinstance(r, types.WorkDoneProgressReport) and "1/3 cases" in (r.message or "")
            for reports in client.progress_reports.values()
            for r in reports
        )

    await until(client, types.PROGRESS, reported)
    client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="run-1"))
    with pytest.raises(JsonRpcException):
        await asyncio.wait_for(running, TIMEOUT_S)
    await until(client, types.WINDOW_SHOW_MESSAGE, lambda: any("cancelled after 1 case" in m.message for m in client.messages))
    (pid,) = marker.read_text().split()
    assert not Path(f"/proc/{pid}").exists()


async def test_a_case_that_takes_longer_than_run_timeout_is_rag405(client: LanguageClient, tmp_path: Path) -> None:
    """A command target that does not answer within ragLsp.runTimeout gives the case RAG405 and the run ends."""
    _, dataset_path, _ = command_workspace(tmp_path, answered=0)
    await start(client, tmp_path, options={"trusted": True, "runTimeout": 1})
    uri = open_file(client, dataset_path)
    await diagnostics(client, uri, 1)
    await run_case(client, uri, 0)
    found = await published_when(client, uri, lambda items: bool(results(items)))
    (timed_out,) = [d for d in found if d.code == "RAG405"]
    assert "did not answer within 1 s" in timed_out.message
    assert titles(await lenses(client, uri))[0].startswith("target failed: ")


# ---------------------------------------------------------------- large datasets


async def test_lenses_of_a_large_dataset_are_lazy(client: LanguageClient, tmp_path: Path) -> None:
    """A 20,000-line dataset gets a cheap unresolved lens per case; resolving one gives its command."""
    cases = [json.dumps({"id": f"c{n}", "input": {"query": "q"}, "expect": {"relevant": ["src/store.ts"]}}) for n in range(20_000)]
    _, dataset_path = make_workspace(tmp_path, cases=cases, answers=[answer("c19999", ["src/store.ts"])])
    await start(client, tmp_path)
    uri = open_file(client, dataset_path)
    await diagnostics(client, uri, 1)
    found = await client.text_document_code_lens_async(types.CodeLensParams(text_document=document(uri)))
    assert len(found) == 20_000
    assert all(lens.command is None for lens in found)
    last = await client.code_lens_resolve_async(found[-1])
    assert list(last.command.arguments) == [{"uri": uri, "line": 19_999, "suite": "code"}]
    await execute(client, last.command)
    result = await published_when(client, uri, lambda items: bool(results(items)))
    assert results(result) == [("RAG400", 19_999, "recall 1.00 (1/1) · precision 1.00 · MRR 1.00 (first relevant at rank 1) · hit@1 1 · retrieved 1 · semantic 1")]


# ---------------------------------------------------------------- pull clients and the wire


async def test_a_pull_client_is_asked_to_pull_run_results(client: LanguageClient, tmp_path: Path) -> None:
    """A client that pulls diagnostics is asked to pull again when a run's results come, and its next pull has them."""
    _, dataset_path = make_workspace(tmp_path)
    await start(client, tmp_path, pull=True)
    uri = open_file(client, dataset_path)
    first = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(text_document=document(uri)))
    assert results(first.items) == []
    client.refreshed.clear()  # type: ignore[attr-defined]
    await run_case(client, uri, 0)
    await refreshed(client)
    report = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=document(uri), previous_result_id=first.result_id)
    )
    assert isinstance(report, types.RelatedFullDocumentDiagnosticReport)
    assert results(report.items) == [("RAG400", 0, APPROVAL_RESULT)]
    assert client.history == []  # type: ignore[attr-defined]


def test_result_diagnostics_are_written_as_pygls_would_write_them() -> None:
    """The JSON of a result diagnostic, written without converting it, is what pygls's converter makes of it."""
    from pygls.protocol import default_converter

    from rag_lsp.core.running.marks import CASE, Mark
    from rag_lsp.server.running.run_marks import mark_diagnostic

    item = Mark("s", CASE, "RAG405", 2, 6, 'target failed: "x" — 🚀', 'é🚀 "case" …')
    for encoding in ("utf-16", "utf-8", "utf-32"):
        converted = mark_diagnostic(item, 41, encoding, item.severity)
        diagnostic = converted.diagnostic
        assert json.loads(converted.json) == default_converter().unstructure(diagnostic)
        moved = converted.moved_to(7)
        assert json.loads(moved.json) == default_converter().unstructure(moved.diagnostic)
        assert moved.diagnostic.range.start.line == 7
    assert diagnostic.range.start.character == 2
    assert diagnostic.severity == types.DiagnosticSeverity.Error


SEVERAL_SUITES = SUITE + """\
  - id: again
    target: {kind: capability, id: rec}
    dataset: .punica/evals/code.jsonl
    engines: [rag]
    options: {rag: {k: 1}}
    thresholds:
      rag.mode.semantic: 1
"""
# A suite whose own lines hold an error: it cannot run, whichever case is asked for.
BROKEN_SUITE = """\
suites:
  - id: broken
    target: {kind: capability, id: rec}
    dataset: .punica/evals/code.jsonl
    engines: [rag]
    thresholds:
      rag.recal: 0.5
      rag.mode.semantic: 1
"""


async def test_run_case_past_the_end_of_the_dataset_says_so_once(client: LanguageClient, tmp_path: Path) -> None:
    """Run case on a line past the dataset's end (read by two suites) runs nothing and says where the dataset ends, once."""
    _, dataset = make_workspace(tmp_path, suite=SEVERAL_SUITES)
    await start(client, tmp_path)
    uri = open_file(client, dataset)
    await diagnostics(client, uri, 1)
    answered = await execute(client, types.Command("Run case", "ragLsp.runCase", arguments=[{"uri": uri, "line": 99}]))
    said = "line 100 is past the end of .punica/evals/code.jsonl (3 lines): there is no case to run"
    assert answered == {"suites": [], "message": said}
    assert [message.message for message in client.messages if "past the end" in message.message] == [f"rag-lsp: {said}"]


async def test_one_lens_per_case_line_runs_every_suite(client: LanguageClient, tmp_path: Path) -> None:
    """With several suites reading a dataset, each case line has one lens that runs the case in all of them; the hover reads one line per suite."""
    _, dataset = make_workspace(tmp_path, suite=SEVERAL_SUITES)
    await start(client, tmp_path)
    uri = open_file(client, dataset)
    before = await lenses(client, uri)
    assert titles(before) == {0: "Run case (2 suites)", 1: "Run case (2 suites)", 2: "Run case (2 suites)"}
    assert len(before) == 3
    answer_ = await execute(client, before[1].command)
    assert sorted(suite["id"] for suite in answer_["suites"]) == ["again", "code"]
    after = titles(await lenses(client, uri))
    assert after[1] == "code: recall 1.00 · MRR 1.00 · again: recall 1.00 · MRR 1.00"
    assert after[0] == "Run case (2 suites)"
    hover = await client.text_document_hover_async(types.HoverParams(document(uri), types.Position(1, 3)))
    text = hover.contents.value if isinstance(hover.contents, types.MarkupContent) else str(hover.contents)
    summary = text.split("---")[0]
    assert "2 suites" in summary
    assert summary.count("\n- `") == 2
    assert "- `code`: recall 1.00 (1/1)" in summary
    assert "- `again`: recall 1.00 (1/1)" in summary
    published = await diagnostics(client, uri, 1)
    assert sorted(d.message.split(":")[0] for d in published if d.code == "RAG400") == ["again", "code"]


async def test_a_suite_that_cannot_run_says_so_once(client: LanguageClient, tmp_path: Path) -> None:
    """A suite stopped by errors in its suite file says why on the dataset's first case and on the suite, not on each line run."""
    suite, dataset = make_workspace(tmp_path, suite=BROKEN_SUITE)
    await start(client, tmp_path)
    uri = open_file(client, dataset)
    suite_uri = open_file(client, suite)
    await run_case(client, uri, 2)
    await run_case(client, uri, 1)
    shown = titles(await lenses(client, uri))
    assert shown[0].startswith("not run: .punica/evals/code.suite.yaml has 1 error for this suite")
    assert shown[1] == "Run case"
    assert shown[2] == "Run case"
    assert titles(await lenses(client, suite_uri))[1].startswith("not run")


# ---------------------------------------------------------------- the builtin index


async def test_run_case_waits_for_the_builtin_index_and_reports_its_progress(client: LanguageClient, tmp_path: Path) -> None:
    """A Run case click on a suite of the builtin target, with no index built yet, builds it on the run
    thread with work-done progress (files read of files to read), then shows the case's figures."""
    from workspaces import AUDIT, DEPLOY, RATE_LIMITS

    suite = SUITE.replace("id: rec}", "id: vectors.query}").replace("rag.recall: 0.9   # fails: one case misses a file", "rag.recall: 0.5")
    question = '{"id": "starving", "input": {"query": "what stops one busy customer from starving everyone else"}, "expect": {"relevant": ["docs/rate-limits.md"]}}'
    files = {
        SUITE_FILE: suite,
        DATASET_FILE: question + "\n",
        "docs/rate-limits.md": RATE_LIMITS,
        "docs/deploy.md": DEPLOY,
        "docs/audit.md": AUDIT,
    }
    files.update({f"src/module{n}.py": f"def handler_{n}(request):\n    return {n}\n" * 30 for n in range(300)})
    write_files(tmp_path, files)
    await start(client, tmp_path)
    uri = open_file(client, tmp_path / DATASET_FILE)
    await diagnostics(client, uri, 1)
    answered = await execute(client, types.Command("Run case", "ragLsp.runCase", arguments=[{"uri": uri, "line": 0}]))
    assert answered["suites"][0]["cases"] == 1
    assert answered["suites"][0]["scored"] == 1
    found = await published_when(client, uri, lambda items: bool(results(items)))
    (result,) = [d for d in found if d.code == "RAG400"]
    assert result.message.startswith("recall 1.00 (1/1)")
    assert "semantic 1" in result.message
    (reports,) = [r for r in client.progress_reports.values() if isinstance(r[0], types.WorkDoneProgressBegin) and "indexing" in r[0].title]
    assert reports[0].title == "rag-lsp: indexing vectors.query"
    messages = [report.message for report in reports if isinstance(report, types.WorkDoneProgressReport)]
    assert messages
    assert all(message.startswith("indexing vectors.query: ") and message.endswith("/303 files") for message in messages)
    assert isinstance(reports[-1], types.WorkDoneProgressEnd)
