"""A departure whose submission's outcome is unknown, against the built-in emulator: apply
looks for it at the service first, submits it again when it never arrived, and otherwise
names the declarations that could be it."""

from __future__ import annotations

import functools
import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from customs_batch.state import LocalBackend, RecordStatus, ResourceRecord
from tests.cli.conftest import run

ADDRESS = "DepartureDeclaration/dep-rtm-ant-0002"
# Older than the default timeouts (10 s + 30 s) and the margin: no wait.
LONG_AGO = (datetime.now(UTC) - timedelta(minutes=1)).isoformat(timespec="milliseconds")


def backend(project: Path) -> LocalBackend:
    return LocalBackend(project / ".customs-batch" / "local")


def transit_ids(capsys: pytest.CaptureFixture[str]) -> list[int]:
    code, out, err = run(capsys, "get", "transit", "--all", "--format", "json")
    assert code == 0, err
    return sorted(entry["declarationId"] for entry in json.loads(out))


def _submission_killed_before_it_left(project: Path) -> None:
    """The intent of a departure's submission, recorded long ago, as a run killed after
    recording it and before the request left leaves it."""
    with backend(project).open("test") as session:
        session.record(
            ResourceRecord(
                ADDRESS,
                RecordStatus.PENDING,
                "submit-departure",
                {"type": "DEPARTURE"},
                updated_at=LONG_AGO,
            )
        )


