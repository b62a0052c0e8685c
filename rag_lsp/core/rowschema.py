"""What a dataset row's schema says is wrong with it, as RAG004 reports it.

``rag-lsp check`` (the rule RAG004) and ``rag-lsp run`` (which breaks a
gdi_text_v1 row that fails its schema rather than score it) read a row's schema
through this one function, so the two give one verdict on every row.
"""

from __future__ import annotations

import copy
from functools import lru_cache
from typing import Any

from .manifests import GDI_TEXT, RAG_CASE
from .resources import load_schema
from .schemacheck import SchemaChecker, SchemaIssue, non_finite_issues, schema_issues, validator_for, validator_of

ROW_SCHEMAS = {RAG_CASE: "rag-case", GDI_TEXT: "gdi-text-v1"}

# Missing keys that dedicated rules report with a better message.
OWNED_BY_OTHER_RULES = {
    (RAG_CASE, (), "expect"),  # RAG201
    (RAG_CASE, ("expect",), "relevant"),  # RAG201
    (GDI_TEXT, (), "reference_contexts"),  # RAG208
}


def row_checker(shape: str) -> SchemaChecker:
    """The checker of the schema of rows of ``shape``."""
    return validator_for(ROW_SCHEMAS[shape])


@lru_cache(maxsize=16)
def case_checker_serving(corpora: tuple[str, ...], at_least_one: bool = False) -> SchemaChecker:
    """The checker of the rag case schema that also holds `input.corpora` to
    ``corpora`` (and, ``at_least_one``, to one corpus or more): one pass over a
    group of valid rows, in jsonschema-rs, settles both (the rule that explains a
    corpus outside them, or an empty list, is RAG004's)."""
    schema = copy.deepcopy(load_schema(ROW_SCHEMAS[RAG_CASE]))
    listed = schema["properties"]["input"]["properties"]["corpora"]
    listed["items"]["enum"] = list(corpora)
    if at_least_one:
        listed["minItems"] = 1
    return validator_of(schema)


def row_issues(value: Any, shape: str, exact: bool = True) -> list[SchemaIssue]:
    """Every way a row (a JSON object) fails the schema of ``shape``, but for the
    missing keys other rules report; a number read as infinity is one issue
    (keyword ``finite``), whatever the schema says of its place. ``exact``: the
    row was read by the standard decoder, the only one that reads such a number
    (the fast one refuses it), so only then is it looked for."""
    found = list(non_finite_issues(value)) if exact else []
    taken = {issue.path for issue in found}
    for issue in schema_issues(row_checker(shape), value):
        if issue.path in taken:
            continue
        missing = _missing_key(issue.message) if issue.keyword == "required" else None
        if missing is not None and (shape, issue.path, missing) in OWNED_BY_OTHER_RULES:
            continue
        found.append(issue)
    return found


def non_finite_message(path: tuple[Any, ...], written: str = "") -> str:
    """What is wrong with a number of a row beyond the range of a double (at
    ``path`` in the row, written as ``written``), for people."""
    where = "".join(f"[{part}]" if type(part) is int else f".{part}" for part in path).lstrip(".") or "the row"
    number = f"{written} is" if written else "the number is"
    return (
        f"`{where}`: {number} beyond the range of a double and would be read as infinity, which is no number: "
        "write a finite number, or a string"
    )


def _missing_key(message: str) -> str | None:
    prefix = "missing required key "
    return message[len(prefix):].strip("'\"") if message.startswith(prefix) else None
