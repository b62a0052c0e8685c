"""Value does not match the schema.

## What it does
Validates suite files, the targets config and dataset rows against the JSON
Schemas shipped in `schemas/` (draft 2020-12): a wrong type, a missing required
key, a value outside its enum or range, an unknown key. The finding lands on the
offending node: an unknown key is underlined itself, a wrong value is underlined
as a value, and a missing key is reported on the key of the object that lacks it.
A dataset row whose shape differs from the rest of its file (a gdi_text_v1 row
among rag cases) is reported here too, and so is a number of a row too large
for a double (`1e400`), which would be read as infinity: NaN and infinity are
never numbers here (in the targets config neither: `timeout_s: .inf`).
`rag-lsp run` breaks a gdi_text_v1 row with this finding rather than score it.
A row written as a JSON string that holds the row's object (the row encoded
twice) is told apart, and its quick fix writes the object itself.
In the targets config it also finds what a run would trip on: a builtin target's
chunking or model that cannot be used, a recording that does not exist or lies
outside the workspace, and a corpus glob that matches no file the builtin target
searches (a misspelled folder, a folder named without `/**`, a hidden folder,
a path outside the workspace), and a corpus's documents file (`{documents: FILE}`)
that does not exist or lies outside the workspace; the quick fix offers the
glob or recording it probably meant. In a rag case, a corpus of `input.corpora` must be one that
each target its suites send it to serves, where the target declares its corpora
(the builtin always does: the names under `builtin.corpora`). When most cases of
a dataset (and at least 20) ask for a corpus a suite's target does not serve, the
cause is the suite's target as much as the cases: the finding then stands on the
suite's `target` too.

## Why is this bad?
A misspelled key (`tresholds:`) is not a setting: it is silently ignored by a
lenient reader, and the suite gates on nothing.

## Example
```yaml
suites:
  - id: rag-code
    dataset: .punica/evals/rag-code.jsonl
    engines: [rag]
    tresholds: {rag.recall: 0.8}
```

## How to fix
Use the key or value the message names; the schemas' descriptions (shown on hover)
say what each key means. In a dataset row, the quick fix renames an unknown key
to the key it most likely misspells (`expected` to `expect`, `qid` to `id`) where
the row lacks that key, and otherwise removes it with its value. A rag case
holds `id`, `input` (its `query`, and optionally `corpora` and `topK`) and
`expect` (its `relevant` list, and optionally `grades`), and may hold
`metadata`; a gdi_text_v1 row holds `input_id`, `prompt`, `reference_contexts`,
`sut_response` and `retrieved_context`. A dataset written by another tool
(`question`, `contexts`, `ground_truth`) names the same data otherwise: rename
its keys, or bring BEIR or TREC judgments in with `rag-lsp import`.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from ...reading.findings import Fix, Severity, TextEdit
from ...workspace.manifests import GDI_TEXT, RAG_CASE
from ...workspace.rowschema import (
    case_checker_serving,
    non_finite_message,
    object_schema_at,
    place_of,
    place_parts,
    place_text,
    row_checker,
    row_issues,
    without_keys_of_other_rules,
)
from ...reading.jsonrows import value_at
from ...reading.schemawords import closest_name
from ..folding import FIRST_FIX
from ...reading.schemacheck import non_finite_issues, schema_issues, validator_for
from . import ROW, SUITE, SUITE_FILE, TARGETS, YAML, rule_of
from ._suite import closest, did_you_mean, rename_fixes
from ._targets import CorpusFiles, corpus_documents, corpus_globs, documents_problem, glob_problem, recording_problem
from ._set_aside import NO_CORPORA, THE_ROW, SetAside

RULE = rule_of(__doc__, "RAG004", "schema", Severity.ERROR)

_SHAPE_NAMES = {RAG_CASE: "rag case", GDI_TEXT: "gdi_text_v1 row"}

# Rows validated in one call: a row that is invalid, or not an object of the
# file's shape, sends its group to a call per row.
_VALIDATED_TOGETHER = 64


@RULE.check(YAML)
def extra_documents(context):
    for problem in context.parsed.document.problems:
        if problem.code == "RAG004":
            yield RULE.finding(context.range(problem.start, problem.end), problem.message)


@RULE.check(SUITE_FILE)
def suite_file_schema(context):
    for issue in schema_issues(validator_for("suite"), context.parsed.value):
        yield RULE.finding(context.issue_range(issue), issue.message)


@RULE.check(TARGETS)
def targets_schema(context):
    value = context.parsed.value
    bad = list(non_finite_issues(value))
    taken = {issue.path for issue in bad}
    for issue in [*bad, *(issue for issue in schema_issues(validator_for("targets"), value) if issue.path not in taken)]:
        yield RULE.finding(context.issue_range(issue), issue.message)
    # What the schema cannot say of a builtin target's options.
    targets = context.root.get("targets") if context.root is not None and context.root.is_map else None
    if targets is None or not targets.is_map:
        return
    corpus_files = CorpusFiles(context.workspace)
    for _, target in targets.items():
        if not target.is_map:
            continue
        yield from _recording(context, target.get("recorded"))
        builtin = target.get("builtin")
        if builtin is None or not builtin.is_map:
            continue
        yield from _chunking(context, builtin.get("chunking"))
        yield from _model(context, builtin.get("model"))
        yield from _corpora(context, builtin.get("corpora"), corpus_files)


def _recording(context, node):
    written = node.text() if node is not None else None
    problem = recording_problem(context.workspace, written) if written else None
    if problem is not None:
        message, meant = problem
        yield RULE.finding(context.node_range(node), message, fixes=rename_fixes(context, node, [meant] if meant else []))


def _corpora(context, node, files):
    for _, documents in corpus_documents(node):
        problem = documents_problem(context.workspace, documents.text())
        if problem is not None:
            yield RULE.finding(context.node_range(documents), problem)
    for corpus, glob in corpus_globs(node):
        problem = glob_problem(files, corpus, glob.text())
        if problem is not None:
            message, meant = problem
            yield RULE.finding(context.node_range(glob), message, fixes=rename_fixes(context, glob, [meant] if meant else []))


def _chunking(context, node):
    if node is None or not node.is_map:
        return
    unit, size, overlap = (node.get(key) for key in ("unit", "size", "overlap"))
    if unit is not None and unit.scalar() == "file":
        for key, _ in node.items():
            if key.scalar() in ("size", "overlap"):
                yield RULE.finding(
                    context.node_range(key),
                    f"`{key.scalar()}` does not apply to `unit: file`: a whole file is one chunk; "
                    "remove it, or use `unit: lines`",
                )
        return
    from ...workspace.chunking import DEFAULT_SIZE

    size_value = size.scalar() if size is not None else DEFAULT_SIZE
    if overlap is None or type(size_value) is not int or type(overlap.scalar()) is not int:
        return
    if overlap.scalar() >= size_value:
        yield RULE.finding(
            context.node_range(overlap),
            f"`overlap` ({overlap.scalar()}) must be less than `size` ({size_value}): a chunk shares part of its "
            f"lines with the next, not all of them",
        )
        return
    from ...workspace.chunking import overlap_problem

    problem = overlap_problem(size_value, overlap.scalar())
    if problem is not None:
        yield RULE.finding(context.node_range(overlap), problem)


def _model(context, node):
    if node is None:
        return
    name = node.scalar()
    from ...workspace.modelfiles import WORDLLAMA, files_outside, model2vec_problem

    if not isinstance(name, str) or not name.strip() or name == WORDLLAMA:
        return
    folder = context.workspace.absolute(name)
    if not context.workspace.contains(folder):
        problem = "it is not a folder of the workspace (the builtin target reads only workspace files)"
    else:
        problem = model2vec_problem(folder)
    if problem is None:
        linked = files_outside(folder, context.workspace.contains)
        if linked:
            problem = f"{', '.join(linked)} link out of the workspace (the builtin target reads only workspace files)"
    if problem is not None:
        yield RULE.finding(
            context.node_range(node),
            f"`model: {name}` is neither `wordllama` nor a model2vec model folder: {problem}; "
            "a model2vec folder holds config.json, model.safetensors and tokenizer.json",
        )


@RULE.check(ROW)
def row_schema(rows):
    default_shape = rows.shape or RAG_CASE
    served = rows.use.served_corpora if default_shape == RAG_CASE else ()
    # With targets that declare their corpora, the fast path settles those too.
    # The builtin target refuses a case whose `input.corpora` is empty (it would search nothing).
    builtins = tuple(target for target, _ in rows.use.builtin_corpora) if served else ()
    checker = without_keys_of_other_rules(
        case_checker_serving(tuple(sorted(rows.use.corpora_served_by_all)), bool(builtins)) if served else row_checker(default_shape),
        default_shape,
    )
    said: dict[str, str] = {}  # by corpus: a misnamed corpus is usually misnamed in every case
    # Values explained alike (see SetAside.alike) are told by the row's schema
    # alone: not where the checker holds `input.corpora` to the corpora served too.
    explain = None if served else _explainer(default_shape)
    aside = SetAside.of(rows.systemic, checker, default_shape, RULE.code, explain) if rows.systemic else None
    for start in range(0, len(rows.rows), _VALIDATED_TOGETHER):
        group = rows.rows[start : start + _VALIDATED_TOGETHER]
        # A row read by the standard decoder may hold a number read as infinity,
        # which a schema may allow: such a row is always looked at (they are rare),
        # as is a row that is no object of the file's shape. Neither sends the
        # rest of its group to a call per row.
        plain = [
            context
            for context in group
            if type(context.row.value) is dict and context.row.shape in (None, default_shape) and not context.row.exact
        ]
        if aside is not None:
            yield from _group_setting_aside(aside, group, plain, rows, _UnservedCorpora(served, said, builtins))
        else:
            yield from _group(checker, group, plain, rows, _UnservedCorpora(served, said, builtins))


def _explainer(shape: str):
    """The causes of the issues of a row of ``shape``, with the path of each, as _row_schema makes them."""
    schema = row_checker(shape).schema

    def explain(value):
        return [(issue.path, issue_cause(issue, schema)) for issue in row_issues(value, shape, False)]

    return explain


class _UnservedCorpora(NamedTuple):
    """What _unserved_corpora needs of the batch."""

    served: Any
    said: dict[str, str]
    builtins: tuple[str, ...]

    def findings(self, context, rows, passed=frozenset()):
        if self.served:
            yield from _unserved_corpora(context, self.served, self.said, self.builtins, rows, passed)


def _group(checker, group, plain, rows, unserved: _UnservedCorpora):
    """The findings of a group of rows, of which ``plain`` are objects of the file's shape."""
    # Most rows are valid: one call into jsonschema-rs settles a group of them.
    plain_valid = checker.all_valid([context.row.value for context in plain])
    if plain_valid and len(plain) == len(group):
        return
    plain_ids = {id(context) for context in plain}
    for context in group:
        if id(context) in plain_ids and (plain_valid or checker.is_valid(context.row.value)):
            continue
        yield from _row_schema(context, rows.shape, rows)
        yield from unserved.findings(context, rows)


