"""``import`` and ``state adopt`` refuse an ID that the state of another environment of the
same service already holds: both environments' applies would write their own documents
into that one object. Each backend sees the other states it can know: the state folders of
the project's other environments at the same base_url, and the other states of the same
PostgreSQL database that name the same service."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import customs_batch.backends
from customs_batch.backends import backend_for
from customs_batch.client import CustomsClient
from customs_batch.commands import ApplyOptions, Inputs, apply_changes
from customs_batch.commands.state import (
    StateOptions,
    adopt_object,
    forget_records,
    import_document,
    move_record,
    push_state,
    restore_record,
)
from customs_batch.environments import Environment, load_project
from customs_batch.environments._connect import connect as connect_environment
from customs_batch.errors import ExitCode, StateError
from customs_batch.kinds import Address, Kind
from customs_batch.kinds.registry import model_of
from customs_batch.planning import Action
from customs_batch.sandbox import InProcessTransport, create_app
from customs_batch.state import RecordStatus, ResourceRecord, State
from tests.commands.test_core import Recorder

SERVICE = "http://customs.shared.test"
GROUP = Address(Kind.TEMPLATE_GROUP, "default")
SPEC = {
    "name": "Default",
    "code": "DEFAULT",
    "companyId": 1,
    "DeclarationTemplates": [{"procedureType": "H1", "declarationOffice": "NL000396"}],
}
"""The seeded template group 1, as a document of each environment."""


def _settings(backend: str, base_url: str = SERVICE) -> str:
    state = "" if backend == "local" else ", state: {backend: postgres, url_env: CB_STATE_URL}"
    return f"{{base_url: {base_url}, api_key_env: CB_KEY{state}}}"


@pytest.fixture(params=["local", "postgres"])
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "postgres":
        monkeypatch.setenv("CB_STATE_URL", request.getfixturevalue("postgres_url"))
    name: str = request.param
    return name


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, backend: str) -> Path:
    """Environments nl and de of one service (an emulator in-process, its data in one
    file), each with a state of its own in ``backend``, and elsewhere at another service."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CB_KEY", "sandbox-key")
    (tmp_path / "customs-batch.yaml").write_text(
        "environments:\n"
        f"  nl: {_settings(backend)}\n"
        f"  de: {_settings(backend)}\n"
        f"  elsewhere: {_settings(backend, 'http://customs.other.test')}\n"
    )
    _documents_and_service(tmp_path, monkeypatch)
    return tmp_path


