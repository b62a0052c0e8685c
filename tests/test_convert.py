"""Findings leave the core as LSP diagnostics and their JSON."""

from __future__ import annotations

from pygls.protocol import default_converter
from test_rules import CASES

from rag_lsp.core.checking.analyze import analyze_workspace
from rag_lsp.core.reading.text import LineIndex
from rag_lsp.core.workspace.workspace import Workspace
import json
import re

from lsprotocol import types

from rag_lsp.core.reading.findings import SOURCE, Finding
from rag_lsp.server.base.convert import Positions, diagnostic_json, finding_json, fix_json, json_text, split_at_line_numbers


def reference_diagnostic(finding: Finding, positions: Positions, related_positions, uri_of, related_information: bool = True) -> types.Diagnostic:
    """A finding as lsprotocol's diagnostic, built field by field from the LSP specification's names."""
    related = None
    if related_information and finding.related:
        related = [
            types.DiagnosticRelatedInformation(
                location=types.Location(uri=uri_of(item.path), range=related_positions(item.path).range(item.range)), message=item.message
            )
            for item in finding.related
        ]
    return types.Diagnostic(
        range=positions.range(finding.range),
        message=finding.message,
        severity=types.DiagnosticSeverity(int(finding.severity)),
        code=finding.code,
        source=SOURCE,
        related_information=related,
        data={"fixes": [fix_json(fix, positions) for fix in finding.fixes]} if finding.fixes else None,
    )


def test_a_diagnostic_written_out_is_what_pygls_converter_writes() -> None:
    """Every finding of every rule fixture (related places, fixes, non-ASCII columns included)
    is written as JSON exactly as pygls's converter writes its diagnostic, key order included."""
    converter = default_converter()
    written: list[dict] = []
    for case in CASES:
        workspace = Workspace(case)
        positions: dict[str, Positions] = {}

        def positions_of(relative: str, workspace: Workspace = workspace, positions: dict[str, Positions] = positions) -> Positions:
            if relative not in positions:
                source = workspace.read(relative)
                positions[relative] = Positions(LineIndex(source.text if source is not None else ""), "utf-16")
            return positions[relative]

        for path, findings in analyze_workspace(workspace).items():
            for finding in findings:
                uri_of = lambda relative: f"file:///ws/{relative}"  # noqa: E731
                diagnostic = reference_diagnostic(finding, positions_of(path), positions_of, uri_of)
                expected = converter.unstructure(diagnostic)
                assert diagnostic_json(diagnostic) == expected
                assert list(diagnostic_json(diagnostic)) == list(expected)
                found = finding_json(finding, positions_of(path), positions_of, uri_of)
                assert json_text(found) == json_text(expected)
                written.append(expected)
    assert any("relatedInformation" in item for item in written)
    assert any("data" in item for item in written)


def test_a_findings_json_written_straight_is_its_diagnostics() -> None:
    """Every finding of every rule fixture, in UTF-16 and in UTF-8 columns, with and without related places,
    is written straight as the JSON of its diagnostic built field by field, key order included."""
    written = 0
    for case in CASES:
        workspace = Workspace(case)
        for encoding in ("utf-16", "utf-8"):
            positions: dict[str, Positions] = {}

            def positions_of(relative: str, workspace: Workspace = workspace, positions: dict[str, Positions] = positions) -> Positions:
                if relative not in positions:
                    source = workspace.read(relative)
                    positions[relative] = Positions(LineIndex(source.text if source is not None else ""), encoding)
                return positions[relative]

            for path, findings in analyze_workspace(workspace).items():
                for finding in findings:
                    for related in (True, False):
                        uri_of = lambda relative: f"file:///ws/{relative}"  # noqa: E731
                        expected = diagnostic_json(reference_diagnostic(finding, positions_of(path), positions_of, uri_of, related))
                        found = finding_json(finding, positions_of(path), positions_of, uri_of, related)
                        assert json_text(found) == json_text(expected)
                        written += 1
    assert written > 100


def _line_values(value: object) -> list[int]:
    """Every "line" key's value in a JSON value, in the order JSON text writes them."""
    if isinstance(value, dict):
        return [number for key, item in value.items() for number in ([item] if key == "line" else _line_values(item))]
    if isinstance(value, list):
        return [number for item in value for number in _line_values(item)]
    return []


def test_a_diagnostics_json_cut_at_its_line_numbers_is_whole_again_with_them() -> None:
    """Every finding of every rule fixture, written by orjson or by the standard encoder, cut where
    its line numbers are, gives its JSON again with each "line" value put back between the pieces
    (how a finding that moved with its line is shifted): nothing else is cut."""
    cut = 0
    for case in CASES:
        workspace = Workspace(case)
        for path, findings in analyze_workspace(workspace).items():
            source = workspace.read(path)
            positions = Positions(LineIndex(source.text if source is not None else ""), "utf-16")
            for finding in findings:
                item = finding_json(finding, positions, lambda relative: positions, lambda relative: f"file:///ws/{relative}")
                for text in (json_text(item), json.dumps(item)):
                    pieces = split_at_line_numbers(text)
                    numbers = _line_values(json.loads(text))
                    assert len(pieces) == len(numbers) + 1
                    assert "".join(piece + str(number) for piece, number in zip(pieces, numbers)) + pieces[-1] == text
                    assert all(re.search(r'"line": ?$', piece) for piece in pieces[:-1])
                    cut += len(numbers)
    assert cut > 100
