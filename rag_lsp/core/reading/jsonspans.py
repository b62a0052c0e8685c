"""Where a key or a value is inside one JSON line: found in the line's text
where it is written plainly (nearly always), else from one parse of the line;
asked only when a finding points inside the line.
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NamedTuple




# JSON pointer-like path of a value inside a row: ("expect", "relevant", 1).
Path = tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class Span:
    """Code-point columns of a key (if any) and its value on a row's line."""

    value_start: int
    value_end: int
    key_start: int | None = None
    key_end: int | None = None


@lru_cache(maxsize=1)
def line_parser() -> Any:
    import tree_sitter
    import tree_sitter_json

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_json.language()))


def string_value(node: Any) -> str:
    # The key node is a JSON string; decode it exactly as json would (a key with
    # no escape is its text between the quotes: nearly every key, done fast).
    raw = node.text
    if b"\\" not in raw and len(raw) >= 2 and raw[:1] == raw[-1:] == b'"':
        return raw[1:-1].decode("utf-8", "replace")
    try:
        return json.loads(raw.decode("utf-8", "replace"))
    except ValueError:
        return node.text.decode("utf-8", "replace").strip('"')


def parse_line(text: str) -> tuple[bytes, Any]:
    """A row's text as UTF-8, and its top value's node (None when it has none)."""
    data = text.encode("utf-8", "surrogatepass")
    root = line_parser().parse(data).root_node
    return data, next(_values_in(root), None)


def _values_in(node: Any) -> Any:
    """The value nodes directly inside ``node`` (an array's elements, the document's value)."""
    return (child for child in node.named_children if child.type not in ("comment", "ERROR"))


def object_pairs(node: Any) -> Any:
    """(key node, value node) of each complete pair of an object node, in line order."""
    for pair in node.named_children:
        if pair.type == "pair":
            key = pair.child_by_field_name("key")
            value = pair.child_by_field_name("value")
            if key is not None and value is not None:
                yield key, value


def _walk_values(text: str):
    """Yield ``(path, key node or None, value node)`` for every value in the row."""
    data, top = parse_line(text)
    if top is None:
        return data, []
    out = []
    pending: list[tuple[Path, Any, Any]] = [((), None, top)]
    while pending:
        path, key, node = pending.pop()
        out.append((path, key, node))
        if node.type == "object":
            for key_node, value_node in object_pairs(node):
                pending.append((path + (string_value(key_node),), key_node, value_node))
        elif node.type == "array":
            for index, child in enumerate(_values_in(node)):
                pending.append((path + (index,), None, child))
    return data, out


# What makes a line not plainly written: a quote inside a string. Other escapes
# (a Windows path's `\\`, `\\u00e9`) leave every quote beginning or ending a string,
# which is all the plain readings below rely on.
_ESCAPED_QUOTE = '\\"'


# The first key of a line's object and its string value, both written plainly.
_LEADING_STRING = re.compile(r'[ \t\r\n]*\{[ \t\r\n]*"([^"]*)"[ \t\r\n]*:[ \t\r\n]*("[^"]*")')


def leading_string_span(text: str, key: Any) -> Span | None:
    """The span of ``key`` and its value when, in a line of valid JSON, ``key``
    is its object's first key, its value a string, the line has no escaped quote (every
    quote begins or ends a string) and the key is written nowhere else (so it is
    not repeated): found without a parse. A case's id is nearly always so placed.
    None for any other line."""
    if _ESCAPED_QUOTE in text:
        return None
    match = _LEADING_STRING.match(text)
    if match is None or match.group(1) != key or text.count(f'"{key}"') != 1:
        return None
    return Span(match.start(2), match.end(2), match.start(1) - 1, match.end(1) + 1)


# A key's colon, and an array element that is a plainly written string.
_COLON = re.compile(r"[ \t\r\n]*:[ \t\r\n]*")


_PLAIN_ELEMENT = re.compile(r'[ \t\r\n]*("[^"]*")[ \t\r\n]*([,\]])')


_EMPTY_ARRAY = re.compile(r"\[[ \t\r\n]*\]")


_QUOTED = re.compile(r'"[^"]*"')


