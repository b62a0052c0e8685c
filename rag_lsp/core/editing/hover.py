"""What to show when hovering a position of a suite, manifest, targets config or dataset.

* a metric name (a key of ``thresholds`` or ``metrics``): its manifest's
  documentation — description, direction, range, methodology, score semantics;
* an engine name (in ``engines`` or as a key of ``options``): the engine's
  description, the metrics it emits and its options;
* an option key (or its value) under ``options.<engine>`` or ``metrics.<metric>``:
  the option's description, type, default and range from the manifest;
* a suite's ``dataset:`` value: how many cases the dataset holds;
* a target id: the target's adapter, corpora and hit fields;
* any other key: its description from the JSON Schema of the file;
* in the settings file: each setting's description, and each code's rule.
"""

from __future__ import annotations

import json
from typing import Any

from .answers import HoverText
from .configedit import hover_config
from .completion import dataset_corpora
from ..checking.expectedpaths import NEVER_SEARCHED_AS_SAID, never_searched
from .cursor import ITEM, KEY, YamlCursor, json_cursor, yaml_cursor
from .docs import engine_markdown, metric_markdown, option_markdown, schema_at, schema_text
from ..workspace.manifests import GDI_TEXT
from ..reading.resources import load_schema
from ..reading.text import Range
from ..reading.wording import counted
from ..reading.paths import normalize_relative
from ..reading.datasetlines import read_by_checks
from ..workspace.rows import shape_of_rows
from ..workspace.workspace import CONFIG_FILE, DATASET_FILE, MANIFEST_FILE, SUITE_FILE, TARGETS_FILE, Workspace

_SCHEMAS = {SUITE_FILE: "suite", MANIFEST_FILE: "manifest", TARGETS_FILE: "targets"}


def hover(workspace: Workspace, relative: str, kind: str | None, text: str, line: int, character: int) -> HoverText | None:
    """The documentation for ``line``/``character`` (code points) of ``text``."""
    if kind == DATASET_FILE:
        return _hover_dataset(workspace, relative, text, line, character)
    if kind == CONFIG_FILE:
        return hover_config(relative, text, line, character)
    if kind not in _SCHEMAS:
        return None
    cursor = yaml_cursor(text, line, character)
    if cursor is None or not cursor.text:
        # A position is between two characters, and completion reads one at the
        # start of a key as the place for a new key; hover is of the character
        # after it, the key's first.
        cursor = yaml_cursor(text, line, character + 1)
    if cursor is None or not cursor.text or not cursor.start <= character <= cursor.end:
        return None
    markdown = _suite_markdown(workspace, cursor) if kind == SUITE_FILE else None
    if markdown is None and cursor.role == KEY and not cursor.bare_item:
        markdown = schema_text(schema_at(load_schema(_SCHEMAS[kind]), cursor.path + (cursor.text,))) or None
    if not markdown:
        return None
    return HoverText(markdown, Range.of(cursor.line, cursor.start, cursor.line, cursor.end))


def _suite_markdown(workspace: Workspace, cursor: YamlCursor) -> str | None:
    path, word = cursor.path, cursor.text
    if len(path) < 2 or path[:2] != ("suites", ITEM):
        return None
    inner = path[2:]
    registry = workspace.manifests()
    if cursor.role == KEY and not cursor.bare_item:
        if inner in (("thresholds",), ("metrics",)):
            return metric_markdown(registry, word) or f"`{word}` is not a metric any manifest declares."
        if inner == ("options",):
            return engine_markdown(registry, word)
        if len(inner) == 2 and inner[0] in ("options", "metrics"):
            return _option(registry, inner[0], str(inner[1]), word)
        return None
    # Values (and bare "- name" elements).
    if inner == ("engines", ITEM):
        return engine_markdown(registry, word)
    if inner == ("dataset",):
        return _dataset_summary(workspace, word)
    if inner == ("target", "id"):
        return _target_summary(workspace, word)
    if len(inner) == 3 and inner[0] in ("options", "metrics"):
        return _option(registry, inner[0], str(inner[1]), str(inner[2]))
    return None


def _option(registry: Any, section: str, owner: str, name: str) -> str | None:
    manifest = registry.engine(owner) if section == "options" else registry.metric_manifest(owner)
    return option_markdown(manifest, name) if manifest is not None else None


