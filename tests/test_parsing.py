"""Parsing with positions: YAML trees and JSON Lines rows."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from rag_lsp.core.checking.modelrows import ModelRow
from rag_lsp.core.reading.jsonrows import Row
from rag_lsp.core.reading.jsonspans import duplicate_key_spans, span_at
from rag_lsp.core.reading.schemacheck import validator_for
from rag_lsp.core.reading.schemawords import signature_of, with_values_of
from rag_lsp.core.workspace.rowschema import AlikeValues
from rag_lsp.core.reading.text import LineIndex, Range, apply_edits, character_from_utf16, utf16_character
from rag_lsp.core.workspace.rows import DatasetRow
from rag_lsp.core.reading.yamltree import TooLarge, YamlLimits, parse_yaml, to_python


def span_text(text: str, node) -> str:
    return text[node.start : node.end]


def test_yaml_nodes_keep_their_code_point_spans() -> None:
    """Every key and value knows where it is, in code points, after non-ASCII text."""
    text = 'title: "é😀"\nsuites:\n  - id: rag-code\n    k: 5\n'
    document = parse_yaml(text)
    suite = document.root.get("suites").elements()[0]
    key, value = suite.entry("id")
    assert span_text(text, key) == "id"
    assert span_text(text, value) == "rag-code"
    assert LineIndex(text).position(value.start) == LineIndex(text).position(text.index("rag-code"))
    assert suite.get("k").scalar() == 5


def test_yaml_scalars_resolve_like_yaml_but_dates_stay_text() -> None:
    """Numbers, booleans and nulls resolve; dates stay the text that was written."""
    document = parse_yaml("a: 1\nb: 0.5\nc: true\nd: ~\ne: 2024-01-01\nf: '1'\n")
    assert document.to_python() == {"a": 1, "b": 0.5, "c": True, "d": None, "e": "2024-01-01", "f": "1"}


def test_yaml_duplicate_keys_are_reported_with_both_spans() -> None:
    """A repeated key is a RAG003 problem pointing at the repeat and the first."""
    text = "a: 1\nb: 2\na: 3\n"
    (problem,) = parse_yaml(text).problems
    assert problem.code == "RAG003"
    assert (problem.start, problem.end) == (10, 11)
    assert problem.first == (0, 1)


def test_yaml_syntax_error_is_at_the_parser_position() -> None:
    """A syntax error is RAG001 at the position libyaml stopped."""
    text = "suites:\n  - id: a\n    engines: [rag\n"
    (problem,) = parse_yaml(text).problems
    assert problem.code == "RAG001"
    assert LineIndex(text).position(problem.start).line == 3


def test_yaml_alias_bomb_is_refused_on_a_budget() -> None:
    """Aliases are not expanded while parsing; turning them into values stops at the node budget."""
    lines = ['a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    for level in range(1, 10):
        lines.append(f"a{level}: &a{level} [" + ", ".join([f"*a{level - 1}"] * 9) + "]")
    document = parse_yaml("\n".join(lines) + "\n")
    assert document.problems == []
    try:
        to_python(document.root, YamlLimits(max_nodes=10_000))
    except TooLarge as refused:
        assert refused.node.kind == "alias"
    else:
        raise AssertionError("the alias bomb was expanded")


def test_yaml_deep_nesting_is_refused() -> None:
    """Nesting past the depth limit is RAG005, before any tree is built."""
    (problem,) = parse_yaml("[" * 500 + "]" * 500, YamlLimits(max_depth=64)).problems
    assert problem.code == "RAG005"


def test_yaml_recursive_alias_is_refused() -> None:
    """An alias to an anchor that is not finished (a cycle) is refused."""
    (problem,) = parse_yaml("a: &x [*x]\n").problems
    assert problem.code == "RAG005"


def test_json_row_error_column() -> None:
    """A JSON error is reported at the decoder's column."""
    row = Row('{"id": "a", "input": {"query": "x"}, "expect": {"relevant": ["a"],}}')
    column, message = row.error
    assert row.value is None
    assert column == row.text.index(",}") + 1
    assert message


