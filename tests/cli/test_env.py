"""``customs-batch env``: list, show and check, never printing a key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from customs_batch.cli.main import invoke
from tests.tls import HandshakeCounter, make_certificate

CONFIG = """\
default_environment: sandbox
environments:
  sandbox:
    base_url: http://127.0.0.1:9
    api_key_env: CB_TEST_SANDBOX_KEY
    rate_limit: 100/minute
    timeouts: {connect: 1, read: 1}
"""
SECRET = "zz-distinctive-secret-0042"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = invoke(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "customs-batch.yaml").write_text(CONFIG, encoding="utf-8")
    monkeypatch.chdir(root)
    return root


def test_list_without_a_config_shows_local(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "env", "list", "--format", "json")
    assert code == 0
    listed = json.loads(out)
    assert list(listed) == ["formatVersion", "environments"]
    assert listed["formatVersion"] == 1
    [local] = listed["environments"]
    assert local["name"] == "local"
    assert local["default"] is True
    assert local["api_key"] == "the built-in sandbox key"


def test_list_says_where_keys_come_from_never_what_they_are(
    capsys: pytest.CaptureFixture[str], project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CB_TEST_SANDBOX_KEY", SECRET)
    code, out, _ = _run(capsys, "env", "list", "--format", "json")
    assert code == 0
    shown = {e["name"]: e for e in json.loads(out)["environments"]}
    assert shown["sandbox"]["api_key"] == "$CB_TEST_SANDBOX_KEY (set)"
    assert shown["sandbox"]["default"] is True
    assert SECRET not in out
    monkeypatch.setenv("COLUMNS", "200")
    _, out, _ = _run(capsys, "env", "list")
    assert "$CB_TEST_SANDBOX_KEY (set)" in out
    assert SECRET not in out
    _, out, _ = _run(capsys, "env", "show", "sandbox", "--format", "yaml")
    assert "$CB_TEST_SANDBOX_KEY (set)" in out
    assert "100/minute" in out
    assert SECRET not in out


def test_show_without_name_shows_the_chosen_one(
    capsys: pytest.CaptureFixture[str], project: Path
) -> None:
    _, out, _ = _run(capsys, "env", "show", "--format", "json")
    shown = json.loads(out)
    assert list(shown)[:2] == ["formatVersion", "name"] and shown["formatVersion"] == 1
    assert shown["name"] == "sandbox"
    _, out, _ = _run(capsys, "env", "list", "--format", "jsonl")
    lines = [json.loads(line) for line in out.splitlines()]
    assert [(e["formatVersion"], e["name"]) for e in lines] == [(1, "local"), (1, "sandbox")]
    assert shown["api_key"] == "$CB_TEST_SANDBOX_KEY (not set)"


def test_check_local_succeeds(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "env", "check")
    assert code == 0
    assert "local: the built-in emulator accepted the key" in out


def test_check_without_the_variable_names_it(
    capsys: pytest.CaptureFixture[str], project: Path
) -> None:
    code, _, err = _run(capsys, "env", "check", "--env", "sandbox")
    assert code == 3
    assert "CB_TEST_SANDBOX_KEY" in err
    assert "not set" in err


def test_check_an_unreachable_service_says_so(
    capsys: pytest.CaptureFixture[str], project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import functools

    import customs_batch.cli.env
    from customs_batch.client import RetryPolicy
    from customs_batch.commands.env import check_environment

    # Retried as apply retries (5 attempts), without the backoff's sleeps.
    no_wait = functools.partial(check_environment, retry_policy=RetryPolicy(base_delay=0.0))
    monkeypatch.setattr(customs_batch.cli.env, "check_environment", no_wait)
    monkeypatch.setenv("CB_TEST_SANDBOX_KEY", SECRET)
    code, _, err = _run(capsys, "env", "check")
    assert code == 3
    assert "cannot reach the service" in err or "no answer in time" in err
    assert "4 attempt(s) failed" in err
    assert SECRET not in err


def test_check_an_untrusted_certificate_says_what_to_do(
    capsys: pytest.CaptureFixture[str],
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """The check reports the error's hint under its line: here, how to trust the
    organisation's own certificate authority."""
    monkeypatch.setenv("CB_TEST_SANDBOX_KEY", SECRET)
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    server = HandshakeCounter(make_certificate(tmp_path))
    try:
        config = CONFIG.replace("http://127.0.0.1:9", server.url)
        (project / "customs-batch.yaml").write_text(config, encoding="utf-8")
        code, _, err = _run(capsys, "env", "check")
    finally:
        server.close()
    assert code == 3
    problem, hint = err.splitlines()
    assert problem.startswith("sandbox: the service's certificate is not trusted here")
    assert hint.startswith("  hint: ") and "SSL_CERT_FILE" in hint
    assert server.connections == 1


def test_a_key_in_the_config_is_refused_by_every_command(
    capsys: pytest.CaptureFixture[str], project: Path
) -> None:
    (project / "customs-batch.yaml").write_text(
        CONFIG + f"    api_key: {SECRET}\n", encoding="utf-8"
    )
    code, out, err = _run(capsys, "env", "list")
    assert code == 3
    assert "an API key may not be written here" in err
    assert SECRET not in out + err


