"""Completion and hover in the workspace's settings file (see core.workspace.config).

The file is small and flat: top-level keys, and the two tables keyed by code
(``[severity]``) and by glob (``[per-file-ignores]``). What the cursor is on is
told from its line and the table header above it, so it works on a half-typed
file that TOML would refuse; the documentation comes from the file's JSON Schema
and from the rules.
"""

from __future__ import annotations

import json
import re

from .answers import Completion, Completions, HoverText
from ..workspace.config import FIELD_KEYS, PYPROJECT_PATH, PYPROJECT_TABLE
from ..reading.resources import load_schema
from ..reading.text import LineIndex, Range

# What completion and hover say (kinds as in core.editing.completion).
PROPERTY = "property"
ENUM = "enum"

LEVELS = ("error", "warning", "information", "hint", "off")
_HEADER = re.compile(r"\s*\[\s*([^\]]*?)\s*\]")
_WORD = re.compile(r"[A-Za-z0-9_-]+")


def _table_at(lines: LineIndex, line: int, pyproject: bool) -> tuple[str, ...] | None:
    """The table the cursor's line is in, relative to the settings (``()`` for the
    top level); None outside them (another table of pyproject.toml)."""
    for number in range(line, -1, -1):
        header = _HEADER.match(lines.line_text(number))
        if header is None:
            continue
        parts = tuple(part.strip().strip("\"'") for part in header.group(1).split("."))
        if pyproject:
            if parts[: len(PYPROJECT_TABLE)] != PYPROJECT_TABLE:
                return None
            return parts[len(PYPROJECT_TABLE) :]
        return parts
    # Above every header: the top level of .punica/rag-lsp.toml, none of ours in pyproject.toml.
    return None if pyproject else ()


def _schema() -> dict:
    return load_schema("config")


def _key_documentation(key: str) -> str:
    node = _schema()["properties"].get(key, {})
    text = node.get("description", "")
    default = node.get("default")
    if default is not None:
        text += f"\n\nDefault: `{json.dumps(default)}`"
    return text


def complete_config(relative: str, text: str, line: int, character: int) -> Completions | None:
    """Completions at the cursor of a settings file ."""
    from ..checking.rules import all_rules

    lines = LineIndex(text)
    table = _table_at(lines, line, relative == PYPROJECT_PATH)
    if table is None:
        return None
    before = lines.line_text(line)[:character]
    if _HEADER.match(before) or before.lstrip().startswith("["):
        return None
    word = re.search(r"[A-Za-z0-9_-]*$", before)
    start = word.start() if word else character
    items: list[Completion] = []
    if "=" not in before:
        if table == ():
            for key in FIELD_KEYS.values():
                items.append(Completion(key, PROPERTY, f"{key} = ", start, character, "setting", _key_documentation(key)))
        elif table == ("severity",):
            for code, rule in all_rules().items():
                items.append(Completion(code, PROPERTY, f'{code} = ', start, character, rule.name, rule.summary))
        return Completions(line, items) if items else None
    key = before.split("=", 1)[0].strip().strip("\"'")
    # Inside a string the user opened: the word alone, the quotes are theirs.
    quoted = before.count('"') % 2 == 1
    if table == ("severity",):
        for level in LEVELS:
            items.append(Completion(level, ENUM, level if quoted else f'"{level}"', start, character, "severity"))
    elif table == ("per-file-ignores",) or (table == () and key in ("severity",)):
        for code, rule in all_rules().items():
            items.append(Completion(code, ENUM, code if quoted else f'"{code}"', start, character, rule.name, rule.summary))
    return Completions(line, items) if items else None


def hover_config(relative: str, text: str, line: int, character: int) -> HoverText | None:
    """Documentation of the key (or code) under the cursor of a settings file."""
    from ..checking.rules import all_rules

    lines = LineIndex(text)
    table = _table_at(lines, line, relative == PYPROJECT_PATH)
    if table is None:
        return None
    line_text = lines.line_text(line)
    for match in _WORD.finditer(line_text):
        if match.start() <= character <= match.end():
            break
    else:
        return None
    word = match.group(0)
    where = Range.of(line, match.start(), line, match.end())
    code = word.upper()
    if re.fullmatch(r"RAG\d{3}", code) and code in all_rules():
        rule = all_rules()[code]
        folds = (
            " When most rows of a dataset carry one of its findings for one cause, it is reported once for the file"
            " (`rag-lsp check --unfold` lists every occurrence)."
            if rule.fold_explainer is not None
            else ""
        )
        return HoverText(
            f"**{rule.code}** ({rule.name}, {rule.severity.label}): {rule.summary}.{folds}\n\n`rag-lsp check --explain {rule.code}`", where
        )
    before = line_text[: match.start()]
    if "=" in before:
        return None
    if table == () and word in _schema()["properties"]:
        return HoverText(f"**{word}**: {_key_documentation(word)}", where)
    if table and table[0] in _schema()["properties"] and _HEADER.match(line_text):
        return HoverText(f"**{table[0]}**: {_key_documentation(table[0])}", where)
    return None
