"""What an output never replaces: the files the run read (by identity, however named) and
customs-batch's own records (by place and name, whether or not the run read them)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from customs_batch.environments import LOCAL, load_project
from customs_batch.errors import ExitCode, UsageError
from customs_batch.output_file import write_named_file
from customs_batch.protected_files import STATE_FOLDER_FILES, protection
from customs_batch.state import history, lock
from customs_batch.state.backend import ENVIRONMENT_FILE, JOURNAL_FILE, LOCK_FILE, STATE_FILE
from customs_batch.userfiles import (
    FileRefused,
    InputKind,
    collecting_reads,
    files_read,
    forget_files_read,
    note_read,
    open_user_file,
    read_user_file,
)


@pytest.fixture(autouse=True)
def _nothing_read_yet() -> Iterator[None]:
    forget_files_read()
    yield
    forget_files_read()


def test_a_file_read_is_noted_by_identity_with_what_it_is(tmp_path: Path) -> None:
    manifest = tmp_path / "m.yaml"
    manifest.write_text("kind: Movement\n")
    read_user_file(manifest, kind=InputKind.MANIFEST)
    info = manifest.stat()
    assert files_read() == {(info.st_dev, info.st_ino): (InputKind.MANIFEST, str(manifest))}


def test_every_name_of_a_file_read_is_protected_and_a_new_file_beside_it_is_not(
    tmp_path: Path,
) -> None:
    (tmp_path / "data").mkdir()
    sheet = tmp_path / "data" / "moves.csv"
    sheet.write_text("a,b\n1,2\n")
    with open_user_file(sheet, kind=InputKind.SPREADSHEET) as handle:
        handle.read()
    (tmp_path / "soft.csv").symlink_to(sheet)
    os.link(sheet, tmp_path / "hard.csv")
    for name in ("data/moves.csv", "soft.csv", "hard.csv", "./data/../data/moves.csv"):
        found = protection(tmp_path / name)
        assert found is not None, name
        assert found.what == "it is a spreadsheet this run reads"
        assert found.hint.startswith("name another file")
    assert protection(tmp_path / "report.txt") is None
    (tmp_path / "old-report.txt").write_text("earlier\n")
    assert protection(tmp_path / "old-report.txt") is None


def test_a_file_refused_or_missing_is_not_an_input(tmp_path: Path) -> None:
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    with pytest.raises(FileRefused):
        read_user_file(pipe)
    note_read(tmp_path / "absent.yaml", InputKind.MANIFEST)
    assert files_read() == {}


def test_what_a_loading_process_reads_is_collected_for_its_parent(tmp_path: Path) -> None:
    before, during = tmp_path / "before.yaml", tmp_path / "during.yaml"
    before.write_text("a: 1\n")
    during.write_text("b: 2\n")
    read_user_file(before)
    with collecting_reads() as collected:
        read_user_file(during, kind=InputKind.TEMPLATE)
    assert [read for read in collected.values()] == [(InputKind.TEMPLATE, str(during))]
    assert len(files_read()) == 2


def test_a_new_run_starts_with_nothing_read(tmp_path: Path) -> None:
    manifest = tmp_path / "m.yaml"
    manifest.write_text("a: 1\n")
    read_user_file(manifest)
    forget_files_read()
    assert protection(manifest) is None


def test_the_state_folder_files_are_those_the_state_package_writes(tmp_path: Path) -> None:
    environment = load_project(tmp_path).environments[LOCAL]
    names = {
        STATE_FILE,
        f"{STATE_FILE}.backup",
        JOURNAL_FILE,
        LOCK_FILE,
        lock.info_path_of(Path(LOCK_FILE)).name,
        ENVIRONMENT_FILE,
        history.CURRENT_FILE,
        environment.sandbox_db.name,
    }
    assert names <= set(STATE_FOLDER_FILES)


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("state.json", "it is the state of environment local"),
        ("state.json.backup", "it is the state's backup of environment local"),
        ("journal.jsonl", "it is the journal of environment local"),
        ("history.jsonl", "it is the history of environment local"),
        ("history.000003.jsonl", "it is the history of environment local"),
        ("state.lock.info", "it is the lock of environment local"),
        ("environment", "it is the state's environment mark of environment local"),
        ("sandbox.sqlite3-wal", "it is the emulator's data of environment local"),
        ("notes.txt", "it is in .customs-batch, customs-batch's own folder"),
    ],
)
def test_the_records_are_protected_whether_they_exist_or_not(
    tmp_path: Path, name: str, says: str
) -> None:
    found = protection(tmp_path / ".customs-batch" / LOCAL / name)
    assert found is not None
    assert found.what.startswith(says)
    assert "customs-batch keeps its records itself" in found.hint


def test_an_environment_s_state_folder_elsewhere_is_protected_by_name(tmp_path: Path) -> None:
    (tmp_path / "customs-batch.yaml").write_text(
        "environments:\n"
        "  local:\n    state_dir: records/local\n"
        "  prod:\n    base_url: https://customs.example\n    api_key_env: PROD_KEY\n"
        "    state_dir: /elsewhere/prod-state\n"
    )
    found = protection(tmp_path / "records" / "local" / "state.json")
    assert found is not None and found.what == "it is the state of environment local"
    found = protection(Path("/elsewhere/prod-state/history.000001.jsonl"))
    assert found is not None and found.what == "it is the history of environment prod"
    # Other names there, and the names elsewhere, are the user's.
    assert protection(tmp_path / "records" / "local" / "report.txt") is None
    assert protection(tmp_path / "state.json") is None


def test_a_link_into_the_records_is_protected(tmp_path: Path) -> None:
    state = tmp_path / ".customs-batch" / LOCAL / "state.json"
    state.parent.mkdir(parents=True)
    state.write_text("{}\n")
    (tmp_path / "latest.json").symlink_to(state)
    found = protection(tmp_path / "latest.json")
    assert found is not None and found.what == "it is the state of environment local"


def test_the_settings_are_protected_even_before_they_exist(tmp_path: Path) -> None:
    found = protection(tmp_path / "customs-batch.yaml")
    assert found is not None and "customs-batch.yaml" in found.what
    (tmp_path / "customs-batch.yaml").write_text("default_environment: local\n")
    found = protection(tmp_path / "customs-batch.yaml")
    assert found is not None and found.what == "it is the project's settings (customs-batch.yaml)"


def test_the_load_cache_folder_set_by_the_variable_is_protected(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUSTOMS_BATCH_CACHE_DIR", str(tmp_path / "cache"))
    entry = tmp_path / "cache" / ("0123456789" * 4)
    found = protection(entry)
    assert found is not None and found.what == "it is in the load cache's folder"
    assert protection(tmp_path / "cache" / "report.txt") is None


def test_write_named_file_refuses_and_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    manifest = tmp_path / "in" / "m.yaml"
    manifest.write_bytes(b"kind: Movement\n")
    manifest.chmod(0o644)
    read_user_file(manifest, kind=InputKind.MANIFEST)
    with pytest.raises(UsageError) as refused:
        write_named_file(manifest, b"a report\n", what="report")
    assert refused.value.exit_code is ExitCode.USAGE
    assert str(refused.value) == (
        f"cannot write the report to {manifest}: it is a manifest this run reads\n"
        "  hint: name another file: an output never replaces a file the run reads"
    )
    assert manifest.read_bytes() == b"kind: Movement\n"
    assert manifest.stat().st_mode & 0o777 == 0o644
    assert [p.name for p in manifest.parent.iterdir()] == ["m.yaml"]  # no temporary file left


def test_write_named_file_replaces_an_earlier_report(tmp_path: Path) -> None:
    report = tmp_path / "report.txt"
    report.write_text("earlier\n")
    write_named_file(report, b"now\n", what="report")
    assert report.read_text() == "now\n"


def test_the_project_s_inputs_are_protected_though_this_run_read_none(tmp_path: Path) -> None:
    (tmp_path / "customs-batch.yaml").write_text("manifests: [manifests]\n")
    files = {
        "policies/lanes.yaml": "it is a policy file of the project (policies/)",
        "policies/a/b.yaml": "it is a policy file of the project (policies/)",  # read too
        "templates/parts/line.yaml.j2": "it is a template of the project (templates/)",
        "manifests/movement.yaml": "it is a manifest of the project",
        "manifests/eu/export.yml": "it is a manifest of the project",
        "manifests/Departures.YAML": "it is a manifest of the project",  # read in any case
        "policies/Lanes.Yml": "it is a policy file of the project (policies/)",
    }
    others = ["notes.yaml", "manifests/.hidden.yaml", "manifests/data.csv", "policies/.a/b.yaml"]
    for name in [*files, *others]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("kind: Movement\n")
    assert files_read() == {}
    for name, what in files.items():
        found = protection(tmp_path / name)
        assert found is not None and found.what == what, name
        assert found.hint == (
            "name another file: an output never replaces a file the project's commands read"
        )
        assert protection(tmp_path / name, project_inputs=False) is None
    for name in others:  # not read by the project's commands
        assert protection(tmp_path / name) is None, name
    # A new file there would be read as one from then on.
    new = {
        "policies/report.yaml": "a policy file of the project (policies/)",
        "policies/new/report.yaml": "a policy file of the project (policies/)",
        "templates/report.txt": "a template of the project (templates/)",
        "manifests/report.yaml": "a manifest of the project",
        "manifests/Report.YAML": "a manifest of the project",
    }
    for name, what in new.items():
        found = protection(tmp_path / name)
        assert found is not None and found.what == f"a new file there would be read as {what}"
        assert "outside the project's inputs" in found.hint
        assert protection(tmp_path / name, project_inputs=False) is None
        assert not (tmp_path / name).exists()
    for name in ["manifests/report.txt", "policies/report.json", "report.json"]:
        assert protection(tmp_path / name) is None, name

    # Without a manifests: list, the project's folder is searched, as validate does.
    (tmp_path / "customs-batch.yaml").write_text("default_environment: local\n")
    found = protection(tmp_path / "notes.yaml")
    assert found is not None and found.what == "it is a manifest of the project"
    assert protection(tmp_path / "manifests" / "data.csv") is None
