"""Links, definitions and symbols of suites and datasets.

* **Links**: a suite's ``dataset:`` value and each path in a case's
  ``expect.relevant`` that names a file inside the workspace (nothing outside
  it is ever pointed at, nor read); in a dataset, the first ``MAX_DATASET_LINKS``.
* **Definition**: the file a link under the position names; on a metric or
  engine name, the workspace manifest that declares it.
* **Symbols**: each suite with its keys (and the entries of ``thresholds``,
  ``metrics``, ``options`` and ``target``); each dataset case by its id (the
  first ``MAX_CASE_SYMBOLS``).

A dataset's links and symbols are found with a cheap scan of each line (a regular
expression and the JSON string scanner), falling back to the row's parse only on
lines where the scan is ambiguous, so a 100k-line dataset stays quick.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from json.decoder import scanstring
from typing import Any, Iterator

import orjson

from .cursor import ITEM, KEY, yaml_cursor
from ..reading.jsonrows import Row
from ..reading.text import LineIndex, Range
from ..reading.paths import normalize_relative
from ..reading.datasetlines import read_by_checks
from ..workspace.workspace import DATASET_FILE, SUITE_FILE, Workspace
from ..reading.yamltree import YNode, parse_yaml

# Dataset cases listed as symbols, and expected paths returned as links, at most:
# an outline or a link list of 100k entries helps nobody and costs the editor
# seconds. Go-to-definition has no limit: it looks at one line.
MAX_CASE_SYMBOLS = 5000
MAX_DATASET_LINKS = 5000

SUITE = "suite"
KEY_SYMBOL = "key"
CASE = "case"
ENTRY = "entry"


@dataclass(frozen=True)
class Link:
    range: Range
    target: str  # workspace-relative path of an existing file
    tooltip: str = ""


@dataclass(frozen=True)
class Symbol:
    name: str
    kind: str
    range: Range
    selection: Range
    detail: str = ""
    children: tuple[Symbol, ...] = field(default_factory=tuple)


def _workspace_file(workspace: Workspace, written: str, look: bool = False) -> str | None:
    """The normalized path when ``written`` names a file inside the workspace: one
    of its index or, with ``look``, any file under the root (a git-ignored one)."""
    relative = normalize_relative(written)
    if not relative:
        return None
    if relative in workspace.file_set():
        return relative
    path = workspace.absolute(relative)
    # os.path answers False for a name the file system refuses (too long), where pathlib raises.
    if look and workspace.contains(path) and os.path.isfile(path):
        return relative
    return None


# ---------------------------------------------------------------- links


def links(workspace: Workspace, kind: str | None, text: str, only_line: int | None = None) -> list[Link]:
    """The document links of ``text`` (of one line, when ``only_line`` is given)."""
    if kind == SUITE_FILE:
        return [link for link in _suite_links(workspace, text) if only_line is None or link.range.start.line == only_line]
    if kind == DATASET_FILE:
        return _dataset_links(workspace, text, only_line)
    return []


def _scalar_range(lines: LineIndex, text: str, node: YNode) -> Range:
    start, end = node.start, node.end
    if end - start >= 2 and text[start] in "\"'" and text[end - 1] == text[start]:
        start, end = start + 1, end - 1
    return lines.range(start, end)


def _suite_links(workspace: Workspace, text: str) -> list[Link]:
    root = parse_yaml(text).root
    suites = root.get("suites") if root is not None and root.is_map else None
    if suites is None:
        return []
    lines = LineIndex(text)
    found = []
    for node in suites.elements():
        dataset = node.get("dataset") if node.is_map else None
        written = dataset.text() if dataset is not None else None
        relative = _workspace_file(workspace, written, look=True) if written else None
        if dataset is not None and relative is not None:
            found.append(Link(_scalar_range(lines, text, dataset), relative, f"Open the dataset {relative}"))
    return found


_RELEVANT = re.compile(r'"relevant"\s*:\s*\[')


def _relevant_strings(line_text: str) -> Iterator[tuple[int, int, str]]:
    """``(start, end, value)`` of each string in the line's ``expect.relevant``,
    ``start``/``end`` inside the quotes."""
    matches = list(_RELEVANT.finditer(line_text))
    if not matches:
        return
    if len(matches) == 1:
        spans = _scan_array(line_text, matches[0].end())
        if spans is not None:
            yield from spans
            return
    # Ambiguous or irregular: ask the row's parse where each value is.
    row = Row(line_text)
    relevant = row.get("expect", "relevant")
    if not isinstance(relevant, list):
        return
    for index, value in enumerate(relevant):
        if isinstance(value, str):
            span = row.span("expect", "relevant", index)
            yield span.value_start + 1, span.value_end - 1, value


def _scan_array(line_text: str, index: int) -> list[tuple[int, int, str]] | None:
    """The strings of the JSON array whose elements start at ``index``; None when
    it holds anything but strings (the caller then parses the row)."""
    spans = []
    length = len(line_text)
    while True:
        while index < length and line_text[index] in " \t":
            index += 1
        if index < length and line_text[index] == "]":
            return spans
        if index >= length or line_text[index] != '"':
            return None
        try:
            value, end = scanstring(line_text, index + 1)
        except ValueError:
            return None
        spans.append((index + 1, end - 1, value))
        index = end
        while index < length and line_text[index] in " \t":
            index += 1
        if index < length and line_text[index] == ",":
            index += 1
            continue
        return spans if index < length and line_text[index] == "]" else None


def _dataset_links(workspace: Workspace, text: str, only_line: int | None) -> list[Link]:
    found = []
    numbered = [(only_line, _line(text, only_line))] if only_line is not None else enumerate(text.split("\n"))
    limit = workspace.settings.max_line_bytes
    for number, line_text in numbered:
        if '"relevant"' not in line_text or not read_by_checks(line_text, limit):
            continue
        line_text = line_text.rstrip("\r")
        for start, end, value in _relevant_strings(line_text):
            relative = _workspace_file(workspace, value)
            if relative is not None:
                found.append(Link(Range.of(number, start, number, end), relative, f"Open {relative}"))
        if len(found) >= MAX_DATASET_LINKS:
            break
    return found


def _line(text: str, line: int) -> str:
    return LineIndex(text).line_text(line)


# ---------------------------------------------------------------- definition


def definition(workspace: Workspace, kind: str | None, text: str, line: int, character: int) -> Link | None:
    """Where the name at ``line``/``character`` is defined: a linked file, or the
    workspace manifest of a metric or engine name."""
    for link in links(workspace, kind, text, only_line=line):
        if link.range.start.character <= character <= link.range.end.character:
            return link
    if kind != SUITE_FILE:
        return None
    cursor = yaml_cursor(text, line, character)
    if cursor is None or not cursor.text:
        return None
    inner = cursor.path[2:] if cursor.path[:2] == ("suites", ITEM) else None
    registry = workspace.manifests()
    manifest = None
    if cursor.role == KEY and not cursor.bare_item and inner in (("thresholds",), ("metrics",)):
        metric = registry.metric(cursor.text)
        manifest = registry.manifests.get(metric.manifest) if metric is not None else None
    elif (cursor.role == KEY and inner == ("options",)) or inner == ("engines", ITEM):
        manifest = registry.engine(cursor.text)
    if manifest is None or manifest.path is None:
        return None
    return Link(Range.of(line, cursor.start, line, cursor.end), manifest.path, f"Open the manifest of {cursor.text}")


# ---------------------------------------------------------------- symbols


def symbols(kind: str | None, text: str) -> tuple[list[Symbol], bool]:
    """The outline of ``text``, and whether it was cut at ``MAX_CASE_SYMBOLS``."""
    if kind == DATASET_FILE:
        return _case_symbols(text)
    if kind == SUITE_FILE:
        return _suite_symbols(text), False
    return _key_symbols(text), False


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _entries(lines: LineIndex, node: YNode, depth: int) -> tuple[Symbol, ...]:
    children = []
    for key, value in node.items():
        name = key.scalar()
        if name is None:
            continue
        value = value.resolve()
        key_range = lines.range(key.start, key.end)
        whole = lines.range(key.start, max(key.end, _trimmed(lines.text, value.end)))
        detail = _short(value.scalar()) if value.is_scalar and value.scalar() is not None else ""
        nested = _entries(lines, value, depth - 1) if depth > 0 and value.is_map else ()
        children.append(Symbol(str(name), KEY_SYMBOL if depth >= 1 else ENTRY, whole, key_range, detail, nested))
    return tuple(children)


def _trimmed(text: str, end: int) -> int:
    """``end`` moved back over the blank space a block collection's span ends with."""
    while end > 0 and text[end - 1] in " \t\r\n":
        end -= 1
    return end