def test_json_row_rejects_nan_at_its_column() -> None:
    """NaN is not JSON: the error points at it, not at a string that spells it."""
    row = Row('{"NaN": NaN}')
    assert row.error[0] == row.text.rindex("NaN")


def test_json_row_spans_are_code_points() -> None:
    """Spans of keys and values inside a line count code points, after emoji too."""
    row = Row('{"id": "😀", "expect": {"relevant": ["a.md", "b.md"]}}')
    span = row.span("expect", "relevant", 1)
    assert row.text[span.value_start : span.value_end] == '"b.md"'
    start, end = row.key_span("expect")
    assert row.text[start:end] == '"expect"'


def test_json_row_span_of_missing_path_falls_back_to_parent() -> None:
    """A path that does not exist resolves to the nearest value that does."""
    row = Row('{"expect": {}}')
    span = row.span("expect", "relevant")
    assert row.text[span.value_start : span.value_end] == "{}"


def test_json_duplicate_keys_are_found_with_spans() -> None:
    """A repeated key in a row is found, with the repeat and the first occurrence."""
    row = Row('{"id": "a", "expect": {"relevant": []}, "id": "b"}')
    assert row.repeated_keys == ("id",)
    ((path, start, end, first_start, first_end, previous_start, after_previous),) = duplicate_key_spans(row.text)
    assert path == ("id",)
    assert row.text[start:end] == '"id"'
    assert (first_start, first_end) == (1, 5)
    assert row.repeated_keys == ("id",)
    # Without the occurrence before the repeat, the line reads as JSON readers take it.
    assert row.text[:previous_start] + row.text[after_previous:] == '{"expect": {"relevant": []}, "id": "b"}'
    # A key written three times: each repeat says where the first is, and which occurrence comes before it.
    three = '{"id": "a", "id": "b", "q": 1, "id": "c"}'
    repeats = duplicate_key_spans(three)
    assert [(three[each.start : each.end], each.first_start) for each in repeats] == [('"id"', 1), ('"id"', 1)]
    assert [three[each.previous_start : each.after_previous] for each in repeats] == ['"id": "a", ', '"id": "b", ']


def test_utf16_columns_round_trip() -> None:
    """Code-point columns convert to UTF-16 and back, astral characters counting two units."""
    line = "a😀b"
    assert utf16_character(line, 2) == 3
    assert character_from_utf16(line, 3) == 2


def test_apply_edits_changes_only_the_ranges() -> None:
    """Edits replace exactly their ranges, the rest of the text is untouched."""
    text = "a: 1  # keep\nb: 2\n"
    assert apply_edits(text, [(Range.of(1, 3, 1, 4), "3")]) == "a: 1  # keep\nb: 3\n"


def test_json_rows_keep_big_integers_and_find_spaced_repeats() -> None:
    """Integers beyond 64 bits stay integers; a key repeated with spaces before its colon is found."""
    assert Row('{"x": 123456789012345678901234567890}').value == {"x": 123456789012345678901234567890}
    assert Row('{"a" : 1, "a": 2}').repeated_keys == ("a",)
    assert Row('{"a"\r: 1, "a": 2}').repeated_keys == ("a",)  # a carriage return inside a line is JSON whitespace too
    assert Row('{"a\\\\":": 1, "b": "\\\\":"}').repeated_keys == ()
    assert Row('{"e": {"r": 1}, "f": {"r": 2}}').repeated_keys == ()


# Lines that each take one of Row's paths: repeated keys (also spaced, also by a
# carriage return), quotes and colons written as \u escapes, wide integers, deep
# nesting orjson reads but does not write, invalid JSON, scalars.
TRICKY_LINES = [
    '{"a": 1, "a": 2}',
    '{"a" : 1, "a": 2}',
    '{"a"\r: 1, "a": 2}',
    '{"q": "x\\u0022: y"}',
    '{"q": "\\u0022\\u003a"}',
    '{"x": 123456789012345678901234567890}',
    "[" * 300 + "]" * 300,
    '{"id": "a", "input": {"query": "x"}, "expect": {"relevant": ["a"],}}',
    "12",
    '"text"',
    "null",
]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=10,
)
written = st.builds(
    lambda value, separators, ascii: json.dumps(value, separators=separators, ensure_ascii=ascii),
    json_values,
    st.sampled_from([(",", ":"), (", ", ": "), (",", " : ")]),
    st.booleans(),
)


