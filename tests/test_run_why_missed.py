"""Why a case missed, in `rag-lsp run`'s reports: through the real command line,
on recorded answers whose ranks are fixed."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from workspaces import make_workspace, rag_lsp

# Slow (runs the command line in processes of its own): `pytest -m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

SUITE = """\
suites:
  - id: searched              # a target that searches this workspace: RAG203 applies
    target: {kind: capability, id: rec}
    dataset: .punica/evals/code.jsonl
    engines: [rag]
    options: {rag: {match: path, k: 3}}
    thresholds:
      rag.recall: 0.1
  - id: elsewhere             # the same answers, from a corpus rag-lsp cannot see
    target: {kind: capability, id: service}
    dataset: .punica/evals/code.jsonl
    engines: [rag]
    options: {rag: {match: path, k: 3}}
    thresholds:
      rag.recall: 0.1
"""
TARGETS = """\
targets:
  rec:
    recorded: .punica/runs/rec.jsonl
    workspace_paths: true
  service:
    recorded: .punica/runs/rec.jsonl
"""
EXPECTED = ["src/app.py", "docs/b.md", "docs/c.md", "docs/gone.md"]
# src/app.py at 1 and again at 5; docs/b.md at 4 and 6, past k = 3; docs/c.md is a
# workspace file that does not come back; docs/gone.md is no workspace file.
HITS = ["src/app.py", "x.md", "y.md", "docs/b.md", "src/app.py", "docs/b.md"]

SEARCHED_MISSED = (
    "docs/b.md (rank 4, k = 3), docs/c.md (not among the 6 hits the target returned), "
    "docs/gone.md (not a file in the workspace, RAG203)"
)
ELSEWHERE_MISSED = (
    "docs/b.md (rank 4, k = 3), docs/c.md (not among the 6 hits the target returned), "
    "docs/gone.md (not among the 6 hits the target returned)"
)


def write_answers(root: Path, hits: list[str]) -> None:
    line = json.dumps({"id": "why", "hits": [{"path": path} for path in hits], "mode": "semantic"})
    (root / ".punica" / "runs" / "rec.jsonl").write_text(line + "\n", encoding="utf-8")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    case = {"id": "why", "input": {"query": "why"}, "expect": {"relevant": EXPECTED}}
    make_workspace(tmp_path, suite=SUITE, dataset=json.dumps(case) + "\n")
    (tmp_path / ".punica" / "targets.yaml").write_text(TARGETS, encoding="utf-8")
    (tmp_path / ".punica" / "runs").mkdir()
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "b.md").write_text("# b\n", encoding="utf-8")
    (tmp_path / "docs" / "c.md").write_text("# c\n", encoding="utf-8")
    write_answers(tmp_path, HITS)
    return tmp_path


def cases_of(document: dict) -> dict[str, dict]:
    return {suite["id"]: suite["cases"][0] for suite in document["suites"]}


def missed_column(report: str) -> str:
    """The text of a case table's last column (``missed``), its wrapped lines joined."""
    rows = [line.split("│")[-2].strip() for line in report.splitlines() if line.startswith("│")]
    return " ".join(row for row in rows if row)


def test_the_text_report_says_why_each_value_was_missed(workspace: Path) -> None:
    """The text table's missed column gives the rank past k, "not among the hits", or "not a file in the workspace" where RAG203 applies."""
    result = rag_lsp("run", cwd=workspace)
    assert result.returncode == 0, result.stdout + result.stderr
    searched, elsewhere = result.stdout.split("elsewhere  ")
    assert missed_column(searched) == SEARCHED_MISSED
    assert missed_column(elsewhere) == ELSEWHERE_MISSED


def test_the_junit_report_says_why_each_value_was_missed(workspace: Path) -> None:
    """Each JUnit test case's output names each missed value with why it was missed."""
    result = rag_lsp("run", "--format", "junit", cwd=workspace)
    root = ET.fromstring(result.stdout.encode("utf-8"))
    outputs = {
        suite.get("name"): suite.find("testcase[@name='why']/system-out").text for suite in root.findall("testsuite")
    }
    assert outputs["searched"].endswith(" — missed: " + SEARCHED_MISSED)
    assert outputs["elsewhere"].endswith(" — missed: " + ELSEWHERE_MISSED)


