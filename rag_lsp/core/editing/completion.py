"""What to complete at a position of a suite file or a dataset line.

Suites: the keys of the suite schema (with their descriptions), engine names,
metric names as keys of ``thresholds`` and ``metrics`` (with display name,
direction and documentation from the manifests), option keys and values from the
manifests' ``config_schema`` (``match: path | id | corpus``), target ids (the
configured ones and the default ``vectors.query``) and dataset paths.
Datasets: row keys, corpus names inside ``input.corpora`` (the corpora of the
targets of the suites that read the file) and, inside ``expect.relevant``,
workspace file paths, fuzzy-matched with rapidfuzz (corpus names for suites that
match by corpus); the files the builtin target's index finds for the case's
``input.query`` come first, labelled as such, with the matching chunk as their
documentation (:mod:`.suggest`; only from an index already built).

Each item replaces the token under the cursor (a range on the cursor's line, in
code points) with text that keeps the file valid: a YAML key gets its ": ", a
JSON value its quotes, escaped.
"""

from __future__ import annotations

import heapq
import json
import re
from typing import Any

from rapidfuzz import fuzz, process, utils

from .answers import Completion, Completions
from .configedit import complete_config
from .cursor import ITEM, KEY, JsonCursor, YamlCursor, json_cursor, json_object_keys, yaml_cursor
from .docs import (
    config_properties,
    engine_markdown,
    metric_detail,
    metric_markdown,
    option_detail,
    option_markdown,
    schema_properties,
    schema_summary,
    schema_text,
)
from ..workspace.manifests import GDI_TEXT, with_cutoff
from ..reading.resources import load_schema
from .suggest import IndexSearch, suggestions
from ..reading.datasetlines import read_by_checks
from ..reading.wording import counted
from ..workspace.workspace import CONFIG_FILE, DATASET_FILE, MANIFEST_FILE, SUITE_FILE, TARGETS_FILE, Workspace
from ..reading.yamltree import parse_yaml

# Item kinds (the server maps them to the protocol's).
PROPERTY = "property"
VALUE_KIND = "value"
ENUM = "enum"
ENGINE = "engine"
METRIC = "metric"
TARGET = "target"
FILE = "file"
CORPUS = "corpus"

# How a file the index found for the case is labelled.
INDEX_DETAIL = "found by the index for this query"
INDEX_DESCRIPTION = "index"

# Paths offered at most per request: the client asks again as the word grows.
PATH_LIMIT = 50
# Fuzzy (not substring) path matches need this rapidfuzz partial_ratio (0..100).
FUZZY_CUTOFF = 70


def complete(
    workspace: Workspace, relative: str, kind: str | None, text: str, line: int, character: int, search: IndexSearch | None = None
) -> Completions | None:
    """Completions at ``line``/``character`` (code points) of ``text``, the
    current text of the workspace file ``relative`` of kind ``kind``. ``search``
    asks a builtin target's index already built (see :mod:`.suggest`): inside
    ``expect.relevant`` the files it finds for the case come first."""
    if kind == DATASET_FILE:
        return _complete_dataset(workspace, relative, text, line, character, search)
    if kind == CONFIG_FILE:
        return complete_config(relative, text, line, character)
    if kind in (SUITE_FILE, MANIFEST_FILE, TARGETS_FILE) or (kind is None and relative.endswith((".yaml", ".yml"))):
        cursor = yaml_cursor(text, line, character)
        if cursor is None:
            return None
        if kind == SUITE_FILE or (kind is None and _looks_like_suite(text)):
            return _complete_suite(workspace, text, cursor, character)
        if kind in (MANIFEST_FILE, TARGETS_FILE) and cursor.role == KEY:
            schema = load_schema("manifest" if kind == MANIFEST_FILE else "targets")
            return _result(cursor.line, _schema_keys(schema, cursor), False)
    return None


def _looks_like_suite(text: str) -> bool:
    return text.startswith("suites:") or "\nsuites:" in text


