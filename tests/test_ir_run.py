"""The ``ir`` engine through the real command line: checks, runs, sweeps, slices, and a missing ir-measures."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from workspaces import rag_lsp

pytest.importorskip("ir_measures")

TARGETS = """targets:
  recorded:
    recorded: .punica/runs/answers.jsonl
    fields: [id, path]
"""

ANSWERS = [
    {"id": "refund", "hits": [{"id": "x"}, {"id": "terms"}, {"id": "refunds"}], "mode": "semantic"},
    {"id": "login", "hits": [{"id": "sso"}, {"id": "faq"}], "mode": "semantic"},
    {"id": "invoice", "hits": [], "mode": "semantic"},
]

CASES = [
    {"id": "refund", "input": {"query": "how do refunds work"}, "expect": {"relevant": ["refunds", "terms"], "grades": {"refunds": 2}},
     "metadata": {"lang": "en", "tags": ["billing", "policy"]}},
    {"id": "login", "input": {"query": "sign in with sso"}, "expect": {"relevant": ["sso"]},
     "metadata": {"lang": "de", "tags": ["auth"]}},
    {"id": "invoice", "input": {"query": "where is my invoice"}, "expect": {"relevant": ["invoices"]},
     "metadata": {"tags": ["billing"]}},
]

SUITE = """suites:
  - id: graded
    target: {{kind: capability, id: recorded}}
    dataset: .punica/evals/cases.jsonl
    engines: {engines}
    options:
      rag: {{match: id}}
      ir: {{measures: [nDCG@10, AP, P@5]}}
    thresholds:
{thresholds}
"""


def workspace(root: Path, engines: str = "[rag, ir]", thresholds: str = "      rag.mode.semantic: 1\n      ir.nDCG@10: 0.5\n") -> Path:
    """A workspace with one suite over three graded cases, answered by a recording."""
    (root / ".punica" / "evals").mkdir(parents=True)
    (root / ".punica" / "runs").mkdir()
    (root / ".punica" / "targets.yaml").write_text(TARGETS, encoding="utf-8")
    (root / ".punica" / "runs" / "answers.jsonl").write_text("".join(json.dumps(a) + "\n" for a in ANSWERS), encoding="utf-8")
    (root / ".punica" / "evals" / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in CASES), encoding="utf-8")
    suite = SUITE.format(engines=engines, thresholds=thresholds)
    (root / ".punica" / "evals" / "graded.suite.yaml").write_text(suite, encoding="utf-8")
    return root


def run_json(root: Path, *args: str) -> tuple[int, dict]:
    result = rag_lsp("run", "--format", "json", *args, cwd=root)
    assert "Traceback" not in result.stderr, result.stderr
    return result.returncode, json.loads(result.stdout)


def test_each_case_gets_its_measures_beside_the_rag_figures(tmp_path: Path) -> None:
    """With engines [rag, ir], a case's scores hold the rag figures unchanged and ir.<measure> for each listed measure."""
    code, document = run_json(workspace(tmp_path))
    assert code == 0
    suite = document["suites"][0]
    refund = suite["cases"][0]["scores"]
    assert refund["rag.recall"] == 1.0 and refund["rag.mrr"] == 0.5 and refund["rag.precision"] == pytest.approx(2 / 3)
    assert refund["ir.AP"] == pytest.approx(7 / 12)
    assert refund["ir.P@5"] == pytest.approx(0.4)
    # Gains 2 (rank 3) and 1 (rank 2) against the ideal 2, 1.
    assert refund["ir.nDCG@10"] == pytest.approx((1 / np_log2(3) + 2 / np_log2(4)) / (2 + 1 / np_log2(3)))
    assert [name for name in refund if name.startswith("ir.")] == ["ir.nDCG@10", "ir.AP", "ir.P@5"]
    # No hits at all: zero on every measure, as trec_eval -c counts it.
    assert {name: value for name, value in suite["cases"][2]["scores"].items() if name.startswith("ir.")} == {
        "ir.nDCG@10": 0.0, "ir.AP": 0.0, "ir.P@5": 0.0,
    }
    assert suite["aggregates"]["ir.AP"] == pytest.approx((7 / 12 + 1 + 0) / 3)
    assert [t["metric"] for t in suite["thresholds"]] == ["rag.mode.semantic", "ir.nDCG@10"]


def np_log2(value: float) -> float:
    import math

    return math.log2(value)


def test_a_thresholded_measure_is_computed_and_gates_the_suite(tmp_path: Path) -> None:
    """A threshold on a measure the suite does not list (ir.RR@1) is computed, and fails the run when not met."""
    root = workspace(tmp_path, thresholds="      rag.mode.semantic: 1\n      ir.RR@1: 0.9\n")
    code, document = run_json(root)
    assert code == 1
    suite = document["suites"][0]
    assert suite["aggregates"]["ir.RR@1"] == pytest.approx(1 / 3)
    assert [t["passed"] for t in suite["thresholds"]] == [True, False]
    text = rag_lsp("run", cwd=root)
    assert "ir.RR@1 0.33 < 0.9" in text.stdout


def test_the_ir_engine_alone_shows_its_measures(tmp_path: Path) -> None:
    """With engines [ir], the scores hold the ir figures only, and the text table shows them per case."""
    root = workspace(tmp_path, engines="[ir]", thresholds="      ir.AP: 0.5\n")
    code, document = run_json(root)
    assert code == 0
    assert set(document["suites"][0]["cases"][1]["scores"]) == {"ir.nDCG@10", "ir.AP", "ir.P@5"}
    text = rag_lsp("run", cwd=root).stdout
    assert "ir.nDCG@10" in text and "recall" not in text.split("metric")[0]


