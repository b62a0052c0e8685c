"""JSON Schema validation whose errors land on the exact offending node.

jsonschema-rs says whether a value is valid, in microseconds; jsonschema, which
explains, runs only on invalid values. An error becomes a
:class:`~.schemawords.SchemaIssue` (rag_lsp.core.reading.schemawords says it in
words): a path into the instance, and whether the finding belongs on a key or a
value. Each document type maps a path to a span itself (YAML nodes, JSON rows).
"""

from __future__ import annotations

import math
from functools import cached_property, lru_cache
from typing import Any, Iterator

from .jsonrows import value_at
from .resources import load_schema
from .schemawords import (
    EXPLANATIONS_KEPT,
    SchemaIssue,
    describe,
    expected_types,
    issues_of,
    key_text,
    local_reference,
    matches_a_pattern,
    plainly_typed,
    signature_of,
    suggest,
    with_values_of,
)

__all__ = ["SchemaChecker", "SchemaIssue", "config_issues", "non_finite_issues", "schema_issues", "validator_for", "validator_of"]

_DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"


class SchemaChecker:
    """A schema's validators: jsonschema-rs answers "is it valid?" in well under a
    microsecond, so the Python validator, which explains, runs only on invalid
    values. That keeps a 100k-row dataset check fast."""

    def __init__(self, schema: dict) -> None:
        self.schema = schema
        self.fast = _fast_validator(schema)
        # Explanations by what they depend on (see _signature): a generated
        # dataset is often wrong the same way on every line.
        self._explained: dict[tuple, tuple[SchemaIssue, ...]] = {}

    @cached_property
    def schema_is_valid(self) -> bool:
        """Whether the schema itself is valid (jsonschema-rs builds only valid ones)."""
        if self.fast is not None:
            return True
        import jsonschema

        cls = jsonschema.validators.validator_for(self.schema, default=jsonschema.Draft202012Validator)
        try:
            cls.check_schema(self.schema)
        except jsonschema.exceptions.SchemaError:
            return False
        return True

    @cached_property
    def explainer(self) -> Any:
        # Built on first use: most values are valid and never need it.
        import jsonschema

        cls = jsonschema.validators.validator_for(self.schema, default=jsonschema.Draft202012Validator)
        # JSON Schema regexes are ECMA-262, which Python's `re` does not read:
        # jsonschema-rs judges the "regex" format (see issues()).
        formats = [name for name in cls.FORMAT_CHECKER.checkers if name != "regex"]
        # The JSON Schema metaschemas and nothing else: without a registry of its
        # own, jsonschema fetches a `$ref` to a URL (a workspace manifest's, say).
        from jsonschema_specifications import REGISTRY as METASCHEMAS

        cls = jsonschema.validators.extend(cls, {"additionalProperties": _additional_properties, "patternProperties": _pattern_properties})
        return cls(self.schema, format_checker=jsonschema.FormatChecker(formats), registry=METASCHEMAS)

    def all_valid(self, instances: list[Any]) -> bool:
        """Whether every one of ``instances`` is valid, settled in one call for
        them all: a batch of dataset rows is nearly always all valid, and one
        call for a few dozen rows costs about half as much as a call for each."""
        if self._list_validator is not None:
            try:
                return self._list_validator.is_valid(instances)
            except (ValueError, TypeError, OverflowError):  # values jsonschema-rs cannot take
                pass
        return all(self.is_valid(instance) for instance in instances)

    @cached_property
    def _list_validator(self) -> Any:
        # A list of instances, each checked against the schema by reference (so
        # the schema's own references resolve as they do for one instance).
        if self.fast is None:
            return None
        try:
            import jsonschema_rs

            uri = self.schema.get("$id") or "urn:rag-lsp:instance"
            return jsonschema_rs.validator_for(
                {"$schema": _DRAFT_2020_12, "type": "array", "items": {"$ref": uri}},
                registry=jsonschema_rs.Registry([(uri, self.schema)]),
                validate_formats=True,
                retriever=_never_retrieve,
            )
        except Exception:  # noqa: BLE001 - each instance is then checked on its own
            return None

    def is_valid(self, instance: Any) -> bool:
        if self.fast is not None:
            try:
                return self.fast.is_valid(instance)
            except (ValueError, TypeError, OverflowError):  # values jsonschema-rs cannot take
                pass
        return self.explainer.is_valid(instance)

    def issues(self, instance: Any) -> list[SchemaIssue]:
        # jsonschema-rs's errors say whether the value is valid too: no error at all.
        errors = self._fast_errors(instance)
        signature = signature_of(errors) if errors is not None else None
        if signature == () or (signature is None and self.is_valid(instance)):
            return []
        known = self._explained.get(signature) if signature is not None else None
        if known is not None:
            return with_values_of(known, instance)
        issues = self._types_explained(errors) if errors is not None else None
        if issues is None:
            issues = self._explain(instance)
        if signature is not None:
            if len(self._explained) >= EXPLANATIONS_KEPT:
                self._explained.clear()
            self._explained[signature] = tuple(issues)
        return issues

    def _fast_errors(self, instance: Any) -> list[Any] | None:
        """jsonschema-rs's errors of ``instance`` (in microseconds, where
        jsonschema's explanation takes a millisecond); None when they cannot be
        had (no jsonschema-rs, or a value it cannot take)."""
        if self.fast is None:
            return None
        try:
            return list(self.fast.iter_errors(instance))
        except (ValueError, TypeError, OverflowError):  # values jsonschema-rs or JSON cannot take
            return None

    def _types_explained(self, errors: list[Any]) -> list[SchemaIssue] | None:
        """The issues of errors that are each a wrong type where the schema says
        the type plainly (through `properties`, `items` and `additionalProperties`,
        no combinator or reference on the way), as the explanation says them, from
        jsonschema-rs's errors alone: a grade written as a fraction under every
        expected value of every row is a new place each time, which no kept
        explanation covers. None for any other error (explained in full)."""
        issues = []
        for error in errors:
            if type(error.kind).__name__ != "Type" or not plainly_typed(error.schema_path):
                return None
            types = value_at(self.schema, error.schema_path)
            if not isinstance(types, (str, list)):
                return None
            issues.append(SchemaIssue(tuple(error.instance_path), f"expected {expected_types(types)}, got {describe(error.instance)}", "value", "type"))
        issues = list(dict.fromkeys(issues))
        issues.sort(key=lambda issue: (len(issue.path), [str(part) for part in issue.path]))
        return issues

    def _explain(self, instance: Any) -> list[SchemaIssue]:
        issues: list[SchemaIssue] = []
        for error in self.explainer.iter_errors(instance):
            issues.extend(issues_of(error))
        issues.extend(self._regex_issues(instance))
        # jsonschema raises one "required" error per missing key, each carrying the
        # whole list, so the same missing key would be described once per missing key.
        issues = list(dict.fromkeys(issues))
        issues.sort(key=lambda issue: (len(issue.path), [str(part) for part in issue.path]))
        return issues


    def _regex_issues(self, instance: Any) -> list[SchemaIssue]:
        """Regexes that are not ECMA-262, judged by jsonschema-rs alone."""
        if self.fast is None:
            return []
        try:
            errors = list(self.fast.iter_errors(instance))
        except (ValueError, TypeError, OverflowError):  # values jsonschema-rs cannot take
            return []
        return [
            SchemaIssue(tuple(error.instance_path), f"{describe(error.instance)} is not a valid regular expression", "value", "format")
            for error in errors
            if type(error.kind).__name__ == "Format" and error.message.endswith('is not a "regex"')
        ]


