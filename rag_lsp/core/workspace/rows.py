"""A dataset's rows as the workspace knows them, and the shape a file's rows have.

Which lines are rows, and how each is decoded, is core.reading.datasetlines's.
A file's shape is that of the majority of its readable rows (SPEC 2.2): a rag
case (``input``/``expect``) or a gdi_text_v1 row
(``input_id``/``retrieved_context``/``reference_contexts``).
"""

from __future__ import annotations

from typing import Any, Iterable, TypeVar

from ..reading.jsonrows import Row, fine_row
from .manifests import GDI_TEXT, RAG_CASE


def row_shape(value: Any) -> str | None:
    if not isinstance(value, dict):
        return None
    if "input_id" in value or "retrieved_context" in value or "reference_contexts" in value:
        return GDI_TEXT
    if "input" in value or "expect" in value:
        return RAG_CASE
    return None


def looks_like_a_row(value: Any) -> bool:
    """Whether a JSON value is plainly a rag case or a gdi_text_v1 row, as other
    JSON Lines (training data, logs) hardly are: it has an ``expect``, an ``input``
    holding a ``query``, or a key of gdi rows alone."""
    if type(value) is not dict:
        return False
    if "expect" in value or "input_id" in value or "retrieved_context" in value or "reference_contexts" in value:
        return True
    query = value.get("input")
    return type(query) is dict and "query" in query


DR = TypeVar("DR", bound="DatasetRow")


class DatasetRow(Row):
    """A dataset line's row with its shape (see row_shape), settled once: the
    file's shape, which rows are cases and which schema a row meets all ask."""

    __slots__ = ("shape",)

    def __init__(self, text: str, refused: str | None = None) -> None:
        super().__init__(text, refused)
        self.shape = row_shape(self.value)

    @classmethod
    def read_fine(cls: type[DR], text: str, value: Any) -> DR:
        row = fine_row(cls, text, value)
        row.shape = row_shape(value)
        return row


def top_k_asked(value: Any) -> int:
    """The hits a row (its decoded value) asks for: its `input.topK` where that
    is a positive integer, else 0."""
    return asked_of(value)[0]


def corpora_asked(value: Any) -> tuple[str, ...]:
    """The corpora a row (its decoded value) asks to search: the names of its
    `input.corpora`, each once, in order; () when it names none."""
    return asked_of(value)[1]


_NOTHING_ASKED: tuple[int, tuple[str, ...]] = (0, ())


def asked_of(value: Any) -> tuple[int, tuple[str, ...]]:
    """What a row (its decoded value) asks of a target: :func:`top_k_asked` and
    :func:`corpora_asked` from one look at its `input`, as a dataset model asks
    both of each of a hundred thousand rows."""
    case_input = value.get("input") if type(value) is dict else None
    if type(case_input) is not dict:
        return _NOTHING_ASKED
    top_k = case_input.get("topK")
    if type(top_k) is not int or top_k <= 0:
        top_k = 0
    names = case_input.get("corpora")
    if type(names) is not list or not names:
        return (top_k, ()) if top_k else _NOTHING_ASKED
    if len(names) == 1 and type(names[0]) is str:  # nearly every case that names corpora
        return top_k, (names[0],)
    return top_k, tuple(dict.fromkeys(name for name in names if type(name) is str))


def shape_of_rows(rows: Iterable[DatasetRow]) -> str | None:
    counts = {RAG_CASE: 0, GDI_TEXT: 0}
    for row in rows:
        shape = row.shape
        if shape is not None:
            counts[shape] += 1
    return majority_shape(counts[RAG_CASE], counts[GDI_TEXT])


def majority_shape(cases: int, gdi: int) -> str | None:
    """A file's shape from how many of its rows are rag cases and gdi_text_v1 rows."""
    if not cases and not gdi:
        return None
    # A tie reads as rag cases: the engine format is the primary one.
    return RAG_CASE if cases >= gdi else GDI_TEXT
