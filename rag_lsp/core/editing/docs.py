"""Documentation of what a suite names: schema keys, metrics, engines, options.

Completion and hover show the same words, taken from the shipped JSON Schemas
(their ``markdownDescription``/``description``) and from the manifests (display
name, direction, range, description, methodology, score semantics, option
defaults). Everything here is Markdown text; nothing knows about LSP.
"""

from __future__ import annotations

import json
from typing import Any

from ..reading.schemawords import local_reference
from ..workspace.manifests import LOWER, Manifest, ManifestRegistry, MetricInfo

# ---------------------------------------------------------------- schemas


def _resolve(root: dict[str, Any], schema: Any) -> dict[str, Any]:
    """``schema`` with a local ``$ref`` followed (and merged with its siblings)."""
    seen = 0
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and schema["$ref"].startswith("#/") and seen < 16:
        target = local_reference(root, schema["$ref"])
        rest = {key: value for key, value in schema.items() if key != "$ref"}
        schema = {**target, **rest} if isinstance(target, dict) else rest
        seen += 1
    return schema if isinstance(schema, dict) else {}


def schema_at(root: dict[str, Any], path: tuple[Any, ...]) -> dict[str, Any] | None:
    """The subschema of the node at ``path`` (keys, and ``ITEM``/indices for
    sequence elements), or None where the schema says nothing."""
    schema = _resolve(root, root)
    for part in path:
        if isinstance(part, int):
            items = schema.get("items")
            if not isinstance(items, dict):
                return None
            schema = _resolve(root, items)
            continue
        properties = schema.get("properties")
        if isinstance(properties, dict) and part in properties:
            schema = _resolve(root, properties[part])
        elif isinstance(schema.get("additionalProperties"), dict):
            schema = _resolve(root, schema["additionalProperties"])
        else:
            return None
    return schema


def schema_properties(root: dict[str, Any], path: tuple[Any, ...]) -> dict[str, dict[str, Any]]:
    """The declared keys of the mapping at ``path``, with their subschemas."""
    schema = schema_at(root, path)
    properties = schema.get("properties") if schema else None
    if not isinstance(properties, dict):
        return {}
    return {name: _resolve(root, value) for name, value in properties.items() if isinstance(name, str)}


def schema_text(schema: dict[str, Any] | None) -> str:
    """A subschema's documentation: its Markdown description, else its description."""
    if not schema:
        return ""
    text = schema.get("markdownDescription") or schema.get("description") or ""
    return str(text)


def schema_summary(schema: dict[str, Any] | None) -> str:
    """The first sentence of a subschema's plain description (for a completion's detail)."""
    text = str((schema or {}).get("description") or "")
    sentence = text.split(". ")[0].strip()
    return sentence if len(sentence) <= 90 else sentence[:87] + "..."


# ---------------------------------------------------------------- values