def _group_setting_aside(aside: SetAside, group, plain, rows, unserved: _UnservedCorpora):
    """As _group, where causes are presumed to stand on most rows (see SetAside)."""
    if aside.counted_if_valid(plain, rows):
        set_aside = None
    else:
        set_aside = aside.apply(plain, rows)
        if set_aside.all_valid():
            set_aside = None
    if set_aside is None and len(plain) == len(group):
        return
    # Each plain row by its identity: what was set aside of it, and whether the rest is valid.
    numbers = {id(context): number for number, context in enumerate(plain)}
    for context in group:
        number = numbers.get(id(context))
        if number is not None and (set_aside is None or set_aside.is_valid(number)):
            continue
        passed = set_aside.counted[number] if number is not None and set_aside is not None else frozenset()
        yield from _row_schema(context, rows.shape, rows, passed)
        yield from unserved.findings(context, rows, passed)


def _unserved_corpora(context, served, said: dict[str, str], builtins: tuple[str, ...] = (), rows=None, passed=frozenset()):
    """Corpora the case asks to search that a target its suites send it to does not
    serve: that target refuses the case, or finds nothing in a corpus it does not have.
    An empty list, where a builtin target reads the case, is refused by it.
    ``passed``: causes already counted on this row (see SetAside)."""
    value = context.row.value
    case_input = value.get("input") if type(value) is dict else None
    corpora = case_input.get("corpora") if type(case_input) is dict else None
    if type(corpora) is not list:
        return
    if not corpora and builtins:
        if NO_CORPORA in passed or (rows is not None and rows.passes_over(RULE.code, NO_CORPORA, context.line)):
            return
        served_by_builtins = [set(names) for target, names in served if target in builtins]
        serves = ", ".join(sorted(set.intersection(*served_by_builtins))) if served_by_builtins else ""
        yield RULE.finding(
            context.value_range("input", "corpora"),
            f"`input.corpora` is empty: the builtin target {builtins[0]!r} would search no corpus, and refuses the "
            f"case; name the corpora to search (it serves: {serves or 'none'}), or leave the key out to search them all",
            fixes=[Fix("Remove `corpora`", edits=(TextEdit(context.member_range("input", "corpora"), ""),))],
            cause=NO_CORPORA,
        )
        return
    for index, corpus in enumerate(corpora):
        if type(corpus) is str and _not_serving(served, corpus):
            cause = f"corpus {corpus}"
            if cause in passed or (rows is not None and rows.passes_over(RULE.code, cause, context.line)):
                continue
            message = said.get(corpus)
            if message is None:
                message = said[corpus] = _unserved_message(served, corpus)
            yield RULE.finding(context.value_range("input", "corpora", index), message, cause=cause)


