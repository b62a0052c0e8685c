"""YAML is not well-formed.

## What it does
Reports the first place where a suite file, manifest or targets config stops being
YAML, at the position the parser gave up: an unclosed bracket, a tab used for
indentation, a key without a value where a mapping was expected. The message says
what to do (which bracket to close, opened on which line; which line breaks a
list) rather than what the parser expected.

## Why is this bad?
Nothing after the error can be read, so none of the file's suites run and none of
its other defects can be found. Some tools would silently read a prefix of the
file; rag-lsp reports it instead.

## Example
```yaml
suites:
  - id: rag-code
    engines: [rag
```

## How to fix
Close the bracket, fix the indentation, or quote the value the parser choked on.
"""

from ...reading.findings import Severity
from . import YAML, rule_of

RULE = rule_of(__doc__, "RAG001", "yaml-syntax", Severity.ERROR)


@RULE.check(YAML)
def yaml_syntax(context):
    if context.parsed.decode_error is not None:
        offset, message = context.parsed.decode_error
        yield RULE.finding(context.range(offset, offset + 1), f"{message}: YAML files are UTF-8 text")
    for problem in context.parsed.document.problems:
        if problem.code == "RAG001":
            yield RULE.finding(context.range(problem.start, problem.end), f"YAML is not well-formed: {problem.message}")