def _result(line: int, items: list[Completion], incomplete: bool) -> Completions:
    ordered = [
        Completion(item.label, item.kind, item.insert, item.start, item.end, item.detail, item.documentation,
                   item.sort or f"{index:05d}", item.filter, item.description)
        for index, item in enumerate(items)
    ]
    return Completions(line, ordered, incomplete)


# ---------------------------------------------------------------- suites


def _key_insert(cursor: YamlCursor, name: str) -> str:
    if cursor.quote:
        return name  # inside the quotes the user opened
    text = name if _plain_ok(name) else json.dumps(name)
    return text if cursor.has_colon else f"{text}: "


_PLAIN = re.compile(r"[A-Za-z_./][\w./@+-]*")
_RESERVED = frozenset({"true", "false", "yes", "no", "on", "off", "null", "y", "n", "~"})


def _plain_ok(value: str) -> bool:
    """Whether ``value`` can be written as a plain YAML scalar and stay that string."""
    if _PLAIN.fullmatch(value) and value.lower() not in _RESERVED:
        return True
    if not value or value[0] in "-?:,[]{}#&*!|>'\"%@`" or value != value.strip() or ": " in value or " #" in value:
        return False
    root = parse_yaml(f"k: {value}\n").root
    node = root.get("k") if root is not None and root.is_map else None
    return node is not None and node.scalar() == value


def _value_insert(cursor: YamlCursor, value: str) -> str:
    if cursor.quote:
        return value
    return value if _plain_ok(value) else json.dumps(value)


def _complete_suite(workspace: Workspace, text: str, cursor: YamlCursor, character: int) -> Completions:
    path = cursor.path
    registry = workspace.manifests()
    items: list[Completion] = []
    incomplete = False
    suite = _suite_at(text, cursor.line) if len(path) >= 2 and path[:2] == ("suites", ITEM) else None
    schema = load_schema("suite")
    if cursor.role == KEY:
        inner = path[2:] if len(path) >= 2 and path[:2] == ("suites", ITEM) else None
        if inner == ("thresholds",):
            items += _metric_keys(workspace, cursor, suite, thresholds=True)
        elif inner == ("metrics",):
            items += _metric_keys(workspace, cursor, suite, thresholds=False)
        elif inner == ("options",):
            engines = suite.get("engines", []) if suite else []
            names = sorted(registry.engines, key=lambda name: (name not in engines, name))
            for name in names:
                if name in cursor.siblings:
                    continue
                items.append(Completion(name, ENGINE, _key_insert(cursor, name), cursor.start, cursor.end,
                                        "engine options", engine_markdown(registry, name) or ""))
        elif inner is not None and len(inner) == 2 and inner[0] in ("options", "metrics"):
            manifest = registry.engine(inner[1]) if inner[0] == "options" else registry.metric_manifest(inner[1])
            for name, option in config_properties(manifest).items():
                if name in cursor.siblings:
                    continue
                items.append(Completion(name, PROPERTY, _key_insert(cursor, name), cursor.start, cursor.end,
                                        option_detail(option), option_markdown(manifest, name) or ""))
        else:
            items += _schema_keys(schema, cursor)
        if cursor.bare_item and path[-1:] == (ITEM,):
            values, incomplete = _suite_values(workspace, cursor, path, suite, character)
            items += values
    else:
        items, incomplete = _suite_values(workspace, cursor, path, suite, character)
    return _result(cursor.line, items, incomplete)


def _schema_keys(schema: dict[str, Any], cursor: YamlCursor) -> list[Completion]:
    items = []
    for name, subschema in schema_properties(schema, cursor.path).items():
        if name in cursor.siblings or name == "$schema":
            continue
        items.append(Completion(name, PROPERTY, _key_insert(cursor, name), cursor.start, cursor.end,
                                schema_summary(subschema), schema_text(subschema)))
    return items


