"""``state pull`` and ``state push``: a state moved from files to PostgreSQL and back, and
the pushes that would lose records refused."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest

from customs_batch.cli.main import invoke
from customs_batch.errors import StateError
from customs_batch.state import RecordStatus, ResourceRecord, State
from customs_batch.state.transfer import pushed_state, undone_by_push

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
IN_POSTGRES = """\
environments:
  local:
    state: {backend: postgres, url_env: CUSTOMS_BATCH_STATE_URL, name: team}
"""


def _state(lineage: str, serial: int, *addresses: str) -> State:
    records = {a: ResourceRecord(a, RecordStatus.APPLIED, "create", {}) for a in addresses}
    return State(lineage, serial, records)


def test_an_empty_backend_takes_the_pushed_state_as_it_is() -> None:
    pushed = pushed_state(State(""), _state("L", 7, "Movement/a"))
    assert (pushed.lineage, pushed.serial, list(pushed.resources)) == ("L", 7, ["Movement/a"])


def test_a_newer_copy_keeps_its_serial_and_an_equal_one_moves_it_on() -> None:
    assert pushed_state(_state("L", 3), _state("L", 5, "Movement/a")).serial == 5
    assert pushed_state(_state("L", 5, "Movement/a"), _state("L", 5, "Movement/a")).serial == 6


@pytest.mark.parametrize(
    ("incoming", "refusal"),
    [
        (_state("M", 9, "Movement/a"), "another state (lineage M, this one's is L)"),
        (_state("L", 4, "Movement/a"), "older than this one (serial 4, this one's is 5)"),
        (_state("L", 5, "Movement/b"), "has this one's serial (5) and other records"),
    ],
)
def test_a_push_that_would_lose_records_is_refused_unless_forced(
    incoming: State, refusal: str
) -> None:
    current = _state("L", 5, "Movement/a")
    with pytest.raises(StateError) as refused:
        pushed_state(current, incoming)
    assert refusal in refused.value.message
    assert refused.value.hint and "--force" in refused.value.hint
    forced = pushed_state(current, incoming, force=True)
    # The serial in the backend never goes down.
    assert (forced.lineage, forced.serial) == (incoming.lineage, max(incoming.serial, 6))
    assert forced.resources == incoming.resources


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = invoke(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_state_moves_from_files_to_postgres_and_plans_nothing_there(
    tmp_path: Path,
    postgres_url: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shutil.copytree(EXAMPLES / "templates", tmp_path / "templates")
    (tmp_path / "manifests").mkdir()
    shutil.copy(EXAMPLES / "manifests" / "template-groups.yaml", tmp_path / "manifests")
    assert _run(capsys, "apply", "manifests", "--auto-approve")[0] == 0
    code, pulled, _ = _run(capsys, "state", "pull")
    assert code == 0
    document = json.loads(pulled)
    assert document["serial"] == 1 and document["lineage"] and document["resources"]
    (tmp_path / "from-files.json").write_text(pulled)

    # The same environment, its state now in PostgreSQL: empty until the push, which a
    # plan names (its state folder still holds the records).
    (tmp_path / "customs-batch.yaml").write_text(IN_POSTGRES)
    monkeypatch.setenv("CUSTOMS_BATCH_STATE_URL", postgres_url)
    code, _, err = _run(capsys, "plan", "manifests", "--detailed-exitcode")
    assert code == 3 and "is new and empty, but" in err and "customs-batch state push" in err
    code, out, err = _run(capsys, "state", "push", "from-files.json")
    assert code == 0, err
    assert f"lineage {document['lineage']}, serial 1" in out
    assert _run(capsys, "state", "pull")[1] == pulled  # the same lineage, serial and records
    code, out, _ = _run(capsys, "plan", "manifests", "--detailed-exitcode")
    assert code == 0, out

    # An older copy of it is refused; the state is untouched.
    document["serial"] = 0
    (tmp_path / "older.json").write_text(json.dumps(document))
    code, _, err = _run(capsys, "state", "push", "older.json")
    assert code == 3 and "older than this one (serial 0, this one's is 1)" in err
    assert _run(capsys, "state", "pull")[1] == pulled
    code, out, _ = _run(capsys, "state", "push", "older.json", "--force")
    assert code == 0 and "serial 2" in out


def test_a_push_of_a_damaged_file_says_what_is_wrong(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "cut.json").write_text('{"version": 1, "lineage": "L", "ser')
    code, _, err = _run(capsys, "state", "push", "cut.json")
    assert code == 3 and "cut.json: the state file is corrupt or truncated" in err
    # The file pushed is not the state: there is no backup of it to restore.
    assert "backup" not in err
    assert "hint: cut.json is not a whole state as `customs-batch state pull` prints it" in err
    code, _, err = _run(capsys, "state", "push", "missing.json")
    assert code == 64 and "missing.json" in err


def test_a_pushed_file_with_a_damaged_record_replaces_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(EXAMPLES / "templates", tmp_path / "templates")
    (tmp_path / "manifests").mkdir()
    shutil.copy(EXAMPLES / "manifests" / "template-groups.yaml", tmp_path / "manifests")
    assert _run(capsys, "apply", "manifests", "--auto-approve")[0] == 0
    code, pulled, _ = _run(capsys, "state", "pull")
    # A record cut by hand in a file of the canonical layout (read record by record).
    damaged = pulled.replace('"status": "applied"', '"status": "aplied"', 1)
    assert damaged != pulled
    (tmp_path / "edited.json").write_text(damaged)
    code, _, err = _run(capsys, "state", "push", "edited.json")
    assert code == 3, err
    assert "edited.json: the state record of TemplateGroup/" in err
    assert "backup" not in err and "edited.json is not a whole state" in err
    assert _run(capsys, "state", "pull")[1] == pulled
    # No version at all: said, with what to do.
    (tmp_path / "bare.json").write_text('{"lineage": "L", "serial": 1, "resources": {}}')
    code, _, err = _run(capsys, "state", "push", "bare.json")
    assert code == 3 and "bare.json: the state file has no valid version" in err
    assert "hint: bare.json is not a whole state" in err


@pytest.mark.parametrize(
    "address", ["Nope/x", "TemplateGroup/", "eu-road", "TemplateGroup/" + "x" * 201]
)
def test_a_pushed_record_at_no_address_replaces_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], address: str
) -> None:
    # Pushed, such a record could be neither shown nor removed (`state show`, `state rm`:
    # "is not an address", exit 64), and plan passed over it: the state was stuck with it.
    shutil.copytree(EXAMPLES / "templates", tmp_path / "templates")
    (tmp_path / "manifests").mkdir()
    shutil.copy(EXAMPLES / "manifests" / "template-groups.yaml", tmp_path / "manifests")
    assert _run(capsys, "apply", "manifests", "--auto-approve")[0] == 0
    code, pulled, _ = _run(capsys, "state", "pull")
    data = json.loads(pulled)
    data["serial"] += 1
    data["resources"][address] = data["resources"].pop("TemplateGroup/eu-road")
    (tmp_path / "edited.json").write_text(json.dumps(data))
    code, _, err = _run(capsys, "state", "push", "edited.json")
    assert code == 3, err
    assert "edited.json: the state record " in err
    assert "is malformed (its address is not Kind/name" in err
    assert "edited.json is not a whole state" in err
    assert _run(capsys, "state", "pull")[1] == pulled


@pytest.mark.parametrize(
    ("field", "value", "why"),
    [
        ("outputs", {"id": [1, 2]}, "its output id is [1, 2], not a text, a number"),
        ("outputs", {"id": {"a": 1}}, 'its output id is {"a": 1}, not a text, a number'),
        ("superseded", [1, "x"], "its superseded holds 1, not an object"),
    ],
)
def test_a_pushed_record_of_outputs_no_command_reads_replaces_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str, value: object, why: str
) -> None:
    # Pushed, an output that is a list or an object (a hand edit) made refresh end in an
    # internal error (an unhashable ID), and a superseded entry that is no object made the
    # push itself end in one.
    shutil.copytree(EXAMPLES / "templates", tmp_path / "templates")
    (tmp_path / "manifests").mkdir()
    shutil.copy(EXAMPLES / "manifests" / "template-groups.yaml", tmp_path / "manifests")
    assert _run(capsys, "apply", "manifests", "--auto-approve")[0] == 0
    code, pulled, _ = _run(capsys, "state", "pull")
    data = json.loads(pulled)
    data["serial"] += 1
    data["resources"]["TemplateGroup/eu-road"][field] = value
    (tmp_path / "edited.json").write_text(json.dumps(data))
    code, _, err = _run(capsys, "state", "push", "edited.json")
    assert code == 3, err
    assert "internal error" not in err
    assert f"edited.json: the state record of TemplateGroup/eu-road is malformed ({why}" in err
    assert "edited.json is not a whole state" in err
    assert _run(capsys, "state", "pull")[1] == pulled


def test_pull_carries_format_version_and_its_copy_is_pushed_back_unparsed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every JSON output carries its version under formatVersion; the state's own key,
    # version, stays (a state file holds it, and state push reads it).
    from customs_batch.state.file import STATE_VERSION, dump_pieces, pulled_pieces, split_records

    monkeypatch.chdir(tmp_path)
    state = _state("L", 3, "Movement/a", "Movement/b")
    pulled = b"".join(pulled_pieces(state))
    document = json.loads(pulled)
    assert document["formatVersion"] == document["version"] == STATE_VERSION
    expected = json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    assert pulled.decode() == expected
    assert list(document) == ["formatVersion", "lineage", "resources", "serial", "version"]
    # Cut into records without parsing, as the state file it is.
    split = split_records(pulled)
    assert (
        split is not None
        and split[:2] == ("L", 3)
        and sorted(split[2]) == ["Movement/a", "Movement/b"]
    )
    assert split_records(b"".join(dump_pieces(state))) is not None

    (tmp_path / "manifests").mkdir()
    shutil.copy(EXAMPLES / "manifests" / "template-groups.yaml", tmp_path / "manifests")
    shutil.copytree(EXAMPLES / "templates", tmp_path / "templates")
    assert _run(capsys, "apply", "manifests", "--auto-approve")[0] == 0
    code, out, _ = _run(capsys, "state", "pull")
    assert code == 0
    document = json.loads(out)
    assert document["formatVersion"] == document["version"] == STATE_VERSION
    (tmp_path / "kept.json").write_text(out)
    code, _, err = _run(capsys, "state", "push", "kept.json")
    assert code == 0, err
    assert json.loads(_run(capsys, "state", "pull")[1])["resources"] == document["resources"]
    # The state file at rest keeps its own layout, without the output's key.
    at_rest = json.loads((tmp_path / ".customs-batch" / "local" / "state.json").read_text())
    assert "formatVersion" not in at_rest and at_rest["version"] == STATE_VERSION


def test_the_history_moves_with_the_state_and_verifies_to_the_same_hash(
    tmp_path: Path,
    postgres_url: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """docs/state.md, "Moving a state between backends": the recipe moves the history too
    (`state pull --history`, `state push --history`), so that once the old folder is gone
    the evidence of what was declared is still there, its chain unbroken."""
    shutil.copytree(EXAMPLES / "templates", tmp_path / "templates")
    (tmp_path / "manifests").mkdir()
    shutil.copy(EXAMPLES / "manifests" / "template-groups.yaml", tmp_path / "manifests")
    assert _run(capsys, "apply", "manifests", "--auto-approve")[0] == 0
    code, before, _ = _run(capsys, "history", "verify", "--format", "json")
    assert code == 0 and json.loads(before)["entries"] > 0
    listed = _run(capsys, "history", "--format", "json")[1]
    (tmp_path / "state.json").write_text(_run(capsys, "state", "pull")[1])
    code, pulled, _ = _run(capsys, "state", "pull", "--history")
    assert code == 0 and len(pulled.splitlines()) == json.loads(before)["entries"]
    (tmp_path / "history.jsonl").write_text(pulled)

    (tmp_path / "customs-batch.yaml").write_text(IN_POSTGRES)
    monkeypatch.setenv("CUSTOMS_BATCH_STATE_URL", postgres_url)
    assert _run(capsys, "state", "push", "state.json")[0] == 0
    code, out, err = _run(capsys, "state", "push", "--history", "history.jsonl")
    entries = json.loads(before)["entries"]
    assert code == 0, err
    assert f"{entries} entries added, 0 already there" in out
    shutil.rmtree(tmp_path / ".customs-batch" / "local")  # "then the old copy can go"
    assert _run(capsys, "history", "verify", "--format", "json")[1] == before
    assert _run(capsys, "history", "--format", "json")[1] == listed
    # Pushed again, nothing changes; the next apply chains on.
    out = _run(capsys, "state", "push", "--history", "history.jsonl")[1]
    assert f"0 entries added, {entries} already there" in out
    assert _run(capsys, "plan", "manifests", "--detailed-exitcode")[0] == 0

    # A history is never pushed from standard input (its chain is read first), nor forced.
    code, _, err = _run(capsys, "state", "push", "--history", "-")
    assert code == 64 and "give a file, not -" in err
    code, _, err = _run(capsys, "state", "push", "--history", "history.jsonl", "--force")
    assert code == 64


def test_back_on_postgres_after_runs_on_files_the_unpushed_runs_are_refused(
    tmp_path: Path,
    postgres_url: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """docs/state.md, "Moving a state between backends": moved to PostgreSQL and back to
    files by the recipe, then a movement sent on files; `state:` put back without pushing.
    The database's state lacks that movement: plan and apply refuse (exit 3, nothing sent),
    naming the folder and the pushes that bring those runs in, until they are pushed."""
    shutil.copytree(EXAMPLES / "templates", tmp_path / "templates")
    (tmp_path / "manifests").mkdir()
    shutil.copy(EXAMPLES / "manifests" / "template-groups.yaml", tmp_path / "manifests")
    assert _run(capsys, "apply", "manifests", "--auto-approve")[0] == 0
    folder = tmp_path / ".customs-batch" / "local"

    def pull_both(prefix: str) -> None:
        (tmp_path / f"{prefix}-state.json").write_text(_run(capsys, "state", "pull")[1])
        code, pulled, _ = _run(capsys, "state", "pull", "--history")
        assert code == 0
        (tmp_path / f"{prefix}-history.jsonl").write_text(pulled)

    def push_both(prefix: str) -> None:
        code, _, err = _run(capsys, "state", "push", f"{prefix}-state.json")
        assert code == 0, err
        code, _, err = _run(capsys, "state", "push", "--history", f"{prefix}-history.jsonl")
        assert code == 0, err

    # Files to PostgreSQL, and back, by the recipe: nothing to do on either side.
    pull_both("files")
    (tmp_path / "customs-batch.yaml").write_text(IN_POSTGRES)
    monkeypatch.setenv("CUSTOMS_BATCH_STATE_URL", postgres_url)
    push_both("files")
    assert _run(capsys, "plan", "manifests", "--detailed-exitcode")[0] == 0
    pull_both("db")
    (tmp_path / "customs-batch.yaml").unlink()
    push_both("db")
    assert _run(capsys, "plan", "manifests", "--detailed-exitcode")[0] == 0

    # A movement sent on files.
    (tmp_path / "manifests" / "movement.yaml").write_text(
        (EXAMPLES / "manifests" / "movements.yaml").read_text().split("\n---\n")[0]
    )
    code, out, err = _run(capsys, "apply", "manifests", "--auto-approve")
    assert code == 0, out + err
    sent = json.loads((folder / "state.json").read_text())["resources"]
    movement = sent["Movement/mov-a1-arrival"]["outputs"]
    assert movement, sent

    # Back on PostgreSQL without pushing: refused, nothing sent.
    (tmp_path / "customs-batch.yaml").write_text(IN_POSTGRES)
    for argv in (
        ("plan", "manifests", "--detailed-exitcode"),
        ("apply", "manifests", "--auto-approve"),
    ):
        code, out, err = _run(capsys, *argv)
        assert code == 3, out + err
        assert "+ create" not in out
        assert f"{folder}, where this environment kept its state on files, holds runs" in err
        assert "Movement/mov-a1-arrival" in err
        assert f"`customs-batch state push --history {folder / 'history.jsonl'}`" in err
        assert f"`customs-batch state push {folder / 'state.json'}`" in err
        assert err.index("push --history") < err.index(f"push {folder / 'state.json'}")
        assert "--allow-empty-state" in err
    # The user's choice, said: the database's state as it is.
    code, out, _ = _run(capsys, "plan", "manifests", "--detailed-exitcode", "--allow-empty-state")
    assert code == 2 and "Movement/mov-a1-arrival" in out

    # The history alone pushed: still refused (the database's state lacks the movement).
    code, _, err = _run(capsys, "state", "push", "--history", str(folder / "history.jsonl"))
    assert code == 0, err
    code, out, err = _run(capsys, "plan", "manifests", "--detailed-exitcode")
    assert code == 3 and "+ create" not in out, out + err
    # The state too: nothing to do, the movement recorded once.
    code, _, err = _run(capsys, "state", "push", str(folder / "state.json"))
    assert code == 0, err
    code, out, err = _run(capsys, "plan", "manifests", "--detailed-exitcode")
    assert code == 0, out + err
    pulled = json.loads(_run(capsys, "state", "pull")[1])["resources"]
    assert pulled["Movement/mov-a1-arrival"]["outputs"] == movement


def test_a_state_pushed_without_its_history_then_applied_on_postgres_is_not_refused(
    tmp_path: Path,
    postgres_url: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Moved to PostgreSQL by the push the empty-state refusal names (the state only, the
    old folder kept), then applied there: the folder's runs are all in the database's state,
    so the next plans are not refused for the history the database never got, while a run
    on files the database lacks still is."""
    shutil.copytree(EXAMPLES / "templates", tmp_path / "templates")
    (tmp_path / "manifests").mkdir()
    shutil.copy(EXAMPLES / "manifests" / "template-groups.yaml", tmp_path / "manifests")
    assert _run(capsys, "apply", "manifests", "--auto-approve")[0] == 0
    folder = tmp_path / ".customs-batch" / "local"

    (tmp_path / "customs-batch.yaml").write_text(IN_POSTGRES)
    monkeypatch.setenv("CUSTOMS_BATCH_STATE_URL", postgres_url)
    code, _, err = _run(capsys, "plan", "manifests", "--detailed-exitcode")
    assert code == 3 and f"`customs-batch state push {folder / 'state.json'}`" in err
    code, _, err = _run(capsys, "state", "push", str(folder / "state.json"))
    assert code == 0, err

    # A new group applied on PostgreSQL: the next plans plan it, and nothing else.
    group = (EXAMPLES / "manifests" / "template-groups.yaml").read_text()
    group = group.replace("name: eu-road", "name: eu-rail").replace("EU-ROAD", "EU-RAIL")
    (tmp_path / "manifests" / "rail.yaml").write_text(group)
    code, out, err = _run(capsys, "apply", "manifests", "--auto-approve")
    assert code == 0, out + err
    for _ in range(2):
        code, out, err = _run(capsys, "plan", "manifests", "--detailed-exitcode")
        assert code == 0, out + err

    # A group created on files that the database's state lacks: refused, as before.
    (tmp_path / "customs-batch.yaml").unlink()
    (tmp_path / "manifests" / "rail.yaml").unlink()
    group = group.replace("name: eu-rail", "name: eu-sea").replace("EU-RAIL", "EU-SEA")
    (tmp_path / "manifests" / "sea.yaml").write_text(group)
    code, out, err = _run(capsys, "apply", "manifests", "--auto-approve")
    assert code == 0 and "TemplateGroup/eu-sea" in out, out + err
    (tmp_path / "customs-batch.yaml").write_text(IN_POSTGRES)
    code, out, err = _run(capsys, "plan", "manifests", "--detailed-exitcode")
    assert code == 3 and "+ create" not in out, out + err
    assert "TemplateGroup/eu-sea" in err


