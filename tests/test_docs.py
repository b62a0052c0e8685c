"""The documentation: generated pages match the code, the README stays short, and
every relative link leads somewhere."""

from __future__ import annotations

import importlib.util
import json
import re
import urllib.parse
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
README_MAX_BYTES = 15 * 1024


def generator():
    """docs/generate.py, loaded as a module."""
    spec = importlib.util.spec_from_file_location("docs_generate", REPO / "docs" / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def generated() -> dict[str, str]:
    return generator().generated()


def test_every_generated_file_is_up_to_date(generated: dict[str, str]) -> None:
    """Each page of docs/reference/ and each editor's copy of the defaults equals what the code gives now."""
    stale = generator().stale(generated)
    assert stale == [], f"stale generated files {stale}: run `python docs/generate.py` to regenerate them"


def test_the_generator_covers_every_rule_setting_and_command(generated: dict[str, str]) -> None:
    """There is a page per rule code, and the settings and CLI pages name every setting and command."""
    from rag_lsp.cli import build_parser
    from rag_lsp.core.workspace.config import FIELD_KEYS
    from rag_lsp.core.checking.rules import all_rules

    assert sorted(path for path in generated if path.startswith("docs/reference/rules/")) == [
        f"docs/reference/rules/{code}.md" for code in sorted(all_rules())
    ]
    settings = generated["docs/reference/settings.md"]
    for key in FIELD_KEYS.values():
        assert f"| `{key}` |" in settings, key
    assert "`trusted`" in settings
    cli = generated["docs/reference/cli.md"]
    for command in ("check", "run", "compare", "import", "serve"):
        assert f"## rag-lsp {command}\n" in cli, command
    parser = build_parser()
    run = next(action for action in parser._actions if action.dest == "command").choices["run"]
    for action in run._actions:
        for option in action.option_strings:
            if option not in ("-h", "--help"):
                assert f"`{option}`" in cli, option


def test_a_stale_page_is_caught(generated: dict[str, str], tmp_path: Path) -> None:
    """A page whose text differs from the code's is reported, with the command that regenerates it."""
    module = generator()
    changed = dict(generated)
    changed["docs/reference/settings.md"] = generated["docs/reference/settings.md"] + "\nedited by hand\n"
    assert "docs/reference/settings.md" in module.stale(changed)


EDITOR_COPIES = (
    "editors/vscode/src/defaults.generated.ts",
    "editors/vscode/package.json",
    "editors/nvim/lua/rag_lsp/defaults.lua",
    "editors/emacs/rag-lsp.el",
    "editors/helix/languages.toml",
)


def test_each_editors_copy_of_the_defaults_is_written_from_the_shared_file(generated: dict[str, str]) -> None:
    """Every editor's copy of the defaults is generated from rag_lsp/core/workspace/defaults.json: a changed
    glob, settings file or root marker there changes the copies that hold it, so the stale test catches
    a copy left behind."""
    module = generator()
    defaults = module.shared_defaults()
    assert all(generated[path] == text for path, text in module.editor_files(defaults).items())
    changed = json.loads(json.dumps(defaults))
    changed["suiteGlobs"] = ["evals/**/*.suite.yaml"]
    changed["settingsFiles"][0]["path"] = ".evals/settings.toml"
    changed["rootMarkers"][0]["name"] = ".evals"
    after = module.editor_files(changed)
    assert sorted(after) == sorted(EDITOR_COPIES)
    for path in EDITOR_COPIES:
        assert after[path] != generated[path], path
        assert set(module.stale({**generated, path: after[path]})) == {path}, path
    for path in ("editors/vscode/src/defaults.generated.ts", "editors/nvim/lua/rag_lsp/defaults.lua"):
        assert all(value in after[path] for value in ('"evals/**/*.suite.yaml"', '".evals/settings.toml"', '".evals"')), path
    assert 'suiteGlobs = ["evals/**/*.suite.yaml"]' in after["editors/helix/languages.toml"]
    assert '"/evals/\\\\(?:.*/\\\\)?[^/]*\\\\.suite\\\\.yaml\\\\\'"' in after["editors/emacs/rag-lsp.el"]
    assert "'((\".evals\" . folder) (\".git\" . any))" in after["editors/emacs/rag-lsp.el"]
    assert '"ragLsp.suiteGlobs"' in after["editors/vscode/package.json"] and '"evals/**/*.suite.yaml"' in after["editors/vscode/package.json"]


@pytest.mark.parametrize(
    ("glob", "matches", "misses"),
    [
        ("**/*.suite.yaml", ["/p/a.suite.yaml", "/p/x/y/a.suite.yaml"], ["/p/a.suite.yaml.bak", "/p/a.suite.yml"]),
        (".punica/**/*.yml", ["/p/.punica/a.yml", "/p/.punica/x/y/a.yml"], ["/p/punica/a.yml", "/p/xpunica/a.yml"]),
        ("evals/*.{yaml,yml}", ["/p/evals/a.yaml", "/p/evals/a.yml"], ["/p/evals/x/a.yaml", "/p/evals/a.json"]),
        ("a?c.yaml", ["/p/abc.yaml"], ["/p/a/c.yaml", "/p/abbc.yaml"]),
    ],
)
def test_a_glob_becomes_the_emacs_regexp_of_the_same_file_names(glob: str, matches: list[str], misses: list[str]) -> None:
    """The generator's glob -> Emacs regexp (for rag-lsp.el's auto-mode-alist) matches a file name ending in a path the glob matches."""
    regexp = generator().emacs_regexp(glob)
    # Emacs's \(?: \) \| \' as Python's (?: ) | \Z.
    python = regexp.replace("\\(", "(").replace("\\)", ")").replace("\\|", "|").replace("\\'", r"\Z")
    assert [bool(re.search(python, name)) for name in matches + misses] == [True] * len(matches) + [False] * len(misses)


def test_the_readme_is_at_most_15_kb() -> None:
    """README.md stays a front page: at most 15 KB; the rest lives under docs/."""
    size = len(README.read_bytes())
    assert size <= README_MAX_BYTES, f"README.md is {size:,} bytes; move detail into docs/ (limit {README_MAX_BYTES:,})"


def markdown_files() -> list[Path]:
    return [README, *sorted((REPO / "docs").rglob("*.md"))]


LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")


def anchors(path: Path) -> set[str]:
    """The anchors GitHub gives the headings of a Markdown file."""
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    out = set()
    for heading in re.findall(r"^#+ (.+)$", text, flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        out.add(slug)
    return out


@pytest.mark.parametrize("page", markdown_files(), ids=lambda path: str(path.relative_to(REPO)))
def test_every_relative_link_points_to_an_existing_file(page: Path) -> None:
    """Each relative link (and image) of README.md and docs/ names a file or folder of the repository, and its
    #anchor a heading of that page."""
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    broken = []
    for match in LINK.finditer(text):
        target = match.group(1) or match.group(2)
        if re.match(r"^[a-z]+:", target):
            continue
        path_part, _, anchor = target.partition("#")
        destination = (page.parent / urllib.parse.unquote(path_part)).resolve() if path_part else page
        if not destination.exists():
            broken.append(target)
        elif anchor and destination.suffix == ".md" and anchor not in anchors(destination):
            broken.append(target)
    assert broken == [], f"{page.relative_to(REPO)} links to what does not exist: {broken}"


def site_nav_pages() -> list[str]:
    """The pages the nav of mkdocs.yml lists, relative to docs/, in its order."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    # mkdocs.yml names a Python function (the heading slugs): read it as nothing.
    Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)
    config = yaml.load((REPO / "mkdocs.yml").read_text(encoding="utf-8"), Loader=Loader)
    pages: list[str] = []

    def walk(entry: object) -> None:
        if isinstance(entry, str):
            pages.append(entry)
        elif isinstance(entry, list):
            for item in entry:
                walk(item)
        elif isinstance(entry, dict):
            for value in entry.values():
                walk(value)

    walk(config["nav"])
    return pages


def test_every_page_of_docs_is_in_the_site_nav() -> None:
    """Each Markdown page under docs/ is listed once in the nav of mkdocs.yml, so none is left out of the site,
    and each page the nav lists exists."""
    nav = site_nav_pages()
    on_disk = sorted(str(path.relative_to(REPO / "docs")) for path in (REPO / "docs").rglob("*.md"))
    assert sorted(nav) == on_disk, {
        "not in the nav": sorted(set(on_disk) - set(nav)),
        "in the nav, no such page": sorted(set(nav) - set(on_disk)),
        "listed twice": sorted({page for page in nav if nav.count(page) > 1}),
    }
