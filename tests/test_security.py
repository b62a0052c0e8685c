"""Security, end to end: nothing in a workspace runs without trust, nothing outside
the workspace is read through a suite, a case or a link, and huge input is refused
with RAG005 instead of exhausting memory.

The language server is asked over stdio as an editor asks it; the command line is
run as CI runs it. What the server reads happens in its own process, so the tests
see it from outside: a file outside the workspace holds a marker string that must
never come back in anything the server sends. The command line runs in this
process too, where an audit hook lists every file it opens.
"""

from __future__ import annotations

import contextlib
import gc
import io
import json
import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lspclient import (
    SERVER,
    children_of,
    codes,
    diagnostics,
    document,
    edit,
    execute,
    lenses,
    open_file,
    published_when,
    scanned,
    server_pid,
    start,
)
from lsprotocol import types
from pytest_lsp import LanguageClient
from workspaces import GOOD_CASE, GOOD_SUITE, make_workspace, rag_lsp

from rag_lsp.cli import main
from rag_lsp.core.workspace.workspace import Workspace

# Slow (end-to-end sessions with the server over stdio): `pytest -m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

# The one string of the files outside the workspace; none inside holds it.
SECRET = "SECRET-b1f0c2d9"


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


def link(path: Path, target: Path) -> None:
    """A relative symbolic link, as a repository can hold one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(os.path.relpath(target, path.parent), target_is_directory=target.is_dir())


def everything_received(client: LanguageClient) -> list[str]:
    """Every message the server sends from now on, as JSON text."""
    received: list[str] = []
    structure = client.protocol.structure_message

    def keep(data: dict) -> Any:
        # The decoder calls this for every JSON object, innermost first; a message
        # is the one that carries "jsonrpc".
        if "jsonrpc" in data:
            received.append(json.dumps(data))
        return structure(data)

    client.protocol.structure_message = keep  # type: ignore[method-assign]
    return received


def word_starts(line: str) -> list[int]:
    """The columns an editor's hover and completion land on: each word's start and the line's ends."""
    found = {0, len(line)}
    found.update(column + 1 for column, char in enumerate(line) if char in ' "{[:,/.')
    return sorted(column for column in found if column <= len(line))


async def ask_everything(client: LanguageClient, uri: str, text: str) -> list[Any]:
    """Every request an editor makes of a document: hover, completion and definition
    on each word, code actions on each line, links, symbols, and the lenses resolved."""
    answers: list[Any] = []
    here = document(uri)
    published = list(client.published.get(uri).diagnostics) if uri in client.published else []  # type: ignore[attr-defined]
    for number, line in enumerate(text.split("\n")):
        for column in word_starts(line):
            position = types.Position(number, column)
            answers.append(await client.text_document_hover_async(types.HoverParams(here, position)))
            answers.append(await client.text_document_completion_async(types.CompletionParams(here, position)))
            answers.append(await client.text_document_definition_async(types.DefinitionParams(here, position)))
        whole = types.Range(types.Position(number, 0), types.Position(number, len(line)))
        on_line = [d for d in published if d.range.start.line <= number <= d.range.end.line]
        answers.append(
            await client.text_document_code_action_async(
                types.CodeActionParams(here, whole, types.CodeActionContext(diagnostics=on_line))
            )
        )
    answers.append(await client.text_document_document_link_async(types.DocumentLinkParams(here)))
    answers.append(await client.text_document_document_symbol_async(types.DocumentSymbolParams(here)))
    answers.append(await lenses(client, uri))
    return answers


def run_commands(answers: list[Any]) -> list[types.Command]:
    """The run commands among code lenses and code actions."""
    found: list[types.Command] = []
    for answer in answers:
        for item in answer if isinstance(answer, list) else []:
            command = item.command if isinstance(item, (types.CodeLens, types.CodeAction)) else item
            if isinstance(command, types.Command) and command.command.startswith("ragLsp.run"):
                found.append(command)
    return found


# ---------------------------------------------------------------- trust

