"""``env`` as functions: the environments and a key's check, typed options in, typed results
out, no click involved."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from customs_batch.client import RetryPolicy
from customs_batch.commands.env import (
    CheckResult,
    EnvOptions,
    check_environment,
    list_environments,
    show_environment,
)
from customs_batch.environments import Environment, _connect
from customs_batch.errors import ConfigError, ExitCode, UsageError

CONFIG = """\
default_environment: sandbox
environments:
  sandbox:
    base_url: http://sandbox.invalid
    api_key_env: CB_TEST_SANDBOX_KEY
    rate_limit: 100/minute
"""
SECRET = "zz-distinctive-secret-0077"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "customs-batch.yaml").write_text(CONFIG, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _ticks(*seconds: float) -> Iterator[float]:
    yield from seconds


def answering(monkeypatch: pytest.MonkeyPatch, status: int, message: str) -> None:
    """The local environment's service answers every request with ``status``."""

    def transport(environment: Environment) -> httpx.BaseTransport:
        return httpx.MockTransport(
            lambda request: httpx.Response(status, json={"message": message})
        )

    monkeypatch.setattr(_connect, "local_transport", transport)


def test_the_list_names_the_default_and_describes_no_key(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CB_TEST_SANDBOX_KEY", SECRET)
    entries = {entry.environment.name: entry for entry in list_environments()}
    assert sorted(entries) == ["local", "sandbox"]
    assert entries["sandbox"].default and not entries["local"].default
    described = entries["sandbox"].describe()
    assert described["api_key"] == "$CB_TEST_SANDBOX_KEY (set)"
    assert described["rate_limit"] == "100/minute"
    assert SECRET not in repr(described)


def test_show_gives_the_named_or_the_chosen_environment(project: Path) -> None:
    chosen = show_environment(EnvOptions())
    assert chosen.environment.name == "sandbox" and chosen.default
    local = show_environment(EnvOptions("local"))
    assert not local.default
    assert local.describe()["base_url"] == "built-in emulator (in-process)"
    with pytest.raises(UsageError, match="no environment named 'nowhere'"):
        show_environment(EnvOptions("nowhere"))


def test_a_working_key_is_timed_by_the_given_clock() -> None:
    ticks = _ticks(10.0, 10.25)
    result = check_environment(EnvOptions("local"), clock=lambda: next(ticks))
    assert result == CheckResult(
        "local", "the built-in emulator", "the built-in sandbox key", elapsed_ms=250.0
    )
    assert result.exit_code is ExitCode.OK
    assert result.message == (
        "local: the built-in emulator accepted the key from the built-in sandbox key (250 ms)"
    )


@pytest.mark.parametrize(
    ("status", "said"),
    [
        (401, "rejected the key from the built-in sandbox key as invalid or expired (401): "),
        (403, "knows the key from the built-in sandbox key but refuses it (403): "),
    ],
)
def test_a_refused_key_is_a_problem_with_exit_3(
    monkeypatch: pytest.MonkeyPatch, status: int, said: str
) -> None:
    answering(monkeypatch, status, "key says no")
    result = check_environment(EnvOptions("local"))
    assert result.elapsed_ms is None
    assert result.exit_code is ExitCode.ERROR
    assert result.message.startswith(f"local: the built-in emulator {said}key says no.")


def test_any_other_service_error_is_its_message(monkeypatch: pytest.MonkeyPatch) -> None:
    answering(monkeypatch, 409, "no such state")
    result = check_environment(EnvOptions("local"))
    assert result.exit_code is ExitCode.ERROR
    assert result.problem is not None and result.problem.startswith(
        "the service refused the request ("
    )
    assert "no such state" in result.message


def test_a_list_not_found_says_where_the_api_should_be(monkeypatch: pytest.MonkeyPatch) -> None:
    # The check reads a list, not an object by its ID: a 404 is the API not being there.
    answering(monkeypatch, 404, "no such route")
    result = check_environment(EnvOptions("local"))
    assert result.exit_code is ExitCode.ERROR
    assert result.problem is not None
    assert "has no list of template groups where the API's paths should be" in result.problem
    assert "no such route" in result.message and result.hint is not None
    assert "base_url" in result.hint


def test_a_key_that_cannot_be_read_is_raised(project: Path) -> None:
    with pytest.raises(ConfigError, match="CB_TEST_SANDBOX_KEY"):
        check_environment(EnvOptions("sandbox"))


def test_show_says_where_the_state_is_files_or_a_database(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # state_dir alone told a user of a PostgreSQL state to look for files that are not it.
    (project / "customs-batch.yaml").write_text(
        CONFIG
        + "    state: {backend: postgres, url_env: CB_TEST_STATE_URL, name: team}\n"
        + "  other:\n    base_url: http://other.invalid\n    api_key_env: K\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("CB_TEST_STATE_URL", f"postgresql://u:{SECRET}@db/x")
    described = show_environment(EnvOptions("sandbox")).describe()
    assert (
        described["state"] == "postgres: the state team in the database of $CB_TEST_STATE_URL (set)"
    )
    assert SECRET not in repr(described)
    monkeypatch.delenv("CB_TEST_STATE_URL")
    described = show_environment(EnvOptions("sandbox")).describe()
    assert described["state"].endswith("$CB_TEST_STATE_URL (not set)")
    other = show_environment(EnvOptions("other")).describe()
    assert other["state"] == f"local: files in {project.resolve() / '.customs-batch' / 'other'}"


def dropping_first(monkeypatch: pytest.MonkeyPatch, drops: int) -> list[str]:
    """The local environment's emulator, whose first ``drops`` connections are dropped
    before any answer; the requests that reached it are in the list returned."""
    reached: list[str] = []
    emulator = _connect.local_transport

    class Dropping(httpx.BaseTransport):
        def __init__(self, inner: httpx.BaseTransport) -> None:
            self.inner = inner

        def handle_request(self, request: httpx.Request) -> httpx.Response:
            if len(reached) < drops:
                reached.append("dropped")
                raise httpx.RemoteProtocolError("Server disconnected without sending a response.")
            reached.append(request.url.path)
            return self.inner.handle_request(request)

        def close(self) -> None:
            self.inner.close()

    def transport(environment: Environment) -> httpx.BaseTransport:
        return Dropping(emulator(environment))

    monkeypatch.setattr(_connect, "local_transport", transport)
    return reached


NO_WAIT = RetryPolicy(base_delay=0.0)
"""Apply's policy without the backoff's sleeps."""


def test_a_connection_dropped_once_is_retried_and_said(monkeypatch: pytest.MonkeyPatch) -> None:
    """One dropped connection read as an unreachable service (exit 3): the check is retried
    as apply retries, and says what the first attempt met."""
    reached = dropping_first(monkeypatch, 1)
    result = check_environment(EnvOptions("local"), retry_policy=NO_WAIT)
    assert result.exit_code is ExitCode.OK, result.message
    assert reached == ["dropped", "/v1/declaration-templates/groups"]
    assert result.message.startswith(
        "local: the built-in emulator accepted the key from the built-in sandbox key ("
    )
    assert result.message.endswith(
        " ms; before it, 1 attempt(s) failed (1 no answer), retried as apply retries them)"
    )


def test_a_service_that_keeps_dropping_fails_after_apply_s_attempts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reached = dropping_first(monkeypatch, 100)
    result = check_environment(EnvOptions("local"), retry_policy=NO_WAIT)
    assert result.exit_code is ExitCode.ERROR
    assert len(reached) == RetryPolicy().max_attempts
    assert result.message.endswith(
        "; before it, 4 attempt(s) failed (4 no answer), retried as apply retries them"
    )
