"""Sensitive values (a guarantee's access code) are kept only as keyed digests: in the state
file, its backup, the journal and PostgreSQL's rows; a state that holds them in clear is
digested the first time it is written."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from customs_batch.errors import ConfigError, StateError
from customs_batch.kinds import Kind
from customs_batch.sensitive import Sealer, is_digest, is_sensitive, sensitive_paths
from customs_batch.state import (
    LocalBackend,
    RecordStatus,
    ResourceRecord,
    ServiceFailure,
    StateBackend,
)
from customs_batch.state.postgres import PostgresBackend

from .conftest import STATE_NAME, Backends

CODE = "Zx-acc-9137"
KEY = "key-of-the-test-4411"
ADDRESS = "DepartureDeclaration/dep-1"


def _spec(code: str = CODE) -> dict[str, object]:
    return {
        "DeclarationGuarantees": [
            {"guaranteeType": "1", "accessCode": code},
            {"guaranteeType": "2"},
        ],
        "Consignee": {"name": "Initech"},
    }


def _record(code: str = CODE) -> ResourceRecord:
    return ResourceRecord(
        ADDRESS, RecordStatus.APPLIED, "create", _spec(code), {"declarationId": 7}
    )


def test_the_schemas_mark_the_access_code_sensitive() -> None:
    assert sensitive_paths(Kind.DEPARTURE_DECLARATION) == (
        ("DeclarationGuarantees", "[]", "accessCode"),
    )
    assert is_sensitive("DeclarationGuarantees[3].accessCode")
    assert not is_sensitive("DeclarationGuarantees[3].guaranteeType")
    assert not is_sensitive("accessCode")


def test_a_digest_is_keyed_by_the_api_key_and_the_lineage() -> None:
    sealer = Sealer(lambda: KEY)
    digest = sealer.digest("1234", "lin")
    assert is_digest(digest)
    assert digest == Sealer(lambda: KEY).digest("1234", "lin")
    assert digest != sealer.digest("1235", "lin")
    assert digest != sealer.digest("1234", "other lineage")
    assert digest != Sealer(lambda: "another key").digest("1234", "lin")
    assert digest != sealer.digest(1234, "lin")


def test_the_key_is_asked_for_only_when_a_value_is_digested() -> None:
    def no_key() -> str:
        raise AssertionError("the key was asked for")

    sealer = Sealer(no_key)
    spec = {"DeclarationGuarantees": [{"guaranteeType": "1"}]}
    assert sealer.seal(Kind.DEPARTURE_DECLARATION, spec, "lin") is spec


def _sealed(backends: Backends) -> StateBackend:
    sealer = Sealer(lambda: KEY)
    if backends.kind == "local":
        return LocalBackend(Path(backends.where), sealer=sealer)
    return PostgresBackend(backends.where, STATE_NAME, sealer=sealer)


def _everything(backends: Backends) -> bytes:
    """Every file of the state folder, or every row of every table of the database."""
    if backends.kind == "local":
        return b"".join(p.read_bytes() for p in Path(backends.where).iterdir() if p.is_file())
    found = []
    with psycopg.connect(backends.where) as connection:
        tables = connection.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
        ).fetchall()
        for (table,) in tables:
            for row in connection.execute(f'SELECT t::text FROM "{table}" t').fetchall():
                found.append(row[0])
    assert found, "no rows to search"
    return "\n".join(found).encode()


def test_a_recorded_code_is_kept_only_as_a_digest(backends: Backends) -> None:
    backend = _sealed(backends)
    with backend.open("apply") as session:
        session.record(_record())
        # The journal (a file, or the journal table) while the run holds the state.
        assert CODE.encode() not in _everything(backends)
        assert b"hmac-sha256:" in _everything(backends)
    assert CODE.encode() not in _everything(backends)
    record = backend.read().resources[ADDRESS]
    kept = record.spec["DeclarationGuarantees"][0]["accessCode"]
    assert is_digest(kept)
    assert kept == Sealer(lambda: KEY).digest(CODE, backend.read().lineage)
    assert record.spec["DeclarationGuarantees"][1] == {"guaranteeType": "2"}


def test_a_state_holding_a_code_in_clear_is_digested_when_first_written(
    backends: Backends,
) -> None:
    # Written as an older version did: no digests.
    with backends.make().open("apply") as session:
        session.record(_record())
    with backends.make().open("apply") as session:
        session.record(ResourceRecord("Movement/m", RecordStatus.APPLIED, "create", {}, {}))
    assert CODE.encode() in _everything(backends)

    backend = _sealed(backends)
    # Reading shows only the digest already, and writes nothing.
    assert is_digest(
        backend.read().resources[ADDRESS].spec["DeclarationGuarantees"][0]["accessCode"]
    )
    assert CODE.encode() in _everything(backends)
    with backend.open("refresh") as session:
        session.record(ResourceRecord("Movement/n", RecordStatus.APPLIED, "create", {}, {}))
    # The state, its backup (the state before this write) and the journal: no code.
    assert CODE.encode() not in _everything(backends)
    if backends.kind == "local":
        assert (Path(backends.where) / "state.json.backup").exists()
    record = backend.read().resources[ADDRESS]
    assert is_digest(record.spec["DeclarationGuarantees"][0]["accessCode"])
    assert record.outputs == {"declarationId": 7}


def test_an_access_code_the_service_quotes_is_never_recorded(tmp_path: Path) -> None:
    # In the answer to the request that sent it (the spec still in clear), and in errors
    # read later (refresh, a wait: the spec already digested), word by word.
    backend = LocalBackend(tmp_path, sealer=Sealer(lambda: KEY))
    refused = _record().with_changes(
        status=RecordStatus.FAILED,
        error=ServiceFailure(400, f"code {CODE} refused", {"value": CODE}),
    )
    with backend.open("apply") as session:
        session.record(refused)
    kept = backend.read().resources[ADDRESS]
    assert kept.error == ServiceFailure(400, "code (sensitive) refused", {"value": "(sensitive)"})
    read_later = kept.with_changes(
        status=RecordStatus.APPLIED,
        error=None,
        remote_errors=({"message": "guarantee: accessCode Zx-acc-9137 is unknown"},),
    )
    with backend.open("refresh") as session:
        session.record(read_later)
    again = backend.read().resources[ADDRESS]
    assert again.remote_errors == ({"message": "guarantee: accessCode (sensitive) is unknown"},)
    for path in tmp_path.iterdir():
        if path.is_file():
            assert CODE.encode() not in path.read_bytes(), path.name


def test_a_state_holding_a_code_in_clear_without_the_key_is_not_changed(tmp_path: Path) -> None:
    # Its next write digests the codes with the key: without it, a change made first would
    # be in the journal while the command failed, and the next command would apply it.
    with LocalBackend(tmp_path).open("apply") as session:  # as an older version wrote it
        session.record(_record())
        session.record(ResourceRecord("Movement/m", RecordStatus.APPLIED, "create", {}, {}))

    def no_key() -> str:
        raise ConfigError("the key cannot be read")

    backend = LocalBackend(tmp_path, sealer=Sealer(no_key))
    before = (tmp_path / "state.json").read_bytes()
    with (
        pytest.raises(StateError, match="Nothing was changed"),
        backend.open("state rm") as session,
    ):
        session.forget("Movement/m")
    assert (tmp_path / "state.json").read_bytes() == before
    journal = tmp_path / "journal.jsonl"
    assert not journal.exists() or journal.read_bytes() == b""
    assert "Movement/m" in LocalBackend(tmp_path, sealer=Sealer(lambda: KEY)).read().resources
