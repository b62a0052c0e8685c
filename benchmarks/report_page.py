"""Time `rag-lsp run --html`: its cost beside the same run without it, the page's size, and how long
Chromium takes to show it.

    python benchmarks/report_page.py [--cases 10000,100000] [--repeat 3] [--no-browser]

For each count, writes the workspace of benchmarks/run.py (that many rag cases, a recording of a
retrieval answering 10 hits per case: the cheapest target, so the run itself is fast), then times the
whole `rag-lsp run` process with and without `--html FILE`, for `--format text` and `--format json`. The
two commands alternate, and each figure is the best of --repeat runs, so load from other processes on
the machine weighs on both alike. Prints the ratio (the goal: at most 1.2x at 100,000 cases) and the
page's size (the goal: at most 2 MB for 10,000 cases).

With Playwright and a Chromium (Debian's /usr/bin/chromium, or RAG_LSP_CHROMIUM), it also opens each
page from its file in headless Chromium and prints the time from navigation to the table of cases shown
(the goal: at most 2 s for 10,000 cases; best of --repeat).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import best_alternating, make_cases, write_workspace  # noqa: E402
from bytecode import compile_package  # noqa: E402

GOAL_RATIO = 1.2
GOAL_BYTES = 2 * 1024 * 1024
GOAL_RENDER_S = 2.0


def render_seconds(page: Path, repeat: int) -> float | None:
    """Best time from navigation to the table of cases shown, in headless Chromium; None without one."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("  (Playwright is not installed: no render time)")
        return None
    chromium = os.environ.get("RAG_LSP_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("  (no Chromium here: no render time)")
        return None
    best = float("inf")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        for _ in range(repeat):
            tab = browser.new_page()
            start = time.perf_counter()
            tab.goto(page.as_uri(), wait_until="load")
            tab.wait_for_selector("#case-table tbody tr")
            # Until the page has been laid out and painted once.
            tab.evaluate("() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")
            best = min(best, time.perf_counter() - start)
            tab.close()
        browser.close()
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", default="10000,100000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-browser", action="store_true")
    arguments = parser.parse_args()
    compile_package()
    failed = False
    for count in (int(part) for part in arguments.cases.split(",")):
        print(f"== rag-lsp run over {count:,} recorded cases, with and without --html (best of {arguments.repeat}) ==")
        with tempfile.TemporaryDirectory() as folder:
            root = write_workspace(Path(folder) / "ws", make_cases(count))
            page = Path(folder) / "report.html"
            for output in ("text", "json"):
                plain_command = [sys.executable, "-m", "rag_lsp", "run", str(root), "--format", output]
                html_command = [*plain_command, "--html", str(page)]
                plain, with_html = best_alternating([plain_command, html_command], arguments.repeat)
                ratio = with_html[0] / plain[0]
                # The goal is for a large run; on a small one the fixed cost of a process weighs more.
                failed |= count >= 100_000 and ratio > GOAL_RATIO
                print(
                    f"--format {output:<4}  without: {plain[0]:5.2f} s wall ({plain[1]:5.2f} s CPU)   "
                    f"--html: {with_html[0]:5.2f} s wall ({with_html[1]:5.2f} s CPU)   "
                    f"ratio {ratio:.2f}x wall, {with_html[1] / plain[1]:.2f}x CPU"
                    + (f"  (goal <= {GOAL_RATIO}x)" if count >= 100_000 else "")
                )
            size = page.stat().st_size
            goal = "  (goal <= 2 MiB)" if count <= 10_000 else ""
            failed |= count <= 10_000 and size > GOAL_BYTES
            print(f"page: {size:,} bytes ({size / 1024 / 1024:.2f} MiB){goal}")
            if not arguments.no_browser:
                seconds = render_seconds(page, arguments.repeat)
                if seconds is not None:
                    goal = f"  (goal <= {GOAL_RENDER_S} s)" if count <= 10_000 else ""
                    failed |= count <= 10_000 and seconds > GOAL_RENDER_S
                    print(f"opened and shown in headless Chromium: {seconds:.2f} s{goal}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