TRUST_SUITE = """\
suites:
  - id: by-command
    target: {kind: capability, id: cmd}
    dataset: .punica/evals/code.jsonl
    engines: [rag]
    thresholds: {rag.recall: 0.8, rag.mode.semantic: 1}
  - id: by-http
    target: {kind: capability, id: web}
    dataset: .punica/evals/code.jsonl
    engines: [rag]
    thresholds: {rag.recall: 0.8, rag.mode.semantic: 1}
  - id: by-default-id
    target: {kind: capability, id: vectors.query}
    dataset: .punica/evals/code.jsonl
    engines: [rag]
    thresholds: {rag.recall: 0.8, rag.mode.semantic: 1}
"""
# Started, the command leaves a file behind (and would then wait for cases).
RAN = "import pathlib, sys; pathlib.Path(sys.argv[1]).write_text('ran')"


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A listening socket: a connection to it is queued even though nobody accepts."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        sock.setblocking(False)
        yield sock


def connected(listener: socket.socket) -> bool:
    try:
        connection, _ = listener.accept()
    except BlockingIOError:
        return False
    connection.close()
    return True


def trust_workspace(root: Path, listener: socket.socket) -> tuple[Path, Path]:
    """A workspace whose suites name a command target, an http target, and the
    default id configured as a command. Returns (root, the file a started command writes)."""
    second_case = GOOD_CASE.replace('"app"', '"main"', 1)
    make_workspace(root, suite=TRUST_SUITE, dataset=f"{GOOD_CASE}\n{second_case}\n")
    ran = root / "ran.txt"
    command = json.dumps([sys.executable, "-c", RAN, str(ran)])
    url = json.dumps(f"http://127.0.0.1:{listener.getsockname()[1]}/query")
    (root / ".punica" / "targets.yaml").write_text(
        f"targets:\n  cmd:\n    command: {command}\n  web:\n    http: {{url: {url}, timeout_s: 5}}\n"
        f"  vectors.query:\n    command: {command}\n",
        encoding="utf-8",
    )
    return root, ran


async def test_an_untrusted_server_runs_nothing_whatever_it_is_asked(client: LanguageClient, tmp_path: Path, listener: socket.socket) -> None:
    """Untrusted (the default): scan, open, hover, completion, definition, code actions, links, symbols, lenses and every run command start no process and call no server."""
    root, ran = trust_workspace(tmp_path, listener)
    await start(client, root)
    await scanned(client)
    opened = {}
    for relative in (".punica/evals/code.suite.yaml", ".punica/evals/code.jsonl", ".punica/targets.yaml"):
        path = root / relative
        uri = open_file(client, path)
        await diagnostics(client, uri, 1)
        opened[uri] = path.read_text(encoding="utf-8")
    answers = [answer for uri, text in opened.items() for answer in await ask_everything(client, uri, text)]

    commands = run_commands(answers)
    assert {command.command for command in commands} == {"ragLsp.runCase", "ragLsp.runSuite"}
    # The commands as a client could send them too, with the arguments of any suite.
    dataset_uri = (root / ".punica/evals/code.jsonl").as_uri()
    for suite in ("by-command", "by-http", "by-default-id"):
        arguments = [{"uri": dataset_uri, "line": 0, "suite": suite}]
        commands += [types.Command("run", name, arguments=arguments) for name in ("ragLsp.runCase", "ragLsp.runSuite")]
    for command in commands:
        answered = await execute(client, command)
        assert "not trusted" in json.dumps(answered), (command, answered)
    refused = await published_when(client, dataset_uri, lambda items: "RAG405" in codes(items))
    assert all("ragLsp.trusted" in d.message for d in refused if d.code == "RAG405")

    assert not ran.exists()
    assert not connected(listener)
    assert children_of(server_pid()) == []


def test_check_runs_nothing(tmp_path: Path, listener: socket.socket) -> None:
    """`rag-lsp check` in every format reads the targets config and runs none of its targets; `run --no-exec` neither."""
    root, ran = trust_workspace(tmp_path, listener)
    for form in ("text", "json", "sarif", "github"):
        checked = rag_lsp("check", "--format", form, cwd=root)
        assert checked.returncode in (0, 1), checked.stderr
        assert "Traceback" not in checked.stderr, checked.stderr
    refused = rag_lsp("run", "--no-exec", "--format", "json", cwd=root)
    assert refused.returncode == 1
    assert all(suite["broken"] for suite in json.loads(refused.stdout)["suites"])
    assert not ran.exists()
    assert not connected(listener)


