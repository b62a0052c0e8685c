"""What each rule scope is given to look at.

Contexts hold offsets and nodes; they turn them into ranges (code points) with the
document's line index, built once per version.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .jsonrows import Row
from .schemacheck import SchemaIssue
from .text import Position, Range
from .workspace import DatasetUse, ParsedDataset, ParsedYaml, SuiteInfo, Workspace
from .yamltree import YNode


@dataclass
class YamlContext:
    """A YAML file: a suite file, a manifest or the targets config."""

    workspace: Workspace
    path: str
    parsed: ParsedYaml

    @property
    def root(self) -> YNode | None:
        return self.parsed.document.root

    def range(self, start: int, end: int) -> Range:
        return self.parsed.lines.range(start, end)

    def node_range(self, node: YNode) -> Range:
        return self.range(node.start, node.end)

    def issue_range(self, issue: SchemaIssue, root: YNode | None = None) -> Range:
        """Where a schema issue lands: the offending key or value node."""
        start, end = locate(root or self.root, issue.path, issue.anchor)
        return self.range(start, end)

    def line_end(self, offset: int) -> int:
        """The offset of the end of the line holding ``offset``."""
        position = self.parsed.lines.position(offset)
        return self.parsed.lines.line_start(position.line) + len(self.parsed.lines.line_text(position.line))


@dataclass
class SuiteContext(YamlContext):
    """One suite of a suite file (``suite.node`` is its mapping)."""

    suite: SuiteInfo | None = None

    @property
    def node(self) -> YNode:
        assert self.suite is not None
        return self.suite.node


@dataclass
class RowContext:
    """One dataset line. Ranges are on line 0: the dataset analysis moves them to
    the row's line, so a row's findings can be cached by its text alone."""

    workspace: Workspace
    path: str
    row: Row
    use: DatasetUse
    shape: str | None

    def columns(self, start: int, end: int) -> Range:
        return Range(Position(0, start), Position(0, end))

    def value_range(self, *path: Any) -> Range:
        span = self.row.span(*path)
        return self.columns(span.value_start, span.value_end)

    def key_range(self, *path: Any) -> Range:
        return self.columns(*self.row.key_span(*path))

    def line_range(self) -> Range:
        return self.columns(0, len(self.row.text))


@dataclass
class DatasetContext:
    """All lines of one dataset, for facts that cross lines."""

    workspace: Workspace
    path: str
    parsed: ParsedDataset
    use: DatasetUse
    shape: str | None


def locate(root: YNode | None, path: tuple[Any, ...], anchor: str = "value") -> tuple[int, int]:
    """Offsets of the node at ``path`` (its key when ``anchor`` is "key").

    A path that goes further than the tree ends at the deepest node that exists.
    The key of a mapping's own position is the key that holds the mapping; for a
    list element or the document, the first key inside it.
    """
    if root is None:
        return 0, 0
    node = root.resolve()
    key_node: YNode | None = None
    for part in path:
        if node.kind == "map":
            pair = node.entry(part) if isinstance(part, str) else None
            if pair is None:
                break
            key_node, node = pair[0], pair[1].resolve()
        elif node.kind == "seq" and isinstance(part, int) and 0 <= part < len(node.value):
            key_node, node = None, node.value[part].resolve()
        else:
            break
    if anchor == "key":
        if key_node is not None:
            return key_node.start, key_node.end
        first = node.items()[0][0] if node.items() else None
        if first is not None:
            return first.start, first.end
    return node.start, max(node.end, node.start)
