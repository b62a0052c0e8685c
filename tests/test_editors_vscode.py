"""The VS Code extension (editors/vscode): its declared contributions match the
server's settings, the packaged .vsix holds the compiled entry point and those
contributions, and installed in real VS Code it shows the findings and runs cases.

The manifest, lock file and launcher tests run in a plain `pytest`. The tests of
the built extension and the end-to-end test are marked `editors`, run by
editors/test/run-all.sh (`pytest -m editors`), which builds what they read:

* the .vsix (`npm ci && npm run build && npx @vscode/vsce package` in
  editors/vscode), read from RAG_LSP_VSIX or editors/vscode/rag-lsp.vsix, and the
  platform-specific build of scripts/bundle.sh, read from RAG_LSP_BUNDLED_VSIX;
* for the end-to-end test, editors/test/vscode-e2e.sh: code-server (installed by
  editors/vscode/e2e/install.sh) and Debian's Chromium, with this interpreter's
  rag-lsp, and the bundled scenario when RAG_LSP_BUNDLED_VSIX is set.

Without them the tests are skipped (failed with RAG_LSP_REQUIRE_EDITORS=1, as
run-all.sh sets it).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from dataclasses import fields
from pathlib import Path

import pytest

from rag_lsp.core.workspace.settings import _ALIASES, Settings, settings_from

# Slow (drives a real editor against the server): `pytest -m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent
EXTENSION = REPO / "editors" / "vscode"
REQUIRED = os.environ.get("RAG_LSP_REQUIRE_EDITORS") == "1"
# Settings of the extension itself, never sent to the server.
CLIENT_ONLY = {"ragLsp.serverCommand", "ragLsp.pythonPath", "ragLsp.importStrategy", "ragLsp.trace.server"}
SERVER_COMMANDS = {"ragLsp.runCase", "ragLsp.runSuite", "ragLsp.clearResults"}


def server_setting_names() -> dict[str, str]:
    """camelCase key -> Settings field, the preferred key per field (first alias)."""
    names: dict[str, str] = {}
    for key, field in _ALIASES.items():
        names.setdefault(field, key)
    return {names.get(f.name, f.name): f.name for f in fields(Settings)}


def check_manifest(manifest: dict) -> None:
    contributes = manifest["contributes"]
    # Languages: a jsonl language for .jsonl files.
    (jsonl,) = [language for language in contributes["languages"] if language["id"] == "jsonl"]
    assert ".jsonl" in jsonl["extensions"]
    # Configuration: every server setting but `trusted`, under its camelCase key.
    properties = contributes["configuration"]["properties"]
    declared = {key for key in properties if key not in CLIENT_ONLY}
    expected = {f"ragLsp.{key}" for key, field in server_setting_names().items() if field != "trusted"}
    assert declared == expected
    assert "ragLsp.trusted" not in properties  # the workspace trust, never a user setting
    # The defaults shown in the Settings UI are the server's, and the server accepts them.
    values = {key.removeprefix("ragLsp."): spec["default"] for key, spec in properties.items() if key in declared}
    settings, problems = settings_from(values)
    assert problems == []
    assert settings == Settings()
    # Commands: restart, the output (the status bar item's), and the server's commands (run from its lenses).
    commands = {command["command"] for command in contributes["commands"]}
    assert commands == {"ragLsp.restartServer", "ragLsp.showOutput"} | SERVER_COMMANDS
    # As Microsoft's Python tool extensions: rag-lsp from the environment by default, the bundled copy with useBundled.
    strategy = contributes["configuration"]["properties"]["ragLsp.importStrategy"]
    assert strategy["enum"] == ["fromEnvironment", "useBundled"]
    assert strategy["default"] == "fromEnvironment"
    # Activation on suites, datasets and .punica workspaces.
    events = manifest["activationEvents"]
    assert {"onLanguage:jsonl", "workspaceContains:.punica", "workspaceContains:**/*.suite.yaml"} <= set(events)
    trust = manifest["capabilities"]["untrustedWorkspaces"]
    assert trust["supported"] == "limited"
    assert set(trust["restrictedConfigurations"]) == {"ragLsp.serverCommand", "ragLsp.pythonPath"}
    assert manifest["main"] == "./out/extension.js"


def test_package_json_mirrors_the_server_settings() -> None:
    check_manifest(json.loads((EXTENSION / "package.json").read_text(encoding="utf-8")))


def test_the_extension_and_the_server_agree_on_setting_names() -> None:
    """settings.ts lists the keys it forwards: exactly the server's, less `trusted`."""
    source = (EXTENSION / "src" / "settings.ts").read_text(encoding="utf-8")
    block = re.search(r"SERVER_SETTINGS = \[(.*?)\] as const", source, re.DOTALL)
    assert block is not None
    forwarded = set(re.findall(r'"(\w+)"', block.group(1)))
    assert forwarded == {key for key, field in server_setting_names().items() if field != "trusted"}