def test_the_json_report_says_why_and_keeps_every_rank_of_the_answer(workspace: Path) -> None:
    """`why_missed` gives each missed value's reason and rank; `answer` keeps every rank of each expected value, past k too; the SPEC keys stay as they were."""
    result = rag_lsp("run", "--format", "json", cwd=workspace)
    cases = cases_of(json.loads(result.stdout))
    searched, elsewhere = cases["searched"], cases["elsewhere"]
    assert searched["missed"] == ["docs/b.md", "docs/c.md", "docs/gone.md"]
    assert searched["first_relevant_rank"] == 1
    assert searched["ranks"] == {"src/app.py": 1}
    assert searched["why_missed"] == [
        {"value": "docs/b.md", "reason": "below-k", "rank": 4, "message": "rank 4, k = 3"},
        {"value": "docs/c.md", "reason": "not-returned", "rank": None, "message": "not among the 6 hits the target returned"},
        {"value": "docs/gone.md", "reason": "not-in-workspace", "rank": None, "message": "not a file in the workspace, RAG203"},
    ]
    assert elsewhere["why_missed"][2] == {
        "value": "docs/gone.md", "reason": "not-returned", "rank": None, "message": "not among the 6 hits the target returned",
    }
    assert searched["answer"] == elsewhere["answer"] == {
        "hits": 6,
        "ranks": {"src/app.py": [1, 5], "docs/b.md": [4, 6], "docs/c.md": [], "docs/gone.md": []},
        "first_with_field": 1,
    }


def test_a_target_that_returned_nothing_says_so(workspace: Path) -> None:
    """An empty answer says the target returned no hits, and the JSON answer holds no rank."""
    write_answers(workspace, [])
    result = rag_lsp("run", "--suite", "elsewhere", "--format", "json", cwd=workspace)
    case = cases_of(json.loads(result.stdout))["elsewhere"]
    assert [miss["message"] for miss in case["why_missed"]] == ["the target returned no hits"] * 4
    assert case["answer"] == {"hits": 0, "ranks": dict.fromkeys(EXPECTED, []), "first_with_field": None}


def test_a_baseline_run_at_one_k_compares_at_every_swept_k(workspace: Path) -> None:
    """With --k, a baseline run without --k is read at each swept k from its ranks, giving the means a swept baseline gives."""
    plain = rag_lsp("run", "--format", "json", cwd=workspace)
    swept = rag_lsp("run", "--format", "json", "--k", "1,5,10", cwd=workspace)
    (workspace / "plain.json").write_text(plain.stdout, encoding="utf-8")
    write_answers(workspace, ["x.md", "docs/b.md", "src/app.py"])
    result = rag_lsp(
        "run", "--suite", "searched", "--k", "1,5,10", "--baseline", "plain.json", "--compare-json", "c.json", cwd=workspace
    )
    assert "Traceback" not in result.stderr, result.stderr
    (searched, _) = json.loads((workspace / "c.json").read_text())["suites"]
    assert list(searched["at_k"]) == ["1", "5", "10"]
    means = json.loads(swept.stdout)["suites"][0]["at_k"]
    for k, deltas in searched["at_k"].items():
        assert {delta["metric"]: delta["baseline"] for delta in deltas} == means[k], k
    at_five = {delta["metric"]: delta for delta in searched["at_k"]["5"]}
    assert at_five["rag.recall"]["baseline"] == 0.5
    assert at_five["rag.recall"]["current"] == 0.5
    # Each mean at each k says how sure its move is, over the cases scored at that k on both sides,
    # the baseline's read again from its ranks; a counter says nothing.
    for k, deltas in searched["at_k"].items():
        by_metric = {delta["metric"]: delta for delta in deltas}
        paired = by_metric["rag.recall"]["paired"]
        assert paired["cases"] >= 1 and paired["exact"] is True, k
        assert paired["difference"] == pytest.approx(by_metric["rag.recall"]["current"] - by_metric["rag.recall"]["baseline"]), k
        assert by_metric["rag.retrieved"].get("paired") is None, k


