"""JSON Lines rows with positions.

Each line is decoded by msgspec, the fastest strict decoder (its values are the
standard library's, integers of any width included); a line it refuses is
decoded again by the standard library's, which says where and why it fails.
Spans of keys and values inside a line come from tree-sitter's JSON grammar,
asked only when a finding needs to point inside the line, so a 100k-line dataset
costs one decode per line and nothing more. :meth:`Row.read_many` reads many lines
at once, checking them for repeated keys a few hundred at a time.
"""

from __future__ import annotations

import itertools
import json
import re
import sys
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NamedTuple, Sequence, TypeVar

import msgspec
import orjson

from .sources import utf8_size

# JSON pointer-like path of a value inside a row: ("expect", "relevant", 1).
Path = tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class Span:
    """Code-point columns of a key (if any) and its value on a row's line."""

    value_start: int
    value_end: int
    key_start: int | None = None
    key_end: int | None = None


class _BadConstant(ValueError):
    pass


def _reject_constant(name: str) -> Any:
    raise _BadConstant(name)


# The fast decoder, and what it refuses that the standard one may yet read or
# explain: NaN, a lone surrogate, a float beyond range, an integer past the
# interpreter's digit limit, deep nesting.
_decode_utf8 = msgspec.json.Decoder().decode


def _fast_decode(text: str) -> Any:
    """``text`` read by msgspec. A str that is not ASCII is given as its UTF-8
    bytes: msgspec reads a str through its UTF-8, which CPython then keeps with
    the str for as long as it lives, and a row keeps its line's text (a dataset
    of non-English questions would be held twice over)."""
    return _decode_utf8(text if text.isascii() else text.encode())


_REFUSED = (msgspec.DecodeError, UnicodeEncodeError, RecursionError)

# The value of a line the fast decoder refused (see read_many).
UNREAD: Any = object()
# Lines read_many checks for repeated keys together.
_READ_TOGETHER = 256

R = TypeVar("R", bound="Row")


