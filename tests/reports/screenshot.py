"""The screenshot of the HTML plan report in the documentation (docs/images/html-report.png).

    make docs-screenshot

or ``.venv/bin/python -m tests.reports.screenshot docs/images/html-report.png``: the plan
of :func:`tests.reports.html_pages.plan_page`, opened in headless Chromium.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from tests.browser import chromium
from tests.reports.html_pages import plan_page

WIDTH, HEIGHT = 1280, 1000


def screenshot(target: Path) -> None:
    """Write the screenshot of the examples' plan report to ``target`` (PNG)."""
    with tempfile.TemporaryDirectory(prefix="customs-batch-screenshot-") as folder:
        page = plan_page(Path(folder))
        with chromium(WIDTH, HEIGHT) as driver:
            driver.get(page.as_uri())
            target.parent.mkdir(parents=True, exist_ok=True)
            if not driver.save_screenshot(str(target)):
                raise RuntimeError(f"Chromium could not write {target}")


if __name__ == "__main__":
    screenshot(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/images/html-report.png"))
