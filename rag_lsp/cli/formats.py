"""Output formats of ``rag-lsp check``: text, json, sarif, github.

Text and GitHub annotations count columns in characters, 1-based, as compilers
and GitHub do. JSON and SARIF give LSP ranges: 0-based, columns in UTF-16 code
units (LSP's default and SARIF's ``utf16CodeUnits``), so they match what an editor
shows for the same finding.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable
from urllib.parse import quote

import orjson

from .. import __version__
from ..core.reading.findings import Finding, Severity
from ..core.checking.folding import covered_lines
from ..core.checking.rules import all_rules
from ..core.reading.text import Lines, Range, utf16_character
from ..core.reading.wording import counted
from ..core.workspace.workspace import Workspace


@dataclass
class Checked:
    """What a check saw: each file with its findings and its workspace."""

    files: list[tuple[Workspace, str, list[Finding]]] = field(default_factory=list)
    _lines: dict[tuple[Path, str], Lines] = field(default_factory=dict)

    def add(self, workspace: Workspace, path: str, findings: list[Finding]) -> None:
        self.files.append((workspace, path, findings))

    @property
    def findings(self) -> list[Finding]:
        return [finding for _, _, findings in self.files for finding in findings]

    def each(self):
        for workspace, path, findings in self.files:
            for finding in findings:
                yield workspace, finding

    def lines(self, workspace: Workspace, path: str) -> Lines:
        key = (workspace.root, path)
        if key not in self._lines:
            self._lines[key] = workspace.lines_of(path)
        return self._lines[key]

    def utf16(self, workspace: Workspace, path: str, range: Range) -> dict:
        lines = self.lines(workspace, path)

        def position(line: int, character: int) -> dict:
            return {"line": line, "character": utf16_character(lines.line_text(line), character)}

        return {"start": position(*_pair(range.start)), "end": position(*_pair(range.end))}


def _pair(position) -> tuple[int, int]:
    return position.line, position.character


def _display_paths() -> Callable[[Workspace, str], str]:
    """:func:`_display_path`, each file's worked out once (findings come file by
    file, thousands of them in a large dataset)."""
    shown: dict[tuple[int, str], str] = {}

    def display(workspace: Workspace, path: str) -> str:
        key = (id(workspace), path)
        if key not in shown:
            shown[key] = _display_path(workspace, path)
        return shown[key]

    return display


def _display_path(workspace: Workspace, path: str) -> str:
    """The path as a person at this shell would type it."""
    absolute = workspace.absolute(path)
    try:
        relative = os.path.relpath(absolute)
    except ValueError:  # another drive on Windows
        return str(absolute)
    return relative if not relative.startswith("../../..") else str(absolute)


def summary(checked: Checked) -> str:
    counts = {severity: 0 for severity in Severity}
    for finding in checked.findings:
        counts[finding.severity] += 1
    checked_files = counted(len(checked.files), "file")
    if not any(counts.values()):
        return f"All checks passed ({checked_files} checked)."
    parts = [
        counted(counts[severity], label)
        for severity, label in (
            (Severity.ERROR, "error"),
            (Severity.WARNING, "warning"),
            (Severity.INFORMATION, "note"),
            (Severity.HINT, "hint"),
        )
        if counts[severity]
    ]
    with_findings = sum(1 for _, _, findings in checked.files if findings)
    return f"Found {', '.join(parts)} in {counted(with_findings, 'file')} ({checked_files} checked)."


def format_text(checked: Checked) -> str:
    out = []
    display = _display_paths()
    # A file's findings come together: its path and their labels are worked out once each.
    labels = {severity: severity.label for severity in Severity}
    for workspace, path, findings in checked.files:
        shown = display(workspace, path)
        for finding in findings:
            start = finding.range.start
            where_found = shown if finding.path == path else display(workspace, finding.path)
            out.append(f"{where_found}:{start.line + 1}:{start.character + 1}: {labels[finding.severity]} {finding.code} {finding.message}")
            for related in finding.related:
                where = related.range.start
                out.append(f"    {display(workspace, related.path)}:{where.line + 1}:{where.character + 1}: {related.message}")
    out.append(summary(checked))
    return "\n".join(out) + "\n"


def format_json(checked: Checked) -> str:
    items = []
    for workspace, finding in checked.each():
        item = {
            "path": finding.path,
            "range": checked.utf16(workspace, finding.path, finding.range),
            "severity": finding.severity.label,
            "code": finding.code,
            "message": finding.message,
        }
        if finding.covers:
            # A folded finding (one cause on most rows): how many findings it stands
            # for, and every line they are on (0-based, as ranges are).
            item["covers"] = {"findings": len(finding.covers), "lines": covered_lines(finding.covers)}
        items.append(item)
    return _indented_json(items)


def _indented_json(value: object) -> str:
    """``value`` as json.dumps(indent=2, ensure_ascii=False) writes it, and a line
    break: by orjson, fifteen times faster (thousands of findings of a large
    dataset); a lone surrogate in a message is left to json to escape."""
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode("utf-8") + "\n"
    except orjson.JSONEncodeError:
        return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


# The lines of a folded finding given as SARIF related places: GitHub code
# scanning, for one, takes at most a thousand related locations per result.
SARIF_RELATED_LINES = 1000

_SARIF_LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFORMATION: "note", Severity.HINT: "note"}


def format_sarif(checked: Checked) -> str:
    rules = all_rules()
    roots = sorted({str(workspace.root) for workspace, _, _ in checked.files})
    base_ids = {root: ("%SRCROOT%" if index == 0 else f"ROOT{index}") for index, root in enumerate(roots)}

    def region(workspace: Workspace, path: str, range: Range) -> dict:
        lsp = checked.utf16(workspace, path, range)
        return {
            "startLine": lsp["start"]["line"] + 1,
            "startColumn": lsp["start"]["character"] + 1,
            "endLine": lsp["end"]["line"] + 1,
            "endColumn": lsp["end"]["character"] + 1,
        }

    def location(workspace: Workspace, path: str, range: Range, message: str | None = None) -> dict:
        found = {
            "physicalLocation": {
                "artifactLocation": {"uri": _uri_reference(path), "uriBaseId": base_ids[str(workspace.root)]},
                "region": region(workspace, path, range),
            }
        }
        if message:
            found["message"] = {"text": message}
        return found

    def line_location(workspace: Workspace, path: str, line: int, message: str) -> dict:
        return {
            "physicalLocation": {
                "artifactLocation": {"uri": _uri_reference(path), "uriBaseId": base_ids[str(workspace.root)]},
                "region": {"startLine": line + 1},
            },
            "message": {"text": message},
        }

    rule_index = {code: index for index, code in enumerate(rules)}
    results = []
    for workspace, finding in checked.each():
        result = {
            "ruleId": finding.code,
            "ruleIndex": rule_index.get(finding.code, -1),
            "level": _SARIF_LEVELS[finding.severity],
            "message": {"text": finding.message},
            "locations": [location(workspace, finding.path, finding.range)],
        }
        related = [location(workspace, item.path, item.range, item.message) for item in finding.related]
        if finding.covers:
            # A folded finding (one cause on most rows): every line it stands on, in
            # its properties; the first of them as related places too (viewers
            # show a few, and some refuse a result with more).
            lines = covered_lines(finding.covers)
            related += [line_location(workspace, finding.path, line, f"{finding.code} here too") for line in lines[:SARIF_RELATED_LINES]]
            result["properties"] = {"covers": len(finding.covers), "coveredLines": [line + 1 for line in lines]}
        if related:
            result["relatedLocations"] = [{"id": index, **place} for index, place in enumerate(related)]
        results.append(result)
    sarif = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "rag-lsp",
                        "version": __version__,
                        "informationUri": "https://github.com/rag-lsp/rag-lsp",
                        "rules": [
                            {
                                "id": rule.code,
                                "name": rule.name,
                                "shortDescription": {"text": rule.summary},
                                "fullDescription": {"text": rule.summary},
                                "help": {"text": rule.documentation, "markdown": rule.documentation},
                                "defaultConfiguration": {"level": _SARIF_LEVELS[rule.severity]},
                            }
                            for rule in rules.values()
                        ],
                    }
                },
                "originalUriBaseIds": {base_ids[root]: {"uri": Path(root).as_uri() + "/"} for root in roots},
                "columnKind": "utf16CodeUnits",
                "results": results,
            }
        ],
    }
    return _indented_json(sarif)


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


_GITHUB_COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFORMATION: "notice", Severity.HINT: "notice"}


def format_github(checked: Checked) -> str:
    """GitHub Actions workflow commands: one annotation per finding."""
    out = []
    display = _display_paths()
    for workspace, finding in checked.each():
        start, end = finding.range.start, finding.range.end
        properties = ",".join(
            f"{key}={_escape_property(str(value))}"
            for key, value in (
                ("file", display(workspace, finding.path)),
                ("line", start.line + 1),
                ("col", start.character + 1),
                ("endLine", end.line + 1),
                ("endColumn", end.character + 1),
                ("title", f"{finding.code} ({all_rules()[finding.code].name})" if finding.code in all_rules() else finding.code),
            )
        )
        out.append(f"::{_GITHUB_COMMANDS[finding.severity]} {properties}::{_escape_data(finding.message)}")
    out.append(summary(checked))
    return "\n".join(out) + "\n"


FORMATS: dict[str, Callable[[Checked], str]] = {
    "text": format_text,
    "json": format_json,
    "sarif": format_sarif,
    "github": format_github,
}


def _uri_reference(path: str) -> str:
    """A workspace path as the relative URI reference SARIF wants: a space, `#`,
    `%` or `?` in a file name is percent-encoded, or it would end the path."""
    return quote(path, safe="/", errors="surrogatepass")