# jsonschema's own would search a pattern and fail. Such a key matches no pattern.


def _additional_properties(validator: Any, allowed: Any, instance: Any, schema: dict) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    from jsonschema.exceptions import ValidationError

    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    extras = [key for key in instance if key not in properties and not matches_a_pattern(key, patterns)]
    if validator.is_type(allowed, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], allowed, path=extra)
    elif not allowed and extras:
        yield ValidationError(f"Additional properties are not allowed ({', '.join(map(repr, extras))} unexpected)")


def _pattern_properties(validator: Any, patterns: dict, instance: Any, schema: dict) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if matches_a_pattern(key, (pattern,)):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _never_retrieve(uri: str) -> Any:
    """jsonschema-rs's retriever: a `$ref` naming a schema by URL (a workspace
    manifest's, say) must not make a check reach the network or read a file
    (jsonschema-rs would fetch both); the JSON Schema metaschemas are built in."""
    raise LookupError(f"{uri} is not fetched: rag-lsp resolves references within the schema only")


def _fast_validator(schema: dict) -> Any:
    try:
        import jsonschema_rs
    except ImportError:  # pragma: no cover - a declared dependency
        return None
    try:
        return jsonschema_rs.validator_for(schema, validate_formats=True, retriever=_never_retrieve)
    except Exception:  # noqa: BLE001 - an invalid schema is explained by the other validator
        return None


@lru_cache(maxsize=None)
def validator_for(name: str) -> SchemaChecker:
    """The checker of a shipped schema, e.g. ``validator_for("suite")``."""
    return SchemaChecker(load_schema(name))


def validator_of(schema: dict) -> SchemaChecker:
    """A checker for a schema given inline (a manifest's ``config_schema``)."""
    return SchemaChecker(schema)


def schema_issues(checker: SchemaChecker, instance: Any) -> list[SchemaIssue]:
    """Every way ``instance`` fails the schema, each with its path; [] when valid."""
    return checker.issues(instance)


