"""status --format html -o FILE: a page with a row per recorded declaration, written for its
owner only."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from customs_batch.state import LocalBackend, RecordStatus, ResourceRecord
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
    assert page.summary.startswith("1 recorded document (1 ExportCancellation), 0 rejected")
    assert "1 not decided by customs yet" in page.summary


def test_status_html_of_an_empty_state_says_nothing_to_list(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "status", "--format", "html")
    assert code == 0
    assert read_page(out).rows == [] and "Nothing to list." in out


def test_an_undone_cancellation_is_shown_not_done_in_json_and_html(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Found in review: text marked it undone, but the JSON had no such flag (rejected false,
    # pending false, summary.blocking 0) and the page's row was green, as if cancelled.
    # Its declaration is not submitted at the service: the next apply sends it again.
    record = ResourceRecord(
        "ExportCancellation/c",
        RecordStatus.APPLIED,
        "cancel-export",
        {"declarationId": 501},
        outputs={"declarationId": 501, "canceled": False},
        remote_status="ready",
    )
    with LocalBackend(tmp_path / ".customs-batch" / "local").open("seed") as session:
        session.record(record)
    code, out, _ = run(capsys, "status", "--format", "json")
    assert code == 0
    body = json.loads(out)
    assert body["formatVersion"] == 1
    (entry,) = body["declarations"]
    assert (entry["undone"], entry["rejected"], entry["pending"]) == (True, False, False)
    assert body["summary"]["blocking"] == 1
    code, out, _ = run(capsys, "status", "--format", "html")
    assert code == 0
    page = read_page(out)
    assert page.rows == [["ExportCancellation/c", "applied", "501", "ready", "undone", "0", ""]]
    assert page.row_classes == ["tone-refused"]
    assert page.summary.startswith("1 recorded document (1 ExportCancellation), 1 rejected, undone")


def test_the_summary_counts_every_listed_document_by_its_kind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Found in review: the summary said "3 declaration(s) and cancellation(s)" of a page
    # listing a departure and two party updates, which status lists too.
    records = [
        ResourceRecord(
            "DepartureDeclaration/d",
            RecordStatus.APPLIED,
            "submit-departure",
            {"commercialReference": "CR-1"},
            outputs={"declarationId": 7003, "status": "processing"},
            remote_status="processing",
        ),
        ResourceRecord(
            "TransitPartyUpdate/u",
            RecordStatus.APPLIED,
            "update-transit-parties",
            {"declarationId": 7003, "Consignee": {"eoriNo": "DE1"}},
            outputs={"declarationId": 7003, "status": "ready"},
            remote_status="ready",
        ),
        ResourceRecord(
            "TransitPartyUpdate/v",
            RecordStatus.APPLIED,
            "update-transit-parties",
            {"declarationId": 7009, "Consignee": {"eoriNo": "DE2"}},
            outputs={"declarationId": 7009, "status": "ready"},
            remote_status="ready",
        ),
    ]
    with LocalBackend(tmp_path / ".customs-batch" / "local").open("seed") as session:
        for record in records:
            session.record(record)
    code, out, _ = run(capsys, "status", "--format", "html")
    assert code == 0
    page = read_page(out)
    assert len(page.rows) == 3
    assert page.summary.startswith(
        "3 recorded documents (1 DepartureDeclaration, 2 TransitPartyUpdate), "
    )
    assert "declaration(s) and cancellation(s)" not in page.summary


def test_the_summary_of_an_empty_state_counts_no_document(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "status", "--format", "html")
    assert code == 0
    assert read_page(out).summary.startswith("0 recorded documents, 0 rejected")