@RULE.check(SUITE)
def target_serving_no_corpus_most_cases_ask(context):
    """The suite's target, where most cases of its dataset ask to search a corpus
    it does not serve: the cause lives in the setting as much as in the cases
    (whose findings fold into one, see core.checking.folding)."""
    suite = context.suite
    if suite is None or suite.dataset is None or suite.target is None or not suite.engines:
        return
    served = dict(context.workspace.dataset_use(suite.dataset).served_corpora).get(suite.target)
    if served is None:  # a target that declares no corpora serves any
        return
    missing = [name for name in context.workspace.corpora_most_asked(suite.dataset) if name not in served]
    node = suite.target_id_node
    if not missing or node is None:
        return
    names = " and ".join(repr(name) for name in missing)
    # No count in the message: a case added or removed changes nothing said here.
    yield RULE.finding(
        context.node_range(node),
        f"most cases of {suite.dataset} ask to search {names}, which target {suite.target!r} does not serve "
        f"(it serves: {', '.join(sorted(served)) or 'none'}): name a target that serves it here (declared in "
        ".punica/targets.yaml), or add it to this target's corpora there",
    )


def _not_serving(served, corpus: str) -> list[str]:
    return [target for target, corpora in served if corpus not in corpora]


def _unserved_message(served, corpus: str) -> str:
    missing = _not_serving(served, corpus)
    serving = sorted(set.intersection(*(set(corpora) for target, corpora in served if target in missing)))
    hint = did_you_mean(closest(corpus, serving, limit=1))
    listed = ", ".join(serving) if serving else "none"
    if len(missing) == 1:
        return f"corpus {corpus!r} is not one that target {missing[0]!r} serves{hint}; it serves: {listed}"
    names = ", ".join(repr(target) for target in missing[:-1]) + f" and {missing[-1]!r}"
    return f"corpus {corpus!r} is not one that targets {names} serve{hint}; they all serve: {listed}"


