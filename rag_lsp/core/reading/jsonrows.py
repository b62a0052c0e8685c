"""JSON Lines rows with positions.

Each line is decoded by msgspec, the fastest strict decoder (its values are the
standard library's, integers of any width included); a line it refuses is
decoded again by the standard library's, which says where and why it fails.
Spans of keys and values inside a line come from rag_lsp.core.reading.jsonspans
(tree-sitter's JSON grammar where a line is not plain), asked only when a
finding needs to point inside the line, so a 100k-line dataset
costs one decode per line and nothing more. :meth:`Row.read_many` reads many lines
at once, checking them for repeated keys a few hundred at a time.
"""

from __future__ import annotations

import json
import re
import sys
import threading
from typing import Any, Sequence, TypeVar

import msgspec
import orjson

from .sources import utf8_size
from .jsonspans import Elements, Path, Span, element_columns_at, leading_string_span, plain_element_columns, plain_path_span, span_at


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


def value_at(value: Any, path: Sequence[Any]) -> Any:
    """The part of a decoded JSON ``value`` at ``path`` (keys of objects,
    positions in lists), or None."""
    for part in path:
        if isinstance(value, dict) and isinstance(part, str):
            value = value.get(part)
        elif isinstance(value, list) and isinstance(part, int) and 0 <= part < len(value):
            value = value[part]
        else:
            return None
    return value


class Row:
    """One non-blank dataset line, decoded."""

    __slots__ = ("text", "value", "error", "repeated_keys", "refused", "refused_span", "exact", "_spans", "_elements")

    def __init__(self, text: str, refused: str | None = None) -> None:
        self.text = text
        # Set when the line was not read (too long, or a number too long to
        # convert): the RAG005 message, and the columns it is about (None: the line).
        self.refused = refused
        self.refused_span: tuple[int, int] | None = None
        self.value: Any = None
        # (column, message) of the first JSON error, or None.
        self.error: tuple[int, str] | None = None
        # The keys an object of this row repeats, once for each repeat (see
        # duplicate_key_spans): () for nearly every row.
        self.repeated_keys: tuple[str, ...] = ()
        # Whether the value was read by the standard decoder (see decode_again).
        self.exact = False
        self._spans: dict[Path, Span] | None = None
        # The columns of the elements of each list asked about (see _element_span).
        self._elements: dict[Path, Elements] | None = None
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
                if value is UNREAD:
                    rows.append(cls(text))
                elif plain or not (type(value) is dict or type(value) is list):
                    rows.append(cls.read_fine(text, value))
                else:
                    rows.append(cls._read_alone(text, value))
        return rows

    @classmethod
    def _read_alone(cls: type[R], text: str, value: Any) -> R:
        """The row of a line read to ``value`` in a group that may repeat a key
        (see read_many), checked for repeated keys on its own, as ``cls(text)``
        would, without decoding it again where it repeats none: a dataset written
        by another tool may repeat a key on every row."""
        repeated = _keys_repeated_in(text, value)
        if repeated is None:
            return cls(text)  # see _decode
        row = cls.read_fine(text, value)
        row.repeated_keys = repeated
        return row

    def _decode(self) -> None:
        try:
            self.value = _fast_decode(self.text)
        except _REFUSED:
            # The standard decoder says where and why a line fails, and reads what
            # the fast one refuses but JSON allows.
            self._decode_exactly()
            return
        if type(self.value) is dict or type(self.value) is list:
            repeated = _keys_repeated_in(self.text, self.value)
            if repeated is None:
                self._decode_exactly()
                return
            self.repeated_keys = repeated

    def _decode_exactly(self) -> None:
        self.value = None
        self.exact = True
        try:
            value = json.loads(self.text, parse_constant=_reject_constant)
            if isinstance(value, (dict, list)):
                self.repeated_keys = repeated_keys(self.text)
        except _BadConstant as bad:
            column = _constant_column(self.text, str(bad))
            self.error = (column, f"{bad} is not valid JSON; use null or a number")
            return
        except json.JSONDecodeError as error:
            self.error = (error.pos, json_message(error))
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
            self.repeated_keys = ()
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

    @property
    def is_object(self) -> bool:
        return isinstance(self.value, dict)

    def get(self, *path: Any) -> Any:
        """The value at ``path`` or None."""
        return value_at(self.value, path)

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
                    span = leading_string_span(self.text, path[0])
                # A key of the row's own (an exporting tool's on every row), or an
                # id written as a number, is found without a parse too.
                if span is None and path and self.value is not None:
                    span = plain_path_span(self.text, self.value, path)
            if span is None:
                span = span_at(self.text, path)
            spans[path] = span
        return span

    def _element_span(self, keys: Path, index: int) -> Span | None:
        """The span of element ``index`` of the list at ``keys`` (None when the
        list has no such element)."""
        columns = self.element_columns(keys, index)
        return Span(*columns) if columns is not None else None

    def element_columns(self, keys: Path, index: int) -> tuple[int, int] | None:
        """Where element ``index`` of the list at ``keys`` starts and ends (None
        when the list has no such element). Every element of the list is placed
        at once, the first time one is asked for: placed one by one, each would
        be found by passing all those before it again, and a case listing ten
        thousand values took minutes to check."""
        if index < 0:
            return None
        elements = self._elements
        if elements is None:
            elements = self._elements = {}
        placed = elements.get(keys)
        if placed is None:
            plain = self.error is None and self.refused is None and self.value is not None
            placed = elements[keys] = Elements(plain_element_columns(self.text, self.value, keys) if plain else [], False)
        if index >= len(placed.columns) and not placed.parsed:
            # Past the plainly written strings: all of them, from one parse of the line.
            placed = elements[keys] = Elements(element_columns_at(self.text, keys), True)
        if index >= len(placed.columns):
            return None
        return placed.columns[index]

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
    row.repeated_keys = ()
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


