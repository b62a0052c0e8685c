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
In the targets config it also finds what a run would trip on: a builtin target's
chunking or model that cannot be used, a recording that does not exist or lies
outside the workspace, and a corpus glob that matches no file the builtin target
searches (a misspelled folder, a folder named without `/**`, a hidden folder,
a path outside the workspace), and a corpus's documents file (`{documents: FILE}`)
that does not exist or lies outside the workspace; the quick fix offers the
glob or recording it probably meant. In a rag case, a corpus of `input.corpora` must be one that
each target its suites send it to serves, where the target declares its corpora
(the builtin always does: the names under `builtin.corpora`).

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
say what each key means.
"""

from ..findings import Severity
from ..manifests import GDI_TEXT, RAG_CASE
from ..rowschema import case_checker_serving, non_finite_message, row_checker, row_issues
from ..schemacheck import non_finite_issues, schema_issues, validator_for
from . import ROW, SUITE_FILE, TARGETS, YAML, rule_of
from ._suite import closest, did_you_mean, rename_fixes
from ._targets import CorpusFiles, corpus_documents, corpus_globs, documents_problem, glob_problem, recording_problem

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
    from ..targets.chunking import DEFAULT_SIZE

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
    from ..targets.chunking import overlap_problem

    problem = overlap_problem(size_value, overlap.scalar())
    if problem is not None:
        yield RULE.finding(context.node_range(overlap), problem)


def _model(context, node):
    if node is None:
        return
    name = node.scalar()
    from ..modelfiles import WORDLLAMA, files_outside, model2vec_problem

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
    checker = (
        case_checker_serving(tuple(sorted(rows.use.corpora_served_by_all)), bool(builtins))
        if served
        else row_checker(default_shape)
    )
    said: dict[str, str] = {}  # by corpus: a misnamed corpus is usually misnamed in every case
    for start in range(0, len(rows.rows), _VALIDATED_TOGETHER):
        group = rows.rows[start : start + _VALIDATED_TOGETHER]
        # A row read by the standard decoder may hold a number read as infinity,
        # which a schema may allow: such a row is always looked at (they are rare).
        values = [
            context.row.value
            for context in group
            if type(context.row.value) is dict and context.row.shape in (None, default_shape) and not context.row.exact
        ]
        # Most rows are valid: one call into jsonschema-rs settles a group of them.
        if len(values) == len(group) and checker.all_valid(values):
            continue
        for context in group:
            value = context.row.value
            row = context.row
            if type(value) is dict and row.shape in (None, default_shape) and not row.exact and checker.is_valid(value):
                continue
            yield from _row_schema(context, rows.shape)
            if served:
                yield from _unserved_corpora(context, served, said, builtins)


def _unserved_corpora(context, served, said: dict[str, str], builtins: tuple[str, ...] = ()):
    """Corpora the case asks to search that a target its suites send it to does not
    serve: that target refuses the case, or finds nothing in a corpus it does not have.
    An empty list, where a builtin target reads the case, is refused by it."""
    value = context.row.value
    case_input = value.get("input") if type(value) is dict else None
    corpora = case_input.get("corpora") if type(case_input) is dict else None
    if type(corpora) is not list:
        return
    if not corpora and builtins:
        served_by_builtins = [set(names) for target, names in served if target in builtins]
        serves = ", ".join(sorted(set.intersection(*served_by_builtins))) if served_by_builtins else ""
        yield RULE.finding(
            context.value_range("input", "corpora"),
            f"`input.corpora` is empty: the builtin target {builtins[0]!r} would search no corpus, and refuses the "
            f"case; name the corpora to search (it serves: {serves or 'none'}), or leave the key out to search them all",
        )
        return
    for index, corpus in enumerate(corpora):
        if type(corpus) is str and _not_serving(served, corpus):
            message = said.get(corpus)
            if message is None:
                message = said[corpus] = _unserved_message(served, corpus)
            yield RULE.finding(context.value_range("input", "corpora", index), message, cause=f"corpus {corpus}")


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


def _row_schema(context, file_shape):
    row = context.row
    if row.error is not None or row.refused:
        return
    if not row.is_object:
        yield RULE.finding(context.line_range(), "a dataset row must be a JSON object ({...})")
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
    for issue in row_issues(row.value, shape, row.exact):
        cause = issue_cause(issue)
        if issue.anchor == "key":
            yield RULE.finding(context.key_range(*issue.path), issue.message, cause=cause)
        elif issue.keyword == "finite":
            where = context.value_range(*issue.path)
            written = row.text[where.start.character : where.end.character]
            yield RULE.finding(where, non_finite_message(issue.path, written), cause=cause)
        else:
            yield RULE.finding(context.value_range(*issue.path), issue.message, cause=cause)


def issue_cause(issue) -> str:
    """What a row's schema issue shares with the same issue of other rows: the
    check that failed, at the same key (list positions aside), for the same
    value's type. An unknown key is its name; a wrong type, the type written."""
    where = ".".join(str(part) for part in issue.path if type(part) is not int) or "the row"
    return f"{issue.keyword} at {where}"


@RULE.folds
def every_row_alike(cause):
    keyword, _, where = cause.partition(" at ")
    if cause.startswith("corpus "):
        return (
            f"these cases ask for {cause}, which the suite's target does not serve: most likely the dataset was "
            "written for a search service of the team's own while its suites name another target. Name that service "
            "in .punica/targets.yaml (a command or http target serving the corpus) and make it the suites' target, "
            "or add the corpus to the builtin target's `corpora`",
            None,
        )
    if keyword == "additionalProperties":
        return (
            f"every such row carries the key `{where.rsplit('.', 1)[-1]}`, most likely written by the tool that exported "
            "the dataset: move the team's own data into `metadata`, where any key is welcome, or remove it",
            None,
        )
    return f"the rows were most likely written this way by the tool that wrote the dataset ({keyword} at `{where}`)", None
