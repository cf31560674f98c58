"""The SQLite store: data survives a restart; the seed fills a new database only."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from customs_batch.errors import ConfigError
from customs_batch.sandbox import create_app
from customs_batch.sandbox.auth import key_digest
from customs_batch.sandbox.persistence import APPLICATION_ID, held_alone
from customs_batch.sandbox.store import Store
from tests.sandbox.conftest import MOVEMENTS, ClientFactory, departure, movement

STAMP = "2026-01-05T08:00:00.000Z"


def test_data_survives_a_restart(tmp_path: Path, make_api: ClientFactory) -> None:
    db = tmp_path / "sandbox.db"
    first = make_api(db_path=db)
    created = first.post(MOVEMENTS, json=movement(), headers={"Idempotency-Key": "k"}).json()
    declaration_id = first.post("/v1/declarations/transit", json=departure()).json()[
        "declarationId"
    ]
    first.delete("/v1/shipments/shp_7Hk2Lm/hawbs/hawb_a3")
    first.close()

    second = make_api(db_path=db)
    assert second.get("/_sandbox/movements").json()[0]["movementId"] == created["movementId"]
    assert second.get(f"/v1/declarations/transit/{declaration_id}").status_code == 200
    hawbs = second.get("/v1/shipments/shp_7Hk2Lm/hawbs").json()["data"]
    assert [h["hawbId"] for h in hawbs] == ["hawb_a1", "hawb_a2"]
    replay = second.post(MOVEMENTS, json=movement(), headers={"Idempotency-Key": "k"})
    assert replay.json() == created  # the idempotency record survived too
    assert len(second.get("/_sandbox/movements").json()) == 1


def test_without_db_nothing_is_kept(make_api: ClientFactory) -> None:
    make_api().post(MOVEMENTS, json=movement(), headers={"Idempotency-Key": "k"})
    assert make_api().get("/_sandbox/movements").json() == []


@pytest.mark.parametrize(
    "make_path", [lambda d: d / "missing" / "x.db", lambda d: _not_a_database(d)]
)
def test_unusable_db_is_a_clear_error(tmp_path: Path, make_path: Callable[[Path], Path]) -> None:
    with pytest.raises(ConfigError, match="cannot open the emulator database"):
        create_app(db_path=make_path(tmp_path))


def _not_a_database(directory: Path) -> Path:
    path = directory / "notes.db"
    path.write_text("these are not the tables you are looking for" * 100, encoding="utf-8")
    return path


def test_another_programs_database_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    path = folder / "other.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE foo (x)")
        db.execute("INSERT INTO foo VALUES (42)")
    db.close()
    os.chmod(path, 0o644)
    before = path.read_bytes()
    with pytest.raises(ConfigError, match="not the emulator's") as refused:
        create_app(db_path=path)
    assert "table 'foo'" in str(refused.value) and "a file of its own" in str(refused.value)
    assert path.read_bytes() == before and stat.S_IMODE(path.stat().st_mode) == 0o644
    assert [p.name for p in folder.iterdir()] == ["other.db"]  # no -wal, no -shm


def test_a_database_an_older_emulator_wrote_is_taken_and_marked(
    tmp_path: Path, make_api: ClientFactory
) -> None:
    path = tmp_path / "sandbox.db"
    with sqlite3.connect(path) as db:  # as an emulator before the mark left it
        db.execute(
            "CREATE TABLE records (tbl TEXT NOT NULL, id TEXT NOT NULL, body TEXT NOT NULL, "
            "PRIMARY KEY (tbl, id))"
        )
        group = {"id": 9, "name": "Kept", "code": "KEPT", "companyId": 1, "isDefault": False}
        group.update(DeclarationTemplates=[], createdAt=STAMP, updatedAt=STAMP)
        db.execute("INSERT INTO records VALUES ('templateGroups', '9', ?)", (json.dumps(group),))
        key = {"key": key_digest("sandbox-key"), "companyId": 1, "active": True}
        db.execute(
            "INSERT INTO records VALUES ('apiKeys', ?, ?)",
            (json.dumps(key["key"]), json.dumps(key)),
        )
    db.close()
    groups = make_api(db_path=path).get("/v1/declaration-templates/groups").json()["result"]
    assert [g["code"] for g in groups] == ["KEPT"]
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA application_id").fetchone() == (APPLICATION_ID,)
    db.close()


@pytest.mark.parametrize(
    ("body", "record_id", "said"),
    [
        ("{not json", '"mov_1"', "is not JSON"),
        ("[1, 2]", '"mov_1"', "holds no JSON object"),
        ("{}", "not json", "is not JSON"),
    ],
)
def test_a_damaged_row_is_an_error_naming_the_file_and_the_row(
    tmp_path: Path, body: str, record_id: str, said: str
) -> None:
    path = tmp_path / "sandbox.db"
    Store(path).close()
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO records VALUES ('movements', ?, ?)", (record_id, body))
    db.close()
    with pytest.raises(ConfigError, match="the emulator database is damaged") as refused:
        create_app(db_path=path)
    message = str(refused.value)
    assert str(path) in message and "'movements'" in message and said in message
    assert "restore it from a copy" in message


def test_a_database_is_held_by_one_emulator_at_a_time(tmp_path: Path) -> None:
    db = tmp_path / "sandbox.db"
    with held_alone(db):
        assert db.stat().st_mode & 0o777 == 0o600  # created private, as the data it will hold
        refusal = pytest.raises(ConfigError, match="in use by another emulator")
        with refusal as refused, held_alone(db):
            pytest.fail("two emulators hold one database")
        assert "another --db" in str(refused.value)
    with held_alone(db):  # released when the first stopped
        pass


def test_a_database_that_cannot_be_held_is_a_clear_error(tmp_path: Path) -> None:
    refusal = pytest.raises(ConfigError, match="cannot open the emulator database")
    with refusal as refused, held_alone(tmp_path / "missing" / "x.db"):
        pytest.fail("held a file in a folder that does not exist")
    # The file is created if missing, its folder is not: the hint says so.
    assert "in a folder that exists" in str(refused.value.hint)


def test_find_follows_every_write_in_insertion_order(tmp_path: Path) -> None:
    db = tmp_path / "sandbox.db"
    store = Store(db)
    store.put("groups", 1, {"id": 1, "code": "A", "companyId": 1})
    store.put("groups", 2, {"id": 2, "code": "B", "companyId": 1})
    assert store.find("groups", code="A", companyId=1) == [{"id": 1, "code": "A", "companyId": 1}]
    store.put("groups", 3, {"id": 3, "code": "A", "companyId": 1})
    store.put("groups", 1, {"id": 1, "code": "C", "companyId": 1})  # leaves A, keeps its place
    store.put("groups", 1, {"id": 1, "code": "B", "companyId": 1})
    assert [g["id"] for g in store.find("groups", companyId=1, code="B")] == [1, 2]
    assert [g["id"] for g in store.find("groups", companyId=1, code="A")] == [3]
    assert store.find("groups", companyId=2, code="B") == []
    store.rekey("groups", 2, 4)
    assert [g["id"] for g in store.find("groups", companyId=1, code="B")] == [1, 2]  # now last
    store.rekey("groups", 1, 5)
    assert [g["id"] for g in store.find("groups", companyId=1, code="B")] == [2, 1]
    store.close()
    reopened = Store(db)
    assert [g["id"] for g in reopened.find("groups", companyId=1, code="B")] == [2, 1]
    reopened.close()
