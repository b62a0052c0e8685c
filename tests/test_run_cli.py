"""``rag-lsp run`` through the real command line, on examples/ and small workspaces."""

from __future__ import annotations

import json
import os
import pty
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from workspaces import CAUGHT, EXAMPLES, GOOD_SUITE, make_workspace, rag_lsp
from rag_lsp.core.search.index import FORMAT

# Slow (runs the command line in processes of its own): `pytest -m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

SUITE_KEYS = {"id", "passed", "broken", "aggregates", "thresholds", "cases"}
THRESHOLD_KEYS = {"metric", "threshold", "value", "passed"}
CASE_KEYS = {"id", "scores", "broken", "missed", "first_relevant_rank", "mode"}
# Keys written beside SPEC §6's (README): why a suite was not run, the scoring
# metadata of its metrics' configs, the ranks of the relevant hits a case found
# (what --baseline compares), why each missed value was missed, and every rank of
# each expected value in the target's whole answer, and the case's own metadata.
EXTRA_SUITE_KEYS = {"error", "metrics"}
EXTRA_CASE_KEYS = {"ranks", "why_missed", "answer", "metadata"}




def run_json(*args: str, cwd: Path) -> tuple[int, dict]:
    result = rag_lsp("run", *args, "--format", "json", cwd=cwd)
    assert "Traceback" not in result.stderr, result.stderr
    return result.returncode, json.loads(result.stdout)


