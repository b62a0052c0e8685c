"""Manifest `config_schema` is not a valid JSON Schema.

## What it does
Checks a manifest's `config_schema` against the JSON Schema metaschema of its
dialect (draft 2020-12 unless the schema names another with `$schema`): a type
name that does not exist, a keyword whose value has the wrong type, a `pattern`
that is not a regular expression. The finding lands on the offending value inside
`config_schema`.

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
```

## How to fix
Use a JSON Schema type (`string`, `number`, `integer`, `boolean`, `object`,
`array`, `null`) and give each keyword a value of the kind it takes:
`k: {type: integer, minimum: 1}`.
"""


from ..findings import Severity
from ..schemacheck import schema_issues, validator_of
from . import MANIFEST, rule_of

RULE = rule_of(__doc__, "RAG301", "invalid-config-schema", Severity.ERROR)


@RULE.check(MANIFEST)
def invalid_config_schema(context):
    value = context.parsed.value
    schema = value.get("config_schema") if isinstance(value, dict) else None
    node = context.root.get("config_schema") if context.root is not None else None
    # A missing or non-mapping config_schema is a manifest schema problem (RAG300).
    if not isinstance(schema, dict) or node is None or not node.is_map:
        return
    for issue in metaschema_issues(schema):
        yield RULE.finding(
            context.issue_range(issue, root=node),
            f"config_schema is not a valid JSON Schema: {issue.message}",
        )


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
