"""The plan for people: what a manifest or the service wrote cannot start a line of its own."""

from __future__ import annotations

from customs_batch.kinds import Kind
from customs_batch.planning.model import Action
from customs_batch.reports import render_plan
from tests.reports.plans import change, view


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
