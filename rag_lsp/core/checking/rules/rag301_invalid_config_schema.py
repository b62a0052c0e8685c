"""Manifest `config_schema` is not a valid JSON Schema.

## What it does
Checks a manifest's `config_schema` against the JSON Schema metaschema of its
dialect (draft 2020-12 unless the schema names another with `$schema`): a type
name that does not exist, a keyword whose value has the wrong type, a `pattern`
that is not a regular expression, a `$ref` that points to nothing in the schema
or to a schema elsewhere (rag-lsp never fetches one). The finding lands on the
offending value inside `config_schema`.

## Why is this bad?
`config_schema` is what every suite's engine options or metric config are checked
against (RAG108), and what hover and completion read. An invalid schema either
rejects every config or, worse, quietly accepts anything, so a typo in a suite's
`k` or `t1` is never caught.

## Example
```yaml
config_schema:
  type: object
  properties:
    k: {type: numbr, minimum: "1"}
    language: {$ref: "#/$defs/Langauge"}
```

## How to fix
Use a JSON Schema type (`string`, `number`, `integer`, `boolean`, `object`,
`array`, `null`) and give each keyword a value of the kind it takes:
`k: {type: integer, minimum: 1}`. Define what a `$ref` names under `$defs` in the
same `config_schema` and point to it as `#/$defs/<name>`.
"""


import json

from ..contexts import locate
from ...reading.findings import Fix, Severity, TextEdit
from ...reading.schemacheck import SchemaIssue, schema_issues, validator_of
from . import MANIFEST, rule_of
from ._suite import closest

RULE = rule_of(__doc__, "RAG301", "invalid-config-schema", Severity.ERROR)


@RULE.check(MANIFEST)
def invalid_config_schema(context):
    value = context.parsed.value
    schema = value.get("config_schema") if isinstance(value, dict) else None
    node = context.root.get("config_schema") if context.root is not None else None
    # A missing or non-mapping config_schema is a manifest schema problem (RAG300).
    if not isinstance(schema, dict) or node is None or not node.is_map:
        return
    issues = metaschema_issues(schema)
    for issue in issues:
        yield RULE.finding(
            context.issue_range(issue, root=node),
            f"config_schema is not a valid JSON Schema: {issue.message}",
        )
    # References are followed whatever else is wrong: a validator fails on the
    # first config that reaches one that names nothing.
    for issue, meant in unresolvable_references(schema):
        start, end = locate(node, issue.path, issue.anchor)
        where = context.range(start, end)
        fixes = [Fix(f"Change to {meant!r}", edits=(TextEdit(where, _written_like(context.parsed.text[start:end], meant)),))] if meant else []
        yield RULE.finding(where, f"config_schema is not a valid JSON Schema: {issue.message}", fixes)


def metaschema_issues(schema: dict) -> list:
    """The metaschema's complaints about ``schema``, as jsonschema's ``check_schema``
    would raise them (same dialect, same format checks), but all of them."""
    import jsonschema  # only manifests with a config_schema get here

    try:
        dialect = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    except TypeError:  # an unhashable `$schema` value: the metaschema reports it below
        dialect = jsonschema.Draft202012Validator
    # A checker of the metaschema is built the way check_schema builds it: the
    # metaschema's own dialect, with its format checks (`pattern` is an ECMA-262
    # regex, which SchemaChecker leaves to jsonschema-rs).
    return schema_issues(validator_of(dialect.META_SCHEMA), schema)


# Keywords whose values are data, not schemas: a `$ref` key inside them is no reference.
_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})


def unresolvable_references(schema: dict) -> list[tuple[SchemaIssue, str | None]]:
    """The `$ref`s of ``schema`` that name no schema in it (nor a JSON Schema
    metaschema), each with the pointer it most likely means: a validator would
    fail on the first config that reaches one, so the config check (RAG108)
    would say nothing. Remote schemas are never fetched."""
    from jsonschema_specifications import REGISTRY as METASCHEMAS
    from referencing.exceptions import Unresolvable
    from referencing.jsonschema import DRAFT202012, specification_with

    found: list[tuple[SchemaIssue, str | None]] = []

    def walk(node, resolver, path):
        if isinstance(node, dict):
            if path and isinstance(node.get("$id"), str):
                resolver = resolver.in_subresource(specification.create_resource(node))
            reference = node.get("$ref")
            if isinstance(reference, str):
                try:
                    resolver.lookup(reference)
                except Unresolvable:
                    meant = _closest_pointer(resolver, reference, Unresolvable)
                    found.append((SchemaIssue((*path, "$ref"), _unresolved(reference, meant), "value", "$ref"), meant))
            for key, value in node.items():
                if key not in _DATA_KEYWORDS:
                    walk(value, resolver, (*path, key))
        elif isinstance(node, list):
            for index, value in enumerate(node):
                walk(value, resolver, (*path, index))

    try:
        dialect = schema.get("$schema")
        specification = specification_with(dialect, default=DRAFT202012) if isinstance(dialect, str) else DRAFT202012
        root = specification.create_resource(schema)
        base = root.id() or "urn:rag-lsp:config-schema"
        walk(schema, METASCHEMAS.with_resource(base, root).crawl().resolver(base_uri=base), ())
    except Exception:  # noqa: BLE001 - a schema too odd to follow: what was found so far stands
        return found
    return found


def _closest_pointer(resolver, reference: str, unresolvable: type[Exception]) -> str | None:
    """A pointer into the schema like ``reference`` whose last step names a key
    that is there (`#/$defs/Wrods` -> `#/$defs/Words`), if one is close enough."""
    if not reference.startswith("#/"):
        return None
    parent, _, last = reference.rpartition("/")
    try:
        container = resolver.lookup(parent).contents
    except unresolvable:
        return None
    if not isinstance(container, dict):
        return None
    names = closest(last, [key for key in container if isinstance(key, str)], limit=1)
    return f"{parent}/{names[0]}" if names else None


def _unresolved(reference: str, meant: str | None) -> str:
    if meant is not None:
        return f"$ref {reference!r} points to nothing in this schema (did you mean {meant!r}?)"
    if reference.startswith("#"):
        return f"$ref {reference!r} points to nothing in this schema: define it under `$defs`, or fix the pointer"
    return (
        f"$ref {reference!r} names a schema elsewhere, which rag-lsp never fetches: "
        "copy it under `$defs` and point to it as '#/$defs/<name>'"
    )


def _written_like(written: str, value: str) -> str:
    """``value`` as a YAML scalar in the quotes ``written`` uses, where it can be
    (a pointer starts with `#`, which unquoted would begin a comment)."""
    quote = written[:1]
    if quote == "'" and "'" not in value:
        return f"'{value}'"
    if quote == '"' and '"' not in value and "\\" not in value:
        return f'"{value}"'
    return json.dumps(value)
