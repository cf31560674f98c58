"""What the per-kind tests share: a kind's identity, and an unknown outcome to decide on."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from customs_batch.kinds import Address, Kind
from customs_batch.kinds.model import Decision, UnknownOutcome
from customs_batch.kinds.registry import model_of
from customs_batch.state import RecordStatus, ResourceRecord

NOW = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)


def identity(kind: Kind, spec: dict[str, Any]) -> tuple[str, ...]:
    identify = model_of(kind).identity
    assert identify is not None, f"{kind} has no identity"
    return identify(spec)


def after_unknown(
    kind: Kind,
    *,
    outputs: dict[str, Any] | None = None,
    edited: tuple[str, ...] = (),
    key: str | None = None,
    started: timedelta = timedelta(minutes=5),
) -> Decision:
    """What the kind's model decides about a write whose outcome is unknown."""
    address = Address(kind, "doc")
    record = ResourceRecord(
        str(address),
        RecordStatus.UNKNOWN,
        model_of(kind).create.value,
        {},
        outputs=outputs or {},
        idempotency_key=key,
        updated_at=(NOW - started).isoformat(),
    )
    return model_of(kind).after_unknown(UnknownOutcome(address, record, edited, NOW))
