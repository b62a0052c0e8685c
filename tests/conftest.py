"""Shared test helpers."""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).parent.parent


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


@pytest.fixture(autouse=True, scope="session")
def index_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every index the tests build (in process, and in the CLI and servers they
    start, which inherit the environment) is cached in a folder of this session,
    never in the user's cache folder."""
    import os

    folder = tmp_path_factory.mktemp("index-cache")
    os.environ["RAG_LSP_CACHE_DIR"] = str(folder)
    return folder
