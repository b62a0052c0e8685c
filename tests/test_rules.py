"""Every rule, proven on text fixtures.

Each folder ``tests/fixtures/rules/<CODE>/<case>/`` is a small workspace (it holds
``.punica/``). ``expected.txt`` lists every finding of the workspace, one per line
as ``path range CODE message`` with 0-based code-point ranges ("2:4-2:9"), so a
fixture proves both that the rule fires and that nothing else does. A file
``<path>.fixed`` beside a checked file is that file after applying every quick fix.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rag_lsp.core.analyze import analyze_file, analyze_workspace
from rag_lsp.core.rules import all_rules
from rag_lsp.core.text import apply_edits
from rag_lsp.core.sources import DiskSource, OverlaySource
from rag_lsp.core.workspace import Workspace

RULE_FIXTURES = Path(__file__).parent / "fixtures" / "rules"
CASES = sorted(path for path in RULE_FIXTURES.glob("RAG*/*") if path.is_dir())
SPEC_CODES = [f"RAG{n:03d}" for n in (1, 2, 3, 4, 5, *range(100, 112), *range(200, 209), 300, 301, 302, 303)]


def render(workspace: Workspace) -> list[str]:
    lines = []
    for path, findings in analyze_workspace(workspace).items():
        for finding in findings:
            lines.append(f"{path} {finding.range} {finding.code} {finding.message}")
    return lines


@pytest.mark.parametrize("case", CASES, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_fixture_findings(case: Path) -> None:
    """The workspace's findings are exactly those in expected.txt."""
    expected = [line for line in (case / "expected.txt").read_text(encoding="utf-8").splitlines() if line.strip()]
    assert render(Workspace(case)) == expected


@pytest.mark.parametrize("case", [c for c in CASES if list(c.rglob("*.fixed"))], ids=lambda path: f"{path.parent.name}/{path.name}")
def test_fixture_fixes(case: Path) -> None:
    """Applying every quick fix of the rule gives the .fixed file, byte for byte."""
    code = case.parent.name
    for fixed in case.rglob("*.fixed"):
        relative = fixed.relative_to(case).as_posix()[: -len(".fixed")]
        source = OverlaySource(DiskSource(1 << 30))
        workspace = Workspace(case, source=source)
        text = _read_exactly(case / relative)
        applied = 0
        # One fix at a time, re-checking in between, as a person clicking them would.
        for _ in range(20):
            source.texts[workspace.absolute(relative)] = text
            workspace.invalidate()
            fixes = [fix for f in analyze_file(workspace, relative) if f.code == code for fix in f.fixes if fix.edits]
            if not fixes:
                break
            text = apply_edits(text, [(edit.range, edit.new_text) for edit in fixes[0].edits])
            applied += 1
        assert applied, f"no {code} fix for {relative}"
        assert text == _read_exactly(fixed)


def _read_exactly(path: Path) -> str:
    # Line endings as written: a fix must keep CRLF files CRLF.
    with open(path, encoding="utf-8", newline="") as file:
        return file.read()


@pytest.mark.parametrize("code", SPEC_CODES)
def test_every_spec_code_has_a_documented_rule_and_a_fixture(code: str) -> None:
    """Each code of SPEC §3 up to RAG303 is a rule with docs, checks and a fixture."""
    rule = all_rules().get(code)
    assert rule is not None, f"{code} has no rule"
    assert rule.checks, f"{code} checks nothing"
    for section in ("## What it does", "## Why is this bad?", "## Example", "## How to fix"):
        assert section in rule.doc, f"{code} doc lacks {section!r}"
    cases = [case for case in CASES if case.parent.name == code]
    assert cases, f"{code} has no fixture"
    assert any(re.search(rf" {code} ", line) for case in cases for line in (case / "expected.txt").read_text().splitlines()), (
        f"no fixture of {code} shows it firing"
    )


@pytest.mark.parametrize("code", SPEC_CODES)
def test_every_spec_code_has_a_fixture_where_it_does_not_fire(code: str) -> None:
    """Each code of SPEC §3 up to RAG303 also has a fixture where it must stay
    silent (a near miss of the firing ones, named ``passes-...``): a rule that
    fires everywhere would pass every firing fixture."""
    cases = [case for case in CASES if case.parent.name == code]
    silent = [
        case
        for case in cases
        if not any(re.search(rf" {code} ", line) for line in (case / "expected.txt").read_text(encoding="utf-8").splitlines())
    ]
    assert silent, f"every fixture of {code} shows it firing: add one where it must not fire"
