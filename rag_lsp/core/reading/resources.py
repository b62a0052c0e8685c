"""Where the shipped schemas and built-in manifests are.

In a wheel they are ``rag_lsp/schemas``; in a source checkout, the top-level
``schemas/`` folder.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

_PACKAGE = Path(__file__).resolve().parent.parent.parent


@lru_cache(maxsize=1)
def schemas_dir() -> Path:
    for candidate in (_PACKAGE / "schemas", _PACKAGE.parent / "schemas"):
        if (candidate / "suite.schema.json").is_file():
            return candidate
    raise FileNotFoundError("rag-lsp's schemas are missing: reinstall the package")


@lru_cache(maxsize=None)
def load_schema(name: str) -> dict[str, Any]:
    """A shipped schema by file stem, e.g. ``load_schema("suite")``."""
    return json.loads((schemas_dir() / f"{name}.schema.json").read_text(encoding="utf-8"))


def builtin_manifest_paths() -> list[Path]:
    return sorted((schemas_dir() / "manifests").glob("*.yaml"))