def _dataset_summary(workspace: Workspace, written: str) -> str:
    relative = normalize_relative(written)
    if relative is None:
        return f"`{written}` leaves the workspace."
    parsed = workspace.parsed_dataset(relative) if relative else None
    if parsed is None:
        return f"`{relative}` does not exist in the workspace."
    unreadable = sum(1 for _, row in parsed.rows if row.error is not None or row.refused)
    shape = shape_of_rows(row for _, row in parsed.rows)
    count = len(parsed.rows) - unreadable
    lines = [f"**{relative}** — {counted(count, 'case')}" + (f" ({shape})" if shape else "")]
    if unreadable:
        lines.append(f"\n{counted(unreadable, 'line')} that are not valid JSON.")
    return "\n".join(lines)


def _target_summary(workspace: Workspace, target_id: str) -> str:
    target = workspace.targets().get(target_id)
    if target is None:
        return f"Target `{target_id}` is not configured in `.punica/targets.yaml`."
    origin = "the default builtin target" if workspace.targets_file() is None else f"configured in `{workspace.targets_file()}`"
    lines = [f"**{target_id}** — `{target.kind}` target, {origin}", ""]
    lines.append(f"- Corpora: {', '.join(target.corpora) if target.corpora else 'undeclared'}")
    lines.append(f"- Hit fields: {', '.join(sorted(target.fields)) if target.fields is not None else 'undeclared'}")
    if target.workspace_paths:
        lines.append("- Hit paths: files of this workspace, so an expected path that is not one is reported (RAG203)")
    else:
        lines.append(
            "- Hit paths: of a corpus indexed elsewhere, so expected paths are not checked against this workspace "
            "(declare `workspace_paths: true` if it indexes this repository)"
        )
    return "\n".join(lines)


# ---------------------------------------------------------------- datasets


def _unescaped(raw: str) -> str:
    """The value of a JSON string's text between its quotes."""
    if "\\" not in raw:
        return raw
    try:
        return json.loads(f'"{raw}"')
    except ValueError:
        return raw


def _expected_path(workspace: Workspace, relative: str, value: str) -> str | None:
    """What RAG203 makes of an expected value: whether it is checked against the
    workspace's files (and why), and whether it is one."""
    use = workspace.dataset_use(relative)
    if "path" not in use.matches:
        return None
    normal = normalize_relative(value)
    found = normal is not None and normal in workspace.file_set()
    where = "a file of this workspace" if found else "not a file of this workspace"
    for target, corpora in use.builtin_corpora if found else ():
        never = never_searched(workspace, normal, corpora)
        if never is not None:
            where += f", which the builtin target `{target}` never searches ({NEVER_SEARCHED_AS_SAID[never]})"
            break
    if use.workspace_targets:
        targets = ", ".join(f"`{target}`" for target in use.workspace_targets)
        searches = "searches" if len(use.workspace_targets) == 1 else "search"
        why = f"Checked against the workspace's files: the suites read this dataset through {targets}, which {searches} it."
    elif use.suites:
        why = (
            "Not checked against the workspace's files: the suites' targets search a corpus indexed elsewhere "
            "(a target declaring `workspace_paths: true` searches this workspace)."
        )
    else:
        why = "Checked against the workspace's files: no suite reads this dataset, so its corpus is taken to be the workspace."
    return f"Expected path `{value}` — {where}.\n\n{why}"



def _hover_dataset(workspace: Workspace, relative: str, text: str, line: int, character: int) -> HoverText | None:
    lines = text.split("\n")
    if not 0 <= line < len(lines):
        return None
    line_text = lines[line].rstrip("\r")
    if not read_by_checks(line_text, workspace.settings.max_line_bytes):
        return None
    cursor = json_cursor(line_text, character)
    if cursor is None or not cursor.in_string:
        return None
    word = line_text[cursor.start:cursor.end]
    markdown = None
    if cursor.role == KEY:
        schema = load_schema("gdi-text-v1" if workspace.dataset_shape(relative) == GDI_TEXT else "rag-case")
        markdown = schema_text(schema_at(schema, cursor.path + (word,)))
    elif len(cursor.path) == 3 and cursor.path[:2] == ("expect", "relevant"):
        markdown = _expected_path(workspace, relative, _unescaped(word))
    elif len(cursor.path) == 3 and cursor.path[:2] == ("input", "corpora"):
        corpora = dataset_corpora(workspace, relative)
        markdown = (f"Corpus `{word}`" + (" — served by this dataset's targets" if word in corpora
                    else " — not among the corpora its targets declare: " + (", ".join(corpora) or "none")))
    if not markdown:
        return None
    return HoverText(markdown, Range.of(line, cursor.start, line, cursor.end))


