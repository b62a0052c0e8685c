"""The run report: what ``rag-lsp run --format json`` writes, and reads back.

One module defines it, writes it and reads it:

* **written** from a run's results (:func:`report_bytes`, :func:`suite_json`):
  SPEC §6's keys, ``{"suites": [{"id", "passed", "broken", "aggregates",
  "thresholds": [{"metric", "threshold", "value", "passed"}], "error",
  "metrics", "cases": [{"id", "scores", "broken", "missed",
  "first_relevant_rank", "mode", "ranks", "why_missed", "answer"}]}]}`` (with a
  sweep, ``at_k`` per suite and per case);
* **read** as a baseline (:func:`load_baseline`, :func:`parse_report`) into
  typed records (:class:`RunFigures`, :class:`SuiteFigures`,
  :class:`CaseFigures`), which a comparison reads as it reads a run's results;
* **summed up** for the editor's run commands (:func:`suite_summary`): a suite's
  verdict, means and thresholds, as the report says them, without its cases.

Pure but for reading a baseline file.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Annotated, Any, Callable

import msgspec
import orjson

from .results import CaseResult, SuiteResult

# A figure of a report: a finite number. JSON holds no infinity, but a reader
# takes `1e999` for one, and a baseline figure of infinity compares with nothing.
Figure = Annotated[float, msgspec.Meta(ge=-sys.float_info.max, le=sys.float_info.max)]

# ---------------------------------------------------------------- read


class MissFigures(msgspec.Struct, gc=False):
    """Why a case of a run report missed one value (its ``why_missed``)."""

    value: str
    reason: str
    rank: int | None = None
    message: str = ""


class AnswerFigures(msgspec.Struct, gc=False):
    """What the target's whole answer held for a case of a run report (its ``answer``)."""

    hits: int
    ranks: dict[str, list[int]]
    first_with_field: int | None = None


class CaseFigures(msgspec.Struct, gc=False):
    """One case of a run report (``--format json``)."""

    id: str
    scores: dict[str, Figure | None] | None
    broken: str | None = None
    missed: list[str] = []
    first_relevant_rank: int | None = None
    mode: str | None = None
    ranks: dict[str, int] | None = None
    why_missed: list[MissFigures] = []
    answer: AnswerFigures | None = None
    at_k: dict[str, dict[str, Figure | None] | None] | None = None


class SuiteFigures(msgspec.Struct, gc=False):
    """One suite of a run report."""

    id: str
    aggregates: dict[str, Figure | None]
    cases: list[CaseFigures]
    passed: bool | None = None
    broken: bool | None = None
    error: str | None = None
    at_k: dict[str, dict[str, Figure | None]] | None = None


class RunFigures(msgspec.Struct, gc=False):
    """A run report: what ``rag-lsp run --format json`` prints."""

    suites: list[SuiteFigures]


class BaselineError(Exception):
    """The baseline cannot be read, or is not a run report; the message says why."""


_REPORT = msgspec.json.Decoder(RunFigures)


def parse_report(data: bytes | str, name: str = "the baseline") -> RunFigures:
    """A run report from its JSON text; BaselineError when it is not one."""
    try:
        return _decode_report(data)
    except msgspec.ValidationError as error:
        detail = str(error)
        hint = ""
        try:
            value = msgspec.json.decode(data)
        except (msgspec.DecodeError, RecursionError):
            value = None
        if isinstance(value, list):
            hint = " (a JSON array: is it `rag-lsp check --format json` output?)"
        raise BaselineError(
            f"{name} is not a run report of `rag-lsp run --format json`{hint}: {detail[:1].lower()}{detail[1:]}"
        ) from None
    except msgspec.DecodeError as error:
        raise BaselineError(f"{name} is not valid JSON: {error}") from None
    except RecursionError:
        raise BaselineError(f"{name} is nested too deep to be a run report") from None


def _decode_report(data: bytes | str) -> RunFigures:
    try:
        return _REPORT.decode(data)
    except msgspec.DecodeError as error:
        # msgspec refuses a lone surrogate escape ("\\ud800"), which is valid JSON
        # and which a report holds when a case id does: the standard decoder reads it.
        try:
            value = json.loads(data)
        except (ValueError, RecursionError):
            raise error from None  # msgspec's error, which says where
        return msgspec.convert(value, RunFigures)


# A baseline report larger than this is not read (100,000 cases take about 60 MB).
BASELINE_MAX_BYTES = 512 * 1024 * 1024


def load_baseline(path: Path, root: Path | None = None) -> RunFigures:
    """Read a baseline report; BaselineError when missing, unreadable, not a
    regular file (a pipe, a device, a folder), too large or not a report. With
    ``root`` (a baseline a workspace's settings name), a path that leads out of
    that workspace, through a link or ``..``, is not read."""
    from ..reading.safefiles import Refused, inside, read_regular

    if root is not None and not inside(root, path):
        raise BaselineError(f"the baseline {path} is outside the workspace {root}: a setting reads only workspace files")
    try:
        data = read_regular(path, BASELINE_MAX_BYTES)
    except Refused as error:
        message = str(error)
        if message.endswith("does not exist"):
            raise BaselineError(f"the baseline {path} does not exist") from None
        if "is a folder" in message:
            raise BaselineError(f"the baseline {path} is a folder, not a run report") from None
        raise BaselineError(f"cannot read the baseline: {message}") from None
    return parse_report(data, f"the baseline {path}")


