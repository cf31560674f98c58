"""How the notification URLs in a variable's value are told apart."""

from __future__ import annotations

import pytest

from customs_batch.commands._notify import split_urls


@pytest.mark.parametrize(
    ("value", "urls"),
    [
        ("", []),
        ("json://h/a", ["json://h/a"]),
        ("json://h/a slack://T/B/C", ["json://h/a", "slack://T/B/C"]),
        ("json://h/a,slack://T/B/C", ["json://h/a", "slack://T/B/C"]),
        (" json://h/a ,\n msteams://x/y, ", ["json://h/a", "msteams://x/y"]),
        # A comma inside a URL (two recipients of one e-mail) does not split it.
        ("mailtos://u:p@mail.example?to=a@x.example,b@x.example", None),
    ],
)
def test_urls_are_separated_by_spaces_or_commas(value: str, urls: list[str] | None) -> None:
    assert split_urls(value) == (urls if urls is not None else [value])


def test_a_cancellation_undone_at_the_service_is_no_rejection_to_notify() -> None:
    # Found by an outside probe: a cancellation granted, its declaration then `submitted`
    # again (the service's data reset) was notified as a rejection. Its kind reads it undone
    # with its record (the outcome's reading), and only what it reads rejected is notified.
    from types import SimpleNamespace
    from typing import cast

    from customs_batch.commands._notify import rejected_addresses
    from customs_batch.commands.apply import ApplyResult
    from customs_batch.execution.apply import Outcome
    from customs_batch.execution.scheduler import NodeStatus
    from customs_batch.kinds import Address, Kind
    from customs_batch.kinds.actions import Operation
    from customs_batch.kinds.model import Reading

    address = Address(Kind.EXPORT_CANCELLATION, "c")
    undone = Outcome(
        address,
        NodeStatus.FAILED,
        Operation.FOLLOW,
        remote_status="submitted",
        reading=Reading.UNDONE,
    )
    refused = Outcome(address, NodeStatus.FAILED, Operation.FOLLOW, remote_status="submitted")
    assert not undone.rejected and refused.rejected
    run = SimpleNamespace(
        plan=SimpleNamespace(changes=[]), report=SimpleNamespace(outcomes=[undone])
    )
    assert rejected_addresses(cast(ApplyResult, run)) == []
    run.report.outcomes = [refused]
    assert rejected_addresses(cast(ApplyResult, run)) == ["ExportCancellation/c (submitted)"]