def test_the_lock_file_pins_node_lts_compatible_tools() -> None:
    lock = json.loads((EXTENSION / "package-lock.json").read_text(encoding="utf-8"))
    assert lock["lockfileVersion"] >= 2
    packages = lock["packages"]
    assert packages[""]["dependencies"] == {"@vscode/python-extension": "1.0.5", "vscode-languageclient": "9.0.1"}
    for name in ("vscode-languageclient", "@vscode/python-extension", "@vscode/vsce", "typescript", "@types/vscode"):
        assert f"node_modules/{name}" in packages, name
    node = packages["node_modules/@vscode/vsce"].get("engines", {}).get("node", "")
    assert "20" in node  # runs on node 20 LTS


def vsix_path() -> Path:
    return Path(os.environ.get("RAG_LSP_VSIX") or EXTENSION / "rag-lsp.vsix")


@pytest.fixture(scope="module")
def vsix() -> zipfile.ZipFile:
    path = vsix_path()
    if not path.exists():
        message = (
            f"no .vsix at {path}: build it in editors/vscode with npm ci && npx @vscode/vsce package --out rag-lsp.vsix"
        )
        if REQUIRED:
            pytest.fail(message)
        pytest.skip(message)
    with zipfile.ZipFile(path) as archive:
        yield archive


@pytest.mark.editors
def test_vsix_holds_the_compiled_extension(vsix: zipfile.ZipFile) -> None:
    names = set(vsix.namelist())
    manifest = json.loads(vsix.read("extension/package.json"))
    entry = "extension/" + manifest["main"].removeprefix("./")
    assert entry in names
    compiled = vsix.read(entry).decode("utf-8")
    assert "exports.activate = activate" in compiled
    assert "exports.deactivate = deactivate" in compiled
    assert 'require("vscode-languageclient/node")' in compiled
    for module in ("command", "settings", "documents", "python", "status", "runs"):
        assert f"extension/out/{module}.js" in names
    # The runtime dependencies ship; sources, tests, the end-to-end harness and dev tools do not.
    assert "extension/node_modules/vscode-languageclient/package.json" in names
    assert "extension/node_modules/@vscode/python-extension/out/main.js" in names
    assert "extension/language-configuration.json" in names
    assert "extension.vsixmanifest" in names
    # The launcher of the bundled copy ships; the copy itself only in a platform-specific build.
    assert "extension/bundled/tool/rag_lsp_bundled.py" in names
    unpackaged = ("extension/src/", "extension/out/test/", "extension/out/testing/", "extension/e2e/", "extension/bundled/libs/")
    assert not [name for name in names if name.startswith(unpackaged)]
    assert not [name for name in names if "/node_modules/typescript/" in name or "/node_modules/@vscode/vsce/" in name]


@pytest.mark.editors
def test_vsix_declares_the_contributions(vsix: zipfile.ZipFile) -> None:
    manifest = json.loads(vsix.read("extension/package.json"))
    check_manifest(manifest)
    vsixmanifest = vsix.read("extension.vsixmanifest").decode("utf-8")
    assert f'Version="{manifest["version"]}"' in vsixmanifest


@pytest.mark.editors
def test_the_platform_specific_vsix_bundles_rag_lsp_for_its_target() -> None:
    """scripts/bundle.sh's build: the same extension, for one VS Code target, with rag-lsp and its dependencies."""
    path = os.environ.get("RAG_LSP_BUNDLED_VSIX")
    if not path or not Path(path).exists():
        message = f"no platform-specific .vsix ({path or 'RAG_LSP_BUNDLED_VSIX is not set'}): build it with scripts/bundle.sh"
        if REQUIRED:
            pytest.fail(message)
        pytest.skip(message)
    with zipfile.ZipFile(path) as archive:
        names = set(archive.namelist())
        bundle = json.loads(archive.read("extension/bundled/libs/rag_lsp_bundle.json"))
        vsixmanifest = archive.read("extension.vsixmanifest").decode("utf-8")
        check_manifest(json.loads(archive.read("extension/package.json")))
    assert f'TargetPlatform="{bundle["target"]}"' in vsixmanifest
    assert re.fullmatch(r"3\.\d+", bundle["python"]) and bundle["version"]
    for module in ("rag_lsp/__init__.py", "rag_lsp/server/__init__.py", "pygls/__init__.py", "yaml/__init__.py"):
        assert f"extension/bundled/libs/{module}" in names, module
    assert "extension/bundled/tool/rag_lsp_bundled.py" in names
    assert not [name for name in names if name.startswith("extension/bundled/libs/bin/") or "/__pycache__/" in name]


