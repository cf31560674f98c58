"""Every command's ``-o`` refuses the project's inputs, whether or not it read them: ``status``,
``get`` and ``env list`` read no policy file, ``get`` and ``env list`` no manifest."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.conftest import run

POLICY = 'id: team.w\nseverity: warning\nkinds: [Movement]\nexpression: "true"\nmessage: m\n'


@pytest.mark.parametrize(
    "command", [("status",), ("get", "shipments"), ("env", "list"), ("env", "show", "local")]
)
@pytest.mark.parametrize(
    ("target", "what"),
    [
        ("policies/lanes.yaml", "a policy file of the project (policies/)"),
        ("manifests/movement.yaml", "a manifest of the project"),
    ],
)
def test_o_refuses_a_project_input_and_leaves_it_as_it_was(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: tuple[str, ...],
    target: str,
    what: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "customs-batch.yaml").write_text("manifests: [manifests]\n")
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "lanes.yaml").write_text(POLICY)
    (tmp_path / "manifests").mkdir()
    (tmp_path / "manifests" / "movement.yaml").write_text("kind: Movement\n")
    before = (tmp_path / target).read_bytes()

    code, _, err = run(capsys, *command, "-o", target)

    assert code == 64, err
    assert "cannot write the " in err and f"to {target}: it is {what}" in err
    assert (tmp_path / target).read_bytes() == before


@pytest.mark.parametrize(
    ("target", "what"),
    [
        ("policies/report.yaml", "a policy file of the project (policies/)"),
        ("templates/report.txt", "a template of the project (templates/)"),
        ("manifests/report.yaml", "a manifest of the project"),
    ],
)
def test_o_refuses_a_new_file_the_project_would_read_as_an_input(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    target: str,
    what: str,
) -> None:
    # Written, the report would be read by the next validate as a policy, a template or a
    # manifest: that validate would fail on it, and the same -o then be refused.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "customs-batch.yaml").write_text("manifests: [manifests]\n")
    for folder in ("policies", "templates", "manifests"):
        (tmp_path / folder).mkdir()
    (tmp_path / "manifests" / "cancel.yaml").write_text(
        "apiVersion: customs-batch/v1\nkind: ExportCancellation\nmetadata:\n  name: c\n"
        "spec:\n  declarationId: 501\n"
    )
    assert run(capsys, "validate")[0] == 0

    code, _, err = run(capsys, "validate", "-o", target)

    assert code == 64, err
    assert f"cannot write the report to {target}: a new file there would be read as {what}" in err
    assert not (tmp_path / target).exists()
    assert run(capsys, "validate")[0] == 0
    assert run(capsys, "validate", "-o", "report.txt")[0] == 0
