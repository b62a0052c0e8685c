"""Settings: one typed, defaulted object shared by the CLI and the server.

Values come from the workspace's settings file (``core.workspace.config``), then from the
server's initialization options and ``workspace/configuration`` (section
``ragLsp``), or from CLI flags. :func:`editor_values` never fails: a bad value is
reported and left out, so the value below it stays.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

from ..reading.findings import SHOWN_PER_CODE, Severity

# The defaults every editor integration shares with the server (its globs, the
# settings files, the workspace root's markers): written once, in this JSON
# file, which docs/generate.py copies into each editor's source.
SHARED_DEFAULTS_PATH = Path(__file__).with_name("defaults.json")


def _shared_defaults() -> dict[str, Any]:
    return json.loads(SHARED_DEFAULTS_PATH.read_text(encoding="utf-8"))


SHARED_DEFAULTS: Mapping[str, Any] = MappingProxyType(_shared_defaults())

DEFAULT_SUITE_GLOBS: tuple[str, ...] = tuple(SHARED_DEFAULTS["suiteGlobs"])
DEFAULT_DATASET_GLOBS: tuple[str, ...] = tuple(SHARED_DEFAULTS["datasetGlobs"])
DEFAULT_MANIFEST_GLOBS: tuple[str, ...] = tuple(SHARED_DEFAULTS["manifestGlobs"])

OFF = "off"

# What each setting means that only an editor may set: a workspace's settings
# file cannot hold it (the others are described by that file's JSON Schema,
# schemas/config.schema.json).
EDITOR_ONLY = {
    "trusted": "May `command` and `http` targets run: they run code or reach services named by workspace "
    "files, so only the editor (its workspace trust, or your own configuration) grants it, never a "
    "workspace file. `builtin` and `recorded` targets always run.",
}


@dataclass(frozen=True)
class Settings:
    suite_globs: tuple[str, ...] = DEFAULT_SUITE_GLOBS
    dataset_globs: tuple[str, ...] = DEFAULT_DATASET_GLOBS
    manifest_globs: tuple[str, ...] = DEFAULT_MANIFEST_GLOBS
    # Code -> severity, or "off" to silence the code.
    severity: Mapping[str, Severity | str] = field(default_factory=dict)
    # Glob (workspace-relative) -> codes silenced in the files it matches.
    per_file_ignores: Mapping[str, frozenset[str]] = field(default_factory=dict)
    # Files above this size are refused with RAG005 instead of being read.
    max_file_bytes: int = 64 * 1024 * 1024
    # YAML files are composed into a tree; they get a lower ceiling.
    max_yaml_bytes: int = 4 * 1024 * 1024
    # A single dataset line above this size is refused with RAG005.
    max_line_bytes: int = 1024 * 1024
    max_yaml_depth: int = 64
    max_yaml_nodes: int = 200_000
    trusted: bool = False
    run_timeout_s: float = 60.0
    # Requests a run keeps in flight at once (http targets).
    run_concurrency: int = 4
    baseline: str | None = None
    # The most findings of one code an editor is shown for one file (see
    # findings.shown_in_editor); `rag-lsp check` lists them all.
    max_findings_shown: int = SHOWN_PER_CODE

    def severity_of(self, path: str, code: str, severity: Severity) -> Severity | None:
        """The severity a finding of ``code`` in the file ``path`` is shown with
        (its rule's ``severity`` unless overridden); None when it is silenced."""
        override = self.severity.get(code)
        if override == OFF:
            return None
        if self.per_file_ignores and self._ignored_in(path, code):
            return None
        return override if isinstance(override, Severity) else severity

    def _ignored_in(self, path: str, code: str) -> bool:
        from .files import glob_match

        return any(code in codes and glob_match(path, (glob,)) for glob, codes in self.per_file_ignores.items())


# camelCase names used by editors -> field names.
_ALIASES = {
    "suiteGlobs": "suite_globs",
    "datasetGlobs": "dataset_globs",
    "manifestGlobs": "manifest_globs",
    "maxFileBytes": "max_file_bytes",
    "maxYamlBytes": "max_yaml_bytes",
    "maxLineBytes": "max_line_bytes",
    "maxYamlDepth": "max_yaml_depth",
    "maxYamlNodes": "max_yaml_nodes",
    "runTimeout": "run_timeout_s",
    "runTimeoutS": "run_timeout_s",
    "runConcurrency": "run_concurrency",
    "maxFindingsShown": "max_findings_shown",
    "perFileIgnores": "per_file_ignores",
}


def _glob_list(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(item, str) and item for item in value):
        raise ValueError("expected a list of glob strings")
    return tuple(value)


def _positive_int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError("expected a positive integer")
    return value


# The highest values a setting takes. A YAML file nested deeper than MAX_YAML_DEPTH
# is read by recursion past what the interpreter allows; a timeout past a day
# overflows the clocks the targets wait with; more requests in flight than
# MAX_RUN_CONCURRENCY would start that many threads against one service.
MAX_YAML_DEPTH = 200
MAX_RUN_TIMEOUT_S = 86_400.0
MAX_RUN_CONCURRENCY = 256


def _at_most(parse: Any, highest: float) -> Any:
    def parse_bounded(value: Any) -> Any:
        parsed = parse(value)
        if parsed > highest:
            raise ValueError(f"expected at most {highest:,g}, got {value!r}")
        return parsed

    return parse_bounded


def _positive_number(value: Any) -> float:
    # NaN compares with nothing and infinity never times out: neither is a number here.
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"expected a positive number, got {value!r}")
    try:
        number = float(value)  # an integer past a double's range raises OverflowError
    except OverflowError:
        raise ValueError(f"expected a number within a double's range, got {value!r}") from None
    if not math.isfinite(number) or number <= 0:
        raise ValueError(f"expected a positive number, got {value!r}")
    return number


