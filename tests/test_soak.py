"""A short soak: a few hundred mixed editor requests against one server (the long
run is ``python tests/soak/soak.py``, the same driver), and what long runs found
growing without bound, pinned where it grew."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

from lsprotocol import types
from pygls.io_ import StdoutWriter
import pytest
from soak.soak import soak

from rag_lsp.core.reading import yamltree
from rag_lsp.server.server import create_server

# Slow (a soak of the server): `pytest -m "not slow"` leaves it out.
pytestmark = pytest.mark.slow


async def test_mixed_requests_get_only_the_errors_the_protocol_calls_for(tmp_path: Path) -> None:
    """400 edits, completions, hovers, lenses, code actions, symbols and runs on a recorded target: no unexpected error, no error logged, runs give results, and the server answers at the end and exits cleanly."""
    report = await soak(tmp_path, requests=400, cases=100, seed=7, sample_every=100)
    assert not report.unexpected, report.format()
    assert report.log_errors == [], report.format()
    assert report.outcomes["runCase"]["ok"] > 0, report.format()
    assert report.runs_with_cases > 0, report.format()
    assert "RAG400" in report.result_codes, report.format()
    assert report.alive_at_end, report.format()
    assert report.last_answer_ms is not None, report.format()
    assert report.exit_code == 0, report.format()


# ---------------------------------------------------------------- found growing


async def test_notifications_and_commands_leave_no_futures_behind() -> None:
    """Once handled, no notification and no command leaves its future in the protocol's table (pygls 2.1 kept one per keystroke and per run, with the run's summary)."""
    server = create_server()
    protocol = server.protocol
    output = io.BytesIO()
    protocol.set_writer(StdoutWriter(output))
    handled: list[str] = []

    @server.feature("ragLsp/testNotice")
    async def notice(ls, params) -> None:
        handled.append("notice")

    @server.command("ragLsp.testCommand")
    async def command(ls, *arguments) -> dict:
        handled.append("command")
        return {"summary": list(range(100))}

    for number in range(50):
        protocol._handle_notification("ragLsp/testNotice", None)
        protocol._handle_request(number, types.WORKSPACE_EXECUTE_COMMAND, types.ExecuteCommandParams(command="ragLsp.testCommand"))
    # Handlers and the callbacks after them run on the loop: give it turns, not time.
    for _ in range(1000):
        if len(handled) == 100 and not protocol._request_futures:
            break
        await asyncio.sleep(0)
    assert len(handled) == 100
    assert output.getvalue().count(b'"summary"') == 50
    assert protocol._request_futures == {}


def test_parsing_yaml_keeps_no_nodes() -> None:
    """Parsing YAML leaves nothing in the module's scalar constructor (it remembered every number, boolean and null ever parsed)."""
    for value in range(100):
        yamltree.parse_yaml(f"thresholds: {{rag.recall: 0.{value}, k: {value}, strict: true, none: null, bad: !!int x}}\n")
    assert yamltree._constructor.constructed_objects == {}
    assert yamltree._constructor.recursive_objects == {}
