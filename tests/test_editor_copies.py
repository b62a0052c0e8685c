"""What the editor integrations know of the server is the server's.

Each integration decides which files to hand the server before the server has
said anything: its default globs, how it matches a glob, which folder is the
workspace root. The defaults are written once, in
``rag_lsp/core/workspace/defaults.json``: the server reads them from there, and
each editor's copy is generated from it (``tests/test_docs.py`` fails when one
is stale). What each integration does with them is held to the server's own
definitions here: Neovim's glob matching and root finding, and Emacs's root
finding and file modes, run on the same cases as ``glob_match`` and
``find_root``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from rag_lsp.core.workspace.config import CONFIG_PATH, CONFIG_PATHS, PYPROJECT_PATH, PYPROJECT_TABLE
from rag_lsp.core.workspace.files import glob_match
from rag_lsp.core.workspace.settings import DEFAULT_DATASET_GLOBS, DEFAULT_MANIFEST_GLOBS, DEFAULT_SUITE_GLOBS
from rag_lsp.core.workspace.roots import ROOT_MARKERS, find_root

REPO = Path(__file__).resolve().parent.parent
SHARED_DEFAULTS = REPO / "rag_lsp" / "core" / "workspace" / "defaults.json"
NVIM_PLUGIN = REPO / "editors" / "nvim"
VSCODE_PACKAGE = REPO / "editors" / "vscode" / "package.json"
EMACS_MODE = REPO / "editors" / "emacs" / "rag-lsp.el"

# Globs of each form the server reads (`**/`, `**`, `*`, `?`, `{a,b}`), and paths
# that tell them apart.
GLOBS = [
    *DEFAULT_SUITE_GLOBS,
    *DEFAULT_MANIFEST_GLOBS,
    *DEFAULT_DATASET_GLOBS,
    "evals/*.suite.{yaml,yml}",
    "docs/**",
    "a?c.yaml",
    "**/deep/**/x.yml",
]
PATHS = [
    ".punica/suites.yaml",
    ".punica/evals/rag.suite.yml",
    ".punica/metrics/hit.yaml",
    ".punica/metrics/sub/hit.yaml",
    ".punica/evals/rag.jsonl",
    ".punica/evals/more/rag.jsonl",
    "rag.suite.yaml",
    "a/b/rag.suite.yml",
    "rag.suite.yaml.bak",
    "evals/one.suite.yaml",
    "evals/sub/one.suite.yaml",
    "docs/a/b.md",
    "docsx/a.md",
    "abc.yaml",
    "a/c.yaml",
    "abbc.yaml",
    "deep/x.yml",
    "a/deep/b/c/x.yml",
    "punica/suites.yaml",
]


def shared_defaults() -> dict:
    """The shared defaults without their explanation."""
    data = json.loads(SHARED_DEFAULTS.read_text(encoding="utf-8"))
    return {key: value for key, value in data.items() if not key.startswith("$")}


# ---------------------------------------------------------------- default globs


def test_the_server_reads_its_defaults_from_the_shared_file() -> None:
    """The server's default globs, settings files and root markers are those of defaults.json, in its order."""
    defaults = shared_defaults()
    assert (DEFAULT_SUITE_GLOBS, DEFAULT_DATASET_GLOBS, DEFAULT_MANIFEST_GLOBS) == tuple(
        tuple(defaults[key]) for key in ("suiteGlobs", "datasetGlobs", "manifestGlobs")
    )
    assert CONFIG_PATHS == tuple(file["path"] for file in defaults["settingsFiles"])
    own, tabled = defaults["settingsFiles"]
    assert (CONFIG_PATH, PYPROJECT_PATH, PYPROJECT_TABLE) == (own["path"], tabled["path"], tuple(tabled["table"]))
    assert ROOT_MARKERS == tuple((marker["name"], marker["kind"] == "folder") for marker in defaults["rootMarkers"])


@pytest.mark.parametrize(
    ("setting", "default"),
    [("ragLsp.suiteGlobs", DEFAULT_SUITE_GLOBS), ("ragLsp.datasetGlobs", DEFAULT_DATASET_GLOBS), ("ragLsp.manifestGlobs", DEFAULT_MANIFEST_GLOBS)],
)
def test_vscode_settings_default_to_the_servers_globs(setting: str, default: tuple[str, ...]) -> None:
    """Each glob setting the VS Code extension declares defaults to the server's globs."""
    package = json.loads(VSCODE_PACKAGE.read_text(encoding="utf-8"))
    properties: dict[str, dict] = {}
    contributed = package["contributes"]["configuration"]
    for section in contributed if isinstance(contributed, list) else [contributed]:
        properties.update(section.get("properties", {}))
    if setting not in properties:
        pytest.skip(f"the extension does not declare {setting}")
    assert tuple(properties[setting]["default"]) == default


