"""JSON Schema validation whose errors land on the exact offending node.

jsonschema reports an error as a path into the instance. :class:`SchemaIssue`
keeps that path and says whether the finding belongs on a key (an unknown key, a
missing property reported on the key of the object that lacks it) or on a value.
Each document type maps a path to a span itself (YAML nodes, JSON rows).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Any, Iterator

from .resources import load_schema
from .wording import counted

if TYPE_CHECKING:  # jsonschema is imported on first use: most values are valid
    from jsonschema.exceptions import ValidationError

# Keywords that only document a schema; a branch made of these and `required`
# still only demands keys.
_ANNOTATIONS = frozenset({"title", "description", "$comment", "examples"})

_DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"

_TYPE_NAMES = {
    "string": "a string",
    "number": "a number",
    "integer": "an integer",
    "boolean": "true or false",
    "object": "a mapping",
    "array": "a list",
    "null": "null",
}


@dataclass(frozen=True, slots=True)
class SchemaIssue:
    path: tuple[Any, ...]
    message: str
    # "value": underline the value at path; "key": underline the key at path.
    anchor: str = "value"
    # The validator keyword, so callers can leave some to dedicated rules.
    keyword: str = ""


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
        signature = _signature_of(errors) if errors is not None else None
        if signature == () or (signature is None and self.is_valid(instance)):
            return []
        known = self._explained.get(signature) if signature is not None else None
        if known is not None:
            return _with_values_of(known, instance)
        issues = self._types_explained(errors) if errors is not None else None
        if issues is None:
            issues = self._explain(instance)
        if signature is not None:
            if len(self._explained) >= _EXPLANATIONS_KEPT:
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
            if type(error.kind).__name__ != "Type" or not _plainly_typed(error.schema_path):
                return None
            types = _schema_at(self.schema, error.schema_path)
            if not isinstance(types, (str, list)):
                return None
            issues.append(SchemaIssue(tuple(error.instance_path), f"expected {_expected_types(types)}, got {_describe(error.instance)}", "value", "type"))
        issues = list(dict.fromkeys(issues))
        issues.sort(key=lambda issue: (len(issue.path), [str(part) for part in issue.path]))
        return issues

    def _explain(self, instance: Any) -> list[SchemaIssue]:
        issues: list[SchemaIssue] = []
        for error in self.explainer.iter_errors(instance):
            issues.extend(_issues_of(error))
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
            SchemaIssue(tuple(error.instance_path), f"{_describe(error.instance)} is not a valid regular expression", "value", "format")
            for error in errors
            if type(error.kind).__name__ == "Format" and error.message.endswith('is not a "regex"')
        ]


def _signature_of(errors: list[Any]) -> tuple:
    """What the explanation of a value with jsonschema-rs's ``errors`` depends on:
    each error's place in the schema and in the value, and the value there. Two
    values that fail alike are explained alike, so 100,000 rows with the same
    mistake are explained once."""
    return tuple((tuple(error.instance_path), tuple(error.schema_path), _what_explains(error)) for error in errors)


def _plainly_typed(schema_path: Any) -> bool:
    """Whether a schema path leads to a `type` through `properties` (each with
    its key), `items` and `additionalProperties` alone: where a wrong type is all
    an error says (see SchemaChecker._types_explained)."""
    steps = iter(schema_path)
    for step in steps:
        if step == "properties":
            if next(steps, None) is None:
                return False
        elif step == "type":
            return next(steps, None) is None
        elif step not in ("items", "additionalProperties"):
            return False
    return False


def _schema_at(schema: Any, path: Any) -> Any:
    """The part of ``schema`` at ``path`` (keys of objects, positions in lists)."""
    for part in path:
        if isinstance(schema, dict) and isinstance(part, str):
            schema = schema.get(part)
        elif isinstance(schema, list) and isinstance(part, int) and 0 <= part < len(schema):
            schema = schema[part]
        else:
            return None
    return schema


# Explanations a checker keeps (see SchemaChecker.issues); past this many
# distinct ones, it starts again.
_EXPLANATIONS_KEPT = 4096


# Errors whose explanation says of an object its keys alone, of a list that it
# is one, and of any other value its type (see _issues_at): rows that differ in
# nothing else are explained alike. A wrong type names the value it found, which
# _with_values_of writes again for each instance.
_SAYS_KEYS = frozenset({"AdditionalProperties", "UnevaluatedProperties", "Required", "Type", "MinProperties", "DependentRequired"})
_SAYS_LIST = frozenset({"Type", "MinItems", "MaxItems", "UniqueItems"})


def _what_explains(error: Any) -> Any:
    """What the explanation of a jsonschema-rs ``error`` depends on, of the value
    it is about (see _SAYS_KEYS)."""
    kind = type(error.kind).__name__
    value = error.instance
    if "propertyNames" not in error.schema_path:
        if type(value) is dict and kind in _SAYS_KEYS:
            # A JSON object's keys are strings: themselves, without a rendering.
            return ("object", *value)
        if type(value) is list and kind in _SAYS_LIST:
            return ("list",)
        if kind == "Type":
            return ("type", type(value).__name__)
    return _canonical(value)


def _with_values_of(explained: tuple[SchemaIssue, ...], instance: Any) -> list[SchemaIssue]:
    """The issues of an explanation given for another instance that failed alike
    (see _what_explains), each wrong type naming the value ``instance`` holds."""
    issues = list(explained)
    for index, issue in enumerate(issues):
        if issue.keyword != "type" or issue.anchor != "value":
            continue
        value = instance
        for part in issue.path:
            value = value[part]
        head, said, _ = issue.message.rpartition(", got ")
        issues[index] = SchemaIssue(issue.path, f"{head}{said}{_describe(value)}", issue.anchor, issue.keyword)
    return issues


def _canonical(value: Any) -> str:
    """``value`` as one exact text: JSON with sorted keys, where true, 1 and 1.0
    stay apart (a key that is not a string raises TypeError)."""
    import json

    return json.dumps(value, sort_keys=True, allow_nan=True)


# jsonschema's additionalProperties and patternProperties, for objects whose keys
# are not all strings: YAML reads `~: 0` and `1: 2` as keys None and 1, in which
# jsonschema's own would search a pattern and fail. Such a key matches no pattern.


def _additional_properties(validator: Any, allowed: Any, instance: Any, schema: dict) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    from jsonschema.exceptions import ValidationError

    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    extras = [key for key in instance if key not in properties and not _matches_a_pattern(key, patterns)]
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
            if _matches_a_pattern(key, (pattern,)):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _matches_a_pattern(key: Any, patterns: Any) -> bool:
    """Whether an object's key matches one of ``patterns`` (of patternProperties);
    a key that is not a string matches none."""
    return type(key) is str and any(re.search(pattern, key) for pattern in patterns)


def _key_text(key: Any) -> str:
    """A key as a message shows it: a string quoted, any other as YAML writes it
    (`null`, `true`, `1`), for a key YAML did not read as a string."""
    if isinstance(key, str):
        return repr(key)
    if key is None or isinstance(key, bool):
        return {None: "null", True: "true", False: "false"}[key] + " (not a string)"
    return f"{key!r} (not a string)"


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


# Patterns that only ask for one character that is not a space.
_NOT_BLANK = frozenset({"\\S", "[^\\s]", "\\S+", "[^\\s]+"})

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
                hint = _suggest(str(key), allowed)
                yield SchemaIssue(
                    path + (key,), f"unknown key {_key_text(key)}{hint}; expected one of: {', '.join(allowed)}", "key", "additionalProperties"
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
        target: Any = root
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            target = target.get(part) if isinstance(target, dict) else None
        schema = target
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


# A JSON Schema type's Python values (an integer is a number too; a bool is neither).
_PYTHON_TYPES = {
    "string": (str,),
    "array": (list, tuple),
    "object": (dict,),
    "number": (int, float),
    "integer": (int,),
    "boolean": (bool,),
    "null": (type(None),),
}


def _branch_takes(branches: Any, index: Any, instance: Any) -> bool:
    """Whether branch ``index`` of an anyOf / oneOf declares a type ``instance`` has."""
    branch = branches[index] if isinstance(index, int) and isinstance(branches, list) and index < len(branches) else None
    kinds = branch.get("type") if isinstance(branch, dict) else None
    if kinds is None:
        return False
    for kind in [kinds] if isinstance(kinds, str) else kinds:
        python = _PYTHON_TYPES.get(kind, ())
        if isinstance(instance, python) and (kind == "boolean" or not isinstance(instance, bool)):
            return True
    return False


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return "a mapping" if isinstance(value, dict) else "a list"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _expected_types(types: Any) -> str:
    names = [types] if isinstance(types, str) else list(types)
    return " or ".join(_TYPE_NAMES.get(name, name) for name in names)


def _suggest(word: str, choices: list[str]) -> str:
    from rapidfuzz import process  # only when a suggestion is wanted: a check of valid files never needs it

    match = process.extractOne(word, choices, score_cutoff=70) if choices else None
    return f" (did you mean {match[0]!r}?)" if match else ""


def _issues_of(error: ValidationError) -> Iterator[SchemaIssue]:
    if "propertyNames" in error.schema_path and error.validator != "propertyNames":
        # The schema of a mapping's keys judged one of them: the finding lands on
        # that key (jsonschema gives the mapping's path, and the key as the value).
        for issue in _issues_at(error):
            yield SchemaIssue(issue.path + (error.instance,), issue.message, "key", issue.keyword)
        return
    yield from _issues_at(error)


def _issues_at(error: ValidationError) -> Iterator[SchemaIssue]:
    path = tuple(error.absolute_path)
    keyword = error.validator
    value = error.validator_value
    instance = error.instance
    schema = error.schema if isinstance(error.schema, dict) else {}
    if keyword == "required":
        missing = [name for name in value if isinstance(instance, dict) and name not in instance]
        for name in missing:
            yield SchemaIssue(path, f"missing required key {name!r}", "key", keyword)
    elif keyword in ("additionalProperties", "unevaluatedProperties") and isinstance(instance, dict):
        allowed = list(schema.get("properties", {}))
        patterns = list(schema.get("patternProperties", {}))
        for key in instance:
            if key in allowed or _matches_a_pattern(key, patterns):
                continue
            hint = _suggest(str(key), allowed)
            known = ", ".join(allowed)
            yield SchemaIssue(path + (key,), f"unknown key {_key_text(key)}{hint}; expected one of: {known}", "key", keyword)
    elif keyword == "dependentRequired":
        for trigger, needed in value.items():
            if isinstance(instance, dict) and trigger in instance:
                for name in needed:
                    if name not in instance:
                        yield SchemaIssue(path + (trigger,), f"{trigger!r} needs {name!r}: add a {name!r} key", "key", keyword)
    elif keyword == "type":
        yield SchemaIssue(path, f"expected {_expected_types(value)}, got {_describe(instance)}", "value", keyword)
    elif keyword == "enum":
        choices = ", ".join(str(choice) for choice in value)
        hint = _suggest(str(instance), [str(choice) for choice in value]) if isinstance(instance, str) else ""
        yield SchemaIssue(path, f"{_describe(instance)} is not allowed{hint}; use one of: {choices}", "value", keyword)
    elif keyword == "const":
        yield SchemaIssue(path, f"expected {value!r}, got {_describe(instance)}", "value", keyword)
    elif keyword in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
        relation = {
            "minimum": "at least",
            "exclusiveMinimum": "greater than",
            "maximum": "at most",
            "exclusiveMaximum": "less than",
        }[keyword]
        yield SchemaIssue(path, f"{_describe(instance)} is out of range: must be {relation} {value}", "value", keyword)
    elif keyword == "minItems":
        yield SchemaIssue(path, f"needs at least {counted(value, 'item')}", "value", keyword)
    elif keyword == "minProperties":
        yield SchemaIssue(path, f"needs at least {counted(value, 'key')}", "value", keyword)
    elif keyword == "maxItems":
        yield SchemaIssue(path, f"allows at most {counted(value, 'item')}", "value", keyword)
    elif keyword == "minLength":
        yield SchemaIssue(path, "must not be empty" if value == 1 else f"must be at least {value} characters", "value", keyword)
    elif keyword == "pattern":
        # "\S", the usual way to say "not blank", said in words.
        # A schema may say in words what its pattern allows (`x-pattern-means`):
        # "is not a measure: use nDCG@k, AP, ..." reads better than the regex.
        means = error.schema.get("x-pattern-means") if isinstance(error.schema, dict) else None
        if value in _NOT_BLANK:
            said = "must not be blank"
        elif isinstance(means, str):
            said = means
        else:
            said = f"does not match the pattern {value!r}"
        yield SchemaIssue(path, f"{_describe(instance)} {said}", "value", keyword)
    elif keyword == "uniqueItems":
        yield SchemaIssue(path, "items must be unique", "value", keyword)
    elif keyword in ("anyOf", "oneOf"):
        yield _alternatives(error, path, keyword)
    else:
        yield SchemaIssue(path, error.message, "value", keyword)


def _alternatives(error: ValidationError, path: tuple, keyword: str) -> SchemaIssue:
    """One readable message for anyOf / oneOf instead of jsonschema's generic one."""
    branches = error.validator_value
    instance = error.instance
    # Every branch only demands keys (annotations aside): say which keys would do.
    if all(isinstance(branch, dict) and "required" in branch and set(branch) <= _ANNOTATIONS | {"required"} for branch in branches):
        options = [" + ".join(branch["required"]) for branch in branches]
        if keyword == "oneOf" and isinstance(instance, dict):
            present = [option for option, branch in zip(options, branches) if all(k in instance for k in branch["required"])]
            if len(present) > 1:
                return SchemaIssue(path, f"use exactly one of: {', '.join(options)} (found {', '.join(present)})", "key", keyword)
            return SchemaIssue(path, f"needs exactly one of: {', '.join(options)}", "key", keyword)
        return SchemaIssue(path, f"needs at least one of: {', '.join(options)}", "key", keyword)
    # Every branch is a type: say which types would do.
    types = [branch.get("type") for branch in branches if isinstance(branch, dict)]
    if error.context and all(sub.validator == "type" and not sub.relative_path for sub in error.context):
        expected = " or ".join(_expected_types(kind) for kind in types if kind)
        return SchemaIssue(path, f"expected {expected}, got {_describe(instance)}", "value", keyword)
    # Otherwise a branch error explains: one of the branch written for a value of
    # this type when there is one (a list of turns with a bad turn is that turn's
    # problem, not "expected a string"), else jsonschema's best match.
    from jsonschema.exceptions import best_match

    errors = error.context or []
    own_type = [sub for sub in errors if sub.relative_schema_path and _branch_takes(branches, sub.relative_schema_path[0], instance)]
    best = best_match(own_type or errors)
    if best is not None:
        nested = list(_issues_of(best))
        if nested:
            return nested[0]
    return SchemaIssue(path, error.message, "value", keyword)