# A JSON number, true, false or null, as written.
_SCALAR = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null")


def plain_path_span(text: str, value: Any, keys: Path) -> Span | None:
    """The span of a list of strings, a string, a number, true, false or null at
    ``keys`` = (key, ..., key) in a line of valid JSON decoded to ``value``,
    found without a parse when the line is plainly written (see _plain_key).
    None for any other line or value."""
    found = _plain_key(text, value, keys)
    if found is None:
        return None
    written, key_start, key_end, start = found
    if type(written) is str:
        # No escaped quote in the line: the next quote closes the string.
        end = text.find('"', start + 1) if text[start : start + 1] == '"' else -1
        return Span(start, end + 1, key_start, key_end) if end >= 0 else None
    if written is None or type(written) in (bool, int, float):
        literal = _SCALAR.match(text, start)
        return Span(start, literal.end(), key_start, key_end) if literal is not None else None
    if type(written) is not list or text[start : start + 1] != "[":
        return None
    strings = written
    if any(type(element) is not str for element in strings):
        return None
    if not strings:
        empty = _EMPTY_ARRAY.match(text, start)
        return Span(start, empty.end(), key_start, key_end) if empty is not None else None
    position = start + 1
    closed = None
    for number in range(len(strings)):
        element = _PLAIN_ELEMENT.match(text, position)
        if element is None or (element.group(2) == "]") != (number == len(strings) - 1):
            return None
        position = closed = element.end()
    return Span(start, closed, key_start, key_end)


class Elements(NamedTuple):
    """The columns (start, end) of the elements of a list, from its first: all of
    them when ``parsed``, else up to the first that is not a plainly written string."""

    columns: list[tuple[int, int]]
    parsed: bool


def plain_element_columns(text: str, value: Any, keys: Path) -> list[tuple[int, int]]:
    """The columns of the elements of the list at ``keys`` in a line of valid JSON
    decoded to ``value``, in one pass, from the first up to the first that is not
    a plainly written string (see _plain_list); none for any other line or value.
    An expected path of a case (``("expect", "relevant", 2)``) is nearly always
    so written."""
    found = _plain_list(text, value, keys)
    if found is None:
        return []
    strings, _, _, start = found
    if all(type(string) is str for string in strings):
        # No escaped quote in the line and nothing but strings in the list: its n-th
        # quoted run from its "[" is its n-th element.
        return [quoted.span() for quoted, _ in zip(_QUOTED.finditer(text, start + 1), strings)]
    columns = []
    position = start + 1
    for string in strings:
        if type(string) is not str:
            break
        element = _PLAIN_ELEMENT.match(text, position)
        if element is None:
            break
        columns.append(element.span(1))
        if element.group(2) == "]":
            break
        position = element.end()
    return columns


def _plain_list(text: str, value: Any, keys: Path) -> tuple[list, int, int, int] | None:
    """The list at ``keys`` = (key, ..., key) in ``value``, decoded from ``text``,
    with where its key starts and ends in the text and where the list begins
    (its "["), when the line is plainly written (see _plain_key). None otherwise."""
    found = _plain_key(text, value, keys)
    if found is None or type(found[0]) is not list or text[found[3] : found[3] + 1] != "[":
        return None
    return found


def _plain_key(text: str, value: Any, keys: Path) -> tuple[Any, int, int, int] | None:
    """The value at ``keys`` = (key, ..., key) in ``value``, decoded from ``text``,
    with where its key starts and ends in the text and where the value begins,
    when the line is plainly written: no escaped quote (so every quote begins or ends a
    string), and the last key written once in the line (so, as ``value`` holds
    it, it is that key, and not repeated). None otherwise."""
    if not keys or _ESCAPED_QUOTE in text or any(type(key) is str and "\\" in key for key in keys):
        return None
    found = value
    for key in keys:
        if type(key) is not str or type(found) is not dict or key not in found:
            return None
        found = found[key]
    quoted = f'"{keys[-1]}"'
    key_start = text.find(quoted)
    if key_start < 0 or text.find(quoted, key_start + 1) >= 0:
        return None
    colon = _COLON.match(text, key_start + len(quoted))
    if colon is None:
        return None
    return found, key_start, key_start + len(quoted), colon.end()


