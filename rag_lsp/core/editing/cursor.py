"""Where a position is in a suite (YAML) or a dataset line (JSON), while typing.

Completion is asked for on text that is rarely well-formed (``rag.re`` under
``thresholds:`` has no colon yet), so the place of the cursor is read from the
lines themselves, the way an editor's indentation rules see them, instead of from
a parse that would fail: the cursor line says whether it is on a key or a value
(and inside which ``[...]``/``{...}`` on that line), and the lines above, by
decreasing indentation, say which mappings and sequences hold it.

All columns are code points on the cursor's line.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

# A sequence element in a cursor path (its index is not needed, so not counted).
ITEM = -1

KEY = "key"
VALUE = "value"

_DASHES = re.compile(r"( *)((?:-(?: +|$))*)")
# A block mapping key: quoted, or plain up to the first ": " (or ":" at the end).
_KEY = re.compile(r"""(?:"((?:[^"\\]|\\.)*)"|'((?:[^']|'')*)'|([^\s#'"\[\]{},&*!|>%@`][^#]*?))\s*:(?=\s|$)""")


@dataclass(frozen=True)
class YamlCursor:
    """The node at a position of a YAML text.

    ``path`` leads to the node: for a key, the mapping holding it; for a value, the
    key it belongs to (``ITEM`` for sequence elements). ``start``/``end`` are the
    columns of the token under the cursor (inside its quotes, if quoted).
    """

    line: int
    path: tuple[Any, ...]
    role: str
    start: int
    end: int
    text: str
    quote: str = ""
    # The cursor is in a "- " item with nothing that says key or value yet.
    bare_item: bool = False
    # KEY: a ":" already follows the key.
    has_colon: bool = False
    # Inside [...] or {...} on this line.
    flow: bool = False
    # KEY: the other keys of the mapping (to leave out of completions).
    siblings: frozenset[str] = field(default_factory=frozenset)


@dataclass(frozen=True)
class _Line:
    indent: int  # column of the first character that is not a space (or "- ")
    dashes: tuple[int, ...]  # columns of the "- " sequence indicators
    content: int  # column after the dashes
    key: str | None
    key_start: int
    key_end: int
    colon: int  # column of the key's ":" (-1 without key)
    value_empty: bool  # nothing but a comment after the colon


def _strip_comment(text: str) -> str:
    """``text`` without a trailing ``# comment`` (a ``#`` after a space, outside quotes)."""
    quote = ""
    for index, char in enumerate(text):
        if quote:
            if char == quote:
                quote = ""
        elif char in ("'", '"'):
            quote = char
        elif char == "#" and (index == 0 or text[index - 1] in " \t"):
            return text[:index]
    return text


def _parse_line(text: str) -> _Line | None:
    """A line's layout; None for blank lines, comments and document markers."""
    stripped = text.strip()
    if not stripped or stripped.startswith("#") or stripped in ("---", "..."):
        return None
    match = _DASHES.match(text)
    assert match is not None
    indent = len(match.group(1))
    dashes: list[int] = []
    for part in re.finditer(r"-(?: +|$)", match.group(2)):
        dashes.append(indent + part.start())
    content = match.end()
    key_match = _KEY.match(text, content)
    if key_match is None:
        return _Line(indent, tuple(dashes), content, None, content, content, -1, False)
    if key_match.group(1) is not None:
        key = _unescape_double(key_match.group(1))
    elif key_match.group(2) is not None:
        key = key_match.group(2).replace("''", "'")
    else:
        key = key_match.group(3).rstrip()
    colon = key_match.end() - 1
    rest = _strip_comment(text[colon + 1 :]).strip()
    key_end = content + len(key_match.group(0)[:-1].rstrip())
    return _Line(indent, tuple(dashes), content, key, content, key_end, colon, not rest)


def _unescape_double(text: str) -> str:
    try:
        return json.loads(f'"{text}"')
    except ValueError:
        return text


def _ancestors(lines: list[str], line: int, target: int, in_sequence: bool) -> tuple[tuple[Any, ...], set[str]]:
    """The path of the mapping or sequence whose entries start at column ``target``
    on ``line``, read from the lines above; and the keys of that mapping above."""
    path: list[Any] = []
    siblings: set[str] = set()
    seq_column = target if in_sequence else None
    collecting = not in_sequence
    for number in range(line - 1, -1, -1):
        info = _parse_line(lines[number])
        if info is None:
            continue
        if info.indent > target:
            continue
        if info.indent == target:
            if seq_column == target and not info.dashes and info.key is not None and info.value_empty:
                # "key:" with its "- " items at the same column.
                path.append(info.key)
                seq_column = None
                collecting = False
            elif collecting and not info.dashes and info.key is not None:
                siblings.add(info.key)
            elif info.dashes and seq_column != target:
                collecting = False
            continue
        # A parent line: every indicator left of the target holds the cursor's node.
        if collecting and info.key is not None and info.key_start == target and info.dashes:
            siblings.add(info.key)  # "- first: x" then our key under it
        collecting = False
        parts: list[tuple[int, Any]] = [(column, ITEM) for column in info.dashes if column < target]
        if info.key is not None and info.key_start < target:
            parts.append((info.key_start, info.key))
        if not parts:
            target = info.indent
            continue
        parts.sort()
        path.extend(part for _, part in reversed(parts))
        target = parts[0][0]
        seq_column = target if parts[0][1] == ITEM else None
        if target == 0 and seq_column is None:
            break
    path.reverse()
    return tuple(path), siblings


def _siblings_below(lines: list[str], line: int, target: int) -> set[str]:
    found: set[str] = set()
    for number in range(line + 1, len(lines)):
        info = _parse_line(lines[number])
        if info is None:
            continue
        if info.indent > target:
            continue
        if info.indent < target or info.dashes:
            break
        if info.key is not None:
            found.add(info.key)
    return found


def _token_end(text: str, start: int, stops: str) -> int:
    end = start
    while end < len(text) and text[end] not in stops:
        end += 1
    while end > start and text[end - 1] in " \t":
        end -= 1
    return end


def yaml_cursor(text: str, line: int, character: int) -> YamlCursor | None:
    """The node at ``line``/``character`` (code points) of the YAML ``text``."""
    lines = text.split("\n")
    if line < 0 or line >= len(lines):
        return None
    current = lines[line].rstrip("\r")
    character = max(0, min(character, len(current)))
    before = current[:character]
    if before.lstrip().startswith("#"):
        return None
    match = _DASHES.match(current)
    assert match is not None
    indent = len(match.group(1))
    if character <= indent or not before.strip():
        # Blank (so far): a key of the mapping at this column.
        path, siblings = _ancestors(lines, line, character, False)
        siblings |= _siblings_below(lines, line, character)
        return YamlCursor(line, path, KEY, character, character, "", siblings=frozenset(siblings))
    dashes = [indent + part.start() for part in re.finditer(r"-(?: +|$)", match.group(2))]
    content = match.end()
    if dashes and character < content:
        return None  # on the "- " itself
    info = _parse_line(current)
    target = dashes[0] if dashes else content
    base, siblings = _ancestors(lines, line, target, bool(dashes))
    base = base + (ITEM,) * len(dashes)
    if info is not None and info.key is not None and info.colon < character:
        value_start = info.colon + 1
        return _value_cursor(line, current, base + (info.key,), value_start, character)
    # A key (or a bare sequence element) being written.
    start = content
    quote = current[start] if start < len(current) and current[start] in "\"'" else ""
    if quote:
        start += 1
    if info is not None and info.key is not None:
        end = start + len(info.key) if not quote else info.key_end - 1
        has_colon = True
    else:
        end = _token_end(current, character, "#:" if not quote else quote)
        has_colon = False
    if not dashes:
        siblings |= _siblings_below(lines, line, content)
    else:
        siblings = _siblings_below(lines, line, content)
    end = max(end, character)
    token = current[start:end]
    return YamlCursor(
        line,
        base,
        KEY,
        start,
        end,
        token,
        quote,
        bare_item=bool(dashes) and not has_colon,
        has_colon=has_colon,
        siblings=frozenset(siblings - {token}),
    )


def _value_cursor(line: int, current: str, path: tuple[Any, ...], value_start: int, character: int) -> YamlCursor:
    """The cursor in a key's value: plain, quoted, or inside ``[...]``/``{...}``."""
    stack: list[dict[str, Any]] = []
    quote = ""
    token_start = value_start
    index = value_start
    while index < character:
        char = current[index]
        if quote:
            if char == quote:
                quote = ""
        elif char in "\"'" and current[token_start:index].strip() == "":
            quote = char
        elif char in "[{":
            part = ITEM if stack and stack[-1]["kind"] == "seq" else (stack[-1]["key"] if stack else None)
            stack.append({"kind": "seq" if char == "[" else "map", "key": None, "part": part, "open": index})
            token_start = index + 1
        elif char in "]}":
            if stack:
                stack.pop()
            token_start = index + 1
        elif char == "," and stack:
            stack[-1]["key"] = None
            token_start = index + 1
        elif char == ":" and stack and stack[-1]["kind"] == "map" and stack[-1]["key"] is None:
            following = current[index + 1 : index + 2]
            if following in ("", " ", ",", "}", "]"):
                stack[-1]["key"] = current[token_start:index].strip().strip("\"'")
                token_start = index + 1
        elif char == "#" and not stack and current[index - 1 : index] in (" ", "\t"):
            return YamlCursor(line, path, VALUE, character, character, "")  # in a comment
        index += 1
    # Skip the spaces before the token, then an opening quote.
    start = token_start
    while start < character and current[start] in " \t":
        start += 1
    token_quote = current[start] if start < len(current) and current[start] in "\"'" else ""
    if token_quote:
        start += 1
    if token_quote:
        end = current.find(token_quote, max(start, character))
        end = end if end != -1 else len(current)
    else:
        end = _token_end(current, character, ",]}#" if stack else "#")
        end = max(end, character)
        if not stack:
            end = max(character, len(_strip_comment(current).rstrip()))
    if not stack:
        return YamlCursor(line, path, VALUE, start, end, current[start:end], token_quote)
    full = list(path)
    for frame in stack[1:]:
        full.append(frame["part"])
    top = stack[-1]
    if top["kind"] == "seq":
        return YamlCursor(line, tuple(full) + (ITEM,), VALUE, start, end, current[start:end], token_quote, flow=True)
    if top["key"] is not None:
        return YamlCursor(line, tuple(full) + (top["key"],), VALUE, start, end, current[start:end], token_quote, flow=True)
    key_end = _token_end(current, character, ":,}#" if not token_quote else token_quote)
    key_end = max(key_end, character)
    rest = current[key_end:].lstrip(token_quote + " ")
    # The mapping's other keys, before the cursor and after it: completion leaves
    # them out, as it does in block style.
    siblings = _flow_mapping_keys(current, top["open"]) - {current[start:key_end]}
    return YamlCursor(
        line, tuple(full), KEY, start, key_end, current[start:key_end], token_quote,
        has_colon=rest.startswith(":"), flow=True, siblings=frozenset(siblings),
    )


def _flow_mapping_keys(current: str, opening: int) -> set[str]:
    """The keys of the flow mapping whose ``{`` is at ``opening``, as far as its line goes."""
    keys: set[str] = set()
    depth = 0
    quote = ""
    index = opening + 1
    token_start: int | None = index  # where the key being read began (None: in a value)
    while index < len(current):
        char = current[index]
        if quote:
            if char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char in "[{":
            depth += 1
        elif char in "]}":
            if depth == 0:
                break
            depth -= 1
        elif depth == 0 and char == ",":
            token_start = index + 1
        elif depth == 0 and char == ":" and token_start is not None and current[index + 1 : index + 2] in ("", " ", ",", "}", "]"):
            key = current[token_start:index].strip().strip("\"'")
            if key:
                keys.add(key)
            token_start = None
        elif char == "#" and current[index - 1 : index] in (" ", "\t"):
            break
        index += 1
    return keys


# ---------------------------------------------------------------- JSON lines


@dataclass(frozen=True)
class JsonCursor:
    """The value at a column of one JSON line.

    ``path`` leads to the node: for a key, the object holding it; for a value, its
    key or index. Inside a string, ``start`` is after the opening quote and ``end``
    at the closing one (``closed``) or the cursor.
    """

    path: tuple[Any, ...]
    role: str
    start: int
    end: int
    text: str
    in_string: bool
    closed: bool = False


_STRING_END = re.compile(r'(?:[^"\\]|\\.)*"')


def json_cursor(line_text: str, character: int) -> JsonCursor | None:
    """Where ``character`` is in ``line_text``, however incomplete the line is."""
    character = max(0, min(character, len(line_text)))
    # Frames: [kind, path part of the container, state/key, index]
    stack: list[dict[str, Any]] = []
    pending_key: str | None = None
    token_start = 0
    index = 0
    while index < character:
        char = line_text[index]
        if char == '"':
            end = _STRING_END.match(line_text, index + 1)
            if end is None or end.end() > character:
                return _in_string(stack, line_text, index + 1, character)
            if stack and stack[-1]["kind"] == "obj" and stack[-1]["state"] == KEY:
                try:
                    pending_key = json.loads(line_text[index : end.end()])
                except ValueError:
                    pending_key = line_text[index + 1 : end.end() - 1]
            index = end.end()
            token_start = index
            continue
        if char in "{[":
            part = _part(stack)
            stack.append({"kind": "obj" if char == "{" else "arr", "part": part, "state": KEY, "key": None, "index": 0})
            token_start = index + 1
        elif char in "}]":
            if stack:
                stack.pop()
            token_start = index + 1
        elif char == ":" and stack and stack[-1]["kind"] == "obj":
            stack[-1]["state"] = VALUE
            stack[-1]["key"] = pending_key
            token_start = index + 1
        elif char == "," and stack:
            if stack[-1]["kind"] == "obj":
                stack[-1]["state"] = KEY
                stack[-1]["key"] = None
            else:
                stack[-1]["index"] += 1
            token_start = index + 1
        index += 1
    if not stack:
        return None
    start = token_start
    while start < character and line_text[start] in " \t":
        start += 1
    end = character
    while end < len(line_text) and (line_text[end].isalnum() or line_text[end] in "_-."):
        end += 1
    top = stack[-1]
    path = _path(stack)
    if top["kind"] == "obj" and top["state"] == KEY:
        return JsonCursor(path, KEY, start, end, line_text[start:end], False)
    return JsonCursor(path + (_part_of(top),), VALUE, start, end, line_text[start:end], False)


def _part_of(frame: dict[str, Any]) -> Any:
    return frame["index"] if frame["kind"] == "arr" else frame["key"]


def _part(stack: list[dict[str, Any]]) -> Any:
    return _part_of(stack[-1]) if stack else None


def _path(stack: list[dict[str, Any]]) -> tuple[Any, ...]:
    return tuple(frame["part"] for frame in stack[1:])


def _in_string(stack: list[dict[str, Any]], line_text: str, start: int, character: int) -> JsonCursor | None:
    if not stack:
        return None
    closing = _STRING_END.match(line_text, character)
    closed = False
    # Unterminated: the token runs on to the next character JSON gives meaning to.
    end = character
    while end < len(line_text) and line_text[end] not in ',[]{}:" \t':
        end += 1
    if closing is not None:
        # The next quote closes this string only when nothing JSON-like sits between:
        # otherwise it opens the next string of a line whose string is unterminated.
        between = line_text[character : closing.end() - 1]
        if not any(char in between for char in ',[]{}:"'):
            closed, end = True, closing.end() - 1
    top = stack[-1]
    path = _path(stack)
    text = line_text[start:end]
    if top["kind"] == "obj" and top["state"] == KEY:
        return JsonCursor(path, KEY, start, end, text, True, closed)
    return JsonCursor(path + (_part_of(top),), VALUE, start, end, text, True, closed)


def json_object_keys(line: str, path: tuple[Any, ...]) -> set[str]:
    """The keys of the object at ``path`` on a JSON line, read as far as the line
    goes (it is often incomplete while a key is typed): completion leaves them out."""
    keys: set[str] = set()
    stack: list[list[Any]] = []  # per open container: its path, whether an object, its key or index
    last: str | None = None  # the string just read, a key when a colon follows
    index = 0
    while index < len(line):
        char = line[index]
        if char == '"':
            end = index + 1
            while end < len(line) and line[end] != '"':
                end += 2 if line[end] == "\\" else 1
            try:
                last = json.loads(line[index : end + 1])
            except ValueError:
                last = line[index + 1 : end]
            index = end + 1
            continue
        if char == ":" and stack and stack[-1][1] and last is not None:
            stack[-1][2] = last
            if stack[-1][0] == path:
                keys.add(last)
        elif char in "{[":
            parent = () if not stack else (*stack[-1][0], stack[-1][2])
            stack.append([parent, char == "{", None if char == "{" else 0])
        elif char in "}]":
            if stack:
                stack.pop()
        elif char == "," and stack:
            stack[-1][2] = None if stack[-1][1] else stack[-1][2] + 1
        if char not in " \t":
            last = None
        index += 1
    return keys

