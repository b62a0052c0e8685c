"""Make docs/report.png, the README's picture of `rag-lsp run --html`: the page of the bundled examples/
workspace, as `rag-lsp run examples/ --html report.html` writes it, in headless Chromium.

    python docs/report_screenshot.py

Needs the test extra (Playwright) and a Chromium: Debian's /usr/bin/chromium, or the one RAG_LSP_CHROMIUM
names.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main() -> int:
    from playwright.sync_api import sync_playwright

    chromium = os.environ.get("RAG_LSP_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("no Chromium here: apt-get install chromium, or name one in RAG_LSP_CHROMIUM")
    with tempfile.TemporaryDirectory() as folder:
        subprocess.run(
            [sys.executable, "-m", "rag_lsp", "run", "examples/", "--html", str(Path(folder) / "report.html")],
            cwd=REPO, check=True, stdout=subprocess.DEVNULL,
        )
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1320, "height": 900})
            page.goto((Path(folder) / "report.html").as_uri())
            page.wait_for_selector("#case-table tbody tr")
            # The weakest cases first, as a reader would look: a click on recall sorts high to low, another low to high.
            page.click("#case-table thead th:nth-child(3)")
            page.click("#case-table thead th:nth-child(3)")
            page.screenshot(path=str(REPO / "docs" / "report.png"))
            browser.close()
    print(f"docs/report.png: {(REPO / 'docs' / 'report.png').stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