def test_a_lost_or_gained_hit_says_why_it_was_missed(workspace: Path) -> None:
    """Against a baseline, a hit lost says where it went (past k, or not returned), and one gained where it had been."""
    write_answers(workspace, ["docs/b.md", "src/app.py", "x.md", "docs/c.md"])
    baseline = rag_lsp("run", "--suite", "searched", "--format", "json", cwd=workspace)
    (workspace / "base.json").write_text(baseline.stdout, encoding="utf-8")
    write_answers(workspace, ["x.md", "docs/c.md", "src/app.py", "docs/b.md"])
    result = rag_lsp("run", "--suite", "searched", "--baseline", "base.json", "--compare-json", "c.json", cwd=workspace)
    comparison = result.stdout.split("vs baseline base.json", 1)[1]
    assert "lost docs/b.md (was rank 1, now rank 4, k = 3)" in comparison
    assert "gained docs/c.md (rank 2, was rank 4, k = 3)" in comparison
    (searched,) = json.loads((workspace / "c.json").read_text())["suites"]
    changes = searched["worse"] + searched["better"]
    hits = [hit for change in changes for kind in ("lost", "gained") for hit in change[kind]]
    assert {hit["value"]: hit["why"] for hit in hits} == {"docs/b.md": "rank 4, k = 3", "docs/c.md": "rank 4, k = 3"}


def test_a_file_the_builtin_target_never_searches_is_missed_for_that(tmp_path: Path) -> None:
    """Through a builtin target whose corpus is src/**, an expected docs/ file and a hidden file are missed as never searched, each saying why."""
    make_workspace(
        tmp_path,
        dataset='{"id": "app", "input": {"query": "app"}, "expect": {"relevant": ["src/app.py", "docs/guide.md", ".github/ci.yml"]}}\n',
    )
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text("# Guide\n\nHow the app starts.\n", encoding="utf-8")
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github" / "ci.yml").write_text("name: ci\n", encoding="utf-8")
    (tmp_path / ".punica" / "targets.yaml").write_text(
        'targets:\n  vectors.query:\n    builtin: {corpora: {code: ["src/**"]}, retrieval: keyword}\n', encoding="utf-8"
    )
    result = rag_lsp("run", "--format", "json", cwd=tmp_path)
    (case,) = json.loads(result.stdout)["suites"][0]["cases"]
    assert [(miss["value"], miss["reason"], miss["message"]) for miss in case["why_missed"]] == [
        ("docs/guide.md", "never-searched", "never searched by the builtin target: in none of its corpora, RAG203"),
        (".github/ci.yml", "never-searched", "never searched by the builtin target: a hidden file, RAG203"),
    ]


def test_a_file_named_like_text_that_holds_none_is_missed_as_never_searched(tmp_path: Path) -> None:
    """Files whose names say text but whose bytes do not (a NUL byte, Latin-1, past max-file-bytes) are never
    searched by the builtin target: a run says which, rather than calling them not returned."""
    dataset = '{"id": "app", "input": {"query": "app"}, "expect": {"relevant": ["src/app.py", "src/nul.ts", "src/latin1.ts", "src/big.ts"]}}\n'
    make_workspace(tmp_path, dataset=dataset)
    (tmp_path / "src" / "nul.ts").write_bytes(b"app\x00app\n")
    (tmp_path / "src" / "latin1.ts").write_bytes(b"caf\xe9 app\n")
    (tmp_path / "src" / "big.ts").write_text("app\n" * 600, encoding="utf-8")
    (tmp_path / ".punica" / "rag-lsp.toml").write_text("max-file-bytes = 2000\n", encoding="utf-8")
    result = rag_lsp("run", "--format", "json", cwd=tmp_path)
    (case,) = json.loads(result.stdout)["suites"][0]["cases"]
    assert [(miss["value"], miss["reason"], miss["message"]) for miss in case["why_missed"]] == [
        ("src/nul.ts", "never-searched", "never searched by the builtin target: a binary file"),
        ("src/latin1.ts", "never-searched", "never searched by the builtin target: not UTF-8 text"),
        ("src/big.ts", "never-searched", "never searched by the builtin target: larger than max-file-bytes"),
    ]