def _row_schema(context, file_shape, rows=None, passed=frozenset()):
    """The schema's findings on one row that failed it; ``passed``: causes
    already counted on it (see SetAside), the others presumed to stand on
    most rows are counted now (see RowsContext.passes_over)."""
    row = context.row
    if row.error is not None or row.refused:
        return
    if not row.is_object:
        held = _object_held(row.value)
        if held is not None:
            # A tool that writes each row as a JSON string holding the object
            # (encoded twice) writes every row so: one cause, and each row's fix
            # writes the object it holds.
            if rows is not None and rows.systemic and rows.passes_over(RULE.code, ENCODED_TWICE, context.line):
                return
            # The row's value is all the line holds but blanks.
            where = context.columns(len(row.text) - len(row.text.lstrip()), len(row.text.rstrip()))
            yield RULE.finding(
                where,
                "a dataset row must be a JSON object ({...}): this row is a JSON string that holds one (the row encoded "
                "twice); write the object itself",
                fixes=(Fix("Write the object the string holds", (TextEdit(where, held),)),),
                cause=ENCODED_TWICE,
            )
            return
        # One cause whatever else the row holds: a tool that writes each row as
        # a JSON array (a table's row) writes every row so.
        if rows is not None and rows.systemic and rows.passes_over(RULE.code, NOT_AN_OBJECT, context.line):
            return
        yield RULE.finding(context.line_range(), "a dataset row must be a JSON object ({...})", cause=NOT_AN_OBJECT)
        return
    own_shape = row.shape
    shape = file_shape or own_shape or RAG_CASE
    if own_shape is not None and own_shape != shape:
        yield RULE.finding(
            context.line_range(),
            f"this row is a {_SHAPE_NAMES[own_shape]}, but the file holds {_SHAPE_NAMES[shape]}s: "
            "keep one row shape per dataset",
        )
        return
    schema = row_checker(shape).schema
    for issue in row_issues(row.value, shape, row.exact):
        cause = issue_cause(issue, schema)
        if cause in passed or (rows is not None and rows.systemic and rows.passes_over(RULE.code, cause, context.line)):
            continue
        if issue.anchor == "key" and issue.keyword == "additionalProperties":
            yield RULE.finding(context.key_range(*issue.path), issue.message, fixes=_unknown_key_fixes(context, schema, issue.path), cause=cause)
        elif issue.anchor == "key":
            yield RULE.finding(context.key_range(*issue.path), issue.message, cause=cause)
        elif issue.keyword == "finite":
            where = context.value_range(*issue.path)
            written = row.text[where.start.character : where.end.character]
            yield RULE.finding(where, non_finite_message(issue.path, written), cause=cause)
        else:
            yield RULE.finding(context.value_range(*issue.path), issue.message, cause=cause)


