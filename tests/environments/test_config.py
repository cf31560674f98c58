from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from customs_batch.client import RateLimit
from customs_batch.environments import (
    LOCAL,
    CredentialKind,
    find_config,
    load_project,
)
from customs_batch.environments._config_schema import CONFIG, EXPECTED
from customs_batch.environments._environment import NotifyOn, NotifySettings
from customs_batch.errors import ConfigError, UsageError

GOOD = """\
default_environment: sandbox
environments:
  sandbox:
    base_url: https://sandbox.customs.example/
    api_key_env: CUSTOMS_SANDBOX_KEY
    rate_limit: 100/minute
    parallelism: 4
    timeouts: {connect: 5, read: 20}
  production:
    base_url: https://api.customs.example
    api_key_file: ~/.config/customs-batch/production.key
    rate_limit: 1000/hour
    endpoints:
      submit_departure: POST /v2/transit/departures
"""


@pytest.fixture(autouse=True)
def _in_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Work in tmp_path/project, so the home directory lies outside the project."""
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)


def _write(text: str, where: Path | None = None) -> Path:
    path = (where or Path.cwd()) / "customs-batch.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_without_a_file_only_local_exists() -> None:
    project = load_project()
    assert project.path is None
    assert list(project.environments) == [LOCAL]
    local = project.select(None)
    assert local.builtin
    assert local.credential.kind is CredentialKind.BUILTIN
    assert local.sandbox_db == Path.cwd().resolve() / ".customs-batch" / "local" / "sandbox.sqlite3"


def test_the_file_is_found_in_a_parent_directory() -> None:
    _write(GOOD)
    nested = Path.cwd() / "manifests" / "deep"
    nested.mkdir(parents=True)
    assert find_config(nested) == Path.cwd() / "customs-batch.yaml"
    assert load_project(nested).root == Path.cwd().resolve()


def test_environments_are_read() -> None:
    _write(GOOD)
    project = load_project()
    sandbox = project.environment("sandbox")
    assert sandbox.base_url == "https://sandbox.customs.example"
    assert sandbox.rate_limit == RateLimit.parse("100/minute")
    assert sandbox.timeouts.connect == 5
    assert sandbox.credential.ref == "CUSTOMS_SANDBOX_KEY"
    production = project.environment("production")
    assert str(production.endpoints["submit_departure"]) == "POST /v2/transit/departures"
    assert production.credential.kind is CredentialKind.FILE
    assert production.state_dir == Path.cwd().resolve() / ".customs-batch" / "production"


def test_selection_order_is_option_variable_default_local() -> None:
    _write(GOOD)
    project = load_project()
    assert project.select("production", {}).name == "production"
    assert project.select(None, {"CUSTOMS_BATCH_ENV": "production"}).name == "production"
    assert project.select(None, {}).name == "sandbox"
    _write("environments: {}\n")
    assert load_project().select(None, {}).name == LOCAL


def test_an_unknown_environment_lists_the_known_ones() -> None:
    _write(GOOD)
    with pytest.raises(UsageError, match="no environment named 'prod'") as caught:
        load_project().select("prod", {})  # named on the command line: a wrong option
    assert "production" in str(caught.value.hint)
    # From the variable: the error names it, so a user who typed no --env knows the source.
    with pytest.raises(
        ConfigError, match=r"\$CUSTOMS_BATCH_ENV names environment 'prod', which is not defined"
    ) as caught_too:
        load_project().select(None, {"CUSTOMS_BATCH_ENV": "prod"})
    assert "production" in str(caught_too.value.hint)
    assert "unset CUSTOMS_BATCH_ENV" in str(caught_too.value.hint)


def test_an_empty_environment_variable_is_refused_not_taken_for_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `CUSTOMS_BATCH_ENV: ${{ vars.TARGET }}` in a workflow whose variable is missing: the
    # run meant for one environment would have planned and applied the default.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "customs-batch.yaml").write_text(
        "default_environment: production\nenvironments:\n"
        "  production: {base_url: https://p.test, api_key_env: K}\n"
        "  staging: {base_url: https://s.test, api_key_env: K}\n"
    )
    with pytest.raises(ConfigError, match=r"\$CUSTOMS_BATCH_ENV is set but empty") as caught:
        load_project().select(None, {"CUSTOMS_BATCH_ENV": ""})
    assert "unset CUSTOMS_BATCH_ENV" in str(caught.value.hint)
    assert load_project().select("staging", {"CUSTOMS_BATCH_ENV": ""}).name == "staging"


def test_an_empty_env_option_is_a_usage_error_not_the_default() -> None:
    # `--env "$DEPLOY_ENV"` with the variable empty selected the default environment (or
    # $CUSTOMS_BATCH_ENV's) as if no --env had been given: a run meant for one environment
    # went to another.
    _write(GOOD)
    with pytest.raises(
        UsageError, match="the environment named on the command line is empty: it names none"
    ) as caught:
        load_project().select("", {"CUSTOMS_BATCH_ENV": "production"})
    assert "production, sandbox" in str(caught.value.hint)
    assert "that variable is empty or not set" in str(caught.value.hint)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("environments:\n  s:\n    base_url: https://x\n    api_key: abcdef123\n", "may not be"),
        ("environments:\n  s:\n    base_url: https://x\n    token: abcdef123\n", "may not be"),
        (
            "environments:\n  s:\n    base_url: https://x\n    api_key_env: sk-live-abcdef123\n",
            "NAME of an environment variable",
        ),
        (
            "environments:\n  s:\n    base_url: https://x\n    api_key_env: abcdef123xyz\n",
            "NAME of an environment variable",
        ),
    ],
)
def test_a_key_written_in_the_file_is_refused_without_quoting_it(text: str, words: str) -> None:
    _write(text)
    with pytest.raises(ConfigError, match=words) as caught:
        load_project()
    assert "abcdef123" not in str(caught.value)
    assert ":4:" in str(caught.value)
    assert "outside version control" in str(caught.value)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("environments:\n  s:\n    base_url: ftp://x\n    api_key_env: K\n", "s.base_url"),
        (
            "environments:\n  s:\n    base_url: https://x\n    api_key_env: K\n    rate_limit: 9\n",
            "rate_limit",
        ),
        (
            "environments:\n  s:\n    base_url: https://x\n    api_key_env: K\n    colour: red\n",
            "'colour' was unexpected",
        ),
        (
            "environments:\n  s:\n    base_url: https://x\n    api_key_env: K\n    parallelism: 0\n",
            "s.parallelism: must be at least 1",
        ),
        ("environments:\n  s:\n    api_key_env: K\n", "no base_url"),
        ("environments:\n  s:\n    base_url: https://x\n", "exactly one of"),
        ("environments:\n  local:\n    base_url: https://x\n", "local cannot set base_url"),
        ("default_environment: nope\n", "not defined"),
        (
            "environments:\n  s:\n    base_url: https://x\n    api_key_env: K\n"
            "    endpoints: {nope: GET /x}\n",
            "unknown endpoint name",
        ),
        ("environments: [\n", "fix the YAML syntax"),
        (
            "environments:\n  local:\n    large_change_guard: {max_create_share: 0}\n",
            "customs-batch.yaml:3: environments.local.large_change_guard.max_create_share: "
            "must be more than 0",
        ),
        (
            "environments:\n  local:\n    large_change_guard: {min_records: 0}\n",
            "large_change_guard.min_records: must be at least 1",
        ),
        (
            "environments:\n  local:\n    large_change_guard: {max_share: 1}\n",
            "'max_share' was unexpected",
        ),
        ("manifests: []\n", "customs-batch.yaml:1: manifests: must list at least one entry"),
        (
            "environments:\n  s:\n    base_url: https://x\n    api_key_env: K\n"
            "    parallelism: 65\n",
            "s.parallelism: must be at most 64",
        ),
        ('manifests: [""]\n', "manifests.0: must not be empty: write a value"),
        ('state_dir: ""\n', "state_dir: must not be empty: write a value"),
        ("manifests: manifests/\n", "manifests: must be of type array"),
    ],
)
def test_invalid_configurations_say_where_and_what(text: str, words: str) -> None:
    _write(text)
    with pytest.raises(ConfigError) as caught:
        load_project()
    assert words in str(caught.value)
    assert "customs-batch.yaml" in str(caught.value)


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("http://[::1", "Invalid IPv6 URL"),
        ("http://[zz]:8080", "is not an address the client can send to"),
        ("http://host:abc", "Port could not be cast to integer value"),
        ("http://host:99999", "Port out of range"),
        ("http://host:0", "names port 0, not one from 1 to 65535"),
        ("http://:8080", "names no host"),
        # The path of each request was put after the query: every request went to /v1/.
        ("https://api.customs.example/v1/?lang=en", "holds a query or a fragment"),
        ("https://api.customs.example#top", "holds a query or a fragment"),
    ],
)
def test_a_base_url_the_client_cannot_send_to_is_refused_naming_it(url: str, words: str) -> None:
    # It passed the checks, plan ran, and env check and apply stopped with "internal
    # error: InvalidURL".
    _write(f'environments:\n  s:\n    api_key_env: K\n    base_url: "{url}"\n')
    with pytest.raises(ConfigError) as caught:
        load_project()
    assert "customs-batch.yaml:4: environments.s.base_url: " in str(caught.value)
    assert words in str(caught.value) and "internal error" not in str(caught.value)


def test_good_base_urls_are_taken() -> None:
    for url in ("http://[::1]:8080", "https://api.customs.example/v1/", "http://127.0.0.1:1"):
        _write(f'environments:\n  s:\n    api_key_env: K\n    base_url: "{url}"\n')
        assert load_project().environment("s").base_url == url.rstrip("/")


@pytest.mark.parametrize(
    ("text", "where"),
    [
        (
            'environments:\n  s:\n    base_url: https://x\n    api_key_env: K\n    state_dir: "a\\0b"\n',
            "customs-batch.yaml:5: environments.s.state_dir",
        ),
        ('manifests: ["m\\0"]\n', "customs-batch.yaml:1: manifests.0"),
        (
            'environments:\n  s:\n    base_url: "https://x\\0"\n    api_key_env: K\n',
            "customs-batch.yaml:3: environments.s.base_url",
        ),
    ],
)
def test_a_nul_character_in_a_setting_is_refused_naming_it(text: str, where: str) -> None:
    # A NUL in state_dir was "internal error: ValueError: embedded null byte".
    _write(text)
    with pytest.raises(ConfigError) as caught:
        load_project()
    assert f"{where}: holds a NUL character" in str(caught.value)


def test_a_file_nesting_thousands_of_levels_is_refused_naming_it() -> None:
    # It was "internal error: RecursionError: maximum recursion depth exceeded".
    _write("manifests: [manifests]\nenvironments: " + "[" * 3000 + "]" * 3000 + "\n")
    with pytest.raises(ConfigError, match=r"customs-batch.yaml:2: the settings nest more than"):
        load_project()


def test_aliases_standing_for_billions_of_values_are_refused_naming_the_file() -> None:
    # Nested aliases under a suppress entry: with nine levels (a billion values) every
    # command ran for ever at full CPU; six (a million) are enough to be refused.
    lines = ['      a0: &a0 ["x","x","x","x","x","x","x","x","x","x"]']
    lines += [f"      a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 6)]
    _write(
        "manifests: [manifests]\nsuppress:\n  - rule: x\n    paths: [a]\n    reason: r\n"
        "    junk:\n" + "\n".join(lines) + "\n"
    )
    with pytest.raises(ConfigError, match=r"customs-batch.yaml:\d+: the settings hold more than"):
        load_project()


@pytest.mark.parametrize(
    ("setting", "where"),
    [
        ("timeouts: {connect: .nan, read: 30}", "environments.s.timeouts.connect: is nan"),
        ("timeouts: {connect: 4, read: .inf}", "environments.s.timeouts.read: is inf"),
        (
            "large_change_guard: {max_create_share: .NaN}",
            "environments.s.large_change_guard.max_create_share: is nan",
        ),
    ],
)
def test_a_setting_that_is_not_a_finite_number_is_refused_naming_it(
    setting: str, where: str
) -> None:
    # A timeout of .nan passed the check; env check then said "internal error: ValueError:
    # Invalid value NaN (not a number)".
    _write(f"environments:\n  s:\n    base_url: https://x\n    api_key_env: K\n    {setting}\n")
    with pytest.raises(ConfigError, match=rf"customs-batch.yaml:5: {re.escape(where)}"):
        load_project()


@pytest.mark.parametrize("timeout", ["99999999999999999999999", "86401", "1.0e+12"])
def test_a_timeout_longer_than_a_day_is_refused_naming_it(timeout: str) -> None:
    # A read timeout of 99999999999999999999999 passed the check; env check then said
    # "internal error: OverflowError: timestamp too large to convert to C _PyTime_t".
    _write(
        "environments:\n  s:\n    base_url: https://x\n    api_key_env: K\n"
        f"    timeouts: {{connect: 10, read: {timeout}}}\n"
    )
    with pytest.raises(
        ConfigError, match=r"customs-batch.yaml:5: environments.s.timeouts.read: .*86400"
    ):
        load_project()


@pytest.mark.parametrize(
    ("rate", "why"),
    [
        ("9" * 400 + "/second", "more requests than a number here can hold"),
        ("0/minute", "is not N/second"),
        # Plan said "about 24999999999999998346959548 h", apply "OverflowError: timestamp
        # out of range for platform time_t" for each request after the first, then hung.
        ("0.0000000000000000000000000001/second", "fewer than one request a day"),
        ("0.04/hour", "fewer than one request a day"),
    ],
)
def test_a_rate_limit_that_is_no_limit_is_refused_at_its_line(rate: str, why: str) -> None:
    # 400 nines were read as infinity: `plan` said "about 0.0 s at inf/second" and `apply`
    # ended in "internal error: OverflowError"; 0/minute was refused without file or line.
    _write(f"environments:\n  local:\n    parallelism: 2\n    rate_limit: {rate}\n")
    with pytest.raises(
        ConfigError, match=rf"customs-batch.yaml:4: environments.local.rate_limit: .*{why}"
    ):
        load_project()


@pytest.mark.parametrize("rate", ["1/hour", "0.042/hour", "0.0001/second"])
def test_a_rate_limit_of_one_request_a_day_or_more_is_taken(rate: str) -> None:
    _write(f"environments:\n  local:\n    rate_limit: {rate}\n")
    assert load_project().environment("local").rate_limit.requests is not None


def test_a_timeout_of_a_day_is_taken() -> None:
    _write(
        "environments:\n  s:\n    base_url: https://x\n    api_key_env: K\n"
        "    timeouts: {connect: 86400, read: 86400}\n"
    )
    assert load_project().environment("s").timeouts.read == 86400


@pytest.mark.parametrize("entry", ["/", "/..", "../../../../../../../../../../../.."])
def test_a_manifests_entry_at_the_root_of_the_file_system_is_refused(entry: str) -> None:
    # `validate` walked every folder of the machine (over a minute, any YAML file found
    # read as a manifest) before saying anything.
    _write(f'default_environment: local\nmanifests: [manifests, "{entry}"]\n')
    with pytest.raises(ConfigError, match=r"customs-batch.yaml:2: manifests.1: is /, the root"):
        load_project()


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("state_dir: customs-batch.yaml\n", "customs-batch.yaml:1: state_dir"),
        (
            "environments:\n  local:\n    state_dir: customs-batch.yaml\n",
            "customs-batch.yaml:3: environments.local.state_dir",
        ),
    ],
)
def test_a_state_dir_that_is_a_file_is_refused_naming_it(text: str, where: str) -> None:
    # plan said "cannot read (Not a directory, ENOTDIR)" and to check the disk.
    _write(text)
    with pytest.raises(ConfigError, match=rf"{re.escape(where)}: names .*, a file, where"):
        load_project()


def test_a_key_at_the_top_level_is_refused_too() -> None:
    _write("default_environment: local\ntoken: abcdef123\n")
    with pytest.raises(ConfigError, match=r"customs-batch.yaml:2: token: an API key") as caught:
        load_project()
    assert "abcdef123" not in str(caught.value)


def test_schema_errors_carry_the_line() -> None:
    _write("environments:\n  s:\n    base_url: https://x\n    api_key_env: K\n    parallelism: x\n")
    with pytest.raises(ConfigError, match=r"customs-batch.yaml:5: environments.s.parallelism"):
        load_project()


def test_local_may_change_its_pace_only() -> None:
    _write("environments:\n  local:\n    rate_limit: 10/second\n    parallelism: 2\n")
    local = load_project().environment(LOCAL)
    assert local.builtin
    assert local.rate_limit == RateLimit.parse("10/second")
    assert local.parallelism == 2


@pytest.mark.parametrize("written", ["off", '"off"', "Off"])
def test_rate_limit_off_may_be_written_unquoted(written: str) -> None:
    _write(
        "environments:\n  e2e:\n    base_url: http://127.0.0.1:8080\n"
        f"    api_key_env: CUSTOMS_E2E_KEY\n    rate_limit: {written}\n"
    )
    assert load_project().environment("e2e").rate_limit == RateLimit(None)


def test_a_config_file_that_is_a_named_pipe_is_refused_not_waited_on(tmp_path: Path) -> None:
    import os

    from tests.test_userfiles import within_seconds

    os.mkfifo(tmp_path / "customs-batch.yaml")
    with pytest.raises(ConfigError, match="named pipe") as caught:
        within_seconds(lambda: load_project(tmp_path))
    assert "customs-batch.yaml" in str(caught.value)


def test_the_large_change_guard_is_on_by_default_and_set_per_environment() -> None:
    _write(
        "environments:\n  local:\n    large_change_guard: {min_records: 10}\n"
        "  prod:\n    base_url: https://x\n    api_key_env: K\n"
        "    large_change_guard: {min_records: 200, max_create_share: 0.1}\n"
        "  sandbox:\n    base_url: https://y\n    api_key_env: K\n"
    )
    project = load_project()
    local, prod = project.environment(LOCAL), project.environment("prod")
    assert (local.large_change_guard.min_records, local.large_change_guard.max_create_share) == (
        10,
        0.5,
    )
    assert (prod.large_change_guard.min_records, prod.large_change_guard.max_create_share) == (
        200,
        0.1,
    )
    default = project.environment("sandbox").large_change_guard
    assert (default.min_records, default.max_create_share) == (50, 0.5)


@pytest.mark.parametrize("on", ["on", '"on"'])
def test_notify_is_off_unless_set_and_on_may_be_written_unquoted(on: str) -> None:
    _write(
        "environments:\n  local:\n    notify: {urls_env: CUSTOMS_BATCH_NOTIFY_URLS}\n"
        "  prod:\n    base_url: https://x\n    api_key_env: K\n"
        f"    notify:\n      urls_env: PROD_NOTIFY\n      {on}: [end, rejection]\n"
        "  sandbox:\n    base_url: https://y\n    api_key_env: K\n"
    )
    project = load_project()
    local, prod = project.environment(LOCAL).notify, project.environment("prod").notify
    assert local == NotifySettings(
        "CUSTOMS_BATCH_NOTIFY_URLS", frozenset({NotifyOn.REJECTION, NotifyOn.NEEDS_DECISION})
    )
    assert prod == NotifySettings("PROD_NOTIFY", frozenset({NotifyOn.END, NotifyOn.REJECTION}))
    assert project.environment("sandbox").notify is None


@pytest.mark.parametrize(
    ("block", "words"),
    [
        ("{urls: 'slack://T0/B0/tok-abcdef123'}", "notification URLs may not be written here"),
        ("{url: 'json://h/tok-abcdef123'}", "notification URLs may not be written here"),
        ("{urls_env: 'slack://T0/B0/tok-abcdef123'}", "NAME of an environment variable"),
    ],
)
def test_notification_urls_written_in_the_file_are_refused_without_quoting_them(
    block: str, words: str
) -> None:
    _write(f"environments:\n  local:\n    notify: {block}\n")
    with pytest.raises(ConfigError, match=words) as caught:
        load_project()
    assert "abcdef123" not in str(caught.value)
    assert "customs-batch.yaml:3: environments.local.notify" in str(caught.value)
    assert "notify.urls_env" in str(caught.value)


@pytest.mark.parametrize(
    ("block", "words"),
    [
        ("{on: [end]}", "'urls_env' is a required property"),
        ("{urls_env: N, on: [always]}", "must be one of rejection, needs-decision, end"),
        (
            "{urls_env: N, on: []}",
            "notify.on: must list at least one entry; it takes rejection, needs-decision and end",
        ),
    ],
)
def test_an_invalid_notify_block_says_where_and_what(block: str, words: str) -> None:
    _write(f"environments:\n  local:\n    notify: {block}\n")
    with pytest.raises(ConfigError) as caught:
        load_project()
    assert words in str(caught.value)
    assert "environments.local.notify" in str(caught.value)


def test_the_manifests_list_is_what_paths_default_to(tmp_path: Path) -> None:
    assert load_project().manifest_paths() == [Path(".")]
    _write("manifests: [manifests, more/one.yaml]\n")
    Path("manifests").mkdir()
    Path("more").mkdir()
    Path("more/one.yaml").write_text("", encoding="utf-8")
    assert load_project().manifest_paths() == [Path("manifests"), Path("more/one.yaml")]
    # From inside the project the list is relative to the current folder.
    assert load_project(Path("more")).manifest_paths(Path("more").resolve()) == [
        Path("manifests").resolve(),
        Path("one.yaml"),
    ]


def test_a_manifests_entry_that_does_not_exist_is_a_config_error() -> None:
    _write("manifests: [manifests]\n")
    with pytest.raises(ConfigError) as caught:
        load_project().manifest_paths()
    assert "customs-batch.yaml: manifests names manifests, which does not exist" in str(
        caught.value
    )


SHARED = """\
environments:
  staging:
    base_url: https://staging.customs.example
    api_key_env: STAGING_KEY
  production:
    base_url: https://api.customs.example
    api_key_env: PRODUCTION_KEY
{extra}
"""


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        # A block copied from another and its state_dir not changed: production's plan would
        # take staging's objects for its own and send its updates to their IDs.
        (
            "    state_dir: .customs-batch/staging",
            "environments staging and production share one state (the same state_dir)",
        ),
        ("    state_dir: ./.customs-batch/./staging/", "environments staging and production"),
        ("    state_dir: .customs-batch/local", "environments local and production"),
        (
            "    state: {backend: postgres, url_env: STATE_URL, name: staging}\n"
            "  staging2:\n    base_url: https://s2.customs.example\n    api_key_env: K2\n"
            "    state: {backend: postgres, url_env: STATE_URL, name: staging}",
            "environments production and staging2 share one state (the same name in the "
            "database of $STATE_URL)",
        ),
    ],
)
def test_two_environments_sharing_one_state_are_refused(extra: str, words: str) -> None:
    _write(SHARED.format(extra=extra))
    with pytest.raises(ConfigError) as caught:
        load_project()
    assert words in caught.value.message
    assert "customs-batch.yaml" in caught.value.message
    assert caught.value.hint and "its own" in caught.value.hint


def test_environments_in_their_own_folders_or_database_states_are_accepted() -> None:
    _write(
        SHARED.format(
            extra="    state_dir: .customs-batch/prod\n"
            "    state: {backend: postgres, url_env: STATE_URL}\n"
            "  eu:\n    base_url: https://eu.customs.example\n    api_key_env: K2\n"
            "    state: {backend: postgres, url_env: STATE_URL}"
        )
    )
    assert set(load_project().environments) == {"local", "staging", "production", "eu"}


def test_values_written_out_are_not_counted_against_the_alias_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The bound on what aliases stand for counted every value written out too: a file
    # longer than it was refused, aliases or not. Here the bound is 20.
    monkeypatch.setattr("customs_batch.yaml_bounds.MAX_VALUES", 20)
    folders = ", ".join(f"m{n}" for n in range(30))
    _write(f"manifests: [{folders}]\n")
    assert len(load_project().manifests) == 30


def test_the_root_of_the_file_system_is_no_project() -> None:
    # From `/` without a customs-batch.yaml, `/` was the project: the built-in environment
    # kept its state in /.customs-batch/local.
    with pytest.raises(ConfigError) as caught:
        load_project(Path("/"))
    assert "the project would be /, the root of the file system" in caught.value.message
    assert caught.value.hint is not None
    assert "run customs-batch from the project's own folder" in caught.value.hint


@pytest.mark.parametrize(
    ("setting", "where"),
    [
        ("state_dir: /\n", "customs-batch.yaml:1: state_dir"),
        ("environments:\n  local:\n    state_dir: /\n", "customs-batch.yaml:3: environments.local"),
        ("state_dir: UP\n", "customs-batch.yaml:1: state_dir"),  # ../.. up to /
        (
            "environments:\n  s:\n    base_url: https://x\n    api_key_env: K\n    state_dir: //\n",
            "customs-batch.yaml:5: environments.s.state_dir",
        ),
    ],
)
def test_a_state_dir_at_the_root_of_the_file_system_is_refused(setting: str, where: str) -> None:
    # `state_dir: /` was accepted: the states would have been written straight into /.
    up = os.path.relpath("/", Path.cwd().resolve())
    _write(setting.replace("UP", up))
    with pytest.raises(ConfigError) as caught:
        load_project()
    assert where in caught.value.message
    assert "the root of the file system, which no state folder can be" in caught.value.message
    assert caught.value.hint is not None and "a folder of its own" in caught.value.hint


_BASE = "environments:\n  s:\n    base_url: https://x\n    api_key_env: K\n"


@pytest.mark.parametrize(
    ("text", "where", "words"),
    [
        (
            _BASE + "    rate_limit: -5/minute\n",
            "5: environments.s.rate_limit",
            "write a number of requests, more than 0 and written in digits 0-9, per second, "
            "minute or hour (e.g. 100/minute, 0.5/second), or off",
        ),
        (
            _BASE + "    rate_limit: \u0661\u0660/minute\n",  # \\d took it for 10/minute
            "5: environments.s.rate_limit",
            "is written with digits of another script than 0-9: write a number of requests",
        ),
        (
            _BASE + "    notify: {urls_env: HOOKS, on: [end, end]}\n",
            "5: environments.s.notify.on",
            "names the same entry more than once: write each once",
        ),
        (
            "environments:\n  s:\n    base_url: https://user:secret@x.example\n    api_key_env: K\n",
            "3: environments.s.base_url",
            "write http:// or https:// and the service's host, e.g. "
            "https://sandbox.customs.example, with no space and no user:password@",
        ),
        (
            _BASE + "    endpoints: {submit_departure: 'SEND x'}\n",
            "5: environments.s.endpoints.submit_departure",
            "write a method and a path, e.g. 'POST /declarations'",
        ),
        (
            "environments:\n  'a b':\n    base_url: https://x\n    api_key_env: K\n",
            "2: environments",
            "each key must be a name made of letters, digits",
        ),
    ],
)
def test_a_setting_of_the_wrong_form_says_in_words_what_to_write(
    text: str, where: str, words: str
) -> None:
    """It said "is not valid (anyOf)", "is not valid (uniqueItems)" or quoted the regular
    expression the value did not match."""
    _write(text)
    with pytest.raises(ConfigError) as caught:
        load_project()
    said = str(caught.value)
    assert f"customs-batch.yaml:{where}: " in said
    assert words in said
    assert "(anyOf)" not in said and "uniqueItems" not in said and "^" not in said
    assert "secret" not in said


def _rules_without_words(schema: object, at: str = "") -> list[str]:
    if isinstance(schema, list):
        return [miss for i, item in enumerate(schema) for miss in _rules_without_words(item, at)]
    if not isinstance(schema, dict):
        return []
    missing = [at] if ({"pattern", "anyOf", "uniqueItems"} & schema.keys()) else []
    if missing and EXPECTED in schema:
        missing = []
    if "anyOf" in schema:  # the words of the whole stand for its branches'
        return missing
    return missing + [
        miss for key, value in schema.items() for miss in _rules_without_words(value, f"{at}/{key}")
    ]


def test_every_rule_of_form_in_the_schema_has_words() -> None:
    """An error of a pattern, an anyOf or a uniqueItems is said with the schema's words for
    the setting: each such rule has them."""
    assert _rules_without_words(CONFIG) == []


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (
            # A second base_url of one environment: it decided unseen where requests went.
            "environments:\n  prod:\n    base_url: https://prod.example\n"
            "    api_key_env: K\n    base_url: http://127.0.0.1:9\n",
            ":5: the key 'base_url' is given twice in one mapping (first at line 3)",
        ),
        (
            # A second environments: block: the first's environments were gone.
            "environments:\n  prod: {base_url: https://prod.example, api_key_env: K}\n"
            "environments:\n  s: {base_url: https://s.example, api_key_env: K}\n",
            ":3: the key 'environments' is given twice in one mapping (first at line 1)",
        ),
    ],
)
def test_a_key_given_twice_is_refused_at_both_lines(text: str, words: str) -> None:
    path = _write(text)
    with pytest.raises(ConfigError) as refused:
        load_project()
    assert refused.value.message == (f"{path}{words}: YAML would keep only the last, silently")


def test_a_folder_named_like_the_settings_is_refused_not_passed_over_for_a_parent() -> None:
    _write("manifests: [sub]\n")
    (Path.cwd() / "sub" / "customs-batch.yaml").mkdir(parents=True)
    with pytest.raises(ConfigError) as refused:
        load_project(Path.cwd() / "sub")
    assert refused.value.message.endswith(
        "sub/customs-batch.yaml is a folder, where the project's settings file of that name belongs"
    )


def test_a_file_that_is_not_utf_8_is_refused_at_its_line_and_column() -> None:
    path = Path.cwd() / "customs-batch.yaml"
    path.write_bytes(b"manifests: [manifests]\n# \xff\xfe bad\n")
    with pytest.raises(ConfigError) as refused:
        load_project()
    assert refused.value.message == f"{path}:2:3: byte 0xff is not UTF-8 text"
    assert refused.value.hint == "save the file as UTF-8"


def test_a_settings_file_over_a_megabyte_is_refused_before_yaml_reads_it() -> None:
    # Found probing: a customs-batch.yaml of one 100 MB comment line took 129 s to be read
    # (a pure-Python parser, three passes), and then was accepted.
    path = Path.cwd() / "customs-batch.yaml"
    path.write_bytes(b"manifests: [manifests]\n#" + b"x" * (100 * 1024 * 1024) + b"\n")
    started = time.monotonic()
    with pytest.raises(ConfigError) as refused:
        load_project()
    assert time.monotonic() - started < 5
    assert refused.value.message == (f"{path}: the file is larger than 1.0 MB (100 MB or more)")
    assert refused.value.hint is not None
    assert "a few kilobytes of settings" in refused.value.hint
    # A file of a megabyte is still read.
    path.write_bytes(b"manifests: [manifests]\n#" + b"x" * (1024 * 1024 - 30) + b"\n")
    assert load_project().path == path
