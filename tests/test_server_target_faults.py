"""Faulty targets, run from the editor (SPEC §7): a command target that hangs, dies
mid-answer, answers garbage, answers too slowly, floods stdout or stderr, and an
http target that never answers. Every case ends with RAG405 saying what happened,
the server answers hover and completion during and after the run, and no process
a target started is left behind: none below the server after the run and after
``shutdown``, none orphaned (each command start records its pid and a helper
child's, and the test waits for all of them to end).

Each test starts its own trusted server with a short ``runTimeout``; nothing sleeps.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lspclient import (
    SERVER,
    TIMEOUT_S,
    children_of,
    diagnostics,
    document,
    open_file,
    published_when,
    server_pid,
    start,
)
from lsprotocol import types
from pytest_lsp import LanguageClient
from workspaces import write_files

# Slow (end-to-end sessions with the server over stdio): `pytest -m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

SUITE_FILE = ".punica/evals/code.suite.yaml"
DATASET_FILE = ".punica/evals/code.jsonl"
STARTED = "started.txt"
RUN_TIMEOUT_S = 0.5
# A command answer line past this many bytes is refused (the maxFileBytes setting).
LINE_LIMIT = 10_000

SUITE = """\
suites:
  - id: code
    target: {kind: capability, id: faulty}
    dataset: .punica/evals/code.jsonl
    engines: [rag]
    thresholds:
      rag.recall: 0.8
      rag.mode.semantic: 1
"""
CASES = [
    json.dumps({"id": name, "input": {"query": name}, "expect": {"relevant": ["src/app.py"]}})
    for name in ("approval", "quorum", "expiry")
]

# A search tool gone wrong in the way argv[1] names. Each start records its pid and
# its helper child's (a real tool's worker), and, given a port, says so on it.
TARGET = """\
import json, os, socket, subprocess, sys, time
mode = sys.argv[1]
helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
with open("started.txt", "a") as started:
    started.write(f"{os.getpid()} {helper.pid}\\n")
if len(sys.argv) > 2:
    socket.create_connection(("127.0.0.1", int(sys.argv[2]))).close()
for line in sys.stdin:
    if mode == "hang":
        time.sleep(120)
    elif mode == "slow":
        time.sleep(5)
        print(json.dumps({"hits": [{"path": "src/app.py"}], "mode": "semantic"}), flush=True)
    elif mode == "die":
        sys.stdout.write('{"hits": [{"path": "src/a')
        sys.stdout.flush()
        print("dying on purpose", file=sys.stderr, flush=True)
        os._exit(3)
    elif mode == "garbage":
        print("Traceback (most recent call last): oops", flush=True)
    elif mode == "flood":
        while True:
            sys.stdout.write("x" * 65536)
            sys.stdout.flush()
    elif mode == "answer":
        print(json.dumps({"hits": [{"path": "src/app.py"}], "mode": "semantic"}), flush=True)
    elif mode == "chatty":
        while True:
            sys.stderr.write("still thinking " * 4096)
            sys.stderr.flush()
"""


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient):
    yield
    if not getattr(lsp_client, "ended", False):
        await lsp_client.shutdown_session()


def make_workspace(root: Path, target: dict[str, Any]) -> tuple[Path, Path]:
    files = {
        SUITE_FILE: SUITE,
        DATASET_FILE: "\n".join(CASES) + "\n",
        ".punica/targets.yaml": json.dumps({"targets": {"faulty": target}}) + "\n",
        "tools/search.py": TARGET,
        "src/app.py": "print('app')\n",
    }
    write_files(root, files)
    return root / SUITE_FILE, root / DATASET_FILE


def command(mode: str, *extra: str) -> dict[str, Any]:
    return {"command": [sys.executable, "tools/search.py", mode, *extra]}


def started_pids(root: Path) -> list[int]:
    """Every process the target's starts recorded: each command and its helper child."""
    marker = root / STARTED
    return [int(pid) for pid in marker.read_text().split()] if marker.exists() else []