def test_a_sweep_gives_the_measures_at_each_k(tmp_path: Path) -> None:
    """--k scores the measures on the first k hits, per case and in the means; the thresholds stay at the suite's k."""
    code, document = run_json(workspace(tmp_path), "--k", "1,2")
    assert code == 0
    suite = document["suites"][0]
    assert suite["at_k"]["1"]["ir.P@5"] == pytest.approx(0.2 / 3)  # only login's first hit is relevant
    assert suite["at_k"]["2"]["ir.P@5"] == pytest.approx((0.2 + 0.2) / 3)
    assert suite["cases"][0]["at_k"]["2"]["ir.AP"] == pytest.approx(0.5 / 2)
    assert suite["cases"][0]["at_k"]["2"]["rag.recall"] == 0.5


def test_a_case_without_relevant_values_stays_broken(tmp_path: Path) -> None:
    """Nothing relevant declared: the case is broken for the ir engine as for the rag engine."""
    root = workspace(tmp_path, engines="[ir]", thresholds="      ir.AP: 0\n")
    dataset = root / ".punica" / "evals" / "cases.jsonl"
    dataset.write_text(dataset.read_text().replace('["invoices"]', "[]"), encoding="utf-8")
    code, document = run_json(root)
    assert code == 1
    assert document["suites"][0]["cases"][2]["scores"] is None
    assert "nothing relevant declared" in document["suites"][0]["cases"][2]["broken"]


def test_check_suggests_the_measure_a_misspelled_threshold_meant(tmp_path: Path) -> None:
    """ir.nDGC@10 is unknown with a did-you-mean at its cutoff; ir.P@7 is valid at any cutoff; a bad measure is named."""
    root = workspace(tmp_path, thresholds="      ir.nDGC@10: 0.5\n      ir.P@7: 0.1\n      rag.mode.semantic: 1\n")
    suite = root / ".punica" / "evals" / "graded.suite.yaml"
    suite.write_text(suite.read_text().replace("[nDCG@10, AP, P@5]", "[nDCG@10, MAP]"), encoding="utf-8")
    result = rag_lsp("check", "--format", "json", cwd=root)
    assert result.returncode == 1
    findings = json.loads(result.stdout)
    messages = {(finding["code"], finding["message"]) for finding in findings}
    assert ("RAG101", "unknown metric 'ir.nDGC@10' (did you mean 'ir.nDCG@10'?)") in messages
    assert not any("ir.P@7" in message for _, message in messages)
    assert any(code == "RAG108" and "'MAP' is not a measure the ir engine computes" in message for code, message in messages)


def test_a_run_without_ir_measures_says_how_to_install_it(tmp_path: Path) -> None:
    """Where ir-measures cannot be imported, a suite naming the ir engine is not run, says `pip install 'rag-lsp[ir]'`,
    and the run exits 1 without a traceback; the check still passes."""
    root = workspace(tmp_path)
    # A package of that name that fails to import, found before the installed one.
    blocker = tmp_path / "blocked" / "ir_measures"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError(\"No module named 'ir_measures'\")\n", encoding="utf-8")
    environment = {**os.environ, "PYTHONPATH": str(tmp_path / "blocked")}
    run = subprocess.run(
        [sys.executable, "-m", "rag_lsp", "run"], cwd=root, capture_output=True, text=True, encoding="utf-8",
        timeout=120, env=environment,
    )
    assert run.returncode == 1
    assert "Traceback" not in run.stderr
    assert "engine 'ir' needs the ir-measures package" in run.stdout
    assert "pip install 'rag-lsp[ir]'" in run.stdout
    check = subprocess.run(
        [sys.executable, "-m", "rag_lsp", "check"], cwd=root, capture_output=True, text=True, encoding="utf-8",
        timeout=120, env=environment,
    )
    assert check.returncode == 0, check.stdout


def test_slices_carry_the_ir_means(tmp_path: Path) -> None:
    """--by metadata.tags gives each tag's ir means too."""
    code, document = run_json(workspace(tmp_path), "--by", "metadata.tags")
    assert code == 0
    billing = document["suites"][0]["slices"]["metadata.tags"]["billing"]
    assert billing["cases"] == 2
    assert billing["aggregates"]["ir.AP"] == pytest.approx((7 / 12 + 0) / 2)


def test_a_baseline_compares_the_measures_case_by_case(tmp_path: Path) -> None:
    """Against a baseline, an ir measure that dropped is compared like a rag figure: its delta, and the case that got worse."""
    root = workspace(tmp_path / "ws", thresholds="      rag.mode.semantic: 1\n      ir.AP: 0.1\n")
    baseline = rag_lsp("run", "--format", "json", cwd=root)
    (tmp_path / "base.json").write_text(baseline.stdout, encoding="utf-8")
    answers = root / ".punica" / "runs" / "answers.jsonl"
    # login's relevant hit falls from rank 1 to rank 2.
    answers.write_text(answers.read_text().replace('[{"id": "sso"}, {"id": "faq"}]', '[{"id": "faq"}, {"id": "sso"}]'), encoding="utf-8")
    result = rag_lsp("run", "--baseline", str(tmp_path / "base.json"), "--compare-json", str(tmp_path / "cmp.json"), cwd=root)
    assert "Traceback" not in result.stderr, result.stderr
    means = {entry["metric"]: entry for entry in json.loads((tmp_path / "cmp.json").read_text())["suites"][0]["aggregates"]}
    assert means["ir.AP"]["delta"] == pytest.approx((0.5 - 1.0) / 3)
    assert means["ir.AP"]["paired"]["worse"] == 1 and means["ir.AP"]["paired"]["equal"] == 2
