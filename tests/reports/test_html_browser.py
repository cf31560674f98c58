"""The HTML reports in a real browser (headless Chromium from Debian's packages, driven by
Selenium): each page loads without a console error, the filter hides rows, a click on a
header sorts, and the dependency graph is drawn (boxes and arrows of a real size)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium.webdriver import Chrome as WebDriver
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from tests.browser import chromium, console, missing
from tests.html_page import read_page
from tests.reports.html_pages import plan_page, results_page, validate_page

pytestmark = pytest.mark.skipif(missing() is not None, reason=missing() or "")


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    with chromium() as driver:
        yield driver


def _open(driver: WebDriver, page: Path) -> None:
    driver.get(page.as_uri())
    console(driver)  # what an earlier page left
    driver.refresh()


def _console_errors(driver: WebDriver) -> list[str]:
    return [str(entry["message"]) for entry in console(driver) if entry["level"] == "SEVERE"]


def _visible_rows(driver: WebDriver) -> list[list[str]]:
    # One call for the whole table: a call per cell would take seconds.
    rows: list[list[str]] = driver.execute_script(
        "return Array.prototype.slice.call(document.querySelectorAll('#rows tbody tr'))"
        ".filter(function (r) { return r.getClientRects().length > 0; })"
        ".map(function (r) { return Array.prototype.map.call(r.cells, function (c) {"
        " return c.innerText.trim(); }); });"
    )
    return rows


def _column(driver: WebDriver, header: str) -> int:
    headers = [th.text.strip(" ▲▼") for th in driver.find_elements(By.CSS_SELECTOR, "#rows th")]
    return headers.index(header)


def _sort_by(driver: WebDriver, header: str) -> None:
    index = _column(driver, header)
    driver.find_elements(By.CSS_SELECTOR, "#rows th button")[index].click()


def _filter(driver: WebDriver, text: str) -> None:
    box = driver.find_element(By.ID, "filter")
    # As a user does (clear() would fire no input event): select what is there, type over it.
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys(text or Keys.BACKSPACE)


def _assert_graph_drawn(driver: WebDriver, nodes: int, edges: int) -> None:
    boxes = driver.find_elements(By.CSS_SELECTOR, "svg.graph g.node rect")
    arrows = driver.find_elements(By.CSS_SELECTOR, "svg.graph path.edge")
    assert (len(boxes), len(arrows)) == (nodes, edges)
    for element in [*boxes, *arrows]:
        size = driver.execute_script(
            "var b = arguments[0].getBBox(); return [b.width, b.height];", element
        )
        assert size[0] > 0 or size[1] > 0, size
    for rect in boxes:
        assert rect.size["width"] > 0 and rect.size["height"] > 0


def test_the_validate_report_filters_sorts_and_draws(browser: WebDriver, tmp_path: Path) -> None:
    page = validate_page(tmp_path)
    written = read_page(page.read_text(encoding="utf-8"))
    total = len(written.rows)  # one finding or more per broken example
    _open(browser, page)
    try:
        assert _console_errors(browser) == []
        summary = browser.find_element(By.ID, "summary").text
        assert re.fullmatch(r"\d+ errors, \d+ warnings in \d+ documents \(\d+ files\)", summary)
        everything = _visible_rows(browser)
        assert len(everything) == total > 10

        _filter(browser, "code.eori")
        narrowed = _visible_rows(browser)
        assert 0 < len(narrowed) < len(everything)
        rule = _column(browser, "rule")
        assert all(row[rule] == "code.eori" for row in narrowed)
        assert browser.find_element(By.ID, "shown").text == f"{len(narrowed)} of {total} rows"
        _filter(browser, "")
        assert len(_visible_rows(browser)) == total

        severity = _column(browser, "severity")
        first = [row[severity] for row in _visible_rows(browser)]
        _sort_by(browser, "severity")
        ascending = [row[severity] for row in _visible_rows(browser)]
        assert ascending == sorted(first) and ascending != first
        _sort_by(browser, "severity")
        assert [row[severity] for row in _visible_rows(browser)] == sorted(first, reverse=True)

        # A location sorts by file, then by line as a number (12 after 9).
        _sort_by(browser, "where")
        where = _column(browser, "where")
        places = [row[where] for row in _visible_rows(browser)]
        keys = [
            (p.rsplit(":", 2)[0], int(p.rsplit(":", 2)[1])) for p in places if p.count(":") >= 2
        ]
        assert keys == sorted(keys)

        documents = len(browser.find_elements(By.CSS_SELECTOR, "svg.graph g.node"))
        assert documents == written.count("g", "node") > 10
        arrows = len(browser.find_elements(By.CSS_SELECTOR, "svg.graph path.edge"))
        assert arrows > 0
        _assert_graph_drawn(browser, documents, arrows)
        assert _console_errors(browser) == []
    finally:
        browser.get("about:blank")


def test_the_plan_report_shows_old_and_new_values_filters_sorts_and_draws(
    browser: WebDriver, tmp_path: Path
) -> None:
    page = plan_page(tmp_path)
    written = read_page(page.read_text(encoding="utf-8"))
    _open(browser, page)
    try:
        assert _console_errors(browser) == []
        rows = _visible_rows(browser)
        assert len(rows) == len(written.rows) > 10
        action, address, values = (
            _column(browser, "action"),
            _column(browser, "address"),
            _column(browser, "values (old → new)"),
        )
        (update,) = [row for row in rows if row[action] == "update"]
        assert update[address] == "TemplateGroup/eu-road"
        # The markup in the new value is text on the page, not a bold element.
        assert 'name: "EU road imports" → "EU road imports <b>& co</b>"' in update[values]
        assert browser.find_elements(By.CSS_SELECTOR, "#rows tbody b") == []

        _filter(browser, "movement/")
        movements = _visible_rows(browser)
        assert len(movements) == sum(row[1].startswith("Movement/") for row in written.rows) > 0
        assert all(row[address].startswith("Movement/") for row in movements)
        _filter(browser, "")

        before = [row[address] for row in _visible_rows(browser)]
        _sort_by(browser, "address")
        after = [row[address] for row in _visible_rows(browser)]
        assert after == sorted(before, key=str.lower) and after != before

        _assert_graph_drawn(browser, len(rows), written.count("path", "edge"))
        assert written.count("path", "edge") > 0
        assert _console_errors(browser) == []
    finally:
        browser.get("about:blank")


def test_the_results_report_shows_each_spreadsheet_row_filters_and_sorts(
    browser: WebDriver, tmp_path: Path
) -> None:
    page = results_page(tmp_path)
    written = read_page(page.read_text(encoding="utf-8"))
    _open(browser, page)
    try:
        assert _console_errors(browser) == []
        rows = _visible_rows(browser)
        assert len(rows) == len(written.rows) == 6  # 2 departure rows, 4 movement rows
        result, where, errors = (
            _column(browser, "result"),
            _column(browser, "where"),
            _column(browser, "service's errors"),
        )
        (refused,) = [row for row in rows if row[result] == "rejected"]
        assert "sheet 'Movements', row 3" in refused[where]
        assert "rpty_nobody is not a party" in refused[errors]
        (skipped,) = [row for row in rows if row[result] == "skipped"]
        assert "row 4" in skipped[where]

        _filter(browser, "Movements")
        assert len(_visible_rows(browser)) == 4
        _filter(browser, "")

        before = [row[result] for row in _visible_rows(browser)]
        _sort_by(browser, "result")
        after = [row[result] for row in _visible_rows(browser)]
        assert after == sorted(before, key=str.lower) and after != before
        assert _console_errors(browser) == []
    finally:
        browser.get("about:blank")


def test_a_script_error_on_a_page_is_seen_as_a_console_error(
    browser: WebDriver, tmp_path: Path
) -> None:
    # The check the report tests rely on: a broken script would not pass unnoticed.
    page = tmp_path / "broken.html"
    page.write_text("<!DOCTYPE html><title>x</title><script>undefinedFunction();</script>")
    _open(browser, page)
    try:
        assert any("undefinedFunction" in message for message in _console_errors(browser))
    finally:
        browser.get("about:blank")