def _value(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value


def _number(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def direction_text(metric: MetricInfo) -> str:
    return "lower is better" if metric.direction == LOWER else "higher is better"


# ---------------------------------------------------------------- metrics and engines


def metric_detail(metric: MetricInfo) -> str:
    """One line: display name, direction and range."""
    parts = [metric.display_name, direction_text(metric), f"range {metric.range_text()}"]
    if metric.counter:
        parts.append("counter")
    return " · ".join(parts)


def _metadata(manifest: Manifest | None) -> dict[str, Any]:
    metadata = manifest.data.get("metric_metadata") if manifest is not None else None
    return metadata if isinstance(metadata, dict) else {}


def _methodology(metadata: dict[str, Any]) -> list[str]:
    lines = []
    methodology = metadata.get("methodology")
    if isinstance(methodology, list) and methodology:
        lines += ["", "**Methodology**", ""]
        lines += [f"- {step}" for step in methodology if isinstance(step, (str, int, float))]
    elif isinstance(methodology, str) and methodology.strip():
        lines += ["", "**Methodology**", "", methodology.strip()]
    semantics = metadata.get("score_semantics")
    if isinstance(semantics, str) and semantics.strip():
        lines += ["", f"**Score semantics**: {semantics.strip()}"]
    return lines


def metric_markdown(registry: ManifestRegistry, name: str) -> str | None:
    """A metric's documentation, from its manifest (or the engine that emits it)."""
    metric = registry.metric(name)
    if metric is None:
        return None
    manifest = registry.manifests.get(metric.manifest)
    origin = "metric" if manifest is None or manifest.kind == "metric" else f"emitted by engine `{manifest.name}`"
    lines = [f"**{metric.display_name}** `{metric.name}` — {origin}", ""]
    if metric.description:
        lines += [metric.description.strip(), ""]
    lines.append(f"- Direction: {direction_text(metric)}")
    lines.append(f"- Range: {metric.range_text()}")
    if metric.counter:
        lines.append("- A counter: never threshold it")
    lines += _methodology(_metadata(manifest))
    if manifest is not None and manifest.kind == "metric":
        options = _options_table(manifest)
        if options:
            lines += ["", "**Options**", "", *options]
    if manifest is not None and manifest.path:
        lines += ["", f"Defined in `{manifest.path}`."]
    return "\n".join(lines).strip()


def engine_markdown(registry: ManifestRegistry, name: str) -> str | None:
    """An engine's documentation: description, the metrics it emits, its options."""
    manifest = registry.engine(name)
    if manifest is None:
        return None
    display = manifest.data.get("display_name") or manifest.name
    lines = [f"**{display}** `{manifest.name}` — engine", ""]
    description = manifest.data.get("description")
    if isinstance(description, str) and description.strip():
        lines += [description.strip(), ""]
    if manifest.metrics:
        lines += ["**Emits**", ""]
        lines += [f"- `{metric.name}` — {metric_detail(metric)}" for metric in manifest.metrics]
    lines += _methodology(_metadata(manifest))
    options = _options_table(manifest)
    if options:
        lines += ["", "**Options**", "", *options]
    if manifest.path:
        lines += ["", f"Defined in `{manifest.path}`."]
    return "\n".join(lines).strip()


def config_properties(manifest: Manifest | None) -> dict[str, dict[str, Any]]:
    """The options a manifest's ``config_schema`` declares."""
    schema = manifest.config_schema if manifest is not None else None
    properties = schema.get("properties") if schema else None
    if not isinstance(properties, dict):
        return {}
    return {name: _resolve(schema, value) for name, value in properties.items() if isinstance(name, str) and isinstance(value, dict)}


def _options_table(manifest: Manifest) -> list[str]:
    return [f"- `{name}` — {option_detail(schema)}" for name, schema in config_properties(manifest).items()]


def option_detail(schema: dict[str, Any]) -> str:
    """One line: type, default, range or allowed values."""
    parts = []
    kind = schema.get("type")
    if isinstance(kind, str):
        parts.append(kind)
    elif isinstance(kind, list):
        parts.append(" | ".join(str(item) for item in kind))
    if "default" in schema:
        parts.append(f"default {_value(schema['default'])}")
    else:
        parts.append("no default")
    low, high = schema.get("minimum"), schema.get("maximum")
    if low is not None or high is not None:
        parts.append(f"range {_number(low) if low is not None else '-inf'}..{_number(high) if high is not None else 'inf'}")
    if isinstance(schema.get("enum"), list):
        parts.append("one of " + ", ".join(_value(item) for item in schema["enum"]))
    return " · ".join(parts)


def option_markdown(manifest: Manifest, name: str) -> str | None:
    """One option of a manifest's config: description, type, default, range."""
    schema = config_properties(manifest).get(name)
    if schema is None:
        return None
    title = schema.get("title") or name
    lines = [f"**{title}** `{name}` — option of {manifest.kind} `{manifest.name}`", ""]
    description = schema.get("description")
    if isinstance(description, str) and description.strip():
        lines += [description.strip(), ""]
    lines.append(f"- Type: {option_detail(schema).split(' · ')[0]}")
    lines.append(f"- Default: {_value(schema['default'])}" if "default" in schema else "- Default: none")
    low, high = schema.get("minimum"), schema.get("maximum")
    if low is not None or high is not None:
        lines.append(f"- Range: {_number(low) if low is not None else '-inf'}..{_number(high) if high is not None else 'inf'}")
    if isinstance(schema.get("enum"), list):
        lines.append("- One of: " + ", ".join(f"`{_value(item)}`" for item in schema["enum"]))
    if schema.get("x-aip-param-role") == "scoring_metadata":
        lines.append("- Scoring metadata: validated and carried into the result; it does not change the score")
    return "\n".join(lines).strip()

