"""Settings: typed, defaulted, and applied by the one analysis."""

from __future__ import annotations

from pathlib import Path

from rag_lsp.core.checking.analyze import analyze_workspace
from rag_lsp.core.reading.findings import Severity
from rag_lsp.core.workspace.settings import Settings, settings_from
from rag_lsp.core.workspace.workspace import Workspace

RULES = Path(__file__).parent / "fixtures" / "rules"


def codes(workspace: Workspace) -> dict[str, Severity]:
    return {f.code: f.severity for findings in analyze_workspace(workspace).values() for f in findings}


def test_severity_overrides_change_or_silence_codes() -> None:
    """A severity override changes a code's severity; "off" removes its findings."""
    root = RULES / "RAG103" / "thresholds-block"
    assert codes(Workspace(root)) == {"RAG103": Severity.WARNING}
    settings, problems = settings_from({"severity": {"rag103": "error"}})
    assert problems == [] and codes(Workspace(root, settings)) == {"RAG103": Severity.ERROR}
    settings, _ = settings_from({"severity": {"RAG103": "off"}})
    assert codes(Workspace(root, settings)) == {}


def test_bad_settings_are_reported_and_replaced_by_defaults() -> None:
    """A bad value never fails: it is named in a message and its default is kept."""
    settings, problems = settings_from(
        {"maxFileBytes": -1, "suiteGlobs": [], "trusted": "yes", "severity": {"RAG200": "loud"}, "colour": 1, "runTimeout": 5}
    )
    assert settings.max_file_bytes == Settings().max_file_bytes
    assert settings.suite_globs == Settings().suite_globs
    assert settings.trusted is False and settings.severity == {}
    assert settings.run_timeout_s == 5.0
    assert len(problems) == 5 and any("colour" in problem for problem in problems)


def test_an_editor_table_of_codes_leaves_out_only_its_bad_entries() -> None:
    """Severities and per-file ignores set by an editor are taken entry by entry: each bad entry is named in its own message and left out, the others apply."""
    settings, problems = settings_from(
        {"severity": {"RAG207": "of", "RAG103": "off", "RAG205": 3}, "perFileIgnores": {"a/**": ["RAG205"], "b/**": "RAG1"}}
    )
    assert settings.severity == {"RAG103": "off"}
    assert settings.per_file_ignores == {"a/**": frozenset({"RAG205"})}
    assert len(problems) == 3
    assert any("severity of 'RAG207'" in problem for problem in problems)
    assert any("severity of 'RAG205'" in problem for problem in problems)
    assert any("ignores of 'b/**'" in problem for problem in problems)


def test_settings_that_are_not_an_object_fall_back_to_defaults() -> None:
    """Options of the wrong type give the defaults and one message."""
    settings, problems = settings_from(["not", "an", "object"])
    assert settings == Settings() and len(problems) == 1
