"""The Emacs integration (editors/emacs/rag-lsp.el) in a batch Emacs with Eglot,
against the real server on a copy of examples/: Flymake shows exactly the
findings of ``rag-lsp check``.

Needs ``emacs`` with Eglot (Debian: emacs-nox and elpa-eglot); skipped with the
reason when absent, and failed instead with RAG_LSP_REQUIRE_EDITORS=1 (as
editors/test/run-all.sh sets it, in CI). Marked `editors`: run with ``pytest -m editors``.
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
EMACS_DIR = REPO / "editors" / "emacs"
REQUIRED = os.environ.get("RAG_LSP_REQUIRE_EDITORS") == "1"
# Run by editors/test/run-all.sh (`pytest -m editors`); a plain `pytest` leaves them out.
pytestmark = pytest.mark.editors


def _emacs_with_eglot() -> tuple[str | None, str]:
    emacs = shutil.which("emacs")
    if emacs is None:
        return None, "Emacs is not installed: apt-get install emacs-nox elpa-eglot (CI installs them in .ci/run)"
    probe = subprocess.run(
        [emacs, "--batch", "--eval", '(progn (require \'eglot) (princ "eglot-ok"))'],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    if "eglot-ok" not in probe.stdout:
        return None, "Emacs has no Eglot: apt-get install elpa-eglot (CI installs it in .ci/run)"
    return emacs, ""


@pytest.fixture(scope="module")
def emacs() -> str:
    binary, reason = _emacs_with_eglot()
    if binary is None:
        if REQUIRED:
            pytest.fail(reason)
        pytest.skip(reason)
    return binary


def batch(
    emacs: str, *args: str, env: dict[str, str] | None = None, timeout: float = 240
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [emacs, "--batch", "-l", str(EMACS_DIR / "rag-lsp.el"), *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,
    )


def evals_of(workspace: Path) -> Path:
    return workspace / ".punica" / "evals"


def check_findings(workspace: Path) -> dict[str, list[tuple[str, int]]]:
    completed = subprocess.run(
        [sys.executable, "-m", "rag_lsp", "check", str(workspace), "--format", "json", "--fail-on", "never"],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    found: dict[str, list[tuple[str, int]]] = {}
    for finding in json.loads(completed.stdout):
        found.setdefault(finding["path"], []).append((finding["code"], finding["range"]["start"]["line"]))
    return {path: sorted(items) for path, items in found.items()}


def test_eglot_shows_the_servers_diagnostics_in_flymake(emacs: str, tmp_path: Path) -> None:
    workspace = examples_with_broken_files(tmp_path / "ws")
    # A workspace that tries to trust itself through Eglot's directory-local setting.
    (workspace / ".dir-locals.el").write_text(
        "((nil . ((eglot-workspace-configuration . (:ragLsp (:trusted t))))))\n", encoding="utf-8"
    )
    out = tmp_path / "emacs.json"
    completed = batch(
        emacs,
        "-l",
        str(EMACS_DIR / "test" / "e2e.el"),
        env={
            "RAG_LSP_E2E_WORKSPACE": str(workspace),
            "RAG_LSP_E2E_CMD": json.dumps([sys.executable, "-m", "rag_lsp", "serve"]),
            "RAG_LSP_E2E_OUT": str(out),
            "HOME": str(tmp_path / "home"),
        },
    )
    assert out.exists(), f"no dump; exit {completed.returncode}\n{completed.stdout}\n{completed.stderr}"
    dump = json.loads(out.read_text(encoding="utf-8"))
    assert "error" not in dump, dump["error"] + "\n" + completed.stderr
    assert completed.returncode == 0, completed.stderr

    assert dump["suite"]["mode"] == "rag-lsp-suite-mode"
    assert dump["suite"]["managed"] is True
    assert dump["dataset"]["mode"] == "rag-lsp-dataset-mode"
    assert dump["dataset"]["managed"] is True
    assert dump["servers"] == 1  # one server for the workspace's suites and datasets
    assert Path(dump["root"]).resolve() == workspace.resolve()

    suite = [(d["code"], d["line"]) for d in dump["suite"]["diagnostics"]]
    dataset = [(d["code"], d["line"]) for d in dump["dataset"]["diagnostics"]]
    assert {"RAG101", "RAG103"} <= {code for code, _ in suite}
    assert {"RAG200", "RAG202"} <= {code for code, _ in dataset}
    # What `rag-lsp check` finds, less RAG203: rag-lsp-settings turned it off.
    expected = check_findings(workspace)
    assert ("RAG203", 5) in expected[".punica/evals/broken.jsonl"]
    assert sorted(suite) == expected[".punica/evals/broken.suite.yaml"]
    assert sorted(dataset) == [finding for finding in expected[".punica/evals/broken.jsonl"] if finding[0] != "RAG203"]
    assert all(d["text"].startswith("rag-lsp [RAG") for d in dump["dataset"]["diagnostics"])

    # Settings from rag-lsp-settings; the trust from the user, never from the workspace.
    assert dump["initialization_options"] == {"severity": {"RAG203": "off"}, "runTimeout": 30, "trusted": False}
    assert dump["configuration"] == [dump["initialization_options"]]
    assert dump["trusted_options"]["trusted"] is True  # after rag-lsp-trust-workspace
    assert dump["messages"] == []  # the server accepted every setting
    if "run_case" in dump:  # until the server offers lenses, the command says why it does nothing
        assert "offers no code lenses" in dump["run_case"]


def test_run_commands_execute_the_lens_at_point(emacs: str, tmp_path: Path) -> None:
    """rag-lsp-run-case / rag-lsp-run-suite against editors/test/lens_server.py, a
    stand-in with the run half of the protocol (until the real server has it)."""
    workspace = examples_with_broken_files(tmp_path / "ws")
    out, log = tmp_path / "lens.json", tmp_path / "stub.log"
    completed = batch(
        emacs,
        "-l",
        str(EMACS_DIR / "test" / "lens.el"),
        env={
            "RAG_LSP_E2E_WORKSPACE": str(workspace),
            "RAG_LSP_E2E_CMD": json.dumps([sys.executable, str(REPO / "editors" / "test" / "lens_server.py")]),
            "RAG_LSP_E2E_OUT": str(out),
            "RAG_LSP_STUB_LOG": str(log),
            "HOME": str(tmp_path / "home"),
        },
    )
    assert out.exists(), f"no dump; exit {completed.returncode}\n{completed.stdout}\n{completed.stderr}"
    dump = json.loads(out.read_text(encoding="utf-8"))
    assert "error" not in dump, dump["error"] + "\n" + completed.stderr
    # The run results arrive as diagnostics on the case line and the suite's line.
    assert dump["case_diagnostics"] == {"RAG400": [1]}
    suite_line = dump["suite_line"]
    assert suite_line == next(
        number
        for number, line in enumerate((evals_of(workspace) / "gateway.suite.yaml").read_text().splitlines())
        if re.match(r"\s*-\s+id\s*:", line)
    )
    assert dump["suite_diagnostics"] == {"RAG404": [suite_line]}
    assert dump["run_case_without_lens"] == "rag-lsp: no Run case lens on this line"
    # In the dataset, rag-lsp-run-suite runs the suites that read it (the stand-in marks its line 0).
    assert dump["dataset_suite_diagnostics"] == {"RAG404": [0]}
    logged = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    ran = [entry for entry in logged if "command" in entry]
    evals = workspace / ".punica" / "evals"
    assert ran == [
        {"command": "ragLsp.runCase", "arguments": {"uri": (evals / "gateway.jsonl").as_uri(), "line": 1}},
        {
            "command": "ragLsp.runSuite",
            "arguments": {"uri": (evals / "gateway.suite.yaml").as_uri(), "line": suite_line},
        },
        {"command": "ragLsp.runSuite", "arguments": {"uri": (evals / "gateway.jsonl").as_uri()}},
    ]


def test_a_missing_server_names_the_install_command(emacs: str, tmp_path: Path) -> None:
    completed = batch(
        emacs,
        "--eval",
        "(progn (setq exec-path nil) (princ (rag-lsp-check-command)) (terpri)"
        ' (setq rag-lsp-python "/nonexistent/python3") (princ (rag-lsp-check-command)))',
        env={"PATH": ""},
    )
    lines = completed.stdout.splitlines()
    assert "`rag-lsp' was not found" in lines[0], completed.stdout
    assert "pip install rag-lsp" in lines[0], completed.stdout
    assert "`/nonexistent/python3' was not found" in lines[1]
    assert "pip install rag-lsp" in lines[1]


def test_a_python_without_rag_lsp_names_its_pip(emacs: str, tmp_path: Path) -> None:
    python = tmp_path / "python"
    python.write_text("#!/bin/sh\nexit 1\n", encoding="utf-8")
    python.chmod(0o755)
    completed = batch(
        emacs,
        "--eval",
        f"(progn (setq rag-lsp-python {json.dumps(str(python))}) (princ (rag-lsp-check-command)))",
    )
    assert f"`{python}' cannot import rag_lsp" in completed.stdout, completed.stdout + completed.stderr
    assert f"{python} -m pip install rag-lsp" in completed.stdout


def test_rag_lsp_el_byte_compiles_without_warnings(emacs: str, tmp_path: Path) -> None:
    copy = tmp_path / "rag-lsp.el"
    shutil.copy(EMACS_DIR / "rag-lsp.el", copy)
    completed = subprocess.run(
        [emacs, "--batch", "--eval", "(setq byte-compile-error-on-warn t)", "-f", "batch-byte-compile", str(copy)],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    assert (tmp_path / "rag-lsp.elc").exists()
