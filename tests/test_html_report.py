"""``rag-lsp run --html FILE [--history DIR]`` through the real command line: the page's content, its
escaping, and what it refuses (the page in a browser: test_html_browser.py)."""

from __future__ import annotations

import html
import json
import os
import re
import time
from pathlib import Path

import pytest
from reportpages import HOSTILE_IDS, page_data, report_workspace
from workspaces import EXAMPLES, rag_lsp

# Slow (runs the command line in processes of its own): `pytest -m "not slow"` leaves it out.
pytestmark = pytest.mark.slow


def run_html(root: Path, cwd: Path, *args: str) -> tuple[str, dict, str]:
    """The page, the JSON report of the same run, and stderr."""
    page = cwd / "report.html"
    result = rag_lsp("run", str(root), "--format", "json", "--html", str(page), *args, cwd=cwd)
    assert result.returncode in (0, 1), result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    return page.read_text(encoding="utf-8"), json.loads(result.stdout), result.stderr


def test_the_page_holds_every_suite_its_thresholds_and_every_case(tmp_path: Path) -> None:
    """Each suite with its verdict and its means against its thresholds; every case of the JSON report, with
    its figures and each value it missed with why."""
    root = report_workspace(tmp_path / "ws")
    page, report, _ = run_html(root, tmp_path)
    for suite in report["suites"]:
        block = re.search(r'<div class="suite" data-suite="%s".*?</div>' % re.escape(html.escape(suite["id"])), page, re.S)
        assert block, suite["id"]
        assert ("passed" if suite["passed"] else "failed") in block.group(0)
        for threshold in suite["thresholds"]:
            row = re.search(r'<tr data-metric="%s">(.*?)</tr>' % re.escape(threshold["metric"]), block.group(0))
            assert row and f"{threshold['value']:.3f}" in row.group(1) and f"{threshold['threshold']:g}" in row.group(1)
    data = page_data(page)
    assert data["suites"] == [suite["id"] for suite in report["suites"]]
    by_id = {(data["suites"][row[0]], row[1]): row for row in data["cases"]}
    cases = [(suite["id"], case) for suite in report["suites"] for case in suite["cases"]]
    assert len(by_id) == len(cases) == len(data["cases"])
    for suite_id, case in cases:
        row = by_id[(suite_id, case["id"])]
        if case["scores"] is None:
            assert row[2] is None and row[5] == case["broken"]
            continue
        for metric, value in zip(data["metrics"], data["figures"][row[2]]):
            assert value == case["scores"][metric]
        assert row[3] == case["first_relevant_rank"]
        assert [(data["strings"][value], rank, data["strings"][why]) for value, rank, why in row[4]] == [
            (miss["value"], miss["rank"], miss["message"]) for miss in case["why_missed"]
        ]


def test_dataset_strings_are_text_never_markup(tmp_path: Path) -> None:
    """Case ids like `<img src=x onerror=alert(1)>` and `</script>` and a suite id with tags are escaped in the
    page and kept whole in its data."""
    root = report_workspace(tmp_path / "ws")
    page, _, _ = run_html(root, tmp_path)
    for hostile in HOSTILE_IDS + ("billing <b>bold</b>",):
        assert hostile not in page
    assert "<img" not in page and "<b>" not in page
    # One element of JSON data and one script: no case id opened another.
    assert page.count("<script") == 2 and page.count("</script>") == 2
    data = page_data(page)
    assert set(HOSTILE_IDS) <= {row[1] for row in data["cases"]}
    assert "billing <b>bold</b>" in data["suites"]
    assert html.escape("billing <b>bold</b>") in page


def test_the_page_fetches_nothing(tmp_path: Path) -> None:
    """No address to fetch: its policy forbids every source but its own inline style and hashed script."""
    page, _, _ = run_html(report_workspace(tmp_path / "ws"), tmp_path)
    assert "default-src 'none'" in page
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page)
    assert "@import" not in page and "url(" not in page


def test_sweep_slices_comparison_and_trend_are_shown_when_asked(tmp_path: Path) -> None:
    """--k adds recall and MRR against k (a plot and its figures); --by the slices; --baseline the means with
    their intervals and the cases that moved; --history the trend of each mean."""
    root = report_workspace(tmp_path / "ws")
    plain, report, _ = run_html(root, tmp_path)
    for section in ('id="at-k"', 'id="slices"', 'id="comparison"', 'id="history"'):
        assert section not in plain
    baseline = tmp_path / "history" / "baseline.json"
    baseline.parent.mkdir()
    # The baseline: every case of the first suite found everything at rank 1.
    for case in report["suites"][0]["cases"]:
        case["scores"] = dict(case["scores"], **{"rag.recall": 1.0, "rag.mrr": 1.0})
    baseline.write_text(json.dumps(report), encoding="utf-8")
    page, swept, _ = run_html(
        root, tmp_path, "--k", "1,3,5", "--by", "metadata.lang", "--baseline", str(baseline), "--history", str(baseline.parent)
    )
    sweep = page[page.index('id="at-k"') : page.index('id="comparison"')]
    assert sweep.count("<svg") == 2
    for suite in swept["suites"]:
        for k, means in suite["at_k"].items():
            row = re.search(r'<tr data-k="%s">(.*?)</tr>' % k, sweep[sweep.index(html.escape(suite["id"])) :])
            assert f"{means['rag.recall']:.3f}" in row.group(1) and f"{means['rag.mrr']:.3f}" in row.group(1)
    comparison = page[page.index('id="comparison"') : page.index('id="slices"')]
    assert "95% CI" in comparison and "real loss" in comparison
    assert re.search(r"\d+ worse</summary>", comparison)
    slices = page[page.index('id="slices"') : page.index('id="history"')]
    assert "by metadata.lang" in slices and "<td>de</td>" in slices and "<td>en</td>" in slices
    trend = page[page.index('id="history"') : page.index('id="cases"')]
    assert trend.count("<svg") == 2 and "this run" in trend and "baseline.json" in trend
    data = page_data(page)
    assert data["compared"] and {row[6] for row in data["cases"] if row[0] == 0} >= {1}


