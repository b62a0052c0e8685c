"""Why a case missed, from the editor, end to end over stdio: the RAG400 result on
the case's line and the hover on it name each missed value with its reason."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import pytest_lsp
from lspclient import SERVER, diagnostics, document, open_file, published_when, start
from lsprotocol import types
from pytest_lsp import LanguageClient
from test_server_runs import SUITE, answer, make_workspace, results, run_case

# Slow (end-to-end sessions with the server over stdio): `pytest -m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

# The suite at k = 3, over recorded answers of a target that searches this workspace.
SUITE_AT_3 = SUITE.replace("    engines: [rag]\n", "    engines: [rag]\n    options: {rag: {match: path, k: 3}}\n")
TARGETS = "targets:\n  rec:\n    recorded: .punica/runs/rec.jsonl\n    workspace_paths: true\n"
CASE = json.dumps(
    {
        "id": "approval",
        "input": {"query": "how does the gateway decide an approval"},
        "expect": {"relevant": ["src/gateway.ts", "docs/approvals.md", "src/policy.ts", "docs/gone.md"]},
    }
)
# docs/approvals.md comes back at 4, past k; src/policy.ts (a workspace file) not at
# all; docs/gone.md is no workspace file.
HITS = ["docs/other-1.md", "src/gateway.ts", "docs/other-2.md", "docs/approvals.md", "docs/other-3.md"]
MISSED = (
    "docs/approvals.md (rank 4, k = 3), src/policy.ts (not among the 5 hits the target returned), "
    "docs/gone.md (not a file in the workspace, RAG203)"
)


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


async def run_the_case(client: LanguageClient, root: Path) -> tuple[str, list[types.Diagnostic]]:
    """Open the dataset, run its case; its URI and the diagnostics with the result."""
    _, dataset_path = make_workspace(root, suite=SUITE_AT_3, cases=[CASE], answers=[answer("approval", HITS)], targets=TARGETS)
    await start(client, root)
    uri = open_file(client, dataset_path)
    await diagnostics(client, uri, 1)
    await run_case(client, uri, 0)
    return uri, await published_when(client, uri, lambda items: bool(results(items)))


async def test_rag400_says_why_each_value_was_missed(client: LanguageClient, tmp_path: Path) -> None:
    """RAG400 names each missed value with its reason: its rank past k, not among the hits, or not a workspace file."""
    _, found = await run_the_case(client, tmp_path)
    (result,) = [item for item in results(found) if item[0] == "RAG400"]
    assert result[2] == (
        "recall 0.25 (1/4) · precision 0.33 · MRR 0.50 (first relevant at rank 2) · hit@1 0 · retrieved 3 · semantic 1"
        " — missed: " + MISSED
    )


async def test_the_hover_says_why_each_value_was_missed(client: LanguageClient, tmp_path: Path) -> None:
    """The hover on the case lists each missed value with its reason, and marks the expected hit past k as missed."""
    uri, _ = await run_the_case(client, tmp_path)
    hover = await client.text_document_hover_async(types.HoverParams(text_document=document(uri), position=types.Position(0, 3)))
    assert hover is not None
    assert isinstance(hover.contents, types.MarkupContent)
    lines = hover.contents.value.splitlines()
    assert (
        "**Missed:** `docs/approvals.md` (rank 4, k = 3), `src/policy.ts` (not among the 5 hits the target returned), "
        "`docs/gone.md` (not a file in the workspace, RAG203)"
    ) in lines
    assert "4. `docs/approvals.md` (score 0.85) — beyond k = 3, not scored (expected: counted as missed)" in lines
    assert "5. `docs/other-3.md` (score 0.8) — beyond k = 3, not scored" in lines
