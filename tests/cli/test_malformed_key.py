"""A key with a character that cannot go into an HTTP header: every command that connects
says which variable holds a malformed key, never "internal error", never the key."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from customs_batch.cli.main import invoke

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CONFIG = """\
default_environment: remote
environments:
  remote:
    base_url: http://127.0.0.1:9
    api_key_env: CB_TEST_REMOTE_KEY
    timeouts: {connect: 1, read: 1}
"""
KEY = "pasted-k\u00e9y-0042"  # an accented letter picked up on the way


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    sheets = shutil.ignore_patterns("*-sheet.yaml")
    shutil.copytree(EXAMPLES / "manifests", tmp_path / "manifests", ignore=sheets)
    shutil.copytree(EXAMPLES / "templates", tmp_path / "templates")
    (tmp_path / "customs-batch.yaml").write_text(CONFIG, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CB_TEST_REMOTE_KEY", KEY)
    return tmp_path


@pytest.mark.usefixtures("project")
@pytest.mark.parametrize(
    "argv",
    [
        ["env", "check"],
        ["get", "shipments"],
        ["get", "declarations"],
        ["get", "transit"],
        ["get", "template-groups"],
        ["get", "item", "1"],
        ["apply", "--auto-approve", "manifests/template-groups.yaml"],
        ["refresh"],
        ["state", "adopt", "DepartureDeclaration/dep-ham-0001", "7003"],
        ["import", "TemplateGroup/eu-road", "12", "manifests"],
    ],
    ids=lambda argv: " ".join(argv[:2]),
)
def test_a_non_ascii_key_is_named_as_malformed(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code = invoke(argv)
    err = capsys.readouterr().err
    assert code == 3, err
    assert "the API key in the environment variable CB_TEST_REMOTE_KEY is malformed" in err
    assert "its character 9 of 15 is not ASCII" in err
    assert "internal error" not in err
    assert KEY not in err and "pasted" not in err
