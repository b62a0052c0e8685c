"""What the workspace's index finds for a case while it is being written.

A dataset whose suites match by path through a builtin target (the embedded
default ``vectors.query`` when no suite names another) can be helped by that
target's index: the files it finds for a case's ``input.query`` are likely
candidates for the case's ``expect.relevant``. Completion offers them first
(:func:`suggestions`), and a code action adds the top hit (:func:`top_hit`,
:func:`add_relevant`).

The index is asked through an :data:`IndexSearch` the caller supplies: the
language server answers from an index it already holds and never builds one
for a suggestion, so a search may answer None (no index yet), and then nothing
is suggested. Everything here works on one line of text, however incomplete:
a case being written is rarely valid JSON.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ..reading.jsonrows import Row
from ..reading.jsonspans import object_pairs, parse_line, string_value
from ..workspace.suitefacts import DEFAULT_TARGET, TargetInfo
from ..workspace.workspace import Workspace

# Asks the index of a builtin target about a case ``input``: its ranked hits
# (each with ``path``, ``id``, ``score`` and ``text``), or None when the target
# holds no built index.
IndexSearch = Callable[[TargetInfo, dict], Sequence[Any] | None]

RELEVANT = ("expect", "relevant")


@dataclass(frozen=True)
class Suggestion:
    """A file the index found for a case: its best chunk's id, score and text."""

    path: str
    chunk: str
    score: float | None
    text: str

    def markdown(self) -> str:
        """The chunk, as the documentation of a completion item."""
        score = f" · score {self.score:.2f}" if isinstance(self.score, (int, float)) else ""
        fence = "`" * max(3, _longest_backtick_run(self.text) + 1)
        return f"Found by the index for this case's query{score}: `{self.chunk}`\n\n{fence}\n{self.text}\n{fence}"


def _longest_backtick_run(text: str) -> int:
    return max((len(run) for run in re.findall(r"`+", text)), default=0)


def index_target(workspace: Workspace, relative: str) -> TargetInfo | None:
    """The builtin target that searches the workspace for the dataset ``relative``:
    that of the first suite reading it with ``match: path`` through a builtin
    target, or ``vectors.query`` when no suite reads it; None otherwise."""
    targets = workspace.targets()
    users = [suite for suite in workspace.suites() if suite.dataset == relative]
    ids = [suite.target or DEFAULT_TARGET for suite in users if suite.match == "path"] if users else [DEFAULT_TARGET]
    for target_id in ids:
        info = targets.get(target_id)
        if info is not None and info.kind == "builtin":
            return info
    return None


def case_input(line_text: str) -> dict | None:
    """The ``input`` object of the case on a line, complete even when the rest of
    the line is not yet (a case is written left to right: its input comes first);
    None when it has no input with a query."""
    value = _value_at(line_text, ("input",))
    if isinstance(value, dict) and isinstance(value.get("query"), str) and value["query"].strip():
        return value
    return None


def listed(line_text: str, skip: int | None = None) -> set[str]:
    """The strings already in the line's ``expect.relevant`` (but the element at
    index ``skip``, the one being written)."""
    value = _value_at(line_text, RELEVANT)
    if isinstance(value, list):
        return {item for index, item in enumerate(value) if isinstance(item, str) and index != skip}
    return set()


def _value_at(line_text: str, path: tuple[str, ...]) -> Any:
    """The value at ``path`` of the line's object: from the line as it is when it
    is valid JSON, else from the line closed where it stops (an open string,
    list or object ended), else from the part of it that parses."""
    for text in (line_text, _closed(line_text)):
        if text is None:
            continue
        try:
            value: Any = json.loads(text)
        except ValueError:
            continue
        for part in path:
            value = value.get(part) if isinstance(value, dict) else None
        return value
    _, node = parse_line(line_text)
    if node is None:
        # An object the parser could not close: its pairs hang from the root.
        node = _parser_root(line_text)
    for part in path:
        node = _child(node, part) if node is not None else None
    if node is None or node.has_error:
        return None
    try:
        return json.loads(node.text.decode("utf-8", "surrogatepass"))
    except ValueError:
        return None


def _parser_root(line_text: str) -> Any:
    from ..reading.jsonspans import line_parser

    return line_parser().parse(line_text.encode("utf-8", "surrogatepass")).root_node