def _bundle(tmp_path: Path, python: str) -> Path:
    """A bundled/ folder as scripts/bundle.sh lays it out, its libs holding this checkout's rag_lsp."""
    bundled = tmp_path / "bundled"
    shutil.copytree(EXTENSION / "bundled" / "tool", bundled / "tool")
    (bundled / "libs").mkdir()
    (bundled / "libs" / "rag_lsp").symlink_to(REPO / "rag_lsp", target_is_directory=True)
    (bundled / "libs" / "rag_lsp_bundle.json").write_text(json.dumps({"python": python, "target": "linux-x64"}))
    return bundled / "tool" / "rag_lsp_bundled.py"


def test_the_bundled_launcher_runs_rag_lsp_from_its_libs(tmp_path: Path) -> None:
    """--check prints the interpreter's version when the bundle was built for it, then `serve`'s parser is rag-lsp's."""
    running = "%d.%d" % sys.version_info[:2]
    launcher = _bundle(tmp_path, running)
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    checked = subprocess.run(
        [sys.executable, str(launcher), "--check"], capture_output=True, text=True, env=env, cwd=tmp_path, check=False
    )
    assert checked.returncode == 0, checked.stderr
    assert checked.stdout.strip() == "%d.%d.%d" % sys.version_info[:3]
    version = subprocess.run(
        [sys.executable, str(launcher), "--version"], capture_output=True, text=True, env=env, cwd=tmp_path, check=False
    )
    assert version.stdout.strip().startswith("rag-lsp "), version.stderr


def test_the_bundled_launcher_refuses_another_python_version(tmp_path: Path) -> None:
    """A bundle built for another Python says so on stderr and exits 1, so the extension tries the next interpreter."""
    launcher = _bundle(tmp_path, "2.7")
    checked = subprocess.run([sys.executable, str(launcher), "--check"], capture_output=True, text=True, check=False)
    assert checked.returncode == 1
    assert checked.stderr.strip() == f"is Python {sys.version_info[0]}.{sys.version_info[1]}; the bundled rag-lsp is built for Python 2.7"


def _end_to_end_missing() -> list[str]:
    """What the end-to-end test needs and this machine lacks."""
    missing = []
    if not vsix_path().exists():
        missing.append(f"the .vsix ({vsix_path()})")
    if not (EXTENSION / "out" / "testing" / "python-stand-in.js").exists():
        missing.append("the compiled extension (npm ci && npm run build in editors/vscode)")
    if not (EXTENSION / "e2e" / "node_modules" / "code-server" / "lib" / "vscode" / "node_modules").exists():
        missing.append("code-server (editors/vscode/e2e/install.sh)")
    if not (os.environ.get("RAG_LSP_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")):
        missing.append("Chromium (apt-get install chromium)")
    if not shutil.which("node"):
        missing.append("Node.js")
    if not (Path(sys.executable).parent / "rag-lsp").exists():
        missing.append(f"a rag-lsp script beside {sys.executable}")
    return missing


@pytest.mark.editors
def test_vscode_shows_findings_and_runs_cases_end_to_end(tmp_path: Path) -> None:
    """In code-server with the .vsix on a fresh profile, no ragLsp setting: the Python extension's interpreter or
    rag-lsp on PATH serves exactly the findings of rag-lsp check and a run-case click's RAG400; the workspace's .venv
    with rag-lsp serves before PATH, as the output channel says; with no interpreter, one notification offers its
    three buttons and selecting an interpreter starts the server."""
    missing = _end_to_end_missing()
    if missing:
        message = "VS Code end-to-end test needs " + ", ".join(missing)
        if REQUIRED:
            pytest.fail(message)
        pytest.skip(message)
    env = {**os.environ, "RAG_LSP_E2E_ARTIFACTS": str(tmp_path / "artifacts")}
    result = subprocess.run(
        ["bash", str(REPO / "editors" / "test" / "vscode-e2e.sh"), sys.executable, str(vsix_path())],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
        check=False,
    )
    assert result.returncode == 0, f"{result.stdout}\n{result.stderr}"
    scenarios = 5 if os.environ.get("RAG_LSP_BUNDLED_VSIX") else 4
    assert re.search(rf"^vscode e2e: {scenarios} passed, 0 failed$", result.stdout, re.MULTILINE), result.stdout
