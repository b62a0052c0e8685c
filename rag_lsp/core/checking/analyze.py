"""The one analysis both shells call.

A staged pipeline per file: reading (size, encoding) → syntax → structure (schema)
→ meaning (cross-file facts). A stage runs only on what the one before it could
read, so a schema error is never reported against a broken parse. The language
server and ``rag-lsp check`` both call :func:`analyze_file`; neither repeats it.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any, Iterable

from . import rules as registry
from .rules.rag002_json_syntax import read_in
from .contexts import DatasetContext, DocumentContext, RowsContext, SuiteContext, YamlContext
from ..reading.findings import Finding
from .folding import fold
from ..reading.text import Range
from ..workspace.config import CONFIG_PATHS, read_config
from ..reading.sources import SourceText
from ..workspace.workspace import config_outside, CONFIG_FILE, DATASET_FILE, MANIFEST_FILE, SUITE_FILE, TARGETS_FILE, Workspace

log = logging.getLogger(__name__)

_YAML_STAGES = {
    SUITE_FILE: registry.SUITE_FILE,
    MANIFEST_FILE: registry.MANIFEST,
    TARGETS_FILE: registry.TARGETS,
}


def analyze_file(workspace: Workspace, path: str, kind: str | None = None, source: SourceText | None = None) -> list[Finding]:
    """Every finding of one workspace file (``path`` relative to the root)."""
    source = source or workspace.read(path)
    if source is None:
        refused = config_outside(workspace.root, path) if path in CONFIG_PATHS else None
        return finish(workspace, path, list(refused.findings)) if refused is not None else []
    kind = kind or workspace.kind_of(path)
    if kind is None:
        return []
    if source.refused:
        findings = [_refused(source.refused)]
    elif kind == DATASET_FILE:
        encoded = encoding_findings(workspace, path, source.encoding)
        document = check_document(workspace, path, source.text)
        if document is not None:
            return encoded + document
        findings = finish(workspace, path, analyze_dataset(workspace, path, source))
        parsed = workspace.parsed_dataset(path, source)
        return encoded + fold_dataset(workspace, findings, len(parsed.rows) if parsed is not None else 0)
    elif kind == CONFIG_FILE:
        findings = list(read_config(path, source.text).findings)
    else:
        findings = _analyze_yaml(workspace, path, kind, source)
    return finish(workspace, path, findings)


def encoding_findings(workspace: Workspace, path: str, encoding: str | None) -> list[Finding]:
    """The finding of a dataset read in ``encoding`` (see SourceText.encoding),
    finished; none for one read as UTF-8."""
    if encoding is None:
        return []
    return finish(workspace, path, [read_in(encoding)])


def fold_dataset(workspace: Workspace, findings: list[Finding], rows: int) -> list[Finding]:
    """A dataset's findings (finished, in position order) with the causes most of
    its ``rows`` rows share folded, one finding each (see core.checking.folding), unless
    the settings ask for every occurrence."""
    if not workspace.folds_findings:
        return findings
    return fold(findings, rows, registry.explain_fold)


def analyze_workspace(workspace: Workspace, paths: Iterable[str] | None = None) -> dict[str, list[Finding]]:
    """Findings of every file we check (or of ``paths``), by relative path."""
    targets = workspace.discover() if paths is None else {path: workspace.kind_of(path) for path in paths}
    return {path: analyze_file(workspace, path, kind) for path, kind in targets.items() if kind is not None}


def finish(workspace: Workspace, path: str, findings: list[Finding]) -> list[Finding]:
    """Apply severity overrides and per-file ignores, attach the path, and sort."""
    settings = workspace.settings
    result = []
    for finding in findings:
        severity = settings.severity_of(path, finding.code, finding.severity)
        if severity is None:
            continue
        if severity != finding.severity:
            finding = finding._replace(severity=severity)
        result.append(finding.at(path))
    result.sort(key=Finding.sort_key)
    return result


def _refused(message: str) -> Finding:
    rule = registry.all_rules()["RAG005"]
    return rule.finding(Range.of(0, 0), f"{message}: the file is not checked (raise max-file-bytes to check it)")


def _run(scope: str, context: Any) -> list[Finding]:
    findings: list[Finding] = []
    for rule, check in registry.checks_for(scope):
        findings += _checked(rule, check, context)
    return findings


def _checked(rule: registry.Rule, check: registry.Check, context: Any) -> list[Finding]:
    """The findings of one check; none when it fails: one failing rule must never hide the others."""
    try:
        return list(check(context))
    except Exception:
        log.exception("rule %s failed on %s", rule.code, getattr(context, "path", "?"))
        return []


# ---------------------------------------------------------------- YAML files


def _analyze_yaml(workspace: Workspace, path: str, kind: str, source: SourceText) -> list[Finding]:
    parsed = workspace.parsed_yaml(path, source)
    if parsed is None:
        return []
    context = YamlContext(workspace, path, parsed)
    findings = _run(registry.YAML, context)
    if parsed.decode_error or not parsed.document.well_formed or parsed.too_large is not None:
        return findings
    if parsed.document.root is None:
        return findings
    findings += _run(_YAML_STAGES[kind], context)
    if kind == SUITE_FILE:
        for suite in workspace.suites_of(path):
            findings += _run(registry.SUITE, SuiteContext(workspace, path, parsed, suite))
        # Suites that share a node (merged from one anchor with `<<: *common`)
        # find its problems each: one finding at that place says it, one quick fix fixes it.
        findings = _once_each(findings)
    return findings


def _once_each(findings: list[Finding]) -> list[Finding]:
    """``findings`` without repeats of the same finding, in their order."""
    return list(dict.fromkeys(findings))


# ---------------------------------------------------------------- datasets


def analyze_dataset(workspace: Workspace, path: str, source: SourceText | None = None) -> list[Finding]:
    parsed = workspace.parsed_dataset(path, source)
    if parsed is None:
        return []
    use = workspace.dataset_use(path)
    shape = workspace.dataset_shape(path)
    findings: list[Finding] = []
    # A byte that is not UTF-8 is its line's RAG002 (see Workspace.parsed_dataset).
    rows = RowsContext.of(workspace, path, use, shape, parsed.rows)
    dataset = DatasetContext.of(workspace, path, rows)
    if dataset.paths is not None and dataset.paths.elsewhere:
        # Known only once every row is counted: the rows are checked knowing it
        # (what the context derived from its rows stays as it is).
        rows.use = replace(use, paths_elsewhere=True)
    findings += check_rows(rows)
    for rule, check in registry.whole_dataset_checks():
        findings += _checked(rule, check, dataset)
    for rule in registry.groupings():
        findings += _checked(rule, rule.checks[registry.DATASET], dataset.grouped(rows, rule.grouping))
    return findings


def check_document(workspace: Workspace, path: str, text: str | list[str], document: Any = None) -> list[Finding] | None:
    """The findings of a dataset's text (or its lines) as a whole (see
    registry.DOCUMENT), finished; None where there are none, and only then are
    its lines read as rows (a finding the settings turn off still stands for the file).
    ``document``: the text as a document, where the caller read it (see
    core.reading.documentedits)."""
    context = DocumentContext(workspace, path, text)
    if document is not None:
        context.document = document
    found = [finding for rule, check in registry.checks_for(registry.DOCUMENT) for finding in _checked(rule, check, context)]
    return finish(workspace, path, found) if found else None


def check_rows(batch: RowsContext) -> list[Finding]:
    """The row rules' findings on a batch of lines (each depends on its line alone)."""
    findings: list[Finding] = []
    for rule, check in registry.checks_for(registry.ROW):
        try:
            findings.extend(check(batch))
        except Exception:
            # A rule that fails on one line must not lose its findings on the
            # others: retry line by line, so only the offending line goes without.
            log.exception("rule %s failed on %s; checking line by line", rule.code, batch.path)
            for row in batch.rows:
                single = RowsContext(batch.workspace, batch.path, batch.use, batch.shape, [row], batch.finish_when_shown, batch.systemic, batch.passed_over)
                try:
                    findings.extend(check(single))
                except Exception:
                    log.exception("rule %s failed on %s:%d", rule.code, batch.path, row.line + 1)
    return findings
