"""The page of ``rag-lsp run --html`` in a real browser (headless Chromium through Playwright): it shows
every suite and the figures of the JSON report, sorts and filters its cases, logs no error, and asks for
nothing beyond its own file.

Skipped when Playwright or a Chromium is missing (the reason says which): Debian's ``chromium`` at
/usr/bin/chromium, or the one RAG_LSP_CHROMIUM names. .ci/run installs both and runs this file with
RAG_LSP_REQUIRE_BROWSER=1, which makes a missing browser a failure instead."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from reportpages import HOSTILE_IDS, report_workspace
from workspaces import rag_lsp

pytestmark = pytest.mark.slow


def _chromium() -> str | None:
    named = os.environ.get("RAG_LSP_CHROMIUM")
    if named:
        return named
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def _unavailable() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright is not installed (pip install '.[test]')"
    if _chromium() is None:
        return "no Chromium here (apt-get install chromium, or name one in RAG_LSP_CHROMIUM)"
    return None


@pytest.fixture(scope="module")
def browser():
    reason = _unavailable()
    if reason is not None:
        if os.environ.get("RAG_LSP_REQUIRE_BROWSER"):
            pytest.fail(f"the browser test must run here: {reason}")
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=_chromium(), args=["--no-sandbox"])
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A run with every section: a sweep, slices, a baseline that the first suite lost against, a history."""
    folder = tmp_path_factory.mktemp("html-browser")
    root = report_workspace(folder / "ws")
    first = rag_lsp("run", str(root), "--format", "json", cwd=folder)
    baseline = json.loads(first.stdout)
    for case in baseline["suites"][0]["cases"]:
        case["scores"] = dict(case["scores"], **{"rag.recall": 1.0})
    history = folder / "history"
    history.mkdir()
    (history / "baseline.json").write_text(json.dumps(baseline), encoding="utf-8")
    page = folder / "report.html"
    result = rag_lsp(
        "run", str(root), "--format", "json", "--html", str(page), "--k", "1,3,5", "--by", "metadata.lang",
        "--baseline", str(history / "baseline.json"), "--history", str(history),
        "--compare-json", str(folder / "compare.json"), cwd=folder,
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    return {
        "page": page,
        "json": json.loads(result.stdout),
        "compare": json.loads((folder / "compare.json").read_text(encoding="utf-8")),
    }


@pytest.fixture()
def opened(browser, report):
    """The page opened from its file, with every console message, page error, dialog and request kept."""
    seen: dict[str, list] = {"console": [], "errors": [], "dialogs": [], "requests": []}
    page = browser.new_page()
    page.on("console", lambda message: seen["console"].append((message.type, message.text)))
    page.on("pageerror", lambda error: seen["errors"].append(str(error)))
    page.on("dialog", lambda dialog: (seen["dialogs"].append(dialog.message), dialog.dismiss()))
    page.on("request", lambda request: seen["requests"].append(request.url))
    url = report["page"].as_uri()
    page.goto(url)
    page.wait_for_selector("#case-table tbody tr")
    yield page, seen, url
    page.close()


def _column(page, title: str) -> int:
    titles = page.eval_on_selector_all("#case-table thead th", "ths => ths.map(th => th.textContent)")
    return titles.index(title)


def _cells(page, index: int) -> list[str]:
    return page.eval_on_selector_all(
        "#case-table tbody tr", f"rows => rows.map(row => row.children[{index}].textContent)"
    )


def _number(text: str) -> float | None:
    return None if text == "—" else float(text)


def test_the_page_shows_every_suite_and_the_figures_of_the_json_report(opened, report) -> None:
    """Each suite with its verdict and means; every case with its figures and what it missed; nothing logged,
    no dialog, no request but the file itself."""
    page, seen, url = opened
    for suite in report["json"]["suites"]:
        block = page.locator(".suite").filter(has=page.locator(".suite-id", has_text=suite["id"]))
        assert block.count() == 1, suite["id"]
        assert block.locator(".verdict").first.text_content() == ("passed" if suite["passed"] else "failed")
        for metric, value in suite["aggregates"].items():
            assert block.locator(f'tr[data-metric="{metric}"] td').nth(1).text_content() == f"{value:.3f}"
    rows = page.eval_on_selector_all(
        "#case-table tbody tr", "rows => rows.map(row => [row.dataset.suite, row.dataset.case, row.children[2].textContent, row.textContent])"
    )
    cases = {(suite["id"], case["id"]): case for suite in report["json"]["suites"] for case in suite["cases"]}
    assert len(rows) == len(cases)
    assert page.text_content("#count") == f"{len(cases)} of {len(cases)} cases"
    for suite_id, case_id, recall, text in rows:
        case = cases[(suite_id, case_id)]
        if case["scores"] is None:
            assert case["broken"] in text
            continue
        assert _number(recall) == pytest.approx(case["scores"]["rag.recall"], abs=0.0005)
        for miss in case["why_missed"]:
            assert f"{miss['value']} ({miss['message']})" in text
    for hostile in HOSTILE_IDS:
        assert page.locator("#case-table tbody tr td:nth-child(2)", has_text=hostile).count() == 1
    assert page.locator("img").count() == 0
    assert page.locator("svg.plot").count() == 4  # recall and MRR against k, the trend: one per suite each
    assert seen["errors"] == [] and seen["dialogs"] == []
    assert [message for message in seen["console"] if message[0] in ("error", "warning")] == []
    assert seen["requests"] == [url]


def test_a_click_on_a_column_sorts_the_cases(opened) -> None:
    """A figure's column sorts high to low, once more low to high; the case column sorts by id."""
    page, seen, _ = opened
    recall = _column(page, "recall")
    page.click(f"#case-table thead th:nth-child({recall + 1})")
    values = [_number(text) for text in _cells(page, recall)]
    scored = [value for value in values if value is not None]
    assert scored == sorted(scored, reverse=True) and scored[0] > scored[-1]
    assert values[-1] is None  # the broken case: no figures, last either way
    page.click(f"#case-table thead th:nth-child({recall + 1})")
    values = [_number(text) for text in _cells(page, recall)]
    assert [v for v in values if v is not None] == sorted(scored) and values[-1] is None
    rank = _column(page, "first relevant rank")
    page.click(f"#case-table thead th:nth-child({rank + 1})")
    ranks = [_number(text) for text in _cells(page, rank)]
    known = [value for value in ranks if value is not None]
    assert known == sorted(known, reverse=True)
    ids = _cells(page, 1)
    page.click("#case-table thead th:nth-child(2)")
    ordered = _cells(page, 1)
    assert sorted(ordered) == sorted(ids) and [i for i in ordered if i.startswith("q-")] == sorted(i for i in ids if i.startswith("q-"))
    assert seen["errors"] == []


def test_the_filters_narrow_the_cases(opened, report) -> None:
    """Text matches a case id or a value missed; the suite, status and change selectors narrow to theirs."""
    page, seen, _ = opened
    suites = report["json"]["suites"]
    page.fill("#filter", "q-01")
    assert sorted(_cells(page, 1)) == sorted(c["id"] for c in suites[0]["cases"] if "q-01" in c["id"])
    page.fill("#filter", "doc-7")
    expected = {
        case["id"]
        for suite in suites
        for case in suite["cases"]
        if "doc-7" in case["id"] or any("doc-7" in value for value in case["missed"])
    }
    assert set(_cells(page, 1)) == expected and expected
    page.fill("#filter", "")
    page.select_option("#suite-filter", label=suites[1]["id"])
    assert set(_cells(page, 0)) == {suites[1]["id"]} and len(_cells(page, 0)) == len(suites[1]["cases"])
    page.select_option("#status-filter", "broken")
    assert _cells(page, 1) == [c["id"] for c in suites[1]["cases"] if c["broken"]]
    page.select_option("#suite-filter", "")
    page.select_option("#status-filter", "worse")
    worse = {case["id"] for suite in report["compare"]["suites"] for case in suite["worse"]}
    assert set(_cells(page, 1)) == worse and worse
    page.select_option("#status-filter", "missed")
    missed = {(s["id"], c["id"]) for s in suites for c in s["cases"] if c["missed"] and not c["broken"]}
    assert set(zip(_cells(page, 0), _cells(page, 1))) == missed
    page.fill("#filter", "no case has this")
    assert _cells(page, 1) == [] and page.text_content("#count").startswith("0 of")
    assert seen["errors"] == []
