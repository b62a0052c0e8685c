"""The workspace's own settings file, read the same way by every shell.

A workspace keeps its rag-lsp settings in ``.punica/rag-lsp.toml``, or in the
``[tool.rag-lsp]`` table of the root's ``pyproject.toml`` (as ruff reads
``[tool.ruff]``); the first wins when both exist. ``rag-lsp check``, ``rag-lsp
run`` and the server all read it, so a workspace gets the same findings in every
shell. What an editor sets applies on top (see :func:`layered`), except
``trusted``, which a file of the workspace could otherwise grant itself.

Reading a file never fails: a value that is not valid is a finding in that file,
on its key or value, and is left out (its setting keeps what lies below it); a
file that is not TOML is one finding at the parser's position.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field, fields
from typing import Any, Callable, Mapping

from .codes import known_codes, rule_finding
from ..reading.findings import Finding, Related
from ..reading.schemacheck import schema_issues, validator_for
from .settings import PARSERS, SHARED_DEFAULTS, Settings, with_values
from ..reading.text import LineIndex, Position, Range
from ..reading.tomlspans import TomlSpan, element_span, repeated_keys, toml_spans

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the same reader, from PyPI, before Python 3.11
    import tomli as tomllib

# The settings files, from the defaults shared with the editors (settings.py):
# rag-lsp's own, and pyproject.toml, which holds them in one table.
CONFIG_PATH: str = next(file["path"] for file in SHARED_DEFAULTS["settingsFiles"] if "table" not in file)
PYPROJECT_PATH: str = next(file["path"] for file in SHARED_DEFAULTS["settingsFiles"] if "table" in file)
PYPROJECT_TABLE: tuple[str, ...] = next(tuple(file["table"]) for file in SHARED_DEFAULTS["settingsFiles"] if "table" in file)
CONFIG_PATHS: tuple[str, ...] = tuple(file["path"] for file in SHARED_DEFAULTS["settingsFiles"])
# `[tool.rag-lsp]`, as messages name it.
PYPROJECT_HEADER = f"[{'.'.join(PYPROJECT_TABLE)}]"
# A line that opens that table, quoted keys allowed: how a file that is not
# TOML shows it was meant to hold rag-lsp's settings.
_PYPROJECT_TABLE_LINE = re.compile(r"^\s*\[\s*" + r"\s*\.\s*".join(f"[\"']?{re.escape(part)}" for part in PYPROJECT_TABLE), re.MULTILINE)

# Key of the file -> field of Settings. The file spells keys as TOML files do
# (`suite-globs`); editors send camelCase (`suiteGlobs`), see settings.ALIASES.
KEYS = {
    "suite-globs": "suite_globs",
    "dataset-globs": "dataset_globs",
    "manifest-globs": "manifest_globs",
    "severity": "severity",
    "per-file-ignores": "per_file_ignores",
    "max-file-bytes": "max_file_bytes",
    "max-yaml-bytes": "max_yaml_bytes",
    "max-line-bytes": "max_line_bytes",
    "max-yaml-depth": "max_yaml_depth",
    "max-yaml-nodes": "max_yaml_nodes",
    "run-timeout": "run_timeout_s",
    "run-concurrency": "run_concurrency",
    "max-findings-shown": "max_findings_shown",
    "baseline": "baseline",
}
FIELD_KEYS = {name: key for key, name in KEYS.items()}

DEFAULTS = "default"
EDITOR = "editor settings"

_POSITION = re.compile(r"\s*\(at line (\d+), column (\d+)\)\s*$")
_AT_END = re.compile(r"\s*\(at end of document\)\s*$")


@dataclass(frozen=True)
class ConfigFile:
    """What one settings file says: the valid values (by Settings field), and a
    finding for each problem, placed in the file."""

    path: str
    values: Mapping[str, Any] = field(default_factory=dict)
    findings: tuple[Finding, ...] = ()

    @property
    def origin(self) -> str:
        return f"{PYPROJECT_PATH} {PYPROJECT_HEADER}" if self.path == PYPROJECT_PATH else self.path


def holds_settings(path: str, text: str) -> bool:
    """Whether a text at ``path`` is a settings file: ``.punica/rag-lsp.toml``
    always, ``pyproject.toml`` when it has a ``[tool.rag-lsp]`` table."""
    if path == CONFIG_PATH:
        return True
    if path != PYPROJECT_PATH or PYPROJECT_TABLE[-1] not in text:
        return False
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError, RecursionError):
        # Broken TOML that mentions rag-lsp: ours to report where it breaks.
        return bool(_PYPROJECT_TABLE_LINE.search(text))
    return _pyproject_table(data) is not None


def _pyproject_table(data: Any) -> Any:
    """What a pyproject.toml's ``data`` holds at ``[tool.rag-lsp]``; None when it has no such table."""
    for part in PYPROJECT_TABLE:
        if not isinstance(data, dict):
            return None
        data = data.get(part)
    return data