def _boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError("expected true or false")
    return value


def _severities(value: Any) -> dict[str, Severity | str]:
    if not isinstance(value, dict):
        raise ValueError("expected a mapping of code to severity")
    result: dict[str, Severity | str] = {}
    for code, level in value.items():
        if not isinstance(code, str) or not isinstance(level, str):
            raise ValueError(f"severity of {code!r}: expected error, warning, information, hint or off")
        try:
            result[code.upper()] = OFF if level.strip().lower() == OFF else Severity.parse(level)
        except ValueError as error:
            raise ValueError(f"severity of {code!r}: {error}") from None
    return result


def _ignores(value: Any) -> dict[str, frozenset[str]]:
    if not isinstance(value, dict):
        raise ValueError("expected a mapping of glob to a list of codes")
    result: dict[str, frozenset[str]] = {}
    for glob, codes in value.items():
        if not isinstance(glob, str) or not glob or not isinstance(codes, list) or not all(isinstance(code, str) for code in codes):
            raise ValueError(f"ignores of {glob!r}: expected a list of codes such as [\"RAG205\"]")
        result[glob] = frozenset(code.strip().upper() for code in codes)
    return result


def _optional_text(value: Any) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ValueError("expected a path")
    return value


PARSERS = {
    "suite_globs": _glob_list,
    "dataset_globs": _glob_list,
    "manifest_globs": _glob_list,
    "severity": _severities,
    "per_file_ignores": _ignores,
    "max_file_bytes": _positive_int,
    "max_yaml_bytes": _positive_int,
    "max_line_bytes": _positive_int,
    "max_yaml_depth": _at_most(_positive_int, MAX_YAML_DEPTH),
    "max_yaml_nodes": _positive_int,
    "trusted": _boolean,
    "run_timeout_s": _at_most(_positive_number, MAX_RUN_TIMEOUT_S),
    "run_concurrency": _at_most(_positive_int, MAX_RUN_CONCURRENCY),
    "baseline": _optional_text,
    "max_findings_shown": _positive_int,
}


def editor_values(options: Any) -> tuple[dict[str, Any], list[str]]:
    """The settings a client's options set (by field), and a message for each
    value left out; ``trusted`` is among them (only an editor may set it)."""
    problems: list[str] = []
    if options is None:
        return {}, problems
    if not isinstance(options, dict):
        return {}, [f"ragLsp settings must be an object, got {type(options).__name__}; using defaults"]
    known = {f.name for f in fields(Settings)}
    values: dict[str, Any] = {}
    for key, value in options.items():
        name = _ALIASES.get(key, key)
        if name not in known:
            problems.append(f"unknown ragLsp setting {key!r} is ignored")
            continue
        if value is None:
            continue
        if name in _TABLES and isinstance(value, dict):
            # A table is taken entry by entry: one bad code leaves out only itself.
            table: dict[str, Any] = {}
            for entry, item in value.items():
                try:
                    table.update(PARSERS[name]({entry: item}))
                except ValueError as error:
                    problems.append(f"ragLsp setting {key!r}: {error}; that entry is left out")
            values[name] = table
            continue
        try:
            values[name] = PARSERS[name](value)
        except ValueError as error:
            problems.append(f"ragLsp setting {key!r}: {error}; using the default")
    return values, problems


# Settings that are tables: a layer on top sets their entries, not the whole table.
_TABLES = ("severity", "per_file_ignores")


def layered_values(below: Mapping[str, Any], above: Mapping[str, Any]) -> dict[str, Any]:
    """``above``'s values over ``below``'s; severities and per-file ignores merged
    code by code and glob by glob (an editor that silences one code keeps the
    workspace's other choices)."""
    merged = dict(below)
    for name, value in above.items():
        if name in _TABLES and name in merged:
            value = {**merged[name], **value}
        merged[name] = value
    return merged


def with_values(settings: Settings, values: Mapping[str, Any]) -> Settings:
    """``settings`` with ``values`` on top (see layered_values)."""
    if not values:
        return settings
    below = {name: getattr(settings, name) for name in _TABLES}
    return replace(settings, **layered_values(below, values))


@dataclass(frozen=True)
class EditorSettings:
    """What an editor set, by Settings field (initialization options, then
    ``workspace/configuration``): it applies on top of each workspace's settings
    file (see Workspace.configured). Only an editor may set ``trusted``."""

    values: Mapping[str, Any] = field(default_factory=dict)

    @property
    def trusted(self) -> bool:
        return bool(self.values.get("trusted", False))

    def then(self, later: EditorSettings) -> EditorSettings:
        """These settings with ``later``'s on top (see layered_values)."""
        return EditorSettings(layered_values(self.values, later.values))


def settings_from(options: Any, base: Settings | None = None) -> tuple[Settings, list[str]]:
    """Settings from a client's options on top of ``base``, and a message for each value left out."""
    values, problems = editor_values(options)
    return with_values(base or Settings(), values), problems
