"""``rag-lsp run`` through the real command line, on examples/ and small workspaces."""

from __future__ import annotations

import json
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from workspaces import make_workspace, rag_lsp

REPO = Path(__file__).parent.parent
EXAMPLES = REPO / "examples"

SUITE_KEYS = {"id", "passed", "broken", "aggregates", "thresholds", "cases"}
THRESHOLD_KEYS = {"metric", "threshold", "value", "passed"}
CASE_KEYS = {"id", "scores", "broken", "missed", "first_relevant_rank", "mode"}
# Keys written beside SPEC §6's (README): why a suite was not run, the scoring
# metadata of its metrics' configs, the ranks of the relevant hits a case found
# (what --baseline compares), why each missed value was missed, and every rank of
# each expected value in the target's whole answer.
EXTRA_SUITE_KEYS = {"error", "metrics"}
EXTRA_CASE_KEYS = {"ranks", "why_missed", "answer"}




def run_json(*args: str, cwd: Path) -> tuple[int, dict]:
    result = rag_lsp("run", *args, "--format", "json", cwd=cwd)
    assert "Traceback" not in result.stderr, result.stderr
    return result.returncode, json.loads(result.stdout)


def test_examples_text_output_tells_the_story(tmp_path: Path) -> None:
    """On examples/, gateway-recorded passes, gateway-live fails on rag.mode.semantic, broken-demo is not run; exit 1."""
    result = rag_lsp("run", str(EXAMPLES), cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    out = result.stdout
    assert "gateway-recorded  ✓ passed" in out
    assert "gateway-live  ✗ failed: rag.mode.semantic 0.00 < 1" in out
    assert "broken-demo  ✗ broken" in out and "not run:" in out and "RAG101" in out
    for column in ("case", "recall", "precision", "MRR", "hit@1", "missed"):
        assert column in out
    assert "ran on keyword search" in out
    assert "\x1b[" not in out  # no colour codes when not a terminal
    assert out.rstrip().splitlines()[-1].startswith("1 passed, 1 failed, 1 broken (3 suites, 24 cases")


def test_examples_json_follows_the_spec(tmp_path: Path) -> None:
    """--format json prints SPEC §6's keys for suites, thresholds and cases, and only the documented extras."""
    code, document = run_json(str(EXAMPLES), cwd=tmp_path)
    assert code == 1
    assert set(document) == {"suites"}
    suites = {suite["id"]: suite for suite in document["suites"]}
    assert set(suites) == {"broken-demo", "gateway-recorded", "gateway-live"}
    for suite in suites.values():
        assert set(suite) == SUITE_KEYS | EXTRA_SUITE_KEYS
        for threshold in suite["thresholds"]:
            assert set(threshold) == THRESHOLD_KEYS
        for case in suite["cases"]:
            assert set(case) == CASE_KEYS | EXTRA_CASE_KEYS
    recorded, live, broken = suites["gateway-recorded"], suites["gateway-live"], suites["broken-demo"]
    assert recorded["passed"] and not recorded["broken"]
    assert recorded["aggregates"]["rag.recall"] >= 0.8 and recorded["aggregates"]["rag.mode.semantic"] == 1.0
    assert not live["passed"] and not live["broken"]
    failed = [t["metric"] for t in live["thresholds"] if not t["passed"]]
    assert failed == ["rag.mode.semantic"]
    assert live["aggregates"]["rag.recall"] >= 0.8
    assert all(case["mode"] == "keyword" for case in live["cases"])
    assert broken["broken"] and not broken["passed"] and broken["cases"] == []
    case = recorded["cases"][0]
    assert case["id"] == "gateway-approval" and case["broken"] is None and case["first_relevant_rank"] == 1
    assert set(case["scores"]) == {"rag.recall", "rag.precision", "rag.mrr", "rag.hit@1", "rag.retrieved", "rag.mode.semantic"}


def test_examples_junit_is_xml_with_failures(tmp_path: Path) -> None:
    """--format junit parses as XML: a test case per case, a failure for the failed threshold and the refused suite."""
    result = rag_lsp("run", str(EXAMPLES), "--format", "junit", cwd=tmp_path)
    assert result.returncode == 1
    root = ET.fromstring(result.stdout.encode("utf-8"))
    assert root.tag == "testsuites"
    suites = {suite.get("name"): suite for suite in root.findall("testsuite")}
    live = suites["gateway-live"]
    cases = live.findall("testcase")
    assert len([c for c in cases if not c.get("name").startswith("threshold ")]) == 12
    failures = [c for c in cases if c.find("failure") is not None]
    assert [c.get("name") for c in failures] == ["threshold rag.mode.semantic ≥ 1"]
    assert live.get("failures") == "1" and live.get("tests") == str(len(cases))
    assert suites["gateway-recorded"].get("failures") == "0"
    assert suites["broken-demo"].find("testcase/failure") is not None


def test_exit_codes_and_selection(tmp_path: Path) -> None:
    """--suite picks suites (0 when they pass, 1 when not); an unknown suite or case is a usage error (2)."""
    assert rag_lsp("run", str(EXAMPLES), "--suite", "gateway-recorded", cwd=tmp_path).returncode == 0
    assert rag_lsp("run", str(EXAMPLES), "--suite", "gateway-live", cwd=tmp_path).returncode == 1
    unknown = rag_lsp("run", str(EXAMPLES), "--suite", "nope", cwd=tmp_path)
    assert unknown.returncode == 2 and "no suite 'nope'" in unknown.stderr and "gateway-live" in unknown.stderr
    missing_case = rag_lsp("run", str(EXAMPLES), "--case", "nope", cwd=tmp_path)
    assert missing_case.returncode == 2 and "no case 'nope'" in missing_case.stderr
    assert rag_lsp("run", str(tmp_path / "missing"), cwd=tmp_path).returncode == 2


def test_one_case_in_each_suite(tmp_path: Path) -> None:
    """--case runs just that case in every selected suite that has it."""
    code, document = run_json(str(EXAMPLES), "--case", "noisy-neighbour", cwd=tmp_path)
    suites = {suite["id"]: suite for suite in document["suites"]}
    assert [case["id"] for case in suites["gateway-live"]["cases"]] == ["noisy-neighbour"]
    assert [case["id"] for case in suites["gateway-recorded"]["cases"]] == ["noisy-neighbour"]
    assert suites["gateway-live"]["cases"][0]["missed"] == ["src/ratelimit.ts"]


def test_a_dataset_path_runs_the_suites_that_use_it(tmp_path: Path) -> None:
    """A dataset given as PATH runs the suites that read it; a file that is neither is a usage error."""
    code, document = run_json(str(EXAMPLES / ".punica" / "evals" / "gateway.jsonl"), cwd=tmp_path)
    assert sorted(suite["id"] for suite in document["suites"]) == ["gateway-live", "gateway-recorded"]
    assert rag_lsp("run", str(EXAMPLES / "docs" / "deploy.md"), cwd=tmp_path).returncode == 2


def test_broken_case_fails_the_run(tmp_path: Path) -> None:
    """A case declaring nothing relevant is broken, not zero: exit 1 and the reason in the JSON."""
    make_workspace(tmp_path, dataset='{"id": "a", "input": {"query": "app"}, "expect": {"relevant": []}}\n')
    code, document = run_json(cwd=tmp_path)
    (suite,) = document["suites"]
    (case,) = suite["cases"]
    assert code == 1 and suite["broken"] and case["scores"] is None and "nothing relevant" in case["broken"]


def test_builtin_default_target_runs_a_fresh_workspace(tmp_path: Path) -> None:
    """Without a targets config, vectors.query is the builtin over the workspace: the case finds src/app.py."""
    make_workspace(tmp_path)
    code, document = run_json(cwd=tmp_path)
    (suite,) = document["suites"]
    (case,) = suite["cases"]
    assert case["scores"]["rag.recall"] == 1.0 and case["mode"] == "keyword"
    assert code == 1 and [t["metric"] for t in suite["thresholds"] if not t["passed"]] == ["rag.mode.semantic"]


HIT_AT_K_SUITE = """\
suites:
  - id: answers
    dataset: .punica/evals/code.jsonl
    metrics:
      rag.hit_at_k: {k: 2, metric_name: evidence_found, weight: 2.5, inverted: true}
    thresholds: {rag.hit_at_k: 0.5}
"""
GDI_ROW = json.dumps(
    {
        "input_id": "q1",
        "prompt": "How are approvals decided?",
        "reference_contexts": ["A request is approved when two reviewers sign it."],
        "sut_response": "Two reviewers sign it.",
        "retrieved_context": ["A request is approved when two reviewers sign it."],
    }
)


def test_json_carries_the_scoring_metadata_of_a_metric_config(tmp_path: Path) -> None:
    """--format json carries metric_name, weight, inverted, min and max of a suite's rag.hit_at_k config into its result, defaults filled in."""
    make_workspace(tmp_path, suite=HIT_AT_K_SUITE, dataset=GDI_ROW + "\n")
    code, document = run_json(cwd=tmp_path)
    (suite,) = document["suites"]
    assert code == 0 and suite["aggregates"] == {"rag.hit_at_k": 1.0}
    assert suite["metrics"] == {
        "rag.hit_at_k": {"metric_name": "evidence_found", "weight": 2.5, "inverted": True, "min": 0.0, "max": 1.0}
    }


def test_a_hit_at_k_figure_is_never_written_as_its_threshold(tmp_path: Path) -> None:
    """A token-set ratio of 0.697 below the 0.7 it needs is written 0.697 in the explanation, never 0.70."""
    row = {
        **json.loads(GDI_ROW),
        "reference_contexts": ["the gateway approves a request once two distinct approvers have signed it"],
        # token-set ratio 0.6974 with the reference: a miss at t1 0.7.
        "retrieved_context": ["approvers a two tokens gateway signed have policy forwards upstream then checks"],
    }
    make_workspace(tmp_path, suite=HIT_AT_K_SUITE, dataset=json.dumps(row) + "\n")
    result = rag_lsp("run", "--format", "junit", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    (case,) = [case for case in ET.fromstring(result.stdout).iter("testcase") if case.get("name") == "q1"]
    explanation = case.findtext("system-out")
    assert "has token-set ratio 0.697," in explanation, explanation
    assert "a hit needs token-set ratio ≥ 0.70," in explanation and "ratio 0.70," not in explanation, explanation


def test_text_report_writes_counts_one_way_and_agrees_in_number(tmp_path: Path) -> None:
    """The text report writes every count with thousands separators and says that one broken case "fails" the suite."""
    broken = json.dumps({**json.loads(GDI_ROW), "input_id": "no-references", "reference_contexts": []})
    rows = [json.dumps({**json.loads(GDI_ROW), "input_id": f"q{n}"}) for n in range(1_200)] + [broken]
    make_workspace(tmp_path, suite=HIT_AT_K_SUITE, dataset="\n".join(rows) + "\n")
    result = rag_lsp("run", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    out = result.stdout
    assert "1,201 cases, 1,200 scored" in out
    assert "the 50 weakest of 1,201 cases; 1,151 more not shown" in out
    assert "means over 1,200 scored cases; 1 broken case fails the suite as broken" in out
    assert "(1 suite, 1,201 cases," in out
    assert not re.search(r"\b\d{4,}\b", out), out  # no count of four digits or more left unseparated


def test_no_exec_refuses_command_targets(tmp_path: Path) -> None:
    """A command target runs in an explicit run, and --no-exec refuses it with a RAG405 reason and exit 1."""
    make_workspace(tmp_path)
    script = tmp_path / "tools" / "search.py"
    script.parent.mkdir()
    script.write_text(
        "import json, sys\nfor line in sys.stdin:\n"
        "    print(json.dumps({'hits': [{'path': 'src/app.py'}], 'mode': 'semantic'}), flush=True)\n",
        encoding="utf-8",
    )
    (tmp_path / ".punica" / "targets.yaml").write_text(
        f"targets:\n  vectors.query:\n    command: [{json.dumps(sys.executable)}, tools/search.py]\n", encoding="utf-8"
    )
    allowed = rag_lsp("run", cwd=tmp_path)
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    refused = rag_lsp("run", "--no-exec", "--format", "json", cwd=tmp_path)
    assert refused.returncode == 1
    (suite,) = json.loads(refused.stdout)["suites"]
    assert suite["broken"] and suite["cases"] == []
    assert "--no-exec" in refused.stderr and "RAG405" in refused.stderr


def test_a_case_id_with_a_lone_surrogate_is_written_escaped_in_every_output(tmp_path: Path) -> None:
    """`"\\ud800"` is valid JSON: such a case id runs, is written escaped in text, json and junit, and a report holding it reads back as a baseline."""
    make_workspace(tmp_path, dataset='{"id": "\\ud800app", "input": {"query": "app"}, "expect": {"relevant": ["src/app.py"]}}\n')
    code, document = run_json(cwd=tmp_path)
    assert code == 1 and [case["id"] for case in document["suites"][0]["cases"]] == ["\ud800app"]
    (tmp_path / "base.json").write_text(rag_lsp("run", "--format", "json", cwd=tmp_path).stdout, encoding="utf-8", errors="surrogatepass")
    for args in (["--format", "text"], ["--format", "junit"], ["--baseline", "base.json", "--compare-json", "compare.json"]):
        result = rag_lsp("run", *args, cwd=tmp_path)
        assert result.returncode == 1 and "internal error" not in result.stderr, (args, result.stderr)
        if args == ["--format", "text"]:
            assert "\\ud800app" in result.stdout
        if args == ["--format", "junit"]:  # XML cannot hold it at all: a replacement character stands in
            names = [case.get("name") for case in ET.fromstring(result.stdout).iter("testcase")]
            assert "\ufffdapp" in names
    compared = json.loads((tmp_path / "compare.json").read_text(encoding="utf-8"))
    assert [suite["id"] for suite in compared["suites"]] == ["code"]