def read_config(path: str, text: str) -> ConfigFile:
    """The settings and the problems of the settings file ``path`` (workspace-relative).
    A file nested too deep to read is one RAG005, and none of its settings apply."""
    try:
        return _read_config(path, text)
    except RecursionError:
        return ConfigFile(path, findings=(too_deep_finding(),))


def outside_config(path: str, target: str) -> ConfigFile:
    """The settings file ``path``, a link that leads out of the workspace (to
    ``target``): not read, and none of its settings apply."""
    finding = rule_finding(
        "RAG005",
        Range.of(0, 0, 0, 0),
        f"input refused: {path} is a link to {target}, outside the workspace; settings are read only from "
        "the workspace's own files, so none of these apply: copy the file into the workspace instead of linking it",
    )
    return ConfigFile(path, findings=(finding,))


def too_deep_finding() -> Finding:
    """RAG005 on a settings file nested too deep to be read."""
    return rule_finding(
        "RAG005",
        Range.of(0, 0, 0, 0),
        "input refused: the TOML is nested too deep to be read (no setting nests more than two levels); "
        "the file's settings are not used until it is fixed",
    )


def _read_config(path: str, text: str) -> ConfigFile:
    lines = LineIndex(text)
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError) as error:
        repeated = repeated_keys(text)
        if repeated:
            return ConfigFile(path, findings=tuple(_repeated_finding(path, lines, *each) for each in repeated))
        return ConfigFile(path, findings=(_syntax_finding(lines, str(error)),))
    prefix: tuple[str, ...] = ()
    if path == PYPROJECT_PATH:
        prefix = PYPROJECT_TABLE
        data = _pyproject_table(data)
        if data is None:
            return ConfigFile(path)
    spans = toml_spans(text)
    place = _placer(lines, spans, prefix)
    findings: list[Finding] = []
    if not isinstance(data, dict):
        findings.append(_schema_finding(place((), "value"), f"{PYPROJECT_HEADER} must be a table of settings"))
        return ConfigFile(path, findings=tuple(findings))
    data = dict(data)
    if "trusted" in data:
        del data["trusted"]
        findings.append(
            _schema_finding(
                place(("trusted",), "key"),
                "`trusted` cannot be set by a file of the workspace: a checkout could grant itself the right to run "
                "commands. Trust the workspace in your editor (setting ragLsp.trusted) instead, and remove this key",
            )
        )
    issues = schema_issues(validator_for("config"), data)
    unknown = _unknown_code_places(data)
    findings += [_schema_finding(place(issue.path, issue.anchor), _said(issue, data)) for issue in issues]
    findings += _unknown_code_findings(data, unknown, place)
    # A setting with any problem is left out whole (half a list of globs would
    # check other files than either the file or the default says); in the tables
    # of codes and of globs, only the entry with the problem, and in a glob's
    # list of codes to ignore, only the code.
    bad = {_setting_of(issue.path) for issue in issues if issue.path} | {_setting_of(path) for path in unknown}
    values: dict[str, Any] = {}
    for key, value in data.items():
        name = KEYS.get(key)
        if name is None or (key,) in bad:
            continue
        if isinstance(value, dict):
            value = {
                inner: [code for index, code in enumerate(item) if (key, inner, index) not in bad] if isinstance(item, list) else item
                for inner, item in value.items()
                if (key, inner) not in bad
            }
        try:
            values[name] = PARSERS[name](_from_file(name, value))
        except ValueError as error:
            findings.append(_schema_finding(place((key,), "value"), f"{key}: {error}"))
    findings.sort(key=Finding.sort_key)
    return ConfigFile(path, values, tuple(findings))


def find_config(read: Callable[[str], str | None]) -> ConfigFile | None:
    """The settings file in force in a workspace (``read`` gives a workspace
    file's text, or None), read; None when the workspace has none."""
    for path in CONFIG_PATHS:
        text = read(path)
        if text is not None and holds_settings(path, text):
            return read_config(path, text)
    return None


def layered(config: ConfigFile | None, editor: Mapping[str, Any] | None = None, base: Settings | None = None) -> Settings:
    """The settings in force: the defaults, then the file's values, then what the
    editor set (see settings.with_values; ``trusted`` comes from the editor only)."""
    settings = with_values(base or Settings(), config.values if config is not None else {})
    return with_values(settings, editor or {})


def origins(config: ConfigFile | None, editor: Mapping[str, Any] | None = None) -> dict[str, str]:
    """Where the value in force of each setting comes from (see :func:`layered`)."""
    found = {item.name: DEFAULTS for item in fields(Settings)}
    for origin, values in ((config.origin if config else "", config.values if config else {}), (EDITOR, editor or {})):
        for name in values:
            found[name] = origin
    return found


def _setting_of(path: tuple[Any, ...]) -> tuple[Any, ...]:
    """The part of the settings a problem at ``path`` spoils: a whole setting,
    one entry of the tables by code or by glob, or one code of a glob's list."""
    if path[0] == "per-file-ignores" and len(path) > 2 and type(path[2]) is int:
        return tuple(path[:3])
    return tuple(path[:2]) if path[0] in ("severity", "per-file-ignores") and len(path) > 1 else tuple(path[:1])


