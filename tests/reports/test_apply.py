"""The apply summary for a GitHub job: what the service said cannot break it."""

from __future__ import annotations

from customs_batch.execution.apply import ApplyReport, Outcome
from customs_batch.execution.scheduler import NodeStatus
from customs_batch.kinds import Address, Kind
from customs_batch.planning.model import Operation
from customs_batch.reports import apply_markdown


def test_a_failure_detail_is_one_list_item_with_its_control_characters_escaped() -> None:
    failed = Outcome(
        Address(Kind.MOVEMENT, "m1"),
        NodeStatus.FAILED,
        Operation.CREATE_MOVEMENT,
        "refused\x1b[2J: <b>bad</b>\nsecond line\u202e",
    )
    summary = apply_markdown(ApplyReport([failed], False, None, 1.0), environment="e2e")
    assert (
        "- failed **`Movement/m1`**: refused\\\\x1b\\[2J: &lt;b&gt;bad&lt;/b&gt;<br>"
        "second line\\\\u202e" in summary
    )
    assert "\x1b" not in summary and "\u202e" not in summary


def test_a_failure_detail_mentions_no_one_and_links_nothing() -> None:
    detail = "rejected [here](javascript:alert(1)) for @customs-team, see #12 and *this*"
    failed = Outcome(
        Address(Kind.MOVEMENT, "m1"), NodeStatus.FAILED, Operation.CREATE_MOVEMENT, detail
    )
    summary = apply_markdown(ApplyReport([failed], False, None, 1.0), environment="e2e")
    assert (
        "rejected \\[here\\](javascript:alert(1)) for @<!-- -->customs-team, "
        "see #<!-- -->12 and \\*this\\*" in summary
    )
