"""The suite's `match` field is not among the hit fields its target declares.

## What it does
Compares the suite's `match` option (`options.rag.match`, `path` when not
written; the `rag` and `ir` engines both read it) with the
hit fields the suite's target declares in `.punica/targets.yaml` (`fields:`; the
builtin target returns `path`, `id`, `corpus`, `score` and `text`). A target
that declares no fields is not checked.

## Why is this bad?
When the hits carry none of the `match` field, no expected value can ever match:
every case of the suite is broken, and the run fails without saying anything
about retrieval quality.

## Example
```yaml
# .punica/targets.yaml
targets:
  ids.search:
    command: ["python", "tools/search.py"]
    fields: [id, corpus]
# the suite
target: {kind: capability, id: ids.search}
engines: [rag]            # match defaults to path, which ids.search does not return
```

## How to fix
Set `options: {rag: {match: ...}}` to a field the target returns and write the
dataset's expected values in that field, or make the target return the field
(and declare it in `fields`).
"""

from ...reading.findings import Severity
from ...workspace.suitefacts import MATCH_FIELDS
from . import SUITE, rule_of
from ._suite import scalar_text

RULE = rule_of(__doc__, "RAG109", "match-not-returned", Severity.ERROR)


@RULE.check(SUITE)
def match_not_returned(context):
    engines = context.node.get("engines")
    if engines is None or not any(scalar_text(element) in ("rag", "ir") for element in engines.elements()):
        return  # `match` is read by the rag and ir engines only
    target_node = context.suite.target_id_node
    target_id = scalar_text(target_node)
    info = context.workspace.targets().get(target_id) if target_id else None
    if info is None or info.fields is None:
        return  # not configured (RAG111), or no fields declared
    match_node = context.suite.match_node
    if match_node is None:
        match = "path"
    else:
        match = match_node.scalar()
        if match not in MATCH_FIELDS:
            return  # an invalid match is RAG108's
    if match in info.fields:
        return
    declared = ", ".join(sorted(info.fields)) or "none"
    usable = [field for field in MATCH_FIELDS if field in info.fields]
    add_field = f"make the target return {match!r} and list it in its `fields`"
    if match_node is not None:
        instead = f"use {' or '.join(usable)}, or " if usable else ""
        message = f"match {match!r} is not a hit field of target {target_id!r} (it declares {declared}): {instead}{add_field}"
        yield RULE.finding(context.node_range(match_node), message)
        return
    if usable:
        others = f" (or {', '.join(usable[1:])})" if len(usable) > 1 else ""
        instead = f"set `options: {{rag: {{match: {usable[0]}}}}}`{others}, or "
    else:
        instead = ""
    message = (
        f"target {target_id!r} does not return 'path', the default `match` (it declares {declared}): "
        f"{instead}{add_field}"
    )
    yield RULE.finding(context.node_range(target_node), message)
