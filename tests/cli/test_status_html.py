"""status --format html -o FILE: a page with a row per recorded declaration, written for its
owner only."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from tests.cli.conftest import run
from tests.cli.test_pending_cancellation import ADDRESS, CANCEL_502, Customs
from tests.html_page import read_page


def test_status_as_a_page_written_for_its_owner_only(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "manifests").mkdir()
    (tmp_path / "manifests" / "cancel.yaml").write_text(CANCEL_502)
    Customs(monkeypatch, "granted")
    code, _, err = run(capsys, "apply", "--auto-approve")
    assert code == 0, err

    code, out, err = run(capsys, "status", "--format", "html", "-o", "status.html")
    assert (code, out) == (0, ""), err
    written = tmp_path / "status.html"
    assert stat.S_IMODE(written.stat().st_mode) == 0o600
    page = read_page(written.read_text(encoding="utf-8"))
    assert page.headers == [
        "address",
        "status",
        "ID",
        "at the service",
        "customs",
        "errors",
        "service's errors and notes",
    ]
    assert page.rows == [[ADDRESS, "applied", "502", "cancellation_requested", "pending", "0", ""]]
    assert page.row_classes == ["tone-pending"]
    assert page.summary.startswith("1 declaration(s) and cancellation(s), 0 rejected")
    assert "1 not decided by customs yet" in page.summary


def test_status_html_of_an_empty_state_says_nothing_to_list(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "status", "--format", "html")
    assert code == 0
    assert read_page(out).rows == [] and "Nothing to list." in out