# Lines the fast decoder refuses or might read otherwise than the standard one.
EDGE_LINES = [
    '{"x": 1e400}',
    '{"x": "\\ud800"}',
    '{"x": -0.0, "y": 1.0, "z": 0}',
    '{"x": 18446744073709551616, "y": -9223372036854775809}',
    '{"x": ' + "7" * 4300 + "}",
    '{"x": ' + "7" * 4301 + "}",
    '{"x": NaN}',
    "[" * 1100 + "]" * 1100,
]


def _as_written(value: object) -> str:
    # Equal values of different types (1, 1.0, True) or signs (0.0, -0.0) write differently.
    return json.dumps(value)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(written | st.sampled_from(TRICKY_LINES + EDGE_LINES))
def test_a_row_holds_what_the_standard_decoder_reads(line: str) -> None:
    """A row's value is the standard decoder's, number types and widths included; a line it cannot read has no value."""
    row = Row(line)
    try:
        expected = json.loads(line, parse_constant=lambda name: (_ for _ in ()).throw(ValueError(name)))
    except (ValueError, RecursionError):
        assert row.value is None
        assert row.error is not None or row.refused is not None
        return
    assert row.error is None
    assert row.refused is None
    assert _as_written(row.value) == _as_written(expected)
    assert _as_written(row.decode_again()) == _as_written(expected)


# Strings that put colons, quotes and escapes where a count of them could go wrong.
_TRICKY_STRINGS = st.sampled_from(["a", "a:b", '":', "x\u0022:", ":", "", "é", "\\u", "k"])


@st.composite
def _object_texts(draw, depth: int = 2) -> str:
    """A JSON object written by hand: keys may repeat, and may be spaced from their colons."""
    pairs = []
    for _ in range(draw(st.integers(0, 4))):
        key = draw(_TRICKY_STRINGS)
        if depth and draw(st.booleans()):
            value = draw(_object_texts(depth - 1))
        else:
            # JSON texts too: a colon or a quote written as an escape.
            raw = st.sampled_from(["1", "null", "[1, {}]", '["a:b"]', '"\\u003a"', '"\\u003A"', '"a\\u0022:"', '"caf\\u00e9"'])
            value = draw(st.one_of(_TRICKY_STRINGS.map(json.dumps), raw))
        escaped = draw(st.booleans())
        written = json.dumps(key, ensure_ascii=escaped) if "\\" not in key else json.dumps(key)
        pairs.append(f"{written}{draw(st.sampled_from([':', ': ', ' : ', chr(13) + ':']))}{value}")
    return "{" + draw(st.sampled_from([",", ", "])).join(pairs) + "}"


def _keys_repeated(line: str) -> list[str]:
    """Each key an object of ``line`` repeats, once for each repeat, sorted."""
    repeated: list[str] = []

    def pairs(items: list) -> dict:
        names = [key for key, _ in items]
        repeated.extend(key for index, key in enumerate(names) if key in names[:index])
        return dict(items)

    json.loads(line, object_pairs_hook=pairs)
    return sorted(repeated)


@pytest.mark.slow
@settings(max_examples=500, deadline=None)
@given(lines=st.lists(_object_texts(), min_size=1, max_size=6))
@example(lines=['{"a": 1, "a": 2, "b": "\\u0022:"}'])  # an escaped quote and colon cannot hide the repeat
@example(lines=['{"a": 1, "a": "\\u003A"}'])  # nor can a colon written as an escape, in either case
@example(lines=['{"caf\\u00e9": 1, "café": 2}'])  # a key repeated, written once as an escape
def test_a_row_repeats_a_key_exactly_when_its_line_does(lines: list[str]) -> None:
    """The keys a row repeats are those the standard decoder's pairs repeat, whatever the colons in
    its strings, the escapes and the spacing, read alone or with other rows."""
    for line, row in zip(lines, Row.read_many(lines)):
        assert sorted(Row(line).repeated_keys) == _keys_repeated(line)
        assert sorted(row.repeated_keys) == _keys_repeated(line)


