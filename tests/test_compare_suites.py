"""Two suites over one dataset compared case by case: `rag-lsp compare A B`, and the
suites of one `rag-lsp run` that read the same dataset."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from workspaces import EXAMPLES, make_workspace, rag_lsp, write_files

# Slow: each test runs the command line as a process.
pytestmark = pytest.mark.slow

TWO_CHOICES = """\
suites:
  - id: wide
    target: {kind: capability, id: wide}
    dataset: .punica/evals/code.jsonl
    engines: [rag]
    options: {rag: {match: path, k: 3}}
  - id: narrow
    target: {kind: capability, id: narrow}
    dataset: .punica/evals/code.jsonl
    engines: [rag]
    options: {rag: {match: path, k: 3}}
  - id: elsewhere
    target: {kind: capability, id: narrow}
    dataset: .punica/evals/other.jsonl
    engines: [rag]
    options: {rag: {match: path, k: 3}}
"""
TARGETS = "targets:\n  wide:\n    recorded: .punica/runs/wide.jsonl\n  narrow:\n    recorded: .punica/runs/narrow.jsonl\n"
EXPECTED = {
    "first": ["src/a.py"],
    "second": ["src/b.py"],
    "third": ["src/a.py", "src/b.py"],
    "fourth": ["src/c.py"],
    "fifth": ["src/a.py"],
}
# wide finds a.py first where narrow has it fourth (beyond k 3); narrow ranks b.py
# first where wide has it third; third's two files swap ranks, its figures alike;
# both miss c.py; fifth is the same on both sides.
WIDE = {
    "first": ["src/a.py"],
    "second": ["x", "y", "src/b.py"],
    "third": ["src/a.py", "src/b.py"],
    "fourth": ["x"],
    "fifth": ["src/a.py"],
}
NARROW = {
    "first": ["x", "y", "z", "src/a.py"],
    "second": ["src/b.py"],
    "third": ["src/b.py", "src/a.py"],
    "fourth": ["y"],
    "fifth": ["src/a.py"],
    "q": ["src/a.py"],  # the one case of the other dataset
}


def answers(hits: dict[str, list[str]]) -> str:
    return "".join(
        json.dumps({"id": case_id, "hits": [{"path": path} for path in paths], "mode": "semantic"}) + "\n"
        for case_id, paths in hits.items()
    )


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    dataset = "".join(
        json.dumps({"id": case_id, "input": {"query": case_id}, "expect": {"relevant": relevant}}) + "\n"
        for case_id, relevant in EXPECTED.items()
    )
    make_workspace(tmp_path, suite=TWO_CHOICES, dataset=dataset)
    write_files(
        tmp_path,
        {
            ".punica/targets.yaml": TARGETS,
            ".punica/runs/wide.jsonl": answers(WIDE),
            ".punica/runs/narrow.jsonl": answers(NARROW),
            ".punica/evals/other.jsonl": json.dumps({"id": "q", "input": {"query": "q"}, "expect": {"relevant": ["src/a.py"]}}) + "\n",
            "src/a.py": "a\n",
            "src/b.py": "b\n",
            "src/c.py": "c\n",
        },
    )
    return tmp_path


def test_compare_prints_one_paired_table_with_the_cases_each_side_wins(workspace: Path) -> None:
    """Each mean with B − A and its uncertainty, the cases each suite wins with their ranks, and what both miss."""
    result = rag_lsp("compare", "wide", "narrow", cwd=workspace)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.startswith("narrow vs wide  (same dataset .punica/evals/code.jsonl, 5 cases scored by both)")
    (recall,) = [line.split() for line in out.splitlines() if line.strip().startswith("rag.recall")]
    assert recall == ["rag.recall", "0.80", "0.60", "−0.20"]
    assert "−0.20 recall (95% CI −0.60 to ±0.00, p = 1.00, 0 better, 1 worse): not distinguishable from noise on 5 cases" in out
    assert "narrow wins (1):" in out
    assert "second  precision 0.33 vs 1.00 · MRR 0.33 vs 1.00 · hit@1 0.00 vs 1.00 — src/b.py rank 3 vs 1" in out
    assert "third" not in out  # its files swapped ranks, its figures did not move
    assert "wide wins (1):" in out
    assert "first  recall 1.00 vs 0.00 · precision 1.00 vs 0.00 · MRR 1.00 vs 0.00 · hit@1 1.00 vs 0.00 — src/a.py rank 1 vs missed" in out
    assert "both miss (1):\n    fourth  src/c.py" in out
    assert "fifth" not in out


def test_compare_as_json_lists_every_case(workspace: Path) -> None:
    """--format json gives each metric's paired comparison and every case won, missed by both, or unpaired."""
    result = rag_lsp("compare", "wide", "narrow", "--format", "json", cwd=workspace)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert (report["a"], report["b"], report["dataset"], report["cases"]) == ("wide", "narrow", ".punica/evals/code.jsonl", 5)
    recall = next(item for item in report["metrics"] if item["metric"] == "rag.recall")
    assert recall["difference"] == pytest.approx(-0.2)
    assert recall["paired"]["exact"] is True
    assert (recall["paired"]["better"], recall["paired"]["worse"], recall["paired"]["equal"]) == (0, 1, 4)
    assert recall["verdict"] == "not distinguishable from noise"
    retrieved = next(item for item in report["metrics"] if item["metric"] == "rag.retrieved")
    assert retrieved["paired"] is None  # a counter is not better or worse
    assert [item["id"] for item in report["a_wins"]] == ["first"]
    assert report["a_wins"][0]["ranks"] == [{"value": "src/a.py", "a": 1, "b": None}]
    assert report["a_wins"][0]["winner"] == "wide"
    (second,) = report["b_wins"]
    assert second["id"] == "second"
    assert second["ranks"] == [{"value": "src/b.py", "a": 3, "b": 1}]
    assert report["mixed"] == []
    assert report["both_miss"] == [{"id": "fourth", "values": ["src/c.py"]}]
    assert report["unpaired"] == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("wide", "wide"), "two different suites"),
        (("wide", "nope"), "no suite 'nope'"),
        (("wide", "elsewhere"), "needs two suites over the same dataset"),
        (("wide", "narrow", "missing-folder"), "no such file or folder"),
        (("wide",), "SUITE_B"),
    ],
)
def test_compare_usage_errors_exit_2(workspace: Path, args: tuple, message: str) -> None:
    """The same suite twice, an unknown suite, suites over different datasets, a missing path: exit 2 with a message."""
    result = rag_lsp("compare", *args, cwd=workspace)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_compare_exits_1_when_a_suite_cannot_be_run(workspace: Path) -> None:
    """A suite whose target is not configured is not run: compare says why and exits 1."""
    write_files(workspace, {".punica/targets.yaml": "targets:\n  wide:\n    recorded: .punica/runs/wide.jsonl\n"})
    result = rag_lsp("compare", "wide", "narrow", cwd=workspace)
    assert result.returncode == 1
    assert "suite narrow could not be run" in result.stderr


