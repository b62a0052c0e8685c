"""What a dataset row's schema says is wrong with it, as RAG004 reports it.

``rag-lsp check`` (the rule RAG004) and ``rag-lsp run`` (which breaks a
gdi_text_v1 row that fails its schema rather than score it) read a row's schema
through this one function, so the two give one verdict on every row.
"""

from __future__ import annotations

import copy
from functools import lru_cache
from typing import Any

from .manifests import GDI_TEXT, RAG_CASE
from ..reading.resources import load_schema
from ..reading.schemacheck import SchemaChecker, SchemaIssue, non_finite_issues, schema_issues, validator_for, validator_of
from ..reading.schemawords import local_reference

ROW_SCHEMAS = {RAG_CASE: "rag-case", GDI_TEXT: "gdi-text-v1"}

# Missing keys that dedicated rules report with a better message.
OWNED_BY_OTHER_RULES = {
    (RAG_CASE, (), "expect"),  # RAG201
    (RAG_CASE, ("expect",), "relevant"),  # RAG201
    (GDI_TEXT, (), "reference_contexts"),  # RAG208
}


def row_checker(shape: str) -> SchemaChecker:
    """The checker of the schema of rows of ``shape``."""
    return validator_for(ROW_SCHEMAS[shape])


def without_keys_of_other_rules(checker: SchemaChecker, shape: str) -> SchemaChecker:
    """``checker`` (of the schema of rows of ``shape``) not requiring the keys
    other rules report missing (see OWNED_BY_OTHER_RULES): a row valid by it
    has no issue :func:`row_issues` gives, so RAG004 settles in one call a
    group of rows that lack `expect` (questions exported without judgments, or
    with `expect` misspelt on every row) as it does clean rows."""
    owned = tuple(sorted((path, name) for owned_shape, path, name in OWNED_BY_OTHER_RULES if owned_shape == shape))
    return checker_without(checker, owned) or checker


@lru_cache(maxsize=16)
def case_checker_serving(corpora: tuple[str, ...], at_least_one: bool = False) -> SchemaChecker:
    """The checker of the rag case schema that also holds `input.corpora` to
    ``corpora`` (and, ``at_least_one``, to one corpus or more): one pass over a
    group of valid rows, in jsonschema-rs, settles both (the rule that explains a
    corpus outside them, or an empty list, is RAG004's)."""
    schema = copy.deepcopy(load_schema(ROW_SCHEMAS[RAG_CASE]))
    listed = schema["properties"]["input"]["properties"]["corpora"]
    listed["items"]["enum"] = list(corpora)
    if at_least_one:
        listed["minItems"] = 1
    return validator_of(schema)


# Keywords that judge a value whatever its type, or through other schemas: a
# value of a wrong type under such a schema may fail more than its type.
_BEYOND_TYPE = {"enum", "const", "not", "allOf", "anyOf", "oneOf", "if", "$ref", "$dynamicRef"}


# In a place (see place_of): every element of a list, and every value of an
# object whose keys are the row's own data (`expect.grades`).
EACH_ELEMENT, EACH_KEY = "[]", "*"


def place_of(schema: dict[str, Any], path: tuple[Any, ...]) -> tuple[str, ...]:
    """Where ``path`` (keys and list positions) is in a row of ``schema``, said
    alike for every row: a key the schema names, by its name; a key the row
    names itself (of an object whose values the schema's `additionalProperties`
    judges) as EACH_KEY; a list position as EACH_ELEMENT. A grade written as a
    fraction is then one cause on every row, whatever its expected value."""
    place: list[str] = []
    node: Any = schema
    for part in path:
        if type(part) is int:
            place.append(EACH_ELEMENT)
            node = node.get("items") if isinstance(node, dict) else None
            continue
        properties = node.get("properties") if isinstance(node, dict) else None
        if isinstance(properties, dict) and part in properties:
            place.append(part)
            node = properties[part]
        elif isinstance(node, dict) and isinstance(node.get("additionalProperties"), dict):
            place.append(EACH_KEY)
            node = node["additionalProperties"]
        else:  # a key the schema does not know: by its name
            place.append(str(part))
            node = None
    return tuple(place)


def place_text(place: tuple[str, ...]) -> str:
    """A place as a cause names it: ``expect.relevant[]``, ``expect.grades.*``."""
    text = ""
    for part in place:
        text += part if part == EACH_ELEMENT else f"{'.' if text else ''}{part}"
    return text