def test_history_reports_are_ordered_by_their_files_time_and_others_skipped(tmp_path: Path) -> None:
    """Reports oldest first by modification time; a file that is not JSON or not a run report is skipped with
    a warning; files not named *.json are not read."""
    root = report_workspace(tmp_path / "ws", count=6)
    _, report, _ = run_html(root, tmp_path)
    history = tmp_path / "runs"
    history.mkdir()
    for name, recall, written in (("b-newer.json", 0.25, 2_000_000_000), ("a-older.json", 0.75, 1_000_000_000)):
        for suite in report["suites"]:
            suite["aggregates"]["rag.recall"] = recall
        (history / name).write_text(json.dumps(report), encoding="utf-8")
        os.utime(history / name, (written, written))
    (history / "notes.json").write_text("not json", encoding="utf-8")
    (history / "findings.json").write_text("[]", encoding="utf-8")
    (history / "answers.jsonl").write_text("{}\n", encoding="utf-8")
    page, _, stderr = run_html(root, tmp_path, "--history", str(history))
    assert "notes.json skipped: not valid JSON" in stderr
    assert "findings.json skipped: not a run report" in stderr
    assert "answers.jsonl" not in stderr
    trend = page[page.index('id="history"') : page.index('id="cases"')]
    assert "2 earlier reports" in trend
    older = time.strftime("%Y-%m-%d %H:%M", time.localtime(1_000_000_000))
    newer = time.strftime("%Y-%m-%d %H:%M", time.localtime(2_000_000_000))
    assert trend.index(f"rag.recall at {older}: 0.750") < trend.index(f"rag.recall at {newer}: 0.250")
    assert trend.index(f"at {newer}") < trend.index("at this run")


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        (["--history", "{tmp}/missing"], "--history {tmp}/missing does not exist"),
        (["--history", "{tmp}/file.txt"], "is not a folder"),
        (["--history-only", "{tmp}"], "give --html FILE too"),
        (["--html-into-file"], "cannot write"),
        (["--html-folder"], "is a folder, not a regular file"),
    ],
)
def test_bad_destinations_and_history_are_usage_errors(tmp_path: Path, arguments: list[str], said: str) -> None:
    """A history folder that does not exist or is a file, --history without --html, an --html path under a file
    or naming a folder: a message and exit 2, no traceback."""
    (tmp_path / "file.txt").write_text("x", encoding="utf-8")
    (tmp_path / "folder").mkdir()
    extra = {
        "--history-only": ["--history", str(tmp_path)],
        "--html-into-file": ["--html", str(tmp_path / "file.txt" / "report.html")],
        "--html-folder": ["--html", str(tmp_path / "folder")],
    }
    args = extra.get(arguments[0]) or ["--html", str(tmp_path / "report.html"), *(a.format(tmp=tmp_path) for a in arguments)]
    result = rag_lsp("run", str(EXAMPLES), *args, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert said.format(tmp=tmp_path) in result.stderr


def test_a_link_or_a_pipe_is_never_replaced(tmp_path: Path) -> None:
    """--html naming a symbolic link or a named pipe: refused before the run (exit 2), both left as they were."""
    target = tmp_path / "kept.html"
    target.write_text("mine", encoding="utf-8")
    link = tmp_path / "link.html"
    link.symlink_to(target)
    pipe = tmp_path / "pipe.html"
    os.mkfifo(pipe)
    for name in (link, pipe):
        result = rag_lsp("run", str(EXAMPLES), "--html", str(name), cwd=tmp_path)
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
        assert "not replaced" in result.stderr or "symbolic link" in result.stderr
    assert link.is_symlink() and target.read_text(encoding="utf-8") == "mine"
    assert pipe.is_fifo()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["kept.html", "link.html", "pipe.html"]


def test_a_regular_file_is_replaced_whole(tmp_path: Path) -> None:
    """An existing page is replaced by the new one; no partial file is left beside it; stdout is the report as
    without --html."""
    page = tmp_path / "out" / "report.html"
    page.parent.mkdir()
    page.write_text("old", encoding="utf-8")
    result = rag_lsp("run", str(EXAMPLES), "--format", "json", "--html", str(page), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert page.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert os.listdir(page.parent) == ["report.html"]
    plain = rag_lsp("run", str(EXAMPLES), "--format", "json", cwd=tmp_path)
    assert json.loads(result.stdout) == json.loads(plain.stdout)


def test_by_gives_slices_to_the_page_beside_any_format(tmp_path: Path) -> None:
    """--by with --format junit is refused without --html, and goes to the page with it."""
    root = report_workspace(tmp_path / "ws", count=4, hostile=False)
    refused = rag_lsp("run", str(root), "--format", "junit", "--by", "metadata.lang", cwd=tmp_path)
    assert refused.returncode == 2 and "--html" in refused.stderr
    page = tmp_path / "p.html"
    result = rag_lsp("run", str(root), "--format", "junit", "--by", "metadata.lang", "--html", str(page), cwd=tmp_path)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr  # billing fails its threshold
    assert 'id="slices"' in page.read_text(encoding="utf-8")