def _metric_keys(workspace: Workspace, cursor: YamlCursor, suite: dict[str, Any] | None, thresholds: bool) -> list[Completion]:
    registry = workspace.manifests()
    if thresholds:
        metrics = {name: metric for name, metric in registry.metrics().items() if not metric.counter}
    else:
        metrics = {name: manifest.metrics[0] for name, manifest in registry.manifests.items()
                   if manifest.kind == "metric" and manifest.metrics}
    # The suite's own metrics (those its engines emit, those it lists) first.
    own: set[str] = set()
    if suite:
        for engine in suite.get("engines", []):
            manifest = registry.engine(engine)
            if manifest is not None:
                own |= {metric.name for metric in manifest.metrics}
        own |= set(suite.get("metrics", []))
    items = []
    for name in sorted(metrics, key=lambda name: (name not in own, name)):
        if with_cutoff(name, COMPLETED_CUTOFF) in cursor.siblings:
            continue
        if thresholds and own and name not in own:
            continue  # a threshold on a metric the suite does not compute is RAG101
        # A family (`ir.nDCG@k`) is offered at a cutoff: `ir.nDCG@10`, a name a threshold can hold.
        written = with_cutoff(name, COMPLETED_CUTOFF)
        items.append(Completion(written, METRIC, _key_insert(cursor, written), cursor.start, cursor.end,
                                metric_detail(metrics[name]), metric_markdown(registry, name) or ""))
    return items


# The cutoff a completed metric family gets: the one BEIR and MTEB report.
COMPLETED_CUTOFF = "10"


def _suite_values(
    workspace: Workspace, cursor: YamlCursor, path: tuple[Any, ...], suite: dict[str, Any] | None, character: int
) -> tuple[list[Completion], bool]:
    registry = workspace.manifests()
    inner = path[2:] if len(path) >= 2 and path[:2] == ("suites", ITEM) else None
    if inner is None:
        return [], False
    items: list[Completion] = []
    if inner == ("engines", ITEM):
        listed = set(suite.get("engines", [])) if suite else set()
        for name in registry.engines:
            if name in listed and name != cursor.text:
                continue
            items.append(Completion(name, ENGINE, _value_insert(cursor, name), cursor.start, cursor.end,
                                    "engine", engine_markdown(registry, name) or ""))
    elif inner == ("engines",) and not cursor.quote:
        for name in registry.engines:
            items.append(Completion(f"[{name}]", ENGINE, f"[{name}]", cursor.start, cursor.end,
                                    "engine", engine_markdown(registry, name) or "", filter=name))
    elif inner == ("target", "kind"):
        items.append(Completion("capability", ENUM, _value_insert(cursor, "capability"), cursor.start, cursor.end,
                                "a named retrieval capability"))
    elif inner == ("target", "id"):
        items += _target_ids(workspace, cursor, lambda target_id: _value_insert(cursor, target_id))
    elif inner == ("target",) and not cursor.quote:
        items += _target_ids(workspace, cursor, lambda target_id: f"{{kind: capability, id: {target_id}}}", flow=True)
    elif inner == ("dataset",):
        recordings = workspace.recordings()
        datasets = [path for path in workspace.files() if path.endswith(".jsonl") and path not in recordings]
        for name in fuzzy_paths(cursor.text[: max(0, character - cursor.start)], datasets):
            items.append(Completion(name, FILE, _value_insert(cursor, name), cursor.start, cursor.end,
                                    _case_count(workspace, name)))
        return items, True
    elif len(inner) == 3 and inner[0] in ("options", "metrics"):
        manifest = registry.engine(inner[1]) if inner[0] == "options" else registry.metric_manifest(inner[1])
        option = config_properties(manifest).get(str(inner[2]))
        if option is not None:
            items += _option_values(cursor, option)
    return items, False


