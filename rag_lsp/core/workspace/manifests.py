"""Metric and engine manifests: the built-ins, plus those of the workspace.

A manifest says what a metric is (direction, range, documentation) and which
options it takes (``config_schema``). Engines list the metrics they emit. The
registry answers the questions the checks ask: is this engine known, what is this
metric's range, is it a counter, which row shapes does it accept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any

import yaml

from ..reading.resources import builtin_manifest_paths
from ..reading.schemacheck import SchemaChecker

# libyaml's loader where PyYAML was built with it: the built-in manifests are
# read by every process that checks (the server, its helper, the command line),
# and the pure-Python loader takes ten times as long over them.
_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

HIGHER = "higher_is_better"
LOWER = "lower_is_better"

RAG_CASE = "rag_case_v1"
GDI_TEXT = "gdi_text_v1"


@dataclass(frozen=True)
class MetricInfo:
    name: str
    display_name: str
    description: str
    direction: str = HIGHER
    minimum: float | None = None
    maximum: float | None = None
    counter: bool = False
    # The manifest that defines it (a metric's own, or the engine emitting it).
    manifest: str = ""

    @property
    def higher_is_better(self) -> bool:
        return self.direction != LOWER

    def range_text(self) -> str:
        low = "-inf" if self.minimum is None else _number(self.minimum)
        high = "inf" if self.maximum is None else _number(self.maximum)
        return f"{low}..{high}"


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


@dataclass(frozen=True)
class Manifest:
    name: str
    kind: str  # "metric" or "engine"
    data: dict[str, Any]
    # Workspace-relative path, or None for a built-in.
    path: str | None = None
    metrics: tuple[MetricInfo, ...] = ()

    @property
    def config_schema(self) -> dict[str, Any] | None:
        schema = self.data.get("config_schema")
        return schema if isinstance(schema, dict) else None

    @cached_property
    def config_checker(self) -> SchemaChecker | None:
        """The checker of this manifest's ``config_schema``, built once."""
        schema = self.config_schema
        return SchemaChecker(schema) if schema is not None else None

    @property
    def accepts(self) -> frozenset[str]:
        accepts = self.data.get("accepts")
        if not isinstance(accepts, list):
            return frozenset()
        return frozenset(item["name"] for item in accepts if isinstance(item, dict) and isinstance(item.get("name"), str))

    @property
    def builtin(self) -> bool:
        return self.path is None


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _default_of(schema: Any, key: str) -> Any:
    properties = schema.get("properties") if isinstance(schema, dict) else None
    prop = properties.get(key) if isinstance(properties, dict) else None
    return prop.get("default") if isinstance(prop, dict) else None


def manifest_from(data: dict[str, Any], path: str | None = None) -> Manifest | None:
    """A manifest from its parsed YAML, or None when it has no usable name/kind."""
    name, kind = data.get("name"), data.get("kind")
    if not isinstance(name, str) or kind not in ("metric", "engine"):
        return None
    metrics: list[MetricInfo] = []
    if kind == "engine":
        listed = data.get("metrics")
        for entry in listed if isinstance(listed, list) else []:
            if isinstance(entry, dict) and isinstance(entry.get("name"), str):
                metrics.append(
                    MetricInfo(
                        name=entry["name"],
                        display_name=str(entry.get("display_name") or entry["name"]),
                        description=str(entry.get("description") or ""),
                        direction=LOWER if entry.get("direction") == LOWER else HIGHER,
                        minimum=_float(entry.get("minimum")),
                        maximum=_float(entry.get("maximum")),
                        counter=entry.get("counter") is True,
                        manifest=name,
                    )
                )
    else:
        # A metric's range: its declared range, else the scoring metadata defaults
        # (``min``/``max`` in the seed manifest's config).
        declared = data.get("range") if isinstance(data.get("range"), dict) else {}
        schema = data.get("config_schema")
        metadata = data.get("metric_metadata") if isinstance(data.get("metric_metadata"), dict) else {}
        metrics.append(
            MetricInfo(
                name=name,
                display_name=str(data.get("display_name") or name),
                description=str(data.get("description") or metadata.get("summary") or ""),
                direction=LOWER if data.get("direction") == LOWER else HIGHER,
                minimum=_float(declared.get("minimum", _default_of(schema, "min"))),
                maximum=_float(declared.get("maximum", _default_of(schema, "max"))),
                manifest=name,
            )
        )
    return Manifest(name=name, kind=kind, data=data, path=path, metrics=tuple(metrics))


@dataclass(frozen=True)
class UnreadableManifest:
    """A workspace manifest file that is not a usable manifest (a syntax error, no
    ``name``, an unknown ``kind``): its own findings say why."""

    path: str
    # The name it declares, when that much can be read: it defines that name and
    # no other. None: it might define any name.
    name: str | None = None


