"""The options of ``rag.hit_at_k``, read and checked: what a suite's
``metrics: {rag.hit_at_k: ...}`` says, the same for ``rag-lsp check`` (RAG108,
RAG301, RAG302) and for the scorer (:mod:`rag_lsp.core.running.hit_at_k`), which the
checks do not import.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

NAME = "rag.hit_at_k"
# The languages its explanations are written in (see hit_at_k._MESSAGES).
LANGUAGES = ("en", "de", "fr")

_OPTIONS = ("k", "t1", "t2", "coverage", "language", "inverted", "min", "max", "weight", "metric_name")
METADATA = ("inverted", "min", "max", "weight", "metric_name")


class ConfigError(ValueError):
    """The metric config fails the manifest's ``config_schema``; one message per problem."""

    def __init__(self, problems: list[str], code: str = "RAG108") -> None:
        super().__init__("; ".join(problems))
        self.problems = problems
        # The check that reports it: RAG108 on the suite's config, RAG302 on a
        # manifest's default, RAG301 on a config_schema that cannot be used.
        self.code = code


@dataclass(frozen=True, slots=True)
class HitAtKConfig:
    k: int = 5
    t1: float = 0.7
    t2: float = 0.65
    coverage: float = 0.5
    language: str = "en"
    inverted: bool = False
    min: float = 0.0
    max: float = 1.0
    weight: float = 1.0
    metric_name: str = "hit_at_k"

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None, schema: Mapping[str, Any] | None = None) -> HitAtKConfig:
        """The config of a suite's ``metrics: {rag.hit_at_k: ...}``, validated.

        ``schema`` is the manifest's ``config_schema`` (the built-in one when None):
        its defaults fill what ``config`` leaves out, and every key is checked
        against it. A key the schema accepts but this implementation does not know
        is refused too: an option that is not honoured must not look as if it were.
        """
        schema = dict(schema) if schema is not None else builtin_schema()
        config = dict(config or {})
        problems: list[str] = []
        from ..reading.schemacheck import config_issues, non_finite_issues, validator_of

        try:
            # Read as `rag-lsp check` reads it (RAG108): one verdict in both.
            issues = config_issues(validator_of(schema), config)
        except Exception as error:  # noqa: BLE001 - an unusable config_schema is RAG301's
            reference = getattr(error, "ref", None)
            why = f"$ref {reference!r} points to nothing in it" if isinstance(reference, str) else str(error)
            raise ConfigError([f"the config_schema of the {NAME} manifest cannot be used: {why}"], "RAG301") from None
        for issue in issues:
            where = ".".join(str(part) for part in issue.path)
            problems.append(f"option {where!r}: {issue.message}" if where and issue.anchor != "key" else issue.message)
        for key in config:
            if key not in _OPTIONS and not any(key in problem for problem in problems):
                problems.append(f"option {key!r} is not one rag.hit_at_k implements ({', '.join(_OPTIONS)})")
        if problems:
            raise ConfigError(problems)
        values: dict[str, Any] = {}
        properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        defaults = []
        for key in _OPTIONS:
            if key in config:
                values[key] = config[key]
            elif isinstance(properties.get(key), dict) and "default" in properties[key]:
                default = properties[key]["default"]
                if type(default) is float and default.is_integer() and key == "k":
                    # A manifest's default of 5.0 is an integer, as RAG302 reads it.
                    default = int(default)
                values[key] = default
                defaults.extend(
                    f"the default of {key!r}: {issue.message}" for issue in non_finite_issues(default)
                )
        if defaults:
            # A workspace manifest's default of NaN or infinity: RAG302 in its file.
            raise ConfigError(defaults, "RAG302")
        try:
            made = cls(**values)
            _check_types(made)
        except (TypeError, ValueError) as error:
            raise ConfigError([f"config is not usable: {error}"]) from None
        return made

    @property
    def metadata(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in METADATA}


def _check_types(config: HitAtKConfig) -> None:
    # A workspace manifest may loosen the schema; the scorer still needs these.
    if isinstance(config.k, bool) or not isinstance(config.k, int) or config.k < 1:
        raise ValueError(f"k must be an integer of at least 1, got {config.k!r}")
    for name in ("t1", "t2", "coverage"):
        value = getattr(config, name)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{name} must be a number, got {value!r}")
    for name in ("t1", "t2", "coverage", "min", "max", "weight"):
        # A default of a workspace manifest may be NaN: no ratio compares with it.
        value = getattr(config, name)
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"{name} must be a finite number, got {value!r}")
    if config.language not in LANGUAGES:
        raise ValueError(f"language must be one of {', '.join(LANGUAGES)}, got {config.language!r}")


def builtin_schema() -> dict[str, Any]:
    from .manifests import ManifestRegistry

    manifest = ManifestRegistry.builtins().metric_manifest(NAME)
    schema = manifest.config_schema if manifest is not None else None
    return dict(schema) if schema else {"type": "object", "properties": {}}
