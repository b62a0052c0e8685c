"""The Helix configuration (editors/helix/languages.toml) is valid TOML that adds
rag-lsp to the YAML and JSON languages, with settings the server accepts."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag_lsp.core.workspace.settings import settings_from

# Slow (drives a real editor against the server): `pytest -m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from Python 3.11")

LANGUAGES = Path(__file__).resolve().parent.parent / "editors" / "helix" / "languages.toml"


def test_helix_languages_toml_starts_rag_lsp_for_suites_and_datasets() -> None:
    config = tomllib.loads(LANGUAGES.read_text(encoding="utf-8"))
    server = config["language-server"]["rag-lsp"]
    assert [server["command"], *server["args"]] == ["rag-lsp", "serve"]
    settings, problems = settings_from(server["config"]["ragLsp"])
    assert problems == []
    assert settings.trusted is False
    languages = {language["name"]: language for language in config["language"]}
    assert set(languages) == {"yaml", "json"}
    # Listing servers replaces Helix's default list (its runtime languages.toml):
    # the usual servers stay, rag-lsp after them.
    for name, usual in (("yaml", ["yaml-language-server", "ansible-language-server"]), ("json", ["vscode-json-language-server"])):
        assert languages[name]["language-servers"] == [*usual, "rag-lsp"]