def test_a_submission_that_never_arrived_is_sent_again_without_a_decision(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = transit_ids(capsys)
    _submission_killed_before_it_left(project)
    code, out, _ = run(capsys, "plan")
    assert code == 1 and "? needs decision " + ADDRESS in out
    assert "apply` (or `refresh`) first looks at the service" in out

    code, out, err = run(capsys, "apply", "--auto-approve")
    assert code == 0, out + err
    assert f"{ADDRESS}: the last submission never reached the service" in err
    assert "Apply: 9 succeeded, 0 failed" in out
    created = [i for i in transit_ids(capsys) if i not in before]
    assert len(created) == 2  # the two departures of the examples, each once
    assert backend(project).read().resources[ADDRESS].outputs["declarationId"] in created


def test_a_submission_the_service_may_have_received_is_left_to_decide(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "apply", "--auto-approve")[0] == 0
    before = transit_ids(capsys)
    with backend(project).open("test") as session:  # sent, its answer lost
        record = session.state.resources[ADDRESS]
        declaration_id = record.outputs["declarationId"]
        session.record(
            record.with_changes(status=RecordStatus.UNKNOWN, outputs={}, updated_at=LONG_AGO)
        )

    code, out, err = run(capsys, "apply", "--auto-approve")
    assert code == 1, out + err
    # The first apply's history holds the answer the record lost: it names the ID.
    said = f"the history records the service's answer to it, {declaration_id} "
    assert said in err
    assert f"with the same values ({declaration_id})." in err  # not the other departure's
    assert f"state adopt {ADDRESS} {declaration_id}` records it" in err
    assert transit_ids(capsys) == before, "sent twice"

    code, out, err = run(capsys, "refresh")
    assert code == 0 and said in out
    code, _, err = run(capsys, "state", "adopt", ADDRESS, str(declaration_id))
    assert code == 0, err
    code, out, _ = run(capsys, "plan", "--detailed-exitcode")
    assert code == 0, out


def test_refresh_takes_back_a_submission_that_never_arrived_and_says_apply_sends_it(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = transit_ids(capsys)
    _submission_killed_before_it_left(project)
    code, out, err = run(capsys, "refresh")
    assert code == 0, out + err
    assert (
        f"{ADDRESS}: the last submission never reached the service (nothing created since "
        "could be it): the next apply submits it again"
    ) in out
    assert transit_ids(capsys) == before, "refresh sends nothing"
    assert ADDRESS not in backend(project).read().resources


SERVICE = "http://customs.shared.test"


@pytest.fixture
def two_environments(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> dict[str, LocalBackend]:
    """Environments nl and de of one service (an emulator in-process, its data in one
    file), each with a state of its own, and the departure ADDRESS as their only document."""
    import customs_batch.backends
    from customs_batch.client import CustomsClient
    from customs_batch.environments import Environment
    from customs_batch.environments._connect import connect as connect_environment
    from customs_batch.sandbox import InProcessTransport, create_app

    monkeypatch.chdir(project)
    monkeypatch.setenv("CB_KEY", "sandbox-key")
    documents = (project / "manifests" / "departures.yaml").read_text().split("\n---\n")
    (wanted,) = [text for text in documents if f"name: {ADDRESS.partition('/')[2]}" in text]
    shutil.rmtree(project / "manifests")
    (project / "manifests").mkdir()
    (project / "manifests" / "departure.yaml").write_text(wanted)
    settings = f"{{base_url: {SERVICE}, api_key_env: CB_KEY}}"
    (project / "customs-batch.yaml").write_text(
        f"manifests: [manifests]\nenvironments:\n  nl: {settings}\n  de: {settings}\n"
    )
    service = tmp_path / "service.sqlite3"

    def connect(environment: Environment, **_: Any) -> CustomsClient:
        app = create_app(db_path=service, rate_limit=None)
        return connect_environment(environment, transport=InProcessTransport(app))

    monkeypatch.setattr(customs_batch.backends, "connect", connect)
    return {env: LocalBackend(project / ".customs-batch" / env) for env in ("nl", "de")}


def test_a_lookalike_another_environment_holds_is_left_out_by_refresh_and_apply(
    two_environments: dict[str, LocalBackend], capsys: pytest.CaptureFixture[str]
) -> None:
    # de submitted the declaration; nl's submission of the same document was lost before
    # it left (its intent recorded long ago). de's declaration is no candidate for nl's:
    # adopting it would make two environments write one declaration.
    nl, de = two_environments["nl"], two_environments["de"]
    code, out, err = run(capsys, "apply", "--env", "de", "--auto-approve")
    assert code == 0, out + err
    theirs = de.read().resources[ADDRESS]
    held = theirs.outputs["declarationId"]

    def lost() -> None:
        with nl.open("test") as session:
            session.record(
                ResourceRecord(
                    ADDRESS,
                    RecordStatus.PENDING,
                    "submit-departure",
                    dict(theirs.spec),
                    updated_at=LONG_AGO,
                )
            )

    left_out = f"{held} is recorded as {ADDRESS} in the state of environment 'de'"
    lost()
    code, out, err = run(capsys, "refresh", "--env", "nl")
    assert code == 0, out + err
    assert f"{ADDRESS}: the last submission never reached the service" in out
    assert left_out in out
    assert ADDRESS not in nl.read().resources

    lost()
    code, out, err = run(capsys, "apply", "--env", "nl", "--auto-approve")
    assert f"{ADDRESS}: the last submission never reached the service" in err
    assert left_out in err
    # Never reached the service, it is not sent again either: de's declaration is the one
    # of these goods (sent again, the service held the same declaration twice).
    assert code == 1, out + err
    assert f"it declares what {held} at the service, recorded as {ADDRESS} in the state of " in out
    assert ADDRESS not in nl.read().resources
    assert de.read().resources[ADDRESS].outputs["declarationId"] == held


def test_refresh_stopped_by_the_service_says_what_it_recorded_before(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A refresh that took back a lost submission, then failed on a later read (a 503
    after the client's retries), has changed the state: it must say so, not only the
    error, or the next plan's `+ create` of that departure comes unexplained."""
    from customs_batch.client import CustomsClient
    from customs_batch.client._errors import ServerError

    code, out, err = run(capsys, "apply", "--auto-approve", "--target", "TemplateGroup/eu-road")
    assert code == 0, out + err
    _submission_killed_before_it_left(project)

    def fail(*args: Any, **kwargs: Any) -> Any:
        raise ServerError(
            "the service failed (GET /v1/declaration-templates/groups -> 503)",
            status=503,
            body={},
            operation="GET /v1/declaration-templates/groups",
        )

    monkeypatch.setattr(CustomsClient, "iter_template_groups", fail)
    monkeypatch.setattr(CustomsClient, "list_template_groups", fail)
    code, out, err = run(capsys, "refresh")
    assert code == 3, out + err
    assert ADDRESS not in backend(project).read().resources  # taken back, and saved
    assert (
        f"{ADDRESS}: the last submission never reached the service (nothing created since "
        "could be it): the next apply submits it again"
    ) in err
    assert "recorded before the error" in err


def test_the_apply_summary_counts_the_wait_before_looking_for_a_lost_submission(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A submission lost a moment ago is looked for once any answer to it would have come
    (the timeouts, 10 s + 30 s, and a margin): the run waits that long, and its summary
    says so, not only the time of its requests ("in 0.0 s" after a wait of 45 s)."""
    import customs_batch.cli.apply
    from customs_batch.commands import apply_changes
    from tests.client.fakes import FakeClock

    clock = FakeClock()
    monkeypatch.setattr(
        customs_batch.cli.apply,
        "apply_changes",
        functools.partial(apply_changes, clock=clock, sleep=clock.sleep),
    )
    with backend(project).open("test") as session:
        session.record(
            ResourceRecord(
                ADDRESS,
                RecordStatus.PENDING,
                "submit-departure",
                {"type": "DEPARTURE"},
                updated_at=datetime.now(UTC).isoformat(timespec="milliseconds"),
            )
        )
    code, out, err = run(capsys, "apply", "--auto-approve")
    assert code == 0, out + err
    assert len(clock.sleeps) == 1 and 40 < clock.sleeps[0] <= 45
    assert (
        f"Apply: 9 succeeded, 0 failed, 0 skipped, 0 not-started in {clock.sleeps[0]:.1f} s." in out
    )
