"""Engine options or metric config fail the manifest's `config_schema`.

## What it does
Validates each `options.<engine>` of a suite against that engine manifest's
`config_schema`, and each `metrics.<name>` config against that metric manifest's
`config_schema`: a wrong type, a value outside its enum or range, an unknown
option. The finding lands on the offending value or key. A `null` or empty
metric config means the manifest's defaults and is valid. Unknown engines and
metrics are RAG100 and RAG101.

A config is read more strictly than JSON Schema reads it, as `rag-lsp run` reads
it (a suite with this finding is not run):

* an option the `config_schema` does not list is unknown, with a did-you-mean,
  unless the schema says which other keys it allows (`additionalProperties`);
  the seed's `rag.hit_at_k` schema says nothing, and `topk: 5` would otherwise
  be ignored while the metric scores at its default k;
* `5.0` for an integer option (`k`) is refused, with a quick fix to `5`;
* NaN and infinity (`.nan`, `.inf`, `-.inf`) are never numbers: with `t1: .nan`
  no ratio is below the threshold, and every pair would pass the first stage.

## Why is this bad?
An option the engine does not understand is ignored or crashes the run:
`match: url` would make every expected value match nothing, and a misspelled
`kk: 5` scores every hit instead of the first five.

## Example
```yaml
options:
  rag: {match: url, k: 0}
metrics:
  rag.hit_at_k: {t1: 2, topk: 5, k: 5.0, t2: .nan}
```

## How to fix
Use a value the message allows; hover an option to read its documentation.
For `rag`: `match` is `path`, `id` or `corpus`, `k` an integer of at least 1.
"""


from ..contexts import locate
from ...reading.findings import Fix, Severity, TextEdit
from ...reading.schemacheck import config_issues
from ...reading.yamltree import TooLarge, to_python
from . import SUITE, rule_of
from ._suite import string_keys

RULE = rule_of(__doc__, "RAG108", "invalid-config", Severity.ERROR)


@RULE.check(SUITE)
def invalid_config(context):
    yield from _engine_options(context)
    yield from _metric_configs(context)


def _engine_options(context):
    registry = context.workspace.manifests()
    for name, key, value in string_keys(context.node.get("options")):
        manifest = registry.engine(name)
        # Not a mapping: RAG004 says so from the suite schema.
        if manifest is not None and value.is_map:
            yield from _check(context, f"engine {name!r}", manifest, key, value)


def _metric_configs(context):
    registry = context.workspace.manifests()
    for name, key, value in string_keys(context.node.get("metrics")):
        manifest = registry.metric_manifest(name)
        # null means the defaults; any other non-mapping is RAG004's.
        if manifest is not None and value.is_map:
            yield from _check(context, f"metric {name!r}", manifest, key, value, name)


def _check(context, owner: str, manifest, key, value, metric: str | None = None):
    checker = manifest.config_checker
    # A config_schema that is not a valid schema is the manifest's finding (RAG301).
    if checker is None or not checker.schema_is_valid:
        return
    try:
        instance = to_python(value.resolve(), context.workspace.yaml_limits)
        issues = config_issues(checker, instance)
        if not issues and not manifest.builtin and isinstance(instance, dict):
            issues = _implementation_issues(metric, instance, manifest)
    except TooLarge:
        return  # RAG005's
    except Exception:  # noqa: BLE001 - e.g. an unresolvable $ref: a config_schema
        return  # the validator cannot use is the manifest's finding (RAG301)
    # A value of the wrong type also fails its enum or range: say it once.
    mistyped = {issue.path for issue in issues if issue.keyword == "type"}
    for issue in issues:
        if issue.path in mistyped and issue.keyword != "type":
            continue
        if not issue.path and issue.anchor == "key":
            # A key missing from the whole config: underline the engine / metric name.
            start, end = key.start, key.end
        else:
            start, end = locate(value, issue.path, issue.anchor)
        where = context.range(start, end)
        fixes = []
        if issue.keyword == "integer":
            written = str(int(_value_at(instance, issue.path)))
            fixes.append(Fix(f"Change to {written}", edits=(TextEdit(where, written),)))
        yield RULE.finding(where, _message(owner, issue), fixes)


def _value_at(instance, path):
    for part in path:
        instance = instance[part]
    return instance


def _implementation_issues(metric, config, manifest):
    """What rag-lsp's own scorer of a metric refuses beyond the schema, for a
    workspace manifest that redefines the metric (the built-in one's schema says
    it all): `rag-lsp run` refuses such a suite, so the check says why."""
    if metric != "rag.hit_at_k":
        return []
    from ...workspace.hit_at_k_config import ConfigError, HitAtKConfig

    try:
        HitAtKConfig.from_config(config, manifest.config_schema)
    except ConfigError as error:
        from ...reading.schemacheck import SchemaIssue

        if error.code == "RAG302":
            # The manifest's own default: its file says so too; here, why the suite is not run.
            said = f"rag-lsp's rag.hit_at_k cannot score with the manifest {manifest.path} (RAG302 there)"
        else:
            said = "rag-lsp's rag.hit_at_k cannot score this config"
        return [SchemaIssue((), f"{said}: {problem}", "key") for problem in error.problems]
    return []


def _message(owner: str, issue) -> str:
    if issue.path and issue.anchor != "key":
        option = ".".join(str(part) for part in issue.path)
        return f"{owner} option {option!r}: {issue.message}"
    return f"{owner} options: {issue.message}"
