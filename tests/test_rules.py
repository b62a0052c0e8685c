"""Every rule, proven on text fixtures.

Each folder ``tests/fixtures/rules/<CODE>/<case>/`` is a small workspace (it holds
``.punica/``). ``expected.txt`` lists every finding of the workspace, one per line
as ``path range CODE message`` with 0-based code-point ranges ("2:4-2:9"), so a
fixture proves both that the rule fires and that nothing else does. A file
``<path>.fixed`` beside a checked file is that file after applying every quick fix.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from rag_lsp.core.checking.analyze import analyze_file, analyze_workspace
from rag_lsp.core.running.results import BROKEN_CASE, CASE_RESULT, KEYWORD_FALLBACK, TARGET_FAILED, THRESHOLD_FAILED, THRESHOLD_MET
from rag_lsp.core.workspace.codes import known_codes
from rag_lsp.core.reading.findings import Severity
from rag_lsp.core.checking.rules import agreeing, all_rules
from rag_lsp.core.reading.text import apply_edits
from rag_lsp.core.reading.sources import DiskSource, OverlaySource
from rag_lsp.core.workspace.workspace import Workspace

REPO = Path(__file__).resolve().parent.parent
RULE_FIXTURES = Path(__file__).parent / "fixtures" / "rules"
CASES = sorted(path for path in RULE_FIXTURES.glob("RAG*/*") if path.is_dir())
# Every code is a rule of the registry; a rule with checks finds things in files,
# one without is a result that runs attach (RAG400–RAG405).
CODES = sorted(all_rules())
CHECKED_CODES = [code for code in CODES if all_rules()[code].checks]
RUN_CODES = [code for code in CODES if not all_rules()[code].checks]
DOC_SECTIONS = ("## What it does", "## Why is this bad?", "## Example", "## How to fix")


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


def test_the_registry_holds_the_codes_of_every_scope() -> None:
    """The registry finds the rules of files and those of runs alike (a registry that
    found none would make every test below vacuous)."""
    assert "RAG001" in CHECKED_CODES
    assert "RAG303" in CHECKED_CODES
    assert RUN_CODES


def test_the_codes_known_without_the_rules_are_the_registrys() -> None:
    """core.workspace.codes, which the settings file's reader checks codes against without loading
    the rules, knows every rule's code from its module's name, and no other code."""
    assert known_codes() == set(all_rules())


def test_the_registry_refuses_a_rule_whose_code_is_not_its_modules() -> None:
    """A rule whose code is not the one its module's name says, or a rule of a settings file's
    own problem with another severity than core.workspace.codes gives it, stops the registry, each named."""
    rules = dict(all_rules())
    modules = {code: f"rag_lsp.core.checking.rules.{code.lower()}_some_name" for code in rules}
    assert agreeing(rules, modules) is rules
    modules["RAG207"] = "rag_lsp.core.checking.rules.rag208_k_above_top_k"
    rules["RAG001"] = dataclasses.replace(rules["RAG001"], severity=Severity.WARNING)
    with pytest.raises(ValueError) as raised:
        agreeing(rules, modules)
    message = str(raised.value)
    assert "rag_lsp.core.checking.rules.rag208_k_above_top_k defines RAG207, not the code of its name" in message
    assert "RAG001 is WARNING but core/codes.py says ERROR" in message


@pytest.mark.parametrize("code", CODES)
def test_every_rule_is_documented(code: str) -> None:
    """Each rule's documentation has the sections ``--explain`` prints."""
    doc = all_rules()[code].doc
    for section in DOC_SECTIONS:
        assert section in doc, f"{code} doc lacks {section!r}"


@pytest.mark.parametrize("code", CHECKED_CODES)
def test_every_checked_rule_has_a_fixture_where_it_fires(code: str) -> None:
    """Each rule that checks files has a fixture showing it firing."""
    cases = [case for case in CASES if case.parent.name == code]
    assert cases, f"{code} has no fixture"
    assert any(re.search(rf" {code} ", line) for case in cases for line in (case / "expected.txt").read_text().splitlines()), (
        f"no fixture of {code} shows it firing"
    )


def test_the_rules_without_checks_are_the_results_runs_attach() -> None:
    """A rule with no check is one of the codes the runner and the results give;
    each of those codes is a rule of the registry."""
    produced = {CASE_RESULT, BROKEN_CASE, KEYWORD_FALLBACK, THRESHOLD_FAILED, THRESHOLD_MET, TARGET_FAILED}
    assert set(RUN_CODES) == produced


@pytest.mark.parametrize("code", RUN_CODES)
def test_every_run_result_rule_says_it_comes_from_a_run(code: str) -> None:
    """The documentation of a rule that runs attach says so."""
    assert re.search(r"\brun", all_rules()[code].doc.split("## What it does", 1)[1]), f"{code} doc does not say it comes from a run"


def test_every_fixture_folder_is_a_rule() -> None:
    """No fixture folder is named after a code that no rule has."""
    folders = sorted({case.parent.name for case in CASES})
    assert [folder for folder in folders if folder not in all_rules()] == []


# The table of codes lives in docs/reference/rules.md (written by docs/generate.py);
# each row links the rule's own page.
RULES_PAGE = REPO / "docs" / "reference" / "rules.md"
RULE_ROW = r"^\| \[(RAG\d{3})\]\(rules/\1\.md\) \| (\w+) \| (.+) \| (?:yes|no) \|$"


def readme_codes() -> dict[str, tuple[str, str]]:
    """The documentation's table of codes: code -> (severity, finding)."""
    rows = re.findall(RULE_ROW, RULES_PAGE.read_text(encoding="utf-8"), flags=re.MULTILINE)
    return {code: (severity, finding) for code, severity, finding in rows}


def test_the_readme_lists_every_rule_once() -> None:
    """The documentation's table of codes has a row per rule, and no other, and the README links it."""
    listed = re.findall(RULE_ROW, RULES_PAGE.read_text(encoding="utf-8"), flags=re.MULTILINE)
    assert [code for code, _, _ in listed] == CODES
    assert "(docs/reference/rules.md)" in (REPO / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("code", CODES)
def test_the_readme_row_of_every_rule_is_its_severity_and_summary(code: str) -> None:
    """A rule's row in the table of codes gives its severity and its summary (the first line of
    its documentation), optionally followed by a note in parentheses."""
    rule = all_rules()[code]
    severity, finding = readme_codes()[code]
    assert severity == rule.severity.name.lower()
    summary = rule.summary[:1].lower() + rule.summary[1:]
    written = finding[:1].lower() + finding[1:]
    note = written[len(summary) :]
    assert written.startswith(summary), f"write the row of {code} as: | {code} | {severity} | {summary} |"
    assert note == "" or (note.startswith(" (") and note.endswith(")")), f"the table of codes adds {note!r} to {code}'s summary"


@pytest.mark.parametrize("code", CHECKED_CODES)
def test_every_checked_rule_has_a_fixture_where_it_does_not_fire(code: str) -> None:
    """Each rule that checks files also has a fixture where it must stay silent (a
    near miss of the firing ones, named ``passes-...``): a rule that fires
    everywhere would pass every firing fixture."""
    cases = [case for case in CASES if case.parent.name == code]
    silent = [
        case
        for case in cases
        if not any(re.search(rf" {code} ", line) for line in (case / "expected.txt").read_text(encoding="utf-8").splitlines())
    ]
    assert silent, f"every fixture of {code} shows it firing: add one where it must not fire"