# Rows with a shape and a case id (or an id that is none).
CASE_LINES = [
    '{"id": "c1", "input": {"query": "q"}, "expect": {"relevant": ["a"]}}',
    '{"id": "", "expect": {"relevant": []}}',
    '{"id": 7, "input": {}}',
    '{"input_id": "g", "retrieved_context": ["x"], "reference_contexts": ["x"]}',
]


@pytest.mark.slow
@pytest.mark.parametrize("kind", [Row, DatasetRow, ModelRow], ids=lambda kind: kind.__name__)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(written | st.sampled_from(TRICKY_LINES + CASE_LINES), min_size=1, max_size=700))
@example(lines=['{"q": "\\u0022:"}', '{"a": 1, "a": 2}'])  # one row's extra ": cannot hide another's repeat
def test_reading_many_rows_at_once_gives_what_reading_each_gives(kind: type[Row], lines: list[str]) -> None:
    """read_many, which checks rows for repeated keys a few hundred at a time and builds the plain ones
    field by field, reads every line as the row's own class does alone (a dataset row's shape and case id too)."""

    def state(row: Row) -> tuple:
        extra = tuple(getattr(row, name, None) for name in ("shape", "key", "dropped", "line"))
        return (row.text, row.value, row.error, row.repeated_keys, row.refused, row.refused_span, row.exact, *extra)

    if kind is ModelRow:
        ModelRow.prepare()  # as a dataset model does before it reads a line
    assert [state(row) for row in kind.read_many(lines)] == [state(kind(line)) for line in lines]


_GDI_ROW = {"input_id": "g", "prompt": [{"role": "user", "content": "q"}], "reference_contexts": ["a"], "sut_response": "r", "retrieved_context": ["a"]}
_CASE_ROW = {"id": "c", "input": {"query": "q", "topK": 3}, "expect": {"relevant": ["a.md"]}}
# Values a row's field may take instead: right, wrong type, wide, out of range, nested wrong.
_FIELD_VALUES = st.one_of(
    st.sampled_from(["x", "", 0, -1, 2**70, 1.5, True, None, [], {}, ["a"], [1], [{"role": 3}], {"query": "q"}, {"relevant": []}]),
    st.text(max_size=3),
)


@st.composite
def _row_values(draw):
    row = dict(draw(st.sampled_from([_GDI_ROW, _CASE_ROW])))
    for key in draw(st.lists(st.sampled_from(sorted({*_GDI_ROW, *_CASE_ROW, "extra"})), max_size=2)):
        if draw(st.booleans()):
            row[key] = draw(_FIELD_VALUES)
        else:
            row.pop(key, None)
    return row


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(values=st.lists(_row_values(), max_size=8), schema=st.sampled_from(["rag-case", "gdi-text-v1"]))
def test_rows_validated_together_are_valid_exactly_when_each_is(values: list, schema: str) -> None:
    """One call for a group of rows says they are all valid exactly when each row is valid on its
    own, for both row schemas (the gdi one holds a reference), whatever the rows hold."""
    checker = validator_for(schema)
    assert checker.all_valid(values) == all(checker.is_valid(value) for value in values)


_WRONG_TYPES = st.sampled_from([1.5, -2, "s", None, True, [1], {"a": 1}, 3, "", [], {}])


@st.composite
def _rows_of_wrong_types(draw):
    """A well-formed row of either shape with up to three values put in place of others, at any depth."""
    row = json.loads(json.dumps(draw(st.sampled_from([_GDI_ROW, {**_CASE_ROW, "expect": {"relevant": ["a.md", "b.md"], "grades": {"a.md": 2}}}]))))
    for _ in range(draw(st.integers(1, 3))):
        places = []

        def collect(value, path):
            places.append(path)
            children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
            for key, child in children:
                collect(child, (*path, key))

        collect(row, ())
        path = draw(st.sampled_from(places[1:]))
        holder = row
        for part in path[:-1]:
            holder = holder[part]
        holder[path[-1]] = json.loads(json.dumps(draw(_WRONG_TYPES)))  # a copy: later draws may change it
    return row


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(row=_rows_of_wrong_types(), schema=st.sampled_from(["rag-case", "gdi-text-v1"]))
def test_wrong_types_told_from_the_fast_validator_alone_are_told_as_the_explainer_tells_them(row: dict, schema: str) -> None:
    """Where every error of a row is a wrong type the schema states plainly, the issues made from
    jsonschema-rs's errors alone (a grade written as a fraction is a new place on every row) equal the
    full explanation's, word for word; any other row is explained in full."""
    checker = validator_for(schema)
    errors = checker._fast_errors(row)
    told = checker._types_explained(errors) if errors else None
    if told is not None:
        assert told == checker._explain(row)


