"""Targets: how a suite's ``target`` id is asked for hits.

Every adapter sits behind one interface, :class:`Target`: it takes a case's
``input`` (passed verbatim) and its id, and answers an :class:`Answer`, i.e.
``{"hits": [{"path", "id", "corpus", "score", "text"}, ...], "mode": ...}``, or
raises :class:`TargetError`, whose message becomes a RAG405 result. No failure of
a target escapes as anything else: a timeout, a crash, an answer that is not JSON
or not shaped as an answer, an unknown case id.

* ``builtin`` — search by meaning, keyword or both over workspace text files (:mod:`.builtin`);
* ``command`` — a persistent child process speaking JSON Lines (:mod:`.command`);
* ``http`` — a JSON POST per case (:mod:`.http`);
* ``recorded`` — replays answers recorded by case id (:mod:`.recorded`).

``command`` and ``http`` run code or reach services named by workspace files, so
they run only when the caller says so (:attr:`Target.needs_trust`); ``builtin``
and ``recorded`` read only workspace files.
"""

from __future__ import annotations

import math
import threading
from typing import Any

from ...workspace.suitefacts import TargetInfo
from ...workspace.workspace import Workspace
from .base import (
    SHAPE,
    Answer,
    Cancelled,
    Hit,
    Request,
    Target,
    TargetError,
    answer_of,
    decode_answer,
    excerpt,
)

__all__ = [
    "KINDS",
    "SHAPE",
    "TRUSTED_KINDS",
    "Answer",
    "Cancelled",
    "Hit",
    "Request",
    "Target",
    "TargetError",
    "TargetPool",
    "answer_of",
    "decode_answer",
    "excerpt",
    "open_target",
    "timeout_of",
]

KINDS = ("builtin", "command", "http", "recorded")
TRUSTED_KINDS = frozenset({"command", "http"})


from ...workspace.settings import MAX_RUN_TIMEOUT_S


def timeout_of(info: TargetInfo, default: float) -> float:
    """The target's ``timeout_s`` (or ``http.timeout_s``), else the run timeout.
    TargetError for one that is not a positive, finite number of seconds, as
    the checks report it (RAG004): the run does not guess what was meant, and
    infinity would wait for ever on a target that hangs."""
    for holder in (info.config.get("http") if isinstance(info.config.get("http"), dict) else None, info.config):
        if holder is None or "timeout_s" not in holder:
            continue
        value = holder["timeout_s"]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
            raise TargetError(
                f"target {info.id!r}: `timeout_s` is {value!r}, not a number of seconds above 0: "
                "write one in the targets config (e.g. 10), or leave it out for the run timeout"
            )
        if value > MAX_RUN_TIMEOUT_S:
            raise TargetError(
                f"target {info.id!r}: `timeout_s` is {value!r}, above the most a target may take, "
                f"{MAX_RUN_TIMEOUT_S:,g} s (a day): write a smaller number of seconds"
            )
        return float(value)
    # The run timeout, whatever set it, never past what the clocks can wait.
    return min(default, MAX_RUN_TIMEOUT_S)


def open_target(info: TargetInfo, workspace: Workspace, timeout_s: float) -> Target:
    """The adapter for a configured target; TargetError when its config is unusable."""
    timeout = timeout_of(info, timeout_s)
    if info.kind == "builtin":
        from .builtin import BuiltinTarget

        return BuiltinTarget(info, workspace, timeout)
    if info.kind == "recorded":
        from .recorded import RecordedTarget

        return RecordedTarget(info, workspace, timeout)
    if info.kind == "command":
        from .command import CommandTarget

        return CommandTarget(info, workspace, timeout)
    if info.kind == "http":
        from .http import HttpTarget

        return HttpTarget(info, workspace, timeout)
    raise TargetError(f"target {info.id!r} has an unknown kind {info.kind!r}; use one of: {', '.join(KINDS)}")


class TargetPool:
    """The open targets of one workspace, reused across runs.

    Command processes stay up and the builtin index stays built between runs; a
    target whose configuration changed is closed and opened anew. The language
    server keeps one pool per workspace; the CLI one per invocation. Close it when
    done: that stops every process it started.
    """

    def __init__(self, workspace: Workspace, timeout_s: float = 60.0) -> None:
        self.workspace = workspace
        self.timeout_s = timeout_s
        self._targets: dict[str, tuple[Any, Target]] = {}
        self._lock = threading.Lock()

    def get(self, info: TargetInfo) -> Target:
        key = (info.kind, _freeze(info.config), self.timeout_s)
        with self._lock:
            held = self._targets.get(info.id)
            if held is not None and held[0] == key:
                return held[1]
            if held is not None:
                held[1].close()
            target = open_target(info, self.workspace, self.timeout_s)
            self._targets[info.id] = (key, target)
            return target

    def held(self, info: TargetInfo) -> Target | None:
        """The target already open for ``info`` as configured now; None when there
        is none (nothing is opened)."""
        key = (info.kind, _freeze(info.config), self.timeout_s)
        with self._lock:
            held = self._targets.get(info.id)
            return held[1] if held is not None and held[0] == key else None

    def close(self) -> None:
        with self._lock:
            targets = [target for _, target in self._targets.values()]
            self._targets.clear()
        for target in targets:
            try:
                target.close()
            except Exception:  # noqa: BLE001 - closing one must not keep others open
                pass

    def __enter__(self) -> TargetPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted((str(key), _freeze(item)) for key, item in value.items()))
    if isinstance(value, list):
        return tuple(_freeze(item) for item in value)
    return value