def _suite_symbols(text: str) -> list[Symbol]:
    root = parse_yaml(text).root
    suites = root.get("suites") if root is not None and root.is_map else None
    if suites is None:
        return []
    lines = LineIndex(text)
    found = []
    for number, node in enumerate(suites.elements(), start=1):
        node = node.resolve()
        if not node.is_map:
            continue
        id_node = node.get("id")
        name = str(id_node.scalar()) if id_node is not None and id_node.scalar() is not None else f"suite {number}"
        selection = lines.range(id_node.start, id_node.end) if id_node is not None else lines.range(node.start, node.start)
        dataset = node.get("dataset")
        detail = dataset.text() or "" if dataset is not None else ""
        whole = lines.range(node.start, max(node.start, _trimmed(text, node.end)))
        found.append(Symbol(name, SUITE, whole, selection, detail, _entries(lines, node, 1)))
    return found


def _key_symbols(text: str) -> list[Symbol]:
    root = parse_yaml(text).root
    if root is None or not root.is_map:
        return []
    return list(_entries(LineIndex(text), root, 1))


_ID = re.compile(r'"(id|input_id)"\s*:\s*"')


def _case_symbols(text: str) -> tuple[list[Symbol], bool]:
    found: list[Symbol] = []
    for number, line_text in enumerate(text.split("\n")):
        line_text = line_text.rstrip("\r")
        if not line_text.strip():
            continue
        if len(found) >= MAX_CASE_SYMBOLS:
            return found, True
        whole = Range.of(number, 0, number, len(line_text))
        name, selection = None, whole
        matches = list(_ID.finditer(line_text))
        if len(matches) == 1:
            try:
                value, end = scanstring(line_text, matches[0].end())
                name, selection = value, Range.of(number, matches[0].end() - 1, number, end)
            except ValueError:
                pass
        if name is None:
            name = _case_id(line_text)
        found.append(Symbol(name or f"line {number + 1}", CASE, whole, selection, _query(line_text)))
    return found, False


def _case_id(line_text: str) -> str | None:
    try:
        value = orjson.loads(line_text)
    except orjson.JSONDecodeError:
        return None
    if isinstance(value, dict):
        for key in ("id", "input_id"):
            if isinstance(value.get(key), (str, int)) and not isinstance(value.get(key), bool):
                return str(value[key])
    return None


_QUERY = re.compile(r'"query"\s*:\s*"')


def _query(line_text: str) -> str:
    match = _QUERY.search(line_text)
    if match is None:
        return ""
    try:
        value, _ = scanstring(line_text, match.end())
    except ValueError:
        return ""
    return _short(value)