def test_what_an_older_copy_would_undo_is_named_by_sort() -> None:
    current = _state("lin", 7, "Movement/kept", "Movement/new", "Movement/rm", "Movement/edited")
    current.resources["Movement/rm"] = current.resources["Movement/rm"].with_changes(
        status=RecordStatus.FORGOTTEN, forgotten_from="applied"
    )
    current.resources["Movement/edited"] = current.resources["Movement/edited"].with_changes(
        outputs={"movementId": "mov_2"}
    )
    older = _state("lin", 5, "Movement/kept", "Movement/rm", "Movement/edited", "Movement/gone")

    said = undone_by_push(current, older)

    assert said is not None
    assert said.startswith("it is serial 5 of this environment's state, which a command has ")
    assert "the record(s) of Movement/new (the next plan would send" in said
    assert "the tombstone(s) of Movement/rm (forgotten since with state rm" in said
    assert "what was recorded since of Movement/edited" in said
    assert "the removal of Movement/gone (by state rm --gone since)" in said
    assert "Movement/kept" not in said
    assert undone_by_push(current, _state("other", 5, "Movement/kept")) is None
    assert undone_by_push(current, _state("lin", 7, "Movement/kept")) is None


def test_pull_writes_a_file_of_its_own_readable_by_its_owner_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A shell redirect makes the copy as the umask says (0644: customs data others read);
    # -o FILE writes it 0600, the same bytes as standard output, the history too.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "manifests").mkdir()
    shutil.copy(EXAMPLES / "manifests" / "template-groups.yaml", tmp_path / "manifests")
    shutil.copytree(EXAMPLES / "templates", tmp_path / "templates")
    assert _run(capsys, "apply", "manifests", "--auto-approve")[0] == 0
    before = os.umask(0o022)
    try:
        for extra, name in (((), "state.json"), (("--history",), "history.jsonl")):
            code, printed, err = _run(capsys, "state", "pull", *extra)
            assert code == 0, err
            code, out, err = _run(capsys, "state", "pull", *extra, "-o", name)
            assert code == 0 and out == "", out + err
            written = tmp_path / name
            assert written.read_text(encoding="utf-8") == printed and printed
            assert stat.S_IMODE(written.stat().st_mode) == 0o600
    finally:
        os.umask(before)
    code, out, _ = _run(capsys, "state", "pull", "-o", "-")
    assert code == 0 and json.loads(out)["resources"]
    code, _, err = _run(capsys, "state", "pull", "-o", ".customs-batch/local/state.json")
    assert code == 64 and "it is the state of environment local" in err
