"""Helpers shared by the rules on YAML files (the suite rules RAG100–RAG111, RAG301).

Not a rule module (its name does not start with ``rag``): suggestions for
misspelled names, the text edits that rename a key or value while keeping its
quotes, and the layout facts (line endings, indentation, where a block ends) that
edits inserting lines need.
"""

from __future__ import annotations

from typing import Any, Iterable

from ...reading.findings import Fix, TextEdit
from ...reading.yamltree import MAP, SCALAR, SEQ, YNode

# rapidfuzz WRatio scores, 0..100. Below the cutoff a "did you mean" misleads more
# than it helps; within the margin of the best score a name is as likely a match.
_CUTOFF = 65
_MARGIN = 10

MERGE_TAG = "tag:yaml.org,2002:merge"


def closest(word: str, choices: Iterable[str], limit: int = 3, cutoff: float = _CUTOFF) -> list[str]:
    """Up to ``limit`` names of ``choices`` close to ``word``, best first."""
    names = sorted({choice for choice in choices if choice != word})
    if not word or not names:
        return []
    from rapidfuzz import process  # only when a name is unknown

    found = process.extract(word, names, limit=limit, score_cutoff=cutoff)
    if not found:
        return []
    best = found[0][1]
    return [name for name, score, _ in found if score >= best - _MARGIN]


def meant_file(relative: str, candidates: list[str]) -> list[str]:
    """The one file of ``candidates`` a path that names none probably meant: the
    only one of the same file name (a path written relative to another file),
    else the nearest spelling. Paths share long prefixes (.punica/evals/), so
    only a near spelling counts."""
    name = relative.rsplit("/", 1)[-1]
    same_name = [path for path in candidates if path.rsplit("/", 1)[-1] == name]
    if len(same_name) == 1:
        return same_name
    return closest(relative, candidates, limit=1, cutoff=85)


def did_you_mean(names: list[str]) -> str:
    """`` (did you mean 'a' or 'b'?)``, or nothing without names."""
    if not names:
        return ""
    quoted = [repr(name) for name in names]
    listed = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]
    return f" (did you mean {listed}?)"


def unreadable_note(registry: Any) -> str:
    """``; a.yaml cannot be read and might define it`` when manifests whose name
    cannot be read might define a name the registry does not know, else nothing."""
    paths = registry.might_define()
    if not paths:
        return ""
    shown = paths[:3]
    listed = shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]
    if len(paths) > len(shown):
        listed += f" and {len(paths) - len(shown):,} more"
    return f"; {listed} cannot be read and might define it"


def rename_fixes(context: Any, node: YNode, names: list[str]) -> list[Fix]:
    """One "Change to 'x'" fix per name, replacing ``node``'s text (quotes kept)."""
    written = context.parsed.text[node.start:node.end]
    quote = written[0] if written[:1] in ("'", '"') else ""
    return [
        Fix(f"Change to {name!r}", edits=(TextEdit(context.node_range(node), f"{quote}{name}{quote}"),))
        for name in names
    ]


def scalar_text(node: YNode | None) -> str | None:
    """A scalar node's value when it is a non-empty string."""
    if node is None:
        return None
    value = node.text()
    return value if value else None


def string_keys(node: YNode | None) -> list[tuple[str, YNode, YNode]]:
    """``(name, key node, value node)`` of a mapping's string keys (none otherwise)."""
    if node is None or not node.is_map:
        return []
    found = []
    for key, value in node.items():
        name = key.text() if key.kind == SCALAR else None
        # A merge key (`<<: *defaults`) is YAML's, not a name of ours.
        if name and key.tag != MERGE_TAG:
            found.append((name, key, value))
    return found


def newline_of(text: str) -> str:
    """The file's line ending: CRLF when it uses CRLF, else LF."""
    return "\r\n" if "\r\n" in text else "\n"


def is_flow(text: str, node: YNode) -> bool:
    """Whether a mapping or sequence is written in flow style (``{...}``/``[...]``)."""
    node = node.resolve()
    return node.kind in (MAP, SEQ) and text[node.start:node.start + 1] in ("{", "[")


def content_end(text: str, node: YNode) -> int:
    """The offset after the last character that belongs to ``node``.

    A block collection's own end is where the next token starts, past trailing
    blank lines and comments; its content ends with its last child.
    """
    if node.kind in (MAP, SEQ) and not is_flow(text, node):
        children: list[YNode] = (
            [value for _, value in node.value] if node.kind == MAP else list(node.value)
        )
        return content_end(text, children[-1]) if children else node.start
    return node.end


def column_of(context: Any, offset: int) -> int:
    """The code-point column of ``offset`` in the context's file."""
    return context.parsed.lines.position(offset).character
