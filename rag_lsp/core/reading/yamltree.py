"""YAML with positions.

libyaml (through PyYAML's C parser) turns the text into events that carry their
start and end offsets; :func:`parse_yaml` composes them into a small tree of
:class:`YNode` that keeps those offsets. Composing ourselves, from the event
stream, is what lets us refuse unsafe input before it costs anything: nesting is
counted while composing, aliases are kept as references (never expanded), and the
conversion to Python values runs on a node budget, so an alias bomb is a finding
rather than an exhausted machine. Duplicate keys, which PyYAML silently overwrites,
are recorded with both spans.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Any, Iterator

import yaml

try:  # The C parser is much faster; PyYAML without libyaml still works.
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

MAP = "map"
SEQ = "seq"
SCALAR = "scalar"
ALIAS = "alias"


@dataclass(frozen=True, slots=True)
class YamlLimits:
    max_depth: int = 64
    # Nodes visited when turning the tree into values, aliases counted each time
    # they are used: this is what bounds an alias bomb.
    max_nodes: int = 200_000


class YNode:
    """A YAML node with its code-point span in the document."""

    __slots__ = ("kind", "start", "end", "value", "tag", "target")

    def __init__(self, kind: str, start: int, end: int, value: Any = None, tag: str | None = None) -> None:
        self.kind = kind
        self.start = start
        self.end = end
        # MAP: list[(key YNode, value YNode)]; SEQ: list[YNode]; SCALAR: the Python
        # value (int, float, bool, None or str).
        self.value = value
        self.tag = tag
        self.target: YNode | None = None  # ALIAS: the anchored node it names

    def __repr__(self) -> str:
        return f"YNode({self.kind}, {self.start}-{self.end}, {self.value if self.kind == SCALAR else '…'!r})"

    def resolve(self) -> YNode:
        """The node itself, or the node an alias refers to."""
        node = self
        while node.kind == ALIAS and node.target is not None:
            node = node.target
        return node

    @property
    def is_map(self) -> bool:
        return self.resolve().kind == MAP

    @property
    def is_seq(self) -> bool:
        return self.resolve().kind == SEQ

    @property
    def is_scalar(self) -> bool:
        return self.resolve().kind == SCALAR

    def items(self) -> list[tuple[YNode, YNode]]:
        """The mapping's entries, with those of merge keys (``<<: *base``) after its
        own and only where it has no key of that name, as YAML reads them."""
        node = self.resolve()
        if node.kind != MAP:
            return []
        if not any(_is_merge(key) for key, _ in node.value):
            return node.value
        own = [(key, value) for key, value in node.value if not _is_merge(key)]
        seen = {key.value for key, _ in own if key.kind == SCALAR and _hashable(key.value)}
        merged: list[tuple[YNode, YNode]] = []
        for key, value in node.value:
            if not _is_merge(key):
                continue
            target = value.resolve()
            sources = target.value if target.kind == SEQ else [target]
            for source in sources:
                for merged_key, merged_value in source.items():
                    name = merged_key.value if merged_key.kind == SCALAR else None
                    if _hashable(name) and name not in seen:
                        seen.add(name)
                        merged.append((merged_key, merged_value))
        return own + merged

    def elements(self) -> list[YNode]:
        node = self.resolve()
        return node.value if node.kind == SEQ else []

    def entry(self, key: Any) -> tuple[YNode, YNode] | None:
        """The last ``(key node, value node)`` pair whose key is ``key`` (a string,
        or a key YAML reads as another scalar: ``~``, ``1``, ``true``)."""
        found = None
        for key_node, value_node in self.items():
            if key_node.kind == SCALAR and key_node.value == key and type(key_node.value) is type(key):
                found = (key_node, value_node)
        return found

    def get(self, key: str) -> YNode | None:
        pair = self.entry(key)
        return pair[1].resolve() if pair else None

    def scalar(self) -> Any:
        node = self.resolve()
        return node.value if node.kind == SCALAR else None

    def text(self) -> str | None:
        """The scalar value when it is a string, else ``None``."""
        value = self.scalar()
        return value if isinstance(value, str) else None


def _is_merge(key: YNode) -> bool:
    return key.kind == SCALAR and key.value == "<<" and key.tag == "tag:yaml.org,2002:merge"


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


@dataclass(slots=True)
class YamlProblem:
    """A problem found while parsing, with the code it is reported under."""

    code: str  # RAG001, RAG003 or RAG005
    start: int
    end: int
    message: str
    # RAG003: where the key was first defined.
    first: tuple[int, int] | None = None


@dataclass(slots=True)
class YamlDocument:
    root: YNode | None
    problems: list[YamlProblem] = field(default_factory=list)

    @property
    def well_formed(self) -> bool:
        return not any(p.code in ("RAG001", "RAG005") for p in self.problems)

    def to_python(self, limits: YamlLimits = YamlLimits()) -> Any:
        """The document as plain values; raises :class:`TooLarge` past the budget."""
        return to_python(self.root, limits) if self.root is not None else None


class TooLarge(Exception):
    """Raised when expanding aliases would exceed the node budget."""

    def __init__(self, node: YNode) -> None:
        super().__init__("alias expansion exceeds the node budget")
        self.node = node


class _Refused(Exception):
    def __init__(self, start: int, end: int, message: str) -> None:
        super().__init__(message)
        self.start, self.end, self.message = start, end, message


_resolver = yaml.resolver.Resolver()
_constructor = yaml.constructor.SafeConstructor()


def _scalar_value(event: yaml.ScalarEvent) -> tuple[Any, str]:
    tag = event.tag
    if tag is None or tag == "!":
        tag = _resolver.resolve(yaml.ScalarNode, event.value, event.implicit)
    if tag == "tag:yaml.org,2002:str" or tag.startswith("!"):
        return event.value, tag
    node = yaml.ScalarNode(tag, event.value, style=event.style)
    try:
        value = _constructor.construct_object(node)
    except (yaml.YAMLError, ValueError, TypeError, OverflowError):
        return event.value, tag
    finally:
        # The constructor remembers every node it built (for aliases within one
        # document); this one lives as long as the process, so forget each node.
        _constructor.constructed_objects.pop(node, None)
        _constructor.recursive_objects.pop(node, None)
    # Schemas and JSON know no dates or bytes: keep what was written.
    if isinstance(value, (datetime.date, bytes)):
        return event.value, tag
    return value, tag


def parse_yaml(text: str, limits: YamlLimits = YamlLimits()) -> YamlDocument:
    """Parse the first YAML document of ``text`` into a positioned tree."""
    try:
        return _compose(text, limits)
    except _Refused as refused:
        return YamlDocument(None, [YamlProblem("RAG005", refused.start, refused.end, refused.message)])
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        offset = mark.index if mark is not None else 0
        return YamlDocument(None, [YamlProblem("RAG001", offset, offset + 1, syntax_message(error, text))])
    except yaml.YAMLError as error:  # ReaderError: a character YAML does not allow
        offset = getattr(error, "position", 0) or 0
        character = getattr(error, "character", None)
        if isinstance(character, int):
            message = f"the character U+{character:04X} is not allowed in YAML: remove it"
        else:
            message = f"invalid character: {getattr(error, 'reason', None) or error}"
        return YamlDocument(None, [YamlProblem("RAG001", offset, offset + 1, message)])


def syntax_message(error: yaml.MarkedYAMLError, text: str) -> str:
    """What to do about a YAML syntax error: the parser's words ("while parsing a
    block collection did not find expected '-' indicator") say what it expected,
    not what a person wrote wrong. Lines and columns are 1-based, as editors show."""
    context, problem = error.context or "", error.problem or ""
    where, mark = error.context_mark, error.problem_mark
    at = text[mark.index : mark.index + 1] if mark is not None else ""
    line = f"line {where.line + 1}" if where is not None else "above"
    if "flow sequence" in context or "flow mapping" in context:
        opening, closing = ("[", "]") if "sequence" in context else ("{", "}")
        if at in ("]", "}") and at != closing:
            return f"the '{opening}' opened on {line} is closed by '{at}': close it with '{closing}'"
        items = "items" if opening == "[" else "entries"
        return f"the '{opening}' opened on {line} is not closed: add '{closing}' where it ends, or ',' between its {items}"
    if "for the next token" in context and "cannot start any token" in problem:
        if at == "\t":
            return "a tab indents this line: YAML indents with spaces only; replace the tab with spaces"
        return f"a value cannot start with {at!r}: put the value in quotes"
    if "block mapping" in context and "expected key" in problem:
        if at in ("]", "}"):
            return f"a '{at}' closes nothing: remove it, or add the bracket it closes"
        column = f"column {where.column + 1}" if where is not None else "the same column"
        return (
            f"this line is not a key of the mapping above, whose keys start at {column}: "
            "align it with them, or indent it under the key it belongs to"
        )
    if "simple key" in context and "expected ':'" in problem:
        return f"{line} is neither 'key: value' nor '- item': add ':' after its key, or join it to the line before"
    if "mapping values are not allowed" in problem:
        return "a ': ' inside a value: put the value in quotes (key: \"a: b\")"
    if "quoted scalar" in context and "end of stream" in problem:
        return f"the quoted value that starts on {line} has no closing quote: add it"
    if "quoted scalar" in context and "escape" in problem:
        return "an unknown escape in a double-quoted value: write '\\\\' for a backslash, or use single quotes"
    if "block collection" in context and "'-' indicator" in problem:
        return (
            f"this line breaks the '- ' list that starts on {line}: begin it with '- ' like the other items, "
            "or indent it under the item it belongs to"
        )
    for word, sign in (("alias", "*"), ("anchor", "&"), ("tag", "!"), ("directive", "%")):
        if f"scanning an {word}" in context or f"scanning a {word}" in context:
            return f"'{sign}' starts a YAML {word} here: put a value that begins with '{sign}' in quotes"
    if "block scalar" in context:
        return "the text of a '|' or '>' block goes on the lines below it, indented: move it there"
    if "flow node" in context and "node content" in problem:
        return "a value is missing here: write it, or remove the ',' before it"
    return " ".join(part for part in (context, problem) if part) or str(error)


def _compose(text: str, limits: YamlLimits) -> YamlDocument:
    problems: list[YamlProblem] = []
    anchors: dict[str, YNode] = {}
    # Each open collection: (node, pending key for maps, keys seen for maps).
    stack: list[list[Any]] = []
    root: YNode | None = None
    documents = 0

    def attach(node: YNode) -> None:
        nonlocal root
        if not stack:
            root = node
            return
        frame = stack[-1]
        parent: YNode = frame[0]
        if parent.kind == SEQ:
            parent.value.append(node)
        elif frame[1] is None:
            frame[1] = node
        else:
            key: YNode = frame[1]
            frame[1] = None
            parent.value.append((key, node))
            _note_key(key, frame[2], problems)

    for event in yaml.parse(text, Loader=_Loader):
        if isinstance(event, yaml.DocumentStartEvent):
            documents += 1
            if documents > 1:
                start = event.start_mark.index
                problems.append(
                    YamlProblem("RAG004", start, max(start + 1, event.end_mark.index),
                                "only the first YAML document is read: move this document into its own file")
                )
                break
        elif isinstance(event, yaml.ScalarEvent):
            value, tag = _scalar_value(event)
            node = YNode(SCALAR, event.start_mark.index, event.end_mark.index, value, tag)
            if event.anchor:
                anchors[event.anchor] = node
            attach(node)
        elif isinstance(event, yaml.AliasEvent):
            node = YNode(ALIAS, event.start_mark.index, event.end_mark.index)
            node.target = anchors.get(event.anchor)
            if node.target is None:
                raise _Refused(node.start, node.end,
                               f"alias *{event.anchor} names no finished anchor (recursive or undefined)")
            attach(node)
        elif isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            if len(stack) >= limits.max_depth:
                # A flow "[" / "{" spans its bracket; a block collection starts with
                # an empty span: underline one character either way.
                raise _Refused(event.start_mark.index, max(event.end_mark.index, event.start_mark.index + 1),
                               f"nesting deeper than {limits.max_depth:,} levels is refused")
            kind = MAP if isinstance(event, yaml.MappingStartEvent) else SEQ
            node = YNode(kind, event.start_mark.index, event.end_mark.index, [], event.tag)
            stack.append([node, None, {}, event.anchor])
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            node, _, _, anchor = stack.pop()
            node.end = event.end_mark.index
            if anchor:
                anchors[anchor] = node
            attach(node)
    return YamlDocument(root, problems)


def _note_key(key: YNode, seen: dict[Any, YNode], problems: list[YamlProblem]) -> None:
    if key.kind != SCALAR:
        return
    try:
        previous = seen.get(key.value)
    except TypeError:
        return
    if previous is not None:
        problems.append(
            YamlProblem("RAG003", key.start, key.end, f"key {key.value!r} is repeated; YAML keeps only the last value",
                        first=(previous.start, previous.end))
        )
    seen[key.value] = key


def to_python(node: YNode, limits: YamlLimits = YamlLimits()) -> Any:
    """Plain values for ``node``; merge keys (``<<``) are applied."""
    budget = [limits.max_nodes]

    def convert(current: YNode) -> Any:
        budget[0] -= 1
        if budget[0] < 0:
            raise TooLarge(current)
        if current.kind == ALIAS:
            try:
                return convert(current.resolve())
            except TooLarge as exploded:
                # Report the outermost alias: that is the line a person wrote.
                raise TooLarge(current) from exploded
        target = current
        if target.kind == SCALAR:
            return target.value
        if target.kind == SEQ:
            return [convert(child) for child in target.value]
        result: dict[Any, Any] = {}
        for key_node, value_node in target.value:
            key = convert(key_node)
            if key == "<<" and key_node.resolve().tag == "tag:yaml.org,2002:merge":
                merged = convert(value_node)
                for source in merged if isinstance(merged, list) else [merged]:
                    if isinstance(source, dict):
                        for merged_key, merged_value in source.items():
                            result.setdefault(merged_key, merged_value)
                continue
            try:
                result[key] = convert(value_node)
            except TypeError:  # an unhashable (collection) key
                result[str(key)] = convert(value_node)
        return result

    return convert(node)


def walk(node: YNode) -> Iterator[YNode]:
    """Every node under ``node`` (aliases are not followed), parents first."""
    pending = [node]
    while pending:
        current = pending.pop()
        yield current
        if current.kind == MAP:
            for key_node, value_node in reversed(current.value):
                pending.append(value_node)
                pending.append(key_node)
        elif current.kind == SEQ:
            pending.extend(reversed(current.value))