# The schema's pattern of a rule code, as its errors quote it.
_CODE_PATTERN = "'^[Rr][Aa][Gg][0-9]{3}$'"


def _said(issue: Any, data: dict[str, Any]) -> str:
    """An issue's message, but for a code that is not one, what a person reads:
    not the pattern it fails."""
    if _CODE_PATTERN not in issue.message:
        return issue.message
    path = issue.path
    written = path[-1] if path[0] == "severity" else _value_at(data, path)
    from rapidfuzz import process
    near = process.extractOne(str(written).upper(), sorted(known_codes()), score_cutoff=70) if isinstance(written, str) else None
    meant = f" (did you mean {near[0]!r}?)" if near else ""
    return f"{written!r} is not a rule code, which is RAG and three digits{meant}"


def _value_at(data: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return None
    return data


def _from_file(name: str, value: Any) -> Any:
    """A file's value in the shape the settings parsers take (they parse editor settings)."""
    if name == "run_timeout_s" and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def _unknown_code_places(data: dict[str, Any]) -> list[tuple[Any, ...]]:
    """The path of each well-formed code that no rule has (a code of another form is the schema's)."""
    known = known_codes()
    places = []
    severity = data.get("severity")
    if isinstance(severity, dict):
        places += [("severity", code) for code in severity if _unknown(code, known)]
    ignores = data.get("per-file-ignores")
    if isinstance(ignores, dict):
        for glob, codes in ignores.items():
            if isinstance(codes, list):
                places += [("per-file-ignores", glob, index) for index, code in enumerate(codes) if _unknown(code, known)]
    return places


def _unknown(code: Any, known: Mapping[str, Any]) -> bool:
    return isinstance(code, str) and re.fullmatch(r"[Rr][Aa][Gg][0-9]{3}", code) is not None and code.upper() not in known


def _unknown_code_findings(data: dict[str, Any], paths: list[tuple[Any, ...]], place: Callable[[tuple[Any, ...], str], Range]) -> list[Finding]:
    known = sorted(known_codes())
    findings = []
    for path in paths:
        code = path[1] if path[0] == "severity" else data[path[0]][path[1]][path[2]]
        findings.append(
            _schema_finding(
                place(path, "key" if path[0] == "severity" else "value"),
                f"no rule has the code {code!r}: codes run {known[0]} to {known[-1]} (rag-lsp check --explain CODE)",
            )
        )
    return findings


def _placer(lines: LineIndex, spans: Mapping[tuple[str, ...], TomlSpan], prefix: tuple[str, ...]) -> Callable[[tuple[Any, ...], str], Range]:
    """Where a finding about the value (or key) at a path of the settings goes: on
    that key or value, else on the nearest enclosing one found."""

    def place(path: tuple[Any, ...], anchor: str) -> Range:
        keys = tuple(part for part in path if isinstance(part, str))
        if len(keys) < len(path):
            # An element of a list: underlined itself where it can be found, else with its list.
            anchor = "value"
            span = spans.get(prefix + keys)
            index = path[len(keys)]
            found = element_span(lines.text, span, index) if span is not None and type(index) is int else None
            if found is not None:
                return lines.range(*found)
        for depth in range(len(keys), -1, -1):
            span = spans.get(prefix + keys[:depth])
            if span is not None:
                if anchor == "key" or depth < len(keys):
                    return lines.range(span.key_start, span.key_end)
                return lines.range(span.value_start, max(span.value_end, span.value_start + 1))
        return Range.of(0, 0, 0, 0)

    return place


def _syntax_finding(lines: LineIndex, message: str) -> Finding:
    position = _POSITION.search(message)
    if position is not None:
        line, column = int(position.group(1)) - 1, int(position.group(2)) - 1
        message = message[: position.start()]
        offset = lines.offset(Position(line, column))
    else:
        offset = len(lines.text)
        message = _AT_END.sub("", message)
    start = min(offset, len(lines.text))
    end = min(start + 1, len(lines.text))
    if end == start or lines.text[start] == "\n":
        end = start
    return rule_finding(
        "RAG001",
        lines.range(start, end),
        f"TOML is not well-formed: {message[0].lower() + message[1:] if message else 'cannot be read'}; "
        "the file's settings are not used until it is fixed",
    )


def _repeated_finding(path: str, lines: LineIndex, key: tuple[str, ...], first: TomlSpan, again: TomlSpan) -> Finding:
    """RAG003 on a key set twice, with where it was set first."""
    name = ".".join(key)
    return rule_finding(
        "RAG003",
        lines.range(again.key_start, again.key_end),
        f"{name!r} is set twice, which TOML does not allow: remove one (the file's settings are not used until then)",
        related=[Related(path, lines.range(first.key_start, first.key_end), "first set here")],
    )


def _schema_finding(range_: Range, message: str) -> Finding:
    return rule_finding("RAG004", range_, message)
