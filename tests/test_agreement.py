"""``rag-lsp check`` and ``rag-lsp run`` give one verdict: whatever stops a run
(a suite it refuses, a case it breaks) ``check`` reports first, at the same
place (file and line), with the same code.

Each known disagreement is a test through both commands; a property test then
holds the two together on generated workspaces (suites and datasets with
generated slips), run through the command line in this process.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from workspaces import make_workspace, rag_lsp

EVALS = ".punica/evals"
SUITE_FILE = f"{EVALS}/code.suite.yaml"
GDI_FILE = f"{EVALS}/gdi.jsonl"


def check_json(root: Path) -> list[dict]:
    result = rag_lsp("check", "--format", "json", cwd=root)
    assert result.returncode in (0, 1) and "Traceback" not in result.stderr, result.stderr
    return json.loads(result.stdout)


def run_json(root: Path) -> dict[str, dict]:
    result = rag_lsp("run", "--format", "json", cwd=root)
    assert result.returncode in (0, 1) and "Traceback" not in result.stderr, result.stderr
    return {suite["id"]: suite for suite in json.loads(result.stdout)["suites"]}


def at(findings: list[dict], path: str, line: int) -> set[str]:
    """The codes of the error findings on ``line`` (0-based) of ``path``."""
    return {f["code"] for f in findings if f["path"] == path and f["range"]["start"]["line"] == line and f["severity"] == "error"}


def refused_at(suite: dict) -> set[tuple[int, str]]:
    """(0-based line, code) of each finding a refused suite names."""
    return {(int(line) - 1, code) for line, code in re.findall(r"line (\d+): (RAG\d{3})", suite["error"] or "")}


def gdi_row(row_id: str, **columns: object) -> dict:
    row = {"input_id": row_id, "prompt": "how is a token verified", "reference_contexts": ["tokens are verified against the key"],
           "sut_response": "against the key", "retrieved_context": ["tokens are verified against the key", "noise"]}
    row.update(columns)
    return {key: value for key, value in row.items() if value is not None}


def gdi_suite(suite_id: str, config: str, threshold: str = "0.5") -> str:
    return (
        f"  - id: {suite_id}\n    dataset: {GDI_FILE}\n    metrics:\n      rag.hit_at_k: {config}\n"
        f"    thresholds: {{rag.hit_at_k: {threshold}}}\n"
    )


def gdi_workspace(root: Path, suites: list[str], rows: list[str]) -> Path:
    make_workspace(root, suite="suites:\n" + "".join(suites), dataset="")
    (root / GDI_FILE).write_text("".join(row + "\n" for row in rows), encoding="utf-8")
    (root / EVALS / "code.jsonl").unlink()
    return root


def test_a_metric_config_run_refuses_is_a_check_finding_on_its_line(tmp_path: Path) -> None:
    """`k: 5.0`, an unknown `topk: 5` and `t1: .nan` are RAG108 findings of check on their lines, and the reason run refuses each suite."""
    suites = [
        gdi_suite("float-k", "{k: 5.0}"),
        gdi_suite("typo", "{topk: 5}"),
        gdi_suite("nan", "{t1: .nan}"),
        gdi_suite("fine", "{k: 5}"),
    ]
    gdi_workspace(tmp_path, suites, [json.dumps(gdi_row("q1"))])
    findings = check_json(tmp_path)
    ran = run_json(tmp_path)
    for number, suite_id in enumerate(("float-k", "typo", "nan")):
        line = 4 + 5 * number
        assert at(findings, SUITE_FILE, line) == {"RAG108"}, suite_id
        assert refused_at(ran[suite_id]) == {(line, "RAG108")}, ran[suite_id]
    float_k, typo, nan = (next(f for f in findings if f["range"]["start"]["line"] == 4 + 5 * n) for n in range(3))
    assert "expected an integer, got 5.0: write 5" in float_k["message"]
    assert "unknown key 'topk' (did you mean 'k'?)" in typo["message"]
    assert ".nan is not a number" in nan["message"]
    assert ran["fine"]["error"] is None and ran["fine"]["passed"]
