"""The example project validates clean; each broken example gives exactly its documented finding."""

from __future__ import annotations

import itertools
import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from customs_batch.cli.main import invoke

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
GOOD = sorted((EXAMPLES / "manifests").glob("*.yaml"))
# A case that needs a project of its own (its own customs-batch.yaml and templates/) is a
# folder of examples/bad/ holding its broken manifest.
BAD = sorted((EXAMPLES / "bad").glob("*.yaml.bad")) + sorted(
    (EXAMPLES / "bad").glob("*/*.yaml.bad")
)
EXPECT = re.compile(r"# expect: (?P<rule>[a-z0-9.-]+) line (?P<line>\d+)")


def _cli(*args: str) -> tuple[int, str, str]:
    """Run the CLI through click's runner and the real entry point's error handler."""
    with CliRunner().isolation() as (out, err, _):
        code = invoke(list(args))
    return code, out.getvalue().decode(), err.getvalue().decode()


def _json_report(*args: str) -> tuple[int, dict[str, object]]:
    code, out, _ = _cli("validate", "--format", "json", *args)
    return code, json.loads(out)


def test_the_example_project_validates_clean() -> None:
    code, report = _json_report(str(EXAMPLES / "manifests"))
    assert code == 0
    assert report["findings"] == []
    assert report["summary"] == {
        "ok": True,
        "errors": 0,
        "warnings": 0,
        "infos": 0,
        "documents": 15,
        "files": 8,
        "suppressed": 0,
    }


def test_the_example_policies_pass_their_own_examples() -> None:
    with CliRunner().isolation() as (out, _, _):
        code = invoke(["policy", "test", str(EXAMPLES)])
    assert code == 0
    assert out.getvalue().decode().splitlines() == [
        "ok   team.loading-location-rotterdam: 1 good, 1 bad",
        "ok   team.guarantee-ceiling: 1 good, 1 bad",
    ]


@pytest.mark.parametrize("manifest", GOOD, ids=lambda path: path.name)
def test_each_example_file_validates_alone_or_only_lacks_its_references(manifest: Path) -> None:
    code, report = _json_report("--strict", str(manifest))
    findings = report["findings"]
    assert isinstance(findings, list)
    # A file may refer to a document in another file; nothing else may be wrong with it.
    assert {finding["rule"] for finding in findings} <= {"project.unknown-reference"}
    assert code == (1 if findings else 0)


def test_the_example_project_covers_every_kind() -> None:
    kinds = {
        document["kind"]
        for manifest in GOOD
        for document in yaml.safe_load_all(manifest.read_text(encoding="utf-8"))
    }
    assert kinds == {
        "TemplateGroup",
        "DepartureDeclaration",
        "TransitPartyUpdate",
        "Movement",
        "HawbDeactivation",
        "ExportCancellation",
    }


@pytest.mark.parametrize("manifest", BAD, ids=lambda path: path.relative_to(EXAMPLES).as_posix())
def test_each_broken_example_gives_its_documented_findings(manifest: Path) -> None:
    # One '# expect:' line per finding: one problem may be reported at more than one place.
    lines = manifest.read_text(encoding="utf-8").splitlines()
    header = itertools.takewhile(lambda line: line.startswith("#"), lines)
    expected = [
        (found["rule"], int(found["line"]))
        for line in header
        if (found := EXPECT.match(line)) is not None
    ]
    assert expected, f"{manifest.name} must start with '# expect: <rule> line <n>'"
    if manifest.parent.name != "bad":  # its own project, not the examples' one
        assert (manifest.parent / "customs-batch.yaml").is_file()
    code, report = _json_report(str(manifest))
    findings = report["findings"]
    assert isinstance(findings, list)
    assert [(f["rule"], f["line"]) for f in findings] == expected
    assert code == (1 if any(f["severity"] == "error" for f in findings) else 0)


def test_broken_examples_are_not_discovered_with_the_project(tmp_path: Path) -> None:
    project = tmp_path / "examples"
    shutil.copytree(EXAMPLES, project)
    done = subprocess.run(
        [sys.executable, "-m", "customs_batch", "validate", "."],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == "0 errors, 0 warnings in 15 documents (8 files)"


def test_rendered_examples_validate_clean_again(tmp_path: Path) -> None:
    code, out, err = _cli("render", str(EXAMPLES / "manifests"))
    assert code == 0, err
    rendered = tmp_path / "rendered.yaml"
    rendered.write_text(out, encoding="utf-8")
    code, report = _json_report(str(rendered))
    assert report["findings"] == []
    assert code == 0


def _help_examples(command: str) -> list[str]:
    """The example lines of ``customs-batch COMMAND --help`` that run against a project's
    own manifests alone: no other environment, no shell (``&&``, ``>``, ``|``)."""
    code, out, err = _cli(command, "--help")
    assert code == 0, err
    lines = out.split("Examples:", 1)[1].split("\n\n", 1)[0].splitlines()
    return [
        line.strip()
        for line in lines
        if line.strip() and not any(part in line for part in ("--env", "&&", ">", "|"))
    ]


HELP_EXAMPLES = [
    line
    for command in ("validate", "render", "plan", "results")
    for line in _help_examples(command)
]


@pytest.mark.parametrize(
    "line", HELP_EXAMPLES, ids=lambda line: line.removeprefix("customs-batch ")
)
def test_each_help_example_runs_in_the_example_project(
    line: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An example of --help names the documents, lanes and rows of examples/, so that a
    # newcomer who copies it there sees what it does, not a usage error (a --target of no
    # document, a --rows range of no data row were exit 64 and exit 1).
    project = tmp_path / "examples"
    shutil.copytree(EXAMPLES, project)
    monkeypatch.chdir(project)
    argv = shlex.split(line)
    assert argv[0] == "customs-batch"
    code, out, err = _cli(*argv[1:])
    assert code == (2 if "--detailed-exitcode" in argv else 0), out + err