class Row:
    """One non-blank dataset line, decoded."""

    __slots__ = ("text", "value", "error", "has_duplicate_keys", "refused", "refused_span", "exact", "_spans", "_elements")

    def __init__(self, text: str, refused: str | None = None) -> None:
        self.text = text
        # Set when the line was not read (too long, or a number too long to
        # convert): the RAG005 message, and the columns it is about (None: the line).
        self.refused = refused
        self.refused_span: tuple[int, int] | None = None
        self.value: Any = None
        # (column, message) of the first JSON error, or None.
        self.error: tuple[int, str] | None = None
        # Whether an object of this row repeats a key (see duplicate_key_spans).
        self.has_duplicate_keys = False
        # Whether the value was read by the standard decoder (see decode_again).
        self.exact = False
        self._spans: dict[Path, Span] | None = None
        # The columns of the elements of each list asked about (see _element_span).
        self._elements: dict[Path, _Elements] | None = None
        if refused is None:
            self._decode()

    @classmethod
    def read_fine(cls: type[R], text: str, value: Any) -> R:
        """``cls(text)`` for a line already decoded to ``value`` with nothing to
        look at again (see read_many)."""
        return fine_row(cls, text, value)

    @classmethod
    def too_long(cls: type[R], text: str, limit: int) -> R:
        return cls(text, refused=f"line is {utf8_size(text):,} bytes, above the max-line-bytes limit of {limit:,}; it is not read")

    @classmethod
    def read_many(cls: type[R], texts: Sequence[str]) -> list[R]:
        """``[cls(text) for text in texts]``, twice as fast on a large dataset.

        One row's check for repeated keys (orjson writes its value back, and the
        colons in the line are counted against those of what the value kept, see
        _no_repeats_possible_in) costs as much as decoding it. Here it is done
        for a few hundred rows at once: when the counts agree over them all, they
        agree for each row (a line that writes no colon as ``\\u003a`` never has
        fewer colons than its compact form). Anything else a row needs (an error, a
        wide integer, an escape) sends its group down the usual path.
        """
        rows: list[R] = []
        for start in range(0, len(texts), _READ_TOGETHER):
            group = texts[start : start + _READ_TOGETHER]
            values = []
            for text in group:
                try:
                    values.append(_decode_utf8(text if text.isascii() else text.encode()))  # see _fast_decode
                except _REFUSED:
                    values.append(UNREAD)
            containers = [(text, value) for text, value in zip(group, values) if type(value) is dict or type(value) is list]
            plain = not containers or _no_repeats_possible([text for text, _ in containers], [value for _, value in containers])
            for text, value in zip(group, values):
                if value is UNREAD or (not plain and (type(value) is dict or type(value) is list)):
                    rows.append(cls(text))
                else:
                    rows.append(cls.read_fine(text, value))
        return rows

    def _decode(self) -> None:
        try:
            self.value = _fast_decode(self.text)
        except _REFUSED:
            # The standard decoder says where and why a line fails, and reads what
            # the fast one refuses but JSON allows.
            self._decode_exactly()
            return
        if type(self.value) is dict or type(self.value) is list:
            try:
                compact = orjson.dumps(self.value)
            except orjson.JSONEncodeError:
                # orjson writes neither nesting past 255 levels nor integers
                # beyond 64 bits: such a row is read again by the standard decoder.
                self._decode_exactly()
                return
            if not _no_repeats_possible_in(self.text, compact):
                self._find_duplicates()

    def _decode_exactly(self) -> None:
        self.value = None
        self.exact = True
        try:
            value = json.loads(self.text, parse_constant=_reject_constant)
            if isinstance(value, (dict, list)):
                self._find_duplicates()
        except _BadConstant as bad:
            column = _constant_column(self.text, str(bad))
            self.error = (column, f"{bad} is not valid JSON; use null or a number")
            return
        except json.JSONDecodeError as error:
            self.error = (error.pos, _json_message(error))
            return
        except ValueError:
            # An integer past Python's digit limit: converting it takes time
            # quadratic in its length, so the row is refused, not read.
            limit = max_digits()
            self.refused = f"a number of more than {limit:,} digits is not read; write it as a string"
            self.refused_span = _long_number_span(self.text, limit)
            return
        except RecursionError:
            # Nesting the decoder (or its second, duplicate-noting pass) cannot follow.
            self.has_duplicate_keys = False
            self.error = (0, "nesting is too deep")
            return
        self.value = value

    def decode_again(self) -> Any:
        """The row's value read again from its text, by the decoder that read it
        first: for holders of many rows that keep values only while they use them.
        Only for a row that was read (no error, not refused)."""
        if self.exact:
            return json.loads(self.text, parse_constant=_reject_constant)
        return _fast_decode(self.text)

    def _find_duplicates(self) -> None:
        # A second, slower decode only for rows that hold objects: it notes keys the
        # plain decoder would silently overwrite.
        def hook(pairs: list[tuple[str, Any]]) -> dict:
            result = dict(pairs)
            if len(result) != len(pairs):
                self.has_duplicate_keys = True
            return result

        json.loads(self.text, object_pairs_hook=hook)

    @property
    def is_object(self) -> bool:
        return isinstance(self.value, dict)

    def get(self, *path: Any) -> Any:
        """The value at ``path`` or None."""
        value = self.value
        for part in path:
            if isinstance(value, dict) and isinstance(part, str):
                value = value.get(part)
            elif isinstance(value, list) and isinstance(part, int) and 0 <= part < len(value):
                value = value[part]
            else:
                return None
        return value

    def span(self, *path: Any) -> Span:
        """Where the value at ``path`` is, or the nearest enclosing value that exists."""
        spans = self._spans
        if spans is None:
            spans = self._spans = {}
        span = spans.get(path)
        if span is None:
            if path and type(path[-1]) is int:
                span = self._element_span(path[:-1], path[-1])
            elif self.error is None and self.refused is None:
                if len(path) == 1:
                    span = _leading_string_span(self.text, path[0])
                # A key of the row's own (an exporting tool's on every row), or an
                # id written as a number, is found without a parse too.
                if span is None and path and self.value is not None:
                    span = _plain_path_span(self.text, self.value, path)
            if span is None:
                span = _span_at(self.text, path)
            spans[path] = span
        return span

    def _element_span(self, keys: Path, index: int) -> Span | None:
        """The span of element ``index`` of the list at ``keys`` (None when the
        list has no such element). Every element of the list is placed at once,
        the first time one is asked for: placed one by one, each would be found
        by passing all those before it again, and a case listing ten thousand
        values took minutes to check."""
        if index < 0:
            return None
        elements = self._elements
        if elements is None:
            elements = self._elements = {}
        placed = elements.get(keys)
        if placed is None:
            plain = self.error is None and self.refused is None and self.value is not None
            placed = elements[keys] = _Elements(_plain_element_columns(self.text, self.value, keys) if plain else [], False)
        if index >= len(placed.columns) and not placed.parsed:
            # Past the plainly written strings: all of them, from one parse of the line.
            placed = elements[keys] = _Elements(_element_columns_at(self.text, keys), True)
        if index >= len(placed.columns):
            return None
        start, end = placed.columns[index]
        return Span(start, end)

    def key_span(self, *path: Any) -> tuple[int, int]:
        """The span of the key of ``path`` (or of the nearest enclosing value that
        exists); the value's span for array elements, which have no key."""
        span = self.span(*path)
        if span.key_start is not None and span.key_end is not None:
            return span.key_start, span.key_end
        return span.value_start, span.value_end


