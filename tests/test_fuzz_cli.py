"""Mutated suites, datasets, manifests, targets configs and recordings through the
command line: never a traceback or an internal error, exit codes 0, 1 or 2 only,
machine output that parses, and each input done in bounded time.

The inputs are those of the long run (``tests/soak/fuzz_cli.py``), drawn here by
hypothesis so that a failure shrinks to a small one. Most go through the command
line in this process (fast; a hypothesis deadline bounds each input); a few go
through a process of their own, killed past a timeout.
"""

from __future__ import annotations

import contextlib
import random
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from inprocess import run_in_process
from soak.fuzz_cli import (
    COMMANDS,
    SEEDS,
    RandomDraws,
    mutated_files,
    run_cli,
    verdict,
    write_workspace,
)


# Slow (fuzzes the command line and the server): `pytest -m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

CHECKS = [command for command in COMMANDS if command[0] == "check"]
RUNS = [command for command in COMMANDS if command[0] == "run"]
# Generous: one input takes tens of milliseconds; a slow shared machine must not fail the test.
DEADLINE_MS = 5000
PROCESS_TIMEOUT_S = 60



def _with_value(row: str, value: str) -> str:
    """A seed row with one more `input` field holding a raw JSON value."""
    return row.replace('"input": {', '"input": {"extra": ' + value + ", ", 1)


# Inputs that once broke the command line, kept as explicit examples: an integer
# past Python's digit limit, rows nested deeper than orjson writes (255), than the
# standard decoder follows (about 1000) and than msgspec reads, in a dataset and
# in a recording.
_CASE = SEEDS[".punica/evals/gateway.jsonl"][1].split("\n")[0]
_ANSWER = SEEDS[".punica/runs/gateway-semantic.jsonl"][1].split("\n")[0]
ONCE_BROKEN = {
    ".punica/evals/gateway.jsonl": "\n".join(
        _with_value(_CASE, value).replace('"gateway-approval"', f'"case-{n}"')
        for n, value in enumerate(("9" * 5000, "[" * 600 + "]" * 600, "[" * 990 + "]" * 990, "[" * 3000 + "]" * 3000))
    ).encode(),
    ".punica/runs/gateway-semantic.jsonl": _ANSWER.replace('"hits": ', '"extra": ' + "[" * 3000 + "]" * 3000 + ', "hits": ', 1).encode(),
}


class HypothesisDraws:
    """A mutator's choices drawn by hypothesis, so failing inputs shrink."""

    def __init__(self, draw: Any) -> None:
        self.draw = draw

    def integer(self, low: int, high: int) -> int:
        return self.draw(st.integers(low, high))

    def choice(self, items: Sequence[Any]) -> Any:
        return self.draw(st.sampled_from(items))

    def binary(self, max_size: int) -> bytes:
        return self.draw(st.binary(max_size=max_size))


@st.composite
def mutated_workspaces(draw: Any) -> dict[str, bytes | None]:
    return mutated_files(HypothesisDraws(draw))


def in_process(command: Sequence[str], root: Path) -> tuple[int, str, str]:
    """``rag-lsp COMMAND ROOT`` in this process: its code, stdout, and stderr with the errors it logged."""
    ran = run_in_process([*command, str(root)])
    return ran.code, ran.stdout, ran.stderr + ran.logged()


def assert_sound(command: Sequence[str], root: Path) -> int:
    code, stdout, stderr = in_process(command, root)
    problem = verdict(command, code, stdout, stderr)
    assert problem is None, f"rag-lsp {' '.join(command)}: {problem}\n--- stdout\n{stdout[-3000:]}\n--- stderr\n{stderr[-3000:]}"
    return code


@contextlib.contextmanager
def workspace(files: dict[str, bytes | None]) -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="rag-lsp-fuzz-") as scratch:
        yield write_workspace(Path(scratch).resolve() / "ws", files)


@pytest.fixture(scope="module", autouse=True)
def warm() -> None:
    """Import what the commands load lazily once, so no input pays for it against the deadline."""
    with workspace({}) as root:
        for command in (CHECKS[0], RUNS[0]):
            in_process(command, root)


@settings(max_examples=150, deadline=DEADLINE_MS, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(files=mutated_workspaces())
@example(files=ONCE_BROKEN)
def test_mutated_workspaces_through_every_check_format(files: dict[str, bytes | None]) -> None:
    """Every format of `rag-lsp check` (and --fail-on warning) on a mutated workspace exits 0/1, with output that parses."""
    with workspace(files) as root:
        codes = {command: assert_sound(command, root) for command in CHECKS}
    assert set(codes.values()) <= {0, 1}, codes
    # One set of findings, whatever the format.
    assert len({code for command, code in codes.items() if "--fail-on" not in command}) == 1, codes


@settings(max_examples=80, deadline=DEADLINE_MS, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(files=mutated_workspaces(), command=st.sampled_from(RUNS))
@example(files=ONCE_BROKEN, command=RUNS[1])
def test_mutated_workspaces_through_run(files: dict[str, bytes | None], command: tuple[str, ...]) -> None:
    """`rag-lsp run` over mutated suites, datasets and recordings (the recorded and builtin targets) exits 0/1/2 cleanly."""
    with workspace(files) as root:
        assert_sound(command, root)


@pytest.mark.parametrize("seed", range(4))
def test_inputs_in_their_own_process_end_in_time(seed: int) -> None:
    """In a process of its own, each mutated input ends within the timeout, cleanly, in check and in run."""
    files = mutated_files(RandomDraws(random.Random(seed)))
    with workspace(files) as root:
        for command in (COMMANDS[seed % len(CHECKS)], RUNS[seed % len(RUNS)]):
            code, stdout, stderr = run_cli(root, command, PROCESS_TIMEOUT_S)
            problem = verdict(command, code, stdout, stderr)
            assert problem is None, f"rag-lsp {' '.join(command)}: {problem}\n{stdout[-2000:]}\n{stderr[-2000:]}"
