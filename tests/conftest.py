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


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The editor tests (marker `editors`) drive real editors and need them built and
    installed: editors/test/run-all.sh runs them, once, with `pytest -m editors`; a
    run whose -m does not name `editors` (a plain `pytest`) leaves them out."""
    if "editors" in (config.getoption("markexpr") or ""):
        return
    left_out = [item for item in items if item.get_closest_marker("editors")]
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = [item for item in items if not item.get_closest_marker("editors")]


def pytest_report_header(config: pytest.Config) -> str | None:
    if "editors" in (config.getoption("markexpr") or ""):
        return None
    return "editor tests (marker editors) left out: editors/test/run-all.sh runs them"
