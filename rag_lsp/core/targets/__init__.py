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
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Literal, Sequence

import msgspec

from ..suitefacts import TargetInfo
from ..workspace import Workspace

KINDS = ("builtin", "command", "http", "recorded")
TRUSTED_KINDS = frozenset({"command", "http"})


class Hit(msgspec.Struct, frozen=True, omit_defaults=True, gc=False):
    """One ranked hit. Every field is optional; other fields of an answer are ignored."""

    path: str | None = None
    id: str | None = None
    corpus: str | None = None
    score: float | None = None
    text: str | None = None


class Answer(msgspec.Struct, frozen=True, gc=False):
    """What a target answers for one case.

    Readers use only ``hits`` and ``mode``: a target may answer any object that
    has both (the recorded target serves its decoded lines as they are).
    """

    hits: list[Hit]
    mode: str | None = None


class _Wire(msgspec.Struct, gc=False):
    # The answer as it travels: `hits` may be missing when a target reports an error.
    hits: list[Hit] | None = None
    mode: Literal["semantic", "keyword"] | None = None
    error: str | None = None


class TargetError(Exception):
    """The target could not answer a case; the message says why (RAG405)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Cancelled(TargetError):
    """The run was cancelled while the target was answering: the case has no
    result, and no more requests are made."""


@dataclass(slots=True)
class Request:
    """One case to ask a target about."""

    case_id: str
    input: Any


SHAPE = '{"hits": [...], "mode": "semantic" | "keyword"}'
_DECODER = msgspec.json.Decoder(_Wire)


def decode_answer(data: bytes | str, what: str = "the answer") -> Answer:
    """An answer from its JSON text, or a TargetError that says what is wrong with it."""
    try:
        wire = _DECODER.decode(data)
    except msgspec.ValidationError as error:
        raise TargetError(f"{what} is not shaped as {SHAPE}: {_lower(str(error))}") from None
    except msgspec.DecodeError:
        raise TargetError(f"{what} is not JSON: {excerpt(data)}") from None
    return answer_of(wire, what)


def answer_of(wire: Any, what: str = "the answer") -> Answer:
    if wire.error is not None:
        raise TargetError(f"the target reported an error: {wire.error}")
    if wire.hits is None:
        raise TargetError(f"{what} has no `hits` list; expected {SHAPE}")
    return Answer(wire.hits, wire.mode)


def _lower(text: str) -> str:
    return text[:1].lower() + text[1:]


def excerpt(data: bytes | str, limit: int = 120) -> str:
    """The start of what a target said, for an error message."""
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    text = text.strip()
    if not text:
        return "it is empty"
    shown = text[:limit].replace("\n", "⏎")
    return f"it starts {shown!r}" + (" …" if len(text) > limit else "")


class Target(ABC):
    """One configured target. Subclasses implement :meth:`answer`."""

    kind = ""
    needs_trust = False

    def __init__(self, info: TargetInfo, workspace: Workspace, timeout_s: float) -> None:
        self.info = info
        self.workspace = workspace
        self.timeout_s = timeout_s

    @property
    def id(self) -> str:
        return self.info.id

    @abstractmethod
    def answer(self, request: Request) -> Answer:
        """The target's answer to one case's request; raises TargetError."""

    def answer_many(
        self,
        requests: Sequence[Request],
        cancel: threading.Event | None = None,
        concurrency: int = 1,
        fields: frozenset[str] | None = None,
    ) -> Iterator[tuple[int, Answer | TargetError]]:
        """Answers (or errors) for ``requests``, as ``(index, result)`` in any order.

        Stops starting new requests once ``cancel`` is set. ``fields`` names the
        hit fields the caller reads (None: all); a target may leave out the others.
        The default asks one case after the other; targets that can overlap
        requests override it.
        """
        return self._one_after_the_other(requests, cancel, self.answer)

    def _one_after_the_other(
        self, requests: Sequence[Request], cancel: threading.Event | None, answer: Callable[[Request], Answer]
    ) -> Iterator[tuple[int, Answer | TargetError]]:
        """:meth:`answer_many` by ``answer``, one case after the other."""
        for index, request in enumerate(requests):
            if cancel is not None and cancel.is_set():
                return
            result = self.answer_safely(request, answer)
            if type(result) is Cancelled:
                return
            yield index, result

    def answer_safely(self, request: Request, answer: Callable[[Request], Answer] | None = None) -> Answer | TargetError:
        """``answer(request)`` (by default :meth:`answer`), or the error it was:
        whatever fails is a TargetError."""
        try:
            return (answer or self.answer)(request)
        except TargetError as error:
            return error
        except Exception as error:  # noqa: BLE001 - a target bug is a RAG405, not a crash
            return TargetError(f"the {self.kind} target failed: {type(error).__name__}: {error}")

    def prepare(self, progress: Callable[[int, int], None] | None = None, cancel: threading.Event | None = None) -> None:
        """Get ready to answer a run (the builtin target builds or updates its
        index), reporting ``progress(done, total)``; raises :class:`Cancelled`
        once ``cancel`` is set. By default there is nothing to do."""

    def take_notes(self) -> list[str]:
        """What the target has to say about how it answered, each thing once (the
        builtin target's fallback to keyword search); by default nothing."""
        return []

    def close(self) -> None:
        """Release processes and connections; the target may be used again after."""


def timeout_of(info: TargetInfo, default: float) -> float:
    """The target's ``timeout_s`` (or ``http.timeout_s``), else the run timeout.
    TargetError for NaN or infinity, which the checks report (RAG004): a run
    would otherwise wait for ever on a target that hangs."""
    for holder in (info.config.get("http") if isinstance(info.config.get("http"), dict) else None, info.config):
        if holder is not None:
            value = holder.get("timeout_s")
            if isinstance(value, float) and not math.isfinite(value):
                raise TargetError(
                    f"target {info.id!r}: `timeout_s` is {value}, not a number of seconds: "
                    "write a finite number in the targets config"
                )
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
                return float(value)
    return default


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
