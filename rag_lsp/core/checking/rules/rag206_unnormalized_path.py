r"""Expected path is not normalized.

## What it does
With `match: path` (the default), finds a value of a case's `expect.relevant`
that is not written the way hits carry paths: workspace-relative, `/`-separated,
without `./`, `\`, `//`, `/./`, `..` or a trailing `/`.

## Why is this bad?
Matching is exact string equality: `./src/app.py` never equals the hit's
`src/app.py`, so the file is counted as missed even when it comes back first.

## Example
```json
{"id": "app", "input": {"query": "entry point"}, "expect": {"relevant": ["./src/app.py", "src\\util.py"]}}
```

## How to fix
Write the path relative to the workspace root with `/` between folders:
`src/app.py`. The quick fix does that.
"""

import json

from ...reading.findings import Fix, Severity, TextEdit
from ...reading.paths import normalize_relative
from . import ROW, rule_of

RULE = rule_of(__doc__, "RAG206", "unnormalized-path", Severity.WARNING)


@RULE.check(ROW)
def unnormalized_path(rows):
    if "path" not in rows.use.matches:
        return
    verdicts = _verdicts(rows)
    get = verdicts.of.get
    judged = {value for value in rows.not_normal_expected if get(value)}
    if not judged:
        return
    # Whether every value is only counted: a dataset written by another tool
    # writes all its paths in one form, on every row.
    only_counted = not verdicts.told
    for context, relevant in rows.expected_off_the_files:
        try:
            # In C: the cases off the files may be every case (a corpus partly elsewhere).
            if judged.isdisjoint(relevant):
                continue
            found = [verdict for value in relevant if (verdict := get(value))]
        except TypeError:  # a value that cannot be a key (an object): RAG004's
            found = [verdict for value in relevant if type(value) is str and (verdict := get(value))]
        if not found:
            continue
        if only_counted:
            rows.pass_over(found, context.line)
            continue
        passed: list[tuple[str, str]] = []
        for index, value in enumerate(relevant):
            verdict = get(value) if type(value) is str else None
            if not verdict:
                continue
            if len(verdict) == 2:  # a (code, cause) pair: counted
                passed.append(verdict)
                continue
            message, title, new_text, cause = verdict
            where = context.value_range("expect", "relevant", index)
            # Replace the whole JSON string token, so escapes in the old text cannot survive.
            yield RULE.finding(where, message, fixes=[Fix(title, edits=(TextEdit(where, new_text),))], cause=cause)
        if passed:
            rows.pass_over(passed, context.line)


class _Verdicts:
    """For each value not in normal form seen so far: the (code, cause) pair it
    is counted as, where its form is presumed to stand on most rows (see
    RowsContext.passes_over), else what is said of it (see _told; nothing for
    a value this rule leaves to RAG203). Kept for the workspace and the causes
    presumed: a dataset written by another tool lists each of its paths in many
    cases, all in the same form, so each distinct value is looked at once."""

    def __init__(self) -> None:
        self.of: dict[str, tuple[str, ...]] = {}
        # How many values have findings made (not only counted).
        self.told = 0


def _verdicts(rows) -> _Verdicts:
    """The verdicts (see _Verdicts), with those of the batch's values not in normal form among them."""
    kept = rows.workspace.memo(f"{RULE.code} verdicts")
    verdicts = kept.get(rows.systemic)
    if verdicts is None:
        verdicts = kept[rows.systemic] = _Verdicts()
    of = verdicts.of
    new = [value for value in rows.not_normal_expected if value not in of]
    if new:
        presumed = rows.presumed(RULE.code)
        for value in new:
            # A form presumed on most rows is only counted: its message is never made.
            normal = _normal_if_told(value)
            pair = presumed.get(path_form(value)) if presumed and normal is not None else None
            verdict = of[value] = pair or (_told(value, normal) if normal is not None else _NOTHING)
            if len(verdict) == 4:
                verdicts.told += 1
    return verdicts


_NOTHING = ()


def _normal_if_told(value: str) -> str | None:
    """The normal form of ``value`` where this rule has a finding on it; None
    for a value in normal form, a path that leaves the workspace (or names
    its root), or a URL, which are RAG203's."""
    if "://" in value:
        return None  # a URL is no path written another way: RAG203 says what it is
    normal = normalize_relative(value)
    return normal if normal and normal != value else None


def _told(value: str, normal: str) -> tuple[str, str, str, str]:
    """The message, fix title, fix text and cause of a finding on ``value``,
    whose normal form is ``normal``."""
    message = f"{value!r} is not a normalized path and hits carry {normal!r}: matching is exact, so write {normal!r}"
    return message, f"Normalize to {normal!r}", json.dumps(normal, ensure_ascii=False), path_form(value)


# How a path is written that is not in normal form, by what gives it away first.
_FORMS = {
    "backslash": "written with `\\` between folders, as Windows writes paths",
    "dot-slash": "written from `./`, as a shell completes paths",
    "trailing-slash": "written with a trailing `/`",
    "other": "written with `//`, `/./` or `..`",
}


def path_form(value: str) -> str:
    """The form a path not in normal form is written in: the cause its finding
    shares with those of paths written alike (see core.checking.folding)."""
    if "\\" in value:
        return "backslash"
    if value.startswith("./"):
        return "dot-slash"
    if value.endswith("/"):
        return "trailing-slash"
    return "other"


@RULE.folds
def every_path_of_a_form(cause):
    return (
        f"the expected paths of this dataset are {_FORMS.get(cause, _FORMS['other'])}, most likely by the tool that "
        "wrote it, while hits carry workspace paths with `/` between folders",
        "Normalize every such path",
    )
