"""Findings leave the core as LSP diagnostics and their JSON."""

from __future__ import annotations

from pygls.protocol import default_converter
from test_rules import CASES

from rag_lsp.core.analyze import analyze_workspace
from rag_lsp.core.text import LineIndex
from rag_lsp.core.workspace import Workspace
from rag_lsp.server.convert import Positions, diagnostic_json, to_diagnostic


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
                diagnostic = to_diagnostic(finding, positions_of(path), positions_of, lambda relative: f"file:///ws/{relative}")
                expected = converter.unstructure(diagnostic)
                assert diagnostic_json(diagnostic) == expected
                assert list(diagnostic_json(diagnostic)) == list(expected)
                written.append(expected)
    assert any("relatedInformation" in item for item in written)
    assert any("data" in item for item in written)