# A byte order mark is not content where a file starts, and is read so; on a
# later line it is what starts a file joined after another one.
BYTE_ORDER_MARK = "\ufeff"
BYTE_ORDER_MARK_STARTS = (
    "a byte order mark (U+FEFF) starts this line, as one starts a file saved with it: most likely files were joined "
    "one after another; remove the mark"
)


def json_message(error: json.JSONDecodeError) -> str:
    """What is wrong where the decoder stopped, said as what to do: the decoder's
    own words name what it expected, not the slip a person made."""
    message, text, pos = error.msg, error.doc, error.pos
    if text[pos : pos + 1] == BYTE_ORDER_MARK and not text[:pos].strip():
        return BYTE_ORDER_MARK_STARTS
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


class _NotedRepeats(threading.local):
    """The keys repeated in the line being decoded by _REPEATS_NOTED, in this thread."""

    keys: list[str]


_noted = _NotedRepeats()


def _note_repeats(pairs: list[tuple[str, Any]]) -> dict:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                _noted.keys.append(key)
            seen.add(key)
    return result


# A decoder that notes each key an object repeats, which the plain ones overwrite
# silently: made once, as making one is as costly as the decoding of a row.
_REPEATS_NOTED = json.JSONDecoder(object_pairs_hook=_note_repeats)


def repeated_keys(text: str) -> tuple[str, ...]:
    """The keys the objects of a line of JSON repeat, once for each repeat: a
    second, slower decode, only for lines that may repeat one (see
    _no_repeats_possible_in)."""
    keys = _noted.keys = []
    _REPEATS_NOTED.decode(text)
    return tuple(keys)


def _keys_repeated_in(text: str, value: dict | list) -> tuple[str, ...] | None:
    """The keys a line read to ``value`` (an object or a list) repeats (see
    repeated_keys), decoded again only where the line may repeat one; None for a
    value orjson does not write (nesting past 255 levels, an integer beyond 64
    bits), which the standard decoder then reads again."""
    try:
        compact = orjson.dumps(value)
    except orjson.JSONEncodeError:
        return None
    return () if _no_repeats_possible_in(text, compact) else repeated_keys(text)


# tree-sitter reports byte columns; rows work in code points.
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
    # A line without a backslash writes no escape: told by one search for a
    # character (in C, a memchr), where the escape's six take one pass each.
    escapes = "\\" in text
    return (not escapes or ("\\u003a" not in text and "\\u003A" not in text)) and compact.count(b":") == text.count(":")


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
