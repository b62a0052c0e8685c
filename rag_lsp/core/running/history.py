"""Earlier run reports kept in a folder: each suite's means over time.

``rag-lsp run --html FILE --history DIR`` plots the trend of each suite mean
across the ``rag-lsp run --format json`` reports kept in DIR (those CI saves, or
a folder of baselines). A run report holds no date of its own, so the reports
are ordered by their files' modification time (then by name).

Only the files named ``*.json`` are read (a folder of recordings, ``*.jsonl``,
may hold the reports too); one that cannot be read or is not a run report is
skipped, and :func:`read_history` says why in its notes. A folder that does not
exist, or is not a folder, is a :class:`HistoryError`.

Pure but for reading the folder.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from .report import BASELINE_MAX_BYTES
from ..reading.safefiles import Refused, read_regular


class HistoryError(Exception):
    """The history folder cannot be read; the message says why."""


@dataclass(frozen=True)
class Point:
    """One earlier report: its file name, when it was written (seconds since the
    epoch, its modification time) and each suite's means, by suite id."""

    name: str
    time: float
    means: dict[str, dict[str, float]] = field(default_factory=dict)


class _Suite(msgspec.Struct, gc=False):
    id: str
    aggregates: dict[str, float | None]


class _Report(msgspec.Struct, gc=False):
    suites: list[_Suite]


# Only the suites' ids and means are decoded; their cases are skipped unread.
_DECODER = msgspec.json.Decoder(_Report)


def _decode(data: bytes) -> _Report:
    try:
        return _DECODER.decode(data)
    except msgspec.DecodeError:
        # msgspec refuses a lone surrogate escape ("\\ud800"), valid JSON that a
        # report holds when a case id does: the standard decoder reads it.
        return msgspec.convert(json.loads(data), _Report)


def read_history(folder: Path) -> tuple[list[Point], list[str]]:
    """The run reports of ``folder``, oldest first, and a note for each ``*.json``
    file skipped (why, for people). HistoryError when ``folder`` is missing or not
    a folder."""
    try:
        status = os.stat(folder)
    except FileNotFoundError:
        raise HistoryError(f"{folder} does not exist: give a folder of `rag-lsp run --format json` reports") from None
    except OSError as error:
        raise HistoryError(f"cannot read {folder}: {error.strerror or error}") from None
    if not stat.S_ISDIR(status.st_mode):
        raise HistoryError(f"{folder} is not a folder: give a folder of `rag-lsp run --format json` reports")
    try:
        names = sorted(entry.name for entry in os.scandir(folder) if entry.name.endswith(".json"))
    except OSError as error:
        raise HistoryError(f"cannot read {folder}: {error.strerror or error}") from None
    points: list[Point] = []
    notes: list[str] = []
    for name in names:
        path = folder / name
        try:
            modified = os.stat(path).st_mtime
            data = read_regular(path, BASELINE_MAX_BYTES)
        except (Refused, OSError) as error:
            notes.append(f"{path} skipped: {error}")
            continue
        if not data.strip():
            notes.append(f"{path} skipped: it is empty")
            continue
        try:
            report = _decode(data)
        except msgspec.ValidationError as error:
            notes.append(f"{path} skipped: not a run report of `rag-lsp run --format json` ({error})")
            continue
        except (msgspec.DecodeError, ValueError, RecursionError):
            notes.append(f"{path} skipped: not valid JSON")
            continue
        means = {
            suite.id: {metric: value for metric, value in suite.aggregates.items() if value is not None}
            for suite in report.suites
        }
        points.append(Point(name, modified, means))
    points.sort(key=lambda point: (point.time, point.name))
    return points, notes
