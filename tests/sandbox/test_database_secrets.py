"""The emulator's database (``sandbox serve --db``, the local environment's
``sandbox.sqlite3``) is readable by its owner only and holds no API key: its table of keys and
its idempotency rows keep a digest of the key."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from pathlib import Path

import httpx

from customs_batch.sandbox import InProcessTransport, create_app
from customs_batch.sandbox.auth import key_digest
from tests.sandbox.conftest import MOVEMENTS, movement

KEY = "sandbox-key"
AUTH = {"Authorization": f"Bearer {KEY}"}


def _rows(database: Path) -> str:
    with sqlite3.connect(database) as db:
        return "\n".join(f"{r[0]} {r[1]} {r[2]}" for r in db.execute("SELECT * FROM records"))


def _use(database: Path) -> None:
    transport = InProcessTransport(create_app(db_path=database, rate_limit=None))
    with httpx.Client(transport=transport, base_url="http://sandbox") as client:
        headers = {**AUTH, "Idempotency-Key": "key-1"}
        assert client.post(MOVEMENTS, json=movement(), headers=headers).status_code == 201
        # The same key and body again: a replay, found under the digest of the API key.
        again = client.post(MOVEMENTS, json=movement(), headers=headers)
        assert again.status_code == 201
        assert client.get("/v1/shipments", headers=AUTH).is_success
    transport.close()


def test_the_database_is_private_and_holds_no_key(tmp_path: Path) -> None:
    database = tmp_path / "sandbox.sqlite3"
    _use(database)
    for name in ("sandbox.sqlite3", "sandbox.sqlite3-wal", "sandbox.sqlite3-shm"):
        path = tmp_path / name
        if path.exists():
            assert stat.S_IMODE(path.stat().st_mode) == 0o600, name
    rows = _rows(database)
    assert key_digest(KEY) in rows
    assert KEY not in rows.replace(key_digest(KEY), "")
    assert len(_movements(rows)) == 1


def _movements(rows: str) -> list[str]:
    return [line for line in rows.splitlines() if line.startswith("movements ")]


def test_a_database_an_older_emulator_wrote_is_made_private_and_forgets_the_keys(
    tmp_path: Path,
) -> None:
    database = tmp_path / "sandbox.sqlite3"
    _use(database)
    # As an older emulator left it: open to everyone, the key itself in its rows.
    with sqlite3.connect(database) as db:
        for table, record_id, body in list(db.execute("SELECT tbl, id, body FROM records")):
            if key_digest(KEY) in record_id or key_digest(KEY) in body:
                db.execute("DELETE FROM records WHERE tbl = ? AND id = ?", (table, record_id))
                db.execute(
                    "INSERT INTO records VALUES (?, ?, ?)",
                    (
                        table,
                        record_id.replace(key_digest(KEY), KEY),
                        body.replace(key_digest(KEY), KEY),
                    ),
                )
    os.chmod(database, 0o644)
    assert f'"{KEY}"' in _rows(database) or f'"{KEY}\\n' in _rows(database)

    _use(database)  # the older key-scoped replay is still found
    assert stat.S_IMODE(database.stat().st_mode) == 0o600
    rows = _rows(database)
    assert KEY not in rows.replace(key_digest(KEY), "")
    assert len(_movements(rows)) == 1, "the replay created a second movement"
    keys = [
        json.loads(line.split(" ")[1]) for line in rows.splitlines() if line.startswith("apiKeys ")
    ]
    assert key_digest(KEY) in keys and all(key.startswith("sha256:") for key in keys)


def test_idempotency_rows_a_previous_emulator_scoped_by_key_digest_are_found_by_company(
    tmp_path: Path,
) -> None:
    database = tmp_path / "sandbox.sqlite3"
    _use(database)
    # As the emulator before left them: scoped by the digest of the API key.
    with sqlite3.connect(database) as db:
        (slot,) = db.execute("SELECT id FROM records WHERE tbl = 'idempotency'").fetchone()
        assert json.loads(slot) == "company:1\nkey-1"
        older = json.dumps(f"{key_digest(KEY)}\nkey-1")
        db.execute("UPDATE records SET id = ? WHERE tbl = 'idempotency'", (older,))
    _use(database)  # the replay is found under the company's scope
    rows = _rows(database)
    assert len(_movements(rows)) == 1, "the replay created a second movement"
    slots = [line.split(" ")[1] for line in rows.splitlines() if line.startswith("idempotency ")]
    assert slots == [json.dumps("company:1\nkey-1")]
