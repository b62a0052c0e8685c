"""Expected path is not a file in the workspace.

## What it does
Where a suite reads the dataset with `match: path` (the default) through a target
that searches this workspace (the builtin target, or a target declaring
`workspace_paths: true` in `.punica/targets.yaml`), checks each value of a case's
`expect.relevant` against the files of the workspace and reports one that is not
there: a typo, a file since moved or deleted, a folder, a path that leaves the
workspace, or a file that is git-ignored or in a skipped folder (`node_modules`,
`.venv`, ...). It suggests the closest workspace path when there is one. A
dataset that no suite reads is checked against the workspace as well.

When most expected paths of a dataset (and at least 20) are not workspace files,
the corpus the cases describe most likely lives elsewhere (a search service's
index): one finding says so for the whole file, with the counts, instead of one
warning per value.

Suites whose targets do not declare that they search the workspace (a `command`,
`http` or `recorded` target without `workspace_paths: true`) are not checked: their
hits name documents of a corpus rag-lsp cannot see.

## Why is this bad?
Matching is exact string equality on the hit's `path`. A path no target can return
is a relevant document that is always "missed": the case's recall is capped below
1 however good the retrieval is, and the suite gates on a number it can never reach.

## Example
```json
{"id": "approvals", "input": {"query": "approval rules"}, "expect": {"relevant": ["docs/approval.md"]}}
```
where the file is `docs/approvals.md`: the quick fix changes the value to the
closest workspace path.

## How to fix
Write the path of the file as it is in the workspace, relative to the workspace
root and `/`-separated, or remove the value if the file is gone. When the corpus
is indexed by a service and not by this workspace, name that service as the
suite's target in `.punica/targets.yaml` (a `command` or `http` target); declare
`workspace_paths: true` on it only if it indexes this repository.
"""

import json
import os

from ..findings import Finding, Fix, Severity, TextEdit
from ..paths import normalize_relative
from . import DATASET, ROW, rule_of

RULE = rule_of(__doc__, "RAG203", "missing-expected-path", Severity.WARNING)

# How alike (0..100, rapidfuzz's ratio) a workspace path must be to be suggested.
_SUGGESTION_CUTOFF = 80


@RULE.check(ROW)
def missing_expected_path(rows):
    use = rows.use
    if "path" not in use.matches or not use.paths_in_workspace or use.paths_elsewhere:
        return
    workspace = rows.workspace
    files = workspace.file_set()
    found = workspace.normal_file_set()
    # A missing path is often listed by many cases (a file moved, say), and its
    # message costs file-system calls and a fuzzy search of the workspace: done
    # once per path, and only for the findings shown where not all are.
    problems = workspace.memo(RULE.code)
    later = rows.finish_when_shown
    for context, relevant in rows.expected_off_the_files:
        for index, value in enumerate(relevant):
            if type(value) is not str or value in found:
                continue
            problem = problems.get(value)
            if problem is None:
                normal = normalize_relative(value)
                if normal in files:
                    continue  # a path that is not in normal form is RAG206's
                if later:
                    where = context.value_range("expect", "relevant", index)
                    yield RULE.finding(where, f"{value!r} is not a file in the workspace", unfinished=value)
                    continue
                problem = problems[value] = _problem(workspace, value, normal)
            yield _finding(context.value_range("expect", "relevant", index), problem)


@RULE.finishes
def with_the_problem(workspace, finding):
    """An unfinished finding (see Finding.unfinished) with what is wrong with its
    path and the workspace file it most likely means."""
    value = finding.unfinished
    problems = workspace.memo(RULE.code)
    problem = problems.get(value)
    if problem is None:
        problem = problems[value] = _problem(workspace, value, normalize_relative(value))
    made = _finding(finding.range, problem)
    return Finding(finding.code, finding.severity, finding.range, made.message, finding.path, made.fixes)


def _finding(where, problem: tuple[str, str | None]) -> Finding:
    message, suggestion = problem
    if suggestion is None:
        return RULE.finding(where, message)
    # The whole JSON string token is replaced, so no escape of the old text survives.
    fix = Fix(f"Change to {suggestion!r}", edits=(TextEdit(where, json.dumps(suggestion, ensure_ascii=False)),))
    return RULE.finding(where, message, fixes=[fix])


@RULE.check(DATASET)
def expected_paths_elsewhere(context):
    tally = context.paths
    if tally is None or not tally.elsewhere or context.first_missing is None:
        return
    row, index = context.first_missing
    value = row.row.value["expect"]["relevant"][index] if row.row.value is not None else None
    example = f", such as {value!r}" if isinstance(value, str) else ""
    use = context.use
    if use.workspace_targets:
        reads = "reads" if len(use.suites) == 1 else "read"
        searches = "searches" if len(use.workspace_targets) == 1 else "search"
        reader = f"yet {_names('suite', use.suites)} {reads} it through {_names('target', use.workspace_targets)}, which {searches} this workspace"
    else:
        reader = "and no suite reads the dataset, so its paths are checked against this workspace"
    yield RULE.finding(
        row.value_range("expect", "relevant", index),
        f"{tally.absent:,} of the {tally.listed:,} expected paths in this dataset ({tally.absent / tally.listed:.0%}) "
        f"are not workspace files{example}, {reader}: the corpus these cases describe most likely lives elsewhere. "
        "Declare the service that indexes it in .punica/targets.yaml and make it the suite's target (a command or "
        "http target; `workspace_paths: true` only if it indexes this repository), or fix the paths. "
        "Reported once for the file while most are missing.",
    )


def _names(kind: str, names: tuple[str, ...]) -> str:
    shown = ", ".join(repr(name) for name in names[:3])
    more = f" and {len(names) - 3:,} more" if len(names) > 3 else ""
    return f"{kind}{'s' if len(names) > 1 else ''} {shown}{more}"


def _problem(workspace, value: str, normal: str | None) -> tuple[str, str | None]:
    """What is wrong with an expected path that is not a workspace file, and the
    workspace file it most likely means, if one is close enough."""
    if normal is None:
        return f"{value!r} leaves the workspace: expected paths are relative to the workspace root, so no hit can match it", None
    if normal == "":
        return f"{value!r} is the workspace root, not a file: list the files that must come back", None
    # Nearly every missing path is missing on disk too: one stat settles it.
    # What is there is looked at further (inside the workspace, with links resolved).
    if os.path.lexists(os.path.join(workspace.root, normal)) and workspace.contains(absolute := workspace.absolute(normal)):
        if absolute.is_file():
            return f"{value!r} is git-ignored or in a skipped folder, so no target returns it: expect a workspace file instead", None
        if absolute.is_dir():
            return f"{value!r} is a folder, not a file: list the files inside it that must come back", None
    best = workspace.path_index().closest(normal, _SUGGESTION_CUTOFF)
    if best is not None:
        return f"{value!r} is not a file in the workspace, so no hit can match it (did you mean {best!r}?)", best
    return f"{value!r} is not a file in the workspace, so no hit can match it: fix the path or remove it", None
