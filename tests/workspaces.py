"""Small workspaces written into a test's temporary folder."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).parent.parent
EXAMPLES = REPO / "examples"
# The demonstrations of what gets caught: a broken suite and a keyword fallback.
CAUGHT = REPO / "examples-caught"

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


# Three short documents of a gateway, for searches by meaning: a question about
# one customer starving the others shares no word with RATE_LIMITS.
RATE_LIMITS = """# Rate limits

Each tenant gets its own token bucket. The bucket holds up to a burst of
requests and refills continuously; every request drains one unit. Short spikes
are absorbed, while the sustained rate cannot exceed the refill rate.

An empty bucket means the tenant is throttled: the gateway answers 429 Too Many
Requests with a Retry-After header.
"""
DEPLOY = """# Deploy

Rolling deploy with a readiness probe. A failed rollout is rolled back, and on
shutdown the pods drain their open connections gracefully.
"""
AUDIT = """# Audit log

Every decision is appended to the audit log; each record carries the hash of the
one before it, so tampering with history breaks the chain.
"""


def write_files(root: Path, files: dict[str, str]) -> None:
    """Write each text of ``files`` (by path relative to ``root``), making its folders."""
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")


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


def examples_with_broken_files(root: Path) -> Path:
    """A copy of examples/ that also holds the broken suite and dataset of
    examples-caught/: suites to run and findings to show, in one workspace."""
    shutil.copytree(EXAMPLES, root)
    for name in ("broken.suite.yaml", "broken.jsonl"):
        shutil.copy(CAUGHT / ".punica" / "evals" / name, root / ".punica" / "evals" / name)
    return root