def fine_row(cls: type[R], text: str, value: Any, exact: bool = False) -> R:
    """A row of ``cls`` for a line read to ``value`` with nothing to report (no
    error, no repeated key, not refused), read exactly or not: Row's fields set
    one by one, without the calls of ``__init__`` and ``super()``, which cost more
    than the fields over the hundred thousand lines of a large file. A subclass
    sets its own fields after."""
    row = cls.__new__(cls)
    row.text = text
    row.refused = None
    row.refused_span = None
    row.value = value
    row.error = None
    row.has_duplicate_keys = False
    row.exact = exact
    row._spans = None
    row._elements = None
    return row


def trailing_comma(text: str, column: int) -> int | None:
    """The column of a trailing comma (``[1, 2,]``: JSON allows none) where a
    decoder stopped at ``column``: on the ``]`` or ``}`` after it (Python before
    3.13), or on the comma itself (3.13 and later); None for any other error."""
    if not 0 <= column < len(text):
        return None
    if text[column] == ",":
        return column if text[column + 1 :].lstrip()[:1] in ("]", "}") else None
    if text[column] not in "]}":
        return None
    before = text[:column].rstrip()
    return len(before) - 1 if before.endswith(",") else None


# A word where a value or key belongs: a Python literal, or a key without quotes.
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
_PYTHON_LITERALS = {"True": "true", "False": "false", "None": "null"}


