"""Broken case: the hits carry none of the `match` field, or nothing relevant is declared.

## What it does
Reported on a case's dataset line after a run, when the case could not be scored:

* the case declares nothing relevant (`expect.relevant` is empty or missing), or
* hits came back but none of the considered hits carries the field the suite's
  `match` names (`path`, `id` or `corpus`).

Such a case gets no scores at all, and the suite it belongs to fails as broken,
whatever its other figures.

## Why is this bad?
Broken is not zero. Recall is counted against what a person declared, by exact
equality on one field of each hit. With nothing declared there is nothing to
count; with the field absent from every hit no hit can ever match. Scoring either
as a recall of 0 would blame the retrieval for a mistake in the suite, and would
drag the suite's mean down by an amount that means nothing: an absent field is a
broken suite, not a bad retrieval. So the case is kept out of the means and named.

`match` is one field, never a chain: the engine does not fall back to another
field when the named one is missing, because a resolver that tried `id`, then
`path`, then a prefix would make a wrong match indistinguishable from a right one.

## Example
The target in `.punica/targets.yaml` returns hits with an `id` and a `corpus`:
```yaml
targets:
  ids.search:
    command: ["python", "tools/search.py"]
```
and the suite names expected documents by path:
```yaml
suites:
  - id: tickets
    target: {kind: capability, id: ids.search}
    dataset: .punica/evals/tickets.jsonl
    engines: [rag]
    options: {rag: {match: path}}
```
Every hit lacks `path`, so every case is broken.

## How to fix
Set `options.rag.match` to the field the target's hits carry, and write the
expected values in that field's terms (ids for `match: id`). Declare the fields a
`command` / `http` target returns with `fields:` in `.punica/targets.yaml` so the
mismatch is caught before a run (RAG109). For a case that declares nothing, list
what a good retrieval must return (RAG200 / RAG201 catch this while you type).
"""

from ...reading.findings import Severity
from . import rule_of

# Produced by runs (the scorer's "broken" result), not by analysis: no check.
RULE = rule_of(__doc__, "RAG401", "broken-case", Severity.ERROR)
