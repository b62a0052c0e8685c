"""The rule registry.

A rule is one code with its severity and documentation (the module docstring of
its file, in the sections *What it does*, *Why is this bad?*, *Example* and *How
to fix*), and one or more small check functions, each bound to the scope it looks
at. ``rag-lsp check --explain CODE`` prints the documentation.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Iterable, Mapping

from ...workspace.codes import OWN_PROBLEMS, code_of_module
from ..datasetindex import RowGrouping
from ..folding import every_occurrence_fix
from ...reading.findings import Finding, Fix, Related, Severity
from ...reading.text import Range

# What a check looks at. Each scope has its context type in ``core.checking.contexts``.
YAML = "yaml"  # any YAML file we read: syntax, duplicate keys, safety
SUITE_FILE = "suite_file"  # a whole suite file
SUITE = "suite"  # one suite of a suite file
TARGETS = "targets"  # the targets config
MANIFEST = "manifest"  # one manifest file
ROW = "row"  # one dataset line, with the facts of the suites that use the file
DATASET = "dataset"  # facts across the lines of one dataset
# A dataset's text as a whole, before its lines are read as rows: a finding
# here is about the whole file (one JSON document, not JSON Lines), whose lines
# are then not read one by one.
DOCUMENT = "document"

SCOPES = (YAML, SUITE_FILE, SUITE, TARGETS, MANIFEST, ROW, DATASET, DOCUMENT)

Check = Callable[[Any], Iterable[Finding]]
# Finishes an unfinished finding of the rule (see Finding.unfinished), given the workspace.
Finisher = Callable[[Any, Finding], Finding]
# Says, for a cause of the rule's findings that most rows of a dataset share (see
# core.checking.folding), its likely origin in words, and the title of the quick fix that
# repairs every occurrence (None: the occurrences have no fix to join).
FoldExplainer = Callable[[str], "tuple[str | None, str | None]"]
# Makes the edits of a fix of every occurrence that a finding over the whole
# dataset offers without them (see Rule.fixes_every), given the workspace, the
# dataset's path and lines, the finding and its fix.
EveryFixMaker = Callable[[Any, str, "list[str]", Finding, Fix], Fix]


# What a rule whose findings fold says of it (see core.checking.folding).
FOLDING_DOC = """## When its findings fold
A dataset written by another tool often carries one defect on every row, for
one cause (every path written alike, one key on every row, one corpus, one
option). When the findings of this rule for one cause stand on most rows of a
dataset (more than half, and at least 20), they are reported once, at the first
of them: how many rows and lines they cover and the first few, the likely
cause, and a fix, either one quick fix that repairs every occurrence or where
the cause lives (a suite's option, a target's corpora). Rows that break the
pattern keep their own findings. `rag-lsp check --unfold` prints every
occurrence; `--format json` gives the lines a folded finding covers
(`covers`), SARIF gives them as `coveredLines`."""


@dataclass
class Rule:
    code: str
    name: str
    severity: Severity
    doc: str
    checks: dict[str, Check] = field(default_factory=dict)
    finisher: Finisher | None = None
    fold_explainer: FoldExplainer | None = None
    every_fix_maker: EveryFixMaker | None = None
    # What a rule over rows that share a value keeps of each row (see
    # core.checking.datasetindex): its DATASET check is given the groups of those rows.
    grouping: RowGrouping | None = None

    @property
    def documentation(self) -> str:
        """The rule's documentation, with what folding does to its findings when
        they fold (see core.checking.folding): what --explain, hovers and SARIF show."""
        if self.fold_explainer is None:
            return self.doc
        return f"{self.doc}\n\n{FOLDING_DOC}"

    @property
    def summary(self) -> str:
        return self.doc.strip().splitlines()[0].rstrip(".") if self.doc.strip() else self.name

    def check(self, scope: str) -> Callable[[Check], Check]:
        """Register the decorated function as this rule's check for ``scope``."""
        if scope not in SCOPES:
            raise ValueError(f"unknown scope {scope!r}")

        def register(function: Check) -> Check:
            if scope in self.checks:
                raise ValueError(f"{self.code} already has a check for scope {scope!r}")
            self.checks[scope] = function
            return function

        return register

    def finishes(self, function: Finisher) -> Finisher:
        """Register the decorated function as what finishes this rule's unfinished
        findings (see Finding.unfinished)."""
        self.finisher = function
        return function

    def folds(self, function: FoldExplainer) -> FoldExplainer:
        """Register the decorated function as what explains a cause of this
        rule's findings once they are folded (see core.checking.folding)."""
        self.fold_explainer = function
        return function

    def fixes_every(self, function: EveryFixMaker) -> EveryFixMaker:
        """Register the decorated function as what makes the edits of a fix of
        every occurrence that one of this rule's findings over the whole dataset
        offers (a folded finding's are made from the findings it stands for,
        see core.checking.folding): tens of thousands of edits are made only
        for the editor that asks for the fix."""
        self.every_fix_maker = function
        return function

    def groups_rows(self, grouping: RowGrouping) -> RowGrouping:
        """Register ``grouping`` as what this rule keeps of each dataset row: its
        DATASET check is then given the rows that share a value (see
        core.checking.datasetindex), by a one-shot analysis and a dataset model alike."""
        self.grouping = grouping
        return grouping

    def finding(
        self,
        range: Range,
        message: str,
        fixes: Iterable[Fix] = (),
        related: Iterable[Related] = (),
        unfinished: str | None = None,
        cause: str | None = None,
    ) -> Finding:
        return Finding(
            self.code, self.severity, range, message, fixes=tuple(fixes), related=tuple(related), unfinished=unfinished, cause=cause
        )