def _unknown_key_fixes(context, schema, path) -> list[Fix]:
    """A key nothing reads: renamed to the key it most likely misspells (the
    message's "did you mean", see schemawords.suggest), where the object lacks
    that one (`expected`, `qid`); else removed, with its value."""
    removal = Fix(f"Remove the key {path[-1]!r}", edits=(TextEdit(context.member_range(*path), ""),))
    holder = value_at(context.row.value, path[:-1])
    if type(holder) is not dict:
        return [removal]
    meant = _meant_key(schema, place_of(schema, path[:-1]), str(path[-1]))
    if meant is None or meant in holder:
        return [removal]
    rename = Fix(f"Rename the key {path[-1]!r} to {meant!r}", edits=(TextEdit(context.key_range(*path), json.dumps(meant, ensure_ascii=False)),))
    return [rename, removal]


def _meant_anywhere(where: str) -> str | None:
    """The key a misspelt unknown key at ``where`` (a place, see place_of) most
    likely means, in the schema of either row shape."""
    path = place_parts(where)
    if not path:
        return None
    for shape in (RAG_CASE, GDI_TEXT):
        meant = _meant_key(row_checker(shape).schema, path[:-1], path[-1])
        if meant is not None:
            return meant
    return None


def _meant_key(schema, place, key: str) -> str | None:
    """The key the schema names for the object at ``place`` that ``key`` most likely misspells."""
    node = object_schema_at(schema, place)
    known = node.get("properties") if node is not None else None
    return closest_name(key, list(known)) if isinstance(known, dict) else None


