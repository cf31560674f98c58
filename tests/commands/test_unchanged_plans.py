"""A re-plan takes what earlier plans found unchanged from the load cache's note, and its plan
is the plan of a run without the cache, whatever changed in the state or the manifests."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from customs_batch.commands import ApplyOptions, Inputs, PlanOptions, apply_changes, make_plan
from customs_batch.kinds import Address
from customs_batch.kinds.actions import Action
from customs_batch.kinds.registry import model_of
from customs_batch.load_cache import CACHE_DIR_VARIABLE
from customs_batch.planning import Plan, PlannedChange
from customs_batch.planning.unchanged import Unchanged
from customs_batch.state.model import RecordStatus, ResourceRecord, ServiceFailure
from tests.commands.test_core import Recorder
from tests.planning.helpers import parsed_records

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MANIFESTS = (Path("manifests"),)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The examples (manifests, template, spreadsheets), applied to the embedded sandbox,
    with a cache folder of their own."""
    for name in ("manifests", "templates", "data"):
        if (EXAMPLES / name).is_dir():
            shutil.copytree(EXAMPLES / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CUSTOMS_BATCH_ENV", raising=False)
    monkeypatch.setenv(CACHE_DIR_VARIABLE, str(tmp_path / "cache"))
    applied = apply_changes(ApplyOptions(Inputs(MANIFESTS), auto_approve=True), Recorder())
    assert applied.report is not None and applied.report.ok
    return tmp_path


def _plan(*, cache: bool) -> Plan:
    return make_plan(PlanOptions(Inputs(MANIFESTS, cache=cache))).plan


def _note(project: Path) -> list[Path]:
    return [
        path
        for path in (project / "cache").iterdir()
        if path.is_file() and path.read_bytes().startswith(b"customs-batch load cache note")
    ]


def test_a_re_plan_compares_only_what_it_cannot_know_unchanged(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cold = _plan(cache=False)
    assert not cold.has_changes
    _plan(cache=True)  # finds every document unchanged, and notes it
    parsed = parsed_records(monkeypatch)
    warm = _plan(cache=True)
    assert warm == cold
    # Parsed again: a document with a reference (its value is another record's) or of a
    # kind with a sensitive field (compared as a digest keyed by the API key).
    assert parsed
    from customs_batch.sensitive import sensitive_paths

    for address in parsed:
        change = next(c for c in warm.changes if str(c.address) == address)
        assert sensitive_paths(change.address.kind) or _refers(change), address
    taken = [c for c in warm.changes if str(c.address) not in parsed]
    assert len(taken) >= len(warm.changes) // 2, "most documents were not taken as unchanged"
    # A guarantee's access code is compared as a digest keyed by the API key (or counted as
    # not compared, without it): such a document is compared every time.
    sensitive = [str(c.address) for c in warm.changes if sensitive_paths(c.address.kind)]
    assert sensitive and set(sensitive) <= set(parsed)


def _refers(change: PlannedChange) -> bool:
    from customs_batch.manifest import load_paths

    documents = {doc.address: doc for doc in load_paths(list(MANIFESTS)).documents}
    return bool(documents[change.address].references)


def test_the_note_is_private_holds_digests_only_and_is_not_written_without_the_cache(
    project: Path,
) -> None:
    _plan(cache=False)
    assert not (project / "cache").exists() or not _note(project)
    plan = _plan(cache=True)
    [note] = _note(project)
    assert os.stat(note).st_mode & 0o777 == 0o600
    body = note.read_bytes().split(b"\n", 1)[1]
    # Each entry: a digest (16 bytes), then the place its record was sent at (4).
    assert len(body) % 20 == 0 and 0 < len(body) // 20 <= len(plan.changes)
    for change in plan.changes:
        for value in change.spec.values():
            if isinstance(value, str) and len(value) > 6:
                assert value.encode() not in body


def test_a_corrupt_or_truncated_note_is_no_error(project: Path) -> None:
    cold = _plan(cache=False)
    _plan(cache=True)
    [note] = _note(project)
    data = note.read_bytes()
    for broken in (data[:-5], data[:30], b"not a note", b""):
        note.write_bytes(broken)
        assert _plan(cache=True) == cold


Mutation = Callable[[ResourceRecord, random.Random], ResourceRecord | None]


def _failed(record: ResourceRecord, _: random.Random) -> ResourceRecord:
    return record.with_changes(
        status=RecordStatus.FAILED, error=ServiceFailure(422, "refused by the test")
    )


def _unknown(record: ResourceRecord, rng: random.Random) -> ResourceRecord:
    status = rng.choice([RecordStatus.UNKNOWN, RecordStatus.PENDING])
    return record.with_changes(status=status, updated_at="2020-01-01T00:00:00+00:00")


def _service_state(record: ResourceRecord, rng: random.Random) -> ResourceRecord:
    model = model_of(Address.parse(record.address).kind)  # type: ignore[union-attr]
    states = sorted(model.rejected_states | model.pending_states) or ["processing"]
    return record.with_changes(remote_status=rng.choice(states), remote_errors=({"code": "X"},))


def _spec_edited(record: ResourceRecord, rng: random.Random) -> ResourceRecord:
    spec = dict(record.spec)
    name = rng.choice(sorted(spec))
    value = spec[name]
    spec[name] = value + 1 if isinstance(value, int) and not isinstance(value, bool) else "x"
    return record.with_changes(spec=spec)


def _forgotten(record: ResourceRecord, _: random.Random) -> ResourceRecord:
    return record.with_changes(status=RecordStatus.FORGOTTEN, forgotten_from=record.status.value)


def _removed(record: ResourceRecord, _: random.Random) -> None:
    return None


MUTATIONS: tuple[Mutation, ...] = (
    _failed,
    _unknown,
    _service_state,
    _spec_edited,
    _forgotten,
    _removed,
)


def _mutate_state(rng: random.Random, count: int) -> list[str]:
    inputs = Inputs()
    backend = inputs.backend(inputs.chosen_environment())
    with backend.open("test") as session:
        addresses = sorted(session.state.resources)
        chosen = rng.sample(addresses, min(count, len(addresses)))
        for address in chosen:
            changed = rng.choice(MUTATIONS)(session.state.resources[address], rng)
            if changed is None:
                session.forget(address)
            else:
                session.record(changed)
    return chosen


def _edit_manifest(project: Path, rng: random.Random) -> None:
    """Change one number written in one manifest (a movement's weight, say)."""
    files = sorted((project / "manifests").glob("*.yaml"))
    path = rng.choice(files)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    numbered = [i for i, line in enumerate(lines) if line.rstrip().endswith(".5")]
    if numbered:
        at = rng.choice(numbered)
        lines[at] = lines[at].rstrip()[:-2] + ".25\n"
        path.write_text("".join(lines), encoding="utf-8")


@pytest.mark.parametrize("seed", range(4))
def test_a_re_plan_is_the_plan_without_the_cache_whatever_changed(
    project: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    rng = random.Random(seed)
    _plan(cache=True)
    hits: list[bytes] = []
    known = Unchanged.known

    def noting(self: Unchanged, key: bytes) -> bool:
        found = known(self, key)
        if found:
            hits.append(key)
        return found

    monkeypatch.setattr(Unchanged, "known", noting)
    for _ in range(5):
        _mutate_state(rng, rng.randint(1, 4))
        if rng.random() < 0.3:
            _edit_manifest(project, rng)
        assert _plan(cache=True) == _plan(cache=False)
    assert hits, "no document was taken as unchanged: the test tests nothing"


def test_a_plan_of_a_part_uses_the_note_and_leaves_it_as_it_was(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _plan(cache=True)
    [note] = _note(project)
    before = note.read_bytes()
    target = next(
        c.address for c in _plan(cache=False).changes if c.address.kind.value == "Movement"
    )
    parsed = parsed_records(monkeypatch)
    part = make_plan(PlanOptions(Inputs(MANIFESTS, targets=(str(target),), cache=True))).plan
    assert str(target) in {str(c.address) for c in part.changes}
    assert str(target) not in parsed  # taken as unchanged from the note
    assert note.read_bytes() == before


def test_two_plans_sharing_the_note_while_a_manifest_changes_leave_it_true(
    project: Path,
) -> None:
    # Two real plans at once on one cache and one note, a manifest edited while they run.
    # However their steps interleave, what they leave must give a later plan the plan of a
    # run without the cache.
    movements = project / "manifests" / "movements.yaml"
    text = movements.read_text(encoding="utf-8")
    command = [sys.executable, "-m", "customs_batch", "plan", "manifests"]
    runs = [
        subprocess.Popen(command, cwd=project, env=dict(os.environ), stdout=subprocess.DEVNULL)
        for _ in range(2)
    ]
    weight = 50
    while any(run.poll() is None for run in runs):  # edits for as long as they run
        weight += 1
        movements.write_text(text.replace("grossWeightKg: 50.2", f"grossWeightKg: {weight}.5"))
    for run in runs:
        assert run.wait(timeout=120) in (0, 1)
    assert _note(project)
    warm = _plan(cache=True)
    assert warm == _plan(cache=False)
    assert f"grossWeightKg: {weight}.5" in movements.read_text(encoding="utf-8")
    assert warm.counts[Action.NO_CHANGE] == len(warm.changes) - 1  # the edited movement


def test_a_state_in_postgresql_is_noted_by_its_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, postgres_url: str
) -> None:
    """The records of a database state are its rows' texts: a re-plan takes the unchanged
    ones from the note, and a row written again is compared again."""
    shutil.copytree(EXAMPLES / "manifests", tmp_path / "manifests")
    for other in (tmp_path / "manifests").iterdir():
        if other.name != "movements.yaml":
            other.unlink()
    (tmp_path / "customs-batch.yaml").write_text(
        "default_environment: db\nenvironments:\n  db:\n    base_url: https://customs.example\n"
        "    api_key_env: NOTE_TEST_KEY\n"
        "    state: {backend: postgres, url_env: NOTE_TEST_STATE_URL}\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NOTE_TEST_STATE_URL", postgres_url)
    monkeypatch.setenv("NOTE_TEST_KEY", "k" * 32)
    monkeypatch.setenv(CACHE_DIR_VARIABLE, str(tmp_path / "cache"))
    documents = Inputs(MANIFESTS).documents()
    inputs = Inputs()
    backend = inputs.backend(inputs.chosen_environment())
    with backend.open("test") as session:
        for number, document in enumerate(documents):
            session.record(
                ResourceRecord(
                    str(document.address),
                    RecordStatus.APPLIED,
                    "create",
                    dict(document.spec),
                    outputs={"id": number},
                    updated_at="2026-01-01T00:00:00+00:00",
                )
            )
    cold = _plan(cache=False)
    assert cold.counts[Action.NO_CHANGE] == len(cold.changes) == len(documents)
    _plan(cache=True)
    parsed = parsed_records(monkeypatch)
    assert _plan(cache=True) == cold
    assert parsed == []
    first = str(documents[0].address)
    with backend.open("test") as session:
        record = session.state.resources[first]
        session.record(record.with_changes(status=RecordStatus.UNKNOWN))
    warm = _plan(cache=True)
    assert set(parsed) == {first}
    assert warm == _plan(cache=False)
    assert warm.counts[Action.NO_CHANGE] == len(documents) - 1


def test_apply_keeps_the_note_once_its_requests_are_sent(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Writing the note (1.6 MB for 100,000 documents) is nothing a request needs: it had
    # come before apply's first request.
    movements = project / "manifests" / "movements.yaml"
    text = movements.read_text(encoding="utf-8")
    last = text.rstrip("\n").rsplit("\n---\n", 1)[-1]
    added = last.replace("name: mov-a1-clearance", "name: mov-a1-added")
    movements.write_text(text.rstrip("\n") + "\n---\n" + added + "\n", encoding="utf-8")
    seen: list[str] = []
    save = Unchanged.save

    def saved(self: Unchanged) -> None:
        seen.append("saved")
        save(self)

    class Sending(Recorder):
        def sending(self, address: Address) -> None:
            seen.append(f"sending {address}")

    monkeypatch.setattr(Unchanged, "save", saved)
    options = ApplyOptions(Inputs(MANIFESTS, cache=True), auto_approve=True)
    applied = apply_changes(options, Sending())
    assert applied.report is not None
    assert seen == ["sending Movement/mov-a1-added", "saved"]
    assert _note(project), "the note of what this run found unchanged was not written"