def _target_ids(workspace: Workspace, cursor: YamlCursor, insert: Any, flow: bool = False) -> list[Completion]:
    items = []
    for target_id, target in sorted(workspace.targets().items()):
        corpora = ", ".join(target.corpora) if target.corpora else "undeclared"
        origin = "default" if target_id == "vectors.query" and workspace.targets_file() is None else "configured"
        documentation = f"Target `{target_id}` ({origin}): a `{target.kind}` adapter; corpora: {corpora}."
        if target.fields is not None:
            documentation += " Hit fields: " + ", ".join(sorted(target.fields)) + "."
        label = f"{{kind: capability, id: {target_id}}}" if flow else target_id
        items.append(Completion(label, TARGET, insert(target_id), cursor.start, cursor.end,
                                f"{target.kind} target", documentation, filter=label if not flow else target_id))
    return items


def _option_values(cursor: YamlCursor, option: dict[str, Any]) -> list[Completion]:
    values: list[Any] = []
    if isinstance(option.get("enum"), list):
        values = list(option["enum"])
    elif option.get("type") == "boolean":
        values = [True, False]
    elif "default" in option:
        values = [option["default"]]
    items = []
    for value in values:
        text = value if isinstance(value, str) else json.dumps(value)
        detail = "default" if option.get("default") == value and type(option.get("default")) is type(value) else ""
        items.append(Completion(text, ENUM, _value_insert(cursor, text) if isinstance(value, str) else text,
                                cursor.start, cursor.end, detail, str(option.get("description") or "")))
    return items


def _case_count(workspace: Workspace, relative: str) -> str:
    parsed = workspace.parsed_dataset(relative)
    if parsed is None:
        return "dataset"
    return counted(len(parsed.rows), "case")


def _suite_at(text: str, line: int) -> dict[str, Any] | None:
    """The suite holding ``line``, as plain values, read with the cursor's line
    blanked (the half-written key there is what usually breaks the parse)."""
    lines = text.split("\n")
    if 0 <= line < len(lines):
        lines[line] = ""
    blanked = "\n".join(lines)
    document = parse_yaml(blanked)
    root = document.root
    if root is None or not root.is_map:
        return None
    suites = root.get("suites")
    if suites is None:
        return None
    offset = sum(len(item) + 1 for item in lines[:line])
    holder = None
    for node in suites.elements():
        if node.is_map and node.start <= offset:
            holder = node
    if holder is None:
        return None
    engines = holder.get("engines")
    metrics = holder.get("metrics")
    return {
        "engines": [e.text() for e in engines.elements() if e.text()] if engines is not None else [],
        "metrics": [str(key.scalar()) for key, _ in metrics.items()] if metrics is not None else [],
    }


# ---------------------------------------------------------------- datasets


def _complete_dataset(
    workspace: Workspace, relative: str, text: str, line: int, character: int, search: IndexSearch | None
) -> Completions | None:
    lines = text.split("\n")
    if line < 0 or line >= len(lines):
        return None
    line_text = lines[line].rstrip("\r")
    if not read_by_checks(line_text, workspace.settings.max_line_bytes):
        return None
    cursor = json_cursor(line_text, character)
    if cursor is None:
        return None
    path = cursor.path
    if cursor.role == KEY:
        if not cursor.in_string and cursor.text:
            return None  # a bare word where a key belongs is not JSON
        schema = load_schema("gdi-text-v1" if workspace.dataset_shape(relative) == GDI_TEXT else "rag-case")
        # The object's other keys are left out: written twice, a key is RAG003.
        present = json_object_keys(line_text, path) - {cursor.text}
        items = []
        for name, subschema in schema_properties(schema, path).items():
            if name in present:
                continue
            insert = _json_key(cursor, name)
            items.append(Completion(name, PROPERTY, insert, cursor.start, cursor.end,
                                    schema_summary(subschema), schema_text(subschema)))
        return _result(line, items, False)
    if len(path) == 3 and path[:2] == ("input", "corpora") and isinstance(path[2], int):
        return _result(line, _corpora(workspace, relative, cursor), False)
    if len(path) == 3 and path[:2] == ("expect", "relevant") and isinstance(path[2], int):
        use = workspace.dataset_use(relative)
        items: list[Completion] = []
        if "corpus" in use.matches:
            items += _corpora(workspace, relative, cursor)
        if "path" in use.matches:
            typed = line_text[cursor.start:character] if cursor.in_string else cursor.text[: character - cursor.start]
            found = suggestions(workspace, relative, line_text, search, skip=path[2]) if search is not None else []
            if typed and found:
                # Once the user types, those of the index's files that match it, beside the others.
                kept = set(fuzzy_paths(typed, [suggestion.path for suggestion in found]))
                found = [suggestion for suggestion in found if suggestion.path in kept]
            for suggestion in found:
                items.append(Completion(suggestion.path, FILE, _json_value(cursor, suggestion.path), cursor.start, cursor.end,
                                        INDEX_DETAIL, suggestion.markdown(), description=INDEX_DESCRIPTION))
            offered = {suggestion.path for suggestion in found}
            files = [path for path in workspace.files() if not path.startswith(".punica/")]
            for name in fuzzy_paths(typed, files):
                if name not in offered:
                    items.append(Completion(name, FILE, _json_value(cursor, name), cursor.start, cursor.end, "workspace file"))
        return _result(line, items, True)
    return None