def _json_message(error: json.JSONDecodeError) -> str:
    """What is wrong where the decoder stopped, said as what to do: the decoder's
    own words name what it expected, not the slip a person made."""
    message, text, pos = error.msg, error.doc, error.pos
    if text[pos : pos + 1] in ("/", "#"):
        return "JSON has no comments: remove the comment"
    if message == "Extra data":
        return "extra data after the JSON value: one JSON object per line"
    if pos >= len(text.rstrip()):
        # Decoders stop at the end with "expecting ',' delimiter" and the like:
        # what a person has to know is that something is left open.
        return "the line ends before the JSON value is complete: close every '{', '[' and '\"' on this line"
    here = text[pos]
    before = text[:pos].rstrip()[-1:]
    word = _WORD.match(text, pos)
    comma = trailing_comma(text, pos)
    if comma is not None:
        return f"a trailing comma before '{text[comma + 1 :].lstrip()[0]}': remove the comma"
    if here == "'":
        return "single quotes: JSON strings and keys take double quotes (\"...\")"
    if message.startswith("Unterminated string"):
        return "this string has no closing '\"': add it where the string ends"
    if message.startswith("Invalid control character"):
        return "a raw control character (a tab or a line break) inside a string: write it as \\t or \\n"
    if message == "Invalid \\escape":
        return "a backslash starts an escape: write '\\\\' for a backslash itself, or '/' in a path"
    if message == "Invalid \\uXXXX escape":
        return "'\\u' needs four hexadecimal digits (\\u00e9)"
    if word is not None and word.group() in _PYTHON_LITERALS:
        return f"{word.group()} is not JSON: write {_PYTHON_LITERALS[word.group()]}"
    if message.startswith("Expecting property name"):
        if word is not None:
            return f"a key without quotes: write \"{word.group()}\""
        return "a key in double quotes (\"key\": value) is expected here"
    if message == "Expecting ',' delimiter":
        if before == '"' and word is not None:
            # `"abc, "input": 1`: the quote that opens "input" closed the string
            # before it, whose own closing quote is missing.
            return (
                "a string before this lacks its closing quote, so the quote just before this word ended it: "
                "add the missing '\"' where that string ends"
            )
        return "a ',' is missing before this value: add one between the two values"
    if message == "Expecting ':' delimiter":
        return "a ':' is missing after the key: write \"key\": value"
    if message == "Expecting value":
        return "a value is expected here: a string in double quotes, a number, true, false, null, an object or a list"
    return message[0].lower() + message[1:]


# tree-sitter reports byte columns; rows work in code points.
def _char_column(text: str, data: bytes, byte: int) -> int:
    if len(data) == len(text):
        return byte
    return len(data[:byte].decode("utf-8", "ignore"))


@lru_cache(maxsize=1)
def _parser() -> Any:
    import tree_sitter
    import tree_sitter_json

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_json.language()))


def _string_value(node: Any) -> str:
    # The key node is a JSON string; decode it exactly as json would (a key with
    # no escape is its text between the quotes: nearly every key, done fast).
    raw = node.text
    if b"\\" not in raw and len(raw) >= 2 and raw[:1] == raw[-1:] == b'"':
        return raw[1:-1].decode("utf-8", "replace")
    try:
        return json.loads(raw.decode("utf-8", "replace"))
    except ValueError:
        return node.text.decode("utf-8", "replace").strip('"')


def _parse(text: str) -> tuple[bytes, Any]:
    """A row's text as UTF-8, and its top value's node (None when it has none)."""
    data = text.encode("utf-8", "surrogatepass")
    root = _parser().parse(data).root_node
    return data, next(_values_in(root), None)


def _values_in(node: Any) -> Any:
    """The value nodes directly inside ``node`` (an array's elements, the document's value)."""
    return (child for child in node.named_children if child.type not in ("comment", "ERROR"))


def _pairs(node: Any) -> Any:
    """(key node, value node) of each complete pair of an object node, in line order."""
    for pair in node.named_children:
        if pair.type == "pair":
            key = pair.child_by_field_name("key")
            value = pair.child_by_field_name("value")
            if key is not None and value is not None:
                yield key, value


def _walk_values(text: str):
    """Yield ``(path, key node or None, value node)`` for every value in the row."""
    data, top = _parse(text)
    if top is None:
        return data, []
    out = []
    pending: list[tuple[Path, Any, Any]] = [((), None, top)]
    while pending:
        path, key, node = pending.pop()
        out.append((path, key, node))
        if node.type == "object":
            for key_node, value_node in _pairs(node):
                pending.append((path + (_string_value(key_node),), key_node, value_node))
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


def _leading_string_span(text: str, key: Any) -> Span | None:
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


def _plain_path_span(text: str, value: Any, keys: Path) -> Span | None:
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