@pytest.mark.parametrize("path", [path for path in PATHS if glob_match(path, DEFAULT_SUITE_GLOBS)])
def test_vscode_activates_on_every_file_the_default_suite_globs_match(path: str) -> None:
    """The VS Code extension's workspaceContains activation events cover every file the server's default suite globs match."""
    events = json.loads(VSCODE_PACKAGE.read_text(encoding="utf-8"))["activationEvents"]
    contains = [event.split(":", 1)[1] for event in events if event.startswith("workspaceContains:")]
    assert any(glob_match(path, [glob]) or path.startswith(glob + "/") for glob in contains), contains


def emacs_suite_patterns() -> list[str]:
    """The regexps of rag-lsp-suite-file-regexps (which open rag-lsp-suite-mode), as Python regexes."""
    source = EMACS_MODE.read_text(encoding="utf-8")
    block = re.search(r"\(defconst rag-lsp-suite-file-regexps\s*'\((.*?)\)\s*\n\s*\"", source, flags=re.S)
    assert block is not None, "rag-lsp.el defines no rag-lsp-suite-file-regexps"
    patterns = re.findall(r'"((?:[^"\\]|\\.)*)"', block.group(1))
    assert patterns, "rag-lsp-suite-file-regexps is empty"
    # An Elisp string's "\\" is one backslash; Emacs's \' is Python's \Z, its \( \) \| are ( ) |.
    python = []
    for pattern in patterns:
        regex = pattern.replace("\\\\", "\\").replace("\\'", r"\Z").replace("\\(", "(").replace("\\)", ")").replace("\\|", "|")
        python.append(regex)
    return python


# The YAML files Emacs opens in rag-lsp-suite-mode: those of suites and manifests.
EMACS_SUITE_MODE_GLOBS = (*DEFAULT_SUITE_GLOBS, *DEFAULT_MANIFEST_GLOBS)


@pytest.mark.parametrize("path", [path for path in PATHS if path.endswith((".yaml", ".yml"))])
def test_emacs_opens_in_suite_mode_exactly_the_yaml_the_default_globs_match(path: str) -> None:
    """A YAML file opens in rag-lsp-suite-mode in Emacs when the server's default suite or manifest globs match it."""
    opened = any(re.search(pattern, "/home/someone/project/" + path) for pattern in emacs_suite_patterns())
    assert opened == glob_match(path, EMACS_SUITE_MODE_GLOBS)


# ---------------------------------------------------------------- behaviour


def workspace_tree(root: Path) -> list[Path]:
    """Folders and files whose workspace roots differ: .punica/, a git root, a
    .punica/ inside a git checkout, and neither."""
    files = [
        root / "punica" / ".punica" / "evals" / "rag.jsonl",
        root / "punica" / "src" / "deep" / "a.suite.yaml",
        root / "git" / "src" / "a.suite.yaml",
        root / "git" / "nested" / "sub" / "b.suite.yaml",
        root / "plain" / "c.suite.yaml",
    ]
    (root / "punica" / ".punica").mkdir(parents=True)
    (root / "git" / ".git").mkdir(parents=True)
    (root / "git" / "nested" / ".punica").mkdir(parents=True)
    for file in files:
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text("suites: []\n", encoding="utf-8")
    return files


def nvim_binary() -> str | None:
    for candidate in [*os.environ.get("RAG_LSP_TEST_NVIM", "").split(os.pathsep), "nvim"]:
        if candidate and shutil.which(candidate):
            return shutil.which(candidate)
    return None


NVIM_SCRIPT = r"""
local M = require("rag_lsp")
local cases = vim.fn.json_decode(table.concat(vim.fn.readfile(vim.env.RAG_CASES), "\n"))
local out = { matches = {}, roots = {}, defaults = require("rag_lsp.defaults") }
for _, glob in ipairs(cases.globs) do
  local regex = M.glob_to_regex(glob)
  local row = {}
  for _, path in ipairs(cases.paths) do
    table.insert(row, vim.fn.match(path, regex) >= 0)
  end
  table.insert(out.matches, row)
end
for _, file in ipairs(cases.files) do
  table.insert(out.roots, M.root_dir(file))
end
vim.fn.writefile({ vim.fn.json_encode(out) }, vim.env.RAG_OUT)
"""


