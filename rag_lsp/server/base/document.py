"""Open documents kept as lines, so an edit costs what it touches.

pygls stores a document as one string and rebuilds it on every incremental
change, walking all of its lines in Python: on a 100k-line dataset that alone
takes longer than checking the edited line. :class:`LineDocument` keeps the lines
and splices a change into the few it covers; the whole text is joined only when
something asks for it, once per version. It also records each change in code
points, so the checker can apply the same edits to its dataset model instead of
re-reading the document.
"""

from __future__ import annotations

import logging
from typing import Any, Sequence
from urllib.parse import unquote

from lsprotocol import types
from pygls.workspace import TextDocument, Workspace

from ...core.reading.sources import utf8_size
from ...core.reading.text import Position, line_of
from ... import collector
from .convert import code_point_character, encoding_name

log = logging.getLogger(__name__)

# One recorded change: (start, end, text) in code points, or (None, None, text)
# when the client replaced the whole document.
Change = tuple[Position | None, Position | None, str]


class TextInLines(str):
    """The text of an opened document, read from the client's message straight
    into its lines (see transport.decode), with its UTF-8 size: a
    :class:`LineDocument` takes them as they are. As a str it is empty: the
    text is never joined whole for it (tens of megabytes, four bytes a
    character once a line holds an emoji), and nothing but the document reads
    it."""

    lines: list[str]
    size: int

    @classmethod
    def of(cls, lines: list[str], size: int) -> TextInLines:
        text = cls()
        text.lines, text.size = lines, size
        return text


class LineDocument(TextDocument):
    """A pygls text document stored as a list of lines."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        source = self._source
        # The whole text's UTF-8 size while it is as it came (see whole_size).
        self._size: int | None
        if isinstance(source, TextInLines):
            self._rows: list[str] = source.lines
            self._size = source.size
        else:
            # A large document's lines are many small objects, none in a cycle.
            with collector.paused():
                self._rows = (source or "").split("\n")
            self._size = utf8_size(source or "")
        # The text, once something asks for it whole (see source): a large
        # dataset's checker follows its lines, and the text as it came goes.
        self._joined: str | None = None
        self._source = None
        self._encoding = encoding_name(self.position_codec.encoding)
        # Changes not yet taken by the checker (see take_changes); recorded only
        # once it follows the document: a suite is re-read whole, and its changes
        # would pile up for as long as it stays open.
        self._changes: list[Change] = []
        self._followed = False
        self._complete = True  # the checker has not seen this document: send all of it

    # -------------------------------------------------- reading

    @property
    def source(self) -> str:
        if self._joined is None:
            self._joined = "\n".join(self._rows)
        return self._joined

    @property
    def lines(self) -> Sequence[str]:
        # pygls's helpers expect lines with their endings.
        rows = self._rows
        return [row + "\n" for row in rows[:-1]] + ([rows[-1]] if rows[-1] else [])

    def line_text(self, line: int) -> str:
        """Line ``line`` without its ending (also without a "\\r" before it)."""
        return line_of(self._rows, line)

    @property
    def line_count(self) -> int:
        return len(self._rows)

    @property
    def whole_size(self) -> int | None:
        """The text's UTF-8 size, when it is known without a pass over its
        lines: as the client sent it whole (a large ASCII text's is its length,
        which the string knows). None once edited."""
        return self._size

    def copy_of_lines(self) -> list[str]:
        """The lines without their "\n" (``source.split("\n")``), in a list of
        their own: a copy of the list, the lines themselves shared."""
        return list(self._rows)

    # -------------------------------------------------- changing

    def _code_points(self, position: types.Position) -> Position:
        if position.line >= len(self._rows):
            return Position(len(self._rows), 0)
        # A column past the end of the line is its end (LSP), before its line
        # ending: the "\r" of a CRLF line stays where it is.
        text = self.line_text(position.line)
        return Position(position.line, min(code_point_character(text, position.character, self._encoding), len(text)))

    def _apply_incremental_change(self, change: types.TextDocumentContentChangePartial) -> None:
        self._size = None
        start = self._code_points(change.range.start)
        end = self._code_points(change.range.end)
        if (end.line, end.character) < (start.line, start.character):
            start, end = end, start
        self._splice(start, end, change.text)
        if self._followed:
            self._changes.append((start, end, change.text))

    def _apply_full_change(self, change: types.TextDocumentContentChangeEvent) -> None:
        self._rows = change.text.split("\n")
        self._size = utf8_size(change.text)
        self._joined = None
        if self._followed:
            self._changes.append((None, None, change.text))

    def _splice(self, start: Position, end: Position, text: str) -> None:
        rows = self._rows
        last = len(rows) - 1
        start_line, end_line = min(start.line, last), min(end.line, last)
        head = rows[start_line][: start.character] if start.line <= last else rows[last]
        tail = rows[end_line][end.character :] if end.line <= last else ""
        rows[start_line : end_line + 1] = (head + text + tail).split("\n")
        self._joined = None

    def resend(self) -> None:
        """The checker lost track: send the whole text next time."""
        self._complete = True

    def take_changes(self) -> tuple[list[str] | None, list[Change]]:
        """What the checker needs to catch up: the whole text, as its lines (see
        copy_of_lines), the first time (and after a full replacement), else the
        changes since it last asked."""
        self._followed = True
        changes, self._changes = self._changes, []
        if self._complete or any(start is None for start, _, _ in changes):
            self._complete = False
            return self.copy_of_lines(), []
        return None, changes


def use_line_documents(workspace: Workspace) -> None:
    """Make ``workspace`` create :class:`LineDocument` for documents opened from now on.

    pygls creates its workspace during ``initialize`` and builds each document
    with ``_create_text_document``; this instance attribute replaces that factory.
    """

    def create(
        doc_uri: str, source: str | None = None, version: int | None = None, language_id: str | None = None
    ) -> TextDocument:
        return LineDocument(
            doc_uri,
            source=source,
            version=version,
            language_id=language_id,
            sync_kind=workspace._sync_kind,
            position_codec=workspace.position_codec,
        )

    workspace._create_text_document = create  # type: ignore[method-assign]

    # A change to a document that is not open (a client's race between closing
    # and typing) has nothing to apply to: pygls would fail on it and show the
    # user an error. It is left out, and said in the log.
    update = workspace.update_text_document

    def update_open(text_doc: types.VersionedTextDocumentIdentifier, change: types.TextDocumentContentChangeEvent) -> None:
        if unquote(text_doc.uri) not in workspace.text_documents:
            log.warning("a change to %s, which is not open, is left out", text_doc.uri)
            return
        update(text_doc, change)

    workspace.update_text_document = update_open  # type: ignore[method-assign]
