"""Where each key and value of a TOML document is, for findings with precise ranges.

The standard library's TOML reader gives values, not positions. A document that
it read without error is well-formed, so a scan of its lines can find every
``key = value`` and ``[table]`` header and say where its key and its value lie:
that is all a finding needs (the offending key, or the offending value).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A bare key, or a basic or literal quoted key.
_KEY_PART = re.compile(r'\s*(?:([A-Za-z0-9_-]+)|"((?:[^"\\]|\\.)*)"|\'([^\']*)\')\s*')
_HEADER = re.compile(r"\s*(\[\[?)")


@dataclass(frozen=True, slots=True)
class TomlSpan:
    """Offsets (code points) of a key and of its value; a table header's value is the header."""

    key_start: int
    key_end: int
    value_start: int
    value_end: int


def toml_spans(text: str) -> dict[tuple[str, ...], TomlSpan]:
    """The span of every key (by its full dotted path) of a well-formed TOML text."""
    return _scan(text)[0]


def repeated_keys(text: str) -> list[tuple[tuple[str, ...], TomlSpan, TomlSpan]]:
    """Each key given a value twice (TOML refuses the file for it): its path, and
    where it is first and again."""
    return _scan(text)[1]


def _scan(text: str) -> tuple[dict[tuple[str, ...], TomlSpan], list[tuple[tuple[str, ...], TomlSpan, TomlSpan]]]:
    scan = _Scan(text)
    table: tuple[str, ...] = ()
    offset = 0
    length = len(text)
    while offset < length:
        line_end = text.find("\n", offset)
        line_end = length if line_end < 0 else line_end
        header = _HEADER.match(text, offset, line_end)
        if header:
            parsed = _key_path(text, header.end(), line_end)
            if parsed is not None:
                path, key_start, key_end = parsed
                table = path
                # A header defines the tables on its way too (`[tool.rag-lsp]`: `tool`).
                scan.define_on_the_way(path, 0, len(path) + 1, TomlSpan(key_start, key_end, header.start(1), len(text[:line_end].rstrip())))
            offset = line_end + 1
            continue
        value_end = scan.entry(offset, line_end, table)
        if value_end is not None:
            next_line = text.find("\n", value_end)
            offset = length if next_line < 0 else next_line + 1
            continue
        offset = line_end + 1
    return scan.spans, scan.repeated


