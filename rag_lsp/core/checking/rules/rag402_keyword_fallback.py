"""The case ran on keyword fallback (`rag.mode.semantic` = 0).

## What it does
Reported on a case's dataset line after a run, when the target answered with
`"mode": "keyword"` (or no mode): the hits came from a keyword search, not from
the semantic (embedding) search the suite is meant to measure. The case is still
scored, and its `rag.mode.semantic` is 0.

## Why is this bad?
`vectors.query` falls back to keyword search when a corpus has no semantic index,
and on that path it echoes the corpora it was asked for. A keyword search over
well-named files can find the declared documents, so the suite can report a
healthy recall for a pipeline that never embedded anything. The figures are real
but they describe a different search than the one you ship. The builtin target
reports it too when set to `retrieval: keyword`, or when its embedding model
cannot be loaded (it then searches by keyword and says why once).

## Example
```json
{"id": "gateway-approval", "input": {"query": "gateway approval", "corpora": ["tickets"]}, "expect": {"relevant": ["src/gateway.ts"]}}
```
The `tickets` corpus has no built index, so the target answers
`{"hits": [...], "mode": "keyword"}`.

## How to fix
Build the semantic index for the corpora the case searches (`input.corpora`), or
point the suite's `target` at the semantic search. Keep `rag.mode.semantic: 1` in
every suite's `thresholds` (RAG103 asks for it) so a fallback fails the suite in
CI instead of passing quietly.
"""

from ...reading.findings import Severity
from . import rule_of

# Produced by runs (from the target's reported mode), not by analysis: no check.
RULE = rule_of(__doc__, "RAG402", "keyword-fallback", Severity.WARNING)