# ---------------------------------------------------------------- written


def thresholds_json(result: SuiteResult) -> list[dict[str, Any]]:
    """A suite's thresholds as the report writes them."""
    return [{"metric": t.metric, "threshold": t.threshold, "value": t.value, "passed": t.passed} for t in result.thresholds]


def suite_json(result: SuiteResult, shared: bool = True) -> dict:
    """A suite's part of the JSON report (``shared``: sweep figures as orjson
    fragments, written once for the cases that share them)."""
    # orjson writes the scorer's records (slotted dataclasses) as objects itself;
    # the standard encoder, which writes what orjson refuses, is given dicts.
    why_missed: Callable[[CaseResult], object] = (
        (lambda case: case.why_missed) if shared else (lambda case: [dataclasses.asdict(miss) for miss in case.why_missed])
    )
    answer: Callable[[CaseResult], object] = (
        (lambda case: case.answer)
        if shared
        else (lambda case: dataclasses.asdict(case.answer) if case.answer is not None else None)
    )
    document = {
        "id": result.id,
        "passed": result.passed,
        "broken": result.broken,
        "aggregates": result.aggregates,
        "thresholds": thresholds_json(result),
        "error": result.error,
        "metrics": result.metadata,
    }
    if result.slices:
        # `--by metadata.KEY`: {"metadata.KEY": {value: {"cases", "scored", "aggregates"}}}.
        document["slices"] = {by: {name: part.to_json() for name, part in parts.items()} for by, parts in result.slices.items()}
    if result.ks:
        document["at_k"] = {str(k): means for k, means in result.at_k.items()}
        # Cases with the same figures share one `at_k` (see the runner): each is
        # written once, on one line, and placed as it is beside every case that
        # has it (a 100k-case sweep would otherwise be mostly indentation).
        converted: dict[int, orjson.Fragment] = {}

        def at_k(case: CaseResult) -> orjson.Fragment | None:
            at = case.at_k
            if at is None:
                return None
            if not shared:
                return {str(k): scores for k, scores in at.items()}  # type: ignore[return-value]
            found = converted.get(id(at))
            if found is None:
                found = converted[id(at)] = orjson.Fragment(orjson.dumps({str(k): scores for k, scores in at.items()}))
            return found

        document["cases"] = [
            {
                "id": case.id,
                "scores": case.scores,
                "broken": case.broken,
                "missed": case.missed,  # a tuple: orjson writes it as a list
                "first_relevant_rank": case.first_relevant_rank,
                "mode": case.mode,
                "ranks": case.ranks,
                "why_missed": why_missed(case),
                "answer": answer(case),
                "at_k": at_k(case),
                "metadata": case.metadata,
            }
            for case in result.cases
        ]
        return document
    document["cases"] = [
        {
            "id": case.id,
            "scores": case.scores,
            "broken": case.broken,
            "missed": case.missed,
            "first_relevant_rank": case.first_relevant_rank,
            "mode": case.mode,
            "ranks": case.ranks,
            "why_missed": why_missed(case),
            "answer": answer(case),
            "metadata": case.metadata,
        }
        for case in result.cases
    ]
    return document


def report_bytes(results: list[SuiteResult]) -> bytes:
    """The report of a run's suites, as indented JSON bytes."""
    document = {"suites": [suite_json(result) for result in results]}
    # Bytes, written as they are: a 100k-case report is tens of megabytes.
    try:
        return orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)
    except orjson.JSONEncodeError:
        return json_bytes({"suites": [suite_json(result, shared=False) for result in results]})


def json_bytes(document: object) -> bytes:
    """``document`` as indented JSON, by orjson, or by the standard encoder when
    orjson refuses a string: a lone surrogate (a case id written "\\ud800" in its
    dataset is valid JSON), which that one escapes."""
    try:
        return orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)
    except orjson.JSONEncodeError:
        return (json.dumps(document, indent=2) + "\n").encode("ascii")



# ---------------------------------------------------------------- summed up


def suite_summary(result: SuiteResult) -> dict[str, Any]:
    """A suite's run as the editor's run commands answer it: the report's verdict,
    means and thresholds, with its file and its counts of cases instead of them."""
    return {
        "id": result.id,
        "file": result.file,
        "passed": result.passed,
        "broken": result.broken,
        "cancelled": result.cancelled,
        "error": result.error,
        "cases": len(result.cases),
        "scored": result.scored,
        "aggregates": result.aggregates,
        "thresholds": thresholds_json(result),
    }
