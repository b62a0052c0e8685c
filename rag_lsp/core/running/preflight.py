"""What stops a suite before it runs: the error findings of ``rag-lsp check`` that
would make its figures meaningless (in its suite file, and in its target's entry
of the targets config), a scorer rag-lsp does not have, a dataset that cannot be
read; and how a refusal names the findings.

Each file is checked once per :class:`Preflight` (a runner holds one), and a
suite file's datasets are not decoded again for the checks: their shapes come
from the run's own read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from . import ir
from ..checking.analyze import analyze_file
from .datasets import DatasetProblem, KnownShapes, RunDataset
from ..workspace.expected import Flaw
from ..reading.findings import Finding, Severity
from .results import HIT_AT_K
from ..workspace.suitefacts import SuiteInfo
from ..reading.wording import counted
from ..workspace.workspace import Workspace

if TYPE_CHECKING:
    from .results import SuiteResult

ENGINES = frozenset({"rag", ir.ENGINE})
METRICS = frozenset({HIT_AT_K})


class Preflight:
    """The error findings that stop suites of one workspace, each file checked
    once. ``dataset(relative)`` is the run's read of a dataset (or why it cannot
    be read)."""

    def __init__(self, workspace: Workspace, dataset: Callable[[str], RunDataset | DatasetProblem]) -> None:
        self.workspace = workspace
        self._dataset = dataset
        self._findings: dict[str, list[Finding]] = {}

    def blocking_findings(self, suite: SuiteInfo) -> list[Finding]:
        """Error findings of the suite (in its own lines of the suite file, or of the
        file as a whole) that make its figures meaningless."""
        findings = self._findings.get(suite.file)
        if findings is None:
            # The datasets of the file's suites are read once, the run's way; the
            # checks get their shapes from that read instead of decoding them again.
            shapes = {}
            for other in self.workspace.suites_of(suite.file):
                if other.dataset is not None:
                    dataset = self._dataset(other.dataset)
                    if isinstance(dataset, RunDataset):
                        shapes[other.dataset] = dataset.shape
            checked = KnownShapes(self.workspace, shapes)
            findings = self._findings[suite.file] = analyze_file(checked, suite.file)  # type: ignore[arg-type]
        parsed = self.workspace.parsed_yaml(suite.file)
        if parsed is None:
            return [finding for finding in findings if finding.severity == Severity.ERROR]

        def lines_of(other: SuiteInfo) -> range:
            # A block mapping ends where the next item starts: its last line is the
            # one before, unless it ends mid-line (flow style).
            end = parsed.lines.position(max(other.node.start, other.node.end - 1))
            return range(parsed.lines.position(other.node.start).line, end.line + 1)

        own = lines_of(suite)
        others = {
            line for other in self.workspace.suites_of(suite.file) if other.node is not suite.node for line in lines_of(other)
        }
        blocking = []
        for finding in findings:
            if finding.severity != Severity.ERROR:
                continue
            line = finding.range.start.line
            # Findings outside every suite (the file's own) concern each suite of it.
            if line in own or line not in others:
                blocking.append(finding)
        return blocking

    def target_config_errors(self, target_id: str) -> list[Finding]:
        """Error findings of the targets config that concern ``target_id``: those in
        its own entry, and those outside every entry (YAML that is not well-formed,
        a `targets` that is not a mapping), which leave every target unknown. While
        they stand, what a run would reach is not what the config says: a tab left
        in the file would quietly run the default target instead."""
        relative = self.workspace.targets_file()
        if relative is None:
            return []
        findings = self._findings.get(relative)
        if findings is None:
            findings = self._findings[relative] = analyze_file(self.workspace, relative)
        errors = [finding for finding in findings if finding.severity == Severity.ERROR]
        if not errors:
            return []
        parsed = self.workspace.parsed_yaml(relative)
        entries = _entry_lines(parsed)
        # Lines of other entries only (a flow mapping may hold several on one line:
        # what is found there concerns each of them).
        others = {line for entry_id, lines in entries.items() if entry_id != target_id for line in lines}
        others.difference_update(entries.get(target_id, ()))
        # A model that cannot be loaded stops nothing: the target searches by
        # keyword and says why, the fallback a `rag.mode.semantic` threshold catches.
        model = _model_position(parsed, target_id)
        return [
            finding for finding in errors
            if finding.range.start.line not in others
            and (finding.range.start.line, finding.range.start.character) != model
        ]

    def refusal(self, suite: SuiteInfo, result: SuiteResult) -> Flaw | None:
        """Why the suite cannot run, and the code the checks report it with (None
        where rag-lsp checks what it cannot score); None when it can run."""
        blocking = self.blocking_findings(suite)
        if blocking:
            result.findings = tuple(blocking)
            return Flaw(describe_findings(blocking, suite.file))
        unknown_engines = [engine for engine in suite.engines if engine not in ENGINES]
        if unknown_engines:
            return Flaw(f"rag-lsp has no scorer for engine {', '.join(map(repr, unknown_engines))}; it can only check it")
        unknown_metrics = [metric for metric in suite.metrics if metric not in METRICS]
        if unknown_metrics:
            return Flaw(f"rag-lsp has no scorer for metric {', '.join(map(repr, unknown_metrics))}; it can only check it")
        if suite.engines and suite.metrics:
            return Flaw("a suite with both `engines` and `metrics` cannot be scored: its dataset has one row shape")
        if not suite.engines and not suite.metrics:
            return Flaw("the suite has neither `engines` nor `metrics`: nothing scores its cases")
        if suite.dataset is None:
            return Flaw("the suite names no dataset inside the workspace")
        if ir.ENGINE in suite.engines and (missing := ir.missing_reason()) is not None:
            return Flaw(missing)
        dataset = self._dataset(suite.dataset)
        return Flaw(dataset.reason, dataset.code) if isinstance(dataset, DatasetProblem) else None


def describe_findings(
    findings: list[Finding], path: str, concerning: str = "this suite", line_text: Callable[[int], str] | None = None
) -> str:
    count = counted(len(findings), "error")
    return f"not run: {path} has {count} for {concerning} ({first_three(findings, line_text)}); `rag-lsp check` lists them"


def first_three(findings: list[Finding], line_text: Callable[[int], str] | None = None) -> str:
    """The first three findings with their lines; with ``line_text``, each line's
    text too (a message that names no key, `.inf is not a number here`, then
    says of what)."""

    def where(finding: Finding) -> str:
        line = finding.range.start.line
        text = line_text(line).strip() if line_text is not None else ""
        return f"line {line + 1} (`{text}`)" if text and len(text) <= 80 else f"line {line + 1}"

    shown = "; ".join(f"{where(f)}: {f.code} {f.message}" for f in findings[:3])
    return shown + (f"; and {len(findings) - 3:,} more" if len(findings) > 3 else "")


def _model_position(parsed: Any, target_id: str) -> tuple[int, int] | None:
    """Where the `model` value of a builtin target's entry begins (line, column),
    where the check reports a model it cannot find; None when it has none."""
    root = parsed.document.root if parsed is not None else None
    targets = root.get("targets") if root is not None and root.is_map else None
    entry = targets.get(target_id) if targets is not None and targets.is_map else None
    builtin = entry.get("builtin") if entry is not None and entry.is_map else None
    model = builtin.get("model") if builtin is not None and builtin.is_map else None
    if model is None:
        return None
    start = parsed.lines.position(model.start)
    return start.line, start.character


def _entry_lines(parsed: Any) -> dict[str, range]:
    """The lines of each entry of a targets config's `targets` mapping, by target id."""
    root = parsed.document.root if parsed is not None else None
    targets = root.get("targets") if root is not None and root.is_map else None
    if targets is None or not targets.is_map:
        return {}
    entries = {}
    for key, value in targets.items():
        name = key.scalar()
        if isinstance(name, str):
            last = parsed.lines.position(max(key.start, value.end - 1)).line
            entries[name] = range(parsed.lines.position(key.start).line, last + 1)
    return entries

