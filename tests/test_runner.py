"""The runner: suites through targets and the scorer, with refusals, broken cases, progress and cancel."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

import pytest
from workspaces import make_workspace

from rag_lsp.core.running.results import BROKEN_CASE, TARGET_FAILED, CaseNotFound, CaseResult, describe_case
from rag_lsp.core.running.runner import Runner
from rag_lsp.core.running.scorer import score_case
from rag_lsp.core.running.targets import Hit
from rag_lsp.core.workspace.workspace import Workspace

RECORDED_SUITE = """\
suites:
  - id: code
    target: {kind: capability, id: rec}
    dataset: .punica/evals/code.jsonl
    engines: [rag]
    options: {rag: {match: path, k: 3}}
    thresholds:
      rag.recall: 0.5
      rag.mode.semantic: 1
"""
TARGETS = "targets:\n  rec:\n    recorded: .punica/runs/rec.jsonl\n"


def case(case_id: str, relevant: list, **extra) -> str:
    return json.dumps({"id": case_id, "input": {"query": case_id}, "expect": {"relevant": relevant}, **extra})


def answer(case_id: str, paths: list[str], mode: str = "semantic") -> str:
    return json.dumps({"id": case_id, "hits": [{"path": path} for path in paths], "mode": mode})


def recorded_workspace(root: Path, cases: list[str], answers: list[str], suite: str = RECORDED_SUITE) -> Workspace:
    make_workspace(root, suite=suite, dataset="\n".join(cases) + "\n")
    (root / ".punica" / "targets.yaml").write_text(TARGETS, encoding="utf-8")
    (root / ".punica" / "runs").mkdir()
    (root / ".punica" / "runs" / "rec.jsonl").write_text("\n".join(answers) + "\n", encoding="utf-8")
    return Workspace(root)


def run(workspace: Workspace, **options):
    (suite,) = workspace.suites()
    with Runner(workspace, allow_exec=options.pop("allow_exec", True)) as runner:
        return runner.run_suite(suite, **options)


def test_a_suite_runs_and_passes(tmp_path: Path) -> None:
    """Cases are scored from their recorded answers at k, means are compared with the thresholds."""
    workspace = recorded_workspace(
        tmp_path,
        [case("a", ["src/app.py"]), case("b", ["src/app.py", "src/b.py"])],
        [answer("a", ["src/app.py"]), answer("b", ["x", "y", "z", "src/b.py"])],
    )
    result = run(workspace)
    assert result.passed and not result.broken and result.error is None
    first, second = result.cases
    assert first.scores["rag.recall"] == 1.0 and first.first_relevant_rank == 1 and first.line == 0
    assert second.scores["rag.recall"] == 0.0 and second.missed == ("src/app.py", "src/b.py")
    assert second.scores["rag.retrieved"] == 3.0
    assert result.aggregates["rag.recall"] == 0.5
    assert [(t.metric, t.passed) for t in result.thresholds] == [("rag.recall", True), ("rag.mode.semantic", True)]
    start, end = result.threshold_spans["rag.recall"]
    assert workspace.parsed_yaml(result.file).text[start:end] == "rag.recall"


def test_keyword_mode_fails_the_semantic_threshold(tmp_path: Path) -> None:
    """Perfect recall in keyword mode still fails `rag.mode.semantic: 1`."""
    workspace = recorded_workspace(tmp_path, [case("a", ["src/app.py"])], [answer("a", ["src/app.py"], "keyword")])
    result = run(workspace)
    assert result.aggregates["rag.recall"] == 1.0
    assert not result.passed and not result.broken
    assert [t.metric for t in result.thresholds if not t.passed] == ["rag.mode.semantic"]


def test_broken_cases_fail_the_suite_as_broken(tmp_path: Path) -> None:
    """Lines that cannot be scored are broken cases with reasons; the others are still scored."""
    workspace = recorded_workspace(
        tmp_path,
        [
            case("ok", ["src/app.py"]),
            case("empty", []),
            '{"id": "cut", "input": {"query": "x"}',
            case("ok", ["src/app.py"]),
            json.dumps({"id": "nofield", "input": {"query": "x"}, "expect": {"relevant": ["src/app.py"]}}),
        ],
        [answer("ok", ["src/app.py"]), answer("empty", ["src/app.py"]), json.dumps({"id": "nofield", "hits": [{"id": "1"}]})],
    )
    result = run(workspace)
    assert result.broken and not result.passed
    by_line = {c.line: c for c in result.cases}
    assert by_line[0].scores is not None
    assert "nothing relevant" in by_line[1].broken and by_line[1].code == BROKEN_CASE
    assert by_line[2].id == "line 3" and "not valid JSON" in by_line[2].broken
    assert "used before, on line 1" in by_line[3].broken
    assert "`path` field" in by_line[4].broken
    assert result.aggregates["rag.recall"] == 1.0 and result.scored == 1


def test_a_target_failure_is_a_rag405_case(tmp_path: Path) -> None:
    """A case the target cannot answer is broken with the target's message and code RAG405."""
    workspace = recorded_workspace(tmp_path, [case("a", ["src/app.py"])], [answer("other", [])])
    (failed,) = run(workspace).cases
    assert failed.code == TARGET_FAILED and "no recorded answer for case 'a'" in failed.error
    assert describe_case(failed).startswith("target failed: ")


