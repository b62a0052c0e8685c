"""Small workspaces written into a test's temporary folder."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

GOOD_SUITE = """\
suites:
  - id: code
    target: {kind: capability, id: vectors.query}
    dataset: .punica/evals/code.jsonl
    engines: [rag]
    thresholds:
      rag.recall: 0.8
      rag.mode.semantic: 1
"""
GOOD_CASE = '{"id": "app", "input": {"query": "app"}, "expect": {"relevant": ["src/app.py"]}}'


def make_workspace(root: Path, suite: str = GOOD_SUITE, dataset: str = GOOD_CASE + "\n") -> Path:
    """A workspace with one suite over one dataset, and the file its case expects."""
    (root / ".punica" / "evals").mkdir(parents=True)
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("print('app')\n", encoding="utf-8")
    (root / ".punica" / "evals" / "code.suite.yaml").write_text(suite, encoding="utf-8")
    (root / ".punica" / "evals" / "code.jsonl").write_text(dataset, encoding="utf-8")
    return root


def rag_lsp(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run the ``rag-lsp`` command line. Tests run it from outside the checkout,
    so the installed package is what runs."""
    return subprocess.run(
        [sys.executable, "-m", "rag_lsp", *args], cwd=cwd, capture_output=True, text=True, encoding="utf-8", timeout=120
    )
