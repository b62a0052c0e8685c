"""A `default` violates its own property schema.

## What it does
For each property of a manifest's `config_schema` (nested `properties` included)
that declares a `default`, checks the default against that property's own schema
and reports the default value when it does not fit: a default below the
property's `minimum`, outside its `enum`, or of the wrong type. NaN and infinity
(`.nan`, `.inf`) are never numbers, whatever the property's schema allows (a
whole float such as `3.0` is an integer here, and the scorer reads it as one).
A property whose own schema is invalid is left to RAG301; the others are still
checked.

## Why is this bad?
A suite that leaves the option out runs with the default, so a default the schema
forbids is a config nobody could have written by hand: the scorer runs on a value
that is out of range, and hover and completion advertise it as the normal choice.

## Example
```yaml
config_schema:
  type: object
  properties:
    k: {type: integer, minimum: 1, default: 0}
```

## How to fix
Change the default to a value the property accepts (`default: 5`), or widen the
property's schema if the default is right.
"""


from ...reading.findings import Severity
from ...reading.schemacheck import non_finite_issues, schema_issues, validator_of
from . import MANIFEST, rule_of

RULE = rule_of(__doc__, "RAG302", "invalid-default", Severity.ERROR)


@RULE.check(MANIFEST)
def invalid_default(context):
    value = context.parsed.value
    schema = value.get("config_schema") if isinstance(value, dict) else None
    node = context.root.get("config_schema") if context.root is not None else None
    if not isinstance(schema, dict) or node is None or not node.is_map or not _dialect_known(schema):
        return
    # jsonschema's own dependency, imported only for manifests that get this far.
    from referencing.exceptions import Unresolvable

    for name, property_schema, property_node in _properties_with_defaults(schema, node):
        default_node = property_node.get("default")
        if default_node is None:
            continue
        checker = _property_checker(schema, property_schema)
        # A property whose own schema is invalid is RAG301's: its default cannot
        # be judged, but the defaults of the other properties still can.
        if not checker.schema_is_valid:
            continue
        try:
            issues = schema_issues(checker, property_schema["default"])
        except Unresolvable:  # a `$ref` that resolves nowhere: not this rule's concern
            continue
        # A run refuses a default that is no number, as it refuses such a config.
        strict = list(non_finite_issues(property_schema["default"]))
        taken = {issue.path for issue in strict}
        issues = strict + [issue for issue in issues if issue.path not in taken]
        for issue in issues:
            yield RULE.finding(
                context.issue_range(issue, root=default_node),
                f"the default of {name!r} does not fit its own schema: {issue.message}; "
                "change the default or the property's schema",
            )


# What a property's schema needs from the config_schema around it: the dialect
# and the definitions its `$ref`s point into.
_CONTEXT_KEYS = ("$schema", "$id", "$defs", "definitions")


def _property_checker(config_schema: dict, property_schema: dict):
    """A checker for one property's schema that still resolves ``#/$defs/...``."""
    wrapper = {key: config_schema[key] for key in _CONTEXT_KEYS if key in config_schema}
    wrapper["allOf"] = [property_schema]
    return validator_of(wrapper)


def _dialect_known(schema: dict) -> bool:
    # An unhashable `$schema` value names no dialect (RAG301 reports it): no
    # property of the schema can be judged.
    try:
        hash(schema.get("$schema"))
    except TypeError:
        return False
    return True


def _properties_with_defaults(schema: dict, node, prefix: str = ""):
    """``(dotted name, property schema, property node)`` for every property under
    ``properties`` (nested objects included) whose schema has a ``default``."""
    properties = schema.get("properties")
    properties_node = node.get("properties")
    if not isinstance(properties, dict) or properties_node is None:
        return
    for name, property_schema in properties.items():
        property_node = properties_node.get(name) if isinstance(name, str) else None
        if not isinstance(property_schema, dict) or property_node is None or not property_node.is_map:
            continue
        dotted = f"{prefix}{name}"
        if "default" in property_schema:
            yield dotted, property_schema, property_node
        yield from _properties_with_defaults(property_schema, property_node, dotted + ".")