def place_parts(text: str) -> tuple[str, ...]:
    """The place :func:`place_text` wrote as ``text``."""
    parts: list[str] = []
    for part in text.split("."):
        elements = 0
        while part.endswith(EACH_ELEMENT) and part != EACH_ELEMENT:
            part = part[: -len(EACH_ELEMENT)]
            elements += 1
        parts.append(part)
        parts += [EACH_ELEMENT] * elements
    return tuple(parts)


def has_each(place: tuple[str, ...]) -> bool:
    """Whether ``place`` stands for many values of a row (a list's, a map's)."""
    return EACH_ELEMENT in place or EACH_KEY in place


def plain_types_at(schema: dict[str, Any], path: tuple[str, ...]) -> frozenset[str] | None:
    """The JSON types the schema allows at ``path`` (keys of objects followed
    through `properties`; EACH_ELEMENT and EACH_KEY through `items` and
    `additionalProperties`), where a value of another type fails only its type;
    None where that cannot be told from the schema alone."""
    node: Any = schema
    for key in path:
        node = _inner_schema(node, key)
        if not isinstance(node, dict) or _BEYOND_TYPE & node.keys():
            return None
    allowed = node.get("type")
    if isinstance(allowed, str):
        return frozenset([allowed])
    if isinstance(allowed, list) and all(isinstance(each, str) for each in allowed):
        return frozenset(allowed)
    return None


# What a schema may say of a string beside its type and `enum` (see plain_enum_at).
_STRING_CONSTRAINTS = {"pattern", "minLength", "maxLength", "format"}


def plain_enum_at(schema: dict[str, Any], path: tuple[str, ...]) -> frozenset[str] | None:
    """The strings the schema lists in the `enum` of a string at ``path`` (keys
    of objects followed through `properties`), where nothing else judges the
    value: a string it does not list fails only the enum (a `task_type` of
    another tool's on every row). None where that cannot be told from the schema alone."""
    node: Any = schema
    for key in path:
        if not isinstance(node, dict) or _BEYOND_TYPE & node.keys():
            return None
        node = _inner_schema(node, key)
    if not isinstance(node, dict) or node.get("type") != "string" or ((_BEYOND_TYPE - {"enum"}) | _STRING_CONSTRAINTS) & node.keys():
        return None
    listed = node.get("enum")
    if not isinstance(listed, list) or not all(isinstance(each, str) for each in listed):
        return None
    return frozenset(listed)


def _inner_schema(node: Any, part: str) -> Any:
    """The schema of ``part`` of a value judged by ``node`` (see place_of)."""
    if not isinstance(node, dict):
        return None
    if part == EACH_ELEMENT:
        return node.get("items")
    if part == EACH_KEY:
        return node.get("additionalProperties")
    properties = node.get("properties")
    return properties.get(part) if isinstance(properties, dict) else None


def json_types(value: Any) -> frozenset[str]:
    """The JSON types ``value`` (as decoded) is of: an integral number is both."""
    kind = type(value)
    if kind is str:
        return _STRING
    if kind is bool:
        return _BOOLEAN
    if kind is int:
        return _INTEGER
    if kind is float:
        return _INTEGER if value.is_integer() else _NUMBER
    if kind is list:
        return _ARRAY
    if kind is dict:
        return _OBJECT
    if value is None:
        return _NULL
    return frozenset()


_STRING, _BOOLEAN, _NULL = frozenset(["string"]), frozenset(["boolean"]), frozenset(["null"])
_INTEGER, _NUMBER = frozenset(["integer", "number"]), frozenset(["number"])
_ARRAY, _OBJECT = frozenset(["array"]), frozenset(["object"])

# By the schema's identity and the keys made optional: (the schema, kept so its
# identity is not reused, and the checker).
_WITHOUT: dict[tuple[int, tuple[tuple[tuple[str, ...], str], ...]], tuple[Any, SchemaChecker | None]] = {}