REMOTE_SCHEMA_MANIFEST = """\
manifest_version: '1'
kind: metric
name: team.answer_length
version: 1.0.0
direction: lower_is_better
accepts:
  - name: gdi_text_v1
config_schema:
  type: object
  properties:
    max_words: {{$ref: "{url}"}}
    min_words: {{$ref: "{file}"}}
"""
METRIC_SUITE = """\
suites:
  - id: lengths
    dataset: .punica/evals/rows.jsonl
    metrics: {team.answer_length: {max_words: 5}}
"""
GDI_ROW = '{"input_id": "a", "prompt": "p", "reference_contexts": ["r"], "sut_response": "s", "retrieved_context": ["c"]}'


def test_a_schema_named_by_url_is_never_fetched(tmp_path: Path, listener: socket.socket) -> None:
    """A manifest whose config_schema refers to schemas by URL (http, file) gets RAG301 for each, and neither `check` nor `run` asks that URL for it."""
    root = make_workspace(tmp_path / "ws", suite=METRIC_SUITE, dataset=GDI_ROW + "\n")
    outside = tmp_path / "words.json"
    outside.write_text('{"type": "integer"}', encoding="utf-8")
    (root / ".punica" / "evals" / "rows.jsonl").write_text(GDI_ROW + "\n", encoding="utf-8")
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/schemas/words.json"
    (root / ".punica" / "metrics").mkdir()
    (root / ".punica" / "metrics" / "answer_length.yaml").write_text(REMOTE_SCHEMA_MANIFEST.format(url=url, file=outside.as_uri()), encoding="utf-8")
    checked = rag_lsp("check", "--format", "json", cwd=root)
    assert checked.returncode == 1, checked.stderr
    found = json.loads(checked.stdout)
    assert [(finding["path"], finding["code"]) for finding in found] == [(".punica/metrics/answer_length.yaml", "RAG301")] * 2
    assert all("never fetches" in finding["message"] for finding in found)
    assert [finding["range"]["start"]["line"] for finding in found] == [10, 11]
    ran = rag_lsp("run", "--format", "json", cwd=root)
    assert ran.returncode == 1 and "Traceback" not in ran.stderr, ran.stderr
    assert not connected(listener)


# ---------------------------------------------------------------- nothing outside is read

OUTSIDE_SUITES = """\
suites:
  - id: up
    target: {{kind: capability, id: vectors.query}}
    dataset: ../outside/secret.jsonl
    engines: [rag]
  - id: absolute
    target: {{kind: capability, id: vectors.query}}
    dataset: {absolute}
    engines: [rag]
  - id: link
    target: {{kind: capability, id: vectors.query}}
    dataset: .punica/evals/link.jsonl
    engines: [rag]
  - id: linked-folder
    target: {{kind: capability, id: vectors.query}}
    dataset: linked/secret.jsonl
    engines: [rag]
  - id: code
    target: {{kind: capability, id: vectors.query}}
    dataset: .punica/evals/code.jsonl
    engines: [rag]
    thresholds: {{rag.recall: 0.1, rag.mode.semantic: 0}}
  - id: replayed
    target: {{kind: capability, id: rec}}
    dataset: .punica/evals/code.jsonl
    engines: [rag]
"""
SUITE_LINES = {"up": 3, "absolute": 7, "link": 11, "linked-folder": 15}