def _documents_and_service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The group's document in manifests/, and one emulator in-process behind every
    environment, its data in one file."""
    document = {
        "apiVersion": "customs-batch/v1",
        "kind": "TemplateGroup",
        "metadata": {"name": GROUP.name},
        "spec": SPEC,
    }
    (tmp_path / "manifests").mkdir()
    (tmp_path / "manifests" / "default.yaml").write_text(json.dumps(document))
    service = tmp_path / "service.sqlite3"

    def connect(environment: Environment, **_: Any) -> CustomsClient:
        app = create_app(db_path=service, rate_limit=None)
        return connect_environment(environment, transport=InProcessTransport(app))

    monkeypatch.setattr(customs_batch.backends, "connect", connect)


def _options(env: str) -> StateOptions:
    # (A second environment of a service whose other state holds records starts on purpose.)
    return StateOptions(env, allow_empty_state=True)


def _import(env: str) -> ResourceRecord:
    record, _ = import_document(_options(env), GROUP, "1", (Path("manifests"),))
    return record


def _records(env: str) -> dict[str, ResourceRecord]:
    environment = load_project().select(env)
    return dict(backend_for(environment, allow_empty_state=True).read().resources)


def test_import_refuses_an_id_the_state_of_another_environment_of_the_service_holds(
    project: Path,
) -> None:
    assert _import("nl").outputs["id"] == 1
    with pytest.raises(StateError) as refused:
        _import("de")
    error = refused.value
    assert error.exit_code is ExitCode.ERROR
    assert f"1 is already recorded as {GROUP} in " in error.message
    assert f"a state of the same service ({SERVICE})" in error.message
    assert "two environments write one object" in error.message
    assert "Nothing was recorded" in error.message
    assert error.hint is not None
    assert f"`customs-batch state rm {GROUP} --env nl`" in error.hint
    assert _records("de") == {}

    # The way out the hint gives: nl lets it go (a tombstone sends nothing), de takes it.
    forget_records(StateOptions("nl"), [GROUP], gone=False)
    assert _records("nl")[str(GROUP)].status is RecordStatus.FORGOTTEN
    assert _import("de").outputs["id"] == 1


def test_the_service_written_in_other_letters_is_the_same_service(project: Path) -> None:
    """de's base_url names nl's service with another case and its default port: import is
    refused there all the same (compared as text, it took nl's object as de's too)."""
    written = "http://Customs.SHARED.test:80/"
    config = project / "customs-batch.yaml"
    config.write_text(
        config.read_text().replace(f"de: {{base_url: {SERVICE}", f"de: {{base_url: {written}")
    )
    assert load_project().select("de").base_url == written.rstrip("/")
    assert _import("nl").outputs["id"] == 1
    with pytest.raises(StateError) as refused:
        _import("de")
    assert f"1 is already recorded as {GROUP} in " in refused.value.message
    assert "two environments write one object" in refused.value.message
    assert _records("de") == {}


def test_apply_does_not_adopt_a_409_group_another_environment_records(project: Path) -> None:
    """de's apply of nl's group. Adopted on the service's 409 for its code, both
    environments recorded it, and each apply wrote its own document into it; then the 409
    was refused, nothing recorded of the object. Now plan sees that nl recorded what the
    document declares, and refuses the creation before anything is sent (the 409's refusal
    stays for a state that could not be compared: tests/execution/test_apply.py)."""
    plain = {k: v for k, v in SPEC.items() if k != "DeclarationTemplates"}  # compared whole
    document = {"apiVersion": "customs-batch/v1", "kind": "TemplateGroup"}
    (project / "manifests" / "default.yaml").write_text(
        json.dumps({**document, "metadata": {"name": GROUP.name}, "spec": plain})
    )
    assert _import("nl").outputs["id"] == 1
    inputs = Inputs((Path("manifests"),), environment="de", allow_empty_state=True)
    result = apply_changes(ApplyOptions(inputs, auto_approve=True), Recorder())
    assert result.report is not None
    [outcome] = result.report.outcomes
    assert f"it declares what 1 at the service, recorded as {GROUP} in " in outcome.detail
    assert f"a state of the same service ({SERVICE})" in outcome.detail
    assert f"`customs-batch state rm {GROUP} --env nl`" in outcome.detail
    assert f"`customs-batch import {GROUP} 1` here" in outcome.detail
    assert str(GROUP) not in _records("de")  # refused: nothing sent, nothing recorded


def test_a_document_applied_in_one_environment_is_not_created_in_another(
    project: Path,
) -> None:
    """A document nl applied, planned in de (a second environment of the service, started
    empty on purpose): `+ create`, and apply made a second group of its code there (a
    departure: a second declaration of the same goods). It is refused, naming nl's record
    and the ways out; followed (nl lets it go, de imports it), de manages it."""
    document = {"apiVersion": "customs-batch/v1", "kind": "TemplateGroup"}
    spec = {**SPEC, "name": "NL only", "code": "NL-ONLY"}
    (project / "manifests" / "default.yaml").write_text(
        json.dumps({**document, "metadata": {"name": GROUP.name}, "spec": spec})
    )
    inputs = Inputs((Path("manifests"),), environment="nl", allow_empty_state=True)
    assert apply_changes(ApplyOptions(inputs, auto_approve=True), Recorder()).report is not None
    made = _records("nl")[str(GROUP)]
    assert made.status is RecordStatus.APPLIED
    group_id = made.outputs["id"]
    inputs = Inputs((Path("manifests"),), environment="de", allow_empty_state=True)
    result = apply_changes(ApplyOptions(inputs, auto_approve=True), Recorder())
    [change] = result.plan.changes
    assert change.action is Action.REFUSED
    assert f"recorded as {GROUP} in " in change.reason
    assert "it would create a second group of its code at the service" in change.reason
    assert str(GROUP) not in _records("de")
    forget_records(StateOptions("nl"), [GROUP], gone=False)
    record, _ = import_document(_options("de"), GROUP, str(group_id), (Path("manifests"),))
    assert record.outputs["id"] == group_id


def test_restore_refuses_a_tombstone_whose_object_another_environment_took_over(
    project: Path,
) -> None:
    # nl let the group go as the import's hint says, and de imported it.
    _import("nl")
    forget_records(StateOptions("nl"), [GROUP], gone=False)
    _import("de")
    with pytest.raises(StateError) as refused:
        restore_record(StateOptions("nl"), GROUP)
    error = refused.value
    assert error.exit_code is ExitCode.ERROR
    assert f"1 is recorded as {GROUP} in " in error.message
    assert f"a state of the same service ({SERVICE})" in error.message
    assert "two environments write one object" in error.message
    assert "Nothing was restored" in error.message
    assert error.hint is not None
    assert f"`customs-batch state rm {GROUP} --env de`" in error.hint
    assert _records("nl")[str(GROUP)].status is RecordStatus.FORGOTTEN

    # Once de lets it go, nl takes it back.
    forget_records(StateOptions("de"), [GROUP], gone=False)
    assert restore_record(StateOptions("nl"), GROUP).status is RecordStatus.APPLIED


def test_mv_of_a_tombstone_whose_object_another_environment_took_over_is_refused(
    project: Path,
) -> None:
    # state mv of a tombstone tracks it again under the new name, as restore does.
    renamed = Address(Kind.TEMPLATE_GROUP, "renamed")
    _import("nl")
    forget_records(StateOptions("nl"), [GROUP], gone=False)
    _import("de")
    with pytest.raises(StateError) as refused:
        move_record(StateOptions("nl"), GROUP, renamed)
    error = refused.value
    assert error.exit_code is ExitCode.ERROR
    assert f"1 is recorded as {GROUP} in " in error.message
    assert f"a state of the same service ({SERVICE})" in error.message
    assert f"tracking {GROUP} as {renamed} again here" in error.message
    assert "Nothing was moved" in error.message
    assert error.hint is not None
    assert f"`customs-batch state rm {GROUP} --env de`" in error.hint
    assert f"`customs-batch state mv {GROUP} {renamed}`" in error.hint
    records = _records("nl")
    assert records[str(GROUP)].status is RecordStatus.FORGOTTEN
    assert str(renamed) not in records

    # Once de lets it go, nl moves it.
    forget_records(StateOptions("de"), [GROUP], gone=False)
    assert move_record(StateOptions("nl"), GROUP, renamed).status is RecordStatus.APPLIED
    assert move_record(StateOptions("nl"), renamed, GROUP).status is RecordStatus.APPLIED


def test_push_refuses_a_state_whose_record_another_environment_of_the_service_holds(
    project: Path,
) -> None:
    # nl's copy, pushed into de (or a backup of de's from before nl took the group over).
    _import("nl")
    copy = State.new()
    copy.resources[str(GROUP)] = _records("nl")[str(GROUP)]
    for force in (False, True):
        with pytest.raises(StateError) as refused:
            push_state(_options("de"), copy, force=force)
        error = refused.value
        assert error.exit_code is ExitCode.ERROR
        assert f"{GROUP} of the pushed state holds 1, which is recorded as {GROUP} in " in (
            error.message
        )
        assert f"a state of the same service ({SERVICE})" in error.message
        assert "two environments write one object" in error.message
        assert "Nothing was pushed" in error.message
        assert error.hint is not None
        assert f"`customs-batch state rm {GROUP} --env nl`" in error.hint
        assert f"`customs-batch state restore {GROUP} --env nl`" in error.hint
    assert _records("de") == {}

    # Its tombstone sends nothing: pushed.
    tombstone = State.new()
    tombstone.resources[str(GROUP)] = copy.resources[str(GROUP)].with_changes(
        status=RecordStatus.FORGOTTEN, forgotten_from=RecordStatus.APPLIED.value
    )
    push_state(_options("de"), tombstone, force=False)
    assert _records("de")[str(GROUP)].status is RecordStatus.FORGOTTEN

    # Once nl lets it go, de takes it by the push.
    forget_records(StateOptions("nl"), [GROUP], gone=False)
    assert push_state(_options("de"), copy, force=True).resources[str(GROUP)].outputs["id"] == 1

    # Only what a push brings is compared: an ID de's record of the address already held
    # (here nl recording it too, as no command now lets it) is not the push's doing.
    with backend_for(load_project().select("nl"), allow_empty_state=True).open("test") as session:
        session.record(copy.resources[str(GROUP)])
    own = backend_for(load_project().select("de"), allow_empty_state=True).read()
    push_state(_options("de"), own, force=False)


def test_adopt_refuses_an_id_the_state_of_another_environment_of_the_service_holds(
    project: Path,
) -> None:
    _import("nl")
    # de's creation of the group had an unknown outcome; 1 is nl's group, not what it made.
    create = model_of(Kind.TEMPLATE_GROUP).create
    assert create is not None
    lost = ResourceRecord(str(GROUP), RecordStatus.UNKNOWN, create.value, SPEC)
    environment = load_project().select("de")
    with backend_for(environment, allow_empty_state=True).open("test") as session:
        session.record(lost)
    with pytest.raises(StateError) as refused:
        adopt_object(_options("de"), GROUP, "1")
    assert f"1 is already recorded as {GROUP} in " in refused.value.message
    assert "did not create it" in refused.value.message
    assert refused.value.hint is not None and f"state forget {GROUP}" in refused.value.hint
    assert _records("de")[str(GROUP)].status is RecordStatus.UNKNOWN


def test_states_of_another_service_or_unreadable_are_not_in_the_way(
    project: Path, backend: str
) -> None:
    # The ID at another service is another object.
    held = ResourceRecord(str(GROUP), RecordStatus.APPLIED, "import", SPEC, outputs={"id": 1})
    elsewhere = State.new()
    elsewhere.resources[str(GROUP)] = held
    push_state(StateOptions("elsewhere"), elsewhere, force=False)
    if backend == "local":
        # A state of the same service that cannot be read is its own commands' concern.
        (project / ".customs-batch" / "nl").mkdir(parents=True)
        (project / ".customs-batch" / "nl" / "state.json").write_text("{not json")
    assert _import("de").outputs["id"] == 1


@pytest.fixture
def mixed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, postgres_url: str) -> Path:
    """Environments of one service with states in both backends: dev in a folder, ci in
    PostgreSQL (its URL in CB_STATE_URL)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CB_KEY", "sandbox-key")
    monkeypatch.setenv("CB_STATE_URL", postgres_url)
    (tmp_path / "customs-batch.yaml").write_text(
        f"environments:\n  dev: {_settings('local')}\n  ci: {_settings('postgres')}\n"
    )
    _documents_and_service(tmp_path, monkeypatch)
    return tmp_path


