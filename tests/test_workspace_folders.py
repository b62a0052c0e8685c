"""Workspace folders added and removed while the server runs, end to end over stdio:
an added folder is scanned, a removed one's findings are cleared."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_lsp
from lspclient import SERVER, diagnostics, open_file, published_when, start
from lsprotocol import types
from pytest_lsp import LanguageClient
from workspaces import GOOD_SUITE, make_workspace

# Slow (end-to-end sessions with the server over stdio): `pytest -m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

# A suite with an unknown engine: one RAG100 wherever it is.
BROKEN_SUITE = GOOD_SUITE.replace("engines: [rag]", "engines: [rga]")
SUITE = ".punica/evals/code.suite.yaml"


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


def folder(path: Path) -> types.WorkspaceFolder:
    return types.WorkspaceFolder(uri=path.as_uri(), name=path.name)


def change_folders(client: LanguageClient, added: list[Path], removed: list[Path]) -> None:
    client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(added=[folder(p) for p in added], removed=[folder(p) for p in removed])
        )
    )


async def test_an_added_folder_is_scanned_and_a_removed_one_cleared(client: LanguageClient, tmp_path: Path) -> None:
    """Adding a folder publishes its broken suite unopened; removing the first folder clears its findings."""
    first, second = make_workspace(tmp_path / "first", suite=BROKEN_SUITE), tmp_path / "second"
    second.mkdir()
    make_workspace(second, suite=BROKEN_SUITE)
    await start(client, first)
    first_uri, second_uri = (first / SUITE).as_uri(), (second / SUITE).as_uri()
    assert [d.code for d in await diagnostics(client, first_uri, None)] == ["RAG100"]
    assert second_uri not in client.published  # type: ignore[attr-defined]

    change_folders(client, added=[second], removed=[])
    assert [d.code for d in await diagnostics(client, second_uri, None)] == ["RAG100"]

    change_folders(client, added=[], removed=[first])
    await published_when(client, first_uri, lambda items: not items)
    assert [d.code for d in client.published[second_uri].diagnostics] == ["RAG100"]  # type: ignore[attr-defined]


async def test_a_removed_folder_keeps_the_findings_of_its_open_documents(client: LanguageClient, tmp_path: Path) -> None:
    """An open document of a removed folder is still checked: its findings stay for its version."""
    first, second = make_workspace(tmp_path / "first", suite=BROKEN_SUITE), tmp_path / "second"
    second.mkdir()
    make_workspace(second, suite=BROKEN_SUITE)
    await start(client, first)
    uri = open_file(client, first / SUITE)
    assert [d.code for d in await diagnostics(client, uri, 1)] == ["RAG100"]
    change_folders(client, added=[second], removed=[first])
    assert [d.code for d in await diagnostics(client, (second / SUITE).as_uri(), None)] == ["RAG100"]
    assert [d.code for d in client.published[uri].diagnostics] == ["RAG100"]  # type: ignore[attr-defined]
    assert client.published[uri].version == 1  # type: ignore[attr-defined]