async def still_running(pids: list[int]) -> list[int]:
    """Those of ``pids`` that do not end within the test timeout (waiting on a pidfd, not polling)."""
    loop = asyncio.get_running_loop()
    alive = []
    for pid in pids:
        try:
            handle = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        try:
            ended: asyncio.Future[None] = loop.create_future()
            loop.add_reader(handle, _settle, ended)
            try:
                await asyncio.wait_for(ended, TIMEOUT_S)
            except asyncio.TimeoutError:
                alive.append(pid)
            finally:
                loop.remove_reader(handle)
        finally:
            os.close(handle)
    return alive


def run_suite(client: LanguageClient, suite_uri: str) -> asyncio.Future[Any]:
    """``ragLsp.runSuite`` for the suite, sent on the loop's next turn: before any
    request made after this call; its answer, later."""
    params = types.ExecuteCommandParams(command="ragLsp.runSuite", arguments=[{"uri": suite_uri, "suite": "code"}])
    return asyncio.ensure_future(client.protocol.send_request_async(types.WORKSPACE_EXECUTE_COMMAND, params))


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


async def answers_while_running(client: LanguageClient, suite_uri: str) -> None:
    """Hover on a metric and completion under `thresholds:` answer with content."""
    lines = SUITE.splitlines()
    metric = types.Position(line=6, character=lines[6].index("rag.recall") + 4)
    hover = await asyncio.wait_for(
        client.text_document_hover_async(types.HoverParams(text_document=document(suite_uri), position=metric)), TIMEOUT_S
    )
    assert hover is not None
    assert "recall" in str(hover.contents).lower()
    completion = await asyncio.wait_for(
        client.text_document_completion_async(
            types.CompletionParams(text_document=document(suite_uri), position=types.Position(line=6, character=6))
        ),
        TIMEOUT_S,
    )
    assert completion is not None
    items = completion.items if isinstance(completion, types.CompletionList) else completion
    assert "rag.mrr" in {item.label for item in items}


async def shut_down(client: LanguageClient) -> None:
    """Shut the server down, checking that nothing is left below it before it exits."""
    pid = server_pid()
    await asyncio.wait_for(client.shutdown_async(None), TIMEOUT_S)
    assert children_of(pid) == []
    client.exit(None)
    client.ended = True  # type: ignore[attr-defined]


async def run_faulty_suite(client: LanguageClient, root: Path, target: dict[str, Any]) -> list[types.Diagnostic]:
    """Run the suite over ``target`` from its lens while asking for hover and completion;
    the dataset's RAG405 diagnostics once every case has one."""
    suite_path, dataset_path = make_workspace(root, target)
    await start(client, root, options={"trusted": True, "runTimeout": RUN_TIMEOUT_S, "maxFileBytes": LINE_LIMIT})
    suite_uri = open_file(client, suite_path)
    dataset_uri = open_file(client, dataset_path)
    await diagnostics(client, suite_uri, 1)
    await diagnostics(client, dataset_uri, 1)
    running = run_suite(client, suite_uri)
    await answers_while_running(client, suite_uri)
    answered = await asyncio.wait_for(running, TIMEOUT_S)
    (summary,) = answered["suites"]
    assert summary["cases"] == len(CASES), summary
    assert summary["scored"] == 0, summary
    assert summary["broken"], summary
    found = await published_when(client, dataset_uri, lambda items: sum(d.code == "RAG405" for d in items) == len(CASES))
    await answers_while_running(client, suite_uri)
    assert children_of(server_pid()) == []
    return [d for d in found if d.code == "RAG405"]


