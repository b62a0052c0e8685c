"""Suite uses engine `rag` but does not threshold `rag.mode.semantic`.

## What it does
Finds a suite whose `engines` include `rag` and whose `thresholds` lack
`rag.mode.semantic`. The quick fix adds `rag.mode.semantic: 1` under
`thresholds` (creating `thresholds` when the suite has none), in the file's own
style: block or flow, same indentation, same line endings.

## Why is this bad?
`vectors.query` falls back to keyword search when a corpus has no semantic
index, and on that path it echoes the corpora it was asked for. Keyword search
often finds the right files anyway, so recall looks healthy for a pipeline that
never embedded anything. `rag.mode.semantic` is 1 only when the retrieval ran
semantically; thresholding it at 1 is what catches the fallback.

## Example
```yaml
suites:
  - id: rag-code
    target: {kind: capability, id: vectors.query}
    dataset: .punica/evals/rag-code.jsonl
    engines: [rag]
    thresholds:
      rag.recall: 0.8
```

## How to fix
Add `rag.mode.semantic: 1` to the suite's `thresholds`. A suite that is meant
to run on keyword search (the builtin target) may say so with
`rag.mode.semantic: 0`.
"""

from ...reading.findings import Fix, Severity, TextEdit
from ...reading.yamltree import ALIAS, SCALAR
from . import SUITE, rule_of
from ._suite import column_of, content_end, is_flow, newline_of, scalar_text

RULE = rule_of(__doc__, "RAG103", "semantic-mode-unchecked", Severity.WARNING)

METRIC = "rag.mode.semantic"
ENTRY = f"{METRIC}: 1"


@RULE.check(SUITE)
def semantic_mode_unchecked(context):
    engines = context.node.get("engines")
    rag = next((element for element in engines.elements() if scalar_text(element) == "rag"), None) if engines else None
    if rag is None:
        return
    pair = context.node.entry("thresholds")
    thresholds = pair[1].resolve() if pair is not None else None
    if thresholds is not None and thresholds.is_map and thresholds.entry(METRIC) is not None:
        return
    edits = _addition(context, pair)
    yield RULE.finding(
        context.node_range(rag),
        f"suite uses engine 'rag' but does not threshold {METRIC}: a keyword-search fallback would pass "
        f"unnoticed; add `{ENTRY}` to `thresholds`",
        fixes=[Fix(f"Add {ENTRY}", edits=edits)] if edits else [],
    )


def _addition(context, pair):
    """The edit that adds the threshold, or None when the layout is too odd to edit."""
    text = context.parsed.text
    newline = newline_of(text)
    suite = context.node.resolve()  # an aliased suite is edited where it is written
    if pair is None:
        return _add_thresholds_key(context, suite, text, newline)
    key, value = pair
    if value.kind == ALIAS:
        return None
    if value.kind == SCALAR:
        if value.value is not None:
            return None  # a string or number: RAG004 says what it should be
        if value.end > value.start:  # `null` or `~` written out
            return (TextEdit(context.node_range(value), "{" + ENTRY + "}"),)
        if is_flow(text, suite):
            return (TextEdit(context.range(value.start, value.start), " {" + ENTRY + "}"),)
        indent = " " * (column_of(context, key.start) + 2)
        return (_insert_at_line_end(context, key.end, f"{newline}{indent}{ENTRY}"),)
    if not value.is_map:
        return None
    entries = value.items()
    if is_flow(text, value):
        if not entries:
            return (TextEdit(context.range(value.start + 1, value.start + 1), ENTRY),)
        last_end = content_end(text, entries[-1][1])
        closing = value.end - 1
        comma = text.find(",", last_end, closing)
        if comma != -1:  # a trailing comma: `{a: 1,}` -> `{a: 1, rag.mode.semantic: 1}`
            return (TextEdit(context.range(comma + 1, comma + 1), f" {ENTRY}"),)
        return (TextEdit(context.range(last_end, last_end), f", {ENTRY}"),)
    last_key, last_value = entries[-1]
    indent = " " * column_of(context, last_key.start)
    return (_insert_at_line_end(context, _last_content(text, last_value), f"{newline}{indent}{ENTRY}"),)


def _add_thresholds_key(context, suite, text, newline):
    entries = suite.items()
    if is_flow(text, suite):
        if not entries:
            return (TextEdit(context.range(suite.start + 1, suite.start + 1), f"thresholds: {{{ENTRY}}}"),)
        last_end = content_end(text, entries[-1][1])
        return (TextEdit(context.range(last_end, last_end), f", thresholds: {{{ENTRY}}}"),)
    if not entries:
        return None
    indent = " " * column_of(context, entries[0][0].start)
    addition = f"{newline}{indent}thresholds:{newline}{indent}  {ENTRY}"
    return (_insert_at_line_end(context, _last_content(text, suite), addition),)


def _last_content(text, node):
    """The end of ``node``'s content, before any line ending a block scalar keeps."""
    end = content_end(text, node)
    while end > node.start and text[end - 1] in "\r\n":
        end -= 1
    return end


def _insert_at_line_end(context, offset, new_text):
    """Insert after everything on the line of ``offset`` (a comment there stays put)."""
    end = context.line_end(offset)
    return TextEdit(context.range(end, end), new_text)
