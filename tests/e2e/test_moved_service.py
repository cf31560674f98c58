"""An environment whose base_url now names another service than the one its state was
written for: the records' IDs there are other objects (or none). apply reads some of them
back first and sends nothing unless the new service holds them as recorded; the same
service at a new address (an emulator restarted on another port) is taken, and the state
folder names it from then on."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import Project, Sandbox

pytestmark = pytest.mark.e2e

GROUP = """\
apiVersion: customs-batch/v1
kind: TemplateGroup
metadata:
  name: my-group
spec:
  name: {name}
  code: MY-ROAD
  companyId: 1
  DeclarationTemplates:
    - procedureType: H1
      declarationOffice: NL000396
      countryOfDestination: NL
"""


def groups(server: Sandbox) -> list[dict[str, object]]:
    listed: list[dict[str, object]] = server.get("/v1/declaration-templates/groups")["result"]
    return listed


def another_service(tmp_path: Path) -> Sandbox:
    """A second emulator, started, where group 2 (the ID the project's group gets at the
    first) is another team's group: stop it when done."""
    (tmp_path / "other").mkdir()
    other = Sandbox(tmp_path / "other")
    other.start()
    try:
        other.client.post(
            "/v1/declaration-templates/groups",
            json={"name": "Someone else's group", "code": "OTHER", "companyId": 1},
        ).raise_for_status()
    except BaseException:
        other.stop()
        raise
    return other


def test_an_environment_pointed_at_another_service_sends_nothing_there(
    tmp_path: Path, project: Project
) -> None:
    first = project.sandbox
    project.write("manifests/group.yaml", GROUP.format(name="My road imports"))
    done = project.run("apply", "--auto-approve")
    assert done.returncode == 0, done.stdout + done.stderr
    (mine,) = [g for g in groups(first) if g["code"] == "MY-ROAD"]
    environment_file = project.state_dir / "environment"
    assert environment_file.read_text() == f"e2e\nservice {first.url}\n"

    # Another service, where the same ID is another team's group.
    other = another_service(tmp_path)
    try:
        theirs = [g for g in groups(other) if g["id"] == mine["id"]]
        assert theirs and theirs[0]["code"] == "OTHER"
        before = groups(other)
        project.sandbox = other
        project.write_config()
        project.write("manifests/group.yaml", GROUP.format(name="My road imports (EU)"))

        planned = project.run("plan")
        assert f"the state was written for the service at {first.url}" in planned.stderr
        assert "sends nothing unless this service holds them as recorded" in planned.stderr
        for command in (("apply", "--auto-approve"), ("refresh",)):
            refused = project.run(*command)
            assert refused.returncode == 3, refused.stdout + refused.stderr
            assert f"holds the state of environment 'e2e' at {first.url}" in refused.stderr
            assert f"now at {other.url}, which does not hold its records" in refused.stderr
            assert "TemplateGroup/my-group is recorded as" in refused.stderr
        assert groups(other) == before, "nothing was sent to the other service"
        assert environment_file.read_text() == f"e2e\nservice {first.url}\n"
    finally:
        other.stop()

    # The first service again, at a new address: it holds the records, so it is taken.
    first.start()
    project.sandbox = first
    project.write_config()
    done = project.run("apply", "--auto-approve")
    assert done.returncode == 0, done.stdout + done.stderr
    assert environment_file.read_text() == f"e2e\nservice {first.url}\n"
    (updated,) = [g for g in groups(first) if g["code"] == "MY-ROAD"]
    assert (updated["id"], updated["name"]) == (mine["id"], "My road imports (EU)")


def test_a_state_pushed_from_another_service_is_read_back_before_anything_is_sent(
    tmp_path: Path, project: Project
) -> None:
    # `state pull` in one project, `state push` into an environment at another service: the
    # records' IDs there are other objects. The push names no service in the folder, so
    # the next apply reads records back first, and sends nothing where they are not.
    first = project.sandbox
    project.write("manifests/group.yaml", GROUP.format(name="My road imports"))
    done = project.run("apply", "--auto-approve")
    assert done.returncode == 0, done.stdout + done.stderr
    pulled = project.run("state", "pull")
    assert pulled.returncode == 0, pulled.stderr
    (tmp_path / "pulled.json").write_text(pulled.stdout, encoding="utf-8")

    other = another_service(tmp_path)
    try:
        before = groups(other)
        second = Project(tmp_path / "second", other)
        second.write("manifests/group.yaml", GROUP.format(name="My road imports (EU)"))
        pushed = second.run("state", "push", str(tmp_path / "pulled.json"))
        assert pushed.returncode == 0, pushed.stdout + pushed.stderr
        planned = second.run("plan")
        assert "the state was pushed here" in planned.stderr
        refused = second.run("apply", "--auto-approve")
        assert refused.returncode == 3, refused.stdout + refused.stderr
        assert "does not hold its records" in refused.stderr
        assert groups(other) == before, "nothing was sent to the other service"
    finally:
        other.stop()

    # Pushed back where it came from: the service holds the records, and apply goes on.
    again = project.run("state", "push", str(tmp_path / "pulled.json"))
    assert again.returncode == 0, again.stdout + again.stderr
    project.write("manifests/group.yaml", GROUP.format(name="My road imports (EU)"))
    done = project.run("apply", "--auto-approve")
    assert done.returncode == 0, done.stdout + done.stderr
    (group,) = [g for g in groups(first) if g["code"] == "MY-ROAD"]
    assert group["name"] == "My road imports (EU)"
    assert (project.state_dir / "environment").read_text() == f"e2e\nservice {first.url}\n"