def config_issues(checker: SchemaChecker, instance: Any) -> list[SchemaIssue]:
    """Every way an engine's options or a metric's config fail its manifest's
    ``config_schema``, read more strictly than JSON Schema reads it, because a
    config is a person's YAML and every slip in it changes the figures:

    * a key the schema does not list is unknown (with a did-you-mean) unless the
      schema says what other keys may be (``additionalProperties`` and the
      like): the seed manifest's schema, generated from a model that ignores
      extra keys, says nothing, and an ignored ``topk: 5`` would score at the
      default k as if it were honoured;
    * ``5.0`` for an integer option is refused (keyword ``integer``): YAML
      writes it as a float, JSON Schema would count it as an integer, and a
      scorer that needs an integer would then refuse or ignore it;
    * NaN and infinity (``.nan``, ``.inf``) are never numbers (keyword
      ``finite``): NaN compares false with everything, so ``t1: .nan`` would let
      every pair through the first stage of ``rag.hit_at_k``.

    The places these name are not reported again as JSON Schema sees them."""
    strict = list(_strict_issues(checker.schema, instance, (), checker.schema))
    taken = {issue.path for issue in strict}
    issues = [issue for issue in schema_issues(checker, instance) if issue.path not in taken] + strict
    issues.sort(key=lambda issue: (len(issue.path), [str(part) for part in issue.path]))
    return issues


# Keywords with which a schema says which keys an object may have beside its `properties`.
_OPEN_KEYWORDS = ("additionalProperties", "patternProperties", "unevaluatedProperties", "propertyNames")


def _strict_issues(schema: Any, instance: Any, path: tuple[Any, ...], root: Any) -> Iterator[SchemaIssue]:
    schema = _local_target(schema, root)
    if not isinstance(schema, dict):
        yield from non_finite_issues(instance, path)
        return
    if type(instance) is float:
        if not math.isfinite(instance):
            yield SchemaIssue(path, _non_finite_message(instance, schema), "value", "finite")
        elif instance.is_integer() and _integer_only(schema.get("type")):
            yield SchemaIssue(path, f"expected an integer, got {instance!r}: write {int(instance)}", "value", "integer")
        return
    properties = schema.get("properties")
    properties = properties if isinstance(properties, dict) else None
    if isinstance(instance, dict):
        closed = properties is not None and not any(keyword in schema for keyword in _OPEN_KEYWORDS)
        for key, value in instance.items():
            if closed and key not in properties:
                allowed = [str(name) for name in properties]
                hint = suggest(str(key), allowed)
                yield SchemaIssue(
                    path + (key,), f"unknown key {key_text(key)}{hint}; expected one of: {', '.join(allowed)}", "key", "additionalProperties"
                )
                continue
            yield from _strict_issues(properties.get(key) if properties is not None else None, value, path + (key,), root)
    elif isinstance(instance, list):
        items = schema.get("items")
        for index, value in enumerate(instance):
            yield from _strict_issues(items, value, path + (index,), root)


def _local_target(schema: Any, root: Any) -> Any:
    """A schema that is only a `$ref` into the same document (``#/$defs/count``),
    followed (a few steps at most): what else it might point at is not read."""
    for _ in range(8):
        if not isinstance(schema, dict) or set(schema) - {"$ref", "title", "description", "default", "$comment"}:
            return schema
        ref = schema.get("$ref")
        if not isinstance(ref, str) or not ref.startswith("#/"):
            return schema
        schema = local_reference(root, ref)
    return schema


def _integer_only(types: Any) -> bool:
    names = [types] if isinstance(types, str) else types if isinstance(types, list) else []
    return "integer" in names and "number" not in names


def non_finite_issues(instance: Any, path: tuple[Any, ...] = ()) -> Iterator[SchemaIssue]:
    """A :class:`SchemaIssue` (keyword ``finite``) for each NaN or infinity in
    ``instance``, wherever it is (in document order): no schema allows them here.
    Walked without recursion: a dataset row may nest a thousand levels deep."""
    pending: list[tuple[tuple[Any, ...], Any]] = [(path, instance)]
    while pending:
        where, value = pending.pop()
        if type(value) is float:
            if not math.isfinite(value):
                yield SchemaIssue(where, _non_finite_message(value, None), "value", "finite")
        elif isinstance(value, dict):
            pending.extend((where + (key,), item) for key, item in reversed(list(value.items())))
        elif isinstance(value, list):
            pending.extend((where + (index,), item) for index, item in reversed(list(enumerate(value))))


def _non_finite_message(value: float, schema: dict | None) -> str:
    written = ".nan" if math.isnan(value) else ".inf" if value > 0 else "-.inf"
    low = schema.get("minimum") if schema is not None else None
    high = schema.get("maximum") if schema is not None else None
    noun = "an integer" if schema is not None and _integer_only(schema.get("type")) else "a number"
    if _plain_number(low) and _plain_number(high):
        advice = f"{noun} from {low} to {high}"
    elif _plain_number(low):
        advice = f"{noun} of at least {low}"
    elif _plain_number(high):
        advice = f"{noun} of at most {high}"
    else:
        advice = "an integer" if noun == "an integer" else "a finite number"
    return f"{written} is not a number here (NaN and infinity never are): write {advice}"


def _plain_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)

