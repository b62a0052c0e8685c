"""Datasets as a run reads them: each non-blank line's value, fast.

The lines are read by the fast mode of core.reading.datasetlines, which
numbers them, tells blank and refused lines and decodes the others exactly as
the checks do (they read the same lines in its exact mode), so results land on
the checks' lines and a run breaks a line the checks report with their code.

What spoils one line spoils that line only, as the checks report it there: a
byte that is not UTF-8 (RAG002), and a number too large for a double, which
would be read as infinity (RAG004, see :attr:`RunDataset.flaws`; in a rag
case's `input`, found when a target reads it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..workspace.expected import SCHEMA, Flaw
from ..reading.datasetlines import dataset_lines, read_lines_fast
from ..reading.jsondocument import Table, read_document
from ..workspace.manifests import GDI_TEXT, RAG_CASE
from ..workspace.rowschema import non_finite_message
from ..workspace.rows import majority_shape, row_shape
from ..workspace.workspace import Workspace


@dataclass(frozen=True, slots=True)
class Unreadable(Flaw):
    """A line that has no value for a run: why, and the code the checks report it with."""


@dataclass
class RunDataset:
    """The lines of a dataset: ``(0-based line, value)`` in file order, where the
    value is a :class:`~rag_lsp.core.reading.datasetlines.CaseRow`, a decoded
    JSON value, or :class:`Unreadable`."""

    path: str
    rows: list[tuple[int, Any]]
    # The shape most decodable rows have (as the checks compute it), or None.
    shape: str | None
    # Line -> why a row that was read cannot be run (a number read as infinity),
    # with its code: the run breaks it once it knows its id.
    flaws: dict[int, Flaw] = field(default_factory=dict)


class DatasetProblem(Exception):
    """The dataset cannot be read at all (missing, refused): why, and the code
    the checks report it with."""

    def __init__(self, reason: str, code: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.code = code


def read_dataset(workspace: Workspace, relative: str) -> RunDataset:
    """The dataset's rows; DatasetProblem when the file cannot be used."""
    source = workspace.read(relative)
    if source is None:
        raise DatasetProblem(f"the dataset {relative} does not exist", "RAG105")
    if source.refused:
        raise DatasetProblem(f"the dataset {relative} is not read: {source.refused}", "RAG005")
    document = read_document(source.text)
    if document is not None:
        advice = "write each row as a JSON object" if isinstance(document, Table) else "write each row on a line of its own (`rag-lsp check` offers the fix)"
        raise DatasetProblem(f"the dataset {relative} is not read: it is {document.described}, not JSON Lines (one JSON object per line); {advice}", "RAG002")
    read = read_lines_fast(
        dataset_lines(source.text), workspace.settings.max_line_bytes, source.undecodable, unreadable=Unreadable, shape_of=row_shape
    )
    shape = majority_shape(read.cases + read.shapes.get(RAG_CASE, 0), read.shapes.get(GDI_TEXT, 0))
    flaws = {line: Flaw(non_finite_message(path), SCHEMA) for line, path in read.non_finite.items()}
    return RunDataset(relative, read.rows, shape, flaws)


class KnownShapes:
    """A workspace that answers ``dataset_shape`` from datasets a run has read.

    The checks a run applies to a suite file ask for its datasets' shapes
    (RAG110); the run has just read those datasets, so they need not be decoded a
    second time, the checks' way. Everything else is the workspace's own answer.
    """

    def __init__(self, workspace: Workspace, shapes: dict[str, str | None]) -> None:
        self._workspace = workspace
        self._shapes = shapes

    def __getattr__(self, name: str) -> Any:
        return getattr(self._workspace, name)

    def dataset_shape(self, relative: str) -> str | None:
        if relative in self._shapes:
            return self._shapes[relative]
        return self._workspace.dataset_shape(relative)
