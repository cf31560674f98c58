"""The API key appears in no artefact: not in what plan, apply, state and refresh print with
--verbose, nor in the state, its backup or a plan file. (The journal and the lock note exist
only while a run holds the state: the interrupt and lock tests search them.)"""

from __future__ import annotations

import pytest

from tests.e2e.conftest import Project, assert_secret_nowhere

pytestmark = pytest.mark.e2e


def test_the_key_is_in_no_output_and_no_file(project: Project) -> None:
    project.copy_examples()
    assert project.run("plan", "-out", "first.plan").returncode == 0
    done = project.run("apply", "first.plan", "--verbose")
    assert done.returncode == 0, done.stderr
    assert "'authorization': 'Bearer ***'" in done.stderr, "--verbose logged no request"
    assert "http: POST " in done.stderr

    # An update, as a JSON event stream, leaves a state backup; a refresh records statuses.
    project.edit("manifests/template-groups.yaml", "name: EU road imports", "name: EU road v2")
    done = project.run("apply", "--auto-approve", "-v", "--format", "json")
    assert done.returncode == 0, done.stderr
    assert "Bearer ***" in done.stderr
    assert (project.state_dir / "state.json.backup").exists()
    done = project.run("refresh", "--verbose")
    assert done.returncode == 0, done.stderr
    assert "Bearer ***" in done.stderr
    for argv in (
        ("state", "list"),
        ("state", "list", "--format", "json"),
        ("state", "show", "TemplateGroup/eu-road"),
        ("status",),
        ("plan", "-out", "second.plan", "--format", "json"),
    ):
        done = project.run(*argv)
        assert done.returncode == 0, done.stderr
    done = project.run("state", "adopt", "Movement/mov-a1-arrival", "mov_00000001", "-v")
    assert done.returncode == 3
    assert "Movement/mov-a1-arrival is already applied" in done.stderr

    assert (project.root / "second.plan").exists()
    assert_secret_nowhere(project)
