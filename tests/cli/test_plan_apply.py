"""plan, apply and the state commands through the CLI, on the built-in local environment."""

from __future__ import annotations

import functools
import json
import shlex
import time
from pathlib import Path
from typing import Any

import pytest

from customs_batch import sandbox
from customs_batch.planning.inputs import load_inputs
from customs_batch.planning.planfile import digest_documents
from customs_batch.sensitive import Sealer
from customs_batch.state import LocalBackend, RecordStatus
from tests.cli.conftest import run, run_alone
from tests.sandbox.conftest import FakeClock


def backend(project: Path) -> LocalBackend:
    return LocalBackend(project / ".customs-batch" / "local")


def test_plan_apply_then_nothing_to_do(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "plan", "--detailed-exitcode")
    assert code == 2
    assert "+ create         TemplateGroup/eu-road" in out
    assert "declarationId = (known after apply)" in out
    # 13: the party update reads its departure's declaration, and a page of the transit
    # declarations made since the departure's record was written, before its PATCH.
    assert "Plan: 9 to create" in out and "Requests: at least 13" in out

    code, out, err = run(capsys, "apply", "--auto-approve", "--wait")
    assert code == 0, err
    assert out.count("\ndone ") + out.startswith("done ") == 9
    assert "Apply: 9 succeeded, 0 failed" in out

    code, out, _ = run(capsys, "plan", "--detailed-exitcode")
    assert code == 0
    assert "No changes" in out and "9 unchanged" in out
    code, out, _ = run(capsys, "apply", "--auto-approve")
    assert code == 0 and "Nothing to apply." in out


def test_plan_and_apply_without_paths_read_the_configured_manifests_only(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "docker-compose.yml").write_text("services:\n  web: {image: nginx}\n")
    code, _, err = run(capsys, "plan")
    assert code == 1 and "docker-compose.yml:1:1: error[envelope.api-version]" in err
    (project / "customs-batch.yaml").write_text("manifests: [manifests]\n")
    code, out, err = run(capsys, "plan", "--detailed-exitcode")
    assert code == 2, err
    assert "Plan: 9 to create" in out
    code, out, err = run(capsys, "apply", "--auto-approve", "--wait")
    assert code == 0, err
    assert "Apply: 9 succeeded, 0 failed" in out


def test_apply_off_a_terminal_needs_approval_or_a_plan(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "apply")
    assert code == 64
    assert "--auto-approve" in err and "plan -out" in err
    assert not (project / ".customs-batch" / "local" / "state.json").exists()