def issue_cause(issue, schema) -> str:
    """What a row's schema issue shares with the same issue of other rows: the
    check that failed, at the same place of the row (see place_of: any element
    of a list, any value of a map of the row's own keys). An unknown key is its
    name."""
    return f"{issue.keyword} at {place_text(place_of(schema, issue.path)) or THE_ROW}"


# The cause of a row that is no JSON object (see issue_cause), and of one that
# is a JSON string holding an object.
NOT_AN_OBJECT = f"type at {THE_ROW}"
ENCODED_TWICE = "a row encoded twice"


def _object_held(value) -> str | None:
    """The text of the JSON object a row's string holds (a row encoded twice), or None."""
    if type(value) is not str or not value.lstrip().startswith("{"):
        return None
    try:
        held = json.loads(value)
    except ValueError:
        return None
    return value.strip() if type(held) is dict and "\n" not in value else None


@RULE.folds
def every_row_alike(cause):
    keyword, _, where = cause.partition(" at ")
    if cause == ENCODED_TWICE:
        return (
            "the tool that wrote the dataset encodes each row twice: every line is a JSON string holding the row's "
            "object (`json.dumps` of a text already JSON, or `jq` without `fromjson`): write the objects themselves",
            "Write every row's object",
        )
    if cause == NOT_AN_OBJECT:
        return (
            "the tool that wrote the dataset writes each row as another JSON value than an object (a list, as a "
            "table's rows are written), where a dataset holds one object per line: write each case as an object "
            "with `id`, `input` and `expect`",
            None,
        )
    if cause.startswith("corpus "):
        return (
            f"these cases ask for {cause}, which the suite's target does not serve: most likely the dataset was "
            "written for a search service of the team's own while its suites name another target. Name that service "
            "in .punica/targets.yaml (a command or http target serving the corpus) and make it the suites' target, "
            "or add the corpus to the builtin target's `corpora`",
            None,
        )
    if cause == NO_CORPORA:
        return (
            "the tool that wrote the dataset writes `corpora: []` where a case names no corpus, and the builtin target "
            "refuses such a case: leave the key out (every corpus is searched) or name the corpora to search",
            "Remove every empty `corpora`",
        )
    if keyword == "additionalProperties":
        key = where.rsplit(".", 1)[-1]
        meant = _meant_anywhere(where)
        if meant is not None:
            # Each row's fix renames the key where the row lacks the one it means
            # (else it removes it): the fix of every occurrence is named after the first's.
            return (
                f"every such row carries the key `{key}`, which nothing reads. Where a row has no `{meant}`, it is most "
                f"likely `{meant}` misspelt, or named as the tool that wrote the dataset names it: rename it. Where a row "
                f"has one, it is a copy or the tool's own data: move it into `metadata`, or remove it",
                f"{FIRST_FIX} in every row",
            )
        return (
            f"every such row carries the key `{key}`, most likely written by the tool that exported "
            "the dataset: move the team's own data into `metadata`, where any key is welcome, or remove it",
            f"Remove the key `{key}` from every row",
        )
    place = THE_ROW if where == THE_ROW else f"`{where}`"
    if keyword == "required":
        # One cause for every key missing at that place: the headline names the
        # first member's key, and a row written by another tool often lacks several.
        return (
            f"the tool that wrote the dataset names the keys required at {place} otherwise (a row may lack more "
            "than the key named here; the unknown keys reported beside this finding are most likely the same data "
            "under that tool's names): rename them as `rag-lsp check --explain RAG004` describes a row",
            None,
        )
    return f"the tool that wrote the dataset wrote every such row this way ({keyword} at {place})", None