_WORDS = st.sampled_from(["q", "how are approvals decided", "", "user", "usr", "é😀", "assistant"])
_TURNS = st.fixed_dictionaries(
    {},
    optional={
        "role": st.one_of(st.sampled_from(["user", "assistant", "usr", "", "USER"]), st.integers(0, 2)),
        "content": st.one_of(_WORDS, st.none()),
        "tone": _WORDS,
    },
)
_PROMPTS = st.one_of(_WORDS, st.integers(0, 3), st.lists(st.one_of(_WORDS, _TURNS, st.integers(0, 2), st.lists(_WORDS, max_size=1)), max_size=3))


def _strings_rewritten(value, words):
    """``value`` with each string in it replaced by the next of ``words`` (keys kept)."""
    if type(value) is str:
        return next(words)
    if type(value) is list:
        return [_strings_rewritten(each, words) for each in value]
    if type(value) is dict:
        return {key: _strings_rewritten(each, words) for key, each in value.items()}
    return value


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(prompt=_PROMPTS, others=st.lists(_WORDS, min_size=12, max_size=12))
def test_rows_whose_errors_have_one_signature_are_explained_alike(prompt, others: list[str]) -> None:
    """Two rows that jsonschema-rs fails alike (the same signature, branch by branch inside a `oneOf`) are
    explained alike: the kept explanation of one, with the values of the other written in, is the other's own
    explanation word for word; so a dataset with one defect on every row is explained once."""
    checker = validator_for("gdi-text-v1")
    first = {**_GDI_ROW, "prompt": prompt}
    second = {**_GDI_ROW, "prompt": _strings_rewritten(prompt, iter(others))}
    signatures = [signature_of(errors) for errors in (checker._fast_errors(first), checker._fast_errors(second))]
    if signatures[0] == signatures[1] and signatures[0]:
        assert with_values_of(tuple(checker._explain(first)), second) == checker._explain(second)


_ALIKE_WORDS = st.sampled_from(["q", "", "user", "usr", "assistant", "single_turn_rag", "rag", "a.md", "./a.md", "é😀"])
_ALIKE_VALUES = st.recursive(
    st.one_of(_ALIKE_WORDS, _ALIKE_WORDS, _ALIKE_WORDS, st.integers(-1, 3), st.none(), st.booleans(), st.just(0.5)),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.sampled_from(["role", "content", "relevant", "grades", "query", "corpora", "topK", "x"]), inner, max_size=3),
    max_leaves=8,
)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(
    place=st.sampled_from([("gdi-text-v1", _GDI_ROW, "prompt"), ("gdi-text-v1", _GDI_ROW, "task_type"), ("rag-case", _CASE_ROW, "expect"), ("rag-case", _CASE_ROW, "input")]),
    value=_ALIKE_VALUES,
    others=st.lists(_ALIKE_WORDS, min_size=12, max_size=12),
)
# A string the schema lists in an enum, and one it does not: at the key itself, and inside a list's objects.
@example(place=("gdi-text-v1", _GDI_ROW, "task_type"), value="single_turn_rag", others=["rag"] * 12)
@example(place=("gdi-text-v1", _GDI_ROW, "prompt"), value=[{"role": "user", "content": "q"}], others=["usr"] * 12)
def test_values_with_one_alike_key_fail_the_schema_alike(place, value, others: list[str]) -> None:
    """Two values a row may hold at one key, with one key of AlikeValues (the strings in them differ where
    no schema reads what a string says), fail the row's schema at the same places for the same checks,
    issue for issue: a dataset with one such defect on every row is explained once."""
    schema_name, row, key = place
    checker = validator_for(schema_name)
    alike = AlikeValues(checker.schema, key)
    second = _strings_rewritten(value, iter(others))
    first_key, second_key = alike.key(value), alike.key(second)
    if first_key is None or first_key != second_key:
        return
    issues = [checker.issues({**row, key: each}) for each in (value, second)]
    assert [(issue.path, issue.keyword) for issue in issues[0]] == [(issue.path, issue.keyword) for issue in issues[1]]