def checker_without(checker: SchemaChecker, keys: tuple[tuple[tuple[str, ...], str], ...]) -> SchemaChecker | None:
    """A checker of ``checker``'s schema that does not require ``keys``, each an
    object's path (keys followed through `properties`) and the key it holds:
    a row with such keys taken out (or missing) is valid by it exactly when the
    rest of the row is valid. None when a path cannot be followed so."""
    key = (id(checker.schema), keys)
    held = _WITHOUT.get(key)
    if held is None:
        schema = copy.deepcopy(checker.schema)
        made = all(_not_required(schema, path, name) for path, name in keys)
        held = _WITHOUT[key] = (checker.schema, validator_of(schema) if made else None)
    return held[1]


# By the schema's identity and what is tolerated: (the schema, kept so its
# identity is not reused, and the checker).
_TOLERATING: dict[tuple[int, Any], tuple[Any, SchemaChecker | None]] = {}


def checker_tolerating(
    checker: SchemaChecker,
    keys: tuple[tuple[str, ...], ...] = (),
    typed: tuple[tuple[tuple[str, ...], frozenset[str]], ...] = (),
    optional: tuple[tuple[tuple[str, ...], str], ...] = (),
    corpora: frozenset[str] = frozenset(),
    no_corpora: bool = False,
    unlisted: tuple[tuple[str, ...], ...] = (),
    anything: tuple[str, ...] = (),
) -> SchemaChecker | None:
    """A checker of ``checker``'s schema that tolerates what a dataset written by
    another tool has on most rows, and checks the rest of each row as the
    schema does: unknown ``keys`` (each the path of the key, holding any value),
    values of ``typed`` paths of none of the JSON types allowed there, the
    ``optional`` keys missing (see checker_without), ``corpora`` among
    those `input.corpora` may name, ``no_corpora``, an empty `input.corpora`,
    strings at ``unlisted`` paths their `enum` does not list (see
    plain_enum_at), and any value at the row's keys ``anything``. A row is
    valid by it exactly when it is valid with those taken out. None when a path
    cannot be followed so."""
    wanted = (keys, typed, optional, tuple(sorted(corpora)), no_corpora, unlisted, anything)
    key = (id(checker.schema), wanted)
    held = _TOLERATING.get(key)
    if held is None:
        schema = copy.deepcopy(checker.schema)
        made = (
            all(_any_value_at(schema, path) for path in keys)
            and all(_other_types_at(schema, path, allowed) for path, allowed in typed)
            and all(_not_required(schema, path, name) for path, name in optional)
            and _corpora_named(schema, corpora)
            and (not no_corpora or _any_number_of_corpora(schema))
            and all(_replaced_at(schema, path, {"type": "string"}) for path in unlisted)
            and all(_replaced_at(schema, (key,), {}) for key in anything)
        )
        held = _TOLERATING[key] = (checker.schema, validator_of(schema) if made else None)
    return held[1]


def _any_value_at(schema: dict[str, Any], path: tuple[str, ...]) -> bool:
    node = object_schema_at(schema, path[:-1])
    if node is None or _BEYOND_TYPE & node.keys():
        return False
    properties = node.setdefault("properties", {})
    if not isinstance(properties, dict) or path[-1] in properties:
        return False
    properties[path[-1]] = {}
    return True


def _replaced_at(schema: dict[str, Any], path: tuple[str, ...], replacement: dict[str, Any]) -> bool:
    """Put ``replacement`` in place of the schema of the key at ``path`` (a key its object's schema names)."""
    node = object_schema_at(schema, path[:-1])
    properties = node.get("properties") if node is not None else None
    if not isinstance(properties, dict) or not isinstance(properties.get(path[-1]), dict):
        return False
    properties[path[-1]] = replacement
    return True


def _other_types_at(schema: dict[str, Any], path: tuple[str, ...], allowed: frozenset[str]) -> bool:
    node = object_schema_at(schema, path[:-1])
    last = path[-1]
    if node is None:
        return False
    # Where the schema of the value at ``path`` is held in its parent's schema.
    holder, name = (node, "items") if last == EACH_ELEMENT else (node, "additionalProperties") if last == EACH_KEY else (node.get("properties"), last)
    if not isinstance(holder, dict) or not isinstance(holder.get(name), dict):
        return False
    holder[name] = {"anyOf": [holder[name], {"not": {"type": sorted(allowed)}}]}
    return True