def span_at(text: str, path: Path) -> Span:
    """The span of the value at ``path`` in a row's text, or of the deepest value
    on the way that exists: the tree is walked down the path only. Where a key
    repeats, the last one counts, as it does for the decoded value."""
    data, node = parse_line(text)
    if node is None:
        return Span(0, len(text))
    key = None
    for part in path:
        step = _step(node, part)
        if step is None:
            break
        key, node = step
    return Span(
        _char_column(text, data, node.start_byte),
        _char_column(text, data, node.end_byte),
        _char_column(text, data, key.start_byte) if key is not None else None,
        _char_column(text, data, key.end_byte) if key is not None else None,
    )


def element_columns_at(text: str, path: Path) -> list[tuple[int, int]]:
    """The columns of the elements of the array at ``path`` in a row's text, from
    one parse (none when there is no array there), as span_at gives each."""
    data, node = parse_line(text)
    for part in path:
        step = _step(node, part) if node is not None else None
        if step is None:
            return []
        node = step[1]
    if node is None or node.type != "array":
        return []
    bounds = [(element.start_byte, element.end_byte) for element in _values_in(node)]
    if len(data) == len(text):
        return bounds
    # Byte offsets to code points in one pass along the line, not one per element.
    columns: dict[int, int] = {}
    column = previous = 0
    for byte in sorted({offset for pair in bounds for offset in pair}):
        column += len(data[previous:byte].decode("utf-8", "ignore"))
        columns[byte] = column
        previous = byte
    return [(columns[start], columns[end]) for start, end in bounds]


def _step(node: Any, part: Any) -> tuple[Any, Any] | None:
    """(key node or None, value node) of ``part`` (a key or an index) in ``node``."""
    if node.type == "object" and isinstance(part, str):
        found = None
        for key, value in object_pairs(node):
            if string_value(key) == part:
                found = (key, value)
        return found
    if node.type == "array" and isinstance(part, int) and not isinstance(part, bool) and part >= 0:
        element = next(itertools.islice(_values_in(node), part, None), None)
        return (None, element) if element is not None else None
    return None


class RepeatedKey(NamedTuple):
    """A key repeated in one object of a line, in code-point columns."""

    path: Path
    # The repeat's key, and the first occurrence's key.
    start: int
    end: int
    first_start: int
    first_end: int
    # Where the occurrence before the repeat begins, and where the pair after
    # it begins: removing the line between them, for each repeat, leaves the
    # object as JSON readers take it (the last value of a repeated key is the one kept).
    previous_start: int
    after_previous: int


def duplicate_key_spans(text: str) -> list[RepeatedKey]:
    """Each repeated key of a line, after the first occurrence (see RepeatedKey)."""
    data, values = _walk_values(text)
    # By object and key: its first occurrence's key, and the latest occurrence's pair.
    first: dict[tuple[int, Any], tuple[int, int]] = {}
    latest: dict[tuple[int, Any], tuple[int, int]] = {}
    result = []
    for path, key, node in sorted(values, key=lambda item: item[2].start_byte):
        if key is None:
            continue
        span = (_char_column(text, data, key.start_byte), _char_column(text, data, key.end_byte))
        # A key repeats only within one object (key -> pair -> object): under two
        # copies of a repeated key, the same inner keys share a path but are no repeat.
        pair = key.parent
        owner = pair.parent if pair is not None else None
        identity = (owner.start_byte if owner is not None else -1, path[-1])
        if identity in first:
            result.append(RepeatedKey(path, *span, *first[identity], *latest[identity]))
        else:
            first[identity] = span
        # Every occurrence has a pair after it but the last, whose span then stands.
        after = pair.next_named_sibling if pair is not None else None
        latest[identity] = (span[0], _char_column(text, data, after.start_byte) if after is not None else span[1])
    return result


def _char_column(text: str, data: bytes, byte: int) -> int:
    if len(data) == len(text):
        return byte
    return len(data[:byte].decode("utf-8", "ignore"))
