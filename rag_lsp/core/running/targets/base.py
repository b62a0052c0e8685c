"""What every target shares: the request it is asked, the answer it gives, the
error it raises, and the :class:`Target` interface the adapters implement.

The adapters (:mod:`.builtin`, :mod:`.command`, :mod:`.http`, :mod:`.recorded`)
import these from here, and the package opens them (:func:`open_target`), so
no module of the package imports the package itself.
"""

from __future__ import annotations

import json
import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Callable, Collection, Iterator, Literal, Sequence

import msgspec
import orjson

from ...workspace.suitefacts import TargetInfo
from ...workspace.workspace import Workspace

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


def input_json(value: Any) -> bytes:
    """A case's ``input`` as the JSON a target is sent, as the dataset wrote it,
    or a TargetError: orjson's, but for what it cannot write and JSON can hold
    (an integer past 64 bits, a string with a lone surrogate), the standard
    library's, with escapes."""
    try:
        return orjson.dumps(value)
    except TypeError:
        pass
    try:
        return json.dumps(value, allow_nan=False).encode("ascii")
    except (TypeError, ValueError) as error:
        raise TargetError(f"the case's input cannot be sent as JSON: {error}") from None


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

    def held_files(self) -> Collection[str] | None:
        """The files whose text the target's answers come from, when it knows
        them (the builtin target: the files its index holds chunks of, as of its
        last :meth:`prepare`); None by default."""
        return None

    def take_notes(self) -> list[str]:
        """What the target has to say about how it answered, each thing once (the
        builtin target's fallback to keyword search); by default nothing."""
        return []

    def close(self) -> None:
        """Release processes and connections; the target may be used again after."""