def outside_workspace(base: Path) -> tuple[Path, Path]:
    """A workspace beside a folder of secrets that it names in every way it could:
    (the workspace root, the folder outside). Case c4 alone expects a workspace file."""
    outside = base / "outside"
    (outside / "folder").mkdir(parents=True)
    row = {"id": SECRET, "input": {"query": f"{SECRET} secret app"}, "expect": {"relevant": ["src/app.py"]}}
    for folder in (outside, outside / "folder"):
        (folder / "secret.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
        (folder / "secret.md").write_text(f"# {SECRET}\nsecret app notes\n", encoding="utf-8")
    (outside / "recording.jsonl").write_text(
        "\n".join(json.dumps({"id": f"c{n}", "hits": [{"path": SECRET}], "mode": "semantic"}) for n in range(5)) + "\n", encoding="utf-8"
    )
    # Read as the workspace's .gitignore, it would hide every Python file.
    (outside / "gitignore").write_text("*.py\n", encoding="utf-8")
    (outside / "secret.suite.yaml").write_text(
        f"suites:\n  - id: {SECRET}\n    dataset: .punica/evals/code.jsonl\n    engines: [rag]\n", encoding="utf-8"
    )
    (outside / "manifest.yaml").write_text(
        f"manifest_version: '1'\nkind: metric\nname: rag.recall\nversion: 1.0.0\ndescription: {SECRET}\n"
        "direction: higher_is_better\nconfig_schema: {type: object}\n",
        encoding="utf-8",
    )

    root = base / "ws"
    make_workspace(root, suite=OUTSIDE_SUITES.format(absolute=outside / "secret.jsonl"), dataset="")
    (root / "docs").mkdir()
    (root / "docs" / "readme.md").write_text("# notes\n", encoding="utf-8")
    link(root / ".punica/evals/link.jsonl", outside / "secret.jsonl")
    link(root / "linked", outside / "folder")
    link(root / "docs/link.md", outside / "secret.md")
    link(root / ".gitignore", outside / "gitignore")
    link(root / ".punica/runs/rec.jsonl", outside / "recording.jsonl")
    link(root / ".punica/evals/outside.suite.yaml", outside / "secret.suite.yaml")
    link(root / ".punica/metrics/outside.yaml", outside / "manifest.yaml")
    (root / ".punica/targets.yaml").write_text("targets:\n  rec:\n    recorded: .punica/runs/rec.jsonl\n", encoding="utf-8")
    relevant = {
        "c0": "../outside/secret.md",
        "c1": str(outside / "secret.md"),
        "c2": "docs/link.md",
        "c3": "linked/secret.md",
        "c4": "src/app.py",
    }
    cases = [{"id": case, "input": {"query": "secret app notes"}, "expect": {"relevant": [path]}} for case, path in relevant.items()]
    (root / ".punica/evals/code.jsonl").write_text("".join(json.dumps(case) + "\n" for case in cases), encoding="utf-8")
    return root, outside


class Opens:
    """Files and folders this process opens or lists while recording (an audit hook;
    it stays installed, so it does nothing unless recording)."""

    installed = False
    recording: list[str] | None = None

    @classmethod
    def hook(cls, event: str, arguments: tuple) -> None:
        if cls.recording is None or event not in ("open", "os.scandir", "os.listdir"):
            return
        path = arguments[0] if arguments else None
        if isinstance(path, (str, bytes, os.PathLike)):
            cls.recording.append(os.path.realpath(os.fsdecode(path)))

    @classmethod
    @contextlib.contextmanager
    def recorded(cls) -> Iterator[list[str]]:
        if not cls.installed:
            sys.addaudithook(cls.hook)
            cls.installed = True
        cls.recording = []
        try:
            yield cls.recording
        finally:
            cls.recording = None


def command_line(*arguments: str) -> tuple[int, str, str, list[str]]:
    """The command line run in this process: exit code, stdout, stderr, and the files it opened."""
    out, err = io.StringIO(), io.StringIO()
    collecting = gc.isenabled()
    with Opens.recorded() as opened, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(arguments))
    if collecting:
        gc.enable()  # the command line turns the collector off for its one-shot run
    return code, out.getvalue(), err.getvalue(), opened


def under(paths: list[str], folder: Path) -> list[str]:
    real = os.path.realpath(folder)
    return [path for path in paths if path == real or path.startswith(real + os.sep)]