def test_examples_text_output_tells_the_story(tmp_path: Path) -> None:
    """On examples/ (the README's main job) gateway-recorded and the two chunkings of the builtin search by
    meaning pass: exit 0."""
    result = rag_lsp("run", str(EXAMPLES), cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "gateway-recorded  ✓ passed" in out
    assert "gateway-live  ✓ passed" in out
    assert "gateway-short-chunks  ✓ passed" in out
    for column in ("case", "recall", "precision", "MRR", "hit@1", "missed"):
        assert column in out
    assert "ran on keyword search" not in out
    assert "note:" not in out
    assert "\x1b[" not in out  # no colour codes when not a terminal
    assert out.rstrip().splitlines()[-1].startswith("3 passed (3 suites, 36 cases")


def test_the_demonstrations_fail_as_the_readme_says(tmp_path: Path) -> None:
    """On examples-caught/, keyword-fallback clears its recall but fails `rag.mode.semantic` (its model is a Git
    LFS pointer, and the run says so once), broken-demo is not run; exit 1."""
    result = rag_lsp("run", str(CAUGHT), "--format", "json", cwd=tmp_path)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    suites = {suite["id"]: suite for suite in json.loads(result.stdout)["suites"]}
    assert set(suites) == {"keyword-fallback", "broken-demo"}
    fallback = suites["keyword-fallback"]
    assert [t["metric"] for t in fallback["thresholds"] if not t["passed"]] == ["rag.mode.semantic"]
    assert fallback["aggregates"]["rag.recall"] >= 0.8
    assert {case["mode"] for case in fallback["cases"]} == {"keyword"}
    assert suites["broken-demo"]["broken"]
    assert suites["broken-demo"]["cases"] == []
    # The model is named by its folder in the workspace, as the targets config names it.
    assert "models/gateway-m2v/model.safetensors is not a safetensors file: it is a Git LFS pointer" in result.stderr
    assert result.stderr.count("it is a Git LFS pointer (run `git lfs pull`)") == 1


def test_examples_json_follows_the_spec(tmp_path: Path) -> None:
    """--format json prints SPEC §6's keys for suites, thresholds and cases, and only the documented extras."""
    code, document = run_json(str(EXAMPLES), cwd=tmp_path)
    assert code == 0
    assert set(document) == {"suites"}
    suites = {suite["id"]: suite for suite in document["suites"]}
    assert set(suites) == {"gateway-recorded", "gateway-live", "gateway-short-chunks"}
    for suite in suites.values():
        assert set(suite) == SUITE_KEYS | EXTRA_SUITE_KEYS
        for threshold in suite["thresholds"]:
            assert set(threshold) == THRESHOLD_KEYS
        for case in suite["cases"]:
            assert set(case) == CASE_KEYS | EXTRA_CASE_KEYS
    recorded = suites["gateway-recorded"]
    assert recorded["passed"]
    assert not recorded["broken"]
    assert recorded["aggregates"]["rag.recall"] >= 0.8
    assert recorded["aggregates"]["rag.mode.semantic"] == 1.0
    for live in (suites["gateway-live"], suites["gateway-short-chunks"]):
        assert live["passed"]
        assert not live["broken"]
        assert all(t["passed"] for t in live["thresholds"])
        assert live["aggregates"]["rag.recall"] >= 0.8
        assert live["aggregates"]["rag.mode.semantic"] == 1.0
        assert all(case["mode"] == "semantic" for case in live["cases"])
    case = recorded["cases"][0]
    assert case["id"] == "gateway-approval"
    assert case["broken"] is None
    assert case["first_relevant_rank"] == 1
    assert set(case["scores"]) == {"rag.recall", "rag.precision", "rag.mrr", "rag.hit@1", "rag.retrieved", "rag.mode.semantic"}


def test_case_metadata_is_carried_into_the_json_report(tmp_path: Path) -> None:
    """A case's `metadata` object is written beside its figures in --format json (null for a case without
    one), and the check finds nothing wrong with it."""
    cases = [
        {"id": "tagged", "input": {"query": "app"}, "expect": {"relevant": ["src/app.py"]},
         "metadata": {"tags": ["billing"], "source": "tickets", "difficulty": 2}},
        {"id": "plain", "input": {"query": "app"}, "expect": {"relevant": ["src/app.py"]}},
    ]
    make_workspace(tmp_path, dataset="".join(json.dumps(case) + "\n" for case in cases))
    assert rag_lsp("check", cwd=tmp_path).returncode == 0
    _, document = run_json(cwd=tmp_path)
    metadata = {case["id"]: case["metadata"] for case in document["suites"][0]["cases"]}
    assert metadata == {"tagged": {"tags": ["billing"], "source": "tickets", "difficulty": 2}, "plain": None}


def test_examples_junit_is_xml_with_failures(tmp_path: Path) -> None:
    """--format junit parses as XML: a test case per case and per threshold, a failure for a refused suite."""
    result = rag_lsp("run", str(EXAMPLES), "--format", "junit", cwd=tmp_path)
    assert result.returncode == 0
    root = ET.fromstring(result.stdout.encode("utf-8"))
    assert root.tag == "testsuites"
    suites = {suite.get("name"): suite for suite in root.findall("testsuite")}
    live = suites["gateway-live"]
    cases = live.findall("testcase")
    assert len([c for c in cases if not c.get("name").startswith("threshold ")]) == 12
    assert [c.get("name") for c in cases if c.get("name").startswith("threshold ")] == [
        "threshold rag.recall ≥ 0.8", "threshold rag.mode.semantic ≥ 1"
    ]
    assert not [c for c in cases if c.find("failure") is not None]
    assert live.get("failures") == "0"
    assert live.get("tests") == str(len(cases))
    assert suites["gateway-recorded"].get("failures") == "0"
    refused = ET.fromstring(rag_lsp("run", str(CAUGHT), "--format", "junit", cwd=tmp_path).stdout.encode("utf-8"))
    (broken,) = [suite for suite in refused.findall("testsuite") if suite.get("name") == "broken-demo"]
    assert broken.find("testcase/failure") is not None


def test_exit_codes_and_selection(tmp_path: Path) -> None:
    """--suite picks suites (0 when they pass, 1 when not); an unknown suite or case is a usage error (2)."""
    assert rag_lsp("run", str(EXAMPLES), "--suite", "gateway-recorded", cwd=tmp_path).returncode == 0
    assert rag_lsp("run", str(EXAMPLES), "--suite", "gateway-live", cwd=tmp_path).returncode == 0
    assert rag_lsp("run", str(CAUGHT), "--suite", "keyword-fallback", cwd=tmp_path).returncode == 1
    unknown = rag_lsp("run", str(EXAMPLES), "--suite", "nope", cwd=tmp_path)
    assert unknown.returncode == 2
    assert "no suite 'nope'" in unknown.stderr
    assert "gateway-live" in unknown.stderr
    missing_case = rag_lsp("run", str(EXAMPLES), "--case", "nope", cwd=tmp_path)
    assert missing_case.returncode == 2
    assert "no case 'nope'" in missing_case.stderr
    assert rag_lsp("run", str(tmp_path / "missing"), cwd=tmp_path).returncode == 2


def test_one_case_in_each_suite(tmp_path: Path) -> None:
    """--case runs just that case in every selected suite that has it."""
    code, document = run_json(str(EXAMPLES), "--case", "noisy-neighbour", cwd=tmp_path)
    suites = {suite["id"]: suite for suite in document["suites"]}
    assert [case["id"] for case in suites["gateway-live"]["cases"]] == ["noisy-neighbour"]
    assert [case["id"] for case in suites["gateway-recorded"]["cases"]] == ["noisy-neighbour"]
    # A question that shares no word with its answers: the search by meaning finds both.
    live = suites["gateway-live"]["cases"][0]
    assert live["missed"] == []
    assert live["ranks"] == {"src/ratelimit.ts": 3, "docs/rate-limits.md": 4}


def test_a_dataset_path_runs_the_suites_that_use_it(tmp_path: Path) -> None:
    """A dataset given as PATH runs the suites that read it; a file that is neither is a usage error."""
    code, document = run_json(str(EXAMPLES / ".punica" / "evals" / "gateway.jsonl"), cwd=tmp_path)
    assert sorted(suite["id"] for suite in document["suites"]) == ["gateway-live", "gateway-recorded", "gateway-short-chunks"]
    assert rag_lsp("run", str(EXAMPLES / "docs" / "deploy.md"), cwd=tmp_path).returncode == 2


def test_broken_case_fails_the_run(tmp_path: Path) -> None:
    """A case declaring nothing relevant is broken, not zero: exit 1 and the reason in the JSON."""
    make_workspace(tmp_path, dataset='{"id": "a", "input": {"query": "app"}, "expect": {"relevant": []}}\n')
    code, document = run_json(cwd=tmp_path)
    (suite,) = document["suites"]
    (case,) = suite["cases"]
    assert code == 1
    assert suite["broken"]
    assert case["scores"] is None
    assert "nothing relevant" in case["broken"]


def test_builtin_default_target_runs_a_fresh_workspace(tmp_path: Path) -> None:
    """Without a targets config, vectors.query is the builtin over the workspace, searching by meaning with the
    embedded model: the case finds src/app.py, mode semantic, and the suite passes."""
    make_workspace(tmp_path)
    code, document = run_json(cwd=tmp_path)
    (suite,) = document["suites"]
    (case,) = suite["cases"]
    assert case["scores"]["rag.recall"] == 1.0
    assert case["mode"] == "semantic"
    assert code == 0
    assert suite["passed"]
    assert all(t["passed"] for t in suite["thresholds"])


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
    assert code == 0
    assert suite["aggregates"] == {"rag.hit_at_k": 1.0}
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
    assert "a hit needs token-set ratio ≥ 0.70," in explanation, explanation
    assert "ratio 0.70," not in explanation, explanation


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
    """A command target runs in an explicit run, and --no-exec refuses it with a RAG405 reason and exit 1, with --case too."""
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
    assert suite["broken"]
    assert suite["cases"] == []
    assert "--no-exec" in refused.stderr
    assert "RAG405" in refused.stderr
    # One case of a suite that is not run: the suite is reported with why, not an unknown case.
    junit = rag_lsp("run", "--no-exec", "--case", "app", "--format", "junit", cwd=tmp_path)
    assert junit.returncode == 1, junit.stderr
    (failure,) = [case.find("failure") for case in ET.fromstring(junit.stdout).iter("testcase") if case.get("name") == "(suite)"]
    assert failure.get("type") == "RAG405" and "--no-exec" in failure.get("message")


def test_a_case_id_with_a_lone_surrogate_is_written_escaped_in_every_output(tmp_path: Path) -> None:
    """`"\\ud800"` is valid JSON: such a case id runs, is written escaped in text, json and junit, and a report holding it reads back as a baseline."""
    make_workspace(tmp_path, dataset='{"id": "\\ud800app", "input": {"query": "app"}, "expect": {"relevant": ["src/app.py"]}}\n')
    # Keyword search answers `mode: keyword`: the suite fails, and every output must still hold the id.
    (tmp_path / ".punica" / "targets.yaml").write_text("targets:\n  vectors.query:\n    builtin: {retrieval: keyword}\n", encoding="utf-8")
    code, document = run_json(cwd=tmp_path)
    assert code == 1
    assert [case["id"] for case in document["suites"][0]["cases"]] == ["\ud800app"]
    (tmp_path / "base.json").write_text(rag_lsp("run", "--format", "json", cwd=tmp_path).stdout, encoding="utf-8", errors="surrogatepass")
    for args in (["--format", "text"], ["--format", "junit"], ["--baseline", "base.json", "--compare-json", "compare.json"]):
        result = rag_lsp("run", *args, cwd=tmp_path)
        assert result.returncode == 1, (args, result.stderr)
        assert "internal error" not in result.stderr, (args, result.stderr)
        if args == ["--format", "text"]:
            assert "\\ud800app" in result.stdout
        if args == ["--format", "junit"]:  # XML cannot hold it at all: a replacement character stands in
            names = [case.get("name") for case in ET.fromstring(result.stdout).iter("testcase")]
            assert "\ufffdapp" in names
    compared = json.loads((tmp_path / "compare.json").read_text(encoding="utf-8"))
    assert [suite["id"] for suite in compared["suites"]] == ["code"]


def test_a_case_id_that_reads_like_console_markup_is_printed_as_written(tmp_path: Path) -> None:
    """Case ids `[/]` and `[red]x[/red]` are text: the text report prints them as written, with a baseline as without."""
    make_workspace(
        tmp_path,
        dataset='{"id": "[/]", "input": {"query": "app"}, "expect": {"relevant": ["src/app.py"]}}\n'
        '{"id": "[red]x[/red]", "input": {"query": "gateway"}, "expect": {"relevant": ["src/gateway.ts"]}}\n',
    )
    (tmp_path / ".punica" / "targets.yaml").write_text("targets:\n  vectors.query:\n    builtin: {retrieval: keyword}\n", encoding="utf-8")
    (tmp_path / "base.json").write_text(rag_lsp("run", "--format", "json", cwd=tmp_path).stdout, encoding="utf-8")
    for args in ([], ["--baseline", "base.json"]):
        result = rag_lsp("run", *args, cwd=tmp_path)
        assert result.returncode == 1, (args, result.stderr)  # keyword search fails rag.mode.semantic
        assert "internal error" not in result.stderr, (args, result.stderr)
        rows = [line for line in result.stdout.splitlines() if line.startswith("│")]
        assert any(line.startswith("│ [/] ") for line in rows), result.stdout
        assert any(line.startswith("│ [red]x[/red] ") for line in rows), result.stdout


def test_an_answer_without_a_mode_is_said_so_not_called_keyword_search(tmp_path: Path) -> None:
    """A recorded answer with no `mode` scores rag.mode.semantic 0, and the text report says the target answered no mode rather than that it ran on keyword search."""
    make_workspace(tmp_path)
    (tmp_path / ".punica" / "targets.yaml").write_text("targets:\n  vectors.query:\n    recorded: .punica/runs/rec.jsonl\n", encoding="utf-8")
    (tmp_path / ".punica" / "runs").mkdir()
    (tmp_path / ".punica" / "runs" / "rec.jsonl").write_text('{"id": "app", "hits": [{"path": "src/app.py"}]}\n', encoding="utf-8")
    result = rag_lsp("run", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert "1 of 1 scored case answered no `mode`, so rag.mode.semantic is 0 for them (RAG402)" in result.stdout
    assert "ran on keyword search" not in result.stdout


def test_wrong_builtin_options_are_a_reason_not_a_traceback(tmp_path: Path) -> None:
    """An unknown retrieval or a bad chunking in the targets config: the suite is not run, and says what to write
    instead, with the finding `rag-lsp check` reports (one verdict: the same message and code)."""
    make_workspace(tmp_path)
    targets = tmp_path / ".punica" / "targets.yaml"
    for options, said in (
        ("{retrieval: semantik}", "'semantik' is not allowed (did you mean 'semantic'?); use one of: semantic, keyword, hybrid"),
        ("{chunking: {unit: lines, size: 10, overlap: 10}}", "`overlap` (10) must be less than `size` (10)"),
        ("{chunking: {unit: file, size: 3}}", "`size` does not apply to `unit: file`"),
    ):
        targets.write_text(f"targets:\n  vectors.query:\n    builtin: {options}\n", encoding="utf-8")
        code, document = run_json(cwd=tmp_path)
        (suite,) = document["suites"]
        assert code == 1, suite["error"]
        assert suite["broken"], suite["error"]
        assert said in suite["error"], suite["error"]
        assert suite["error"].endswith("(RAG004)"), suite["error"]
        checked = rag_lsp("check", "--format", "json", cwd=tmp_path)
        assert checked.returncode == 1
        (finding,) = json.loads(checked.stdout)
        assert finding["code"] == "RAG004" and said in finding["message"]


def test_a_model_that_cannot_be_loaded_is_said_once_and_fails_the_semantic_threshold(tmp_path: Path) -> None:
    """Two suites on a target whose model folder holds no model: both search by keyword and fail
    `rag.mode.semantic`, and the reason is said once, in the text report and on stderr beside JSON."""
    make_workspace(tmp_path)
    suites = tmp_path / ".punica" / "evals" / "code.suite.yaml"
    suites.write_text(suites.read_text(encoding="utf-8") + GOOD_SUITE.split("\n", 1)[1].replace("id: code", "id: again"), encoding="utf-8")
    (tmp_path / "models" / "broken").mkdir(parents=True)
    (tmp_path / ".punica" / "targets.yaml").write_text(
        "targets:\n  vectors.query:\n    builtin: {corpora: {code: ['src/**']}, model: models/broken}\n", encoding="utf-8"
    )
    text = rag_lsp("run", cwd=tmp_path)
    assert text.returncode == 1, text.stdout
    assert text.stdout.count("its embedding model cannot be loaded") == 1, text.stdout
    assert "models/broken is not a model2vec model folder" in text.stdout
    assert "searches by keyword" in text.stdout
    result = rag_lsp("run", "--format", "json", cwd=tmp_path)
    document = json.loads(result.stdout)
    assert [case["mode"] for suite in document["suites"] for case in suite["cases"]] == ["keyword", "keyword"]
    for suite in document["suites"]:
        assert [t["metric"] for t in suite["thresholds"] if not t["passed"]] == ["rag.mode.semantic"]
    assert result.stderr.count("its embedding model cannot be loaded") == 1
    assert "Traceback" not in result.stderr


def run_with_cache(cache: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "RAG_LSP_CACHE_DIR": str(cache)}
    return subprocess.run(
        [sys.executable, "-m", "rag_lsp", "run", *args], cwd=cwd, env=env, capture_output=True, text=True, encoding="utf-8", timeout=120
    )


def test_the_index_outlives_the_run_and_a_damaged_one_is_rebuilt(tmp_path: Path) -> None:
    """The first run caches the index; the next run reads it as it is (nothing written) and reports the same;
    after its vectors file is damaged, a run reports the same again, from an index it built anew."""
    root = tmp_path / "ws"
    shutil.copytree(EXAMPLES, root)
    cache = tmp_path / "cache"
    first = run_with_cache(cache, "--suite", "gateway-live", "--format", "json", cwd=root)
    assert first.returncode == 0, first.stderr
    (folder,) = (cache / f"index-v{FORMAT}").iterdir()
    written = {path.name: path.stat().st_mtime_ns for path in folder.iterdir()}
    second = run_with_cache(cache, "--suite", "gateway-live", "--format", "json", cwd=root)
    assert second.stdout == first.stdout
    assert {path.name: path.stat().st_mtime_ns for path in folder.iterdir()} == written
    (vectors,) = folder.glob("vectors-*.npy")
    data = bytearray(vectors.read_bytes())
    data[-64:] = bytes(64)  # the last vector's end zeroed: a well-formed file that no longer holds what was written
    vectors.write_bytes(bytes(data))
    third = run_with_cache(cache, "--suite", "gateway-live", "--format", "json", cwd=root)
    assert third.stdout == first.stdout
    assert "the index cache was damaged" in third.stderr
    assert not vectors.exists()
    assert len(list(folder.glob("vectors-*.npy"))) == 1


def test_building_the_index_shows_a_progress_bar_on_a_terminal(tmp_path: Path) -> None:
    """On a terminal, a run whose index takes a moment to build shows a bar naming the target and the files read."""
    make_workspace(tmp_path)
    for n in range(600):
        (tmp_path / "src" / f"module{n}.py").write_text(f"def handler_{n}(request):\n    return {n}\n" * 30, encoding="utf-8")
    controller, terminal = pty.openpty()
    env = {**os.environ, "RAG_LSP_CACHE_DIR": str(tmp_path / "cache"), "COLUMNS": "120", "TERM": "xterm"}
    # The bar waits PROGRESS_AFTER_S before it shows; a fast machine indexes 600 files sooner. The run
    # is told to show it at once, so what it shows does not depend on the machine's speed.
    at_once = "import sys; import rag_lsp.cli.run_suites as run_suites; run_suites.PROGRESS_AFTER_S = 0; from rag_lsp.cli import entry; sys.argv[0] = 'rag-lsp'; entry()"
    process = subprocess.Popen(
        [sys.executable, "-c", at_once, "run"], cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=terminal
    )
    os.close(terminal)
    shown = b""
    while True:
        try:
            data = os.read(controller, 65536)
        except OSError:  # the process closed its end
            break
        if not data:
            break
        shown += data
    os.close(controller)
    assert process.wait(timeout=120) == 0
    assert b"indexing vectors.query (files)" in shown
    assert b"/601" in shown


def test_a_suite_file_that_cannot_be_read_is_reported_as_not_run(tmp_path: Path) -> None:
    """A suite file whose YAML is not well-formed is not left out: it is reported as not run, with the check's
    finding, and the run fails (exit 1); --suite naming one of its suites says why it cannot be found."""
    make_workspace(tmp_path)
    broken = "suites:\n  - id: strict\n    dataset: .punica/evals/code.jsonl\n    engines: [rag\n"
    (tmp_path / ".punica" / "evals" / "strict.suite.yaml").write_text(broken, encoding="utf-8")
    code, document = run_json(cwd=tmp_path)
    assert code == 1
    suites = {suite["id"]: suite for suite in document["suites"]}
    assert suites["code"]["passed"]
    unread = suites[".punica/evals/strict.suite.yaml"]
    assert unread["broken"] and not unread["passed"] and unread["cases"] == []
    assert unread["error"].startswith("not run: no suite of .punica/evals/strict.suite.yaml can be read (line 5: RAG001")
    asked = rag_lsp("run", "--suite", "strict", cwd=tmp_path)
    assert asked.returncode == 2
    assert "no suite 'strict' here; suites: code (no suite of .punica/evals/strict.suite.yaml can be read" in asked.stderr
    # An empty suite file, with nothing wrong and nothing to run, is no suite: a folder holding only it has none.
    lone = tmp_path / "lone"
    (lone / ".punica" / "evals").mkdir(parents=True)
    (lone / ".punica" / "evals" / "empty.suite.yaml").write_text("", encoding="utf-8")
    empty = rag_lsp("run", cwd=lone)
    assert empty.returncode == 2 and "no suites found" in empty.stderr


def test_run_without_a_path_runs_the_whole_workspace_from_a_subfolder(tmp_path: Path) -> None:
    """`rag-lsp run` with no PATH, called from a subfolder, runs every suite of the workspace, as `check` checks it."""
    make_workspace(tmp_path)
    code, document = run_json(cwd=tmp_path / "src")
    assert code == 0
    assert [suite["id"] for suite in document["suites"]] == ["code"]


def test_errors_in_the_targets_config_stop_the_suites_of_their_target(tmp_path: Path) -> None:
    """An error the check finds in a target's entry of .punica/targets.yaml (a misspelled option) stops the
    suites of that target, not the others; YAML that is not well-formed stops every suite, instead of running
    the default target in its place."""
    suites = GOOD_SUITE + (
        "  - id: short\n    target: {kind: capability, id: vectors.short}\n    dataset: .punica/evals/code.jsonl\n"
        "    engines: [rag]\n    thresholds: {rag.recall: 0.8, rag.mode.semantic: 1}\n"
    )
    make_workspace(tmp_path, suites)
    targets = tmp_path / ".punica" / "targets.yaml"
    targets.write_text(
        "targets:\n  vectors.query:\n    builtin: {corpora: {code: ['src/**']}}\n"
        "  vectors.short:\n    builtin:\n      corpora: {code: ['src/**']}\n      chunkng: {unit: lines, size: 20}\n",
        encoding="utf-8",
    )
    code, document = run_json(cwd=tmp_path)
    assert code == 1
    by_id = {suite["id"]: suite for suite in document["suites"]}
    assert by_id["code"]["passed"]
    assert by_id["short"]["error"].startswith(
        "not run: .punica/targets.yaml has 1 error for its target 'vectors.short' "
        "(line 7 (`chunkng: {unit: lines, size: 20}`): RAG004 unknown key 'chunkng'"
    )
    targets.write_text("targets:\n  vectors.query:\n    builtin: {corpora: {code: ['src/**']}}\n\t\n", encoding="utf-8")
    code, document = run_json(cwd=tmp_path)
    assert code == 1
    for suite in document["suites"]:
        assert suite["cases"] == [] and "has 1 error for its target" in suite["error"] and "RAG001" in suite["error"]


def test_a_chunking_size_written_as_a_float_is_taken_as_the_check_takes_it(tmp_path: Path) -> None:
    """`size: 20.0` is an integer to the targets schema, which `check` accepts: the run cuts 20-line windows."""
    make_workspace(tmp_path)
    (tmp_path / "src" / "app.py").write_text("print('app')\n" * 50, encoding="utf-8")
    (tmp_path / ".punica" / "targets.yaml").write_text(
        "targets:\n  vectors.query:\n    builtin: {corpora: {code: ['src/**']}, chunking: {unit: lines, size: 20.0, overlap: 4.0}}\n",
        encoding="utf-8",
    )
    assert rag_lsp("check", cwd=tmp_path).returncode == 0
    result = rag_lsp("run", "--record", "answers.jsonl", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    (answer,) = [json.loads(line) for line in (tmp_path / "answers.jsonl").read_text(encoding="utf-8").splitlines()]
    assert answer["hits"][0]["id"] == "src/app.py#L1-20"


def test_errors_of_the_settings_file_are_said_by_the_run(tmp_path: Path) -> None:
    """A setting the check reports as invalid is left out by the run, which says so on stderr rather than
    quietly running with its default."""
    make_workspace(tmp_path)
    (tmp_path / ".punica" / "rag-lsp.toml").write_text("max-file-bytes = 0\n", encoding="utf-8")
    result = rag_lsp("run", cwd=tmp_path)
    assert result.returncode == 0
    assert (
        "rag-lsp: .punica/rag-lsp.toml:1:18: RAG004 0 is out of range: must be at least 1; the run leaves it out"
        in result.stderr
    )
