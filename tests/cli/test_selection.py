"""-l SELECTOR (kubectl's label-selector grammar), --target and --exclude through the CLI:
a malformed selector, one that matches nothing, or an unknown address exits 64."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import run

# The examples: two departures labelled lane=rtm-ham and lane=rtm-ant, a party update of
# the first (no labels), three movements in order on one HAWB, a template group labelled
# team=road, an export cancellation and a HAWB deactivation.
HAM = "DepartureDeclaration/dep-rtm-ham-0001"
ANT = "DepartureDeclaration/dep-rtm-ant-0002"
PARTY = "TransitPartyUpdate/dep-rtm-ham-0001-consignee"
ARRIVAL, STORAGE, CLEARANCE = (
    "Movement/mov-a1-arrival",
    "Movement/mov-a1-storage-in",
    "Movement/mov-a1-clearance",
)
ROAD = "TemplateGroup/eu-road"
CANCEL = "ExportCancellation/cancel-export-501"
HAWB = "HawbDeactivation/hawb-a3-duplicate"
EVERYTHING = {HAM, ANT, PARTY, ARRIVAL, STORAGE, CLEARANCE, ROAD, CANCEL, HAWB}


def _command(name: str) -> list[str]:
    """``plan``, or ``apply`` as a script runs it (without asking)."""
    return [name, "--auto-approve"] if name == "apply" else [name]


def _planned(capsys: pytest.CaptureFixture[str], *options: str) -> set[str]:
    code, out, err = run(capsys, "plan", "--format", "json", *options)
    assert code == 0, err
    return {change["address"] for change in json.loads(out)["changes"]}


@pytest.mark.parametrize(
    ("selector", "chosen"),
    [
        (["lane=rtm-ham"], {HAM}),
        (["lane==rtm-ham"], {HAM}),
        (["lane!=rtm-ham,lane"], {ANT}),
        (["lane in (rtm-ham, rtm-ant)"], {HAM, ANT}),
        (["lane notin (rtm-ham),lane"], {ANT}),
        (["lane"], {HAM, ANT}),
        (["!lane,!team"], EVERYTHING - {ANT, ROAD}),  # the party update needs HAM
        (["team=road", "!lane"], {ROAD}),  # -l twice: both hold
        (["lane!=rtm-ham"], EVERYTHING),  # a missing label is not rtm-ham; PARTY needs HAM
    ],
)
def test_label_selectors_follow_kubectls_grammar(
    selector: list[str], chosen: set[str], project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    options = [word for text in selector for word in ("-l", text)]
    assert _planned(capsys, *options) == chosen


@pytest.mark.parametrize(
    ("selector", "reason"),
    [
        ("lane in rtm-ham", "expected ( after in"),
        ("lane in (rtm-ham", "expected ) to close in (...)"),
        ("lane notin ()", "expected a value in notin (...), found ')'"),
        ("=rtm-ham", "expected a label, found '='"),
        ("lane rtm-ham", "expected =, ==, !=, in or notin after 'lane', found 'rtm-ham'"),
        ("lane=a,,team", "expected a label, found ','"),
        ("lane>3", "> compares numbers, and labels are text"),
        ("", "it is empty"),
    ],
)
def test_a_malformed_selector_exits_64_with_the_accepted_syntax(
    selector: str, reason: str, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for command in ("plan", "apply"):
        code, _, err = run(capsys, *_command(command), "-l", selector)
        assert code == 64, err
        assert err.startswith(f"error: -l {selector!r} is not a label selector: {reason}")
        assert "hint: a label selector is requirements joined by commas" in err
        assert "'key in (a,b)', 'key notin (a,b)'" in err
    assert not (project / ".customs-batch" / "local" / "state.json").exists()


@pytest.mark.parametrize("selector", ["lane=typo", "lane=rtm-ham,team", "tier in (a,b)"])
def test_a_selector_that_matches_nothing_exits_64_naming_the_labels(
    selector: str, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for command in ("plan", "apply"):
        code, out, err = run(capsys, *_command(command), "-l", selector)
        assert code == 64, out + err
        assert f"error: -l {selector!r} matches no document" in err
        assert "hint: labels in the manifests: lane (rtm-ant, rtm-ham); team (road)" in err
        assert "Nothing to apply" not in out
    assert not (project / ".customs-batch" / "local" / "state.json").exists()


def test_a_selector_in_manifests_without_labels_says_there_are_none(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "plan", "manifests/movements.yaml", "-l", "lane=rtm-ham")
    assert code == 64
    assert "hint: no document in the manifests has labels (metadata.labels)" in err


def test_exclude_leaves_out_a_document_and_what_depends_on_it(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _planned(capsys, "--exclude", STORAGE) == EVERYTHING - {STORAGE, CLEARANCE}
    assert _planned(capsys, "--exclude", HAM, "--exclude", ROAD) == EVERYTHING - {
        HAM,
        PARTY,
        ROAD,
    }
    assert _planned(capsys, "-l", "lane", "--exclude", HAM) == {ANT}
    assert _planned(capsys, "--target", PARTY, "--exclude", ANT) == {HAM, PARTY}


@pytest.mark.parametrize("command", ["plan", "apply"])
def test_exclude_of_an_unknown_or_malformed_address_exits_64(
    command: str, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, *_command(command), "--exclude", "Movement/nope")
    assert code == 64
    assert "--exclude Movement/nope: no such document in the manifests" in err
    code, _, err = run(capsys, *_command(command), "--exclude", "nope")
    assert code == 64
    assert "--exclude 'nope' is not an address" in err


def test_a_saved_plan_is_applied_whole(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "plan", "-out", "release.plan")[0] == 0
    for option in (["-l", "lane"], ["--target", HAM], ["--exclude", HAM]):
        code, _, err = run(capsys, "apply", "release.plan", *option)
        assert code == 64
        assert "release.plan is a saved plan, applied whole" in err
    assert not (project / ".customs-batch" / "local" / "state.json").exists()
