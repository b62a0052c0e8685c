"""The Neovim plugin (editors/nvim) in a real, headless Neovim.

* Against the real server (``python -m rag_lsp serve``) on a copy of examples/:
  the broken suite and dataset get exactly the findings of ``rag-lsp check``; the
  code lenses are listed, "Run case" runs a case and its RAG400 comes back, and a
  quick fix is applied.
* Against editors/test/lens_server.py, a stand-in with the run half of the
  protocol: code lenses are displayed and refreshed, and :RagRunCase /
  :RagRunSuite execute the lens under the cursor.
* Neovim 0.11+ with nothing but ``vim.lsp.enable("rag_lsp")`` (the plugin's
  lsp/rag_lsp.lua), the default ``rag-lsp`` command found on PATH: diagnostics,
  lenses and a run from the real server.
* ``:checkhealth rag_lsp``, read from the health buffer: the server's version, the
  workspace root and its trust, whichever way the plugin was started, and the
  install command when the server is missing.

Neovim binaries: ``nvim`` on PATH, and any listed in RAG_LSP_TEST_NVIM
(os.pathsep-separated), e.g. Debian's 0.7 and a 0.11 side by side. With
RAG_LSP_REQUIRE_EDITORS=1 (as editors/test/run-all.sh sets it, in CI) a missing
Neovim fails instead of skipping. Marked `editors`: run with ``pytest -m editors``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from workspaces import examples_with_broken_files

# Slow (drives a real editor against the server): `pytest -m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent
PLUGIN = REPO / "editors" / "nvim"
SERVER = [sys.executable, "-m", "rag_lsp", "serve"]
LENS_SERVER = [sys.executable, str(REPO / "editors" / "test" / "lens_server.py")]
REQUIRED = os.environ.get("RAG_LSP_REQUIRE_EDITORS") == "1"
# Run by editors/test/run-all.sh (`pytest -m editors`); a plain `pytest` leaves them out.
pytestmark = pytest.mark.editors


def _binaries() -> list[str]:
    found = []
    for candidate in [shutil.which("nvim"), *os.environ.get("RAG_LSP_TEST_NVIM", "").split(os.pathsep)]:
        if candidate and shutil.which(candidate) and os.path.realpath(shutil.which(candidate)) not in found:
            found.append(os.path.realpath(shutil.which(candidate)))
    return found


NVIMS = _binaries()


def _version(binary: str) -> tuple[int, ...]:
    first = subprocess.run(
        [binary, "--version"], capture_output=True, text=True, timeout=30, check=False
    ).stdout.split()[1]
    return tuple(int(part) for part in first.lstrip("v").split("-")[0].split(".")[:3])


def _nvim_id(binary: str | None) -> str:
    return f"nvim-{'.'.join(map(str, _version(binary)))}" if binary else "no-nvim"


@pytest.fixture(scope="module", params=NVIMS or [None], ids=_nvim_id)
def nvim(request: pytest.FixtureRequest) -> str:
    if request.param is None:
        message = "Neovim (`nvim`) is not installed: apt-get install neovim (CI installs it in .ci/run)"
        if REQUIRED:
            pytest.fail(message)
        pytest.skip(message)
    return request.param


def copy_examples(folder: Path) -> Path:
    return examples_with_broken_files(folder / "ws")


@pytest.fixture(scope="module")
def real_server(nvim: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path]:
    """One headless session against the real server: its dump and its workspace."""
    folder = tmp_path_factory.mktemp("nvim-e2e")
    workspace = copy_examples(folder)
    return run_nvim(nvim, "e2e.lua", workspace, SERVER, folder), workspace


def run_nvim(binary: str, script: str, workspace: Path, server: list[str], tmp_path: Path, **extra_env: str) -> dict:
    out = tmp_path / f"{script}.json"
    home = tmp_path / "home"
    env = {
        **os.environ,
        "RAG_LSP_NVIM_PLUGIN": str(PLUGIN),
        "RAG_LSP_E2E_WORKSPACE": str(workspace),
        "RAG_LSP_E2E_CMD": json.dumps(server),
        "RAG_LSP_E2E_OUT": str(out),
        "RAG_LSP_STUB_LOG": str(tmp_path / "stub.log"),
        # Keep Neovim's state, logs and config out of the user's home.
        **{f"XDG_{kind}_HOME": str(home / kind.lower()) for kind in ("CONFIG", "DATA", "STATE", "CACHE")},
        **extra_env,
    }
    script_path = PLUGIN / "test" / script
    completed = subprocess.run(
        [binary, "--headless", "-u", "NONE", "-i", "NONE", "-c", f"luafile {script_path}"],
        check=False,
        env=env,
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=240,
        stdin=subprocess.DEVNULL,
    )
    assert out.exists(), f"no dump; exit {completed.returncode}\n{completed.stdout}\n{completed.stderr}"
    dump = json.loads(out.read_text(encoding="utf-8"))
    assert "error" not in dump, dump["error"]
    assert completed.returncode == 0, completed.stderr
    return dump


def first_suite_line(path: Path) -> int:
    """The 0-based line of the first suite's `- id:`, where its lens is."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return next(number for number, line in enumerate(lines) if re.match(r"\s*-\s+id\s*:", line))