def test_a_suite_with_check_errors_is_not_run(tmp_path: Path) -> None:
    """A suite whose file has error findings is refused with them, not run on garbage."""
    suite = RECORDED_SUITE.replace("rag.recall: 0.5", "rag.recal: 0.5").replace("match: path", "match: url")
    workspace = recorded_workspace(tmp_path, [case("a", ["src/app.py"])], [answer("a", ["src/app.py"])], suite)
    result = run(workspace)
    assert result.error is not None and result.broken and not result.passed and result.cases == []
    assert {finding.code for finding in result.findings} == {"RAG101", "RAG108"}
    assert "RAG101" in result.error and "rag-lsp check" in result.error
    assert all(t.value is None and not t.passed for t in result.thresholds)


def test_errors_of_another_suite_do_not_stop_this_one(tmp_path: Path) -> None:
    """Findings inside one suite of a file refuse only that suite."""
    suite = RECORDED_SUITE + RECORDED_SUITE.replace("id: code", "id: other").split("suites:\n", 1)[1].replace(
        "rag.recall: 0.5", "rag.recal: 0.5"
    )
    workspace = recorded_workspace(tmp_path, [case("a", ["src/app.py"])], [answer("a", ["src/app.py"])], suite)
    with Runner(workspace, allow_exec=True) as runner:
        good, bad = (runner.run_suite(s) for s in workspace.suites())
    assert good.passed and bad.error is not None


def test_command_targets_need_exec(tmp_path: Path) -> None:
    """A command target is refused (RAG405) when the run may not execute, and runs when it may."""
    script = tmp_path / "search.py"
    script.write_text(
        "import json, sys\nfor line in sys.stdin:\n"
        "    print(json.dumps({'hits': [{'path': 'src/app.py'}], 'mode': 'semantic'}), flush=True)\n",
        encoding="utf-8",
    )
    workspace = recorded_workspace(tmp_path, [case("a", ["src/app.py"])], [])
    (tmp_path / ".punica" / "targets.yaml").write_text(
        f"targets:\n  rec:\n    command: [{json.dumps(sys.executable)}, {json.dumps(str(script))}]\n", encoding="utf-8"
    )
    workspace = Workspace(tmp_path)
    refused = run(workspace, allow_exec=False)
    assert refused.error is not None and "command target" in refused.error and "RAG405" in refused.error
    assert run(Workspace(tmp_path), allow_exec=True).passed