class _Elements(NamedTuple):
    """The columns (start, end) of the elements of a list, from its first: all of
    them when ``parsed``, else up to the first that is not a plainly written string."""

    columns: list[tuple[int, int]]
    parsed: bool


def _plain_element_columns(text: str, value: Any, keys: Path) -> list[tuple[int, int]]:
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


def _span_at(text: str, path: Path) -> Span:
    """The span of the value at ``path`` in a row's text, or of the deepest value
    on the way that exists: the tree is walked down the path only. Where a key
    repeats, the last one counts, as it does for the decoded value."""
    data, node = _parse(text)
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


def _element_columns_at(text: str, path: Path) -> list[tuple[int, int]]:
    """The columns of the elements of the array at ``path`` in a row's text, from
    one parse (none when there is no array there), as _span_at gives each."""
    data, node = _parse(text)
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
        for key, value in _pairs(node):
            if _string_value(key) == part:
                found = (key, value)
        return found
    if node.type == "array" and isinstance(part, int) and not isinstance(part, bool) and part >= 0:
        element = next(itertools.islice(_values_in(node), part, None), None)
        return (None, element) if element is not None else None
    return None


def duplicate_key_spans(row: Row) -> list[tuple[Path, int, int, int, int]]:
    """For each repeated key: (path, start, end of the repeat, start, end of the first)."""
    data, values = _walk_values(row.text)
    first: dict[tuple[int, Any], tuple[int, int]] = {}
    result = []
    for path, key, node in sorted(values, key=lambda item: item[2].start_byte):
        if key is None:
            continue
        span = (_char_column(row.text, data, key.start_byte), _char_column(row.text, data, key.end_byte))
        # A key repeats only within one object (key -> pair -> object): under two
        # copies of a repeated key, the same inner keys share a path but are no repeat.
        owner = key.parent.parent if key.parent is not None else None
        identity = (owner.start_byte if owner is not None else -1, path[-1])
        if identity in first:
            result.append((path, *span, *first[identity]))
        else:
            first[identity] = span
    return result


def _no_repeats_possible_in(text: str, compact: bytes) -> bool:
    """Whether ``text``, read as the value orjson wrote as ``compact``, can hold
    no repeated key.

    Each key is followed by one colon, in the line and in the compact form, and
    a colon inside a string is one colon in both, unless the line writes it as
    the escape ``\\u003a``. (Other ``\\u`` escapes, an accent or a letter of
    another script written by a tool that writes ASCII, are no colon either
    way.) A repeated key's first pair is dropped from the value with its colon
    (and any inside it), so the line then has more colons than the compact
    form: equal counts mean no key repeats."""
    return "\\u003a" not in text and "\\u003A" not in text and compact.count(b":") == text.count(":")


def _no_repeats_possible(texts: list[str], values: list[Any]) -> bool:
    """Whether lines read as these objects and arrays can hold no repeated key:
    the check of Row._decode, for all at once."""
    try:
        compact = orjson.dumps(values)
    except orjson.JSONEncodeError:
        return False  # what orjson does not write (see Row._decode)
    return _no_repeats_possible_in("".join(texts), compact)


def max_digits() -> int:
    getter = getattr(sys, "get_int_max_str_digits", None)
    return getter() if getter is not None else 4300


# A JSON string (skipped) or a run of digits.
_STRING_OR_DIGITS = re.compile(r'"(?:[^"\\]|\\.)*"|-?\d+')


def _long_number_span(text: str, limit: int) -> tuple[int, int] | None:
    """The columns of the first number outside strings with more than ``limit`` digits."""
    for match in _STRING_OR_DIGITS.finditer(text):
        if match.group().lstrip("-").isdigit() and len(match.group().lstrip("-")) > limit:
            return match.start(), match.end()
    return None


def _constant_column(text: str, name: str) -> int:
    """The column of the first ``name`` (NaN, Infinity, -Infinity) outside strings."""
    in_string = escaped = False
    for column, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif text.startswith(name, column):
            return column
    return 0
