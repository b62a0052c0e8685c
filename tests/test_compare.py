"""Comparing a run with a baseline (`--baseline`): deltas, changed cases, regressions and the reports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from workspaces import make_workspace, rag_lsp

from rag_lsp.core.running.compare import compare_case, compare_run
from rag_lsp.core.running.comparison import COUNTER, NEW, REMOVED, HitChange, describe_change, report_json, vs_baseline
from rag_lsp.core.running.report import BaselineError, parse_report
from rag_lsp.core.running.results import CaseResult
from rag_lsp.core.workspace.manifests import HIGHER, LOWER


def scores(recall: float, mrr: float = 1.0, precision: float = 0.5, retrieved: float = 4.0) -> dict:
    return {
        "rag.recall": recall,
        "rag.precision": precision,
        "rag.mrr": mrr,
        "rag.hit@1": 1.0 if mrr == 1.0 else 0.0,
        "rag.retrieved": retrieved,
        "rag.mode.semantic": 1.0,
    }


def case(case_id: str, figures: dict | None, ranks: dict | None = None, missed=(), broken=None) -> dict:
    return {
        "id": case_id,
        "scores": figures,
        "broken": broken,
        "missed": list(missed),
        "first_relevant_rank": min(ranks.values()) if ranks else None,
        "mode": "semantic",
        "ranks": ranks,
    }


def suite(suite_id: str, cases: list[dict], aggregates: dict) -> dict:
    return {"id": suite_id, "passed": True, "broken": False, "aggregates": aggregates, "thresholds": [], "cases": cases}


BASELINE = {
    "suites": [
        suite(
            "code",
            [
                case("a", scores(1.0), {"x": 1, "y": 2}),
                case("b", scores(0.5, mrr=0.33), {"x": 3}, missed=["y"]),
                case("c", scores(1.0), {"x": 1}),
                case("d", None, broken="nothing relevant declared"),
                case("e", scores(1.0), {"x": 1}),
                case("g", scores(1.0), {"x": 1}),
                case("h", scores(1.0), {"x": 1, "y": 2}),
            ],
            {"rag.recall": 0.9, "rag.mrr": 0.8, "rag.retrieved": 4.0, "latency": 1.0},
        ),
        suite("gone", [case("z", scores(1.0), {"x": 1})], {"rag.recall": 1.0}),
    ]
}
CURRENT = {
    "suites": [
        suite(
            "code",
            [
                case("a", scores(0.5), {"x": 1}, missed=["y"]),  # lost y, which was at rank 2
                case("b", scores(1.0, mrr=0.33), {"x": 3, "y": 4}),  # found y
                case("c", scores(1.0), {"x": 1}),  # unchanged
                case("d", scores(1.0), {"x": 1}),  # scored again
                case("f", scores(1.0), {"x": 1}),  # added
                case("g", None, broken="the target failed"),  # now broken
                case("h", scores(1.0), {"x": 1, "y": 3}),  # y moved 2 -> 3; the figures did not move
            ],
            {"rag.recall": 0.85, "rag.mrr": 0.8, "rag.retrieved": 2.0, "latency": 1.2},
        ),
        suite("fresh", [case("n", scores(1.0), {"x": 1})], {"rag.recall": 1.0}),
    ]
}


def direction(metric: str) -> str:
    return {"rag.retrieved": COUNTER, "latency": LOWER}.get(metric, HIGHER)


def compared(tolerance: float = 0.0):
    baseline = parse_report(json.dumps(BASELINE))
    current = parse_report(json.dumps(CURRENT)).suites
    return compare_run(baseline, current, tolerance=tolerance, direction=direction, name="base.json")


def test_a_comparison_names_exactly_the_changed_cases() -> None:
    """Worse, better, added and removed cases are exactly those that changed; a lost hit is named with the rank it had."""
    comparison = compared()
    code = next(s for s in comparison.suites if s.id == "code")
    assert sorted(change.id for change in code.worse) == ["a", "g"]
    assert sorted(change.id for change in code.better) == ["b", "d"]
    assert code.added == ["f"]
    assert code.removed == ["e"]
    assert code.unchanged == 2
    a = next(change for change in code.worse if change.id == "a")
    assert a.lost == (HitChange("y", 2, None),)
    assert describe_change(a) == "recall 1.00 → 0.50 (−0.50) — lost y (was rank 2)"
    b = next(change for change in code.better if change.id == "b")
    assert b.gained == (HitChange("y", None, 4),)
    g = next(change for change in code.worse if change.id == "g")
    assert describe_change(g) == "now broken: the target failed"
    statuses = {s.id: s.status for s in comparison.suites}
    assert statuses == {"code": "compared", "fresh": NEW, "gone": REMOVED}


def test_regressions_follow_each_metrics_direction_and_the_tolerance() -> None:
    """A mean regresses when it moves the wrong way beyond the tolerance: down, or up for lower-is-better; never a counter."""
    regressions = {(suite, delta.metric) for suite, delta in compared().regressions()}
    assert regressions == {("code", "rag.recall"), ("code", "latency")}
    assert {delta.metric for _, delta in compared(tolerance=0.1).regressions()} == {"latency"}
    assert not compared(tolerance=0.25).regressed
    report = report_json(compared())
    assert report["regressed"] is True
    assert report["baseline"] == "base.json"
    code = report["suites"][0]
    assert [item["id"] for item in code["worse"]] == ["a", "g"]
    assert code["worse"][0]["lost"] == [{"value": "y", "from": 2, "to": None, "why": None}]
    json.dumps(report)  # plain JSON data


def test_a_mean_that_disappears_is_a_regression() -> None:
    """A suite mean the baseline had and this run has not (the suite was not run) counts as regressed; its cases,
    not run either, are not removed."""
    baseline = parse_report(json.dumps(BASELINE))
    now = parse_report(json.dumps({"suites": [{**suite("code", [], {}), "error": "not run: errors"}]}))
    comparison = compare_run(baseline, now.suites, direction=direction)
    code = comparison.suites[0]
    assert code.error == "not run: errors"
    assert code.removed == [] and code.added == []
    assert {delta.metric for _, delta in comparison.regressions()} == {"rag.recall", "rag.mrr", "latency"}


def test_an_editor_can_show_one_cases_delta() -> None:
    """compare_case takes a run's CaseResult beside a baseline case: `−0.50 vs baseline` for the recall."""
    baseline = parse_report(json.dumps(BASELINE)).suites[0].cases[0]
    now = CaseResult("a", 0, scores(0.5), missed=("y",), first_relevant_rank=1, ranks={"x": 1})
    change = compare_case(baseline, now)
    assert vs_baseline(change.delta_of("rag.recall")) == "−0.50 vs baseline"
    assert vs_baseline(change.delta_of("rag.mrr")) == ""


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "is not valid JSON"),
        ('[{"path": "a.yaml"}]', "is not a run report of `rag-lsp run --format json` (a JSON array"),
        ('{"suites": [{"id": 1}]}', "is not a run report"),
        ('{"results": []}', "is not a run report"),
    ],
)
def test_a_baseline_that_is_not_a_run_report_is_refused(text: str, message: str) -> None:
    """Text that is not JSON, or JSON that is not a run report, raises BaselineError saying which."""
    with pytest.raises(BaselineError) as raised:
        parse_report(text, "the baseline b.json")
    assert message in str(raised.value)
    assert "the baseline b.json" in str(raised.value)