def finished(workspace: Any, finding: Finding) -> Finding:
    """``finding`` with the message and fixes its rule left for when it is shown
    (see Finding.unfinished); a finished finding as it is."""
    if finding.unfinished is None:
        return finding
    finisher = all_rules()[finding.code].finisher
    assert finisher is not None, f"{finding.code} made an unfinished finding it cannot finish"
    return finisher(workspace, finding)


def fix_of_every_occurrence(workspace: Any, path: str, lines: list[str], finding: Finding, fix: Fix) -> Fix:
    """``fix``, a fix of every occurrence (see Fix.every) of ``finding`` in the
    dataset at ``path`` (its ``lines``), with its edits: made from the findings a
    folded finding stands for, or by the rule of a finding over the whole dataset."""
    if fix.edits or not fix.every:
        return fix
    if finding.covers:
        return every_occurrence_fix(finding, fix)
    rule = all_rules().get(finding.code)
    if rule is None or rule.every_fix_maker is None:
        return fix
    return rule.every_fix_maker(workspace, path, lines, finding, fix)


def explain_fold(code: str, cause: str) -> tuple[str | None, str | None]:
    """The likely origin of ``cause`` of ``code``'s findings, and the title of
    the fix of every occurrence (see Rule.folds)."""
    rule = all_rules().get(code)
    if rule is None or rule.fold_explainer is None:
        return None, None
    return rule.fold_explainer(cause)


@lru_cache(maxsize=1)
def all_rules() -> dict[str, Rule]:
    """Every rule, by code, from the modules of this package (``ragNNN_*.py``)."""
    rules: dict[str, Rule] = {}
    modules: dict[str, str] = {}
    for module_info in sorted(pkgutil.iter_modules(__path__), key=lambda info: info.name):
        if not module_info.name.startswith("rag"):
            continue
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        rule = getattr(module, "RULE", None)
        if not isinstance(rule, Rule):
            raise TypeError(f"{module.__name__} defines no RULE")
        if rule.code in rules:
            raise ValueError(f"code {rule.code} is defined twice")
        rules[rule.code] = rule
        modules[rule.code] = module.__name__
    return agreeing(rules, modules)


def agreeing(rules: dict[str, Rule], modules: Mapping[str, str]) -> dict[str, Rule]:
    """``rules``, once each has the code of its module's name (``modules``: the
    module of each code), which modules below the rules read (core.workspace.codes), and
    the settings file's own problems the severity core.workspace.codes gives them; else a
    ValueError saying which disagree."""
    problems = [
        f"{modules[code]} defines {code}, not the code of its name" for code in rules if code_of_module(modules[code].rsplit(".", 1)[-1]) != code
    ]
    problems += [
        f"{code} is {rules[code].severity.name} but core/codes.py says {severity.name}"
        for code, severity in OWN_PROBLEMS.items()
        if code in rules and rules[code].severity != severity
    ]
    if problems:
        raise ValueError("the rules and core/codes.py disagree: " + "; ".join(problems))
    return rules


@lru_cache(maxsize=None)
def checks_for(scope: str) -> tuple[tuple[Rule, Check], ...]:
    return tuple((rule, rule.checks[scope]) for rule in all_rules().values() if scope in rule.checks)


@lru_cache(maxsize=None)
def groupings() -> tuple[Rule, ...]:
    """The rules over rows that share a value (see Rule.groups_rows), by code."""
    return tuple(rule for rule in all_rules().values() if rule.grouping is not None and DATASET in rule.checks)


@lru_cache(maxsize=None)
def whole_dataset_checks() -> tuple[tuple[Rule, Check], ...]:
    """The DATASET checks of the rules that group no rows: given the facts of the
    whole dataset (its tally of expected paths)."""
    return tuple((rule, check) for rule, check in checks_for(DATASET) if rule.grouping is None)


def rule_of(module_doc: str | None, code: str, name: str, severity: Severity) -> Rule:
    """The rule of a rule module; its docstring is the rule's documentation."""
    return Rule(code, name, severity, (module_doc or "").strip())
