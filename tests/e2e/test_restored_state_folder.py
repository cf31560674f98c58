"""A state folder put back whole to an older copy (its history with it), or emptied: the
runs after that copy created objects it holds no trace of. plan and apply refuse it, from
the mark this project keeps of the newest state it saw in the folder (outside the folder,
in the load cache's), until --allow-empty-state takes it as it is."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from customs_batch.state import LocalBackend, RecordStatus
from tests.e2e.conftest import Project, Sandbox

pytestmark = pytest.mark.e2e

GROUP = """\
apiVersion: customs-batch/v1
kind: TemplateGroup
metadata:
  name: {name}
spec:
  name: Group {name}
  code: {code}
  companyId: 1
  DeclarationTemplates:
    - procedureType: H1
      declarationOffice: NL000396
      countryOfDestination: NL
"""


def _codes(server: Sandbox) -> list[str]:
    listed = server.get("/v1/declaration-templates/groups", itemsPerPage=100)
    return sorted(str(group["code"]) for group in listed["result"])


def test_a_state_folder_put_back_whole_to_an_older_copy_is_refused(
    tmp_path: Path, project: Project
) -> None:
    project.write("manifests/first.yaml", GROUP.format(name="first", code="FIRST"))
    done = project.run("apply", "--auto-approve")
    assert done.returncode == 0, done.stdout + done.stderr
    older = tmp_path / "older-copy"
    shutil.copytree(project.state_dir, older)  # state, history and environment file

    project.write("manifests/second.yaml", GROUP.format(name="second", code="SECOND"))
    done = project.run("apply", "--auto-approve")
    assert done.returncode == 0, done.stdout + done.stderr
    created = _codes(project.sandbox)
    assert created.count("SECOND") == 1

    shutil.rmtree(project.state_dir)
    shutil.copytree(older, project.state_dir)
    # (--no-cache too: the mark is a check, not a cached result.)
    for command in (("plan",), ("plan", "--no-cache"), ("apply", "--auto-approve")):
        refused = project.run(*command)
        assert refused.returncode == 3, refused.stdout + refused.stderr
        assert "has serial 1, but on " in refused.stderr
        assert "this project read serial 2 of the same state here, with 2 record(s)" in (
            refused.stderr
        )
        assert "put back the newest copy of" in refused.stderr
        assert "`customs-batch get transit` and `customs-batch get template-groups`" in (
            refused.stderr
        )
        assert "--allow-empty-state" in refused.stderr
    assert _codes(project.sandbox) == created, "nothing was sent"

    # The newest copy put back: planned as before.
    shutil.rmtree(project.state_dir)
    shutil.copytree(older, project.state_dir)
    done = project.run("plan", "--allow-empty-state")  # taken as it is: the mark follows
    assert done.returncode == 0, done.stdout + done.stderr
    assert "create" in done.stdout and "TemplateGroup/second" in done.stdout
    again = project.run("plan")
    assert again.returncode == 0, again.stdout + again.stderr


def test_a_state_folder_emptied_is_refused(project: Project) -> None:
    project.write("manifests/first.yaml", GROUP.format(name="first", code="FIRST"))
    done = project.run("apply", "--auto-approve")
    assert done.returncode == 0, done.stdout + done.stderr
    created = _codes(project.sandbox)

    shutil.rmtree(project.state_dir)
    refused = project.run("apply", "--auto-approve")
    assert refused.returncode == 3, refused.stdout + refused.stderr
    assert "holds no state, but on " in refused.stderr
    assert "serial 1 of the same state here, with 1 record(s)" in refused.stderr
    assert _codes(project.sandbox) == created, "nothing was sent"
    assert not (project.state_dir / "state.json").exists()
    for named in ("transit", "template-groups"):  # the commands the hint names exist
        listed = project.run("get", named, "--format", "json")
        assert listed.returncode == 0, listed.stderr


def test_the_newest_state_goes_on_and_a_new_state_starts(project: Project) -> None:
    # Nothing is refused along the ordinary way: first run, further runs, the cache deleted.
    project.write("manifests/first.yaml", GROUP.format(name="first", code="FIRST"))
    for _ in range(2):
        done = project.run("apply", "--auto-approve")
        assert done.returncode == 0, done.stdout + done.stderr
    shutil.rmtree(project.root / ".customs-batch" / "cache")
    project.write("manifests/second.yaml", GROUP.format(name="second", code="SECOND"))
    done = project.run("apply", "--auto-approve")
    assert done.returncode == 0, done.stdout + done.stderr
    assert _codes(project.sandbox).count("SECOND") == 1


def test_a_state_file_of_another_project_is_refused(tmp_path: Path, project: Project) -> None:
    project.write("manifests/first.yaml", GROUP.format(name="first", code="FIRST"))
    done = project.run("apply", "--auto-approve")
    assert done.returncode == 0, done.stdout + done.stderr
    other = Project(tmp_path / "other", project.sandbox)
    other.write("manifests/theirs.yaml", GROUP.format(name="theirs", code="THEIRS"))
    done = other.run("apply", "--auto-approve")
    assert done.returncode == 0, done.stdout + done.stderr
    created = _codes(project.sandbox)

    shutil.copy(other.state_dir / "state.json", project.state_dir / "state.json")
    refused = project.run("apply", "--auto-approve")
    assert refused.returncode == 3, refused.stdout + refused.stderr
    assert "is another state (lineage" in refused.stderr
    assert "the state file was replaced by another" in refused.stderr
    assert _codes(project.sandbox) == created, "nothing was sent"


def test_an_older_copy_pushed_with_force_is_refused(tmp_path: Path, project: Project) -> None:
    # --force gives the pushed copy a new serial, past every later check: the push itself
    # compares it with the history and the mark.
    project.write("manifests/first.yaml", GROUP.format(name="first", code="FIRST"))
    done = project.run("apply", "--auto-approve")
    assert done.returncode == 0, done.stdout + done.stderr
    older = project.run("state", "pull")
    (tmp_path / "older.json").write_text(older.stdout, encoding="utf-8")
    project.write("manifests/second.yaml", GROUP.format(name="second", code="SECOND"))
    done = project.run("apply", "--auto-approve")
    assert done.returncode == 0, done.stdout + done.stderr
    state = (project.state_dir / "state.json").read_bytes()

    refused = project.run("state", "push", str(tmp_path / "older.json"), "--force")
    assert refused.returncode == 3, refused.stdout + refused.stderr
    assert "the pushed state is older than this environment's" in refused.stderr
    assert "TemplateGroup/second" in refused.stderr  # named from the history
    assert (project.state_dir / "state.json").read_bytes() == state
    planned = project.run("plan")
    assert planned.returncode == 0 and "No changes" in planned.stdout


def test_an_environment_renamed_without_its_state_folder_is_refused(project: Project) -> None:
    # `e2e` renamed `e2e-renamed` in customs-batch.yaml: its state stays in
    # .customs-batch/e2e, and the new name's empty folder would declare everything again.
    project.write("manifests/first.yaml", GROUP.format(name="first", code="FIRST"))
    done = project.run("apply", "--auto-approve")
    assert done.returncode == 0, done.stdout + done.stderr
    created = _codes(project.sandbox)
    config = yaml.safe_load((project.root / "customs-batch.yaml").read_text())
    config["environments"] = {"e2e-renamed": config["environments"]["e2e"]}
    config["default_environment"] = "e2e-renamed"
    (project.root / "customs-batch.yaml").write_text(yaml.safe_dump(config))
    for command in (("plan",), ("apply", "--auto-approve")):
        refused = project.run(*command)
        assert refused.returncode == 3, refused.stdout + refused.stderr
        assert "holds the state of environment 'e2e' at the same service" in refused.stderr
        assert "move its folder and the file that names 'e2e': `mv " in refused.stderr
    assert _codes(project.sandbox) == created, "nothing was sent"
    renamed = project.root / ".customs-batch" / "e2e-renamed"
    (project.root / ".customs-batch" / "e2e").rename(renamed)  # as the hint says
    (renamed / "environment").unlink()
    moved = project.run("plan")
    assert moved.returncode == 0 and "No changes" in moved.stdout, moved.stdout + moved.stderr


def test_a_refresh_of_an_older_copy_does_not_lift_the_refusal(
    tmp_path: Path, project: Project
) -> None:
    # refresh (or state rm) writes the older copy, and its serial catches up with the
    # newest: it still lacks what that one had.
    project.write("manifests/first.yaml", GROUP.format(name="first", code="FIRST"))
    assert project.run("apply", "--auto-approve").returncode == 0
    older = tmp_path / "older-copy"
    shutil.copytree(project.state_dir, older)
    project.write("manifests/second.yaml", GROUP.format(name="second", code="SECOND"))
    assert project.run("apply", "--auto-approve").returncode == 0
    created = _codes(project.sandbox)
    shutil.rmtree(project.state_dir)
    shutil.copytree(older, project.state_dir)
    project.run("refresh")
    removed = project.run("state", "rm", "TemplateGroup/first")  # a write: serial 1 -> 2
    assert removed.returncode == 0, removed.stdout + removed.stderr
    refused = project.run("apply", "--auto-approve")
    assert refused.returncode == 3, refused.stdout + refused.stderr
    assert "was written by a command (refresh, state rm, import...) while it was older" in (
        refused.stderr
    )
    assert _codes(project.sandbox) == created, "nothing was sent"


def test_the_newest_copy_put_back_after_a_write_of_an_older_one_is_planned_from(
    tmp_path: Path, project: Project
) -> None:
    # A refresh or state rm of an older copy raises its serial to the newest's. The refusal's
    # hint says to put the newest copy back: once it is, plan and apply go on from it (no
    # --allow-empty-state needed), and the older copy so written stays refused.
    project.write("manifests/first.yaml", GROUP.format(name="first", code="FIRST"))
    assert project.run("apply", "--auto-approve").returncode == 0
    older = tmp_path / "older-copy"
    shutil.copytree(project.state_dir, older)
    project.write("manifests/second.yaml", GROUP.format(name="second", code="SECOND"))
    assert project.run("apply", "--auto-approve").returncode == 0
    newest = tmp_path / "newest-copy"
    shutil.copytree(project.state_dir, newest)
    created = _codes(project.sandbox)
    shutil.rmtree(project.state_dir)
    shutil.copytree(older, project.state_dir)
    removed = project.run("state", "rm", "TemplateGroup/first")  # serial 1 -> 2, the newest's
    assert removed.returncode == 0, removed.stdout + removed.stderr
    assert project.run("plan").returncode == 3
    forked = tmp_path / "written-older-copy"
    shutil.copytree(project.state_dir, forked)
    shutil.rmtree(project.state_dir)
    shutil.copytree(newest, project.state_dir)  # as the hint says
    planned = project.run("plan", "--detailed-exitcode")
    assert planned.returncode == 0, planned.stdout + planned.stderr
    assert "No changes" in planned.stdout
    shutil.rmtree(project.state_dir)
    shutil.copytree(forked, project.state_dir)
    again = project.run("apply", "--auto-approve")
    assert again.returncode == 3, again.stdout + again.stderr
    assert _codes(project.sandbox) == created, "nothing was sent"


def test_one_import_into_an_emptied_folder_does_not_lift_the_refusal(
    project: Project,
) -> None:
    project.write("manifests/first.yaml", GROUP.format(name="first", code="FIRST"))
    project.write("manifests/second.yaml", GROUP.format(name="second", code="SECOND"))
    assert project.run("apply", "--auto-approve").returncode == 0
    groups = {
        g["code"]: g["id"]
        for g in project.sandbox.get("/v1/declaration-templates/groups")["result"]
    }
    created = _codes(project.sandbox)
    shutil.rmtree(project.state_dir)
    imported = project.run("import", "TemplateGroup/first", str(groups["FIRST"]))
    assert imported.returncode == 0, imported.stdout + imported.stderr
    refused = project.run("apply", "--auto-approve")
    assert refused.returncode == 3, refused.stdout + refused.stderr
    assert _codes(project.sandbox) == created, "nothing was sent"
    # Everything imported, then taken as it is: nothing to send.
    project.run("import", "TemplateGroup/second", str(groups["SECOND"]))
    done = project.run("plan", "--allow-empty-state")
    assert done.returncode == 0 and "Plan: 0 to create" in done.stdout, done.stdout + done.stderr
    assert project.run("plan").returncode == 0


def test_an_older_copy_caught_up_by_one_adopt_is_still_refused(
    tmp_path: Path, project: Project
) -> None:
    # The older copy holds an attempt whose outcome is unknown; adopting it raises the
    # copy's serial to the mark's, but the record of what the later run created is still
    # missing, and the next apply would have declared it again.
    project.write("manifests/first.yaml", GROUP.format(name="first", code="FIRST"))
    assert project.run("apply", "--auto-approve").returncode == 0
    (first_id,) = [
        g["id"]
        for g in project.sandbox.get("/v1/declaration-templates/groups")["result"]
        if g["code"] == "FIRST"
    ]
    with LocalBackend(project.state_dir).open("test") as session:  # its answer lost
        record = session.state.resources["TemplateGroup/first"]
        session.record(record.with_changes(status=RecordStatus.UNKNOWN, outputs={}))
    older = tmp_path / "older-copy"
    shutil.copytree(project.state_dir, older)
    project.write("manifests/second.yaml", GROUP.format(name="second", code="SECOND"))
    assert project.run("apply", "--auto-approve").returncode == 0  # serial 3, 2 records

    shutil.rmtree(project.state_dir)
    shutil.copytree(older, project.state_dir)
    adopted = project.run("state", "adopt", "TemplateGroup/first", str(first_id))
    assert adopted.returncode == 0, adopted.stdout + adopted.stderr
    for command in (("plan",), ("apply", "--auto-approve")):
        refused = project.run(*command)
        assert refused.returncode == 3, refused.stdout + refused.stderr
        assert "was caught up from an older copy with `customs-batch import` or `state " in (
            refused.stderr
        )
        assert "holds 1 of the 2 record(s) this project saw here at serial 3" in refused.stderr
    # The missing record imported: caught up.
    (second_id,) = [
        g["id"]
        for g in project.sandbox.get("/v1/declaration-templates/groups")["result"]
        if g["code"] == "SECOND"
    ]
    imported = project.run("import", "TemplateGroup/second", str(second_id))
    assert imported.returncode == 0, imported.stdout + imported.stderr
    done = project.run("plan")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Plan: 0 to create" in done.stdout


def test_a_state_pushed_with_force_is_the_one_the_mark_takes(
    tmp_path: Path, project: Project
) -> None:
    # state push --force of another state replaces this one on purpose: plan takes it, as
    # the mark does (a state.json copied in by hand is refused: see above).
    project.write("manifests/first.yaml", GROUP.format(name="first", code="FIRST"))
    assert project.run("apply", "--auto-approve").returncode == 0
    other = Project(tmp_path / "other", project.sandbox)
    other.write("manifests/mine.yaml", GROUP.format(name="mine", code="MINE"))
    assert other.run("apply", "--auto-approve").returncode == 0
    pulled = other.run("state", "pull")  # another lineage
    assert pulled.returncode == 0, pulled.stderr
    (tmp_path / "other.json").write_text(pulled.stdout, encoding="utf-8")
    pushed = project.run("state", "push", str(tmp_path / "other.json"), "--force")
    assert pushed.returncode == 0, pushed.stdout + pushed.stderr
    planned = project.run("plan")
    assert "is another state" not in planned.stderr, planned.stderr
    assert "the state was pushed here" in planned.stderr  # read back before any send


def test_an_older_copy_in_the_project_checked_out_elsewhere_is_refused(
    tmp_path: Path, project: Project
) -> None:
    """A CI workspace of another name (``job@2``), or a restore into a new folder: the
    project comes with its load cache, whose mark of the folder is found by the folder's
    path. The newest serial of the state is kept by its lineage too: the older copy is
    refused there, the newest copy goes on wherever it is."""
    project.write("manifests/first.yaml", GROUP.format(name="first", code="FIRST"))
    done = project.run("apply", "--auto-approve")
    assert done.returncode == 0, done.stdout + done.stderr
    older = tmp_path / "older-copy"
    shutil.copytree(project.state_dir, older)
    project.write("manifests/second.yaml", GROUP.format(name="second", code="SECOND"))
    done = project.run("apply", "--auto-approve")
    assert done.returncode == 0, done.stdout + done.stderr
    created = _codes(project.sandbox)
    assert created.count("SECOND") == 1

    shutil.copytree(project.root, tmp_path / "job@2")
    elsewhere = Project(tmp_path / "job@2", project.sandbox)
    shutil.rmtree(elsewhere.state_dir)
    shutil.copytree(older, elsewhere.state_dir)
    for command in (("plan",), ("apply", "--auto-approve")):
        refused = elsewhere.run(*command)
        assert refused.returncode == 3, refused.stdout + refused.stderr
        assert "has serial 1, but on " in refused.stderr
        assert f"read serial 2 of the same state in {project.state_dir}, with 2" in (refused.stderr)
        assert "use the newer copy of this state" in refused.stderr
    assert _codes(project.sandbox) == created, "nothing was sent"

    again = project.run("plan")
    assert again.returncode == 0, again.stdout + again.stderr
    shutil.rmtree(elsewhere.state_dir)
    shutil.copytree(project.state_dir, elsewhere.state_dir)
    moved_on = elsewhere.run("plan")
    assert moved_on.returncode == 0, moved_on.stdout + moved_on.stderr
    assert "0 to create" in moved_on.stdout
