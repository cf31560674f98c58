"""``customs-batch sandbox``: option errors and the seed example (serving is in tests/sandbox)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from customs_batch.cli.main import invoke
from customs_batch.sandbox.persistence import _private as private
from customs_batch.sandbox.seed import parse_seed


def test_seed_example_prints_a_valid_seed(capsys: pytest.CaptureFixture[str]) -> None:
    assert invoke(["sandbox", "seed-example"]) == 0
    seed = parse_seed(capsys.readouterr().out, "stdout")
    assert [key.key for key in seed.api_keys] == ["sandbox-key", "inactive-key"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--rate-limit", "fast"], "invalid rate limit 'fast'"),
        (["--faults", "boom=1"], "unknown fault 'boom'"),
        (["--port", "70000"], "70000"),
        (["--clock", "frozen"], "'frozen' is not one of 'real', 'manual'"),
        (["--processing-seconds", "nan"], "nan is not a number of seconds"),
        (["--processing-seconds", "inf"], "inf is not a number of seconds"),
        (["--faults", "slow=0.5:1.2.3s"], "the delay must be a number of seconds"),
    ],
)
def test_bad_options_are_usage_errors(
    capsys: pytest.CaptureFixture[str], options: list[str], message: str
) -> None:
    assert invoke(["sandbox", "serve", *options]) == 64
    assert message in capsys.readouterr().err


def test_bad_seed_file_is_an_error_naming_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seed = tmp_path / "seed.yaml"
    seed.write_text("apiKeys:\n  - {key: k}\n", encoding="utf-8")
    assert invoke(["sandbox", "serve", "--seed", str(seed)]) == 3
    err = capsys.readouterr().err
    assert f"{seed}:2: at apiKeys[0]: 'companyId' is a required property" in err
    assert "Traceback" not in err


def test_a_seed_file_that_does_not_exist_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # It exited 3 ("cannot read the seed file"), while a seed that is a folder, and a
    # missing path given to any other command, exit 64 (README, Exit codes).
    missing = tmp_path / "seed.yaml"
    assert invoke(["sandbox", "serve", "--seed", str(missing)]) == 64
    err = capsys.readouterr().err
    assert f"Invalid value for '--seed': File '{missing}' does not exist." in err
    assert "Traceback" not in err


def test_help_lists_the_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert invoke(["sandbox", "serve", "--help"]) == 0
    out = capsys.readouterr().out
    assert "POST /_sandbox/clock" in out
    for option in (
        "--seed",
        "--db",
        "--rate-limit",
        "--processing-seconds",
        "--clock",
        "--faults",
        "--fault-seed",
    ):
        assert option in out


@pytest.mark.parametrize("name", ["journal.jsonl", "state.json", "history.jsonl"])
def test_db_naming_one_of_customs_batch_s_records_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    # SQLite would turn the file into a database, and the next command would read it.
    monkeypatch.chdir(tmp_path)
    record = tmp_path / ".customs-batch" / "local" / name
    record.parent.mkdir(parents=True)
    record.write_bytes(b"")
    assert invoke(["sandbox", "serve", "--db", str(record)]) == 64
    assert "name a file of its own for the data" in capsys.readouterr().err
    assert record.read_bytes() == b""


def test_an_empty_host_is_refused_not_every_interface(capsys: pytest.CaptureFixture[str]) -> None:
    # Found probing: `sandbox serve --host "$HOST"` with the variable unset listened on
    # 0.0.0.0, every interface of the machine.
    code = invoke(["sandbox", "serve", "--host", "", "--port", "0"])
    captured = capsys.readouterr()
    assert (code, captured.out) == (64, "")
    assert "Invalid value for '--host': '' is empty: give an address" in captured.err


def test_db_naming_a_device_or_a_pipe_is_refused_and_left_as_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Found probing: `sandbox serve --db /dev/null` opened the device as an empty database,
    # made it 0600 (every other user's /dev/null then failed: PostgreSQL's initdb could not
    # start) and wrote /dev/null-journal beside it. A /dev/null of this test's own.
    device = tmp_path / "null"
    try:
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except OSError as exc:
        pytest.skip(f"cannot make a device node here: {exc}")
    pipe = tmp_path / "db.pipe"
    os.mkfifo(pipe)
    for special in (device, pipe):
        os.chmod(special, 0o666)  # whatever the umask
        assert invoke(["sandbox", "serve", "--port", "0", "--db", str(special)]) == 64
        assert "not a regular file" in capsys.readouterr().err
        assert stat.S_IMODE(os.stat(special).st_mode) == 0o666
    assert not [path for path in tmp_path.iterdir() if path.name.endswith(("-journal", "-wal"))]


def test_the_emulator_database_never_changes_a_device_s_mode(tmp_path: Path) -> None:
    # What makes the database private (0600) changes regular files only, whatever path
    # reaches it.
    device = tmp_path / "null"
    try:
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except OSError as exc:
        pytest.skip(f"cannot make a device node here: {exc}")
    os.chmod(device, 0o666)
    private(device)
    assert stat.S_IMODE(os.stat(device).st_mode) == 0o666