# ---------------------------------------------------------------- the command line

RECORDED_SUITE = """\
suites:
  - id: code
    target: {kind: capability, id: rec}
    dataset: .punica/evals/code.jsonl
    engines: [rag]
    options: {rag: {match: path, k: 5}}
    thresholds:
      rag.recall: 0.1
"""




def write_run(root: Path, answers: dict[str, list[str]]) -> None:
    cases = [
        json.dumps({"id": case_id, "input": {"query": case_id}, "expect": {"relevant": ["src/a.py", "src/b.py"]}})
        for case_id in answers
    ]
    (root / ".punica" / "evals" / "code.jsonl").write_text("\n".join(cases) + "\n", encoding="utf-8")
    lines = [
        json.dumps({"id": case_id, "hits": [{"path": path} for path in paths], "mode": "semantic"})
        for case_id, paths in answers.items()
    ]
    (root / ".punica" / "runs" / "rec.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    make_workspace(tmp_path, suite=RECORDED_SUITE, dataset="")
    (tmp_path / ".punica" / "targets.yaml").write_text("targets:\n  rec:\n    recorded: .punica/runs/rec.jsonl\n")
    (tmp_path / ".punica" / "runs").mkdir()
    write_run(tmp_path, {"a": ["src/a.py", "src/b.py"], "b": ["x", "src/a.py"], "c": ["src/a.py"], "d": ["src/b.py"]})
    baseline = rag_lsp("run", "--format", "json", cwd=tmp_path)
    assert baseline.returncode == 0, baseline.stderr
    (tmp_path / "base.json").write_text(baseline.stdout, encoding="utf-8")
    # a loses src/b.py (rank 2), b finds src/b.py, c is removed, d is unchanged, n is added (and finds nothing):
    # recall 0.625 -> 0.5, precision 0.875 -> 0.625.
    write_run(tmp_path, {"a": ["src/a.py", "x"], "b": ["src/b.py", "src/a.py"], "d": ["src/b.py"], "n": ["x"]})
    return tmp_path


@pytest.mark.slow
def test_baseline_in_the_text_json_and_markdown_reports(workspace: Path) -> None:
    """--baseline prints the deltas and names the changed cases; --compare-json and --summary-md say the same; the summary is appended."""
    summary = workspace / "summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    result = rag_lsp(
        "run", "--baseline", "base.json", "--compare-json", "out/compare.json", "--summary-md", str(summary), cwd=workspace
    )
    assert result.returncode == 0, result.stderr  # regressions alone do not fail without --fail-on-regression
    out = result.stdout.split("vs baseline base.json", 1)[1]
    (recall,) = [line for line in out.splitlines() if line.strip().startswith("rag.recall")]
    assert recall.split() == ["rag.recall", "0.62", "0.50", "−0.12", "✗", "regressed"]
    assert "worse (1):" in out
    assert (
        "a  recall 1.00 → 0.50 (−0.50) · precision 1.00 → 0.50 (−0.50)"
        " — lost src/b.py (was rank 2, now not among the 2 hits the target returned)"
    ) in out
    assert "better (1):" in out
    assert "b  recall 0.50 → 1.00 (+0.50)" in out
    assert "added since the baseline (1): n" in out
    assert "removed since the baseline (1): c" in out
    report = json.loads((workspace / "out" / "compare.json").read_text())
    (code,) = report["suites"]
    assert [c["id"] for c in code["worse"]] == ["a"]
    assert [c["id"] for c in code["better"]] == ["b"]
    assert code["added"] == ["n"]
    assert code["removed"] == ["c"]
    assert code["unchanged"] == 1
    assert report["regressed"]
    assert {r["metric"] for r in report["regressions"]} == {"rag.recall", "rag.precision", "rag.mrr"}
    markdown = summary.read_text()
    assert markdown.startswith("earlier step\n## ✅ rag-lsp run: 1 passed")
    assert "### Compared with the baseline `base.json`" in markdown
    assert "Worse (1)" in markdown
    assert "- `a`: recall 1.00 → 0.50 (−0.50)" in markdown
    assert "lost src/b.py (was rank 2, now not among the 2 hits the target returned)" in markdown
    assert "**Added since the baseline (1):** `n`" in markdown


