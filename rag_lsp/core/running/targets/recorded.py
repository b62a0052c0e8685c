"""The ``recorded`` target: replays answers recorded earlier, by case id.

```yaml
targets:
  vectors.recorded:
    recorded: .punica/runs/vectors-query.jsonl
```

The file holds one ``{"id": <case id>, "hits": [...], "mode": ...}`` per line (a
line may instead carry ``"error": "..."`` to replay a failure). The whole file is
decoded at once into typed answers (msgspec), which keeps a 100k-case replay well
under a second; a caller that reads only some hit fields (the CLI reads only the
``match`` field) gets answers decoded with only those. A file with a bad line is
decoded again line by line, so only the cases of bad lines fail. The file is read again when its size or modification
time changes. It must be inside the workspace; nothing else is read.
"""

from __future__ import annotations

import mmap
import os
from functools import lru_cache
from typing import Any, Literal

import msgspec

from ...reading.wording import counted
from ...reading.paths import normalize_relative
from ...workspace.suitefacts import TargetInfo
from ...workspace.workspace import Workspace
from .base import SHAPE, Answer, Hit, Request, Target, TargetError, _lower, answer_of, excerpt


class _Recorded(msgspec.Struct, gc=False):
    id: str
    hits: list[Hit] | None = None
    mode: Literal["semantic", "keyword"] | None = None
    error: str | None = None


@lru_cache(maxsize=16)
def _decoder(fields: frozenset[str] | None) -> msgspec.json.Decoder:
    """A decoder of recorded lines whose hits keep only ``fields`` (all when None)."""
    if fields is None:
        return msgspec.json.Decoder(_Recorded)
    names = [name for name in Hit.__struct_fields__ if name in fields]
    kinds = {"score": float}
    lean = msgspec.defstruct(
        "Hit", [(name, kinds.get(name, str) | None, None) for name in names], frozen=True, gc=False
    )
    recorded = msgspec.defstruct(
        "Recorded",
        [
            ("id", str),
            ("hits", list[lean] | None, None),
            ("mode", Literal["semantic", "keyword"] | None, None),
            ("error", str | None, None),
        ],
        gc=False,
    )
    return msgspec.json.Decoder(recorded)


class RecordedTarget(Target):
    kind = "recorded"

    def __init__(self, info: TargetInfo, workspace: Workspace, timeout_s: float) -> None:
        super().__init__(info, workspace, timeout_s)
        configured = info.config.get("recorded")
        if not isinstance(configured, str) or not configured:
            raise TargetError(f"target {info.id!r}: `recorded` must be a workspace-relative path")
        relative = normalize_relative(configured)
        if not relative:
            raise TargetError(f"target {info.id!r}: the recording {configured!r} is outside the workspace; it is not read")
        self.relative = relative
        self._signature: tuple[int, int] | None = None
        self._fields: frozenset[str] | None = None
        self._answers: dict[str, Answer | TargetError] = {}
        self._unreadable: list[int] = []
        # What a run of this recording is told about it (a case recorded twice).
        self._note: str | None = None

    def _load(self, fields: frozenset[str] | None = None) -> None:
        path = self.workspace.absolute(self.relative)
        if not self.workspace.contains(path):
            raise TargetError(f"the recording {self.relative} leads outside the workspace (a symlink?); it is not read")
        try:
            stat = path.stat()
            if not path.is_file():
                raise TargetError(f"the recording {self.relative} is not a file")
        except FileNotFoundError:
            raise TargetError(f"the recording {self.relative} does not exist; record a run there or fix the path") from None
        except OSError as error:
            raise TargetError(f"cannot read the recording {self.relative}: {error.strerror or error}") from None
        signature = (stat.st_mtime_ns, stat.st_size)
        if signature == self._signature and (self._fields is None or self._fields == fields):
            return
        try:
            data = _map(path)
        except OSError as error:
            raise TargetError(f"cannot read the recording {self.relative}: {error.strerror or error}") from None
        try:
            self._answers, self._unreadable, repeated = _decode(data, self.relative, _decoder(fields))
        finally:
            if isinstance(data, mmap.mmap):
                data.close()
        self._signature = signature
        self._fields = fields
        self._note = None
        if repeated:
            # The last line of each is replayed, silently but for this.
            more = f" and {len(repeated) - 1:,} more" if len(repeated) > 1 else ""
            self._note = (
                f"the recording {self.relative} holds case {repeated[0]!r}{more} more than once: the last line of each "
                "is replayed (record the run again, or remove the older lines)"
            )

    def take_notes(self) -> list[str]:
        return [self._note] if self._note else []

    def answer(self, request: Request) -> Answer:
        self._load(self._fields)
        return self._replay(request.case_id)

    def _replay(self, case_id: str) -> Answer:
        found = self._answers.get(case_id)
        if found is None:
            note = ""
            if self._unreadable:
                lines = ", ".join(str(line) for line in self._unreadable[:5]) + (" …" if len(self._unreadable) > 5 else "")
                note = f"; line(s) {lines} of the recording could not be read"
            raise TargetError(
                f"no recorded answer for case {case_id!r} in {self.relative} "
                f"({counted(len(self._answers), 'case')} recorded{note}); record the case again"
            )
        if isinstance(found, TargetError):
            raise found
        return found

    def answer_many(self, requests, cancel=None, concurrency=1, fields=None):
        try:
            self._load(fields)
        except TargetError as error:
            for index in range(len(requests)):
                yield index, error
            return
        answers = self._answers
        for index, request in enumerate(requests):
            if cancel is not None and cancel.is_set():
                return
            found = answers.get(request.case_id)
            if found is not None and type(found) is not TargetError:
                yield index, found
                continue
            try:
                yield index, self._replay(request.case_id)
            except TargetError as error:
                yield index, error


