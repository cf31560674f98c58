"""The note of comparisons found unchanged, at the planner: a record held as a database row's
text counts as one from the state file, and anything of the record in the digest counts."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from customs_batch.load_cache import LoadCache
from customs_batch.manifest.document import Document
from customs_batch.planning import Action, Plan, plan_changes
from customs_batch.planning.unchanged import Unchanged
from customs_batch.state.model import RecordStatus, ResourceRecord, State
from customs_batch.state.records import Records
from tests.planning.helpers import movement, parsed_records

WHEN = "2026-01-01T00:00:00+00:00"
NOW = datetime(2026, 1, 2, tzinfo=UTC)


def _cache(tmp_path: Path) -> LoadCache:
    return LoadCache(str(tmp_path / "cache"), b"fingerprint", 1 << 30)


def _version(document: Document) -> bytes:
    return b"v" * 16 + document.index.to_bytes(8, "little")


def _rows(documents: list[Document], **changes: object) -> dict[str, str]:
    """Each document's record as a database row holds it (JSON text, no address)."""
    rows = {}
    for document in documents:
        record = ResourceRecord(
            str(document.address),
            RecordStatus.APPLIED,
            "create",
            dict(document.spec),
            outputs={"id": document.index},
            updated_at=WHEN,
        ).with_changes(**changes)
        rows[str(document.address)] = json.dumps(record.to_json(), sort_keys=True)
    return rows


def _plan(tmp_path: Path, documents: list[Document], rows: dict[str, str]) -> Plan:
    unchanged = Unchanged(_cache(tmp_path), "db", _version)
    state = State("lineage", 1, Records.from_texts(rows, "the database"))
    plan = plan_changes(list(documents), state, now=NOW, unchanged=unchanged)
    unchanged.save()
    return plan


def test_a_row_s_text_is_a_record_s_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    documents = [movement(f"mov-{n}", n, hawb=f"hawb_{n}") for n in range(5)]
    rows = _rows(documents)
    cold = _plan(tmp_path, documents, rows)
    assert not cold.has_changes
    parsed = parsed_records(monkeypatch)
    assert _plan(tmp_path, documents, rows) == cold
    assert parsed == []
    # A row that changed is read again, and its document planned as it now stands.
    rows["Movement/mov-2"] = _rows(documents[2:3], status=RecordStatus.UNKNOWN)["Movement/mov-2"]
    warm = _plan(tmp_path, documents, rows)
    assert parsed == ["Movement/mov-2"]
    assert warm.changes[2].action is not Action.NO_CHANGE
    assert warm == _plan(tmp_path / "none", documents, rows)


def test_a_lane_s_places_are_read_from_the_rows_texts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each movement's record holds the place it was sent at; a re-plan that finds them
    # unchanged reads those places from the texts, parsing none of them.
    documents = [movement(f"mov-{n}", n, quantity=n + 1) for n in range(4)]
    rows = {}
    for place, document in enumerate(documents):
        identity = ["shipmentId=shp_7Hk2Lm", "hawbId=hawb_a1", "action=ISL", f"place={place}"]
        row = json.loads(_rows([document])[str(document.address)])
        rows[str(document.address)] = json.dumps({**row, "identity": identity}, sort_keys=True)
    cold = _plan(tmp_path, documents, rows)
    assert not cold.has_changes
    parsed = parsed_records(monkeypatch)
    assert _plan(tmp_path, documents, rows) == cold
    assert parsed == []
    # mov-1 removed from the manifests: mov-2 and mov-3 keep the places they were sent at
    # (read from their texts), and a new movement comes after them.
    added = [documents[0], *documents[2:], movement("mov-new", 4, quantity=9)]
    warm = _plan(tmp_path, added, rows)
    assert warm.changes[3].action is Action.CREATE
    assert warm.changes[3].identity[-1] == "place=4"


def test_a_re_plan_counts_unchanged_movements_from_the_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Movements of one lane found unchanged: the next plan counts each in its lane from the
    # place the note kept, without reading any record's identity again, and plans a new one
    # after the places they were sent at, as a plan without the note does.
    documents = [movement(f"mov-{n}", n, quantity=n + 1) for n in range(4)]
    rows = {}
    for place, document in enumerate(documents):
        identity = ["shipmentId=shp_7Hk2Lm", "hawbId=hawb_a1", "action=ISL", f"place={place + 3}"]
        row = json.loads(_rows([document])[str(document.address)])
        rows[str(document.address)] = json.dumps({**row, "identity": identity}, sort_keys=True)
    cold = _plan(tmp_path, documents, rows)
    assert not cold.has_changes
    from customs_batch.planning import identity as identities

    read: list[object] = []
    real = identities._recorded_identity

    def reading(text: bytes | str) -> tuple[str, ...] | None:
        read.append(text)
        return real(text)

    monkeypatch.setattr(identities, "_recorded_identity", reading)
    assert _plan(tmp_path, documents, rows) == cold
    assert read == []
    added = [*documents, movement("mov-new", 4, quantity=9)]
    warm = _plan(tmp_path, added, rows)
    assert warm.changes[4].action is Action.CREATE
    assert warm.changes[4].identity[-1] == "place=7"
    assert warm == _plan(tmp_path / "none", added, rows)