def test_a_folder_state_sees_what_a_database_state_of_the_service_holds(mixed: Path) -> None:
    assert _import("ci").outputs["id"] == 1
    with pytest.raises(StateError) as refused:
        _import("dev")
    assert f"1 is already recorded as {GROUP} in " in refused.value.message
    assert "the state of environment 'ci' (the PostgreSQL state ci)" in refused.value.message
    assert refused.value.hint is not None
    assert f"`customs-batch state rm {GROUP} --env ci`" in refused.value.hint
    assert _records("dev") == {}


@pytest.mark.parametrize("reach", ["variable unset", "no tables"])
def test_a_database_state_out_of_reach_is_passed_over_and_left_unwritten(
    mixed: Path, monkeypatch: pytest.MonkeyPatch, postgres_url: str, reach: str
) -> None:
    import psycopg

    from customs_batch.state.pg_tables import tables_version

    if reach == "variable unset":
        # ci's state cannot be read here: dev's import is its own.
        monkeypatch.delenv("CB_STATE_URL")
    assert _import("dev").outputs["id"] == 1
    # A database no state was written to is read as nothing, and no table is made there.
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        assert tables_version(connection) == 0


def test_import_refuses_a_look_alike_of_a_declaration_another_environment_records(
    project: Path,
) -> None:
    """Found by a probe: nl records a departure of 800 kg from NL000396 to BE212000; de,
    given the ID of another client's declaration of that weight and those offices (the
    seeded 7002: the service's detail tells nothing else), imported it for the same
    document, and its next apply would have sent the document's parties into it. It is
    refused, naming nl's record, nothing recorded."""
    examples = Path(__file__).resolve().parents[2] / "examples"
    text = (examples / "manifests" / "departures.yaml").read_text()
    second = text[text.index("apiVersion", text.index("name: dep-rtm-ant-0002") - 200) :]
    heavy = second.replace("totalWeight: 60.0", "totalWeight: 800.0").replace(
        "grossMass: 60.0", "grossMass: 800.0"
    )
    (project / "manifests" / "default.yaml").unlink()
    (project / "manifests" / "departure.yaml").write_text(heavy)
    inputs = Inputs((Path("manifests"),), environment="nl", allow_empty_state=True)
    assert apply_changes(ApplyOptions(inputs, auto_approve=True), Recorder()).report is not None
    departure = Address(Kind.DEPARTURE_DECLARATION, "dep-rtm-ant-0002")
    declared = _records("nl")[str(departure)].outputs["declarationId"]
    assert declared != 7002

    with pytest.raises(StateError) as refused:
        import_document(_options("de"), departure, "7002", (Path("manifests"),))
    error = refused.value
    assert error.exit_code is ExitCode.ERROR
    assert f"{departure} in " in error.message
    assert f"a state of the same service ({SERVICE})" in error.message
    assert f"records what {departure} declares" in error.message
    assert f"at {declared}: importing 7002" in error.message
    assert "Nothing was recorded" in error.message
    assert _records("de") == {}