@pytest.mark.slow
def test_fail_on_regression_and_tolerance(workspace: Path) -> None:
    """--fail-on-regression exits 1 when a mean drops by more than --tolerance, 0 within it; json stays on stdout, and the summary's heading says the job fails."""
    failed = rag_lsp("run", "--baseline", "base.json", "--fail-on-regression", "--format", "json", "--summary-md", "failed.md", cwd=workspace)
    assert failed.returncode == 1
    assert json.loads(failed.stdout)["suites"][0]["passed"]
    assert "regressed beyond the tolerance: code rag.recall" in failed.stderr
    assert (workspace / "failed.md").read_text().startswith("## ❌ rag-lsp run: 1 passed, regressed from the baseline\n")
    tolerated = rag_lsp("run", "--baseline", "base.json", "--fail-on-regression", "--tolerance", "0.3", "--summary-md", "tolerated.md", cwd=workspace)
    assert tolerated.returncode == 0, tolerated.stdout
    assert (workspace / "tolerated.md").read_text().startswith("## ✅ rag-lsp run: 1 passed\n")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("content", "args", "message"),
    [
        ("{oops", (), "is not valid JSON"),
        ("[]", (), "is not a run report"),
        (None, (), "does not exist"),
        ("{}", ("--tolerance", "-1"), "--tolerance must be a number of at least 0"),
        ('{"suites": [{"id": "code", "aggregates": {"rag.recall": 1e999}, "cases": []}]}', (), "at `$.suites[0].aggregates[...]`"),
        ('{"suites": [{"id": "code", "aggregates": {}, "cases": [{"id": "a", "scores": {"rag.recall": -1e999}}]}]}', (), "at `$.suites[0].cases[0].scores[...]`"),
    ],
)
def test_a_bad_baseline_exits_2(workspace: Path, content: str | None, args: tuple, message: str) -> None:
    """A baseline that is missing, not JSON or not a run report, one holding a figure that reads as infinity (or a negative tolerance) is a usage error, exit 2."""
    if content is not None:
        (workspace / "bad.json").write_text(content, encoding="utf-8")
    result = rag_lsp("run", "--baseline", "bad.json", *args, cwd=workspace)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_comparison_flags_need_a_baseline(workspace: Path) -> None:
    """--fail-on-regression, --tolerance and --compare-json without --baseline are usage errors (exit 2)."""
    for args in (("--fail-on-regression",), ("--tolerance", "0.1"), ("--compare-json", "c.json")):
        result = rag_lsp("run", *args, cwd=workspace)
        assert result.returncode == 2
        assert "--baseline" in result.stderr


