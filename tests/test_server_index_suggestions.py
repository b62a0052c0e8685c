"""The index helps while a case is written, end to end over stdio: inside
`expect.relevant` completion offers the files the builtin target's index finds
for the case's query (labelled, with the matching chunk), and a code action adds
the top hit; only from an index already built (by a run, or kept in the cache).

The builtin target here uses a tiny model2vec model the tests write themselves
(tests/tinymodel.py): "automobile" is near the file about cars and shares no word
with it. Each test starts its own server; nothing sleeps.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lspclient import SERVER, TIMEOUT_S, diagnostics, edit, execute, open_file, start
from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities
from tinymodel import write_model
from workspaces import write_files

# Slow: each test builds the builtin target's index and talks to a server over stdio.
pytestmark = pytest.mark.slow

SUITE_FILE = ".punica/evals/cars.suite.yaml"
DATASET_FILE = ".punica/evals/cars.jsonl"
SUITE = """\
suites:
  - id: cars
    target: {kind: capability, id: vectors.query}
    dataset: .punica/evals/cars.jsonl
    engines: [rag]
    options:
      rag: {match: path}
    thresholds:
      rag.recall: 0.5
      rag.mode.semantic: 1
"""
TARGETS = """\
targets:
  vectors.query:
    builtin:
      corpora: {docs: ["docs/**"]}
      model: models/tiny
"""
CASES = [
    '{"id": "ran", "input": {"query": "automobile"}, "expect": {"relevant": ["docs/fruit.md"]}}',
    '{"id": "new", "input": {"query": "automobile"}, "expect": {"relevant": ["docs/notes.md", ""]}}',
    '{"id": "empty", "input": {"query": "automobile"}, "expect": {"relevant": [ ]}}',
    '{"id": "known", "input": {"query": "automobile"}, "expect": {"relevant": ["docs/cars.md"]}}',
]
FOUND = "found by the index for this query"


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


async def start_showing_label_details(client: LanguageClient, root: Path) -> None:
    """Start a session as VS Code does, with a client that shows a completion item's label details."""
    capabilities = client_capabilities("visual-studio-code")
    capabilities.text_document.completion.completion_item.label_details_support = True
    folders = [types.WorkspaceFolder(uri=root.as_uri(), name=root.name)]
    await client.initialize_session(types.InitializeParams(capabilities=capabilities, workspace_folders=folders))


def make_workspace(root: Path) -> Path:
    files = {
        SUITE_FILE: SUITE,
        DATASET_FILE: "\n".join(CASES) + "\n",
        ".punica/targets.yaml": TARGETS,
        "docs/cars.md": "# Cars\n\nA car has a wheel on each corner.\nEvery vehicle is checked.\n",
        "docs/fruit.md": "# Fruit\n\nA banana is a fruit, and so is an apple.\n",
        "docs/notes.md": "# Notes\n\nThe wheel of the car.\n",
    }
    write_files(root, files)
    write_model(root / "models" / "tiny")
    return root / DATASET_FILE


def cached_indexes(cache: Path, root: Path) -> list[Path]:
    """The cached indexes (their meta.json) of the workspace at ``root``."""
    found = []
    for meta in cache.glob("index-v*/*/meta.json"):
        if json.loads(meta.read_text(encoding="utf-8"))["key"]["root"] == root.as_posix():
            found.append(meta)
    return found


async def complete(client: LanguageClient, uri: str, line: int, character: int) -> types.CompletionList:
    result = await asyncio.wait_for(
        client.text_document_completion_async(
            types.CompletionParams(text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line, character))
        ),
        TIMEOUT_S,
    )
    assert isinstance(result, types.CompletionList)
    return result


def from_index(result: types.CompletionList) -> list[types.CompletionItem]:
    return [item for item in result.items if item.detail == FOUND]


def inside_last_string(line: str) -> int:
    """The column just inside the line's last `""` (the element being written)."""
    return line.rindex('""') + 1


async def add_actions(client: LanguageClient, uri: str, line: int) -> list[types.CodeAction]:
    found = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(types.Position(line, 1), types.Position(line, 1)),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    return [action for action in found or [] if isinstance(action, types.CodeAction) and action.kind.startswith("refactor")]


def applied(line: str, action: types.CodeAction, uri: str) -> str:
    assert action.edit is not None
    (change,) = action.edit.document_changes or []
    assert isinstance(change, types.TextDocumentEdit) and change.text_document.uri == uri
    (text_edit,) = change.edits
    assert text_edit.range.start.line == text_edit.range.end.line
    return line[: text_edit.range.start.character] + text_edit.new_text + line[text_edit.range.end.character :]


def progress_titles(client: LanguageClient) -> list[str]:
    return [r[0].title for r in client.progress_reports.values() if r and isinstance(r[0], types.WorkDoneProgressBegin)]


