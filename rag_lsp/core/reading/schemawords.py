"""What a JSON Schema error says, in words, and where it lands.

:class:`SchemaIssue` keeps the path of an error into the instance and says
whether the finding belongs on a key (an unknown key, a missing property
reported on the key of the object that lacks it) or on a value. jsonschema's
errors become issues here, in words that say what to do (:func:`issues_of`);
what tells the wrong types jsonschema-rs can word alone is here too
(:func:`plainly_typed`), and how an explanation is reused for another value
that fails alike (:func:`signature_of`, :func:`with_values_of`). The checker
that finds the errors is rag_lsp.core.reading.schemacheck.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterator

from .wording import counted

if TYPE_CHECKING:  # jsonschema is imported on first use: most values are valid
    from jsonschema.exceptions import ValidationError

# Keywords that only document a schema; a branch made of these and `required`
# still only demands keys.
_ANNOTATIONS = frozenset({"title", "description", "$comment", "examples"})

# Patterns that only ask for one character that is not a space.
_NOT_BLANK = frozenset({"\\S", "[^\\s]", "\\S+", "[^\\s]+"})

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


def signature_of(errors: list[Any]) -> tuple:
    """What the explanation of a value with jsonschema-rs's ``errors`` depends on:
    each error's place in the schema and in the value, and the value there. Two
    values that fail alike are explained alike, so 100,000 rows with the same
    mistake are explained once."""
    return tuple((tuple(error.instance_path), tuple(error.schema_path), _what_explains(error)) for error in errors)


def local_reference(root: Any, reference: str) -> Any:
    """The part of ``root`` a `$ref` into the same document names (``#``,
    ``#/$defs/turn``, with RFC 6901's escapes read); None where it names none."""
    node = root
    for part in reference[1:].split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def plainly_typed(schema_path: Any) -> bool:
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


# Explanations a checker keeps (see SchemaChecker.issues); past this many
# distinct ones, it starts again.
EXPLANATIONS_KEPT = 4096


# Errors whose explanation says of an object its keys alone, of a list that it
# is one, and of any other value its type (see _issues_at): rows that differ in
# nothing else are explained alike. A wrong type names the value it found, which
# with_values_of writes again for each instance.
_SAYS_KEYS = frozenset({"AdditionalProperties", "UnevaluatedProperties", "Required", "Type", "MinProperties", "DependentRequired"})
_SAYS_LIST = frozenset({"Type", "MinItems", "MaxItems", "UniqueItems"})
# Combinators none of whose branches a value fits: their explanation picks among
# the branches' errors (see _alternatives), which jsonschema-rs lists branch by branch.
_SAYS_BRANCHES = frozenset({"OneOfNotValid", "AnyOf"})


def _what_explains(error: Any) -> Any:
    """What the explanation of a jsonschema-rs ``error`` depends on, of the value
    it is about (see _SAYS_KEYS)."""
    kind = type(error.kind).__name__
    value = error.instance
    if kind in _SAYS_BRANCHES:
        # Explained by its branches' errors, each as it depends on the value:
        # `prompt` written as a list of strings on every row is one explanation.
        return (kind, tuple(signature_of(branch) for branch in error.kind.context))
    if "propertyNames" not in error.schema_path:
        if type(value) is dict and kind in _SAYS_KEYS:
            # A JSON object's keys are strings: themselves, without a rendering.
            return ("object", *value)
        if type(value) is list and kind in _SAYS_LIST:
            return ("list",)
        if kind == "Type":
            return ("type", type(value).__name__)
    return _canonical(value)


def with_values_of(explained: tuple[SchemaIssue, ...], instance: Any) -> list[SchemaIssue]:
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
        issues[index] = SchemaIssue(issue.path, f"{head}{said}{describe(value)}", issue.anchor, issue.keyword)
    return issues


def _canonical(value: Any) -> str:
    """``value`` as one exact text: JSON with sorted keys, where true, 1 and 1.0
    stay apart (a key that is not a string raises TypeError)."""
    import json

    return json.dumps(value, sort_keys=True, allow_nan=True)


# jsonschema's additionalProperties and patternProperties, for objects whose keys
# are not all strings: YAML reads `~: 0` and `1: 2` as keys None and 1, in which


def matches_a_pattern(key: Any, patterns: Any) -> bool:
    """Whether an object's key matches one of ``patterns`` (of patternProperties);
    a key that is not a string matches none."""
    return type(key) is str and any(re.search(pattern, key) for pattern in patterns)


def key_text(key: Any) -> str:
    """A key as a message shows it: a string quoted, any other as YAML writes it
    (`null`, `true`, `1`), for a key YAML did not read as a string."""
    if isinstance(key, str):
        return repr(key)
    if key is None or isinstance(key, bool):
        return {None: "null", True: "true", False: "false"}[key] + " (not a string)"
    return f"{key!r} (not a string)"


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


def describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return "a mapping" if isinstance(value, dict) else "a list"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def expected_types(types: Any) -> str:
    names = [types] if isinstance(types, str) else list(types)
    return " or ".join(_TYPE_NAMES.get(name, name) for name in names)


def suggest(word: str, choices: list[str]) -> str:
    meant = closest_name(word, choices)
    return f" (did you mean {meant!r}?)" if meant is not None else ""


def closest_name(word: str, choices: list[str]) -> str | None:
    """The name of ``choices`` that ``word`` most likely misspells, if one is close enough."""
    from rapidfuzz import process  # only when a suggestion is wanted: a check of valid files never needs it

    match = process.extractOne(word, choices, score_cutoff=70) if choices else None
    return match[0] if match else None


def issues_of(error: ValidationError) -> Iterator[SchemaIssue]:
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
            if key in allowed or matches_a_pattern(key, patterns):
                continue
            hint = suggest(str(key), allowed)
            known = ", ".join(allowed)
            yield SchemaIssue(path + (key,), f"unknown key {key_text(key)}{hint}; expected one of: {known}", "key", keyword)
    elif keyword == "dependentRequired":
        for trigger, needed in value.items():
            if isinstance(instance, dict) and trigger in instance:
                for name in needed:
                    if name not in instance:
                        yield SchemaIssue(path + (trigger,), f"{trigger!r} needs {name!r}: add a {name!r} key", "key", keyword)
    elif keyword == "type":
        yield SchemaIssue(path, f"expected {expected_types(value)}, got {describe(instance)}", "value", keyword)
    elif keyword == "enum":
        choices = ", ".join(str(choice) for choice in value)
        hint = suggest(str(instance), [str(choice) for choice in value]) if isinstance(instance, str) else ""
        yield SchemaIssue(path, f"{describe(instance)} is not allowed{hint}; use one of: {choices}", "value", keyword)
    elif keyword == "const":
        yield SchemaIssue(path, f"expected {value!r}, got {describe(instance)}", "value", keyword)
    elif keyword in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
        relation = {
            "minimum": "at least",
            "exclusiveMinimum": "greater than",
            "maximum": "at most",
            "exclusiveMaximum": "less than",
        }[keyword]
        yield SchemaIssue(path, f"{describe(instance)} is out of range: must be {relation} {value}", "value", keyword)
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
        yield SchemaIssue(path, f"{describe(instance)} {said}", "value", keyword)
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
        expected = " or ".join(expected_types(kind) for kind in types if kind)
        return SchemaIssue(path, f"expected {expected}, got {describe(instance)}", "value", keyword)
    # Otherwise a branch error explains: one of the branch written for a value of
    # this type when there is one (a list of turns with a bad turn is that turn's
    # problem, not "expected a string"), else jsonschema's best match.
    from jsonschema.exceptions import best_match

    errors = error.context or []
    own_type = [sub for sub in errors if sub.relative_schema_path and _branch_takes(branches, sub.relative_schema_path[0], instance)]
    best = best_match(own_type or errors)
    if best is not None:
        nested = list(issues_of(best))
        if nested:
            return nested[0]
    return SchemaIssue(path, error.message, "value", keyword)
