"""The target failed, timed out or answered malformed JSON.

## What it does
Reported after a run when the suite's target could not produce hits for a case:
a `command` target that exited with an error or wrote something that is not a
JSON line, an `http` target that refused the connection, answered an error status
or did not answer within its timeout, or an answer not shaped as
`{"hits": [...], "mode": "semantic" | "keyword"}`. The message says which.

## Why is this bad?
The case was never scored, so the suite cannot say anything about retrieval: a
run with a failing target fails, rather than counting the case as a miss and
blaming the search.

## Example
```yaml
targets:
  ids.search:
    command: ["python", "tools/search.py"]   # prints a traceback instead of JSON
  remote.search:
    http: {url: "http://127.0.0.1:8900/query", timeout_s: 2}   # nothing listens there
```

## How to fix
Run the target by hand with the case's `input` (one JSON object on stdin for a
`command`, the POST body for `http`) and check that it answers one JSON object
with a `hits` list. Start the service, fix the command, or raise `timeout_s` (or
the `ragLsp.runTimeout` setting) if it is just slow.
"""

from ...reading.findings import Severity
from . import rule_of

# Produced by runs (the target adapters' errors), not by analysis: no check.
RULE = rule_of(__doc__, "RAG405", "target-failed", Severity.ERROR)
