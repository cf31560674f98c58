"""A headless Chromium driven by Selenium, for the tests of the HTML reports.

Debian's ``chromium`` and ``chromium-driver`` packages (``make test`` installs them when the
machine has none, like PostgreSQL). The browser starts with a new empty profile in a
temporary folder and with everything that would reach the network off (no sync, no
component updates, no background requests): a report must open offline. Its home folder
is that temporary folder too, so a test run leaves nothing in the user's.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.remote.command import Command

CHROMIUM = Path("/usr/bin/chromium")
DRIVER = Path("/usr/bin/chromedriver")

FLAGS = (
    "--headless",
    # As root (CI, containers) Chromium refuses to start with its sandbox.
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
)


def missing() -> str | None:
    """Why no browser can run here, or None."""
    for path, package in ((CHROMIUM, "chromium"), (DRIVER, "chromium-driver")):
        if not path.exists() and shutil.which(path.name) is None:
            return (
                f"no {path} on this machine: `make test` installs it "
                f"(apt-get install {package}), or install it yourself"
            )
    return None


@contextmanager
def chromium(width: int = 1280, height: int = 900) -> Iterator[webdriver.Chrome]:
    """A headless Chromium with a new empty profile, quit at the end whatever happens."""
    problem = missing()
    if problem is not None:
        raise RuntimeError(problem)
    with tempfile.TemporaryDirectory(prefix="customs-batch-chromium-") as profile:
        options = webdriver.ChromeOptions()
        options.binary_location = str(CHROMIUM if CHROMIUM.exists() else shutil.which("chromium"))
        for flag in FLAGS:
            options.add_argument(flag)
        options.add_argument(f"--user-data-dir={profile}")
        options.add_argument(f"--window-size={width},{height}")
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        driver_path = DRIVER if DRIVER.exists() else Path(shutil.which("chromedriver") or DRIVER)
        # Chromium keeps a few files under the home folder whatever its profile (dconf's
        # cache): the home of the driver and the browser is the temporary folder too.
        home = {
            "HOME": profile,
            "XDG_CACHE_HOME": f"{profile}/cache",
            "XDG_CONFIG_HOME": f"{profile}/config",
        }
        service = Service(str(driver_path), env={**os.environ, **home})
        driver = webdriver.Chrome(options=options, service=service)
        try:
            yield driver
        finally:
            driver.quit()


def console(driver: webdriver.Chrome) -> list[dict[str, Any]]:
    """The browser console's entries since the last call (``level`` ``SEVERE`` for an
    error): ``get_log("browser")``, which selenium leaves untyped."""
    entries: list[dict[str, Any]] = driver.execute(Command.GET_LOG, {"type": "browser"})["value"]
    return entries
