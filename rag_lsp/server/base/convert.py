"""Findings to LSP diagnostics: the one place positions leave code points.

The core counts columns in code points. The client counts them in the position
encoding negotiated at ``initialize`` (UTF-16 unless it offered something else), so
every range is converted here, against the text the finding was computed from.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Callable

import orjson
from lsprotocol import types
from pygls.capabilities import get_capability

from ...core.reading.findings import SOURCE, Finding, Fix, Severity
from ...core.reading.text import (
    Lines,
    Position,
    Range,
    character_from_utf8,
    character_from_utf16,
    utf8_character,
    utf16_character,
)

UTF8 = "utf-8"
UTF16 = "utf-16"
UTF32 = "utf-32"


def encoding_name(kind: Any) -> str:
    """The negotiated encoding as a plain string ("utf-16" when unknown)."""
    value = getattr(kind, "value", kind)
    return value if value in (UTF8, UTF16, UTF32) else UTF16


def _column(encoding: str) -> Callable[[str, int], int]:
    if encoding == UTF8:
        return utf8_character
    if encoding == UTF32:
        return lambda line_text, character: character
    return utf16_character


def code_point_character(line_text: str, character: int, encoding: str) -> int:
    """A client's column on ``line_text`` (in ``encoding``) as a code-point column."""
    if encoding == UTF8:
        return character_from_utf8(line_text, character)
    if encoding == UTF32:
        return min(character, len(line_text))
    return character_from_utf16(line_text, character)


class Positions:
    """Converts core ranges of one text to client ranges in one encoding."""

    __slots__ = ("lines", "_column", "_encoding")

    def __init__(self, lines: Lines, encoding: str) -> None:
        self.lines = lines
        self._column = _column(encoding)
        self._encoding = encoding

    def position(self, position: Position) -> types.Position:
        line_text = self.lines.line_text(position.line)
        return types.Position(line=position.line, character=self._column(line_text, position.character))

    def range(self, range: Range) -> types.Range:
        return types.Range(start=self.position(range.start), end=self.position(range.end))

    def position_json(self, position: Position) -> dict[str, int]:
        """:meth:`position` as its JSON."""
        return {"line": position.line, "character": self._column(self.lines.line_text(position.line), position.character)}

    def range_json(self, range: Range) -> dict[str, Any]:
        """:meth:`range` as its JSON (see range_json)."""
        return {"start": self.position_json(range.start), "end": self.position_json(range.end)}

    def to_core(self, position: types.Position) -> Position:
        """A client position as a code-point position on this text."""
        line_text = self.lines.line_text(position.line)
        return Position(position.line, code_point_character(line_text, position.character, self._encoding))


# Where a client says which markup it renders, for each answer that carries some.
HOVER_MARKUP = "text_document.hover.content_format"
COMPLETION_MARKUP = "text_document.completion.completion_item.documentation_format"


def markup(capabilities: types.ClientCapabilities, capability: str, markdown: str) -> types.MarkupContent | str:
    """Markdown for clients that render it (``capability`` names the formats the
    client lists for this answer); the same text, plain, for the others."""
    formats = get_capability(capabilities, capability, None) or []
    if types.MarkupKind.Markdown in formats:
        return types.MarkupContent(kind=types.MarkupKind.Markdown, value=markdown)
    if types.MarkupKind.PlainText in formats:
        return types.MarkupContent(kind=types.MarkupKind.PlainText, value=markdown)
    return markdown


def range_json(range: types.Range) -> dict[str, Any]:
    return {
        "start": {"line": range.start.line, "character": range.start.character},
        "end": {"line": range.end.line, "character": range.end.character},
    }


def fix_json(fix: Fix, positions: Positions) -> dict[str, Any]:
    """A fix as plain JSON, ranges already in the client's encoding, so a code
    action can build its edit from the diagnostic alone."""
    item: dict[str, Any] = {
        "title": fix.title,
        "edits": [{"range": positions.range_json(edit.range), "newText": edit.new_text} for edit in fix.edits],
    }
    if fix.create_file is not None:
        item["createFile"] = fix.create_file
    if fix.every:
        item["every"] = True
    return item


def finding_json(
    finding: Finding,
    positions: Positions,
    related_positions: Callable[[str], Positions],
    uri_of: Callable[[str], str],
    related_information: bool = True,
) -> dict[str, Any]:
    """One finding as an LSP diagnostic's JSON, as pygls's converter writes that
    diagnostic (the fields in its order), written straight from the finding:
    clients are sent only the JSON, and building each diagnostic's objects
    first took as long again (the thousands of findings of a large dataset, as
    it opens); the objects are read back from it when needed.

    ``related_positions`` and ``uri_of`` map a workspace-relative path to the
    converter of its text and to its URI (related places may be in other files)."""
    item: dict[str, Any] = {
        "range": positions.range_json(finding.range),
        "message": finding.message,
        "severity": int(finding.severity),
        "code": finding.code,
        "source": SOURCE,
    }
    if related_information and finding.related:
        item["relatedInformation"] = [
            {"location": {"uri": uri_of(related.path), "range": related_positions(related.path).range_json(related.range)}, "message": related.message}
            for related in finding.related
        ]
    if finding.fixes:
        item["data"] = {"fixes": [fix_json(fix, positions) for fix in finding.fixes]}
    return item