def test_env_help_has_examples(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["env", "--help"], ["env", "list", "--help"], ["env", "check", "--help"]):
        _, out, _ = _run(capsys, *argv)
        assert "customs-batch env" in out


@pytest.mark.parametrize(
    "argv",
    [
        ("plan", "--env", "nope"),
        ("status", "--env", "nope"),
        ("state", "list", "--env", "nope"),
        ("env", "show", "nope"),
        ("env", "check", "--env", "nope"),
    ],
)
def test_an_environment_named_on_the_command_line_and_not_defined_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], project: Path, argv: tuple[str, ...]
) -> None:
    (project / "manifests").mkdir()
    code, out, err = _run(capsys, *argv)
    assert code == 64
    assert out == ""
    assert "no environment named 'nope'" in err
    assert "known environments: local, sandbox" in err


@pytest.mark.parametrize(
    "argv",
    [
        ("plan", "--env", ""),
        ("apply", "--auto-approve", "--env", ""),
        ("status", "--env", ""),
        ("state", "list", "--env", ""),
        ("env", "show", ""),
        ("env", "check", "--env", ""),
    ],
)
def test_an_empty_env_is_a_usage_error_not_the_default_environment(
    capsys: pytest.CaptureFixture[str], project: Path, argv: tuple[str, ...]
) -> None:
    # `--env "$DEPLOY_ENV"` with the variable empty ran against the default environment
    # (here sandbox), as if no --env had been given.
    (project / "manifests").mkdir()
    code, out, err = _run(capsys, *argv)
    assert code == 64, out + err
    assert out == ""
    assert "error: the environment named on the command line is empty: it names none" in err
    assert "known environments: local, sandbox" in err
    assert not (project / ".customs-batch").exists()


@pytest.mark.parametrize("command", ["plan", "apply", "status", "refresh", "results"])
def test_the_env_help_says_an_empty_name_is_refused(
    capsys: pytest.CaptureFixture[str], command: str
) -> None:
    # An empty --env and an empty $CUSTOMS_BATCH_ENV are both refused, not the default;
    # --help said only where the default comes from.
    code, out, _ = _run(capsys, command, "--help")
    assert code == 0
    assert "An empty name, here or in $CUSTOMS_BATCH_ENV, is refused" in " ".join(out.split())


def test_an_environment_the_variable_names_and_not_defined_is_an_error(
    capsys: pytest.CaptureFixture[str], project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUSTOMS_BATCH_ENV", "nope")
    code, _, err = _run(capsys, "env", "show")
    assert code == 3
    assert "$CUSTOMS_BATCH_ENV names environment 'nope', which is not defined" in err


def test_the_list_table_says_where_each_state_is(
    capsys: pytest.CaptureFixture[str], project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/environments.md: env list, in its default format too, has a `state` column."""
    monkeypatch.setenv("COLUMNS", "400")
    code, out, _ = _run(capsys, "env", "list")
    assert code == 0
    header = next(line for line in out.splitlines() if "base_url" in line)
    assert header.split()[-2:] == ["state", "┃"]
    rows = {line.split()[1]: line for line in out.splitlines() if line.startswith("│")}
    state = project.resolve() / ".customs-batch"
    assert f"local: files in {state / 'sandbox'}" in rows["sandbox"]
    assert f"local: files in {state / 'local'}" in rows["local"]


def test_check_of_a_base_url_without_the_api_says_to_check_the_base_url(
    capsys: pytest.CaptureFixture[str], project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A base_url with a wrong path prefix gets a 404 for the list the check reads: it said
    # "not found (...): check the ID and that it belongs to your company", and the check
    # names no ID.
    from contextlib import contextmanager
    from typing import Any

    from customs_batch.client import NotFoundError
    from customs_batch.commands import env as env_command

    class _Sender:
        def watch(self) -> list[Any]:
            return []

    class _Client:
        sender = _Sender()

        def list_template_groups(self, **_: Any) -> None:
            raise NotFoundError(
                "not found (GET /v1/declaration-templates/groups): no endpoint; check the ID",
                status=404,
                body={"message": "no endpoint at /prefix/v1/declaration-templates/groups"},
                operation="GET /v1/declaration-templates/groups",
            )

    @contextmanager
    def _open(*_: Any, **__: Any) -> Any:
        yield _Client()

    monkeypatch.setattr(env_command, "open_client", _open)
    monkeypatch.setenv("CB_TEST_SANDBOX_KEY", SECRET)
    code, _, err = _run(capsys, "env", "check")
    assert code == 3
    problem, hint = err.splitlines()
    assert problem.startswith("sandbox: http://127.0.0.1:9 has no list of template groups")
    assert "no endpoint at /prefix/v1/declaration-templates/groups" in problem
    assert "check the ID" not in err
    assert hint.startswith("  hint: check the environment's base_url")
