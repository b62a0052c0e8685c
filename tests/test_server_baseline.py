"""Runs from the editor against a baseline (``ragLsp.baseline``), end to end over
stdio: the baseline is a real ``rag-lsp run --format json`` report of the same
suite on better answers, and the editor's results say how far each figure moved.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import pytest_lsp
from lspclient import SERVER, TIMEOUT_S, diagnostics, open_file, published_when, start, until
from lsprotocol import types
from pytest_lsp import LanguageClient
from test_server_runs import ANSWERS, CASES, RECORDING, answer, execute, lenses, make_workspace, results, titles
from workspaces import write_files
from workspaces import rag_lsp

# Slow (end-to-end sessions with the server over stdio): `pytest -m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

BASELINE = ".punica/runs/baseline.json"
# In the baseline both relevant files came first, and `expiry` was not a case yet.
BASELINE_ANSWERS = [answer("approval", ["src/gateway.ts", "docs/approvals.md"]), *ANSWERS[1:]]


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


def record_baseline(root: Path) -> None:
    """Run the suite on the baseline's answers with the command line, keep its JSON
    report, then put today's answers and cases back."""
    make_workspace(root, cases=CASES[:2], answers=BASELINE_ANSWERS)
    report = rag_lsp("run", "--format", "json", cwd=root)
    assert report.returncode == 0, report.stderr
    write_files(root, {BASELINE: report.stdout})
    make_workspace(root)


async def test_a_case_run_shows_its_deltas_against_the_baseline(client: LanguageClient, tmp_path: Path) -> None:
    """RAG400 and the lens give each figure's delta, name the lost hit; an unchanged case says so, a new one too."""
    record_baseline(tmp_path)
    await start(client, tmp_path, options={"baseline": BASELINE})
    uri = open_file(client, tmp_path / ".punica/evals/code.jsonl")
    await diagnostics(client, uri, 1)
    for line in range(3):
        (lens,) = [lens for lens in await lenses(client, uri) if lens.range.start.line == line]
        await execute(client, lens.command)
    found = await published_when(client, uri, lambda items: len(results(items)) == 3)
    assert results(found) == [
        (
            "RAG400",
            0,
            "recall 0.50 (1/2, −0.50 vs baseline) · precision 0.10 (−0.90 vs baseline)"
            " · MRR 0.33 (first relevant at rank 3, −0.67 vs baseline) · hit@1 0 (−1.00 vs baseline)"
            " · retrieved 10 (+8.00 vs baseline) · semantic 1"
            " — missed: docs/approvals.md (not among the 10 hits the target returned)"
            " — vs baseline: lost docs/approvals.md (was rank 2); src/gateway.ts moved from rank 1 to 3",
        ),
        (
            "RAG400",
            1,
            "recall 1.00 (1/1) · precision 0.50 · MRR 1.00 (first relevant at rank 1) · hit@1 1 · retrieved 2"
            " · semantic 1 — same as the baseline",
        ),
        (
            "RAG400",
            2,
            "recall 1.00 (1/1) · precision 1.00 · MRR 1.00 (first relevant at rank 1) · hit@1 1 · retrieved 1"
            " · semantic 1 — not in the baseline",
        ),
    ]
    assert titles(await lenses(client, uri)) == {
        0: "recall 0.50 (−0.50 vs baseline) · MRR 0.33 (−0.67 vs baseline)",
        1: "recall 1.00 · MRR 1.00",
        2: "recall 1.00 · MRR 1.00",
    }


async def test_a_suite_run_shows_the_mean_deltas_on_its_threshold_lines(client: LanguageClient, tmp_path: Path) -> None:
    """RAG403 / RAG404 carry the suite mean's delta when it moved, and how sure that move is over the cases both
    runs scored (a paired interval and p-value); the suite's lens shows the deltas of its figures."""
    record_baseline(tmp_path)
    await start(client, tmp_path, options={"baseline": BASELINE})
    suite_uri = open_file(client, tmp_path / ".punica/evals/code.suite.yaml")
    await diagnostics(client, suite_uri, 1)
    (lens,) = await lenses(client, suite_uri)
    await execute(client, lens.command)
    found = await published_when(client, suite_uri, lambda items: bool(results(items)))
    assert results(found) == [
        (
            "RAG403",
            7,
            "rag.recall 0.83 < 0.9 (−0.17 vs baseline) (mean over 3 scored cases); −0.25 recall (95% CI −0.50 to ±0.00, "
            "p = 1.00, 0 better, 1 worse): not distinguishable from noise on 2 cases",
        ),
        ("RAG404", 8, "rag.mode.semantic 1.00 ≥ 1 (mean over 3 scored cases)"),
    ]
    (after,) = await lenses(client, suite_uri)
    assert after.command.title == (
        "failed: rag.recall 0.83 < 0.9 · recall 0.83 (−0.17 vs baseline) · MRR 0.78 (−0.22 vs baseline) (3 cases)"
    )


async def test_a_baseline_that_cannot_be_read_is_reported_and_results_come_without_deltas(
    client: LanguageClient, tmp_path: Path
) -> None:
    """A missing baseline gets a warning naming it; the run's results are those of a run without one."""
    make_workspace(tmp_path)
    await start(client, tmp_path, options={"baseline": "runs/missing.json"})
    uri = open_file(client, tmp_path / ".punica/evals/code.jsonl")
    await diagnostics(client, uri, 1)
    (lens,) = [lens for lens in await lenses(client, uri) if lens.range.start.line == 1]
    await execute(client, lens.command)
    await until(client, types.WINDOW_SHOW_MESSAGE, lambda: any("baseline" in m.message for m in client.messages))
    (warning,) = [m for m in client.messages if "baseline" in m.message]
    assert warning.type == types.MessageType.Warning
    assert "runs/missing.json does not exist" in warning.message
    assert "without deltas" in warning.message
    found = await published_when(client, uri, lambda items: bool(results(items)))
    assert [message for _, _, message in results(found)] == [
        "recall 1.00 (1/1) · precision 0.50 · MRR 1.00 (first relevant at rank 1) · hit@1 1 · retrieved 2 · semantic 1"
    ]


async def test_a_new_baseline_file_is_read_again(client: LanguageClient, tmp_path: Path) -> None:
    """Replacing the baseline report (a new run recorded) changes the deltas of the next run."""
    record_baseline(tmp_path)
    await start(client, tmp_path, options={"baseline": BASELINE})
    uri = open_file(client, tmp_path / ".punica/evals/code.jsonl")
    await diagnostics(client, uri, 1)

    async def first_case() -> str:
        (lens,) = [lens for lens in await lenses(client, uri) if lens.range.start.line == 0]
        await execute(client, lens.command)
        await asyncio.wait_for(client.lenses_refreshed.wait(), TIMEOUT_S)  # type: ignore[attr-defined]
        client.lenses_refreshed.clear()  # type: ignore[attr-defined]
        return titles(await lenses(client, uri))[0]

    assert await first_case() == "recall 0.50 (−0.50 vs baseline) · MRR 0.33 (−0.67 vs baseline)"
    # Today's run becomes the baseline: nothing moved since.
    today = rag_lsp("run", "--format", "json", cwd=tmp_path)
    assert today.returncode == 1, today.stderr  # the recall threshold fails
    write_files(tmp_path, {BASELINE: today.stdout, RECORDING: (tmp_path / RECORDING).read_text(encoding="utf-8")})
    assert await first_case() == "recall 0.50 · MRR 0.33"