def test_a_command_target_is_sent_the_input_as_the_dataset_wrote_it(tmp_path: Path) -> None:
    """An integer past 64 bits and a string with a lone surrogate, both valid JSON, reach a command target as written: its hits say so."""
    script = tmp_path / "search.py"
    script.write_text(
        "import json, sys\nfor line in sys.stdin:\n"
        "    value = json.loads(line)\n"
        "    surrogate = 'as written' if value['query'] == 'q\\ud800' else 'changed'\n"
        "    print(json.dumps({'hits': [{'id': str(value['tenant'])}, {'id': surrogate}], 'mode': 'semantic'}), flush=True)\n",
        encoding="utf-8",
    )
    big = 123456789012345678901234567890
    cases = [
        json.dumps({"id": "big", "input": {"query": "q", "tenant": big}, "expect": {"relevant": [str(big)]}}),
        json.dumps({"id": "surrogate", "input": {"query": "q\ud800", "tenant": 1}, "expect": {"relevant": ["as written"]}}),
    ]
    recorded_workspace(tmp_path, cases, [], suite=RECORDED_SUITE.replace("match: path", "match: id"))
    (tmp_path / ".punica" / "targets.yaml").write_text(
        f"targets:\n  rec:\n    command: [{json.dumps(sys.executable)}, {json.dumps(str(script))}]\n", encoding="utf-8"
    )
    result = run(Workspace(tmp_path))
    assert [(case.id, case.broken, case.scores and case.scores["rag.recall"]) for case in result.cases] == [("big", None, 1.0), ("surrogate", None, 1.0)]


def test_progress_and_cancel(tmp_path: Path) -> None:
    """Progress ends at (n, n); a run cancelled before it starts scores nothing and does not pass."""
    workspace = recorded_workspace(
        tmp_path, [case(f"c{n}", ["src/app.py"]) for n in range(5)], [answer(f"c{n}", ["src/app.py"]) for n in range(5)]
    )
    seen: list[tuple[int, int]] = []
    assert run(workspace, progress=lambda done, total: seen.append((done, total))).passed
    assert seen[-1] == (5, 5)
    stop = threading.Event()
    stop.set()
    cancelled = run(Workspace(tmp_path), cancel=stop)
    assert cancelled.cancelled and cancelled.cases == [] and not cancelled.passed


def test_one_case(tmp_path: Path) -> None:
    """case_ids runs only those cases; ids the dataset does not hold raise CaseNotFound."""
    workspace = recorded_workspace(
        tmp_path, [case("a", ["src/app.py"]), case("b", ["src/app.py"])], [answer("a", []), answer("b", ["src/app.py"])]
    )
    (only,) = run(workspace, case_ids=["b"]).cases
    assert only.id == "b" and only.line == 1
    with pytest.raises(CaseNotFound):
        run(Workspace(tmp_path), case_ids=["zzz"])


def test_describe_case_reads_like_the_rag400_message(tmp_path: Path) -> None:
    """A case's line gives every figure, the first relevant rank and what was missed, with why."""
    workspace = recorded_workspace(
        tmp_path,
        [case("a", ["src/app.py", "docs/approvals.md"])],
        [answer("a", ["x", "y", "src/app.py", "z", "w", "v", "u", "t", "s", "r"])],
        RECORDED_SUITE.replace("k: 3", "k: 10"),
    )
    (only,) = run(workspace).cases
    assert describe_case(only) == (
        "recall 0.50 (1/2) · precision 0.10 · MRR 0.33 (first relevant at rank 3) · hit@1 0 · retrieved 10 · semantic 1"
        " — missed: docs/approvals.md (not among the 10 hits the target returned)"
    )


