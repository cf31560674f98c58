"""A tombstone whose object another environment of the same service took over is not tracked
again by plan or apply (a document renamed from it, or asking the same request under a new
name): both environments would write that one object. Nor is an object that two states
record (one copied from the other) written by either."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from customs_batch.state import LocalBackend, RecordStatus
from tests.cli.conftest import run

SERVICE = "http://customs.shared.test"
GROUP = "TemplateGroup/default"
RENAMED = "TemplateGroup/renamed"
SPEC = {
    "name": "Default",
    "code": "DEFAULT",
    "companyId": 1,
    "DeclarationTemplates": [{"procedureType": "H1", "declarationOffice": "NL000396"}],
}
"""The seeded template group 1."""


def _document(metadata: dict[str, Any], spec: dict[str, Any] = SPEC) -> str:
    return json.dumps(
        {
            "apiVersion": "customs-batch/v1",
            "kind": "TemplateGroup",
            "metadata": metadata,
            "spec": spec,
        }
    )


@pytest.fixture
def two_environments(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, LocalBackend]:
    """Environments nl and de of one service (an emulator in-process, its data in one
    file), each with a state of its own, and the template group GROUP as their document."""
    import customs_batch.backends
    from customs_batch.client import CustomsClient
    from customs_batch.environments import Environment
    from customs_batch.environments._connect import connect as connect_environment
    from customs_batch.sandbox import InProcessTransport, create_app

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CB_KEY", "sandbox-key")
    settings = f"{{base_url: {SERVICE}, api_key_env: CB_KEY}}"
    (tmp_path / "customs-batch.yaml").write_text(
        f"manifests: [manifests]\nenvironments:\n  nl: {settings}\n  de: {settings}\n"
    )
    (tmp_path / "manifests").mkdir()
    (tmp_path / "manifests" / "group.yaml").write_text(_document({"name": "default"}))
    service = tmp_path / "service.sqlite3"

    def connect(environment: Environment, **_: Any) -> CustomsClient:
        app = create_app(db_path=service, rate_limit=None)
        return connect_environment(environment, transport=InProcessTransport(app))

    monkeypatch.setattr(customs_batch.backends, "connect", connect)
    return {env: LocalBackend(tmp_path / ".customs-batch" / env) for env in ("nl", "de")}


def _ok(capsys: pytest.CaptureFixture[str], *argv: str) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 0, out + err


def _taken_over(capsys: pytest.CaptureFixture[str], *, applied: bool = False) -> None:
    """nl imported template group 1 as GROUP (and applied its document, if ``applied``),
    then let it go (`state rm`: a tombstone, as import's refusal in de says); de imported it."""
    _ok(capsys, "import", GROUP, "1", "--env", "nl", "manifests")
    if applied:
        _ok(capsys, "apply", "--env", "nl", "--auto-approve", "manifests")
    _ok(capsys, "state", "rm", GROUP, "--env", "nl")
    _ok(capsys, "import", GROUP, "1", "--env", "de", "manifests", "--allow-empty-state")


def _refused_by_plan_and_apply(
    capsys: pytest.CaptureFixture[str], nl: LocalBackend, de: LocalBackend
) -> None:
    """plan and apply in nl both refuse RENAMED's take-over of GROUP's tombstone, exit 1,
    with the same words; nothing is sent, and both states stay as they were."""
    before = {env: dict(b.read().resources) for env, b in (("nl", nl), ("de", de))}
    said = []
    for argv in (
        ("plan", "--env", "nl", "manifests"),
        ("apply", "--env", "nl", "--auto-approve", "manifests"),
    ):
        code, out, err = run(capsys, *argv)
        assert code == 1, out + err
        (line,) = [
            line.strip() for line in out.splitlines() if RENAMED in line and "refused" in line
        ]
        reason = out[out.index(line) + len(line) :].strip().splitlines()[0]
        assert f"take over the tombstone of {GROUP}" in reason
        assert f"1 is recorded as {GROUP} in the state of environment 'de'" in reason
        assert "two environments would write one object" in reason
        assert f"`customs-batch state rm {GROUP} --env de`" in reason
        said.append(reason)
    assert said[0] == said[1]
    assert nl.read().resources[GROUP].status is RecordStatus.FORGOTTEN
    assert RENAMED not in nl.read().resources
    after = {env: dict(b.read().resources) for env, b in (("nl", nl), ("de", de))}
    assert after == before


def test_a_rename_from_a_tombstone_another_environment_took_over_is_refused(
    two_environments: dict[str, LocalBackend], capsys: pytest.CaptureFixture[str]
) -> None:
    # Renamed with metadata.previousNames: plan had said "~ update ... it is tracked again"
    # and apply moved the record and sent its values to group 1, which de manages.
    _taken_over(capsys)
    Path("manifests/group.yaml").write_text(
        _document({"name": "renamed", "previousNames": ["default"]})
    )
    _refused_by_plan_and_apply(capsys, two_environments["nl"], two_environments["de"])


def test_the_same_request_as_a_tombstone_another_environment_took_over_is_refused(
    two_environments: dict[str, LocalBackend], capsys: pytest.CaptureFixture[str]
) -> None:
    # The same request under a new name: the plan moved the tombstone (applied before it
    # was forgotten) to it, tracking it again in nl while de holds group 1.
    _taken_over(capsys, applied=True)
    Path("manifests/group.yaml").write_text(_document({"name": "renamed"}))
    _refused_by_plan_and_apply(capsys, two_environments["nl"], two_environments["de"])


def test_an_object_two_states_record_is_written_by_neither(
    two_environments: dict[str, LocalBackend], capsys: pytest.CaptureFixture[str]
) -> None:
    # nl's state folder copied to de and its file `environment` removed (what the refusal
    # of the copy says to do for an environment renamed, though nl still was one): both
    # states recorded group 1, plan and apply in each went on as usual, and each apply sent
    # its own document's change to the one group.
    _ok(capsys, "import", GROUP, "1", "--env", "nl", "manifests")
    _ok(capsys, "apply", "--env", "nl", "--auto-approve", "manifests")
    shutil.copytree(".customs-batch/nl", ".customs-batch/de")
    Path(".customs-batch/de/environment").unlink()
    Path("manifests/group.yaml").write_text(
        _document({"name": "default"}, {**SPEC, "name": "Renamed"})
    )
    for env, other in (("de", "nl"), ("nl", "de")):
        for argv in (("plan",), ("apply", "--auto-approve")):
            code, out, err = run(capsys, *argv, "--env", env, "manifests")
            assert code == 1, out + err
            assert (
                f"1, which {GROUP} records here, is also recorded as {GROUP} in the state "
                f"of environment '{other}'"
            ) in out
            assert f"`customs-batch state rm {GROUP} --env {env}` here" in out
    code, out, err = run(capsys, "get", "template-groups", "--env", "nl", "--format", "json")
    assert code == 0 and "Renamed" not in out, out + err  # nothing sent
    # The way out, followed: de lets it go (a tombstone), and nl writes it.
    _ok(capsys, "state", "rm", GROUP, "--env", "de")
    _ok(capsys, "apply", "--env", "nl", "--auto-approve", "manifests")
    code, out, err = run(capsys, "get", "template-groups", "--env", "nl", "--format", "json")
    assert code == 0 and "Renamed" in out, out + err