def check_findings(workspace: Path) -> dict[str, list[tuple[str, int, int]]]:
    completed = subprocess.run(
        [sys.executable, "-m", "rag_lsp", "check", str(workspace), "--format", "json", "--fail-on", "never"],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    found: dict[str, list[tuple[str, int, int]]] = {}
    for finding in json.loads(completed.stdout):
        start = finding["range"]["start"]
        found.setdefault(finding["path"], []).append((finding["code"], start["line"], start["character"]))
    return {path: sorted(items) for path, items in found.items()}


def shown(diagnostics: list[dict]) -> list[tuple[str, int, int]]:
    return sorted((d["code"], d["lnum"], d["col"]) for d in diagnostics)


def test_nvim_shows_the_servers_diagnostics(nvim: str, real_server: tuple[dict, Path]) -> None:
    dump, workspace = real_server
    new_api = _version(nvim) >= (0, 11)
    assert dump["api"] == ("vim.lsp.enable" if new_api else "vim.lsp.start_client")
    assert dump["filetypes"] == {"suite": "yaml", "dataset": "jsonl", "other": "markdown"}
    # One client for the workspace, on the suite and the dataset, not on other files.
    assert dump["attached"] == {"suite": 1, "dataset": 1, "other": 0}
    (client,) = dump["clients"]
    assert Path(client["root_dir"]).resolve() == workspace.resolve()
    assert client["settings"] == {
        "ragLsp": {"severity": {"RAG203": "off"}, "runTimeout": 30, "maxLineBytes": 1048576, "trusted": False}
    }
    assert dump["server"]["pullDiagnostics"] is new_api  # 0.11 pulls, 0.7 is pushed

    suite, dataset = dump["diagnostics"]["suite"], dump["diagnostics"]["dataset"]
    assert {"RAG101", "RAG103"} <= {d["code"] for d in suite}
    assert {"RAG200", "RAG202"} <= {d["code"] for d in dataset}
    # Exactly what `rag-lsp check` finds, at the same places, less RAG203: the
    # setup() settings turned it off, so they reached the server.
    expected = check_findings(workspace)
    assert ("RAG203", 5) in [(code, line) for code, line, _ in expected[".punica/evals/broken.jsonl"]]
    assert shown(suite) == expected[".punica/evals/broken.suite.yaml"]
    assert shown(dataset) == [finding for finding in expected[".punica/evals/broken.jsonl"] if finding[0] != "RAG203"]
    assert all(d["source"] == "rag-lsp" for d in suite + dataset)

    # The settings were accepted (no warning), and nothing went wrong on the Neovim side.
    assert dump["messages"] == []
    # Only the plugin's own messages: no error, no deprecation warning from Neovim.
    assert [n for n in dump["notifications"] if n["level"] >= 4] == []
    assert all(n["message"].startswith("rag-lsp: ") for n in dump["notifications"]), dump["notifications"]
    assert dump["commands"] == {"RagRunCase": 2, "RagRunSuite": 2, "RagTrust": 2}
    # :RagTrust trusts the workspace for the session and tells the server.
    assert dump["trusted_settings"]["ragLsp"]["trusted"] is True


def test_nvim_runs_a_case_and_applies_a_quick_fix_on_the_real_server(real_server: tuple[dict, Path]) -> None:
    """Neovim lists the real server's lenses, runs a case through its lens and reads back the RAG400, then applies a quick fix."""
    dump, workspace = real_server
    assert dump["server"]["codeLens"]
    assert dump["server"]["codeAction"]
    assert sorted(dump["server"]["executeCommands"]) == ["ragLsp.clearResults", "ragLsp.runCase", "ragLsp.runSuite"]
    # Three suites read gateway.jsonl: each of its 12 cases has one lens, which runs the case in all three.
    uri = (workspace / ".punica" / "evals" / "gateway.jsonl").as_uri()
    lenses = dump["lenses"]
    assert len(lenses) == 12
    assert {lens["command"] for lens in lenses} == {"ragLsp.runCase"}
    assert [lens["title"] for lens in lenses if lens["line"] == 0] == ["Run case (3 suites)"]
    assert {"uri": uri, "line": 0} == lenses[0]["arguments"][0]
    # :RagRunCase ran the line's lens: the case in every suite.
    assert dump["run_case"].get("err") is None
    assert sorted(suite["id"] for suite in dump["run_case"]["result"]["suites"]) == [
        "gateway-live", "gateway-recorded", "gateway-short-chunks"
    ]
    # Each suite's result names its suite: all three read the dataset.
    (result,) = [d for d in dump["after_run"] if d["code"] == "RAG400" and d["message"].startswith("gateway-recorded: ")]
    assert result["lnum"] == 0
    assert result["severity"] == 3
    assert result["message"] == (
        "gateway-recorded: recall 1.00 (2/2) · precision 0.40 · MRR 1.00 (first relevant at rank 1) · hit@1 1 · retrieved 5 · semantic 1"
    )
    (title,) = [lens["title"] for lens in dump["lenses_after_run"] if lens["line"] == 0]
    # Three suites' figures would not fit a lens: it says how many ran, the hover gives each.
    assert title == "Ran in 3 of 3 suites (hover for each) · run again"
    # The RAG206 quick fix normalizes the path, and only that.
    fix = dump["quick_fix"]
    assert fix["title"] == "Normalize to 'src/gateway.ts'"
    assert fix["kind"] == "quickfix"
    original = (workspace / ".punica" / "evals" / "broken.jsonl").read_text(encoding="utf-8").splitlines()[fix["lnum"]]
    assert fix["line"] == original.replace('"./src/gateway.ts"', '"src/gateway.ts"') != original
    assert "RAG206" not in [d["code"] for d in dump["after_fix"]]
    assert "RAG202" in [d["code"] for d in dump["after_fix"]]  # the other findings stay


def test_nvim_displays_lenses_and_runs_them(nvim: str, tmp_path: Path) -> None:
    workspace = copy_examples(tmp_path)
    dump = run_nvim(nvim, "lens.lua", workspace, LENS_SERVER, tmp_path)
    # Lenses are requested, resolved lazily and displayed without any user action.
    assert dump["lenses_before"]["0"] == "Run case"
    assert dump["lenses_before"]["1"] == "Run case"
    # Running the case under the cursor executes its lens's command with its arguments.
    uri = (workspace / ".punica" / "evals" / "gateway.jsonl").as_uri()
    assert dump["run_case"]["err"] is None
    assert dump["run_case"]["lens"]["command"] == {
        "title": "Run case",
        "command": "ragLsp.runCase",
        "arguments": [{"uri": uri, "line": 1}],
    }
    assert dump["diagnostics_after_run"] == [{"code": "RAG400", "lnum": 1, "message": "recall 1.00 · MRR 1.00"}]
    # workspace/codeLens/refresh re-requests the lenses: the case shows its figures.
    assert dump["lenses_after"]["1"] == "recall 1.00 · MRR 1.00"
    assert dump["lenses_after"]["0"] == "Run case"
    assert dump["lenses_after_command"]["3"] == "recall 1.00 · MRR 1.00"  # :RagRunCase itself
    # :RagRunSuite runs the suite the cursor is in (the lens on its `- id:` line).
    suite_path = workspace / ".punica" / "evals" / "gateway.suite.yaml"
    suite_line = first_suite_line(suite_path)
    assert dump["suite_line"] == suite_line
    assert dump["suite_lenses"][str(suite_line)].startswith("Run suite")
    assert dump["run_suite"]["lens"]["command"]["command"] == "ragLsp.runSuite"
    assert dump["run_suite"]["lens"]["range"]["start"]["line"] == suite_line
    assert all(n["message"].startswith("rag-lsp: ") for n in dump["notifications"]), dump["notifications"]
    # No case lens on the line: said, and nothing run.
    assert dump["run_case_without_lens"]["err"] == "no lens"
    assert any("no Run case lens on this line" in n["message"] for n in dump["notifications"])
    # A 3,000-line dataset: only the lenses around the lines shown were resolved (a
    # request each), not one per line, and :RagRunSuite in it resolved none more:
    # it runs the suites that read the dataset.
    assert 0 < dump["big_resolved"] < 500, dump["big_resolved"]
    assert dump["run_suite_in_dataset"]["err"] is None
    logged = [json.loads(line) for line in (tmp_path / "stub.log").read_text(encoding="utf-8").splitlines()]
    ran = [entry for entry in logged if "command" in entry]
    big_uri = (workspace / ".punica" / "evals" / "big.jsonl").as_uri()
    assert ran == [
        {"command": "ragLsp.runCase", "arguments": {"uri": uri, "line": 1}},
        {"command": "ragLsp.runCase", "arguments": {"uri": uri, "line": 3}},
        {"command": "ragLsp.runSuite", "arguments": {"uri": suite_path.as_uri(), "line": suite_line}},
        {"command": "ragLsp.runSuite", "arguments": {"uri": big_uri}},
    ]


@pytest.mark.parametrize(
    ("options", "told"),
    [
        ({}, ["`rag-lsp` was not found on PATH", "pip install rag-lsp"]),
        ({"python": "/nonexistent/bin/python3"}, ["`/nonexistent/bin/python3` was not found", "pip install rag-lsp"]),
        (
            {"python": "PYTHON"},
            ["cannot import rag_lsp (ModuleNotFoundError: No module named 'rag_lsp')", "PYTHON -m pip install rag-lsp"],
        ),
    ],
    ids=["no-rag-lsp", "no-python", "python-without-rag-lsp"],
)
def test_nvim_names_the_install_command_when_the_server_is_missing(
    nvim: str, tmp_path: Path, options: dict, told: list[str]
) -> None:
    python = tmp_path / "python"
    python.write_text(
        "#!/bin/sh\necho \"ModuleNotFoundError: No module named 'rag_lsp'\" >&2\nexit 1\n", encoding="utf-8"
    )
    python.chmod(0o755)
    options = {key: str(python) if value == "PYTHON" else value for key, value in options.items()}
    told = [text.replace("PYTHON", str(python)) for text in told]
    workspace = copy_examples(tmp_path)
    dump = run_nvim(
        nvim,
        "missing.lua",
        workspace,
        SERVER,
        tmp_path,
        RAG_LSP_E2E_SETUP=json.dumps(options),
        PATH=str(tmp_path / "empty"),
    )
    assert dump["clients"] == 0
    # Said once, as an error, however many files were opened.
    (notification,) = dump["notifications"]
    assert notification["level"] == 4
    for text in told:
        assert text in notification["message"], notification["message"]


def server_version() -> str:
    completed = subprocess.run(
        [sys.executable, "-m", "rag_lsp", "--version"], check=True, capture_output=True, text=True, timeout=60
    )
    return completed.stdout.strip()


def rag_lsp_on_path(folder: Path) -> str:
    """A PATH whose `rag-lsp` is this checkout's server, run by this Python."""
    bin_dir = folder / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "rag-lsp"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m rag_lsp "$@"\n', encoding="utf-8")
    shim.chmod(0o755)
    return f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"


def health_text(lines: list[str]) -> str:
    """The report as one text, whatever the Neovim's decorations (`- OK:` or `- ✅ OK`)."""
    return "\n".join(lines)


def reported_root(lines: list[str]) -> Path:
    (root,) = [m.group(1) for line in lines if (m := re.search(r"Workspace root: (\S+) \(", line))]
    return Path(root).resolve()


@pytest.fixture(scope="module")
def enabled(nvim: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path]:
    """One headless Neovim 0.11+ session with only vim.lsp.enable("rag_lsp"): its dump and its workspace."""
    if _version(nvim) < (0, 11):
        pytest.skip("vim.lsp.enable and lsp/<name>.lua need Neovim 0.11")
    folder = tmp_path_factory.mktemp("nvim-enable")
    workspace = copy_examples(folder)
    dump = run_nvim(nvim, "enable.lua", workspace, SERVER, folder, PATH=rag_lsp_on_path(folder))
    return dump, workspace


def test_nvim_enable_alone_shows_the_servers_diagnostics(enabled: tuple[dict, Path]) -> None:
    """With only vim.lsp.enable("rag_lsp"), opening the broken suite and dataset shows exactly what `rag-lsp check` finds."""
    dump, workspace = enabled
    assert dump["config"] == {
        "cmd": ["rag-lsp", "serve"],
        "filetypes": ["yaml", "jsonl", "toml"],
        "settings": {"ragLsp": {"trusted": False}},
        "init_options": {"trusted": False},
        "root_dir": "function",
    }
    assert Path(dump["client"]["root_dir"]).resolve() == workspace.resolve()
    assert dump["client"]["settings"] == {"ragLsp": {"trusted": False}}
    assert dump["client"]["attached"] == {"suite": 1, "dataset": 1}
    suite, dataset = dump["diagnostics"]["suite"], dump["diagnostics"]["dataset"]
    assert {"RAG101", "RAG103"} <= {d["code"] for d in suite}
    expected = check_findings(workspace)
    assert shown(suite) == expected[".punica/evals/broken.suite.yaml"]
    assert shown(dataset) == expected[".punica/evals/broken.jsonl"]
    assert all(d["source"] == "rag-lsp" for d in suite + dataset)
    assert [n for n in dump["notifications"] if n["level"] >= 4] == []


def test_nvim_enable_alone_shows_lenses_and_runs_a_case(enabled: tuple[dict, Path]) -> None:
    """With only vim.lsp.enable("rag_lsp"), lenses are shown and :RagRunCase brings the case's RAG400."""
    dump, _ = enabled
    assert dump["lenses"]["0"].startswith("Run case"), dump["lenses"]
    assert dump["commands"] == {"RagRunCase": 2, "RagTrust": 2}
    # The line's one lens runs the case in every suite that reads the dataset: a RAG400 from each.
    results = [d for d in dump["after_run"] if d["code"] == "RAG400"]
    assert sorted(d["message"].split(": ")[0] for d in results) == ["gateway-live", "gateway-recorded", "gateway-short-chunks"]
    assert all(d["lnum"] == 0 and ": recall 1.00 (2/2)" in d["message"] for d in results)


def test_checkhealth_after_enable_names_the_version_root_and_trust(enabled: tuple[dict, Path]) -> None:
    """:checkhealth rag_lsp after vim.lsp.enable names the server's version, the workspace root and its trust, then :RagTrust's."""
    dump, workspace = enabled
    report = health_text(dump["health"])
    assert "Server command: `rag-lsp serve`" in report
    assert f"Version: {server_version()}" in report
    assert 'started by vim.lsp.enable("rag_lsp") with the configuration of lsp/rag_lsp.lua' in report
    assert reported_root(dump["health"]) == workspace.resolve()
    assert "(the nearest folder holding .punica/)" in report
    assert "Not trusted: `command` and `http` targets in " in report
    assert "WARNING" not in report, report
    assert "ERROR" not in report, report
    assert dump["trusted_settings"] == {"ragLsp": {"trusted": True}}
    trusted = health_text(dump["health_trusted"])
    assert "Trusted by :RagTrust, for this session" in trusted
    assert "Not trusted" not in trusted


def test_checkhealth_after_setup_names_the_version_root_and_trust(nvim: str, tmp_path: Path) -> None:
    """:checkhealth rag_lsp after setup() names the server's version, the workspace root, the trust and the start path."""
    workspace = copy_examples(tmp_path)
    dump = run_nvim(
        nvim,
        "health.lua",
        workspace,
        SERVER,
        tmp_path,
        RAG_LSP_E2E_SETUP=json.dumps({"python": sys.executable, "trusted": True}),
        RAG_LSP_E2E_CLIENT="1",
    )
    assert dump["clients"] == 1
    assert shown(dump["dataset"]) == check_findings(workspace)[".punica/evals/broken.jsonl"]
    report = health_text(dump["health"])
    assert f"Server command: `{sys.executable} -m rag_lsp serve`" in report
    assert f"Version: {server_version()}" in report
    version = ".".join(map(str, _version(nvim)))
    if _version(nvim) >= (0, 11):
        assert f'Neovim {version}: started by require("rag_lsp").setup() through vim.lsp.config and vim.lsp.enable' in report
    else:
        assert f'Neovim {version}: started by require("rag_lsp").setup() with vim.lsp.start_client' in report
    assert "broken.suite.yaml (yaml), attached to client" in report
    assert reported_root(dump["health"]) == workspace.resolve()
    assert "Trusted by the `trusted` option of setup()" in report
    assert "WARNING" not in report, report
    assert "ERROR" not in report, report


def test_vim_lsp_config_changes_reach_the_server(nvim: str, tmp_path: Path) -> None:
    """A command, settings and trust given with vim.lsp.config before vim.lsp.enable reach the server and the health report."""
    if _version(nvim) < (0, 11):
        pytest.skip("vim.lsp.config needs Neovim 0.11")
    workspace = copy_examples(tmp_path)
    settings = {"severity": {"RAG203": "off"}, "runTimeout": 30, "trusted": True}
    dump = run_nvim(
        nvim,
        "health.lua",
        workspace,
        SERVER,
        tmp_path,
        RAG_LSP_E2E_CONFIG=json.dumps({"cmd": SERVER, "settings": {"ragLsp": settings}}),
        RAG_LSP_E2E_CLIENT="1",
        PATH=str(tmp_path / "empty"),  # no `rag-lsp`: the configured command starts it
    )
    assert dump["clients"] == 1
    assert dump["settings"] == {"ragLsp": settings}
    # RAG203 turned off by the settings, so they reached the server.
    expected = check_findings(workspace)[".punica/evals/broken.jsonl"]
    assert "RAG203" in [code for code, _, _ in expected]
    assert shown(dump["dataset"]) == [finding for finding in expected if finding[0] != "RAG203"]
    report = health_text(dump["health"])
    assert f"Server command: `{' '.join(SERVER)}`" in report
    assert f"Version: {server_version()}" in report
    assert "Trusted by `trusted` in the client's settings (vim.lsp.config)" in report
    assert reported_root(dump["health"]) == workspace.resolve()
    assert "WARNING" not in report, report
    assert "ERROR" not in report, report


@pytest.mark.parametrize("start", ["enable", "setup"])
def test_checkhealth_names_the_install_command_when_the_server_is_missing(
    nvim: str, tmp_path: Path, start: str
) -> None:
    """With no `rag-lsp` on PATH, the plugin says so once and :checkhealth rag_lsp reports it with the install command."""
    if start == "enable" and _version(nvim) < (0, 11):
        pytest.skip("vim.lsp.enable needs Neovim 0.11")
    workspace = copy_examples(tmp_path)
    extra = {"RAG_LSP_E2E_SETUP": "{}"} if start == "setup" else {}
    dump = run_nvim(nvim, "health.lua", workspace, SERVER, tmp_path, PATH=str(tmp_path / "empty"), **extra)
    assert dump["clients"] == 0
    (notification,) = dump["notifications"]
    assert notification["level"] == 4
    assert "`rag-lsp` was not found on PATH" in notification["message"]
    # Where to set the command: where this way of starting takes it.
    where = "vim.lsp.config('rag_lsp'" if start == "enable" else "require('rag_lsp').setup()"
    assert where in notification["message"], notification["message"]
    report = health_text(dump["health"])
    assert "ERROR" in report
    assert "The server command `rag-lsp serve` cannot start: `rag-lsp` was not found on PATH" in report
    assert "pip install rag-lsp" in report
    assert where in report
    assert "is a file the server checks, but no rag-lsp client is attached" in report
    assert reported_root(dump["health"]) == workspace.resolve()


def test_nvim_gives_the_server_the_workspace_settings_file_only(nvim: str, tmp_path: Path) -> None:
    """.punica/rag-lsp.toml and a root pyproject.toml with [tool.rag-lsp] show the server's findings; other pyproject.toml files get no client."""
    first = copy_examples(tmp_path / "one")
    (first / ".punica" / "rag-lsp.toml").write_text('run-timeout = "soon"\n\n[severity]\nRAG203 = "loud"\n', encoding="utf-8")
    (first / "pyproject.toml").write_text('[project]\nname = "shop"\n', encoding="utf-8")
    (first / "docs" / "pyproject.toml").write_text('[tool.rag-lsp]\nrun-timeout = "soon"\n', encoding="utf-8")
    second = copy_examples(tmp_path / "two")
    (second / "pyproject.toml").write_text(
        '[project]\nname = "shop"\n\n[tool.rag-lsp.severity]\nRAG203 = "loud"\n', encoding="utf-8"
    )
    dump = run_nvim(nvim, "settings.lua", first, SERVER, tmp_path, RAG_LSP_E2E_WORKSPACE2=str(second))
    files = dump["files"]
    assert {key: file["filetype"] for key, file in files.items()} == dict.fromkeys(files, "toml")
    # The settings files: attached, and exactly what `rag-lsp check` finds in them.
    for key, workspace, path in [
        ("1:.punica/rag-lsp.toml", first, ".punica/rag-lsp.toml"),
        ("2:pyproject.toml", second, "pyproject.toml"),
    ]:
        assert files[key]["should_attach"] is True
        assert files[key]["attached"] == 1
        expected = check_findings(workspace)[path]
        assert {code for code, _, _ in expected} == {"RAG004"}
        assert shown(files[key]["diagnostics"]) == expected, key
    # A pyproject.toml without the table, or below the root: not the server's.
    for key in ["1:pyproject.toml", "1:docs/pyproject.toml"]:
        assert files[key]["should_attach"] is False, key
        assert files[key]["attached"] == 0, key
    assert sorted(Path(root).resolve() for root in dump["clients"]) == sorted([first.resolve(), second.resolve()])
    assert [n for n in dump["notifications"] if n["level"] >= 4] == []
