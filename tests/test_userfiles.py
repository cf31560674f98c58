"""Only regular files of a bounded size are read: pipes, devices and link loops are refused
at once with the path and what to do."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from customs_batch.errors import ConfigError
from customs_batch.userfiles import (
    MAX_FILE_MB_VARIABLE,
    MEGABYTE,
    FileRefused,
    max_file_bytes,
    read_user_file,
)

T = TypeVar("T")


def within_seconds(call: Callable[[], T], seconds: float = 10.0) -> T:
    """``call()``'s result, or its exception raised here; fails the test if it does not
    return in time (a read that blocks on a pipe never would). The thread is a daemon so a
    hang cannot keep pytest from ending."""
    outcome: list[T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            outcome.append(call())
        except BaseException as error:
            failure.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    if failure:
        raise failure[0]
    assert outcome, f"still blocked after {seconds} s"
    return outcome[0]


def test_a_named_pipe_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    pipe = tmp_path / "pipe.yaml"
    os.mkfifo(pipe)
    with pytest.raises(FileRefused) as caught:
        within_seconds(lambda: read_user_file(pipe))
    assert caught.value.rule == "file.not-regular"
    assert str(pipe) in caught.value.message and "named pipe" in caught.value.message


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_link_to_an_endless_device_is_refused_before_reading(tmp_path: Path, device: str) -> None:
    link = tmp_path / "m.yaml"
    link.symlink_to(device)
    with pytest.raises(FileRefused, match="character device"):
        within_seconds(lambda: read_user_file(link))


def test_a_symbolic_link_loop_is_refused_as_such(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").symlink_to("b.yaml")
    (tmp_path / "b.yaml").symlink_to("a.yaml")
    with pytest.raises(FileRefused) as caught:
        read_user_file(tmp_path / "a.yaml")
    assert caught.value.rule == "file.symlink-loop"
    assert "loop of symbolic links" in str(caught.value)


def test_a_missing_file_is_still_a_plain_os_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_user_file(tmp_path / "nothing.yaml")


def test_a_file_over_the_limit_is_refused_and_the_hint_says_how_to_raise_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    big = tmp_path / "big.yaml"
    big.write_bytes(b"#" * (MEGABYTE + 1))
    monkeypatch.setenv(MAX_FILE_MB_VARIABLE, "1")
    with pytest.raises(FileRefused) as caught:
        read_user_file(big)
    assert caught.value.rule == "file.too-large"
    assert f"{MAX_FILE_MB_VARIABLE}=2" in (caught.value.hint or "")
    monkeypatch.setenv(MAX_FILE_MB_VARIABLE, "2")
    assert len(read_user_file(big)) == MEGABYTE + 1


def test_the_limit_is_256_megabytes_unless_set_and_a_bad_setting_is_a_config_error() -> None:
    assert max_file_bytes({}) == 256 * MEGABYTE
    assert max_file_bytes({MAX_FILE_MB_VARIABLE: "1024"}) == 1024 * MEGABYTE
    with pytest.raises(ConfigError, match=MAX_FILE_MB_VARIABLE):
        max_file_bytes({MAX_FILE_MB_VARIABLE: "lots"})
    with pytest.raises(ConfigError, match=MAX_FILE_MB_VARIABLE) as caught:  # internal error
        max_file_bytes({MAX_FILE_MB_VARIABLE: "1" + "0" * 5000})
    assert len(caught.value.message) < 200, "the value is not echoed whole"
    for other_digits in (
        "\u0661\u0660",
        "²",
    ):  # 10 in Arabic-Indic digits was taken; ² an internal error
        with pytest.raises(ConfigError, match="a whole number in digits 0-9"):
            max_file_bytes({MAX_FILE_MB_VARIABLE: other_digits})