def _map(path: Any) -> Any:
    """The file's bytes, memory-mapped (a large recording is decoded without a copy)."""
    with open(path, "rb") as file:
        size = os.fstat(file.fileno()).st_size
        if size == 0:
            return b""
        return mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)


def _decode(
    data: bytes, relative: str, decoder: msgspec.json.Decoder
) -> tuple[dict[str, Answer | TargetError], list[int], list[str]]:
    """Each case's answer, the lines that name no case, and the case ids recorded more than once."""
    answers: dict[str, Answer | TargetError] = {}
    try:
        entries = decoder.decode_lines(data)
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
        return _decode_by_line(data, relative, decoder)
    for entry in entries:
        # A recorded entry has the `hits` and `mode` of an answer: it is served as
        # one, without a copy per case.
        answers[entry.id] = entry if entry.error is None and entry.hits is not None else _answer(entry, relative, None)
    return answers, [], _repeated(entry.id for entry in entries) if len(answers) < len(entries) else []


def _answer(entry: Any, relative: str, line: int | None) -> Answer | TargetError:
    where = f"the recorded answer at {relative}:{line}" if line else f"the recorded answer in {relative}"
    if entry.error is None and entry.hits is not None:
        return entry
    try:
        return answer_of(entry, where)
    except TargetError as error:
        return error


def _repeated(ids: Any) -> list[str]:
    """The ids that come more than once, in the order they first repeat."""
    seen: set[str] = set()
    again: dict[str, None] = {}
    for case_id in ids:
        if case_id in seen:
            again[case_id] = None
        seen.add(case_id)
    return list(again)


def _decode_by_line(
    data: bytes, relative: str, decoder: msgspec.json.Decoder
) -> tuple[dict[str, Answer | TargetError], list[int], list[str]]:
    import json

    answers: dict[str, Answer | TargetError] = {}
    unreadable: list[int] = []
    named: list[str] = []
    for number, line in enumerate(bytes(data).split(b"\n"), 1):
        if not line.strip():
            continue
        try:
            entry = decoder.decode(line)
            answers[entry.id] = _answer(entry, relative, number)
            named.append(entry.id)
            continue
        except msgspec.ValidationError as error:
            problem = f"is not shaped as {{\"id\": ..., {SHAPE[1:]}: {_lower(str(error))}"
        except msgspec.DecodeError:
            problem = f"is not JSON: {excerpt(line)}"
        except RecursionError:
            problem = "is nested too deeply to be read"
        # Whose line is it? If its id can be read, that case fails with the reason.
        case_id: Any = None
        try:
            value = json.loads(line)
            case_id = value.get("id") if isinstance(value, dict) else None
        except (ValueError, RecursionError):
            pass
        if isinstance(case_id, str):
            answers[case_id] = TargetError(f"the recorded answer at {relative}:{number} {problem}")
            named.append(case_id)
        else:
            unreadable.append(number)
    return answers, unreadable, _repeated(named)