class _Scan:
    """The spans found so far in a TOML text, and its keys given a value twice."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.spans: dict[tuple[str, ...], TomlSpan] = {}
        self.repeated: list[tuple[tuple[str, ...], TomlSpan, TomlSpan]] = []
        # Tables that only dotted keys or headers on their way define so far.
        self.implied: set[tuple[str, ...]] = set()

    def entry(self, position: int, bound: int, table: tuple[str, ...], within_table: bool = False) -> int | None:
        """Record the ``key = value`` at ``position`` (before ``bound``) in
        ``table``, and the keys of an inline table that is its value: where the
        value ends, or None when no entry starts there."""
        text = self.text
        parsed = _key_path(text, position, bound)
        if parsed is None:
            return None
        path, key_start, key_end = parsed
        equals = key_end + _spaces(text, key_end)
        if not text.startswith("=", equals):
            return None
        value_start = equals + 1 + _spaces(text, equals + 1)
        value_end = _value_end(text, value_start, within_table)
        if within_table:
            value_end = min(value_end, bound)
        full = table + path
        span = TomlSpan(key_start, key_end, value_start, value_end)
        if full in self.spans and full not in self.implied:
            self.repeated.append((full, self.spans[full], span))
        self.spans[full] = span
        self.implied.discard(full)
        # Dotted keys define the tables on their way.
        self.define_on_the_way(full, len(table), len(full), span)
        if text.startswith("{", value_start):
            self._inline_table(value_start, value_end, full)
        return value_end

    def define_on_the_way(self, path: tuple[str, ...], shallowest: int, deepest: int, span: TomlSpan) -> None:
        """The tables ``path[:depth]`` (``shallowest`` < depth < ``deepest``) are defined at ``span`` unless they are already."""
        for depth in range(shallowest + 1, deepest):
            if path[:depth] not in self.spans:
                self.spans[path[:depth]] = span
                self.implied.add(path[:depth])

    def _inline_table(self, start: int, end: int, table: tuple[str, ...]) -> None:
        """The keys of the inline table at ``start``..``end`` (``{a = 1, b.c = "x"}``,
        nested ones too), under ``table``: `severity = {RAG207 = "of"}` is as
        common as a `[severity]` table, and its findings belong on the entry."""
        text = self.text
        position = start + 1
        while position < end:
            while position < end and text[position] in " \t\r\n,":
                position += 1
            if position >= end or text[position] == "}":
                return
            value_end = self.entry(position, end, table, within_table=True)
            if value_end is None:
                return
            position = max(value_end, position + 1)


def _spaces(text: str, offset: int) -> int:
    count = 0
    while offset + count < len(text) and text[offset + count] in " \t":
        count += 1
    return count


def _key_path(text: str, offset: int, line_end: int) -> tuple[tuple[str, ...], int, int] | None:
    """A dotted key starting at ``offset`` (after blanks): its parts, and where the
    whole key starts and ends; None when the line holds no key there."""
    parts: list[str] = []
    position = offset
    start = end = None
    while True:
        match = _KEY_PART.match(text, position, line_end)
        if match is None or match.end() == match.start() or not any(group is not None for group in match.groups()):
            return None
        bare, basic, literal = match.groups()
        if basic is not None:
            part = _unescape(basic)
        else:
            part = bare if bare is not None else literal
        parts.append(part)
        inner_start = match.start() + (len(match.group(0)) - len(match.group(0).lstrip()))
        inner_end = match.end() - (len(match.group(0)) - len(match.group(0).rstrip()))
        start = inner_start if start is None else start
        end = inner_end
        position = match.end()
        if position < line_end and text[position] == ".":
            position += 1
            continue
        return tuple(parts), start, end


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text
    try:
        return text.encode("utf-8", "surrogatepass").decode("unicode_escape")
    except UnicodeDecodeError:
        return text


def _value_end(text: str, start: int, within_table: bool = False) -> int:
    """Where the value starting at ``start`` ends: arrays, inline tables and
    multi-line strings may span lines; a comment after the value is not part of it.
    An entry's value ``within_table`` (an inline table) ends too before the `,`
    or `}` that follows it."""
    depth = 0
    position = start
    length = len(text)
    last = start  # just after the last character of the value seen so far
    while position < length:
        char = text[position]
        if text.startswith('"""', position) or text.startswith("'''", position):
            quote = text[position : position + 3]
            close = text.find(quote, position + 3)
            while close >= 0 and quote == '"""' and _escaped(text, close):
                close = text.find(quote, close + 1)
            position = length if close < 0 else close + 3
            # A closing run may hold up to two more quotes that belong to the string.
            while position < length and text[position] == quote[0]:
                position += 1
            last = position
            continue
        if char in "\"'":
            close = position + 1
            while close < length and text[close] != char and text[close] != "\n":
                close += 2 if char == '"' and text[close] == "\\" else 1
            position = last = min(close + 1, length)
            continue
        if within_table and depth == 0 and char in ",}":
            return last
        if char == "#":
            newline = text.find("\n", position)
            if depth == 0:
                return last
            position = length if newline < 0 else newline
            continue
        if char == "\n":
            if depth == 0:
                return last
            position += 1
            continue
        if char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
        position += 1
        if not char.isspace():
            last = position
        if depth == 0 and char in "]}":
            return last
    return last


def _escaped(text: str, offset: int) -> bool:
    backslashes = 0
    while offset - backslashes - 1 >= 0 and text[offset - backslashes - 1] == "\\":
        backslashes += 1
    return backslashes % 2 == 1


def element_span(text: str, span: TomlSpan, index: int) -> tuple[int, int] | None:
    """Where element ``index`` of the array that is ``span``'s value lies; None
    when the value is not an array or has no such element."""
    start, end = span.value_start, span.value_end
    if not text.startswith("[", start):
        return None
    depth = 0
    element = 0
    element_start = None
    position = start + 1
    last = position
    while position < end:
        char = text[position]
        if char in "\"'":
            close = position + 1
            while close < end and text[close] != char:
                close += 2 if char == '"' and text[close] == "\\" else 1
            if element_start is None:
                element_start = position
            position = last = close + 1
            continue
        if char == "#":
            newline = text.find("\n", position, end)
            position = end if newline < 0 else newline
            continue
        if depth == 0 and char in ",]":
            if element == index and element_start is not None:
                return element_start, last
            element += 1
            element_start = None
            position += 1
            continue
        if char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
        if not char.isspace():
            if element_start is None:
                element_start = position
            last = position + 1
        position += 1
    return None