def _corpora_named(schema: dict[str, Any], corpora: frozenset[str]) -> bool:
    if not corpora:
        return True
    node = object_schema_at(schema, ("input", "corpora"))
    items = node.get("items") if node is not None else None
    if not isinstance(items, dict):
        return False
    if isinstance(items.get("enum"), list):
        items["enum"] = items["enum"] + sorted(corpora - set(items["enum"]))
    return True


def _any_number_of_corpora(schema: dict[str, Any]) -> bool:
    node = object_schema_at(schema, ("input", "corpora"))
    if node is None:
        return False
    node.pop("minItems", None)
    return True


def object_schema_at(schema: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any] | None:
    """The schema of the value at ``path`` (keys followed through `properties`,
    EACH_ELEMENT and EACH_KEY through `items` and `additionalProperties`)."""
    node: Any = schema
    for key in path:
        node = _inner_schema(node, key)
    return node if isinstance(node, dict) else None


def required_keys(schema: dict[str, Any], shape: str, path: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """The keys the object at ``path`` must hold: all of them, and those RAG004
    reports missing (other rules report the others); None where the schema
    cannot tell."""
    node = object_schema_at(schema, path)
    required = node.get("required") if node is not None else None
    if not isinstance(required, list) or not all(isinstance(name, str) for name in required) or _BEYOND_TYPE & node.keys():
        return None
    return tuple(required), tuple(name for name in required if (shape, path, name) not in OWNED_BY_OTHER_RULES)


def _not_required(schema: dict[str, Any], path: tuple[str, ...], name: str) -> bool:
    node = object_schema_at(schema, path)
    if node is None:
        return False
    required = node.get("required")
    if isinstance(required, list):
        node["required"] = [each for each in required if each != name]
    return True


def row_issues(value: Any, shape: str, exact: bool = True) -> list[SchemaIssue]:
    """Every way a row (a JSON object) fails the schema of ``shape``, but for the
    missing keys other rules report; a number read as infinity is one issue
    (keyword ``finite``), whatever the schema says of its place. ``exact``: the
    row was read by the standard decoder, the only one that reads such a number
    (the fast one refuses it), so only then is it looked for."""
    found = list(non_finite_issues(value)) if exact else []
    taken = {issue.path for issue in found}
    for issue in schema_issues(row_checker(shape), value):
        if issue.path in taken:
            continue
        missing = _missing_key(issue.message) if issue.keyword == "required" else None
        if missing is not None and (shape, issue.path, missing) in OWNED_BY_OTHER_RULES:
            continue
        found.append(issue)
    return found


def non_finite_message(path: tuple[Any, ...], written: str = "") -> str:
    """What is wrong with a number of a row beyond the range of a double (at
    ``path`` in the row, written as ``written``), for people."""
    where = "".join(f"[{part}]" if type(part) is int else f".{part}" for part in path).lstrip(".") or "the row"
    number = f"{written} is" if written else "the number is"
    return (
        f"`{where}`: {number} beyond the range of a double and would be read as infinity, which is no number: "
        "write a finite number, or a string"
    )


def _missing_key(message: str) -> str | None:
    prefix = "missing required key "
    return message[len(prefix):].strip("'\"") if message.startswith(prefix) else None


# ------------------------------------------------------ values that fail alike

# Keywords under which an object or a list is judged by more than its keys, its
# length and what judges each of its members; and those that judge a string by
# what it says, not by its type alone (see AlikeValues).
_WHOLE_VALUE_WORDS = frozenset(
    {
        "enum",
        "const",
        "uniqueItems",
        "contains",
        "prefixItems",
        "patternProperties",
        "propertyNames",
        "unevaluatedItems",
        "unevaluatedProperties",
        "dependentSchemas",
        "$dynamicRef",
    }
)
_STRING_WORDS = frozenset({"enum", "const", "pattern", "minLength", "maxLength", "format", "contentEncoding", "contentMediaType"})
# The keywords of a schema whose schemas judge the very value it judges.
_BRANCHES, _SUBSCHEMAS = ("allOf", "anyOf", "oneOf"), ("not", "if", "then", "else")
# What stands for a string no schema judges by what it says.
_SOME_STRING = ("string",)
_STR = {str}


class AlikeValues:
    """Keys for the values a row holds at one of its keys: two values with one
    key fail the schema alike, issue for issue and place for place, whatever
    the strings in them say where no schema reads what a string says. A dataset
    with `prompt` written as a list of strings on every row then needs one
    explanation, not one per row."""

    def __init__(self, schema: dict[str, Any], key: str) -> None:
        self._judges = _Judges(schema, (schema["properties"][key],))

    def key(self, value: Any) -> Any | None:
        """The key of ``value``; None where it cannot be told from the schema
        alone (a schema that judges the whole of a list or an object)."""
        try:
            return _key(value, self._judges)
        except (_Unknowable, RecursionError):
            return None


def _key(value: Any, judges: _Judges) -> Any:
    kind = type(value)
    if kind is str:
        return value if judges.strings_matter else _SOME_STRING
    if kind is list:
        if judges.whole_value:
            raise _Unknowable
        items = judges.items()
        if not items.strings_matter and set(map(type, value)) <= _STR:  # a list of strings, told in C
            return ("array", len(value))
        return ("array", tuple([_key(each, items) for each in value]))
    if kind is dict:
        if judges.whole_value:
            raise _Unknowable
        return ("object", tuple([(name, _key(each, judges.member(name))) for name, each in value.items()]))
    return (kind.__name__, value)  # a number, a boolean, null: as it is


class _Judges:
    """The schemas that judge a value at one place: those given, what they refer
    to and the schemas of their combinators; with what AlikeValues asks of them,
    told once for every value at that place."""

    def __init__(self, root: dict[str, Any], schemas: tuple[Any, ...]) -> None:
        self._root = root
        found: dict[int, dict[str, Any]] = {}
        pending = list(schemas)
        while pending:
            schema = pending.pop()
            if not isinstance(schema, dict) or id(schema) in found:
                continue  # true and false judge no part of a value by themselves
            found[id(schema)] = schema
            reference = schema.get("$ref")
            if reference is not None:
                pending.append(_local_schema(root, reference))
            for word in _BRANCHES:
                if isinstance(schema.get(word), list):
                    pending.extend(schema[word])
            pending.extend(schema[word] for word in _SUBSCHEMAS if word in schema)
        self.schemas = tuple(found.values())
        words = set().union(*(schema.keys() for schema in self.schemas))
        self.strings_matter = bool(_STRING_WORDS & words)
        self.whole_value = bool(_WHOLE_VALUE_WORDS & words)
        self._items: _Judges | None = None
        self._members: dict[str, _Judges] = {}

    def items(self) -> _Judges:
        """The judges of each element of a list this place holds."""
        if self._items is None:
            self._items = _Judges(self._root, tuple(schema["items"] for schema in self.schemas if "items" in schema))
        return self._items

    def member(self, name: str) -> _Judges:
        """The judges of member ``name`` of an object this place holds."""
        judges = self._members.get(name)
        if judges is None:
            judges = self._members[name] = _Judges(self._root, _member_schemas(self.schemas, name))
        return judges


class _Unknowable(Exception):
    """A value whose failures a key cannot stand for (see AlikeValues.key)."""


def _member_schemas(judges: tuple[dict[str, Any], ...], name: str) -> tuple[Any, ...]:
    """The schemas of an object's member ``name``, under ``judges``."""
    members = []
    for judge in judges:
        properties = judge.get("properties")
        if isinstance(properties, dict) and name in properties:
            members.append(properties[name])
        elif isinstance(judge.get("additionalProperties"), (dict, bool)):
            members.append(judge["additionalProperties"])
    return tuple(members)


def _local_schema(root: dict[str, Any], reference: Any) -> Any:
    """The schema a `$ref` within ``root`` names (`#/$defs/turn`)."""
    node = local_reference(root, reference) if isinstance(reference, str) and reference.startswith("#") else None
    if node is None:
        raise _Unknowable
    return node


# The keywords of a row's schema under which what it says of a key depends on that key's value alone.
_PER_KEY_WORDS = frozenset(
    {"$schema", "$id", "$defs", "title", "description", "markdownDescription", "examples", "type", "required", "additionalProperties", "properties"}
)


def explained_alike_at(schema: dict[str, Any], key: str) -> bool:
    """Whether the issues of a row's value at ``key`` depend on that value
    alone: the row's schema names the key in its `properties`, and judges no
    key by another (see AlikeValues)."""
    properties = schema.get("properties")
    return schema.keys() <= _PER_KEY_WORDS and isinstance(properties, dict) and isinstance(properties.get(key), dict)
