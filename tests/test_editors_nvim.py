"""The Neovim plugin (editors/nvim) in a real, headless Neovim.

* Against the real server (``python -m rag_lsp serve``) on a copy of examples/:
  the broken suite and dataset get exactly the findings of ``rag-lsp check``; the
  code lenses are listed, "Run case" runs a case and its RAG400 comes back, and a
  quick fix is applied.
* Against editors/test/lens_server.py, a stand-in with the run half of the
  protocol: code lenses are displayed and refreshed, and :RagRunCase /
  :RagRunSuite execute the lens under the cursor.

Neovim binaries: ``nvim`` on PATH, and any listed in RAG_LSP_TEST_NVIM
(os.pathsep-separated), e.g. Debian's 0.7 and a 0.11 side by side. With
RAG_LSP_REQUIRE_EDITORS=1 (as in CI) a missing Neovim fails instead of skipping.
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

REPO = Path(__file__).resolve().parent.parent
PLUGIN = REPO / "editors" / "nvim"
SERVER = [sys.executable, "-m", "rag_lsp", "serve"]
LENS_SERVER = [sys.executable, str(REPO / "editors" / "test" / "lens_server.py")]
REQUIRED = os.environ.get("RAG_LSP_REQUIRE_EDITORS") == "1"


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
    assert dump["server"]["codeLens"] and dump["server"]["codeAction"]
    assert sorted(dump["server"]["executeCommands"]) == ["ragLsp.clearResults", "ragLsp.runCase", "ragLsp.runSuite"]
    # Three suites read gateway.jsonl: each of its 12 cases has a lens per suite.
    uri = (workspace / ".punica" / "evals" / "gateway.jsonl").as_uri()
    lenses = dump["lenses"]
    assert len(lenses) == 36 and {lens["command"] for lens in lenses} == {"ragLsp.runCase"}
    assert [lens["title"] for lens in lenses if lens["line"] == 0] == [
        "Run case (gateway-live)", "Run case (gateway-recorded)", "Run case (gateway-short-chunks)"
    ]
    assert {"uri": uri, "line": 0, "suite": "gateway-recorded"} in [lens["arguments"][0] for lens in lenses]
    # :RagRunCase ran the first lens of the line: the recorded suite's.
    assert dump["run_case"].get("err") is None
    assert dump["run_case"]["lens"]["command"]["arguments"] == [{"uri": uri, "line": 0, "suite": "gateway-recorded"}]
    assert dump["run_case"]["result"]["suites"][0]["id"] == "gateway-recorded"
    (result,) = [d for d in dump["after_run"] if d["code"] == "RAG400"]
    assert result["lnum"] == 0 and result["severity"] == 3
    assert result["message"] == (
        "recall 1.00 (2/2) · precision 0.40 · MRR 1.00 (first relevant at rank 1) · hit@1 1 · retrieved 5 · semantic 1"
    )
    after = {(lens["line"], lens["title"]) for lens in dump["lenses_after_run"]}
    assert (0, "gateway-recorded: recall 1.00 · MRR 1.00") in after and (0, "Run case (gateway-live)") in after
    # The RAG206 quick fix normalizes the path, and only that.
    fix = dump["quick_fix"]
    assert fix["title"] == "Normalize to 'src/gateway.ts'" and fix["kind"] == "quickfix"
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
    ran = [json.loads(line) for line in (tmp_path / "stub.log").read_text(encoding="utf-8").splitlines()]
    assert ran == [
        {"command": "ragLsp.runCase", "arguments": {"uri": uri, "line": 1}},
        {"command": "ragLsp.runCase", "arguments": {"uri": uri, "line": 3}},
        {"command": "ragLsp.runSuite", "arguments": {"uri": suite_path.as_uri(), "line": suite_line}},
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
