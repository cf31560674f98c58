"""apply FILE knows a saved plan by its content: a plan rendered for reading (plan -o), or any
file that is neither a saved plan nor a manifest, is refused instead of read as manifests."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.cli.conftest import run

NOT_SAVED = "not a saved plan"
WRITE_ONE = "write one with `customs-batch plan -out FILE`"


@pytest.mark.parametrize("format_name", ["text", "json", "markdown", "html", "mermaid", "dot"])
def test_a_plan_written_with_o_is_refused_by_apply_and_plan_warns(
    format_name: str, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "plan", "--format", format_name, "-o", "release.plan")
    assert code == 0, err
    assert "warning: -o writes the plan for people to read" in err
    assert "write -out release.plan" in err
    code, out, err = run(capsys, "apply", "release.plan", "--auto-approve")
    assert code == 64
    assert out == ""
    assert err.startswith(
        f"error: release.plan: {NOT_SAVED} (it is a plan rendered as {format_name}, for "
        f"reading); {WRITE_ONE}\n"
    )
    assert "apiVersion" not in err and "yaml" not in err
    assert not (project / ".customs-batch" / "local" / "state.json").exists()


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("release.plan", b"Plan: 3 to create\n"),
        ("release.plan", b""),
        ("notes.txt", b"deploy on friday\n"),
        ("other.json", b'{"format": "something-else", "changes": 3}\n'),
        ("picture.png", b"\x89PNG\r\n\x1a\n\x00\x00"),
    ],
)
def test_a_file_that_is_neither_a_saved_plan_nor_a_manifest_is_refused(
    name: str, content: bytes, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / name).write_bytes(content)
    code, _, err = run(capsys, "apply", name, "--auto-approve")
    assert code == 64
    assert err.startswith(f"error: {name}: {NOT_SAVED}; {WRITE_ONE}\n")
    assert "hint: `plan -o FILE` writes a plan for people to read" in err


def test_a_plan_without_o_does_not_warn(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "plan", "-o", "plan.txt", "-out", "release.plan")
    assert code == 0 and "warning" not in err


def test_a_saved_plan_is_applied_alone(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "plan", "-out", "release.plan")[0] == 0
    code, _, err = run(capsys, "apply", "release.plan", "manifests", "--auto-approve")
    assert code == 64
    assert "release.plan is a saved plan, and a saved plan is applied alone" in err


@pytest.mark.parametrize("name", ["movements.txt", "broken.yaml"])
def test_manifests_are_still_read_as_manifests_whatever_their_name(
    name: str, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A manifest with an error: apply stops at its findings before it connects to anything.
    source = project / "manifests" / "movements.yaml"
    manifest = project / name
    shutil.copy(source, manifest)
    manifest.write_text(manifest.read_text().replace("action: ISL", "action: XYZ", 1))
    code, _, err = run(capsys, "apply", name, "--auto-approve")
    assert code == 1
    assert f"{name}:" in err and "schema.enum" in err
    # A YAML file so broken that it names no kind is still a manifest, with its finding.
    (project / "broken.yaml").write_text("spec: [unclosed\n")
    code, _, err = run(capsys, "apply", "broken.yaml", "--auto-approve")
    assert code == 1 and "broken.yaml:" in err and NOT_SAVED not in err


def test_a_saved_plan_made_without_paths_reads_the_manifests_list_again(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # apply FILE reads the access codes again from the paths the plan names: those of
    # `manifests:`, never the whole folder with the repository's other YAML files.
    (project / "customs-batch.yaml").write_text("manifests: [manifests]\n", encoding="utf-8")
    (project / "docker-compose.yml").write_text("services:\n  db: {image: postgres}\n")
    code, _, err = run(capsys, "plan", "-out", "release.plan")
    assert code == 0, err
    saved = json.loads((project / "release.plan").read_text(encoding="utf-8"))
    assert saved["manifests"] == ["manifests"]
    assert any("accessCode" in json.dumps(change) for change in saved["changes"])
    code, _, err = run(capsys, "apply", "release.plan")
    assert code == 0, err


@pytest.mark.parametrize("linked", [False, True])
def test_o_and_out_naming_one_file_is_a_usage_error(
    linked: bool, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The report for reading would replace the saved plan, and apply then refuse it.
    if linked:
        (project / "release.plan").write_text("kept\n", encoding="utf-8")
        (project / "report.txt").symlink_to("release.plan")
    report = "report.txt" if linked else "release.plan"
    code, out, err = run(capsys, "plan", "-out", "release.plan", "-o", report)
    assert code == 64
    assert out == ""
    assert "name the same file" in err
    assert (
        (project / "release.plan").read_text(encoding="utf-8") == "kept\n"
        if linked
        else (not (project / "release.plan").exists())
    )


def test_a_plan_made_against_an_empty_state_applies_only_to_that_state(
    project: Path, tmp_path_factory: pytest.TempPathFactory,
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    # An empty state has no lineage to tell it by: a plan copied into another project would
    # declare everything there, and again where it was made.
    code, _, err = run(capsys, "plan", "-out", "first.plan")
    assert code == 0, err
    other = tmp_path_factory.mktemp("other")
    shutil.copytree(project / "manifests", other / "manifests")
    shutil.copytree(project / "templates", other / "templates")
    shutil.copy(project / "first.plan", other / "first.plan")
    monkeypatch.chdir(other)
    code, out, err = run(capsys, "apply", "first.plan")
    assert code != 0 and out == "", out + err
    assert "the plan was made against the empty state at" in err
    assert not (other / ".customs-batch" / "local" / "state.json").exists()
    monkeypatch.chdir(project)
    code, _, err = run(capsys, "apply", "first.plan")
    assert code == 0, err


@pytest.mark.parametrize("written", ["nan", "NaN", "-nan"])
def test_a_wait_timeout_that_is_no_number_is_a_usage_error_before_anything_is_sent(
    project: Path, capsys: pytest.CaptureFixture[str], written: str
) -> None:
    # --wait-timeout nan was taken: no range refuses nan, and the wait's deadline (now + nan)
    # was never reached, so `apply --wait` polled a declaration left processing for ever.
    code, out, err = run(capsys, "apply", "--auto-approve", "--wait", "--wait-timeout", written)
    assert code == 64, out + err
    assert "Invalid value for '--wait-timeout': nan is not a number of seconds" in err
    assert "Traceback" not in err
    assert not (project / ".customs-batch" / "local" / "state.json").exists()


@pytest.mark.parametrize("written", ["inf", "Infinity", "1e400"])
def test_an_infinite_wait_timeout_is_a_usage_error_before_anything_is_sent(
    project: Path, capsys: pytest.CaptureFixture[str], written: str
) -> None:
    # --wait-timeout inf was taken (FloatRange(min=0) holds it), and `apply --wait` polled a
    # declaration left processing for ever, where the docs say the wait fails the change at
    # --wait-timeout.
    code, out, err = run(capsys, "apply", "--auto-approve", "--wait", "--wait-timeout", written)
    assert code == 64, out + err
    assert "Invalid value for '--wait-timeout': inf is not a number of seconds" in err
    assert not (project / ".customs-batch" / "local" / "state.json").exists()