# A top-level `name:` whose value is a plain or quoted scalar.
_DECLARED_NAME = re.compile(r"^name:[ \t]+([^\s\[{].*)$", re.MULTILINE)


def unreadable_manifest(path: str, text: str | None, value: Any = None) -> UnreadableManifest:
    """What can be told of a manifest that cannot be read: the name it declares,
    from its parsed value, else from a top-level ``name:`` line of its text (a
    manifest being edited is usually one bracket away from well-formed)."""
    name: Any = None
    if isinstance(value, dict):
        name = value.get("name")
    elif text is not None:
        lines = _DECLARED_NAME.findall(text)
        if len(lines) == 1:  # a repeated key: which one counts is unknown
            try:
                name = yaml.safe_load(lines[0])
            except (yaml.YAMLError, ValueError):  # ValueError: an integer of more digits than Python converts
                name = None
    return UnreadableManifest(path, name if isinstance(name, str) and name else None)


@dataclass
class ManifestRegistry:
    """Manifests by name; workspace manifests override built-ins of the same name."""

    manifests: dict[str, Manifest] = field(default_factory=dict)
    # Workspace manifest files that could not be read. One whose name can be
    # read defines that name (a check leaves the name to the manifest's own
    # findings); one whose name cannot might define any name.
    unreadable: list[UnreadableManifest] = field(default_factory=list)

    def declared_unreadable(self, name: str) -> bool:
        """Whether a manifest that cannot be read declares ``name``."""
        return any(manifest.name == name for manifest in self.unreadable)

    def might_define(self) -> list[str]:
        """The paths of manifests that cannot be read and whose name is unknown:
        any name the registry does not know might be theirs."""
        return [manifest.path for manifest in self.unreadable if manifest.name is None]

    @classmethod
    def builtins(cls) -> ManifestRegistry:
        return cls({manifest.name: manifest for manifest in _builtin_manifests()})

    def add(self, manifest: Manifest) -> None:
        self.manifests[manifest.name] = manifest

    def engine(self, name: str) -> Manifest | None:
        manifest = self.manifests.get(name)
        return manifest if manifest is not None and manifest.kind == "engine" else None

    def metric_manifest(self, name: str) -> Manifest | None:
        manifest = self.manifests.get(name)
        return manifest if manifest is not None and manifest.kind == "metric" else None

    @property
    def engines(self) -> list[str]:
        return sorted(name for name, manifest in self.manifests.items() if manifest.kind == "engine")

    def metrics(self) -> dict[str, MetricInfo]:
        """Every metric name a suite can threshold: metric manifests and engine outputs."""
        found: dict[str, MetricInfo] = {}
        for manifest in self.manifests.values():
            for metric in manifest.metrics:
                found.setdefault(metric.name, metric)
        return found

    def metric(self, name: str) -> MetricInfo | None:
        """The metric ``name`` names: one declared under that name, else the
        family it belongs to (``ir.nDCG@10`` is ``ir.nDCG@k``'s)."""
        found = self.metrics()
        info = found.get(name)
        if info is None and (family := family_of(name)) is not None:
            info = found.get(family)
        return info


# A metric declared with a name ending in `@k` names a family: one metric per
# positive integer cutoff (`ir.nDCG@k` holds `ir.nDCG@10` and `ir.nDCG@5`), so a
# manifest need not list every cutoff a suite may choose.
_CUTOFF = re.compile(r"@([1-9][0-9]*)$")
FAMILY_SUFFIX = "@k"


def family_of(name: str) -> str | None:
    """The family name of a metric with a cutoff (``ir.P@5`` -> ``ir.P@k``), or
    None when its name ends in no positive integer cutoff."""
    cut = _CUTOFF.search(name)
    return name[: cut.start()] + FAMILY_SUFFIX if cut is not None else None


def cutoff_of(name: str) -> str | None:
    """The cutoff a metric name ends in (``ir.P@5`` -> ``"5"``), or None."""
    cut = _CUTOFF.search(name)
    return cut.group(1) if cut is not None else None


def with_cutoff(family: str, cutoff: str | None) -> str:
    """A family's member at ``cutoff`` (``ir.P@k``, ``"5"`` -> ``ir.P@5``); any
    other name unchanged (or the family itself when no cutoff is given)."""
    if cutoff is None or not family.endswith(FAMILY_SUFFIX):
        return family
    return family[: -len(FAMILY_SUFFIX)] + "@" + cutoff


@lru_cache(maxsize=1)
def _builtin_manifests() -> tuple[Manifest, ...]:
    """The manifests shipped with the package, read once per process."""
    loaded = []
    for path in builtin_manifest_paths():
        manifest = manifest_from(yaml.load(path.read_text(encoding="utf-8"), Loader=_SafeLoader))
        if manifest is not None:
            loaded.append(manifest)
    return tuple(loaded)
