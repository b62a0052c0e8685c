"""Documents files: a corpus given as a JSON Lines file of documents.

Such a file (one ``{"_id", "title", "text"}`` object per line, see
:func:`read_document`) is indexed as one file whose chunks are its documents: a
document is the chunk of its one line, its text the title and the text (never
the JSON around them), its vector its own (no context of a path or of the other
documents). The index and its cache need nothing else: the file's content hash
keys its chunks as any file's does, and a document's ``_id`` is read back from
its line when a hit names it (:meth:`.builder.IndexBuilder.document_id`).
"""

from __future__ import annotations

import json


def document_lines(text: str) -> list[str]:
    """The lines of a documents file: split at "\\n" only (a JSON string may
    hold U+2028 or a form feed, which ``str.splitlines`` would cut at)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def read_document(line: str) -> tuple[str, str] | None:
    """A line of a documents file as (its ``_id``, the text searched: its
    ``title`` and ``text``), or None when it is not a document: not a JSON
    object, no ``_id`` (a string, or an integer written as one), or neither
    title nor text holds a word."""
    if not line.strip():
        return None
    try:
        value = json.loads(line)
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    identifier = value.get("_id")
    if isinstance(identifier, int) and not isinstance(identifier, bool):
        identifier = str(identifier)
    if not isinstance(identifier, str) or not identifier:
        return None
    title, body = value.get("title"), value.get("text")
    parts = [part for part in (title, body) if isinstance(part, str) and part.strip()]
    if not parts:
        return None
    return identifier, "\n".join(parts)


def document_chunks(lines: list[str]) -> tuple[list[tuple[int, int]], list[str], dict[int, str]]:
    """The chunks of a documents file given as its lines (see document_lines):
    one per document, the range of its line, its text; and each document's id
    by its line."""
    ranges: list[tuple[int, int]] = []
    texts: list[str] = []
    ids: dict[int, str] = {}
    for number, line in enumerate(lines, 1):
        document = read_document(line)
        if document is None:
            continue
        ranges.append((number, number))
        texts.append(document[1])
        ids[number] = document[0]
    return ranges, texts, ids


def document_text(lines: list[str], line: int) -> str:
    """The text searched of the document on ``line`` (1-based) of a documents file's lines."""
    document = read_document(lines[line - 1]) if 0 < line <= len(lines) else None
    return document[1] if document is not None else ""
