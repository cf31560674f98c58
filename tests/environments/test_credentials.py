from __future__ import annotations

from pathlib import Path

import pytest

from customs_batch.environments import SANDBOX_KEY, CredentialKind, CredentialSource, load_project
from customs_batch.environments._credentials import key_file_source
from customs_batch.errors import ConfigError


def test_a_variable_is_described_without_its_value() -> None:
    source = CredentialSource(CredentialKind.ENV_VAR, "MY_KEY")
    assert source.describe({"MY_KEY": "v3ry-s3cret"}) == "$MY_KEY (set)"
    assert source.describe({}) == "$MY_KEY (not set)"
    assert source.resolve({"MY_KEY": " v3ry-s3cret\n"}) == "v3ry-s3cret"


def test_a_missing_variable_names_the_variable() -> None:
    with pytest.raises(ConfigError, match="MY_KEY") as caught:
        CredentialSource(CredentialKind.ENV_VAR, "MY_KEY").resolve({})
    assert caught.value.message.endswith("holds the API key is not set")
    assert "export MY_KEY" in str(caught.value.hint)


@pytest.mark.parametrize("value", ["", "  ", "\n"])
def test_an_empty_variable_is_told_apart_from_one_not_set(value: str) -> None:
    # An exported variable whose CI secret is missing: "not set" would send the user to
    # export what is exported.
    source = CredentialSource(CredentialKind.ENV_VAR, "MY_KEY")
    assert source.describe({"MY_KEY": value}) == "$MY_KEY (empty)"
    with pytest.raises(ConfigError, match="is set but empty") as caught:
        source.resolve({"MY_KEY": value})
    assert "the secret it is set from" in str(caught.value.hint)


def test_a_key_file_is_read_and_described(tmp_path: Path) -> None:
    key_file = tmp_path / "home" / "sandbox.key"
    key_file.write_text("file-s3cret\n", encoding="utf-8")
    source = CredentialSource(CredentialKind.FILE, str(key_file))
    assert source.resolve({}) == "file-s3cret"
    assert source.describe() == f"file {key_file} (readable)"
    assert "file-s3cret" not in source.describe()


def test_a_missing_or_multiline_key_file_is_explained(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the API key file"):
        CredentialSource(CredentialKind.FILE, str(tmp_path / "none.key")).resolve({})
    two = tmp_path / "two.key"
    two.write_text("a\nb\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="on one line"):
        CredentialSource(CredentialKind.FILE, str(two)).resolve({})


def test_a_key_file_inside_the_repository_is_refused(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "customs-batch.yaml").write_text(
        "environments:\n  s:\n    base_url: https://x\n    api_key_file: secrets/s.key\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError, match="inside the repository") as caught:
        load_project(repo)
    assert "outside version control" in str(caught.value.hint)
    # Which file and environment: with several in customs-batch.yaml, the error named
    # neither, and refused every command, the other environments' too.
    assert caught.value.message.startswith(
        f"{repo / 'customs-batch.yaml'}: environment 's': api_key_file secrets/s.key is inside"
    )


def test_a_home_key_file_is_accepted(tmp_path: Path) -> None:
    source = key_file_source("~/k.key", base=tmp_path, repository=tmp_path / "repo")
    assert source.ref == str((tmp_path / "home" / "k.key").resolve())


def test_the_builtin_key_is_the_sandbox_seeds() -> None:
    assert CredentialSource(CredentialKind.BUILTIN).resolve({}) == SANDBOX_KEY


def test_a_key_file_linked_to_dev_zero_is_refused_not_read(tmp_path: Path) -> None:
    link = tmp_path / "home" / "sandbox.key"
    link.symlink_to("/dev/zero")
    with pytest.raises(ConfigError, match="not a regular file") as caught:
        CredentialSource(CredentialKind.FILE, str(link)).resolve({})
    assert str(link) in str(caught.value)


@pytest.mark.parametrize(
    ("key", "position", "what"),
    [
        ("abc\u00e9def", 4, "not ASCII"),  # a pasted accented letter
        ("\u201ckey-123\u201d", 1, "not ASCII"),  # typographic quotes
        ("key\u00a0123", 4, "not ASCII"),  # a non-breaking space
        ("key 123", 4, "a space or a control character"),
        ("key\t123", 4, "a space or a control character"),
    ],
)
def test_a_malformed_key_names_its_variable_without_showing_it(
    key: str, position: int, what: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        CredentialSource(CredentialKind.ENV_VAR, "MY_KEY").resolve({"MY_KEY": key})
    message = str(caught.value)
    assert (
        f"the API key in the environment variable MY_KEY is malformed: its character {position}"
        in message
    )
    assert what in message
    assert key.strip() not in message and "123" not in message


def test_a_malformed_key_file_names_the_file(tmp_path: Path) -> None:
    key_file = tmp_path / "home" / "sandbox.key"
    key_file.parent.mkdir(parents=True, exist_ok=True)
    key_file.write_text("s3cr\u00e8t-key\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        CredentialSource(CredentialKind.FILE, str(key_file)).resolve({})
    assert f"the API key file {key_file} is malformed: its character 5 of 10" in str(caught.value)
    assert "s3cr" not in str(caught.value)


@pytest.mark.parametrize(
    ("mode", "readers"),
    [
        (0o600, None),
        (0o400, None),
        (0o640, "group"),
        (0o604, "others"),
        (0o644, "group and others"),
    ],
)
def test_a_key_file_others_can_read_is_read_with_a_warning_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: int, readers: str | None
) -> None:
    """Found probing: a key file of mode 0644 was read without a word. As kubectl warns of a
    group-readable configuration, it is read with a warning that says how to mend it, once
    (the key read again after a 401 says nothing more), and never shows the key."""
    key_file = tmp_path / "my keys" / "sandbox.key"
    key_file.parent.mkdir()
    key_file.write_text("file-s3cret\n", encoding="utf-8")
    key_file.chmod(mode)
    source = CredentialSource(CredentialKind.FILE, str(key_file))
    assert source.resolve({}) == "file-s3cret"
    err = capsys.readouterr().err
    if readers is None:
        assert err == ""
        return
    assert err == (
        f"warning: the API key file {key_file} can be read by {readers} (mode {mode:04o}): "
        "anyone who can read it can send requests with your key. Make it readable by you "
        f"only: chmod 600 '{key_file}'\n"
    )
    assert source.resolve({}) == "file-s3cret"
    assert capsys.readouterr().err == ""
