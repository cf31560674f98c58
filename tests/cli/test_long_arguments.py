"""An argument of 100,000 characters (an address, an ID, a name, a path) is refused with its
start and its length, never echoed whole: the error stays a few lines long."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.conftest import run

LONG = "a" * 100_000
SHOWN = f"{'a' * 40!r}... (100,000 characters)"


@pytest.mark.parametrize(
    "argv",
    [
        ["state", "show", LONG],
        ["state", "show", f"Movement/{LONG}"],
        ["state", "rm", f"Movement/{LONG}"],
        ["state", "forget", f"Movement/{LONG}"],
        ["state", "mv", "Movement/mov-a1-arrival", f"Movement/{LONG}"],
        ["state", "adopt", "DepartureDeclaration/dep-ham-0001", LONG],
        ["import", "DepartureDeclaration/dep-ham-0001", LONG],
        ["import", f"TemplateGroup/{LONG}", "12"],
        ["get", "declaration", LONG],
        ["get", "transit", LONG],
        ["get", "shipments", "--page", "1" * 100_000],
        ["get", "shipments", "--limit", LONG],
        ["templates", "show", LONG],
        ["plan", "--target", LONG],
        ["plan", "-l", LONG],
        ["plan", "--env", LONG],
        ["env", "show", LONG],
        ["validate", LONG],
    ],
    ids=lambda argv: " ".join(a[:20] for a in argv[:2]),
)
def test_a_100_kb_argument_is_echoed_cut(
    project: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    argv: list[str],
) -> None:
    monkeypatch.chdir(project)
    code, out, err = run(capsys, *argv)
    assert code == 64, err[:500]
    assert len(out + err) < 1000, err[:500]
    assert "... (100,0" in err and " characters)" in err, err[:500]
    assert "Traceback" not in err


def test_a_long_address_is_shown_by_its_start_and_length(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = run(capsys, "state", "show", LONG)
    assert code == 64
    assert f"error: {SHOWN} is not an address" in err


def test_plan_of_a_long_target_not_in_the_manifests_cuts_it(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)
    code, _, err = run(capsys, "plan", "manifests", "--target", f"Movement/{LONG}")
    assert code == 64
    assert len(err) < 1000, err[:500]
    assert "no such document in the manifests" in err or "is not the address" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["policy", "test", LONG],
        ["templates", "list", "--project", LONG],
        ["templates", "show", "t1-road", "--project", LONG],
        ["sandbox", "serve", "--seed", LONG],
        ["validate", "b" * 4_000],  # under the longest path the system opens: click's refusal
    ],
    ids=lambda argv: " ".join(a[:20] for a in argv[:2]),
)
def test_a_path_that_does_not_exist_is_echoed_cut(
    project: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    argv: list[str],
) -> None:
    # click's own "Directory 'aaaa…' does not exist." printed the 100 KB argument whole.
    monkeypatch.chdir(project)
    code, out, err = run(capsys, *argv)
    assert code == 64, err[:500]
    assert "characters) does not exist." in err and len(out + err) < 1000, err[:500]


@pytest.mark.parametrize(
    ("option", "target"), [("-out", "folder"), ("--annotate", "file"), ("push", "folder")]
)
def test_a_path_of_the_wrong_type_is_echoed_cut(
    project: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    option: str,
    target: str,
) -> None:
    # "File '…' is a directory." quoted a long path whole, as every click.Path refusal did.
    monkeypatch.chdir(project)
    deep = Path(*["d" * 200] * 10)
    deep.mkdir(parents=True)
    if target == "file":
        deep = deep / "f"
        deep.write_text("")
    argv = {
        "-out": ["plan", "-out", str(deep)],
        "--annotate": ["validate", "--annotate", str(deep)],
        "push": ["state", "push", str(deep)],
    }[option]
    code, out, err = run(capsys, *argv)
    assert code == 64, err[:500]
    assert f"{str(deep)[:40]!r}... ({len(str(deep)):,} characters) is a" in err, err[:500]
    assert len(out + err) < 1000, err[:500]


def test_every_path_a_command_takes_is_refused_cut() -> None:
    # One place cuts click's refusals of a path: a new option with click.Path would not.
    cli = Path(__file__).parents[2] / "customs_batch" / "cli"
    plain = [
        file.name
        for file in sorted(cli.glob("*.py"))
        if file.name != "_paths.py" and "click.Path(" in file.read_text(encoding="utf-8")
    ]
    assert plain == [], "use customs_batch.cli._paths.CutPath"


@pytest.mark.parametrize(
    "argv",
    [
        ["plan", "--format", LONG],
        ["validate", "--format", LONG, "manifests"],
        ["apply", "--format", LONG],
        ["sheet", "template", LONG, "-o", "x.xlsx"],
        ["get", "declarations", "--status", LONG],
        ["get", "transit", "--status", LONG],
        ["get", "shipments", "--order", LONG],
        ["validate", "--hs-codes", LONG, "manifests"],
    ],
    ids=lambda argv: " ".join(a[:20] for a in argv[:2]),
)
def test_a_value_that_is_no_choice_is_echoed_cut(
    project: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    argv: list[str],
) -> None:
    # click's "'aaaa…' is not one of 'text', 'json'." quoted a 100 KB value whole.
    monkeypatch.chdir(project)
    code, out, err = run(capsys, *argv)
    assert code == 64, err[:500]
    assert len(out + err) < 1500, err[:500]
    assert f"{SHOWN} is not one of" in err, err[:500]


def test_a_short_value_that_is_no_choice_is_echoed_whole(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = run(capsys, "plan", "--format", "yaml")
    assert code == 64
    assert "'yaml' is not one of" in err


@pytest.mark.parametrize("group", [[], ["sheet"], ["state"], ["get"], ["sandbox"], ["env"]])
def test_a_command_no_group_has_is_echoed_cut(
    capsys: pytest.CaptureFixture[str], group: list[str]
) -> None:
    # click's "No such command 'aaaa…'." quoted a 100 KB word whole.
    code, out, err = run(capsys, *group, LONG)
    assert code == 64, err[:500]
    assert len(out + err) < 1500, err[:500]
    assert f"No such command {SHOWN}." in err, err[:500]


def test_every_choice_a_command_takes_is_refused_cut() -> None:
    # One place cuts click's refusals of a choice: a new option with click.Choice would not.
    cli = Path(__file__).parents[2] / "customs_batch" / "cli"
    plain = [
        file.name
        for file in sorted(cli.glob("*.py"))
        if file.name != "_choices.py" and "click.Choice(" in file.read_text(encoding="utf-8")
    ]
    assert plain == [], "use customs_batch.cli._choices.CutChoice"
    groups = [
        file.name
        for file in sorted(cli.glob("*.py"))
        if "@click.group()" in file.read_text(encoding="utf-8")
    ]
    assert groups == [], "use @click.group(cls=CutGroup)"
