"""The state through the CLI when something is wrong around it: a lost state file, a full
disk, a read-only folder; and the modes of every file that holds customs data."""

from __future__ import annotations

import errno
import io
import os
import shutil
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from customs_batch.cli.main import invoke
from customs_batch.state import LocalBackend
from customs_batch.state.journal import JournalEntry, JournalWriter

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    sheets = shutil.ignore_patterns("*-sheet.yaml")
    shutil.copytree(EXAMPLES / "manifests", tmp_path / "manifests", ignore=sheets)
    shutil.copytree(EXAMPLES / "templates", tmp_path / "templates")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = invoke(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def state_dir(project: Path) -> Path:
    return project / ".customs-batch" / "local"


def applied(project: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """The examples applied twice over (so the state has a backup); the state folder."""
    code, out, err = run(capsys, "apply", "--auto-approve", "--target", "TemplateGroup/eu-road")
    assert code == 0, out + err
    code, out, err = run(capsys, "apply", "--auto-approve")
    assert code == 0, out + err
    return state_dir(project)


READERS = [
    ["plan"],
    ["apply", "--auto-approve"],
    ["refresh"],
    ["status"],
    ["state", "list"],
    ["state", "show", "TemplateGroup/eu-road"],
    ["state", "rm", "TemplateGroup/eu-road"],
    ["state", "forget", "DepartureDeclaration/dep-ham-0001"],
    ["state", "adopt", "DepartureDeclaration/dep-ham-0001", "7003"],
    ["import", "TemplateGroup/eu-road", "12"],
    ["state", "pull"],
]


def _the_way_out_is_taken(code: int, out: str, err: str) -> None:
    """``--allow-empty-state`` is accepted on the command and the state is no longer refused
    as missing. Not told by the exit code alone: on the empty state an address the command
    names is not recorded, which is the user's mistake (64) like an unknown option."""
    assert "No such option" not in err and "is missing" not in err, out + err
    assert code != 64 or "is not in the state" in err, out + err


def test_a_plan_saved_from_an_empty_state_on_purpose_names_the_apply_that_takes_it(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found by a regression probe: `plan --allow-empty-state -out p.plan` of a state
    refused as lost (or, at a service another environment's state holds records of, as an
    environment renamed) printed `apply exactly it with customs-batch apply p.plan`, which
    was refused the same way (exit 3); it names --allow-empty-state while the state is
    empty, and not once the state exists."""
    folder = applied(project, capsys)
    (folder / "state.json").unlink()
    code, out, err = run(capsys, "plan", "--allow-empty-state", "-out", "p.plan")
    assert code == 0, out + err
    said = "apply exactly it with `customs-batch apply p.plan --allow-empty-state`."
    assert said in out
    code, out, err = run(capsys, "apply", "p.plan", "--allow-empty-state", "--auto-approve")
    # Taken (the group the lost state recorded is at the service already: that one fails;
    # the two departures it recorded are there too: held for a decision, not declared
    # twice, and the party update naming one of them with them).
    assert code != 3 and "Applying 6 operation(s); 3 skipped" in out, out + err
    assert "? needs decision DepartureDeclaration/dep-rtm-ham-0001" in out
    code, out, err = run(capsys, "plan", "--allow-empty-state", "-out", "q.plan")
    assert code == 1, out + err  # the departures held need a decision
    assert "apply exactly it with `customs-batch apply q.plan`." in out


@pytest.mark.parametrize("argv", READERS, ids=lambda argv: " ".join(argv[:2]))
def test_a_lost_state_file_is_refused_by_every_command_that_reads_the_state(
    project: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    folder = applied(project, capsys)
    (folder / "state.json").unlink()
    code, out, err = run(capsys, *argv)
    assert code == 3, out + err
    assert f"{folder / 'state.json'} is missing, but its backup state.json.backup is there" in err
    assert f"cp -p {folder}/state.json.backup {folder}/state.json" in err
    assert "+ create" not in out
    # The way out exists on this command too (a usage error would exit 64).
    code, out, err = run(capsys, *argv, "--allow-empty-state")
    _the_way_out_is_taken(code, out, err)


def test_a_lost_state_is_put_back_with_state_push_and_allow_empty_state(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The way back the refusal names: a copy kept with `state pull`, pushed into the
    folder whose state.json, backup and journal are gone (its history is kept)."""
    folder = applied(project, capsys)
    code, pulled, err = run(capsys, "state", "pull")
    assert code == 0, err
    (project / "kept.json").write_text(pulled)
    for name in ("state.json", "state.json.backup", "journal.jsonl"):
        (folder / name).unlink()
    code, out, err = run(capsys, "state", "push", "kept.json")
    assert code == 3 and "--allow-empty-state" in err, out + err
    code, out, err = run(capsys, "state", "push", "kept.json", "--allow-empty-state")
    assert code == 0, out + err
    code, out, err = run(capsys, "plan", "--detailed-exitcode")
    assert code == 0, out + err  # every record back: nothing to create


@pytest.mark.parametrize("argv", READERS, ids=lambda argv: " ".join(argv[:2]))
def test_a_lost_state_whose_history_is_kept_is_refused_by_every_command(
    project: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    folder = applied(project, capsys)
    for name in ("state.json", "state.json.backup", "journal.jsonl"):
        (folder / name).unlink()
    code, out, err = run(capsys, *argv)
    assert code == 3, out + err
    assert (
        f"{folder / 'state.json'} is missing, but its history (history.jsonl) records what "
        "apply sent from here" in err
    )
    assert "+ create" not in out
    # What was sent is still there to read, and the way out exists on this command too.
    code, out, _ = run(capsys, "history")
    assert code == 0 and "TemplateGroup/eu-road" in out
    code, out, err = run(capsys, *argv, "--allow-empty-state")
    _the_way_out_is_taken(code, out, err)


def test_the_restore_command_brings_the_plan_back(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = applied(project, capsys)
    shutil.copy(folder / "state.json", project / "latest.json")
    (folder / "state.json").unlink()
    code, out, _ = run(capsys, "plan", "--allow-empty-state", "--detailed-exitcode")
    assert code == 2 and "+ create         TemplateGroup/eu-road" in out  # what the flag risks
    shutil.copy(project / "latest.json", folder / "state.json")
    assert run(capsys, "plan", "--detailed-exitcode")[0] == 0


def _journal_alone(folder: Path, written_on: int) -> None:
    """Replace the state file by a journal holding its records, written on the state of
    serial ``written_on``: 0 is what a first run killed before its end leaves (and a CI
    that keeps the journal brings back); another serial is a journal whose state file was
    not kept."""
    state = LocalBackend(folder).read()
    for name in ("state.json", "state.json.backup", "journal.jsonl"):
        (folder / name).unlink(missing_ok=True)
    with JournalWriter(folder / "journal.jsonl") as journal:
        for address in sorted(state.resources):
            record = state.resources[address]
            journal.append(JournalEntry(state.lineage, address, record, written_on))


READING = {"plan", "status", "state list", "state show"}


@pytest.mark.parametrize("argv", READERS, ids=lambda argv: " ".join(argv[:2]))
def test_a_journal_without_a_state_file_is_the_state_for_every_command(
    project: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    code, out, err = run(capsys, "apply", "--auto-approve")
    assert code == 0, out + err
    folder = state_dir(project)
    whole = (folder / "state.json").read_bytes()
    _journal_alone(folder, written_on=0)

    code, out, err = run(capsys, *argv)
    assert "is missing" not in err and "+ create" not in out, out + err

    # The same command on the state file the journal stands for answers the same.
    (folder / "state.json.backup").unlink(missing_ok=True)
    (folder / "state.json").write_bytes(whole)
    (folder / "journal.jsonl").write_bytes(b"")
    expected_code, expected_out, expected_err = run(capsys, *argv)
    assert code == expected_code, (out + err, expected_out + expected_err)
    if " ".join(argv[:2]) in READING or argv[0] in READING:
        assert out == expected_out


@pytest.mark.parametrize("argv", READERS, ids=lambda argv: " ".join(argv[:2]))
def test_a_journal_whose_state_file_was_not_kept_is_refused_by_every_command(
    project: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    code, out, err = run(capsys, "apply", "--auto-approve")
    assert code == 0, out + err
    folder = state_dir(project)
    _journal_alone(folder, written_on=1)
    code, out, err = run(capsys, *argv)
    assert code == 3, out + err
    assert (
        f"{folder / 'state.json'} is missing, and journal.jsonl holds only what the last run "
        "recorded after the state of serial 1: the rest of the state is not here" in err
    )
    assert "put the state.json of serial 1 (or newer) back beside the journal" in err
    assert "+ create" not in out
    code, out, err = run(capsys, *argv, "--allow-empty-state")
    _the_way_out_is_taken(code, out, err)


def _failing_writes(
    monkeypatch: pytest.MonkeyPatch, name: str, code: int, *, after: int = 0
) -> Callable[[], int]:
    """os.write fails with ``code`` for files whose name contains ``name``, after ``after``
    writes went through; returns how many failed."""
    real = os.write
    seen = {"ok": 0, "failed": 0}

    def write(fd: int, data: bytes | memoryview) -> int:
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            target = ""
        if name in os.path.basename(target):
            if seen["ok"] >= after:
                seen["failed"] += 1
                raise OSError(code, os.strerror(code))
            seen["ok"] += 1
        return real(fd, data)

    monkeypatch.setattr(os, "write", write)
    return lambda: seen["failed"]


def test_a_full_disk_during_apply_names_the_journal_and_loses_nothing(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with monkeypatch.context() as patch:
        # One line per intent, one per outcome: the third line is the second intent, so
        # the disk fills up before that request is sent.
        failed = _failing_writes(patch, "journal.jsonl", errno.ENOSPC, after=2)
        code, out, err = run(capsys, "apply", "--auto-approve", "--parallelism", "1")
    assert failed() == 1, "the run went on writing after the disk was full"
    assert code == 3, out + err
    folder = state_dir(project)
    assert f"{folder / 'journal.jsonl'}: cannot write (No space left on device, ENOSPC)" in err
    assert f"the disk (or your quota) holding {folder} is full" in err
    assert "every outcome recorded before this one is safe in the journal" in err
    assert "internal error" not in err and "bug" not in err
    # Space again: the next run goes on from what was recorded, and finishes.
    code, out, err = run(capsys, "apply", "--auto-approve")
    assert code == 0, out + err
    assert run(capsys, "plan", "--detailed-exitcode")[0] == 0


def test_a_full_disk_at_the_final_state_write_keeps_the_journal(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with monkeypatch.context() as patch:
        _failing_writes(patch, ".state.json.", errno.ENOSPC)
        code, out, err = run(capsys, "apply", "--auto-approve")
    assert code == 3, out + err
    folder = state_dir(project)
    assert f"{folder / 'state.json'}: cannot write (No space left on device, ENOSPC)" in err
    assert "nothing recorded was lost: state.json is as it was" in err
    assert "internal error" not in err
    assert not (folder / "state.json").exists()
    assert run(capsys, "plan", "--detailed-exitcode")[0] == 0  # the journal holds the run


@pytest.fixture
def read_only_state(project: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The state folder refuses every open for writing, as a read-only mount does (tests
    run as root, whom chmod does not stop)."""
    folder = state_dir(project)
    real = os.open

    def open_(path: str | os.PathLike[str], flags: int, *args: int, **kwargs: int) -> int:
        writing = flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT)
        if writing and str(Path(os.fspath(path)).absolute()).startswith(str(folder)):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), os.fspath(path))
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", open_)
    yield folder


def test_a_read_only_state_folder_is_named_and_plan_still_works(
    project: Path, capsys: pytest.CaptureFixture[str], read_only_state: Path
) -> None:
    folder = read_only_state
    folder.mkdir(parents=True)
    code, out, err = run(capsys, "apply", "--auto-approve")
    assert code == 3, out + err
    assert (
        f"{folder / 'state.lock'}: cannot take the state lock (Read-only file system, EROFS)" in err
    )
    assert f"{folder} is on a read-only file system: make it writable" in err
    assert "nothing was changed" in err and "internal error" not in err
    assert run(capsys, "plan")[0] == 0  # reading needs no write


def test_a_project_on_a_read_only_file_system_is_named_not_an_internal_error(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # No state folder yet, and none can be made (a read-only checkout): the built-in local
    # environment makes its folder before the state's, for the emulator's data.
    real = os.mkdir

    def mkdir(path: str | os.PathLike[str], *args: int, **kwargs: int) -> None:
        if str(Path(os.fspath(path)).absolute()).startswith(str(project / ".customs-batch")):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), os.fspath(path))
        real(path, *args, **kwargs)

    monkeypatch.setattr(os, "mkdir", mkdir)
    code, out, err = run(capsys, "apply", "--auto-approve")
    assert code == 3, out + err
    assert (
        f"{state_dir(project)}: cannot make the state folder, where the built-in local emulator "
        "keeps its data (Read-only file system, EROFS)"
    ) in err
    assert "nothing was sent and the state is unchanged" in err
    assert "internal error" not in err
    assert run(capsys, "plan")[0] == 0  # reading needs no write


def test_a_folder_without_write_permission_is_named(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = applied(project, capsys)
    real = os.open

    def open_(path: str | os.PathLike[str], flags: int, *args: int, **kwargs: int) -> int:
        if flags & os.O_CREAT and Path(os.fspath(path)).name.startswith("."):
            raise OSError(errno.EACCES, os.strerror(errno.EACCES), os.fspath(path))
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", open_)  # new files cannot be made; existing ones opened
    code, out, err = run(capsys, "state", "rm", "TemplateGroup/eu-road")
    assert code == 3, out + err
    assert f"{folder / 'state.lock.info'}: cannot write (Permission denied, EACCES)" in err
    assert f"you may not write in {folder}" in err and "internal error" not in err


def _folders(below: Path) -> dict[str, int]:
    """Every folder under ``below`` (itself included), with its mode."""
    found = {".": stat.S_IMODE(below.stat().st_mode)}
    for root, dirs, _ in os.walk(below):
        for name in dirs:
            path = Path(root) / name
            found[str(path.relative_to(below))] = stat.S_IMODE(path.stat().st_mode)
    return found


@pytest.mark.parametrize("state_dir_setting", [None, "records/local"])
def test_every_folder_it_creates_is_private_whatever_the_umask(
    project: Path,
    tmp_path_factory: pytest.TempPathFactory,
    capsys: pytest.CaptureFixture[str],
    state_dir_setting: str | None,
) -> None:
    # Another user who may write in the state folder may delete the state, the backup, the
    # journal and the lock: the next plan would create everything again.
    settings = "manifests: [manifests]\n"
    if state_dir_setting is not None:
        settings += f"environments:\n  local:\n    state_dir: {state_dir_setting}\n"
    (project / "customs-batch.yaml").write_text(settings, "utf-8")
    home = Path(os.environ["HOME"])
    old_umask = os.umask(0o000)
    try:
        applied(project, capsys)
        assert run(capsys, "validate", "manifests")[0] == 0
        # Outside a project: the user's own cache folder.
        loose = tmp_path_factory.mktemp("loose")
        shutil.copy(project / "manifests" / "movements.yaml", loose)
        os.chdir(loose)
        assert run(capsys, "validate", "movements.yaml")[0] == 0
    finally:
        os.umask(old_umask)
    records = project / (state_dir_setting or ".customs-batch/local")
    assert (records / "state.json").is_file() and (records / "history.jsonl").is_file()
    made = [".customs-batch", ".customs-batch/cache", str(records.relative_to(project))]
    if state_dir_setting is not None:
        made.append("records")
    found = _folders(project)
    assert {name: found[name] for name in made} == dict.fromkeys(made, 0o700)
    assert (home / ".cache" / "customs-batch").is_dir()
    assert set(_folders(home / ".cache").values()) == {0o700}


def test_every_file_with_customs_data_is_private(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = state_dir(project)
    names = ("state.json", "state.json.backup", "journal.jsonl", "state.lock")
    old_umask = os.umask(0o022)
    try:
        applied(project, capsys)
        for name in names:  # as an older version left them
            (folder / name).chmod(0o644)
        # Rewrite them (a tombstone, then tracked again).
        assert run(capsys, "state", "rm", "TemplateGroup/eu-road")[0] == 0
        assert run(capsys, "state", "restore", "TemplateGroup/eu-road")[0] == 0
        assert run(capsys, "plan", "-out", "release.plan")[0] == 0
    finally:
        os.umask(old_umask)
    for path in [*(folder / name for name in names), project / "release.plan"]:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path


STAGING = """\
default_environment: local
environments:
  staging:
    base_url: http://127.0.0.1:9
    api_key_env: STAGING_KEY
"""


@pytest.mark.parametrize(
    "command",
    [["plan"], ["apply", "--auto-approve"], ["refresh"], ["state", "list"], ["status"]],
)
def test_a_state_folder_copied_to_another_environment_is_refused(
    project: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    command: list[str],
) -> None:
    """The records of local's state are objects of local's service: copied into staging's
    state folder, they would be planned unchanged there, and their updates sent to IDs of
    another service. Every command refuses, before a request, and leaves the copy as it is."""
    local = applied(project, capsys)
    staging = project / ".customs-batch" / "staging"
    shutil.copytree(local, staging)
    (project / "customs-batch.yaml").write_text(STAGING)
    monkeypatch.setenv("STAGING_KEY", "sandbox-key")
    before = {path.name: path.read_bytes() for path in staging.iterdir() if path.is_file()}
    code, out, err = run(capsys, *command, "--env", "staging")
    assert code == 3, out + err
    assert f"{staging} holds the state of environment 'local'" in err
    # local's own folder still holds its state: a copy, which no rename explains (removing
    # the file, as for a rename, would give both environments the same objects).
    assert f"{local} still holds the state of environment 'local'" in err
    assert "not environment 'local' renamed" in err
    assert str(staging / "environment") not in err
    assert "Traceback" not in err
    after = {path.name: path.read_bytes() for path in staging.iterdir() if path.is_file()}
    assert after == before


def test_an_address_given_twice_to_state_rm_is_forgotten_once(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Found probing: `state rm A A` left a tombstone of A's tombstone; `state restore A` then
    # said "Restored A (forgotten)" and A stayed forgotten, its document refused by plan.
    monkeypatch.chdir(project)
    address = "Movement/mov-a1-arrival"
    code, out, err = run(capsys, "apply", "--auto-approve", "--target", address)
    assert code == 0, out + err
    code, out, err = run(capsys, "state", "rm", address, address)
    assert code == 0, out + err
    assert out.count(f"Forgot {address}") == 1
    code, out, err = run(capsys, "state", "restore", address)
    assert (code, out.split("\n")[0]) == (0, f"Restored {address} (applied)."), out + err
    code, out, err = run(capsys, "plan", "--detailed-exitcode", "--target", address)
    assert code == 0, out + err


def test_state_push_reads_no_pipe_no_device_and_no_endless_input(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Found probing: `state push FIFO` waited for a writer for ever, and `state push
    # /dev/zero` (or `- < /dev/zero`) read until memory ran out.
    monkeypatch.chdir(project)
    os.mkfifo("pipe")
    code, out, err = run(capsys, "state", "push", "pipe")
    assert (code, out) == (64, ""), err
    assert "pipe: not a regular file (it is a named pipe)" in err
    code, out, err = run(capsys, "state", "push", os.devnull)
    assert (code, out) == (64, ""), err
    assert "not a regular file (it is a character device)" in err
    monkeypatch.setenv("CUSTOMS_BATCH_MAX_FILE_MB", "1")
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"\0" * (2 << 20))))
    code, out, err = run(capsys, "state", "push", "-")
    assert (code, out) == (64, ""), err
    assert "standard input is larger than 1.0 MB" in err


def test_state_push_history_names_a_pipe_a_device_or_a_link_loop_for_what_it_is(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Found probing: `state push --history` said "cannot read FILE: no such file" of a
    # named pipe, /dev/null and a loop of links, all of which are there.
    monkeypatch.chdir(project)
    os.mkfifo("pipe")
    Path("loop-a").symlink_to("loop-b")
    Path("loop-b").symlink_to("loop-a")
    for file, said in [
        ("pipe", "pipe: not a regular file (it is a named pipe)"),
        (os.devnull, "not a regular file (it is a character device)"),
        ("loop-a", "loop-a: the path is a loop of symbolic links"),
        ("nothing", "cannot read nothing: no such file"),
    ]:
        code, out, err = run(capsys, "state", "push", "--history", file)
        assert (code, out) == (64, ""), err
        assert said in err


def test_restore_of_a_record_not_forgotten_gives_a_command_that_names_it(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The hint gave `customs-batch state restore` with no address (a usage error if run).
    assert run(capsys, "apply", "--auto-approve", "--target", "TemplateGroup/eu-road")[0] == 0
    code, _, err = run(capsys, "state", "restore", "TemplateGroup/eu-road")
    assert code == 3
    assert "TemplateGroup/eu-road is not forgotten (its status is applied)" in err
    assert "`customs-batch state restore TemplateGroup/eu-road` takes back" in err
    assert "`customs-batch state rm TemplateGroup/eu-road`" in err