def test_prompts_written_as_lists_of_strings_fail_alike() -> None:
    """`prompt` written as a list of strings fails alike whatever the strings say: one explanation serves every row."""
    checker = validator_for("gdi-text-v1")
    rows = [{**_GDI_ROW, "prompt": [text]} for text in ("how are approvals decided", "where is the cache", "é😀")]
    assert len({signature_of(checker._fast_errors(row)) for row in rows}) == 1
    assert [issue.message for issue in checker.issues(rows[2])] == ["expected a mapping, got 'é😀'"]
    alike = AlikeValues(checker.schema, "prompt")
    assert alike.key(["how are approvals decided"]) == alike.key(["é😀"])
    # What a key stands for keeps all but the words: how many, of what type, under which keys.
    assert len({alike.key(value) for value in (["a"], ["a", "b"], [1], [{"content": "a"}], [{"role": "a"}], "a")}) == 6
    assert alike.key([{"role": "user"}]) != alike.key([{"role": "usr"}])  # a string an enum judges stays


_KEYS = st.one_of(st.just("id"), st.sampled_from(["id", "input", "expect", "i", "id ", "é", 'q"']))
_SCALARS = st.one_of(st.sampled_from(["id", "x", "", "é😀", 'a"b', "a\\b", "id\n"]), st.integers(-5, 5), st.none(), st.booleans())
_JSON_VALUES = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3), max_leaves=6)


@st.composite
def _row_texts(draw):
    pairs = draw(st.lists(st.tuples(_KEYS, _JSON_VALUES), min_size=1, max_size=4))
    space = draw(st.sampled_from(["", " ", "\t", " \r "]))
    ascii_only = draw(st.booleans())
    body = ("," + space).join(f"{json.dumps(key, ensure_ascii=ascii_only)}{space}:{space}{json.dumps(value, ensure_ascii=ascii_only)}" for key, value in pairs)
    return f"{space}{{{space}{body}{space}}}", [key for key, _ in pairs]


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(row=_row_texts())
@example(row=('{"id": "a", "id": "b"}', ["id"]))
@example(row=('{"id": "a", "input": {"id": "b"}}', ["id"]))
def test_a_leading_key_found_without_a_parse_has_the_parsed_span(row) -> None:
    """A top-level key's span found without tree-sitter (a plainly written first key and string
    value) is the span tree-sitter gives, for repeated keys, escapes, spacing and non-ASCII text."""
    text, keys = row
    for key in keys:
        assert Row(text).span(key) == span_at(text, (key,))


_ELEMENTS = st.one_of(st.sampled_from(["a.md", "src/x.py", "", "é😀/b", 'a"b', "a\\b", "]", ",", "relevant"]), st.integers(0, 3), st.none())
_CASE_KEYS = st.sampled_from(["id", "input", "expect", "relevant", "extra"])


@st.composite
def _case_texts(draw):
    """A rag case written as users' tools write it, with the odd escape, repeated key, spacing,
    other key named `relevant`, or element that is not a string."""
    space = draw(st.sampled_from(["", " ", "\t", " \r "]))
    ascii_only = draw(st.booleans())

    def dumps(value):
        return json.dumps(value, ensure_ascii=ascii_only, separators=("," + space, ":" + space))

    relevant = draw(st.lists(_ELEMENTS, max_size=4))
    expect_pairs = [("relevant", relevant)] + draw(st.lists(st.tuples(_CASE_KEYS, _JSON_VALUES), max_size=2))
    expect_pairs = draw(st.permutations(expect_pairs))
    expect = "{" + space + ("," + space).join(f"{dumps(key)}:{space}{dumps(value)}" for key, value in expect_pairs) + space + "}"
    pairs = [("expect", expect)] + [(key, dumps(value)) for key, value in draw(st.lists(st.tuples(_CASE_KEYS, _JSON_VALUES), max_size=3))]
    pairs = draw(st.permutations(pairs))
    body = ("," + space).join(f"{dumps(key)}{space}:{space}{value}" for key, value in pairs)
    return f"{space}{{{space}{body}{space}}}", len(relevant)