def _json_key(cursor: JsonCursor, name: str) -> str:
    escaped = json.dumps(name)[1:-1]
    if cursor.in_string:
        return escaped if cursor.closed else f'{escaped}": '
    return f'"{escaped}": '


def _json_value(cursor: JsonCursor, value: str) -> str:
    escaped = json.dumps(value, ensure_ascii=False)[1:-1]
    if cursor.in_string:
        return escaped if cursor.closed else f'{escaped}"'
    return f'"{escaped}"'


def dataset_corpora(workspace: Workspace, relative: str) -> list[str]:
    """The corpora a case of ``relative`` may search: those that every target
    its suites send it to serves, where the targets declare them (what RAG004
    holds `input.corpora` to); of every target when no suite reads it."""
    use = workspace.dataset_use(relative)
    if use.served_corpora:
        every = use.corpora_served_by_all
        # In the order the first target declares them.
        first = workspace.targets()[use.served_corpora[0][0]].corpora or ()
        return [corpus for corpus in first if corpus in every]
    if any(suite.dataset == relative for suite in workspace.suites()):
        return []
    found: dict[str, None] = {}
    for target in workspace.targets().values():
        for corpus in target.corpora or ():
            found[corpus] = None
    return list(found)


def _corpora(workspace: Workspace, relative: str, cursor: JsonCursor) -> list[Completion]:
    return [
        Completion(name, CORPUS, _json_value(cursor, name), cursor.start, cursor.end, "corpus")
        for name in dataset_corpora(workspace, relative)
    ]


# ---------------------------------------------------------------- fuzzy paths


def fuzzy_paths(query: str, paths: list[str], limit: int = PATH_LIMIT) -> list[str]:
    """Up to ``limit`` of ``paths`` that match ``query``, best first.

    Substring matches come first (the path starts with it, then its file name
    does, then anywhere; shorter paths first), then near misses by rapidfuzz's
    partial_ratio, so a typo still finds the file. Linear in the number of paths
    with small constants: a few tens of milliseconds for 50k paths.
    """
    if not query:
        return heapq.nsmallest(limit, paths, key=lambda path: (path.count("/"), path))
    needle = query.lower()
    ranked: list[tuple[int, int, str]] = []
    for path in paths:
        lowered = path.lower()
        index = lowered.find(needle)
        if index < 0:
            continue
        if index == 0:
            rank = 0
        elif index == lowered.rfind("/") + 1:
            rank = 1
        else:
            rank = 2
        ranked.append((rank, len(path), path))
    ranked.sort()
    found = [path for _, _, path in ranked[:limit]]
    if len(found) < limit and len(needle) >= 3:
        seen = set(found)
        for path, _, _ in process.extract(
            query, paths, scorer=fuzz.partial_ratio, processor=utils.default_process,
            limit=limit - len(found) + len(seen), score_cutoff=FUZZY_CUTOFF,
        ):
            if path not in seen:
                found.append(path)
                seen.add(path)
            if len(found) >= limit:
                break
    return found

