"""What only the PostgreSQL backend does: its configuration, its errors without secrets,
its tables and their upgrades, and force-unlock of a holder whose session is alive."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from customs_batch.backends import backend_for
from customs_batch.environments import StateKind, load_project
from customs_batch.errors import ConfigError, StateError
from customs_batch.state import LocalBackend, RecordStatus, ResourceRecord
from customs_batch.state.pg_tables import TABLES_VERSION, UPGRADES, ensure_tables, tables_version
from customs_batch.state.postgres import PostgresBackend, lock_key
from tests.postgres import PASSWORD, PASSWORD_ROLE, PostgresCluster
from tests.state.conftest import HOLD_SCRIPT, Backends

CONFIG = """\
environments:
  production:
    base_url: https://api.customs.example
    api_key_env: CUSTOMS_KEY
    state:
      backend: postgres
      url_env: CUSTOMS_BATCH_STATE_URL
      name: prod-eu
  staging:
    base_url: https://staging.customs.example
    api_key_env: CUSTOMS_KEY
    state: {backend: postgres, url_env: STAGING_STATE_URL}
  sandbox:
    base_url: https://sandbox.customs.example
    api_key_env: CUSTOMS_KEY
"""


def _project(text: str, tmp_path: Path) -> Path:
    (tmp_path / "customs-batch.yaml").write_text(text)
    return tmp_path


def test_the_state_block_chooses_the_backend_and_the_name(tmp_path: Path) -> None:
    project = load_project(_project(CONFIG, tmp_path))
    production = project.environment("production")
    assert production.state.backend is StateKind.POSTGRES
    assert (production.state.url_env, production.state.name) == (
        "CUSTOMS_BATCH_STATE_URL",
        "prod-eu",
    )
    assert project.environment("staging").state.name == "staging"  # the environment's name
    assert project.environment("sandbox").state.backend is StateKind.LOCAL

    backend = backend_for(production, {"CUSTOMS_BATCH_STATE_URL": "postgresql://u@db/x"})
    assert isinstance(backend, PostgresBackend) and backend.name == "prod-eu"
    assert isinstance(backend_for(project.environment("sandbox"), {}), LocalBackend)


def test_a_missing_url_variable_is_named_and_explained(tmp_path: Path) -> None:
    project = load_project(_project(CONFIG, tmp_path))
    with pytest.raises(ConfigError) as missing:
        backend_for(project.environment("staging"), {})
    assert "STAGING_STATE_URL that holds the database URL is not set" in missing.value.message
    assert missing.value.hint and "never in customs-batch.yaml" in missing.value.hint
    # A CI secret that is missing leaves the variable set, to nothing: said so.
    with pytest.raises(ConfigError) as empty:
        backend_for(project.environment("staging"), {"STAGING_STATE_URL": " "})
    assert "STAGING_STATE_URL that holds the database URL is set but empty" in (empty.value.message)


@pytest.mark.parametrize("timeout", ["nan", "inf", "-1"])
def test_a_lock_timeout_that_is_no_number_of_seconds_is_a_usage_error(
    tmp_path: Path,
    timeout: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # On PostgreSQL, nan and inf ended in "internal error: ValueError".
    from customs_batch.cli.main import invoke

    _project(CONFIG, tmp_path)
    monkeypatch.chdir(tmp_path)
    argv = ["state", "rm", "Movement/m", "--env", "staging", "--lock-timeout", timeout]
    assert invoke(argv) == 64
    err = capsys.readouterr().err
    assert "Invalid value for '--lock-timeout'" in err, err


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        ("{backend: postgres, url: 'postgresql://u:hunter2@db/x'}", "the database URL may not"),
        ("{backend: postgres, url_env: 'postgresql://u:hunter2@db/x'}", "NAME of an environment"),
        ("{backend: postgres}", "'url_env' is a required property"),
        ("{backend: mysql, url_env: X}", "must be one of local, postgres"),
    ],
)
def test_a_wrong_state_block_is_refused_without_quoting_it(
    tmp_path: Path, block: str, expected: str
) -> None:
    text = f"environments:\n  prod:\n    base_url: https://a.example\n    api_key_env: K\n    state: {block}\n"
    with pytest.raises(ConfigError) as refused:
        load_project(_project(text, tmp_path))
    assert expected in str(refused.value)
    assert "hunter2" not in str(refused.value)
    assert "customs-batch.yaml:5" in str(refused.value)


def _bad_urls(postgres: PostgresCluster, database: str) -> list[str]:
    wrong = postgres.url(database, user=PASSWORD_ROLE, password=PASSWORD + "-wrong")
    return [
        wrong,  # the server refuses the password
        wrong.replace("-wrong@", "%ZZ@"),  # not a URL libpq can read
        f"host={postgres.folder} port={postgres.port} password={PASSWORD} bogus",
        f"postgresql://{PASSWORD_ROLE}:{PASSWORD}@127.0.0.1:1/{database}",  # nobody listens
        # A socket folder where no server is.
        f"postgresql://{PASSWORD_ROLE}:{PASSWORD}@/{database}?host={postgres.folder}/none",
    ]


def test_a_unix_socket_url_in_either_form_reaches_the_state(
    postgres: PostgresCluster, postgres_url: str
) -> None:
    database = postgres_url.rsplit("/", 1)[1]
    login = f"{PASSWORD_ROLE}:{PASSWORD}"
    forms = [
        f"postgresql://{login}@/{database}?host={postgres.folder}&port={postgres.port}",
        postgres.url(database, user=PASSWORD_ROLE, password=PASSWORD),  # the folder encoded
    ]
    for url in forms:
        assert "%2F" in url or "?host=/" in url
        backend = PostgresBackend(url, "prod")
        with backend.open("apply") as session:
            session.record(ResourceRecord("Movement/a", RecordStatus.APPLIED, "create", {}))
        assert "Movement/a" in backend.read().resources
        with pytest.raises(StateError) as refused:
            PostgresBackend(url.replace(PASSWORD, PASSWORD + "-wrong"), "prod").read()
        shown = str(refused.value)
        assert "the state database: cannot connect" in shown and PASSWORD not in shown, shown


def test_database_errors_never_show_the_url_or_the_password(
    postgres: PostgresCluster, postgres_url: str
) -> None:
    database = postgres_url.rsplit("/", 1)[1]
    for url in _bad_urls(postgres, database):
        with pytest.raises(StateError) as refused:
            PostgresBackend(url, "prod").read()
        shown = str(refused.value)
        assert "the state database: cannot connect" in shown
        assert PASSWORD not in shown and url not in shown, shown
        assert refused.value.__cause__ is None and refused.value.__suppress_context__
    # The password itself works, and nothing of it is kept where it could be printed.
    good = PostgresBackend(postgres.url(database, user=PASSWORD_ROLE, password=PASSWORD), "prod")
    assert good.read().serial == 0
    assert PASSWORD not in repr(good)


def test_the_cli_shows_no_password_when_the_database_refuses(
    postgres: PostgresCluster, postgres_url: str, tmp_path: Path
) -> None:
    database = postgres_url.rsplit("/", 1)[1]
    project = _project(CONFIG.replace("name: prod-eu", "name: prod"), tmp_path)
    url = postgres.url(database, user=PASSWORD_ROLE, password=PASSWORD + "-wrong")
    done = subprocess.run(
        [sys.executable, "-m", "customs_batch", "state", "list", "--env", "production"],
        capture_output=True,
        text=True,
        cwd=project,
        env={**os.environ, "CUSTOMS_BATCH_STATE_URL": url},
        timeout=60,
        check=False,
    )
    assert done.returncode == 3
    assert "password authentication failed" in done.stderr
    assert PASSWORD not in done.stdout + done.stderr
    assert "Traceback" not in done.stderr


def test_each_upgrade_keeps_what_the_previous_version_held(postgres_url: str) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        assert tables_version(connection) == 0
        for version in range(1, TABLES_VERSION + 1):
            assert ensure_tables(connection, target=version) == version - 1
            assert tables_version(connection) == version
            if version == 1:
                connection.execute("INSERT INTO customs_batch_states VALUES ('s', 'L', 3)")
            row = connection.execute("SELECT lineage, serial FROM customs_batch_states").fetchone()
            assert row == ("L", 3)
            if version == 3:
                connection.execute("INSERT INTO customs_batch_rate_budgets VALUES ('f', 12.5)")
            if version >= 3:
                slot = connection.execute(
                    "SELECT fingerprint, next_slot FROM customs_batch_rate_budgets"
                ).fetchall()
                assert slot == [("f", 12.5)]
            if version == 4:  # the key's row keeps its slot and starts a window of requests
                row = connection.execute(
                    "SELECT last_request, horizon FROM customs_batch_rate_budgets"
                ).fetchone()
                assert row == (0, 0.0)
                connection.execute(
                    "INSERT INTO customs_batch_rate_requests (fingerprint, request, sent) "
                    "VALUES ('f', 1, 13.0)"
                )
        assert ensure_tables(connection) == TABLES_VERSION  # nothing left to do
    assert len(UPGRADES) == TABLES_VERSION


def test_a_role_that_may_only_use_the_tables_works_once_they_are_made(
    postgres: PostgresCluster, postgres_url: str
) -> None:
    # Tables made once by an owner, then used by a CI role that may read and write them but
    # not create anything: every command asked to create the tables anyway, and failed.
    database = postgres_url.rsplit("/", 1)[1]
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        ensure_tables(connection)
        connection.execute("CREATE ROLE ci_user LOGIN")
        connection.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
        connection.execute(
            "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ci_user"
        )
        connection.execute("GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO ci_user")
    url = postgres.url(database, user="ci_user")
    backend = PostgresBackend(url, "prod")
    with backend.open("apply") as session:
        session.record(ResourceRecord("Movement/a", RecordStatus.APPLIED, "create", {}))
    assert list(backend.read().resources) == ["Movement/a"]
    backend.refuse_a_state_behind_its_history(backend.read())  # the history's rows too
    with psycopg.connect(url, autocommit=True) as connection, pytest.raises(psycopg.Error):
        connection.execute("CREATE TABLE not_allowed (x int)")  # the role really may not


def test_tables_of_a_newer_version_are_refused(postgres_url: str) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        ensure_tables(connection)
        connection.execute("UPDATE customs_batch_schema SET version = version + 1")
    with pytest.raises(StateError, match="written by a newer customs-batch"):
        PostgresBackend(postgres_url, "prod").read()


def test_states_of_two_names_share_the_database_and_not_the_lock(postgres_url: str) -> None:
    assert lock_key("prod") != lock_key("staging")
    record = ResourceRecord("Movement/a", RecordStatus.APPLIED, "create", {})
    with (
        PostgresBackend(postgres_url, "prod").open("apply") as prod,
        PostgresBackend(postgres_url, "staging").open("apply") as staging,
    ):
        prod.record(record)
        assert staging.state.resources == {}
    assert PostgresBackend(postgres_url, "staging").read().resources == {}
    assert list(PostgresBackend(postgres_url, "prod").read().resources) == ["Movement/a"]


def test_an_environment_renamed_does_not_start_its_state_empty(postgres_url: str) -> None:
    """A state's name is its environment's unless `name:` says otherwise, so an environment
    renamed in customs-batch.yaml opens a new, empty state: refused while another state of
    the database holds records of the same service (starting empty would send every recorded
    document again), naming it and the way to keep it; --allow-empty-state starts it empty."""
    service = "https://api.customs.example"
    with PostgresBackend(postgres_url, "production", service=service).open("apply") as old:
        old.record(ResourceRecord("Movement/a", RecordStatus.APPLIED, "create", {}))
    renamed = PostgresBackend(postgres_url, "prod", service=service)
    with pytest.raises(StateError) as refused:
        renamed.refuse_a_state_behind_its_history(renamed.read())
    assert (
        f"the state prod in the database is new and empty, but the state production there "
        f"holds 1 record(s) of the same service ({service})" in refused.value.message
    )
    assert refused.value.hint and "name: production}" in refused.value.hint
    # Another service's state is no trace of this one; an empty start on purpose is taken.
    elsewhere = PostgresBackend(postgres_url, "prod", service="https://other.example")
    elsewhere.refuse_a_state_behind_its_history(elsewhere.read())
    chosen = PostgresBackend(postgres_url, "prod", service=service, allow_empty_state=True)
    chosen.refuse_a_state_behind_its_history(chosen.read())
    with chosen.open("apply") as started:
        started.record(ResourceRecord("Movement/b", RecordStatus.APPLIED, "create", {}))
    renamed.refuse_a_state_behind_its_history(renamed.read())  # a state of its own now


def test_a_state_of_the_service_named_in_other_letters_is_of_the_same_service(
    postgres_url: str,
) -> None:
    """A row that names the service as an older version kept it, as customs-batch.yaml
    wrote it (another case of host, its default port): the same service all the same, for
    the refusal of an empty start and for the other states compared on import."""
    written = "https://API.customs.example:443"
    with PostgresBackend(postgres_url, "production", service=written).open("apply") as old:
        old.record(ResourceRecord("Movement/a", RecordStatus.APPLIED, "create", {}))
    service = "https://api.customs.example"
    renamed = PostgresBackend(postgres_url, "prod", service=service)
    with pytest.raises(StateError) as refused:
        renamed.refuse_a_state_behind_its_history(renamed.read())
    assert "but the state production there holds 1 record(s)" in refused.value.message
    assert [other.name for other in renamed.other_states_of_the_service()] == ["production"]
    elsewhere = PostgresBackend(postgres_url, "prod", service="https://other.example")
    assert elsewhere.other_states_of_the_service() == []


def test_a_new_empty_state_names_the_state_of_the_service_with_the_most_records(
    postgres_url: str,
) -> None:
    """The state most likely left under the old name is the one with the most records, not
    the first by name (a small test environment `de` before the real `nl`)."""
    service = "https://api.customs.example"
    with PostgresBackend(postgres_url, "de", service=service).open("apply") as small:
        small.record(ResourceRecord("Movement/a", RecordStatus.APPLIED, "create", {}))
    with PostgresBackend(postgres_url, "nl", service=service).open("apply") as big:
        for name in ("b", "c", "d"):
            big.record(ResourceRecord(f"Movement/{name}", RecordStatus.APPLIED, "create", {}))
    renamed = PostgresBackend(postgres_url, "netherlands", service=service)
    with pytest.raises(StateError) as refused:
        renamed.refuse_a_state_behind_its_history(renamed.read())
    assert "but the state nl there holds 3 record(s)" in refused.value.message
    assert "(and 1 other state(s) of it)" in refused.value.message


@pytest.fixture
def live_holder(postgres_url: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """A process holding the state ``contract``'s lock until it reads a line; its lock id."""
    process = Backends("postgres", postgres_url).start(HOLD_SCRIPT)
    try:
        assert process.stdout is not None
        yield process, process.stdout.readline().strip()
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=30)