def test_manifest_errors_stop_the_plan_with_the_findings(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = project / "manifests" / "movements.yaml"
    path.write_text(path.read_text().replace("action: ISL", "action: XYZ", 1))
    code, _, err = run(capsys, "plan", "--detailed-exitcode")
    assert code == 1
    assert "movements.yaml:" in err and "schema.enum" in err


def test_a_saved_plan_applies_once_and_then_is_stale(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "plan", "-out", "release.plan")
    assert code == 0 and "Saved the plan to release.plan" in out
    saved = (project / "release.plan").read_text()
    assert "sandbox-key" not in saved
    # The saved plan names the manifests it was made from (a plan not saved skips the work).
    documents = load_inputs([project / "manifests"]).documents
    keyed = digest_documents(documents, Sealer(lambda: "sandbox-key"), "")
    assert json.loads(saved)["inputsDigest"] == keyed != digest_documents(documents)
    code, _, err = run(capsys, "apply", "release.plan")
    assert code == 0, err
    code, _, err = run(capsys, "apply", "release.plan")
    assert code == 3
    assert "stale" in err and "plan -out" in err


def test_a_saved_plan_whose_manifests_changed_since_is_refused(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A departure corrected after the plan was saved (here through its template) must not
    # be declared as the plan says: customs cannot be told the correction afterwards.
    code, out, _ = run(capsys, "plan", "-out", "release.plan")
    assert code == 0 and "Saved the plan to release.plan" in out
    template = project / "templates" / "rotterdam-export.yaml.j2"
    as_planned = template.read_text()
    template.write_text(as_planned.replace("loadingLocation: Rotterdam", "loadingLocation: Delft"))
    # In a process of its own: this one keeps the templates it compiled.
    refused = run_alone("apply", "release.plan", cwd=project)
    assert refused.returncode == 3, refused.stderr
    assert "release.plan: the manifests (" in refused.stderr
    assert "changed since the plan was made" in refused.stderr and "plan -out" in refused.stderr
    assert not (project / ".customs-batch" / "local" / "state.json").exists()
    template.write_text(as_planned)
    code, out, err = run(capsys, "apply", "release.plan")
    assert code == 0, err
    assert "Apply: 9 succeeded, 0 failed" in out


def test_a_saved_plan_applied_from_another_folder_says_where_to_apply_it(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "customs-batch.yaml").write_text("manifests: [manifests]\n")
    code, _, err = run(capsys, "plan", "-out", "release.plan")
    assert code == 0, err
    monkeypatch.chdir(project / "templates")
    code, _, err = run(capsys, "apply", "../release.plan")
    assert code == 3
    assert "../release.plan: the plan was made from manifests, and manifests is not in this " in err
    assert "from the folder it was made in" in err


def test_a_saved_plan_of_a_part_checks_that_part_of_the_manifests(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = "TransitPartyUpdate/dep-rtm-ham-0001-consignee"
    code, _, err = run(capsys, "plan", "--target", target, "-out", "part.plan")
    assert code == 0, err
    groups = project / "manifests" / "template-groups.yaml"
    groups.write_text(groups.read_text().replace("incoterm: DAP", "incoterm: CPT"))
    code, out, err = run(capsys, "apply", "part.plan")  # a document outside the part
    assert code == 0, err
    assert "Apply: 2 succeeded, 0 failed" in out
    code, _, err = run(capsys, "plan", "--target", target, "-out", "part.plan")
    assert code == 0, err
    updates = project / "manifests" / "party-updates.yaml"
    updates.write_text(updates.read_text().replace("name: dep-rtm-ham-0001-consignee", "name: x"))
    code, _, err = run(capsys, "apply", "part.plan")
    assert code == 3
    assert (
        f"part.plan: the plan was made for a part of the manifests that they no longer hold (--target {target}"
        in err
    )


def _printed_apply(out: str) -> list[str]:
    """The arguments of the apply command ``plan -out`` prints to go on."""
    (line,) = [line for line in out.splitlines() if line.startswith("Saved the plan to")]
    command = shlex.split(line.split("`")[1])
    assert command[:2] == ["customs-batch", "apply"]
    return command[1:]


def test_the_apply_a_saved_plan_prints_names_its_environment_and_runs_as_printed(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "customs-batch.yaml").write_text(
        "environments:\n  remote:\n    base_url: http://127.0.0.1:9\n    api_key_env: RKEY\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(project)
    monkeypatch.setenv("RKEY", "sandbox-key")
    code, out, err = run(capsys, "plan", "--env", "remote", "-out", "my plan")
    assert code == 0, err
    assert _printed_apply(out) == ["apply", "my plan", "--env", "remote"]
    # The default environment needs no --env; one a variable chose does, as a shell that
    # runs the command may not have the variable.
    code, out, err = run(capsys, "plan", "-out", "release.plan")
    assert code == 0, err
    assert _printed_apply(out) == ["apply", "release.plan"]
    monkeypatch.setenv("CUSTOMS_BATCH_ENV", "local")
    code, out, err = run(capsys, "plan", "-out", "release.plan")
    assert code == 0, err
    printed = _printed_apply(out)
    assert printed == ["apply", "release.plan", "--env", "local"]
    monkeypatch.delenv("CUSTOMS_BATCH_ENV")
    code, _, err = run(capsys, *printed)
    assert code == 0, err


def test_changes_update_or_are_refused_and_removed_documents_are_orphaned(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "apply", "--auto-approve")[0] == 0
    groups = project / "manifests" / "template-groups.yaml"
    groups.write_text(groups.read_text().replace("name: EU road imports", "name: EU road"))
    movements = project / "manifests" / "movements.yaml"
    movements.write_text(movements.read_text().replace("quantity: 4", "quantity: 5", 1))
    (project / "manifests" / "hawbs.yaml").unlink()

    code, out, _ = run(capsys, "plan", "--format", "json")
    assert code == 1, "a refused change fails the plan, so a pipeline cannot pass it"
    changes = {c["address"]: c for c in json.loads(out)["changes"]}
    assert changes["TemplateGroup/eu-road"]["action"] == "update"
    assert changes["TemplateGroup/eu-road"]["changed"] == ["name"]
    assert changes["TemplateGroup/eu-road"]["values"] == [
        {"path": "name", "old": "EU road imports", "new": "EU road"}
    ]
    assert changes["Movement/mov-a1-storage-in"]["action"] == "refused"
    assert changes["Movement/mov-a1-storage-in"]["values"] == [
        {"path": "quantity", "old": 4, "new": 5}
    ]
    assert "immutable" in changes["Movement/mov-a1-storage-in"]["reason"]
    assert changes["HawbDeactivation/hawb-a3-duplicate"]["action"] == "orphaned"

    code, out, err = run(capsys, "apply", "--auto-approve")
    assert code == 1
    assert "done     TemplateGroup/eu-road" in out
    assert "Movement/mov-a1-storage-in" in err and "immutable" in err

    code, out, _ = run(capsys, "state", "rm", "HawbDeactivation/hawb-a3-duplicate")
    assert code == 0
    # A tombstone keeps what it declared; it is no longer orphaned, and plan is silent on it.
    assert "HawbDeactivation/hawb-a3-duplicate  forgotten" in run(capsys, "state", "list")[1]
    assert "hawb-a3-duplicate" not in run(capsys, "plan")[1]
    # The service still holds the HAWB deactivated (its list with the inactive ones reads
    # it): the deactivation stands, so --gone removes nothing.
    code, out, err = run(capsys, "state", "rm", "--gone", "HawbDeactivation/hawb-a3-duplicate")
    assert code == 3
    assert "which holds hawbId hawb_a3 (inactive)" in err and "Nothing was removed" in err
    assert "HawbDeactivation/hawb-a3-duplicate  forgotten" in run(capsys, "state", "list")[1]


def test_json_events_are_a_versioned_stream(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(
        capsys, "apply", "--auto-approve", "--format", "json", "--target", "Movement/mov-a1-arrival"
    )
    assert code == 0
    events = [json.loads(line) for line in out.splitlines()]
    assert {e["formatVersion"] for e in events} == {2}
    assert [e["type"] for e in events] == ["plan", "start", "outcome", "progress", "summary"]
    assert events[2]["address"] == "Movement/mov-a1-arrival"
    assert events[2]["outputs"]["movementId"].startswith("mov_")
    assert events[4]["succeeded"] == 1 and events[4]["ok"] is True


def test_json_outcomes_give_the_state_the_service_answered(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A departure submitted (answered processing) and its party update: remoteStatus was
    null where the README says an outcome gives the state the service answered."""
    code, out, err = run(
        capsys,
        "apply",
        "--auto-approve",
        "--format",
        "json",
        "--target",
        "TransitPartyUpdate/dep-rtm-ham-0001-consignee",
    )
    assert code == 0, err
    outcomes = [e for e in map(json.loads, out.splitlines()) if e["type"] == "outcome"]
    assert [(e["address"], e["remoteStatus"]) for e in outcomes] == [
        ("DepartureDeclaration/dep-rtm-ham-0001", "processing"),
        ("TransitPartyUpdate/dep-rtm-ham-0001-consignee", "processing"),
    ]


def test_target_and_labels_select_a_part_with_its_dependencies(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(
        capsys,
        "plan",
        "--format",
        "json",
        "--target",
        "TransitPartyUpdate/dep-rtm-ham-0001-consignee",
    )
    assert code == 0
    assert [c["address"] for c in json.loads(out)["changes"]] == [
        "DepartureDeclaration/dep-rtm-ham-0001",
        "TransitPartyUpdate/dep-rtm-ham-0001-consignee",
    ]
    code, _, err = run(capsys, "plan", "--target", "Movement/nope")
    assert code == 64 and "no such document" in err
    code, _, err = run(capsys, "plan", "-l", "lane in rtm-ham")
    assert code == 64 and "is not a label selector" in err


def test_an_unknown_departure_outcome_needs_a_decision_then_adopt(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "apply", "--auto-approve")[0] == 0
    address = "DepartureDeclaration/dep-rtm-ant-0002"
    with backend(project).open("test") as session:
        record = session.state.resources[address]
        declaration_id = record.outputs["declarationId"]
        session.record(record.with_changes(status=RecordStatus.PENDING, outputs={}))

    code, out, _ = run(capsys, "plan")
    assert "? needs decision " + address in out
    assert "no idempotency" in out and "state adopt" in out
    assert run(capsys, "status")[1].count("needs-decision") == 1

    code, _, err = run(capsys, "state", "forget", "Movement/mov-a1-arrival")
    assert code == 3 and "state rm" in err
    code, out, err = run(capsys, "state", "adopt", address, str(declaration_id))
    assert code == 0, err
    assert f"declarationId={declaration_id}" in out
    code, out, _ = run(capsys, "plan", "--detailed-exitcode")
    assert code == 0, out

    code, out, _ = run(capsys, "state", "show", address)
    shown = json.loads(out)
    assert shown["formatVersion"] == 2
    assert shown["resources"][address]["status"] == "applied"
    code, _, err = run(capsys, "state", "adopt", address, "99999")
    assert code == 3 and "already applied" in err


def test_forget_lets_an_unknown_departure_be_sent_again(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        run(capsys, "apply", "--auto-approve", "--target", "DepartureDeclaration/dep-rtm-ant-0002")[
            0
        ]
        == 0
    )
    address = "DepartureDeclaration/dep-rtm-ant-0002"
    with backend(project).open("test") as session:
        record = session.state.resources[address]
        session.record(record.with_changes(status=RecordStatus.PENDING, outputs={}))
    assert run(capsys, "state", "forget", address)[0] == 0
    _, out, _ = run(capsys, "plan", "--target", address)
    assert "+ create         " + address in out


def test_import_takes_over_an_existing_template_group(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "manifests" / "default-group.yaml").write_text(
        "apiVersion: customs-batch/v1\nkind: TemplateGroup\nmetadata: {name: default}\n"
        "spec: {name: Default group, code: DEFAULT, companyId: 1, isDefault: true}\n"
    )
    code, out, err = run(capsys, "import", "TemplateGroup/default", "1")
    assert code == 0, err
    assert "id=1" in out
    code, out, _ = run(capsys, "plan", "--format", "json", "--target", "TemplateGroup/default")
    (change,) = json.loads(out)["changes"]
    assert (change["action"], change["changed"]) == ("update", ["name"])
    code, _, err = run(capsys, "import", "TemplateGroup/default", "1")
    assert code == 3 and "already in the state" in err


def test_refresh_records_the_status_the_service_reports(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The local emulator runs on a clock of the test's, which the test moves on.
    clock = FakeClock(time.time())
    monkeypatch.setattr(sandbox, "create_app", functools.partial(sandbox.create_app, clock=clock))
    assert (
        run(capsys, "apply", "--auto-approve", "--target", "DepartureDeclaration/dep-rtm-ant-0002")[
            0
        ]
        == 0
    )
    assert "processing" in run(capsys, "status")[1]
    code, out, _ = run(capsys, "refresh")
    # The state the answer gave, read for the first time, is no change.
    assert code == 0 and "status processing -> processing" not in out
    clock.advance(2.0)  # the emulator turns a departure ready after two seconds
    code, out, _ = run(capsys, "refresh")
    assert code == 0 and "status processing -> ready" in out
    assert "ready" in run(capsys, "status")[1]


def test_a_held_lock_names_its_holder_and_force_unlock_waits_for_its_end(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import subprocess
    import sys
    import textwrap

    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                """
                import sys, time
                from pathlib import Path
                from customs_batch.state import LocalBackend
                s = LocalBackend(Path(sys.argv[1])).open("apply")
                print(s.lock_info.id, flush=True)
                time.sleep(30)
                """
            ),
            str(project / ".customs-batch" / "local"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        lock_id = holder.stdout.readline().strip()
        code, _, err = run(capsys, "apply", "--auto-approve")
        assert code == 3
        assert f"process {holder.pid}" in err and lock_id in err and f"kill {holder.pid}" in err
        code, _, err = run(capsys, "force-unlock", lock_id)
        assert code == 3 and "held by a running process" in err  # alive: never broken
        holder.kill()
        holder.wait()
        code, out, _ = run(capsys, "force-unlock", lock_id)
        assert code == 0 and "Unlocked" in out and "is no longer running" in out
        assert run(capsys, "apply", "--auto-approve", "--target", "Movement/mov-a1-arrival")[0] == 0
    finally:
        holder.kill()
        holder.wait()
        assert holder.stdout is not None
        holder.stdout.close()


def _on_a_terminal(project: Path, answer: str, *args: str) -> tuple[int, str]:
    """Run apply (with ``args``) on a pseudo-terminal, answer its question, return the exit
    code and screen."""
    import os
    import select
    import subprocess
    import sys
    import time

    primary, secondary = os.openpty()
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "customs_batch", "apply", *args],
            cwd=project,
            stdin=secondary,
            stdout=secondary,
            stderr=secondary,
            env={**os.environ, "COLUMNS": "120", "TERM": "xterm"},
        )
    except BaseException:
        os.close(primary)
        raise
    finally:
        os.close(secondary)
    screen = b""
    answered = False
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            ready, _, _ = select.select([primary], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(primary, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                screen += chunk
            if not answered and b"Apply these changes?" in screen:
                os.write(primary, answer.encode())
                answered = True
            if process.poll() is not None and not ready:
                break
        code = process.wait(timeout=30)
    finally:
        # Whatever happened above (a wait that timed out, a failed read), the child and
        # the terminal end with the test.
        if process.poll() is None:
            process.kill()
            process.wait(timeout=30)
        os.close(primary)
    return code, screen.decode(errors="replace")


def test_on_a_terminal_apply_shows_the_plan_and_asks(project: Path) -> None:
    code, screen = _on_a_terminal(project, "n\r")
    assert code == 1, "a declined apply is not a success a script could take for done"
    assert "+ create" in screen and "Apply cancelled." in screen
    assert not (project / ".customs-batch" / "local" / "state.json").exists()

    code, screen = _on_a_terminal(project, "y\r")
    assert code == 0, screen
    assert "Apply summary" in screen and "succeeded" in screen
    assert "done 9" in screen


def test_on_a_terminal_apply_format_json_asks_too(project: Path) -> None:
    # The JSON event stream's summary says `ended: cancelled` when the question is declined.
    import json

    code, screen = _on_a_terminal(project, "n\r", "--format", "json")
    assert code == 1, screen
    assert "not an interactive terminal" not in screen
    assert "Apply these changes?" in screen
    events = [
        json.loads(line[line.index("{") :]) for line in screen.splitlines() if '"type": ' in line
    ]
    assert [event["type"] for event in events] == ["plan", "summary"], screen
    assert events[-1]["ended"] == "cancelled"
    assert not (project / ".customs-batch" / "local" / "state.json").exists()

    code, screen = _on_a_terminal(project, "y\r", "--format", "json")
    assert code == 0, screen
    assert '"type": "outcome"' in screen and '"ok": true' in screen


def test_plan_says_a_local_rate_limit_holds_per_process(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "plan")
    assert code == 0
    assert "holds per process" not in err  # no rate limit, nothing to share
    (project / "customs-batch.yaml").write_text(
        "default_environment: staging\n"
        "environments:\n  staging:\n    base_url: https://staging.customs.example\n"
        "    api_key_env: STAGING_KEY\n    rate_limit: 100/minute\n",
        encoding="utf-8",
    )
    code, out, err = run(capsys, "plan")
    assert code == 0, err
    assert "the rate limit (100/minute) holds per process" in err
    assert "holds per process" not in out


def test_a_row_refused_at_apply_names_its_spreadsheet_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "manifests").mkdir()
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "moves.csv").write_text(
        "Party,Packages\r\nrpty_p1,3\r\nrpty_nobody,4\r\n", encoding="utf-8"
    )
    (tmp_path / "manifests" / "moves.yaml").write_text(
        "apiVersion: customs-batch/v1\nkind: Movement\n"
        "forEach: {file: ../data/moves.csv}\n"
        'metadata: {name: "move-{{ row_number }}"}\n'
        "spec:\n  shipmentId: shp_7Hk2Lm\n  hawbId: hawb_a1\n  action: ISL\n"
        '  quantity: "{{ row.Packages }}"\n  grossWeightKg: 5.0\n  customsSupervision: Y\n'
        '  goodsHandlingCode: N\n  partyId: "{{ row.Party }}"\n',
        encoding="utf-8",
    )
    code, out, err = run(capsys, "apply", "--auto-approve")
    assert code == 1, out + err
    failed = [line for line in out.splitlines() if line.startswith("FAILED")]
    assert len(failed) == 1, out
    assert "FAILED   Movement/move-3" in failed[0]
    assert failed[0].endswith("data/moves.csv, sheet 'moves', row 3)"), failed[0]


def test_a_terminal_run_that_fails_midway_leaves_no_process_or_terminal_open(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os
    import select
    import subprocess

    started: list[subprocess.Popen[bytes]] = []
    terminals: list[int] = []
    real_popen, real_openpty = subprocess.Popen, os.openpty

    def popen(*args: Any, **kwargs: Any) -> subprocess.Popen[bytes]:
        started.append(real_popen(*args, **kwargs))
        return started[-1]

    def openpty() -> tuple[int, int]:
        primary, secondary = real_openpty()
        terminals.append(primary)
        return primary, secondary

    def broken_select(*args: Any) -> Any:
        raise RuntimeError("the terminal broke")

    monkeypatch.setattr(subprocess, "Popen", popen)
    monkeypatch.setattr(os, "openpty", openpty)
    monkeypatch.setattr(select, "select", broken_select)
    with pytest.raises(RuntimeError, match="the terminal broke"):
        _on_a_terminal(project, "n\r")
    [process] = started
    assert process.returncode is not None, "the child is still running"
    [primary] = terminals
    with pytest.raises(OSError):
        os.fstat(primary)


def test_on_a_terminal_the_end_of_input_declines(project: Path) -> None:
    # Ctrl-D at the question is an answer, not an interruption: "Apply cancelled.", exit 1.
    code, screen = _on_a_terminal(project, "\x04")
    assert code == 1, screen
    assert "Apply cancelled." in screen and "Aborted" not in screen
    assert not (project / ".customs-batch" / "local" / "state.json").exists()


def test_json_progress_counts_what_was_skipped_as_skipped(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "apply", "--auto-approve")[0] == 0
    movements = project / "manifests" / "movements.yaml"
    text = movements.read_text(encoding="utf-8")
    assert "quantity: 10" in text
    movements.write_text(text.replace("quantity: 10", "quantity: 11", 1), encoding="utf-8")
    code, out, _ = run(capsys, "apply", "--auto-approve", "--format", "json")
    assert code == 1  # a movement cannot change: refused, not sent
    events = [json.loads(line) for line in out.splitlines()]
    outcomes = [e for e in events if e["type"] == "outcome"]
    assert outcomes and {e["status"] for e in outcomes} == {"skipped"}
    last = [e for e in events if e["type"] == "progress"][-1]
    assert (last["failed"], last["skipped"]) == (0, len(outcomes))
    summary = events[-1]
    assert summary["type"] == "summary" and summary["failed"] == 0
    assert summary["skipped"] == len(outcomes)
