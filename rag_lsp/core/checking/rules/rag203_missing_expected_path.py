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

Through a builtin target, an expected path must also be a file it searches: not
a hidden file, in one of its corpora (and in one of those the case names in
`input.corpora`; the quick fix adds the corpus that holds it), and text it can
read (not binary, not past `max-file-bytes`; files named like binary ones, such
as `.pdf` or `.png`, are read to tell).

When most expected paths of a dataset (and at least 20) are not workspace files,
the corpus the cases describe most likely lives elsewhere (a search service's
index): one finding says so for the whole file, with the counts, instead of one
warning per value. Where its example is a workspace file written another way (a
folder of the machine that wrote it before it, `/home/dev/repo/src/a.py`; spaces
around it; another letter case; another extension or none, `docs/guide.html` or
`docs/guide` for `docs/guide.md`), the finding says that instead: the tool that
wrote the dataset most likely wrote every path so. Where it is the id of a chunk
of a workspace file (`src/a.py#L1-40`, as the builtin target's hits carry it),
the finding says to match on `id`.

Where most rows expect, beside workspace files, a document the workspace does
not hold (a path under a folder that holds no workspace file, such as `kb/`, or
a URL), the cases most likely mix in a corpus that lives elsewhere: one finding
says so for the file and names where those documents are, while a path in the
workspace's folders that is no file (most likely a typo) keeps its own finding.

Where most rows expect workspace files the builtin target never returns for one
reason (every path outside its corpora's globs, or in a corpus the cases do not
ask to search), one finding says so for the file and names the setting to
change: the corpora in `.punica/targets.yaml`, or the cases' `input.corpora`,
which its fix of every occurrence extends.

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
closest workspace path. An absolute path written on the machine that wrote the
dataset (`/home/dev/repo/docs/approvals.md`, `C:\\repo\\docs\\approvals.md`)
leaves the workspace, and a path written from a folder above the workspace root
(`checkouts/repo/docs/approvals.md`) names no workspace file either: where such a
path ends in a workspace file, the quick fix changes it to that file's path.
When most paths of a dataset are written another way, the one finding for the
file says how, and its fix writes every path so written as the workspace file it
names: it takes the folder off every path it stands before, trims the spaces
around every path, or writes every path in its file's letter case or with its
file's extension.

## How to fix
Write the path of the file as it is in the workspace, relative to the workspace
root and `/`-separated, or remove the value if the file is gone. When the corpus
is indexed by a service and not by this workspace, name that service as the
suite's target in `.punica/targets.yaml` (a `command` or `http` target); declare
`workspace_paths: true` on it only if it indexes this repository.
"""

import json
import os
from typing import Callable, NamedTuple

from ..contexts import RowsContext
from ..expectedpaths import never_searched
from ..folding import FIRST_FIX
from ...workspace.files import BINARY, HIDDEN, IN_NO_CORPUS, TOO_LARGE, globs_matcher
from ...workspace.rows import DatasetRow
from ...reading.datasetlines import read_lines
from ...reading.findings import Finding, Fix, Severity, TextEdit
from ...reading.paths import normalize_relative
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
    searched = workspace.searched_files(use)
    # A missing path is often listed by many cases (a file moved, say), and its
    # message costs file-system calls and a fuzzy search of the workspace: done
    # once per path, and only for the findings shown where not all are.
    problems = workspace.memo(RULE.code)
    not_normal = rows.not_normal_expected
    elsewhere = _Elsewhere(workspace.folder_set())
    # The causes presumed to stand on most rows, each with what counts one.
    presumed = {cause: (pair,) for cause, pair in rows.presumed(RULE.code).items()}
    later = rows.finish_when_shown
    # The cases written otherwise only (`./a.md` for a file) have none to find.
    for context, relevant in rows.missing_expected:
        for index, value in enumerate(relevant):
            if type(value) is not str or value in searched:
                continue
            if value in found:
                said = _unsearched(workspace, use.builtin_corpora, value)
                if said is not None and not rows.passes_over(RULE.code, said[1], context.line):
                    yield RULE.finding(context.value_range("expect", "relevant", index), said[0], cause=said[1])
                continue
            # A value in normal form (nearly every one) is its own.
            normal = normalize_relative(value) if value in not_normal else value
            if normal in files:
                continue  # a path that is not in normal form is RAG206's
            cause = elsewhere.cause(value, normal)
            if cause is not None:
                counted = presumed.get(cause)
                if counted is not None:  # see RowsContext.passes_over
                    rows.pass_over(counted, context.line)
                    continue
            where = context.value_range("expect", "relevant", index)
            problem = problems.get(value)
            if problem is None:
                if later:
                    yield RULE.finding(where, f"{value!r} is not a file in the workspace", unfinished=value, cause=cause)
                    continue
                problem = problems[value] = _problem(workspace, value, normal)
            yield _finding(where, problem, cause)
    yield from _outside_the_cases_corpora(rows)


# The cause of a missing path that is no file of a folder of the workspace: then
# the folder, or the scheme of a URL (see _elsewhere).
_UNDER = "under what the workspace does not hold:"


class _Elsewhere:
    """The cause a missing expected path shares with every path of a corpus
    that lives elsewhere: the first of its folders that holds no workspace file
    (`kb/` of `kb/faq.html`), or the scheme of a URL (`https://`). Cases written
    for a corpus of workspace files and documents of another (a knowledge base,
    web pages) list such a path on every row: they fold (see every_path_unsearched).
    None for a path in folders of the workspace (most likely a typo, with its own
    finding). Found once per folder: such a corpus lists a distinct path on every row."""

    def __init__(self, folders: frozenset[str]) -> None:
        self.folders = folders
        self.by_folder: dict[str, str | None] = {}

    def cause(self, value: str, normal: str | None) -> str | None:
        if "://" in value:
            scheme = value.partition("://")[0]
            # A `file://` URI most likely names a file of the machine that wrote it (see _workspace_file_within).
            if scheme.isalpha() and scheme.lower() != "file":
                return f"{_UNDER} {scheme}://"
        if not normal:
            return None
        folder = normal.rpartition("/")[0]
        known = self.by_folder.get(folder, self)
        if known is not self:
            return known
        found = None
        at = normal.find("/")
        while at >= 0:
            if normal[:at] not in self.folders:
                found = f"{_UNDER} {normal[: at + 1]}"
                break
            at = normal.find("/", at + 1)
        self.by_folder[folder] = found
        return found


def _outside_the_cases_corpora(rows):
    """An expected path that a builtin target holds in one of its corpora, but
    not in those the case names in ``input.corpora``."""
    use = rows.use
    # Only a target whose corpora hold different files can hold a file in some
    # corpora and not in others.
    narrowing = [(target, corpora) for target, corpora in use.builtin_corpora if len({globs for _, globs in corpora}) > 1]
    if not narrowing:
        return
    workspace = rows.workspace
    searched = workspace.searched_files(use)
    held = workspace.memo(f"{RULE.code} corpora")
    for context, relevant in rows.expected:
        query = context.row.value.get("input")
        names = query.get("corpora") if type(query) is dict else None
        if type(names) is not list or not names or not all(type(name) is str for name in names):
            continue  # every corpus is searched, or the list is RAG004's
        for target, corpora in narrowing:
            globs = dict(corpora)
            if not globs.keys() >= set(names) or set(names) >= globs.keys():
                continue  # a corpus the target does not serve (RAG004), or all it serves
            for index, value in enumerate(relevant):
                if type(value) is not str or value not in searched:
                    continue
                key = (value, target, tuple(names))
                holders = held.get(key)
                if holders is None:
                    holders = held[key] = _corpora_holding(value, corpora, names)
                if holders:
                    if not rows.passes_over(RULE.code, f"{_OUTSIDE_THE_CASES} {holders[0]}", context.line):
                        yield _not_in_the_cases_corpora(context, index, value, target, names, holders)
                    break


def _corpora_holding(value: str, corpora, names: list[str]) -> tuple[str, ...]:
    """The corpora of a target that hold ``value``, when none of ``names`` does
    (else nothing to say)."""
    globs = dict(corpora)
    if globs_matcher(glob for name in names for glob in globs[name])(value):
        return ()
    return tuple(name for name, patterns in corpora if globs_matcher(patterns)(value))


def _not_in_the_cases_corpora(context, index: int, value: str, target: str, names: list[str], holders: tuple[str, ...]) -> Finding:
    searching = ", ".join(map(repr, names))
    holder = holders[0]
    # The whole list is written again with the corpus that holds the file added.
    fix = Fix(
        f"Search corpus {holder!r} too",
        edits=(TextEdit(context.value_range("input", "corpora"), json.dumps([*names, holder], ensure_ascii=False)),),
    )
    return RULE.finding(
        context.value_range("expect", "relevant", index),
        f"{value!r} is in corpus {', '.join(map(repr, holders))} of the builtin target {target!r}, but this case searches "
        f"only {searching}, so no hit can match it: add {holder!r} to `input.corpora`, or expect a file the corpora it searches hold",
        fixes=[fix],
        cause=f"{_OUTSIDE_THE_CASES} {holder}",
    )


def _unsearched(workspace, builtins, value: str) -> tuple[str, str] | None:
    """Why a builtin target of the dataset never returns the workspace file
    ``value``, and the cause it shares with the other files it never returns
    for that reason (None: each may, a file named like a binary one holding text)."""
    memo = workspace.memo(f"{RULE.code} unsearched")
    key = (value, builtins)
    if key not in memo:
        memo[key] = next(filter(None, (_why_never_returned(workspace, value, target, corpora) for target, corpora in builtins)), None)
    return memo[key]


def _why_never_returned(workspace, value: str, target: str, corpora) -> tuple[str, str] | None:
    why = never_searched(workspace, value, corpora)
    if why is None:
        return None
    # Of every path never returned for one reason by one target: a dataset
    # whose files lie outside the corpora a target's globs name has most of its
    # paths so, which one finding says (see every_path_unsearched).
    return _never_returned_message(workspace, value, target, corpora, why), f"{why} {_OF} {target}"


def _never_returned_message(workspace, value: str, target: str, corpora, why: str) -> str:
    builtin = f"the builtin target {target!r}"
    if why == HIDDEN:
        return (
            f"{value!r} is a hidden file (a part of its path begins with a dot), and {builtin} searches no hidden file, "
            "so no hit can match it: expect a file it searches"
        )
    if why == IN_NO_CORPUS:
        held = "; ".join(f"{name}: {', '.join(globs) or 'no glob'}" for name, globs in corpora) or "it has none"
        return (
            f"{value!r} is in none of the corpora of {builtin} ({held}), so no hit can match it: add a glob that holds it "
            "to a corpus in .punica/targets.yaml, or expect a file the corpora hold"
        )
    if why == TOO_LARGE:
        return (
            f"{value!r} is larger than the {workspace.settings.max_file_bytes:,} bytes {builtin} reads of a file, so no "
            "hit can match it: raise max-file-bytes in .punica/rag-lsp.toml, or expect a smaller file"
        )
    kind = "a binary file" if why == BINARY else "not UTF-8 text"
    return (
        f"{value!r} is {kind}, and {builtin} searches text files only, so no hit can match it: "
        "expect the text file that holds the passage"
    )


# The causes of findings on files a builtin target never returns: why, then
# _OF and the target; and of a file in a corpus the case does not search.
_OF = "of target"
_OUTSIDE_THE_CASES = "in a corpus the case does not search:"
_WHY_NEVER_RETURNED = {
    HIDDEN: "they are hidden files (a part of each path begins with a dot), which it never searches: expect files it searches",
    IN_NO_CORPUS: (
        "they lie outside every glob of its corpora, most likely because .punica/targets.yaml names other folders than "
        "the dataset's files are in: add globs that hold them to its corpora there"
    ),
    TOO_LARGE: "they are larger than the max-file-bytes it reads of a file: raise max-file-bytes in .punica/rag-lsp.toml",
}


@RULE.folds
def every_path_unsearched(cause):
    if cause.startswith(_OUTSIDE_THE_CASES):
        corpus = cause[len(_OUTSIDE_THE_CASES) :].strip()
        return (
            f"the cases ask to search corpora that do not hold the files they expect, which corpus {corpus!r} holds: "
            f"most likely `input.corpora` was written for another target; add {corpus!r} to every case's corpora",
            f"{FIRST_FIX} in every case",
        )
    if cause.startswith(_UNDER):
        under = cause[len(_UNDER) :].strip()
        return (
            f"beside workspace files, the cases expect documents under {under!r}, which this workspace does not hold: "
            "they most likely belong to a corpus that lives elsewhere (a knowledge base, web pages), which the suite's "
            "target does not search. Serve that corpus by a target of its own in .punica/targets.yaml (a command or http "
            "target) and run these cases through it, or remove those paths",
            None,
        )
    why, _, target = cause.partition(f" {_OF} ")
    reason = _WHY_NEVER_RETURNED.get(why, "they are not text files, and it searches text files only: expect the text files that hold the passages")
    return f"the builtin target {target!r} returns none of these files: {reason}", None


@RULE.finishes
def with_the_problem(workspace, finding):
    """An unfinished finding (see Finding.unfinished) with what is wrong with its
    path and the workspace file it most likely means."""
    value = finding.unfinished
    problems = workspace.memo(RULE.code)
    problem = problems.get(value)
    if problem is None:
        problem = problems[value] = _problem(workspace, value, normalize_relative(value))
    made = _finding(finding.range, problem, finding.cause)
    return Finding(finding.code, finding.severity, finding.range, made.message, finding.path, made.fixes, cause=finding.cause)


def _finding(where, problem: tuple[str, tuple[str, str] | None], cause: str | None = None) -> Finding:
    message, change = problem
    if change is None:
        return RULE.finding(where, message, cause=cause)
    title, new_text = change
    return RULE.finding(where, message, fixes=(Fix(title, edits=(TextEdit(where, new_text),)),), cause=cause)


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
    form = _form_of(context.workspace, value) if isinstance(value, str) else None
    chunk = _chunk_of(context.workspace, value) if isinstance(value, str) and form is None else None
    if chunk is not None:
        likely = (
            f"it is the id of a chunk of the workspace file {chunk!r}, as the builtin target's hits carry it "
            "(`path#L<first>-<last>`): the dataset expects chunks, which only `match: id` compares. Set "
            "`options: {rag: {match: id}}` in the suites that read it, or expect the files' paths"
        )
    elif form is not None:
        likely = (
            f"{form.said}: the tool that wrote the dataset most likely wrote every path so. Write the expected paths as "
            "workspace paths (relative to the workspace root, `/` between folders)"
        )
    else:
        likely = (
            "the corpus these cases describe most likely lives elsewhere. Declare the service that indexes it in "
            ".punica/targets.yaml and make it the suite's target (a command or http target; `workspace_paths: true` "
            "only if it indexes this repository), or fix the paths"
        )
    # Paths written another way are written as the files they name, every one
    # of them, when asked for (see written_as_workspace_files).
    yield RULE.finding(
        row.value_range("expect", "relevant", index),
        f"{tally.absent:,} of the {tally.listed:,} expected paths in this dataset ({tally.absent / tally.listed:.0%}) "
        f"are not workspace files{example}, {reader}: {likely}. Reported once for the file while most are missing; "
        "`rag-lsp check --unfold` lists each",
        fixes=(Fix(form.title, (), every=True),) if form is not None else (),
    )


@RULE.fixes_every
def written_as_workspace_files(workspace, path: str, lines: list[str], finding: Finding, fix: Fix) -> Fix:
    """The edits of the fix of every occurrence of expected paths written another
    way than the workspace files they name (see _form_of; the way of the path the
    finding stands on): each expected path written so becomes that file's path."""
    where = finding.range.start
    try:
        first = json.loads(lines[where.line][where.character : finding.range.end.character])
    except (IndexError, ValueError):
        return fix
    form = _form_of(workspace, first) if isinstance(first, str) else None
    if form is None:
        return fix
    # Each distinct path's new text (None: left as it is), once: a dataset lists
    # the same files over and over.
    new_texts: dict[str, str | None] = {}
    edits = []
    # The cases the rule looks at, as a check of the dataset reads them.
    rows = RowsContext.of(
        workspace, path, workspace.dataset_use(path), workspace.dataset_shape(path), read_lines(DatasetRow, lines, workspace.settings.max_line_bytes)
    )
    for context, relevant in rows.expected:
        for index, value in enumerate(relevant):
            if type(value) is not str:
                continue
            if value not in new_texts:
                file = form.file_of(value)
                new_texts[value] = json.dumps(file, ensure_ascii=False) if file is not None else None
            new_text = new_texts[value]
            if new_text is not None:
                edits.append(TextEdit(context.value_range("expect", "relevant", index), new_text))
    return Fix(fix.title, tuple(edits), fix.create_file, True)


class _Form(NamedTuple):
    """A way of writing expected paths other than as the workspace files they name."""

    # What the example path is, said of it.
    said: str
    # The title of the fix that writes every path so written as its file.
    title: str
    # The workspace file a path written this way names, or None.
    file_of: Callable[[str], "str | None"]


def _form_of(workspace, value: str) -> _Form | None:
    """How a missing expected path, ``value``, differs from a workspace file,
    where it is one written another way (a prefix before it, spaces around it,
    another letter case); None where it is no such file. Only the example the
    finding names is looked at: it is said of it, as what most likely holds of all."""
    files = workspace.file_set()
    trimmed = value.strip()
    if trimmed != value and normalize_relative(trimmed) in files:

        def trimmed_file(path: str) -> str | None:
            normal = normalize_relative(path.strip())
            return normal if normal and normal in files else None

        return _Form(f"it is the workspace file {trimmed!r} with spaces around it", "Trim the spaces around every expected path", trimmed_file)
    within = _workspace_file_within(workspace, value)
    if within is not None:
        tail, prefix = within

        def file_after_prefix(path: str) -> str | None:
            normal = normalize_relative(path[len(prefix) :]) if path.startswith(prefix) else None
            return normal if normal and normal in files else None

        return _Form(f"it is the workspace file {tail!r} with {prefix!r} before it", f"Remove {prefix!r} before every expected path", file_after_prefix)
    by_letters = _files_by_letters(workspace)
    file = by_letters.get(_letters_of(value))
    if file is not None:
        return _Form(
            f"it is the workspace file {file!r} written in other letter case",
            "Write every expected path in its workspace file's letter case",
            lambda path: by_letters.get(_letters_of(path)),
        )
    normal = normalize_relative(value)
    by_stem = _files_by_stem(workspace)
    # An extension is letters and digits (`src/a.py#L1-40` is a chunk's id, not a file's name).
    extension = normal[len(_stem_of(normal)) + 1 :] if normal else ""
    file = by_stem.get(_stem_of(normal)) if normal and (not extension or extension.isalnum()) else None
    if file is not None:

        def file_by_stem(path: str) -> str | None:
            normal = normalize_relative(path)
            return by_stem.get(_stem_of(normal)) if normal else None

        how = "without its extension" if _stem_of(normal) == normal else "with another extension"
        return _Form(f"it is the workspace file {file!r} written {how}", "Write every expected path with its workspace file's extension", file_by_stem)
    return None


def _stem_of(path: str) -> str:
    """A path without the extension of its file name: `docs/guide` of
    `docs/guide.md`, of `docs/guide.html` and of `docs/guide` itself."""
    folder, slash, name = path.rpartition("/")
    stem, dot, _ = name.rpartition(".")
    return folder + slash + (stem if dot and stem else name)


def _files_by_stem(workspace) -> dict[str, str]:
    """The workspace files by :func:`_stem_of`, leaving out those two files share
    (`guide.md`, `guide.html`): no path written with another extension names one
    of them."""
    return _files_by(workspace, "stem", _stem_of)


def _letters_of(path: str) -> str:
    """A path as files alike but for letter case (and `\\` between folders) read."""
    return path.replace("\\", "/").lower()


def _files_by_letters(workspace) -> dict[str, str]:
    """The workspace files by :func:`_letters_of`, leaving out those two files
    share (`README.md`, `readme.md`): no path written in other letter case names
    one of them."""
    return _files_by(workspace, "letters", _letters_of)


def _files_by(workspace, name: str, key_of: Callable[[str], str]) -> dict[str, str]:
    """The workspace files by ``key_of`` each, leaving out the keys two files
    share. Made once for the workspace's files, kept as ``name`` (the finding
    for the file looks again at every check)."""
    by_key = workspace.memo(f"{RULE.code} files by {name}")
    if not by_key:
        shared: set[str] = set()
        for file in workspace.file_set():
            key = key_of(file)
            if key in by_key:
                shared.add(key)
            by_key[key] = file
        for key in shared:
            del by_key[key]
    return by_key


def _workspace_file_within(workspace, value: str) -> tuple[str, str] | None:
    """The workspace file a path written from another folder names
    (`/home/dev/repo/src/a.py`, `repo/src/a.py`), with what is written before it:
    the longest tail of its folders that is a workspace file (in normal form);
    None where none is."""
    files = workspace.file_set()
    parts = value.replace("\\", "/").split("/")
    for first in range(1, len(parts)):
        tail = "/".join(parts[first:])
        normal = normalize_relative(tail) if tail else None
        if normal and normal in files:
            return normal, value[: len(value) - len(tail)]
    return None


def _chunk_of(workspace, value: str) -> str | None:
    """The workspace file whose chunk ``value`` names as the builtin target's
    hits name their chunks (``src/a.py#L1-40``), or None."""
    path, mark, lines = value.partition("#L")
    first, dash, last = lines.partition("-")
    if not (mark and first.isdigit() and (not dash or last.isdigit())):
        return None
    normal = normalize_relative(path)
    return normal if normal and normal in workspace.file_set() else None


def _names(kind: str, names: tuple[str, ...]) -> str:
    shown = ", ".join(repr(name) for name in names[:3])
    more = f" and {len(names) - 3:,} more" if len(names) > 3 else ""
    return f"{kind}{'s' if len(names) > 1 else ''} {shown}{more}"


def _problem(workspace, value: str, normal: str | None) -> tuple[str, tuple[str, str] | None]:
    """What is wrong with an expected path that is not a workspace file, and the
    fix to the workspace file it most likely means, if one is close enough: its
    title and the value's new text (each finding on the value gives it its range)."""
    if normal is None:
        leaves = f"{value!r} leaves the workspace: expected paths are relative to the workspace root, so no hit can match it"
        # An absolute path of the machine that wrote it (`/home/dev/repo/src/a.py`) most likely names the workspace file it ends in.
        within = _workspace_file_within(workspace, value)
        if within is None:
            return leaves, None
        tail, prefix = within
        return f"{leaves} (it is the workspace file {tail!r} with {prefix!r} before it)", (f"Change to {tail!r}", json.dumps(tail, ensure_ascii=False))
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
        # The whole JSON string token is replaced, so no escape of the old text survives.
        change = (f"Change to {best!r}", json.dumps(best, ensure_ascii=False))
        return f"{value!r} is not a file in the workspace, so no hit can match it (did you mean {best!r}?)", change
    # A path written from a folder above the workspace root (`repo/src/a.py`)
    # is too far from the file for the fuzzy ratio; the file it ends in is not.
    within = _workspace_file_within(workspace, value)
    if within is not None and "/" in within[0]:
        tail, prefix = within
        change = (f"Change to {tail!r}", json.dumps(tail, ensure_ascii=False))
        return f"{value!r} is not a file in the workspace, so no hit can match it: it is the workspace file {tail!r} with {prefix!r} before it", change
    return f"{value!r} is not a file in the workspace, so no hit can match it: fix the path or remove it", None