def test_force_unlock_refuses_a_live_holder_unless_forced(
    postgres_url: str, live_holder: tuple[subprocess.Popen[str], str]
) -> None:
    process, lock_id = live_holder
    backend = PostgresBackend(postgres_url, "contract")
    with pytest.raises(StateError, match="the lock id is"):
        backend.force_unlock("not-the-id")
    with pytest.raises(StateError) as refused:
        backend.force_unlock(lock_id)
    assert "is alive" in refused.value.message
    assert refused.value.hint and "--force" in refused.value.hint

    unlocked = backend.force_unlock(lock_id, force=True)
    assert (unlocked.info.id, unlocked.info.pid) == (lock_id, process.pid)
    assert "session was ended" in unlocked.how
    with backend.open("apply", lock_timeout=30) as session:  # the lock went with the session
        assert list(session.state.resources) == ["Movement/held"]
        assert session.lock_info.id != lock_id

    assert process.stdin is not None
    process.stdin.write("\n")
    process.stdin.flush()
    _, err = process.communicate(timeout=30)
    assert process.returncode != 0 and "the state database" in err  # its session was ended


def test_force_unlock_cleans_the_row_of_a_holder_whose_session_is_gone(
    postgres_url: str,
) -> None:
    backend = PostgresBackend(postgres_url, "contract")
    session = backend.open("apply")
    lock_id = session.lock_info.id
    session._connection.close()  # the session ends without its row being removed
    with pytest.raises(StateError, match="the lock id is"):
        backend.force_unlock("not-the-id")
    unlocked = backend.force_unlock(lock_id)  # no --force needed: nobody holds the lock
    assert unlocked.info.id == lock_id
    assert "already ended" in unlocked.how
    with pytest.raises(StateError, match="not locked"):
        backend.force_unlock(lock_id)