@pytest.fixture(scope="module")
def nvim_answers(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, list[Path]]:
    """What the Neovim plugin's glob matching and root finding answer on GLOBS × PATHS and a tree of workspaces,
    and the defaults its module rag_lsp.defaults holds."""
    nvim = nvim_binary()
    if nvim is None:
        if os.environ.get("RAG_LSP_REQUIRE_EDITORS") == "1":
            pytest.fail("Neovim (`nvim`) is not installed")
        pytest.skip("Neovim (`nvim`) is not installed")
    folder = tmp_path_factory.mktemp("nvim-copies")
    files = workspace_tree(folder / "tree")
    (folder / "cases.json").write_text(json.dumps({"globs": GLOBS, "paths": PATHS, "files": [str(file) for file in files]}), encoding="utf-8")
    (folder / "script.lua").write_text(NVIM_SCRIPT, encoding="utf-8")
    environment = {**os.environ, "RAG_CASES": str(folder / "cases.json"), "RAG_OUT": str(folder / "out.json")}
    result = subprocess.run(
        [nvim, "--headless", "-u", "NONE", "-i", "NONE", "--cmd", f"set rtp^={NVIM_PLUGIN}", "-c", f"luafile {folder / 'script.lua'}", "-c", "qa!"],
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (folder / "out.json").exists(), result.stdout + result.stderr
    return json.loads((folder / "out.json").read_text(encoding="utf-8")), files


@pytest.mark.slow
@pytest.mark.parametrize("glob", GLOBS)
def test_neovim_matches_each_glob_as_the_server_does(nvim_answers: tuple[dict, list[Path]], glob: str) -> None:
    """The Neovim plugin's glob matching agrees with the server's glob_match on every path."""
    answers, _ = nvim_answers
    row = answers["matches"][GLOBS.index(glob)]
    assert {path: matched for path, matched in zip(PATHS, row)} == {path: glob_match(path, [glob]) for path in PATHS}


@pytest.mark.slow
def test_neovim_reads_the_shared_defaults_from_its_own_lua_tree(nvim_answers: tuple[dict, list[Path]]) -> None:
    """The Neovim plugin, alone on the runtimepath, loads rag_lsp.defaults, which holds the shared defaults."""
    answers, _ = nvim_answers
    assert answers["defaults"] == shared_defaults()


@pytest.mark.slow
def test_neovim_finds_the_root_the_server_finds(nvim_answers: tuple[dict, list[Path]]) -> None:
    """The Neovim plugin's workspace root of each file is the server's find_root."""
    answers, files = nvim_answers
    assert [os.path.realpath(root) for root in answers["roots"]] == [str(find_root(file)) for file in files]


def emacs_lines(out: Path, forms: str) -> list[str]:
    """The lines batch Emacs writes to ``out`` with rag-lsp.el loaded, evaluating
    ``forms`` (each inserting a line); skipped where Emacs or its Eglot is missing."""
    emacs = shutil.which("emacs")
    if emacs is None:
        if os.environ.get("RAG_LSP_REQUIRE_EDITORS") == "1":
            pytest.fail("Emacs is not installed")
        pytest.skip("Emacs is not installed")
    result = subprocess.run(
        [emacs, "--batch", "-l", str(EMACS_MODE), "--eval", f'(with-temp-file "{out}" {forms})'],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if not out.exists() and "eglot" in result.stderr.lower():
        pytest.skip("Emacs has no Eglot, which rag-lsp.el needs")
    assert out.exists(), result.stdout + result.stderr
    return out.read_text(encoding="utf-8").splitlines()


@pytest.mark.slow
def test_emacs_finds_the_root_the_server_finds(tmp_path: Path) -> None:
    """Emacs's rag-lsp-root of each file is the server's find_root where a .punica/
    or a git root marks it, and nil where nothing does (the server then takes the
    file's folder, Emacs its own project)."""
    files = workspace_tree(tmp_path / "tree")
    forms = " ".join(f'(insert (format "%s\\n" (or (rag-lsp-root "{file.parent}/") "nil")))' for file in files)
    roots = emacs_lines(tmp_path / "roots.txt", forms)
    expected = [str(find_root(file)) if file.parts[-2:] != ("plain", "c.suite.yaml") else "nil" for file in files]
    assert [root if root == "nil" else os.path.realpath(root) for root in roots] == expected


@pytest.mark.slow
def test_emacs_opens_in_suite_mode_the_yaml_the_default_globs_match(tmp_path: Path) -> None:
    """With rag-lsp.el loaded, Emacs's auto-mode-alist gives rag-lsp-suite-mode to exactly the YAML files the
    server's default suite and manifest globs match."""
    paths = [path for path in PATHS if path.endswith((".yaml", ".yml"))]
    forms = " ".join(
        f'(insert (format "%s\\n" (assoc-default "/home/someone/project/{path}" auto-mode-alist (function string-match))))'
        for path in paths
    )
    modes = emacs_lines(tmp_path / "modes.txt", forms)
    assert {path: mode == "rag-lsp-suite-mode" for path, mode in zip(paths, modes)} == {
        path: glob_match(path, EMACS_SUITE_MODE_GLOBS) for path in paths
    }