def test_check_reads_nothing_outside_the_workspace(tmp_path: Path) -> None:
    """`rag-lsp check` flags every dataset, expected path and recording that leaves the workspace (RAG106, RAG203, RAG004) and opens nothing outside it."""
    root, outside = outside_workspace(tmp_path)
    code, output, errors, opened = command_line("check", "--format", "json", str(root))
    assert code == 1
    assert under(opened, outside) == []
    assert SECRET not in output + errors
    findings = json.loads(output)
    assert sorted((f["range"]["start"]["line"], f["code"]) for f in findings if f["code"] == "RAG106") == sorted(
        (line, "RAG106") for line in SUITE_LINES.values()
    )
    link_message = next(f["message"] for f in findings if f["range"]["start"]["line"] == SUITE_LINES["link"])
    assert "link to a location outside the workspace" in link_message
    expected_missing = [f for f in findings if f["code"] == "RAG203"]
    # Each escape is flagged; src/app.py is not (a .gitignore read through the link would hide it).
    assert sorted(f["range"]["start"]["line"] for f in expected_missing) == [0, 1, 2, 3]
    assert {f["path"] for f in findings} == {".punica/evals/code.jsonl", ".punica/evals/code.suite.yaml", ".punica/targets.yaml"}
    (recording,) = [f for f in findings if f["path"] == ".punica/targets.yaml"]
    assert recording["code"] == "RAG004" and "link to a location outside the workspace" in recording["message"]


def test_check_of_files_that_are_links_out_reads_nothing_outside(tmp_path: Path) -> None:
    """A dataset, suite and manifest that are links out of the workspace, passed to `check` one by one as pre-commit passes them, are skipped: nothing outside is opened, and the suite that names the linked dataset says where it leads (RAG106)."""
    root, outside = outside_workspace(tmp_path)
    paths = [".punica/evals/link.jsonl", ".punica/evals/outside.suite.yaml", ".punica/metrics/outside.yaml", ".punica/evals/code.suite.yaml"]
    code, output, errors, opened = command_line("check", "--format", "json", *(str(root / path) for path in paths))
    assert code == 1, errors
    assert under(opened, outside) == []
    assert SECRET not in output + errors
    findings = json.loads(output)
    assert {finding["path"] for finding in findings} == {".punica/evals/code.suite.yaml"}
    assert any(finding["code"] == "RAG106" and "link to a location outside the workspace" in finding["message"] for finding in findings)


def test_run_reads_nothing_outside_the_workspace(tmp_path: Path) -> None:
    """`rag-lsp run` refuses the escaping datasets, the builtin target indexes no linked file, and a linked recording is not replayed."""
    root, outside = outside_workspace(tmp_path)
    code, output, errors, opened = command_line("run", "--format", "json", str(root))
    assert code == 1
    assert under(opened, outside) == []
    assert SECRET not in output + errors
    report = json.loads(output)
    suites = {suite["id"]: suite for suite in report["suites"]}
    for escaping in SUITE_LINES:
        assert suites[escaping]["broken"]
        assert "RAG106" in suites[escaping]["error"]
    cases = {case["id"]: case for case in suites["code"]["cases"]}
    # The builtin found src/app.py (no .gitignore from outside hid it), never the linked files.
    assert cases["c4"]["scores"]["rag.recall"] == 1.0
    for case in ("c0", "c1", "c2", "c3"):
        assert cases[case]["scores"]["rag.recall"] == 0.0
    # The recording is a link out of the workspace: the check reports it in the targets config, and its suite is not run.
    replayed = suites["replayed"]
    assert replayed["cases"] == [] and replayed["broken"]
    assert replayed["error"].startswith("not run: .punica/targets.yaml has 1 error for its target 'rec'")
    assert "outside the workspace" in replayed["error"]


def test_files_index_skips_a_linked_gitignore(tmp_path: Path) -> None:
    """A .gitignore that is a link is not read (as git does): listing the workspace opens nothing outside."""
    root, outside = outside_workspace(tmp_path)
    with Opens.recorded() as opened:
        files = Workspace(root).files()
    assert under(opened, outside) == []
    assert "src/app.py" in files
    assert not {"docs/link.md", "linked/secret.md", ".punica/evals/link.jsonl", ".punica/metrics/outside.yaml"} & set(files)


