"""A dataset model of a text that is one JSON document, or a table, not JSON Lines.

Such a text is one finding for the file (see check_document) and no line of it
is a row. The model tells it from the first lines, keeps the document's reading
to follow edits (an edit inside one row reads that row alone: see
core.reading.documentedits), and reads every line as a row once the text turns
into JSON Lines.
"""

from __future__ import annotations

import re

from .analyze import check_document
from ..reading.documentedits import EditedDocument
from ..reading.findings import Finding
from ..reading.jsondocument import HEAD_LINES, Table, first_content_line, head_may_be_document, may_be_document
from ..reading.text import Position

# A JSON string on a line, its escapes included.
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


class ReadsDocuments:
    """The part of :class:`~rag_lsp.core.checking.incremental.DatasetModel`
    that reads its text as one document (see the module's docstring): it sets
    ``_document`` (the document's findings; empty for JSON Lines),
    ``_edited_document`` and ``_a_table``."""

    def _read_as_document(self) -> list[Finding] | None:
        """The findings of the text as one JSON document (see check_document),
        with its reading kept to follow edits; None for JSON Lines."""
        self._edited_document = None
        self._a_table = False
        if not self._may_be_document():
            return None
        document, self._edited_document = EditedDocument.read(self.lines)
        self._a_table = isinstance(document, Table)
        return check_document(self.workspace, self.path, self.lines, document) if document is not None else None

    def _read_as_a_document_again(self, start: Position, end: Position, new_text: str) -> None:
        """After an edit of the text between ``start`` and ``end`` (as it was):
        where the text is one JSON document, or was, or may have become one
        (its first non-blank line begins one), read it again as a whole (an
        edit inside one of its rows reads that row alone: see
        core.reading.documentedits); where it turned from one into the other,
        read every line again."""
        was_document = bool(self._document)
        if was_document and self._edited_document is not None:
            edited = self._edited_document.after_edit(start, end, new_text, self.lines)
            found = check_document(self.workspace, self.path, self.lines, edited) if edited is not None else None
            if found is not None:
                self._document = found
                return
        may_be = self._may_be_document()
        if not was_document and not may_be:
            return
        document = self._read_as_document() if may_be else None
        if document is None and not was_document:
            return  # JSON Lines, a line of which begins like a document
        if document is not None and was_document:
            self._document = document  # one document still: no line is a row
            return
        # Read again as a whole (no line as a row), or every line read again.
        self._build(self.workspace, self.path, None, None, self.lines, self.size, document)

    def _may_be_document(self) -> bool:
        """Whether the text may be one JSON document or a table (see
        check_document), told from its first lines: they alone rule out JSON
        Lines whose first line only begins like one."""
        first = first_content_line(self.lines)
        if first is None or not may_be_document(self.lines[first]):
            return False
        return head_may_be_document("\n".join(self.lines[first : first + HEAD_LINES]))

    def _within_a_string(self, start: Position, end: Position, new_text: str) -> bool:
        """Whether an edit of a text read as one JSON document (see
        DatasetModel._document) changes only the characters of one string of
        a line that holds none of its findings, with no quote, backslash or
        control character: the document then holds the same values, rows and
        slip as before (a string is never written over two lines). Not so in a
        table, whose delimiters a string of JSON may hold."""
        if self._a_table or start.line != end.line or not 0 <= start.line < len(self.lines) or start.character > end.character:
            return False
        if any(finding.range.start.line <= start.line <= finding.range.end.line for finding in self._document):
            return False
        if any(char in '"\\' or char < " " for char in new_text):
            return False
        for string in _STRING.finditer(self.lines[start.line]):
            if string.start() < start.character and end.character < string.end():
                return "\\" not in string.group()
        return False