def _child(node: Any, key: str) -> Any:
    found = None
    for key_node, value_node in object_pairs(node):
        if string_value(key_node) == key:
            found = value_node
    return found


_STRING = re.compile(r'"(?:[^"\\]|\\.)*("|$)')


def _closed(text: str) -> str | None:
    """``text`` with what it leaves open closed: a string, then the lists and
    objects around it (a dangling comma dropped, a key left without a value
    given null); None when it closes nothing."""
    stack: list[str] = []
    out: list[str] = []
    index = 0
    last = ""  # the last significant token: "{", "[", ",", ":", "key", "value"
    while index < len(text):
        char = text[index]
        if char == '"':
            match = _STRING.match(text, index)
            assert match is not None
            piece = match.group(0) + ("" if match.group(1) else '"')
            out.append(piece)
            last = "key" if stack[-1:] == ["{"] and last in ("{", ",") else "value"
            index = match.end()
            continue
        if char in "{[":
            stack.append(char)
            last = char
        elif char in "}]":
            if stack:
                stack.pop()
            last = "value"
        elif char in ",:":
            last = char
        elif not char.isspace():
            last = "value"
        out.append(char)
        index += 1
    closed = "".join(out)
    if not stack and closed == text:
        return None
    closed = closed.rstrip()
    if last == ",":
        closed = closed[:-1]
    elif last == ":":
        closed += " null"
    elif last == "key":
        closed += ": null"
    return closed + "".join("}" if opened == "{" else "]" for opened in reversed(stack))


def _hits(workspace: Workspace, relative: str, line_text: str, search: IndexSearch) -> list[Any]:
    info = index_target(workspace, relative)
    value = case_input(line_text)
    if info is None or value is None:
        return []
    hits = search(info, value)
    if not hits:
        return []
    files = workspace.file_set()
    return [hit for hit in hits if isinstance(hit.path, str) and hit.path in files]


def suggestions(
    workspace: Workspace, relative: str, line_text: str, search: IndexSearch, skip: int | None = None
) -> list[Suggestion]:
    """The files the index finds for the case on ``line_text`` of the dataset
    ``relative``, best first, each once, leaving out those its ``expect.relevant``
    already lists (but the element ``skip``) and those no longer in the workspace."""
    hits = _hits(workspace, relative, line_text, search)
    taken = listed(line_text, skip) if hits else set()
    found: list[Suggestion] = []
    seen: set[str] = set()
    for hit in hits:
        if hit.path in seen or hit.path in taken:
            continue
        seen.add(hit.path)
        found.append(Suggestion(hit.path, hit.id or hit.path, hit.score, hit.text or ""))
    return found


def top_hit(workspace: Workspace, relative: str, line_text: str, search: IndexSearch) -> Suggestion | None:
    """The index's first hit for the case on ``line_text``, when its file is not
    yet listed as relevant and the line can take it (see :func:`add_relevant`)."""
    hits = _hits(workspace, relative, line_text, search)
    if not hits:
        return None
    hit = hits[0]
    if hit.path in listed(line_text) or add_relevant(line_text, hit.path) is None:
        return None
    return Suggestion(hit.path, hit.id or hit.path, hit.score, hit.text or "")


def add_relevant(line_text: str, path: str) -> tuple[int, int, str] | None:
    """The edit that appends ``path`` to the line's ``expect.relevant`` list: the
    columns (code points) it replaces and the text it puts there, touching
    nothing else; None when the line is not a case with such a list."""
    row = Row(line_text)
    relevant = row.get(*RELEVANT) if row.error is None and row.refused is None and row.is_object else None
    if not isinstance(relevant, list) or not isinstance(row.get("expect"), dict):
        return None
    written = json.dumps(path, ensure_ascii=False)
    if relevant:
        end = row.span(*RELEVANT, len(relevant) - 1).value_end
        edit = (end, end, f", {written}")
    else:
        span = row.span(*RELEVANT)
        edit = (span.value_start + 1, span.value_end - 1, written)
    start, end, text = edit
    changed = line_text[:start] + text + line_text[end:]
    try:
        after = json.loads(changed)
    except ValueError:
        return None
    if not isinstance(after, dict) or not isinstance(after.get("expect"), dict) or after["expect"].get("relevant") != [*relevant, path]:
        return None  # the line is not written as its value says (a repeated key): no edit rather than a wrong one
    return edit
