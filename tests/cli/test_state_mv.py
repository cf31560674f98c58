"""``state mv`` moves a record only to a name a document can have."""

from __future__ import annotations

from pathlib import Path

import pytest

from customs_batch.cli.main import invoke
from customs_batch.state import RecordStatus, ResourceRecord, State
from customs_batch.state.file import read_state, write_state

GROUP = "TemplateGroup/eu-road"


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A state of one template group in the default environment's folder."""
    state = State(lineage="lin-1", serial=3)
    state.apply(
        GROUP, ResourceRecord(GROUP, RecordStatus.APPLIED, "create", {"code": "EU"}, {"id": 5})
    )
    folder = tmp_path / ".customs-batch" / "local"
    folder.mkdir(parents=True)
    write_state(folder / "state.json", state)
    monkeypatch.chdir(tmp_path)
    return folder


@pytest.mark.parametrize(
    "destination",
    ["TemplateGroup/EU road", "TemplateGroup/eu-road!", "TemplateGroup/a/b", "TemplateGroup/-x"],
)
def test_a_name_no_document_can_have_is_refused_and_nothing_moves(
    folder: Path, capsys: pytest.CaptureFixture[str], destination: str
) -> None:
    # A typo there would leave the record under a name the manifests can never write: the
    # object orphaned, its document planned anew.
    before = (folder / "state.json").read_bytes()
    assert invoke(["state", "mv", GROUP, destination]) == 64
    err = capsys.readouterr().err
    assert f"error: {destination!r} cannot be the address of a document: " in err
    assert "hint: write the name of the renamed document" in err
    assert (folder / "state.json").read_bytes() == before


def test_a_valid_name_takes_the_record(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert invoke(["state", "mv", GROUP, "TemplateGroup/eu_road.2"]) == 0
    state = read_state(folder / "state.json")
    assert state is not None and list(state.resources) == ["TemplateGroup/eu_road.2"]


def test_a_move_to_another_kind_is_a_usage_error_and_nothing_moves(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # It exited 3, the code of a state or a service that failed; nothing was asked of
    # either: the two addresses on the command line disagree.
    before = (folder / "state.json").read_bytes()
    assert invoke(["state", "mv", GROUP, "Movement/eu-road"]) == 64
    err = capsys.readouterr().err
    assert f"error: {GROUP} and Movement/eu-road are of different kinds" in err
    assert (folder / "state.json").read_bytes() == before


LIST_HINT = "`customs-batch state list` shows what is"


@pytest.mark.parametrize(
    ("argv", "hint"),
    [
        (["state", "rm", "TemplateGroup/nothing"], LIST_HINT),
        (["state", "rm", GROUP, "TemplateGroup/nothing"], LIST_HINT),
        (["state", "rm", "--gone", "TemplateGroup/nothing"], LIST_HINT),
        (["state", "mv", "TemplateGroup/nothing", "TemplateGroup/other"], LIST_HINT),
        (["state", "forget", "TemplateGroup/nothing"], LIST_HINT),
        (["state", "restore", "TemplateGroup/nothing"], LIST_HINT),
        (["state", "show", "TemplateGroup/nothing"], LIST_HINT),
        (
            ["state", "adopt", "TemplateGroup/nothing", "7"],
            "`customs-batch import TemplateGroup/nothing ID`",
        ),
    ],
)
def test_an_address_the_state_does_not_record_is_a_usage_error_and_nothing_changes(
    folder: Path, capsys: pytest.CaptureFixture[str], argv: list[str], hint: str
) -> None:
    # `state rm TemplateGroup/nothing` exited 3 (an error that stopped the command) for an
    # address the user mistyped; nothing was asked of the service.
    before = (folder / "state.json").read_bytes()
    assert invoke(argv) == 64
    err = capsys.readouterr().err
    assert "error: TemplateGroup/nothing is not in the state" in err
    assert hint in err
    assert (folder / "state.json").read_bytes() == before


@pytest.mark.parametrize(
    "argv",
    [
        ["state", "rm", "TemplateGroup/nothing"],
        ["state", "show", "TemplateGroup/nothing"],
        ["state", "mv", "TemplateGroup/nothing", "TemplateGroup/other"],
    ],
)
def test_a_state_that_cannot_be_read_still_stops_the_command_with_exit_3(
    folder: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    # Only "this address is not recorded" is the user's mistake: a state that cannot be
    # read says so and exits 3, whatever address was named.
    (folder / "state.json").write_text("{not json")
    assert invoke(argv) == 3
    assert "is not in the state" not in capsys.readouterr().err