def line_diagnostic(
    line: int, line_text: str, start: int, end: int, message: str, severity: Severity | None, code: str | None, encoding: str
) -> types.Diagnostic:
    """A diagnostic between two code-point columns of one line (a run's result
    on its case or threshold), its columns converted as a finding's are."""
    column = _column(encoding)
    return types.Diagnostic(
        range=types.Range(
            start=types.Position(line=line, character=column(line_text, start)),
            end=types.Position(line=line, character=column(line_text, end)),
        ),
        message=message,
        severity=types.DiagnosticSeverity(int(severity)) if severity else None,
        code=code,
        source=SOURCE,
    )


def on_line(diagnostic: types.Diagnostic, line: int) -> types.Diagnostic:
    """A diagnostic of one line (see line_diagnostic) moved to ``line``: the rest
    is kept, as the text it was converted from reads the same."""
    start, end = diagnostic.range.start, diagnostic.range.end
    return types.Diagnostic(
        range=types.Range(start=types.Position(line=line, character=start.character), end=types.Position(line=line, character=end.character)),
        message=diagnostic.message,
        severity=diagnostic.severity,
        code=diagnostic.code,
        source=diagnostic.source,
    )


# A line number in a diagnostic's JSON: every "line" key's value (a "line" key is
# never inside a string, where its quotes would be escaped), the key kept by the
# group. orjson writes "line":5; the standard encoder, its fallback, "line": 5.
# (A look-behind for the key would read the same, ten times slower: pressing
# Enter above a thousand findings splits each.)
_LINE_NUMBER = re.compile(r'("line": ?)\d+(?=[,}])')


def split_at_line_numbers(text: str) -> list[str]:
    """A diagnostic's JSON cut where its line numbers are: the numbers put back
    between the pieces give ``text`` again."""
    pieces = _LINE_NUMBER.split(text)  # the texts between numbers, each key after the text before it
    return [between + key for between, key in zip(pieces[0::2], pieces[1::2])] + [pieces[-1]]


def json_text(value: object) -> str:
    """``value`` as JSON text: by orjson (ten times faster: a line inserted above a
    thousand findings converts them all again), or by the standard encoder for
    text orjson refuses (a lone surrogate, which that one escapes)."""
    try:
        return orjson.dumps(value).decode("utf-8")
    except orjson.JSONEncodeError:
        return json.dumps(value)


def diagnostic_json(diagnostic: types.Diagnostic) -> dict[str, Any]:
    """A diagnostic as the JSON pygls's converter makes of it (a field that is
    None left out, the fields in its order), written out: the converter's
    generic walk costs more than building the diagnostic. The fields a
    diagnostic of this server never has (tags, codeDescription) are not written."""
    item: dict[str, Any] = {"range": range_json(diagnostic.range), "message": diagnostic.message}
    if diagnostic.severity is not None:
        item["severity"] = int(diagnostic.severity)
    if diagnostic.code is not None:
        item["code"] = diagnostic.code
    if diagnostic.source is not None:
        item["source"] = diagnostic.source
    if diagnostic.related_information is not None:
        item["relatedInformation"] = [
            {"location": {"uri": related.location.uri, "range": range_json(related.location.range)}, "message": related.message}
            for related in diagnostic.related_information
        ]
    if diagnostic.data is not None:
        item["data"] = diagnostic.data
    return item


def wire_json(text: str) -> str:
    """A diagnostic's JSON (of :func:`finding_json`) as the client is sent it:
    without its ``data``, the fixes it carries. Quick fixes are looked up in the
    server's own diagnostics (see rag_lsp.server.checking.actions), never read back from
    the client, and on a large dataset the fixes are a third of what every
    version publishes.

    ``data`` is written last, and a key's quotes are never inside a string
    (where they would be escaped): the first ``,"data":`` is that key."""
    at = text.find(',"data":')
    if at < 0:
        at = text.find(', "data": ')  # the standard encoder's spacing (see json_text)
    return text if at < 0 else text[:at] + "}"


def file_uri(path: Path) -> str:
    return path.as_uri()


def client_column(line_text: str, character: int, encoding: str) -> int:
    """Code-point column ``character`` on ``line_text`` as a column in ``encoding``."""
    return _column(encoding)(line_text, character)
