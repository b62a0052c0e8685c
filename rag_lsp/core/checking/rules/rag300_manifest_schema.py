"""Manifest does not match the manifest schema.

## What it does
Validates each metric or engine manifest (`.punica/metrics/*.yaml`, or any YAML
with `manifest_version` and `kind`) against `schemas/manifest.schema.json`: a
missing required key (`name`, `version`, `config_schema`; `direction` and
`accepts` for a metric; `metrics` for an engine), a wrong type, a value outside
its enum, an unknown key. The finding lands on the offending key or value.

## Why is this bad?
Suites are checked and scored against their manifests. A manifest the tools
cannot read in full leaves its metric without a range or direction, so thresholds
go unchecked and results are read the wrong way round; a misspelled key
(`direcion:`) is silently ignored.

## Example
```yaml
manifest_version: '1'
kind: metric
name: team.answer_length
version: 1
direcion: lower_is_better
config_schema: {type: object}
```

## How to fix
Use the key or value the message names: here quote the version (`'1.0.0'`),
spell `direction` correctly and add `accepts`. The schema's descriptions (shown on
hover) say what each key means; the built-in `rag.hit_at_k` manifest is a complete
example.
"""

from ...reading.findings import Severity
from ...reading.schemacheck import schema_issues, validator_for
from . import MANIFEST, rule_of

RULE = rule_of(__doc__, "RAG300", "manifest-schema", Severity.ERROR)


@RULE.check(MANIFEST)
def manifest_schema(context):
    for issue in schema_issues(validator_for("manifest"), context.parsed.value):
        yield RULE.finding(context.issue_range(issue), issue.message)
