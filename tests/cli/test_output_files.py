"""-o FILE and plan -out FILE write only what was asked: a device or a named pipe is written
to as it is (never chmod-ed, never replaced; a pipe nobody reads is refused, not waited on),
another user's file is refused, and a file the tool creates or replaces is private (0600).
The job summary is created private too."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.conftest import run, run_alone

# Each command that writes a file a user names, as arguments before the path.
WRITERS = {
    "validate -o": ("validate", "manifests", "-o"),
    "plan -o": ("plan", "-o"),
    "plan -out": ("plan", "-out"),
    "env list -o": ("env", "list", "-o"),
}


def _is_special(target: int | str | os.PathLike[str]) -> bool:
    try:
        info = os.fstat(target) if isinstance(target, int) else os.stat(target)
    except OSError:
        return False
    return not stat.S_ISREG(info.st_mode)


@pytest.fixture
def special_files_untouched(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Refuses, and records, any chmod of a device or a pipe and any rename over one: the
    real /dev/null is never changed, even by code that would."""
    seen: list[str] = []

    def guard(name: str, original: object, *positions: int) -> object:
        def checked(*args: object, **kwargs: object) -> object:
            for position in positions:
                target = args[position]
                if isinstance(target, int | str | os.PathLike) and _is_special(target):
                    seen.append(f"{name}{args}")
                    return None
            assert callable(original)
            return original(*args, **kwargs)

        return checked

    monkeypatch.setattr(os, "fchmod", guard("fchmod", os.fchmod, 0))
    monkeypatch.setattr(os, "chmod", guard("chmod", os.chmod, 0))
    monkeypatch.setattr(os, "replace", guard("replace", os.replace, 1))
    monkeypatch.setattr(os, "rename", guard("rename", os.rename, 1))
    yield seen


@pytest.mark.parametrize("writer", WRITERS)
def test_a_named_pipe_nobody_reads_is_refused_not_waited_on(project: Path, writer: str) -> None:
    pipe = project / "out.pipe"
    os.mkfifo(pipe, 0o600)
    # No reader: a blocking open would never return. In a process of its own, so that a
    # wait fails the test (TimeoutExpired) instead of hanging it.
    done = run_alone(*WRITERS[writer], str(pipe), cwd=project)
    assert done.returncode not in (0, 2), done.stderr
    assert f"{pipe}: it is a named pipe that no process reads" in done.stderr
    assert "start the process that reads the pipe first" in done.stderr
    assert "Traceback" not in done.stderr
    assert stat.S_ISFIFO(os.stat(pipe).st_mode)


@pytest.mark.parametrize("writer", WRITERS)
def test_dev_null_is_written_to_and_keeps_its_mode(
    writer: str,
    project: Path,
    capsys: pytest.CaptureFixture[str],
    special_files_untouched: list[str],
) -> None:
    before = os.stat("/dev/null")
    code, _, err = run(capsys, *WRITERS[writer], "/dev/null")
    assert code == 0, err
    after = os.stat("/dev/null")
    assert special_files_untouched == []
    assert stat.S_ISCHR(after.st_mode)
    assert (after.st_mode, after.st_uid, after.st_ino) == (
        before.st_mode,
        before.st_uid,
        before.st_ino,
    )