@pytest.mark.slow
@settings(max_examples=500, deadline=None)
@given(case=_case_texts())
@example(case=('{"expect": {"relevant": ["a", "b"]}, "input": {"relevant": ["c"]}}', 2))
@example(case=('{"expect": {"relevant": ["a"]}, "expect": {"relevant": ["b", "c"]}}', 2))
@example(case=('{"expect": {"relevant": []}}', 0))
@example(case=(json.dumps({"expect": {"relevant": [f"src/{n}.py" for n in range(300)] + [1, "x"]}}), 302))
@example(case=(json.dumps({"expect": {"relevant": ["é\\b", 3, None, "😀", {"a": 1}] * 60}}, ensure_ascii=False), 300))
@example(case=(json.dumps({"id": "c\u00e9", "expect": {"relevant": ["src\\app.py", "docs\\a b.md"]}}), 2))
@example(case=(json.dumps({"id": "c", "expect": {"relevant": ["src\\", 'q"', "x"]}}), 3))
def test_an_expected_value_found_without_a_parse_has_the_parsed_span(case) -> None:
    """The span of `expect.relevant` and of each of its values found without tree-sitter (a plainly
    written list of strings) is the span tree-sitter gives, for repeated keys, escapes, spacing,
    other keys named `relevant` and values that are not strings."""
    text, count = case
    paths = [("expect", "relevant"), *(("expect", "relevant", index) for index in range(count + 1))]
    for path in paths:
        assert Row(text).span(*path) == span_at(text, path), path
    # One row asked for its values in any order: found together, once.
    row = Row(text)
    for path in reversed(paths):
        assert row.span(*path) == span_at(text, path), path


_INPUT_KEYS = st.sampled_from(["query", "topK", "corpora", "extra", "id"])


@st.composite
def _input_texts(draw):
    """A rag case whose `input` holds values of every kind (strings with escapes, numbers,
    true, false, null, lists, objects), written with odd spacing, a repeated key, or a key
    of the same name elsewhere in the line."""
    space = draw(st.sampled_from(["", " ", "\t", " \r "]))
    ascii_only = draw(st.booleans())

    def dumps(value):
        return json.dumps(value, ensure_ascii=ascii_only, separators=("," + space, ":" + space))

    inner = draw(st.lists(st.tuples(_INPUT_KEYS, _JSON_VALUES), min_size=1, max_size=4))
    body = ("," + space).join(f"{dumps(key)}{space}:{space}{dumps(value)}" for key, value in inner)
    others = draw(st.lists(st.tuples(st.sampled_from(["id", "expect", "topK", "query"]), _JSON_VALUES), max_size=2))
    pairs = [("input", "{" + space + body + space + "}")] + [(key, dumps(value)) for key, value in others]
    pairs = draw(st.permutations(pairs))
    text = "{" + space + ("," + space).join(f"{dumps(key)}{space}:{space}{value}" for key, value in pairs) + space + "}"
    return text, sorted({key for key, _ in inner})


@pytest.mark.slow
@settings(max_examples=500, deadline=None)
@given(case=_input_texts())
@example(case=('{"id": "c", "input": {"query": "q", "topK": 10}}', ["query", "topK"]))
@example(case=('{"input": {"topK": 1e3, "query": "é😀", "extra": null}, "topK": 2}', ["extra", "query", "topK"]))
@example(case=('{"input": {"topK": -0.5, "query": "a", "query": "b"}}', ["query", "topK"]))
def test_a_value_of_the_input_found_without_a_parse_has_the_parsed_span(case) -> None:
    """The span of each value of `input` found without tree-sitter (a string, number, true, false
    or null under a key written once in a line without escapes) is the span tree-sitter gives."""
    text, keys = case
    for key in keys:
        assert Row(text).span("input", key) == span_at(text, ("input", key)), key
