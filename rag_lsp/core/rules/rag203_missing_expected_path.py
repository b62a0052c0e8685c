"""Expected path is not a file in the workspace.

## What it does
With `match: path` (the default), checks each value of a case's `expect.relevant`
against the files of the workspace and reports one that is not there: a typo, a
file since moved or deleted, a folder, a path that leaves the workspace, or a file
that is git-ignored or in a skipped folder (`node_modules`, `.venv`, ...). It
suggests the closest workspace path when there is one.

## Why is this bad?
Matching is exact string equality on the hit's `path`. A path no target can return
is a relevant document that is always "missed": the case's recall is capped below
1 however good the retrieval is, and the suite gates on a number it can never reach.

## Example
```json
{"id": "approvals", "input": {"query": "approval rules"}, "expect": {"relevant": ["docs/approval.md"]}}
```
where the file is `docs/approvals.md`.

## How to fix
Write the path of the file as it is in the workspace, relative to the workspace
root and `/`-separated, or remove the value if the file is gone.
"""

from ..findings import Severity
from ..workspace import normalize_relative
from . import ROW, rule_of

RULE = rule_of(__doc__, "RAG203", "missing-expected-path", Severity.WARNING)

# How alike (0..100, rapidfuzz's ratio) a workspace path must be to be suggested.
_SUGGESTION_CUTOFF = 80


@RULE.check(ROW)
def missing_expected_path(rows):
    if "path" not in rows.use.matches:
        return
    workspace = rows.workspace
    files = workspace.file_set()
    found = workspace.normal_file_set()
    # A missing path is often listed by many cases (a file moved, say), and its
    # message costs file-system calls and a fuzzy search of the workspace.
    problems = workspace.memo(RULE.code)
    for context, relevant in rows.expected_off_the_files:
        for index, value in enumerate(relevant):
            if type(value) is not str or value in found:
                continue
            message = problems.get(value)
            if message is None:
                normal = normalize_relative(value)
                if normal in files:
                    continue  # a path that is not in normal form is RAG206's
                message = problems[value] = _problem(workspace, value, normal)
            yield RULE.finding(context.value_range("expect", "relevant", index), message)


def _problem(workspace, value: str, normal: str | None) -> str:
    if normal is None:
        return f"{value!r} leaves the workspace: expected paths are relative to the workspace root, so no hit can match it"
    if normal == "":
        return f"{value!r} is the workspace root, not a file: list the files that must come back"
    if workspace.read(normal) is not None:
        return f"{value!r} is git-ignored or in a skipped folder, so no target returns it: expect a workspace file instead"
    # Folders are not files any source can read; a stat under the root is cheap,
    # where scanning a 50k-file list for the prefix is not.
    absolute = workspace.absolute(normal)
    if workspace.contains(absolute) and absolute.is_dir():
        return f"{value!r} is a folder, not a file: list the files inside it that must come back"
    # ratio (not WRatio) keeps a 50k-file workspace at a few milliseconds per path.
    from rapidfuzz import fuzz, process  # only for a path that is not a file

    best = process.extractOne(normal, workspace.files(), scorer=fuzz.ratio, score_cutoff=_SUGGESTION_CUTOFF)
    if best is not None:
        return f"{value!r} is not a file in the workspace, so no hit can match it (did you mean {best[0]!r}?)"
    return f"{value!r} is not a file in the workspace, so no hit can match it: fix the path or remove it"