def test_a_run_compares_the_suites_that_share_a_dataset(workspace: Path) -> None:
    """`rag-lsp run` sets each two suites over one dataset side by side, before its last line (the verdict)."""
    result = rag_lsp("run", cwd=workspace)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "Suites over the same dataset, case by case" in out
    assert "narrow against wide, over the 5 cases both scored (dataset .punica/evals/code.jsonl):" in out
    assert "−0.20 recall (95% CI −0.60 to ±0.00, p = 1.00, 0 better, 1 worse)" in out
    assert "elsewhere against" not in out and "against elsewhere" not in out
    assert "narrow wins" not in out  # the cases are for `rag-lsp compare`
    assert out.rstrip().splitlines()[-1].startswith("3 passed (3 suites, 11 cases")
    json_run = rag_lsp("run", "--format", "json", cwd=workspace)
    assert "Suites over the same dataset" not in json_run.stdout + json_run.stderr


def test_compare_on_the_examples_weighs_two_chunkings(tmp_path: Path) -> None:
    """The chunking comparison of docs/targets.md: 20-line chunks win one case on MRR, by ranks, and nothing is a real change."""
    result = rag_lsp("compare", "gateway-live", "gateway-short-chunks", str(EXAMPLES), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.startswith("gateway-short-chunks vs gateway-live  (same dataset .punica/evals/gateway.jsonl, 12 cases scored by both)")
    assert "gateway-short-chunks wins (1):" in out
    assert "noisy-neighbour  MRR 0.33 vs 0.50 — docs/rate-limits.md rank 4 vs 2" in out
    assert "a real" not in out