@pytest.mark.parametrize(
    ("mode", "what"),
    [
        ("hang", f"did not answer within {RUN_TIMEOUT_S:g} s"),
        ("slow", f"did not answer within {RUN_TIMEOUT_S:g} s"),
        ("chatty", f"did not answer within {RUN_TIMEOUT_S:g} s"),
        ("die", "exited with code 3"),
        ("garbage", "is not JSON: it starts 'Traceback"),
        ("flood", f"longer than {LINE_LIMIT:,} bytes"),
    ],
)
async def test_every_case_of_a_faulty_command_target_is_rag405(client: LanguageClient, tmp_path: Path, mode: str, what: str) -> None:
    """A command target that hangs, answers after the timeout, floods stderr without answering, dies mid-answer, answers garbage or floods stdout: each case gets RAG405 saying so, hover and completion answer, and no process it started survives the run."""
    found = await run_faulty_suite(client, tmp_path, command(mode))
    assert sorted(d.range.start.line for d in found) == [0, 1, 2]
    for diagnostic in found:
        assert what in diagnostic.message, diagnostic.message
        assert diagnostic.severity == types.DiagnosticSeverity.Error
    if mode == "die":
        assert "dying on purpose" in found[0].message  # its stderr says why
    pids = started_pids(tmp_path)
    assert pids, "the target was never started"
    assert await still_running(pids) == []
    await shut_down(client)


async def test_an_http_target_that_never_answers_is_rag405(client: LanguageClient, tmp_path: Path) -> None:
    """An http target that accepts the connection and never answers: each case is RAG405 after the timeout, and the server goes on answering."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)  # the kernel completes each connection; nobody ever reads or answers
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/query"
        found = await run_faulty_suite(client, tmp_path, {"http": {"url": url}})
    assert sorted(d.range.start.line for d in found) == [0, 1, 2]
    for diagnostic in found:
        assert f"{url} did not answer within {RUN_TIMEOUT_S:g} s" in diagnostic.message, diagnostic.message
    await shut_down(client)


async def test_shutdown_during_a_hanging_run_leaves_no_process(client: LanguageClient, tmp_path: Path) -> None:
    """`shutdown` while a command target hangs on a case (a long timeout) ends the run and stops the target and its children before the server answers."""
    reported = asyncio.Event()

    async def on_start(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        reported.set()
        writer.close()

    listener = await asyncio.start_server(on_start, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    try:
        suite_path, _ = make_workspace(tmp_path, command("hang", str(port)))
        await start(client, tmp_path, options={"trusted": True, "runTimeout": 120})
        suite_uri = open_file(client, suite_path)
        await diagnostics(client, suite_uri, 1)
        running = run_suite(client, suite_uri)
        await asyncio.wait_for(reported.wait(), TIMEOUT_S)  # the target is up and hangs on the first case
        pids = started_pids(tmp_path)
        assert len(pids) == 2
        assert set(pids) <= set(children_of(server_pid()))
        await answers_while_running(client, suite_uri)
        await shut_down(client)
        answered = await asyncio.wait_for(running, TIMEOUT_S)
        assert answered["suites"][0]["cancelled"]
        assert await still_running(pids) == []
    finally:
        listener.close()


async def test_removing_a_workspace_folder_stops_its_target_processes(client: LanguageClient, tmp_path: Path) -> None:
    """A command target's process, kept between runs, ends when its workspace folder is removed from the editor."""
    first, second = tmp_path / "first", tmp_path / "second"
    suite_path, _ = make_workspace(first, command("answer"))
    (second / ".punica").mkdir(parents=True)
    await start(client, first, options={"trusted": True})
    suite_uri = open_file(client, suite_path)
    await diagnostics(client, suite_uri, 1)
    answered = await asyncio.wait_for(run_suite(client, suite_uri), TIMEOUT_S)
    assert answered["suites"][0]["passed"], answered
    pids = started_pids(first)
    assert len(pids) == 2
    assert set(pids) <= set(children_of(server_pid()))  # the command and its child, kept
    client.text_document_did_close(types.DidCloseTextDocumentParams(document(suite_uri)))
    client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(
                added=[types.WorkspaceFolder(uri=second.as_uri(), name="second")],
                removed=[types.WorkspaceFolder(uri=first.as_uri(), name="first")],
            )
        )
    )
    assert await still_running(pids) == []