def test_a_dead_holders_row_is_never_taken_for_the_live_holder(postgres_url: str) -> None:
    backend = PostgresBackend(postgres_url, "contract")
    dead = backend.open("apply")
    dead_id = dead.lock_info.id
    dead._connection.close()  # its row stays; its lock went with the session
    # A live session holds the lock and has not written its row yet.
    with psycopg.connect(postgres_url, autocommit=True) as live:
        live.execute("SELECT pg_advisory_lock(%s)", (lock_key("contract"),))
        with pytest.raises(StateError) as refused:
            backend.open("apply")
        said = refused.value.message
        assert "locked by a database session not named in this schema's" in said
        assert "a state also called contract in another schema of this database" in said
        assert dead_id not in str(refused.value)
        assert "force-unlock ID" not in str(refused.value)  # no ID to give it
        with pytest.raises(StateError, match="has not named itself yet"):
            backend.force_unlock(dead_id, force=True)  # never ends the live session
        assert live.execute("SELECT 1").fetchone() == (1,)


def test_a_state_whose_rows_are_gone_is_known_by_its_history(postgres_url: str) -> None:
    from customs_batch.state.history import history_for

    record = ResourceRecord("Movement/a", RecordStatus.APPLIED, "create", {})
    backend = PostgresBackend(postgres_url, "prod")
    with backend.open("apply") as session:
        session.record(record)
    history = history_for(backend)
    try:
        history.append({"event": "request", "address": "Movement/a", "operation": "create"})
        with psycopg.connect(postgres_url, autocommit=True) as connection:
            connection.execute("DELETE FROM customs_batch_states WHERE name = 'prod'")
        # Requests alone are what a first run killed before its first intent leaves.
        assert PostgresBackend(postgres_url, "prod").read().resources == {}
        history.append({"event": "answer", "address": "Movement/a", "status": 201})
    finally:
        history.close()
    with pytest.raises(StateError, match=r"the state prod .* is missing") as refused:
        PostgresBackend(postgres_url, "prod").read()
    assert "--allow-empty-state" in (refused.value.hint or "")
    with pytest.raises(StateError, match=r"the state prod .* is missing"):
        PostgresBackend(postgres_url, "prod").open("apply")
    assert PostgresBackend(postgres_url, "prod", allow_empty_state=True).read().resources == {}
    # Another state's history is no trace of this one.
    assert PostgresBackend(postgres_url, "staging").read().resources == {}