async def test_completion_offers_the_index_files_once_a_run_built_the_index(
    client: LanguageClient, tmp_path: Path, index_cache: Path
) -> None:
    """Before any build, completion in `relevant` offers only workspace files and builds nothing; once a Run case
    built the index, the files it finds for the case's query come first, labelled, with their chunk, and typing filters them."""
    dataset = make_workspace(tmp_path)
    await start_showing_label_details(client, tmp_path)
    uri = open_file(client, dataset)
    await diagnostics(client, uri, 1)
    column = inside_last_string(CASES[1])

    before = await complete(client, uri, 1, column)
    assert before.is_incomplete and before.items
    assert from_index(before) == [] and {item.detail for item in before.items} == {"workspace file"}
    await complete(client, uri, 1, column)  # a second request: no build starts either
    assert cached_indexes(index_cache, tmp_path) == []
    assert not any("index" in title for title in progress_titles(client))

    answered = await execute(client, types.Command("Run case", "ragLsp.runCase", arguments=[{"uri": uri, "line": 0}]))
    assert answered["suites"][0]["scored"] == 1
    assert len(cached_indexes(index_cache, tmp_path)) == 1

    after = await complete(client, uri, 1, column)
    offered = from_index(after)
    # The index's files first, best first; docs/notes.md is already listed by the case.
    assert [item.label for item in offered] == ["docs/cars.md", "docs/fruit.md"]
    assert [item.label for item in after.items[: len(offered)]] == ["docs/cars.md", "docs/fruit.md"]
    cars = offered[0]
    assert cars.label_details is not None and cars.label_details.description == "index"
    assert isinstance(cars.text_edit, types.TextEdit) and cars.text_edit.new_text == "docs/cars.md"
    assert cars.sort_text is not None and all(cars.sort_text < item.sort_text for item in after.items[1:])
    assert isinstance(cars.documentation, types.MarkupContent) and cars.documentation.kind == types.MarkupKind.Markdown
    assert "`docs/cars.md#L1-4`" in cars.documentation.value
    assert "A car has a wheel on each corner." in cars.documentation.value
    labels = [item.label for item in after.items]
    assert labels.count("docs/cars.md") == 1 and "src" not in labels

    # Typing "fru": the index's files that match it, beside the fuzzy matches.
    edit(client, uri, 2, 1, column, column, "fru")
    typed = await complete(client, uri, 1, column + 3)
    assert [item.label for item in from_index(typed)] == ["docs/fruit.md"]
    assert "docs/cars.md" not in [item.label for item in typed.items]


async def test_the_code_action_adds_the_top_hit_changing_only_the_bytes_it_must(
    client: LanguageClient, tmp_path: Path
) -> None:
    """"Add the top hit as relevant" appends the index's first file to the case's list (inside `[ ]` when it is
    empty), keeping the line valid JSON; it is not offered before a build, nor when that file is listed already."""
    dataset = make_workspace(tmp_path)
    await start(client, tmp_path)
    uri = open_file(client, dataset)
    await diagnostics(client, uri, 1)
    assert await add_actions(client, uri, 0) == []  # no index yet

    await execute(client, types.Command("Run case", "ragLsp.runCase", arguments=[{"uri": uri, "line": 0}]))
    (action,) = await add_actions(client, uri, 0)
    assert action.title == "Add the top hit as relevant: docs/cars.md"
    assert applied(CASES[0], action, uri) == CASES[0].replace('["docs/fruit.md"]', '["docs/fruit.md", "docs/cars.md"]')

    (empty,) = await add_actions(client, uri, 2)
    changed = applied(CASES[2], empty, uri)
    assert changed == CASES[2].replace("[ ]", '["docs/cars.md"]')
    assert json.loads(changed)["expect"]["relevant"] == ["docs/cars.md"]

    assert await add_actions(client, uri, 3) == []  # the top hit is listed already


async def test_an_index_the_cache_holds_is_loaded_for_completion_without_embedding(
    client: LanguageClient, tmp_path: Path, index_cache: Path
) -> None:
    """An index a `rag-lsp run` left in the cache serves completion in a new server: looked for in the background
    after the first request (which does not wait for it), read as it is, nothing embedded or written again."""
    dataset = make_workspace(tmp_path)
    ran = subprocess.run([sys.executable, "-m", "rag_lsp", "run", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert ran.returncode in (0, 1), ran.stderr
    (meta,) = cached_indexes(index_cache, tmp_path)
    written = meta.read_bytes(), meta.stat().st_mtime_ns

    await start(client, tmp_path)
    uri = open_file(client, dataset)
    await diagnostics(client, uri, 1)
    column = inside_last_string(CASES[1])
    first = await complete(client, uri, 1, column)
    assert from_index(first) == []  # the cache is read after this answer, not before it

    async def offered() -> list[Any]:
        while True:
            found = from_index(await complete(client, uri, 1, column))
            if found:
                return found

    found = await asyncio.wait_for(offered(), TIMEOUT_S)
    assert [item.label for item in found] == ["docs/cars.md", "docs/fruit.md"]
    assert "A car has a wheel on each corner." in found[0].documentation.value
    assert (meta.read_bytes(), meta.stat().st_mtime_ns) == written