@pytest.mark.slow
def test_a_run_narrowed_by_case_compares_the_same_cases(workspace: Path) -> None:
    """With --case, the baseline is narrowed to those cases and its means taken over them: nothing else is removed or compared."""
    result = rag_lsp("run", "--baseline", "base.json", "--case", "a", "--case", "b", "--compare-json", "c.json", cwd=workspace)
    assert result.returncode == 0, result.stderr
    (code,) = json.loads((workspace / "c.json").read_text())["suites"]
    assert code["removed"] == []
    assert code["added"] == []
    recall = next(item for item in code["aggregates"] if item["metric"] == "rag.recall")
    assert recall["baseline"] == 0.75
    assert recall["current"] == 0.75


# ---------------------------------------------------------------- how sure a move is


def test_each_mean_carries_the_paired_comparison_of_its_cases() -> None:
    """A suite mean compared with the baseline carries its cases scored on both sides, paired by id; a counter none."""
    code = next(s for s in compared().suites if s.id == "code")
    recall = next(d for d in code.aggregates if d.metric == "rag.recall")
    # a, b, c and h were scored in both runs (d was broken, g is broken now, e and f on one side).
    assert recall.significance is not None
    assert recall.significance.cases == 4
    assert (recall.significance.better, recall.significance.worse, recall.significance.equal) == (1, 1, 2)
    assert recall.significance.difference == pytest.approx(0.0)
    assert next(d for d in code.aggregates if d.metric == "rag.retrieved").significance is None
    paired = report_json(compared())["suites"][0]["aggregates"][0]["paired"]
    assert paired["cases"] == 4
    assert paired["exact"] is True
    assert set(paired) == {"cases", "difference", "ci95", "p", "exact", "better", "worse", "equal"}


def test_with_a_significance_level_a_move_that_is_noise_does_not_regress() -> None:
    """With alpha, a mean beyond the tolerance regresses only when its cases got worse significantly; a vanished mean still does."""
    baseline = parse_report(json.dumps(BASELINE))
    current = parse_report(json.dumps(CURRENT)).suites
    comparison = compare_run(baseline, current, direction=direction, alpha=0.05)
    assert not comparison.regressed
    now = parse_report(json.dumps({"suites": [{**suite("code", [], {}), "error": "not run: errors"}]}))
    gone = compare_run(baseline, now.suites, direction=direction, alpha=0.05)
    assert {delta.metric for _, delta in gone.regressions()} == {"rag.recall", "rag.mrr", "latency"}


@pytest.fixture
def eight_cases(tmp_path: Path) -> Path:
    """A workspace whose baseline found both files of 8 cases; today each case loses one."""
    make_workspace(tmp_path, suite=RECORDED_SUITE, dataset="")
    (tmp_path / ".punica" / "targets.yaml").write_text("targets:\n  rec:\n    recorded: .punica/runs/rec.jsonl\n")
    (tmp_path / ".punica" / "runs").mkdir()
    names = [f"q{number}" for number in range(8)]
    write_run(tmp_path, {name: ["src/a.py", "src/b.py"] for name in names})
    baseline = rag_lsp("run", "--format", "json", cwd=tmp_path)
    assert baseline.returncode == 0, baseline.stderr
    (tmp_path / "base.json").write_text(baseline.stdout, encoding="utf-8")
    write_run(tmp_path, {name: ["src/a.py"] for name in names})
    return tmp_path


