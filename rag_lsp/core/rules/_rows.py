"""Which dataset rows the dataset rules look at.

Each dataset rule is about one row shape. A row is checked as the shape RAG004
validates it against (the file's shape, else its own), and only when its own keys do
not say it is the other shape: a gdi_text_v1 row among rag cases is reported once,
by RAG004, not again as a case without `expect`.
"""

from __future__ import annotations

from typing import Any

from ..jsonrows import Row
from ..manifests import GDI_TEXT, RAG_CASE
from ..workspace import row_shape


def row_of_shape(row: Row, file_shape: str | None, wanted: str) -> dict[str, Any] | None:
    """The row's object when it is a readable row of shape ``wanted``, else None."""
    if row.error is not None or row.refused or not row.is_object:
        return None
    own_shape = row_shape(row.value)
    if own_shape not in (None, wanted):
        return None
    checked_as = file_shape or own_shape or RAG_CASE
    return row.value if checked_as == wanted else None


def rag_case(row: Row, file_shape: str | None) -> dict[str, Any] | None:
    """The row's object when it is a rag case (engine `rag`)."""
    return row_of_shape(row, file_shape, RAG_CASE)


def gdi_row(row: Row, file_shape: str | None) -> dict[str, Any] | None:
    """The row's object when it is a gdi_text_v1 row."""
    return row_of_shape(row, file_shape, GDI_TEXT)


def expected_strings(case: dict[str, Any]) -> list[tuple[int, str]]:
    """(index, value) of each string in the case's `expect.relevant`; other
    elements are RAG004's."""
    expect = case.get("expect")
    relevant = expect.get("relevant") if isinstance(expect, dict) else None
    if not isinstance(relevant, list):
        return []
    return [(index, value) for index, value in enumerate(relevant) if isinstance(value, str)]