def test_a_case_line_names_the_first_ten_missed_values_and_counts_the_others(tmp_path: Path) -> None:
    """A case that missed thousands of values names the first ten in its line and says how many more;
    the result itself keeps every one."""
    expected = [f"src/{number}.py" for number in range(2_500)]
    workspace = recorded_workspace(tmp_path, [case("a", expected)], [answer("a", ["src/0.py"])])
    (only,) = run(workspace).cases
    assert len(only.missed) == 2_499
    line = describe_case(only)
    assert line.endswith("src/10.py (not the one hit the target returned) and 2,489 more (`rag-lsp run --format json` lists them all)")
    assert "src/11.py" not in line


HIT_SUITE = """\
suites:
  - id: evidence
    dataset: .punica/evals/gdi.jsonl
    metrics:
      rag.hit_at_k: {k: 2, language: de}
    thresholds: {rag.hit_at_k: 0.5}
"""


def gdi_row(row_id: str, references: list[str], chunks: list[str]) -> str:
    return json.dumps(
        {"input_id": row_id, "prompt": "?", "reference_contexts": references, "sut_response": "", "retrieved_context": chunks}
    )


def test_a_hit_at_k_suite_scores_gdi_rows(tmp_path: Path) -> None:
    """A metric suite scores each gdi row with rag.hit_at_k at its config; no references is a broken row."""
    make_workspace(tmp_path, suite=HIT_SUITE, dataset="")
    rows = [
        gdi_row("hit", ["the gateway needs two approvers"], ["noise", "the gateway needs two approvers to sign"]),
        gdi_row("late", ["the gateway needs two approvers"], ["noise", "noise", "the gateway needs two approvers"]),
        gdi_row("none", [], ["anything"]),
    ]
    (tmp_path / ".punica" / "evals" / "gdi.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    result = run(Workspace(tmp_path))
    hit, late, none = result.cases
    assert hit.scores == {"rag.hit_at_k": 1.0} and hit.first_relevant_rank == 2
    assert "Treffer" in hit.detail.explanation
    assert late.scores == {"rag.hit_at_k": 0.0}
    assert none.scores is None and none.broken
    assert result.aggregates["rag.hit_at_k"] == 0.5
    assert result.broken and not result.passed


def test_dataset_lines_are_numbered_as_the_checks_number_them(tmp_path: Path) -> None:
    """CRLF endings, blank lines (a U+00A0 among them), non-ASCII, huge integers, deep nesting, a repeated key, bad lines, lines above max-line-bytes and bytes that are not UTF-8: the checks and a run read the same lines, blank, refused (RAG005) or not JSON (RAG002) alike, and results land on the checks' line numbers."""
    from rag_lsp.core.checking.analyze import analyze_workspace
    from rag_lsp.core.running.datasets import Unreadable, read_dataset
    from rag_lsp.core.workspace.settings import Settings

    relevant = '"expect": {"relevant": ["src/app.py"]}'
    long_number = "9" * 4400
    lines = [
        case("ünïcode-😀", ["src/app.py"]).encode(),
        b"",
        json.dumps({"id": "big", "input": {"query": "x", "seed": 2**70}, "expect": {"relevant": ["src/app.py"]}}).encode(),
        b"   ",
        json.dumps({"id": 7, "input": {}, "expect": {"relevant": ["src/app.py"]}}).encode(),
        b'{"id": "nan", "input": {"x": NaN}, "expect": {"relevant": ["src/app.py"]}}',
        case("last", ["src/app.py"]).encode(),
        "\u00a0".encode(),
        "\u3000\x1f".encode(),
        f'{{"id": "dup", "id": "twice", "input": {{"query": "x"}}, {relevant}}}'.encode(),
        f'{{"id": "deep", "input": {{"query": "x", "deep": {"[" * 300 + "]" * 300}}}, {relevant}}}'.encode(),
        f'{{"id": "deeper", "input": {{"query": "x", "deep": {"[" * 1100 + "]" * 1100}}}, {relevant}}}'.encode(),
        f'{{"id": "digits", "input": {{"query": "x", "seed": {long_number}}}, {relevant}}}'.encode(),
        f'{{"id": "long", "input": {{"query": "{"x" * 9000}"}}, {relevant}}}'.encode(),
        f'{{"id": "caf\xe9", "input": {{"query": "x"}}, {relevant}}}'.encode("latin-1"),
        f'{{"id": "long\xe9", "input": {{"query": "{"x" * 9000}"}}, {relevant}}}'.encode("latin-1"),
        f'{{"id": "digits\xe9", "input": {{"query": "x", "seed": {long_number}}}, {relevant}}}'.encode("latin-1"),
        case("end", ["src/app.py"]).encode(),
    ]
    # Line -> how both read it; a line not named is blank (the CRLF after the last line leaves one).
    verdicts = {0: "read", 2: "read", 4: "read", 5: "RAG002", 6: "read", 9: "read", 10: "read", 11: "RAG002", 12: "RAG005",
                13: "RAG005", 14: "RAG002", 15: "RAG005", 16: "RAG002", 17: "read"}
    make_workspace(tmp_path, suite=RECORDED_SUITE)
    (tmp_path / ".punica" / "evals" / "code.jsonl").write_bytes(b"\r\n".join(lines) + b"\r\n")
    (tmp_path / ".punica" / "targets.yaml").write_text(TARGETS, encoding="utf-8")
    (tmp_path / ".punica" / "runs").mkdir()
    recording = [answer(case_id, ["src/app.py"]) for case_id in ("ünïcode-😀", "big", "last", "twice", "deep", "end")]
    (tmp_path / ".punica" / "runs" / "rec.jsonl").write_text("\n".join(recording) + "\n", encoding="utf-8")
    settings = Settings(max_line_bytes=8192)
    workspace = Workspace(tmp_path, settings)

    checked = Workspace(tmp_path, settings).parsed_dataset(".punica/evals/code.jsonl").rows
    assert {line: "RAG005" if row.refused else "RAG002" if row.error else "read" for line, row in checked} == verdicts
    ran = read_dataset(workspace, ".punica/evals/code.jsonl").rows
    assert {line: value.code if isinstance(value, Unreadable) else "read" for line, value in ran} == verdicts
    findings = analyze_workspace(Workspace(tmp_path, settings))[".punica/evals/code.jsonl"]
    assert {(f.range.start.line, f.code) for f in findings if f.code in ("RAG002", "RAG005")} == {(line, code) for line, code in verdicts.items() if code != "read"}

    result = run(workspace)
    by_id = {c.id: c for c in result.cases}
    assert by_id["ünïcode-😀"].line == 0 and by_id["ünïcode-😀"].scores is not None
    assert by_id["big"].line == 2 and by_id["big"].scores is not None
    assert by_id["line 5"].line == 4 and "no string `id`" in by_id["line 5"].broken
    assert by_id["line 6"].line == 5 and "NaN is not valid JSON" in by_id["line 6"].broken
    assert by_id["last"].line == 6
    # The value of a repeated key is the last one, in the checks (RAG003) and in a run.
    assert by_id["twice"].line == 9 and by_id["twice"].scores is not None
    assert by_id["deep"].line == 10 and by_id["deep"].scores is not None
    assert by_id["end"].line == 17 and by_id["end"].scores is not None
    for line, code in verdicts.items():
        if code != "read":
            assert by_id[f"line {line + 1}"].line == line and by_id[f"line {line + 1}"].broken.endswith(f"({code})"), line
    assert [c.line for c in result.cases] == sorted(verdicts)


def test_a_rag_suite_over_gdi_rows_is_refused_as_the_checks_say(tmp_path: Path) -> None:
    """The shape a run reads is the shape the checks compute: RAG110 refuses a rag suite over gdi rows."""
    from rag_lsp.core.running.datasets import read_dataset

    rows = [gdi_row(f"r{n}", ["a"], ["a"]) for n in range(3)] + [case("c", ["src/app.py"])]
    workspace = recorded_workspace(tmp_path, rows, [])
    assert read_dataset(workspace, ".punica/evals/code.jsonl").shape == workspace.dataset_shape(".punica/evals/code.jsonl")
    result = run(workspace)
    assert result.error is not None and "RAG110" in result.error


def test_a_scored_case_built_for_speed_has_each_figure_in_its_own_field() -> None:
    """CaseResult.scored_case (positional, for speed) fills the same fields as naming each one."""
    outcome = score_case(["a.md", "b.md", "c.md"], ["x.md", "a.md", None, "c.md"], "keyword", "path", 3)
    hits = (Hit(path="x.md"), Hit(path="a.md"))
    fast = CaseResult.scored_case("q", 4, outcome, "keyword", hits)
    named = CaseResult(
        "q", 4, outcome.scores, missed=outcome.missed, first_relevant_rank=outcome.first_relevant_rank, mode="keyword",
        hits=hits, relevant_ranks=outcome.relevant_ranks, found=outcome.found, expected=outcome.expected,
        ranks=outcome.ranks, why_missed=outcome.why_missed, answer=outcome.answer,
    )
    assert fast == named
    assert fast.reason is None and fast.code is None and fast.error is None and fast.at_k is None
    assert fast.missed == ("b.md", "c.md") and fast.first_relevant_rank == 2 and fast.found == 1 and fast.expected == 3


def test_a_suite_asked_for_by_a_dataset_that_it_does_not_read_names_those_that_do(tmp_path: Path) -> None:
    """Asked to run suite 'nope' of a dataset that suite 'code' reads: the answer names the suites that read it; a dataset no suite reads says so."""
    from rag_lsp.core.running.selection import choose_for_suite

    make_workspace(tmp_path)
    (tmp_path / ".punica" / "evals" / "other.jsonl").write_text("", encoding="utf-8")
    workspace = Workspace(tmp_path)
    assert choose_for_suite(workspace, ".punica/evals/code.jsonl", None, "nope").note == (
        "no suite 'nope' reads .punica/evals/code.jsonl; the suites reading it: 'code'"
    )
    assert choose_for_suite(workspace, ".punica/evals/other.jsonl", None, None).note == "no suite reads .punica/evals/other.jsonl"
    assert [item.suite.id for item in choose_for_suite(workspace, ".punica/evals/code.jsonl", None, "code").suites] == ["code"]


def test_a_run_reads_no_file_its_builtin_index_holds_to_say_why_it_was_missed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A missed file whose text the builtin target's index holds is not returned, said without reading
    it again; a missed file named like text that holds none is read, once, and missed as never searched."""
    from rag_lsp.core.checking import expectedpaths

    dataset = "\n".join(
        case(f"c{n}", ["src/app.py", "docs/guide.md", "src/nul.ts"], input={"query": "startup", "topK": 1}) for n in range(3)
    )
    make_workspace(tmp_path, dataset=dataset + "\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text("# Guide\n\nHow the app starts up.\n", encoding="utf-8")
    (tmp_path / "src" / "nul.ts").write_bytes(b"startup\x00startup\n")
    (tmp_path / ".punica" / "targets.yaml").write_text(
        'targets:\n  vectors.query:\n    builtin: {corpora: {code: ["**"]}, retrieval: keyword}\n', encoding="utf-8"
    )
    read: list[str] = []
    why_no_text = expectedpaths.why_no_text
    monkeypatch.setattr(expectedpaths, "why_no_text", lambda path, limit: read.append(path.name) or why_no_text(path, limit))
    result = run(Workspace(tmp_path))
    reasons = [{miss.value: miss.reason for miss in outcome.why_missed} for outcome in result.cases]
    assert all(found.get("src/nul.ts") == "never-searched" for found in reasons)
    assert all(reason == "not-returned" for found in reasons for value, reason in found.items() if value != "src/nul.ts")
    assert sum(len(found) for found in reasons) > 3
    assert read == ["nul.ts"]