async def test_the_server_sends_nothing_from_outside_the_workspace(client: LanguageClient, tmp_path: Path) -> None:
    """Over the server, after the scan, every request and a run of the builtin and the recorded target, the outside files' marker never comes back."""
    root, _ = outside_workspace(tmp_path)
    received = everything_received(client)
    await start(client, root)
    await scanned(client)
    suite_path, dataset_path = root / ".punica/evals/code.suite.yaml", root / ".punica/evals/code.jsonl"
    suite_uri, dataset_uri = open_file(client, suite_path), open_file(client, dataset_path)
    on_suite = await diagnostics(client, suite_uri, 1)
    assert sorted(d.range.start.line for d in on_suite if d.code == "RAG106") == sorted(SUITE_LINES.values())
    on_dataset = await diagnostics(client, dataset_uri, 1)
    assert sorted(d.range.start.line for d in on_dataset if d.code == "RAG203") == [0, 1, 2, 3]

    answers = await ask_everything(client, suite_uri, suite_path.read_text(encoding="utf-8"))
    answers += await ask_everything(client, dataset_uri, dataset_path.read_text(encoding="utf-8"))
    suites_run = {}
    for command in run_commands(answers):
        if command.command == "ragLsp.runSuite" and command.arguments[0]["suite"] in ("code", "replayed"):
            suites_run[command.arguments[0]["suite"]] = await execute(client, command)
    assert set(suites_run) == {"code", "replayed"}
    # The recording is a link out of the workspace: the check reports it in the targets config, and its suite is not run.
    (replayed,) = suites_run["replayed"]["suites"]
    assert replayed["error"].startswith("not run: .punica/targets.yaml has 1 error for its target 'rec'")
    assert "outside the workspace" in replayed["error"]
    results = await published_when(client, dataset_uri, lambda items: "RAG400" in codes(items))
    (found,) = [d for d in results if d.code == "RAG400" and d.range.start.line == 4]
    assert "recall 1.00" in found.message
    # Hover on the cases now lists their ranked hits.
    await ask_everything(client, dataset_uri, dataset_path.read_text(encoding="utf-8"))

    assert received
    assert not [message[:300] for message in received if SECRET in message]


# ---------------------------------------------------------------- huge input

TEN_MB = 10 * 1024 * 1024


def huge_row(size: int) -> str:
    return '{"id": "huge", "input": {"query": "' + "x" * size + '"}, "expect": {"relevant": ["src/app.py"]}}'


async def test_a_10_mb_line_is_refused_and_the_server_goes_on(client: LanguageClient, tmp_path: Path) -> None:
    """An open dataset with a 10 MB line gets RAG005 on that line; hover and edits are answered afterwards."""
    make_workspace(tmp_path)
    await start(client, tmp_path)
    dataset = tmp_path / ".punica/evals/code.jsonl"
    uri = open_file(client, dataset, f"{GOOD_CASE}\n{huge_row(TEN_MB)}\n")
    found = await diagnostics(client, uri, 1)
    (refused,) = [d for d in found if d.code == "RAG005"]
    assert refused.range.start.line == 1
    assert "above the max-line-bytes limit of 1,048,576" in refused.message
    suite_uri = open_file(client, tmp_path / ".punica/evals/code.suite.yaml", GOOD_SUITE)
    await diagnostics(client, suite_uri, 1)
    line = GOOD_SUITE.split("\n").index("      rag.recall: 0.8")
    hover = await client.text_document_hover_async(types.HoverParams(document(suite_uri), types.Position(line, 8)))
    assert hover is not None
    assert "recall" in str(hover.contents)
    edit(client, uri, 2, 0, 8, 11, "App")
    assert codes(await diagnostics(client, uri, 2)) == codes(found)


LIMIT = 100_000


