"""The plan for people: what a manifest or the service wrote cannot start a line of its own."""

from __future__ import annotations

import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from customs_batch.cli._files import write_output
from customs_batch.kinds import Kind
from customs_batch.planning.model import Action
from customs_batch.reports import render_plan, render_plan_pieces
from tests.reports.plans import big_view, change, view


def test_a_reason_or_a_value_cannot_print_a_line_that_reads_like_another_change() -> None:
    updated = change(
        Kind.TEMPLATE_GROUP,
        "g1",
        Action.UPDATE,
        reason="the service said: no\n+ create         Movement/fake",
        values=(("name", "old", "new\u202e\x9b31m"),),
    )
    text = render_plan("text", view(updated))
    # A change's line starts "  + create"; the reason's later line stays under the reason.
    assert "      the service said: no\n      + create         Movement/fake\n" in text
    assert not any(line.startswith("  + create") for line in text.splitlines())
    assert '      name: "old" -> "new\\u202e\\x9b31m"' in text


def test_the_text_comes_in_pieces_of_whole_changes_that_join_to_it() -> None:
    # A writer takes the text a change at a time: a plan of 100,000 creations is never held
    # whole (its text is a million lines).
    plan = big_view(1_000)
    pieces = list(render_plan_pieces("text", plan))
    assert "".join(pieces) == render_plan("text", plan)
    shown = sum(1 for c in plan.plan.changes if c.action is not Action.NO_CHANGE)
    assert len(pieces) == shown + 2  # the heading, each change, the summary
    assert all(piece.endswith("\n") for piece in pieces)
    assert all(piece.startswith("  ") for piece in pieces[1:-1])


def test_a_format_without_pieces_is_one_piece() -> None:
    plan = big_view(50)
    assert list(render_plan_pieces("json", plan)) == [render_plan("json", plan)]


def test_pieces_are_written_whole_to_a_private_file_and_a_failure_keeps_the_old_one(
    tmp_path: Path,
) -> None:
    target = tmp_path / "plan.txt"
    plan = big_view(300)
    write_output(target, render_plan_pieces("text", plan), what="plan")
    assert target.read_text(encoding="utf-8") == render_plan("text", plan)
    assert stat.S_IMODE(target.stat().st_mode) == 0o600

    def failing() -> Iterator[str]:
        yield "half a plan\n"
        raise RuntimeError("the renderer failed")

    with pytest.raises(RuntimeError):
        write_output(target, failing(), what="plan")
    assert target.read_text(encoding="utf-8") == render_plan("text", plan)
    assert not [path for path in tmp_path.iterdir() if path.name.startswith(".plan.txt")]


@pytest.mark.parametrize("name", ["text", "markdown", "html"])
def test_a_changed_value_that_follows_a_replaced_object_shows_as_known_after_apply(
    name: str,
) -> None:
    # A party update whose departure was resubmitted: its declarationId follows the new
    # declaration, whose ID is known only once apply has submitted it.
    reference = "${ref:DepartureDeclaration/dep-1.declarationId}"
    updated = change(
        Kind.TRANSIT_PARTY_UPDATE,
        "dep-1-consignee",
        Action.UPDATE,
        values=(("declarationId", 7003, reference), ("Consignee.name", "A", "B")),
        unknown=(("declarationId",),),
    )
    shown = render_plan(name, view(updated))
    assert "${ref:" not in shown
    assert shown.count("(known after apply)") == 1  # at the change, not once more
    if name == "text":
        assert "      declarationId: 7003 -> (known after apply)\n" in shown
        assert '      Consignee.name: "A" -> "B"\n' in shown
    elif name == "markdown":
        assert "  - `declarationId`: `7003` → (known after apply)\n" in shown
