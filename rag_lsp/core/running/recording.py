"""Recording a run's answers, so a live retrieval can be replayed offline.

A :class:`Recorder` is the ``record`` callback of :meth:`.runner.Runner.run_suite`:
it writes each answer a target gave as one line of the ``recorded`` target's
format, ``{"id": <case id>, "hits": [...], "mode": ...}``, with the hits as the
target gave them (every field rag-lsp reads: ``path``, ``id``, ``corpus``,
``score``, ``text``; hits are never cut to the suite's ``k``). A case the target
could not answer is written as ``{"id": <case id>, "error": <why>}``, which the
``recorded`` target replays as that case's failure (RAG405, "the target reported
an error: <why>") instead of inventing an answer. Cases the target was never
asked (broken dataset lines, cases of a cancelled run) are not written.

Recording changes nothing in the run: the runner scores the very answers it
hands to the recorder. The file is written beside its destination and moved into
place when the run ends (:meth:`Recorder.close`), so a recording being replayed
is never read half-written, and a failed run leaves the previous one untouched;
so does a run in which no target answered at all (its suites were not run). A
case id already written to the file is not written again: two suites over one
dataset and one target record each case once.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import msgspec

from ..reading.safefiles import Refused, writable_target
from .targets import Answer, TargetError

# Flush the line buffer to the file past this many bytes.
_FLUSH_BYTES = 1 << 20
# How a target's own {"error": ...} answer is worded (targets.answer_of).
_REPORTED = "the target reported an error: "


class _Line(msgspec.Struct, gc=False):
    id: str
    hits: Any
    mode: str | None


class _Failure(msgspec.Struct, gc=False):
    id: str
    error: str


class Recorder:
    """Writes the answers of a run to ``path`` (JSON Lines), by case id."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
        # Only a regular file (or nothing) is replaced: a link, a pipe, a device
        # or a folder there is the user's, and is refused before the run.
        _replaceable(path)
        # Opened at once: a path that cannot be written fails before the run.
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file: Any = _create(self._partial)
        self._buffer = bytearray()
        self._encoder = msgspec.json.Encoder()
        self._ids: set[str] = set()
        # Targets recorded into this file, in the order they came.
        self.targets: list[str] = []
        self.answers = 0
        self.failures = 0
        # Case ids answered again (by a later suite) and so not written twice.
        self.repeated = 0

    def for_target(self, target: str | None) -> Recorder:
        """Note which target the next answers come from; returns the recorder."""
        name = target or "?"
        if name not in self.targets:
            self.targets.append(name)
        return self

    def __call__(self, case_id: str, answer: Answer | TargetError) -> None:
        if case_id in self._ids:
            self.repeated += 1
            return
        self._ids.add(case_id)
        buffer = self._buffer
        if isinstance(answer, TargetError):
            # The recorded target says "the target reported an error: " itself.
            message = answer.message.removeprefix(_REPORTED)
            self._encoder.encode_into(_Failure(case_id, message), buffer, -1)
            self.failures += 1
        else:
            self._encoder.encode_into(_Line(case_id, answer.hits, answer.mode), buffer, -1)
            self.answers += 1
        buffer.append(10)  # "\n"
        if len(buffer) > _FLUSH_BYTES:
            self._flush()

    def _flush(self) -> None:
        self._file.write(self._buffer)
        self._buffer.clear()

    def close(self, keep: bool = True) -> None:
        """Finish the file and move it into place (``keep``), or throw it away.

        A file that received no answer at all (its suites were not run, or
        refused their target) is not written: an earlier recording there stays.
        """
        keep = keep and self.written > 0
        moved = False
        try:
            if keep and self._file is not None:
                self._flush()
            if self._file is not None:
                self._file.close()
                self._file = None
            if keep:
                # Asked again: the path may have become something else during the run.
                _replaceable(self.path)
                os.replace(self._partial, self.path)
                moved = True
        finally:
            if self._file is not None:
                self._file.close()
                self._file = None
            if not moved:
                try:
                    self._partial.unlink()
                except FileNotFoundError:
                    pass

    @property
    def written(self) -> int:
        return self.answers + self.failures

    def summary(self) -> str:
        """One line for people: what was written where."""
        failed = f" and {self.failures:,} failure{'s' if self.failures != 1 else ''}" if self.failures else ""
        return f"recorded {self.answers:,} answer{'s' if self.answers != 1 else ''}{failed} to {self.path}"


class Recordings:
    """The recorders of one run, by file: ``--record`` may name a file per target
    or suite with ``{target}`` / ``{suite}`` in its path."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._recorders: dict[Path, Recorder] = {}

    @property
    def per_target(self) -> bool:
        return "{target}" in self.pattern or "{suite}" in self.pattern

    def for_suite(self, suite_id: str | None, target: str | None) -> Recorder:
        path = Path(
            self.pattern.replace("{target}", _safe(target or "target")).replace("{suite}", _safe(suite_id or "suite"))
        )
        recorder = self._recorders.get(path)
        if recorder is None:
            recorder = self._recorders[path] = Recorder(path)
        return recorder.for_target(target)

    @property
    def recorders(self) -> list[Recorder]:
        return list(self._recorders.values())

    def close(self, keep: bool = True) -> None:
        errors: list[OSError] = []
        for recorder in self._recorders.values():
            try:
                recorder.close(keep)
            except OSError as error:
                errors.append(error)
        if errors:
            raise errors[0]

    def notes(self) -> list[str]:
        """What people should know about the files written."""
        if not self._recorders:
            return [f"nothing recorded to {self.pattern}: no suite of this run asks a target"]
        notes = []
        for recorder in self._recorders.values():
            if not recorder.written:
                notes.append(f"nothing recorded to {recorder.path}: no target answered (the file was left as it was)")
                continue
            line = recorder.summary()
            if len(recorder.targets) > 1:
                line += (
                    f"; it holds the answers of {len(recorder.targets):,} targets ({', '.join(recorder.targets)}), "
                    "and a case id they share was recorded from the first only (put {target} in the path "
                    "for a file per target)"
                )
            notes.append(line)
        return notes


def _replaceable(path: Path) -> None:
    """OSError, saying why, unless ``path`` is a regular file or absent."""
    try:
        writable_target(path)
    except Refused as error:
        raise OSError(str(error)) from None


def _create(path: Path) -> Any:
    """A new file at ``path`` (a leftover of an earlier run there is removed
    first), never written through a link."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    return os.fdopen(os.open(path, flags, 0o666), "wb")


def _safe(name: str) -> str:
    """A target or suite id as one file name component."""
    cleaned = "".join(char if char.isalnum() or char in "-_.@" else "_" for char in name).strip(".")
    return cleaned or "_"