async def test_files_above_the_size_limit_are_refused(client: LanguageClient, tmp_path: Path) -> None:
    """With maxFileBytes set, a dataset above it on disk gets one RAG005 from the scan, unread, and so does a suite opened in the editor."""
    make_workspace(tmp_path)
    big = tmp_path / ".punica/evals/big.jsonl"
    big.write_text(f"{GOOD_CASE}\n" * (2 * LIMIT // len(GOOD_CASE)), encoding="utf-8")
    await start(client, tmp_path, options={"maxFileBytes": LIMIT})
    await scanned(client)
    on_disk = await published_when(client, big.as_uri(), lambda items: bool(items))
    assert [(d.code, d.range.start.line) for d in on_disk] == [("RAG005", 0)]
    assert f"above the max-file-bytes limit of {LIMIT:,}" in on_disk[0].message

    padded = GOOD_SUITE + "# padding\n" * (2 * LIMIT // 10)
    uri = open_file(client, tmp_path / ".punica/evals/code.suite.yaml", padded)
    opened = await diagnostics(client, uri, 1)
    assert [(d.code, d.range.start.line) for d in opened] == [("RAG005", 0)]
    assert f"above the max-file-bytes limit of {LIMIT:,}" in opened[0].message


@pytest.mark.parametrize(
    "query, lines, refused",
    [("app", 2 * LIMIT // len(GOOD_CASE), True), ("é" * 100, 500, True), ("é" * 20, 800, False)],
    ids=["ascii", "bytes-above", "bytes-below"],
)
async def test_an_open_dataset_above_the_size_limit_is_refused(
    client: LanguageClient, tmp_path: Path, query: str, lines: int, refused: bool
) -> None:
    """An open dataset above maxFileBytes gets one RAG005, as the same file on disk does, and its rows are not
    checked; the limit counts the text's UTF-8 bytes, not its characters."""
    make_workspace(tmp_path)
    await start(client, tmp_path, options={"maxFileBytes": LIMIT})
    text = GOOD_CASE.replace('"query": "app"', f'"query": "{query}"') + "\n"
    text *= lines
    assert (len(text) < LIMIT) == query.startswith("é") and (len(text.encode()) > LIMIT) == refused
    uri = open_file(client, tmp_path / ".punica/evals/code.jsonl", text)
    codes = [d.code for d in await diagnostics(client, uri, 1)]
    assert (codes == ["RAG005"]) == refused


async def test_an_open_dataset_edited_past_the_size_limit_is_refused_then_read_again(client: LanguageClient, tmp_path: Path) -> None:
    """An edit that takes an open dataset above maxFileBytes turns its findings into one RAG005; undoing it brings the rows back."""
    make_workspace(tmp_path, dataset=f"{GOOD_CASE}\n{GOOD_CASE}\n")
    await start(client, tmp_path, options={"maxFileBytes": LIMIT})
    uri = open_file(client, tmp_path / ".punica/evals/code.jsonl")
    assert [d.code for d in await diagnostics(client, uri, 1)] == ["RAG202"]
    filler = f"{GOOD_CASE}\n" * (LIMIT // len(GOOD_CASE) + 1)
    edit(client, uri, 2, 2, 0, 0, filler)
    assert [d.code for d in await diagnostics(client, uri, 2)] == ["RAG005"]
    removal = types.TextDocumentContentChangePartial(
        range=types.Range(types.Position(2, 0), types.Position(2 + filler.count("\n"), 0)), text=""
    )
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(types.VersionedTextDocumentIdentifier(uri=uri, version=3), [removal])
    )
    assert [d.code for d in await diagnostics(client, uri, 3)] == ["RAG202"]


def test_the_command_line_refuses_a_10_mb_line_and_a_huge_file(tmp_path: Path) -> None:
    """`rag-lsp check` reports RAG005 for a 10 MB line and for a file above 64 MB (not read: it is sparse), and exits 1."""
    make_workspace(tmp_path, dataset=f"{GOOD_CASE}\n{huge_row(TEN_MB)}\n")
    huge = tmp_path / ".punica/evals/huge.jsonl"
    with huge.open("wb") as file:
        file.write(f"{GOOD_CASE}\n".encode())
        file.truncate(65 * 1024 * 1024)
    result = rag_lsp("check", "--format", "json", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    found = {(f["path"], f["range"]["start"]["line"], f["code"]) for f in json.loads(result.stdout)}
    assert found == {(".punica/evals/code.jsonl", 1, "RAG005"), (".punica/evals/huge.jsonl", 0, "RAG005")}


def test_a_number_too_long_to_convert_is_refused_by_check_and_run(tmp_path: Path) -> None:
    """A 4,400-digit integer in a case is RAG005 on the number for `check`, and a broken case (not an internal error) for `run`."""
    make_workspace(tmp_path, dataset='{"id": "huge", "input": {"query": "app", "topK": ' + "9" * 4400 + '}, "expect": {"relevant": ["src/app.py"]}}\n')
    checked = rag_lsp("check", "--format", "json", cwd=tmp_path)
    assert checked.returncode == 1, checked.stderr
    (finding,) = json.loads(checked.stdout)
    assert finding["code"] == "RAG005"
    assert finding["range"]["start"] == {"line": 0, "character": 49}
    ran = rag_lsp("run", "--format", "json", cwd=tmp_path)
    assert ran.returncode == 1, ran.stderr
    assert "internal error" not in ran.stderr, ran.stderr
    (case,) = json.loads(ran.stdout)["suites"][0]["cases"]
    assert case["scores"] is None
    assert "RAG005" in case["broken"]


def test_a_broken_manifest_named_by_a_number_too_long_to_convert_is_a_finding(tmp_path: Path) -> None:
    """A workspace manifest that is not well-formed YAML, whose `name:` line holds a 5,000-digit integer (read
    to name the manifest's findings), is RAG001 for `check`, and never an internal error."""
    make_workspace(tmp_path)
    manifest = tmp_path / ".punica/metrics/broken.yaml"
    manifest.parent.mkdir(parents=True, exist_ok=True)
    manifest.write_text("manifest_version: '1'\nkind: metric\nname: " + "9" * 5000 + "\nconfig_schema: [\n", encoding="utf-8")
    checked = rag_lsp("check", "--format", "json", cwd=tmp_path)
    assert checked.returncode == 1, checked.stderr
    assert "internal error" not in checked.stderr, checked.stderr
    assert {(f["path"], f["code"]) for f in json.loads(checked.stdout)} == {(".punica/metrics/broken.yaml", "RAG001")}


def test_names_too_long_for_the_file_system_are_findings_never_a_traceback(tmp_path: Path) -> None:
    """A dataset, a recording and a model folder named with 300 characters (past the file system's 255, where
    looking the name up fails, not just finds nothing) are each a finding of what is missing."""
    long = "x" * 300
    for folder in (".punica/evals", ".punica/runs", "models"):
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
    (tmp_path / ".punica/targets.yaml").write_text(
        f"targets:\n  replayed:\n    recorded: .punica/runs/{long}.jsonl\n  vectors.query:\n    builtin: {{model: models/{long}}}\n",
        encoding="utf-8",
    )
    (tmp_path / ".punica/evals/a.suite.yaml").write_text(
        f"suites:\n  - id: long\n    target: {{kind: capability, id: replayed}}\n    dataset: .punica/evals/{long}.jsonl\n"
        "    engines: [rag]\n    thresholds: {rag.recall: 0.8, rag.mode.semantic: 1}\n",
        encoding="utf-8",
    )
    result = rag_lsp("check", "--format", "json", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    found = {(f["path"], f["range"]["start"]["line"], f["code"]) for f in json.loads(result.stdout)}
    assert found == {
        (".punica/evals/a.suite.yaml", 3, "RAG105"),
        (".punica/targets.yaml", 2, "RAG004"),
        (".punica/targets.yaml", 4, "RAG004"),
    }


@pytest.mark.parametrize("command", ["check", "run"])
def test_a_path_argument_too_long_for_the_file_system_is_a_usage_error(tmp_path: Path, command: str) -> None:
    """`check` and `run` given a PATH whose name is past the file system's 255 characters say it does not exist
    (exit 2), as of any missing PATH, not an internal error."""
    make_workspace(tmp_path)
    written = f".punica/evals/{'x' * 300}.jsonl"
    result = rag_lsp(command, written, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip() == f"rag-lsp: {written}: no such file or folder"