@pytest.mark.slow
def test_fail_on_regression_with_significance_fails_only_on_a_real_loss(eight_cases: Path) -> None:
    """8 of 8 cases losing a file is a real loss at 0.05 (exact p = 2/256) and fails; at 0.001 it is noise and passes."""
    real = rag_lsp(
        "run", "--baseline", "base.json", "--fail-on-regression", "--significance", "0.05",
        "--compare-json", "c.json", "--summary-md", "s.md", cwd=eight_cases,
    )
    assert real.returncode == 1, real.stdout
    out = real.stdout.split("vs baseline base.json (tolerance 0, significance 0.05)", 1)[1]
    assert "−0.50 recall (95% CI −0.50 to −0.50, p = 0.008, 0 better, 8 worse): a real loss on 8 cases" in out
    assert "regressed beyond the tolerance and noise: code rag.recall" in out
    report = json.loads((eight_cases / "c.json").read_text())
    assert report["significance"] == 0.05
    recall = next(item for item in report["suites"][0]["aggregates"] if item["metric"] == "rag.recall")
    assert recall["regressed"] is True
    assert recall["paired"]["p"] == pytest.approx(2 / 256)
    assert (recall["paired"]["better"], recall["paired"]["worse"]) == (0, 8)
    markdown = (eight_cases / "s.md").read_text()
    assert markdown.startswith("## ❌ rag-lsp run: 1 passed, regressed from the baseline\n")
    assert "a real loss on 8 cases" in markdown
    noise = rag_lsp("run", "--baseline", "base.json", "--fail-on-regression", "--significance", "0.001", cwd=eight_cases)
    assert noise.returncode == 0, noise.stdout
    assert "within noise" in noise.stdout
    assert "no mean regressed beyond the tolerance and noise (tolerance 0, significance 0.001)" in noise.stdout
    plain = rag_lsp("run", "--baseline", "base.json", "--fail-on-regression", cwd=eight_cases)
    assert plain.returncode == 1  # without --significance, any drop beyond the tolerance fails as before


@pytest.mark.slow
@pytest.mark.parametrize("level", ["0", "1", "-0.1", "nan", "inf", "five"])
def test_a_significance_level_outside_0_to_1_exits_2(eight_cases: Path, level: str) -> None:
    """--significance must be a level strictly between 0 and 1: anything else is a usage error, exit 2, no traceback."""
    result = rag_lsp("run", "--baseline", "base.json", "--significance", level, cwd=eight_cases)
    assert result.returncode == 2
    assert "--significance" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_significance_needs_a_baseline(eight_cases: Path) -> None:
    """--significance without a baseline is a usage error (exit 2)."""
    result = rag_lsp("run", "--significance", "0.05", cwd=eight_cases)
    assert result.returncode == 2
    assert "--baseline" in result.stderr


@pytest.mark.slow
def test_a_suite_not_run_now_is_said_once_and_removes_no_case(workspace: Path) -> None:
    """A suite whose target cannot run now is "not run now: <why>" (the words once) in the text and the summary,
    and lists none of its cases as removed: its dataset did not change."""
    (workspace / ".punica" / "targets.yaml").write_text("targets:\n  rec:\n    recorded: .punica/runs/missing.jsonl\n")
    result = rag_lsp(
        "run", "--baseline", "base.json", "--compare-json", "compare.json", "--summary-md", "summary.md", cwd=workspace
    )
    assert result.returncode == 1, result.stderr
    out = result.stdout.split("vs baseline base.json", 1)[1]
    assert "not run now: .punica/targets.yaml has 1 error" in out
    assert "removed since the baseline" not in out
    markdown = (workspace / "summary.md").read_text()
    assert "- `code` was not run: .punica/targets.yaml has 1 error" in markdown
    assert "removed since the baseline" not in markdown.lower()
    for text in (out, markdown):
        assert "not run: not run" not in text and "not run now: not run" not in text
    (code,) = json.loads((workspace / "compare.json").read_text())["suites"]
    assert code["removed"] == [] and code["error"].startswith("not run: ")