@pytest.mark.parametrize("writer", WRITERS)
def test_a_character_device_of_our_own_is_written_to_and_keeps_its_mode(
    writer: str, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A /dev/null of this test's own (same device numbers), so that code that would chmod
    # or replace it does so here, where it harms nothing.
    device = project / "null"
    try:
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        os.close(os.open(device, os.O_WRONLY))
    except OSError as exc:
        pytest.skip(f"cannot make or open a device node here: {exc}")
    os.chmod(device, 0o666)  # whatever the umask
    code, _, err = run(capsys, *WRITERS[writer], str(device))
    assert code == 0, err
    info = os.stat(device)
    assert stat.S_ISCHR(info.st_mode)
    assert stat.S_IMODE(info.st_mode) == 0o666


def test_a_named_pipe_gets_the_plan_and_keeps_its_mode(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pipe = project / "plan.pipe"
    os.mkfifo(pipe, 0o644)
    os.chmod(pipe, 0o644)
    # The reading end is open before the command runs, and a writing end of ours keeps the
    # pipe from reading as ended: the command's write lands in the pipe's buffer, nothing
    # waits on anything, and what is read after is exactly what was written to the pipe.
    reader = os.open(pipe, os.O_RDONLY | os.O_NONBLOCK)
    keeper = os.open(pipe, os.O_WRONLY)
    try:
        code, _, err = run(capsys, "plan", "--format", "json", "-o", str(pipe))
        os.close(keeper)
        chunks = []
        while chunk := os.read(reader, 65536):
            chunks.append(chunk)
    finally:
        os.close(reader)
    assert code == 0, err
    assert json.loads(b"".join(chunks))["summary"]["create"] == 9
    info = os.stat(pipe)
    assert stat.S_ISFIFO(info.st_mode)
    assert stat.S_IMODE(info.st_mode) == 0o644


@pytest.mark.parametrize("writer", WRITERS)
def test_a_file_the_tool_creates_is_readable_by_its_owner_only(
    writer: str, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, *WRITERS[writer], "written.txt")
    assert code == 0, err
    assert stat.S_IMODE(os.stat(project / "written.txt").st_mode) == 0o600


def test_an_own_file_is_replaced_private_and_a_link_to_it_stays_a_link(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = project / "report.txt"
    report.write_text("an older report, much longer than the new one " * 100)
    report.chmod(0o644)
    link = project / "latest.txt"
    link.symlink_to(report.name)
    code, _, err = run(capsys, "validate", "manifests", "-o", str(link))
    assert code == 0, err
    assert link.is_symlink()
    assert stat.S_IMODE(report.stat().st_mode) == 0o600
    assert "an older report" not in report.read_text()
    assert report.read_text() == "0 errors, 0 warnings in 9 documents (6 files)\n"


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another user")
@pytest.mark.parametrize("writer", WRITERS)
def test_a_file_of_another_user_is_refused_and_left_as_it_was(
    writer: str, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    theirs = project / "theirs.txt"
    theirs.write_text("their notes\n")
    theirs.chmod(0o644)
    os.chown(theirs, 65534, 65534)
    before = theirs.stat()
    code, _, err = run(capsys, *WRITERS[writer], str(theirs))
    assert code == 3
    assert f"{theirs}: the file belongs to another user (uid 65534)" in err
    assert "hint: name a new file, or remove that one first" in err
    after = theirs.stat()
    assert (after.st_mode, after.st_uid, after.st_ino) == (
        before.st_mode,
        before.st_uid,
        before.st_ino,
    )
    assert theirs.read_text() == "their notes\n"


def test_a_new_job_summary_is_private_and_an_existing_one_keeps_its_mode(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    created = project / "created-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(created))
    assert run(capsys, "plan")[0] == 0
    assert stat.S_IMODE(created.stat().st_mode) == 0o600
    assert "| to create | 9 |" in created.read_text()

    runners = project / "runners-summary.md"
    runners.write_text("# earlier step\n")
    runners.chmod(0o644)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(runners))
    assert run(capsys, "validate", "manifests")[0] == 0
    assert stat.S_IMODE(runners.stat().st_mode) == 0o644
    assert runners.read_text().startswith("# earlier step\n")


@pytest.mark.parametrize(
    "command", [("plan",), ("validate", "manifests"), ("get", "template-groups")]
)
def test_o_dash_is_standard_output_not_a_file_named_dash(
    command: tuple[str, ...], project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, *command, "-o", "-")
    assert code == 0, err
    assert out  # the report, where it goes without -o
    assert not (project / "-").exists()


def test_a_saved_plan_to_dash_is_a_usage_error(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "plan", "-out", "-")
    assert code == 64 and out == ""
    assert "a saved plan is a file `customs-batch apply FILE` reads" in err
    assert not (project / "-").exists()


@pytest.mark.parametrize(
    "command",
    [
        ("schema", "export", "-"),
        ("validate", "manifests", "--annotate", "-"),
        ("results", "--annotate", "-"),
        ("apply", "--auto-approve", "--annotate-results", "-"),
    ],
)
def test_a_folder_to_write_into_is_never_dash(
    command: tuple[str, ...], project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `schema export -` made a folder named - and wrote the schemas there, where `init -`
    # and `-o -` take - for standard output; nothing of apply is sent either.
    code, out, err = run(capsys, *command)
    assert (code, out) == (64, ""), err
    assert "- stands for standard output, which cannot hold the files" in err
    assert not (project / "-").exists()
    assert "The state is empty." in "".join(run(capsys, "state", "list")[1:])


@pytest.mark.parametrize(
    ("command", "target", "what"),
    [
        (("plan",), ".customs-batch/local/state.json", "it is the state of environment local"),
        (("validate",), "customs-batch.yaml", "it is the project's settings (customs-batch.yaml)"),
        (("plan",), "manifests/movements.yaml", "it is a manifest this run reads"),
    ],
)
def test_the_job_summary_is_never_appended_to_a_protected_file(
    project: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    command: tuple[str, ...],
    target: str,
    what: str,
) -> None:
    (project / "customs-batch.yaml").write_text("manifests: [manifests]\n")
    assert run(capsys, "apply", "--auto-approve")[0] == 0
    before = (project / target).read_bytes()
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", target)

    code, _, err = run(capsys, *command)

    assert code == 0, err
    assert (
        f"warning: the job summary is not appended to {target} (GITHUB_STEP_SUMMARY): {what}; "
        "nothing was written to it"
    ) in err
    assert (project / target).read_bytes() == before
