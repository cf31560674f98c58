"""The typed state: one record per applied address."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from customs_batch.errors import StateError

JSON = Any
"""A JSON-like value."""

Scalar = str | int | float | bool | None


class RecordStatus(StrEnum):
    """Where an address stands.

    ``pending``: the intent to write was recorded, the outcome was not (a crash, a timeout):
    what the service did is unknown. ``applied``: the service accepted it. ``failed``: the
    service refused it; the error is kept.
    """

    PENDING = "pending"
    APPLIED = "applied"
    FAILED = "failed"


@dataclass(frozen=True)
class ServiceFailure:
    """The service's refusal of an operation, as recorded."""

    status: int | None
    message: str
    body: Mapping[str, JSON] = field(default_factory=dict)

    def to_json(self) -> dict[str, JSON]:
        return {"status": self.status, "message": self.message, "body": dict(self.body)}

    @classmethod
    def from_json(cls, data: Mapping[str, JSON]) -> ServiceFailure:
        return cls(
            status=data.get("status"),
            message=str(data.get("message", "")),
            body=dict(data.get("body") or {}),
        )


@dataclass(frozen=True)
class ResourceRecord:
    """What is known of one address (``Kind/name``).

    ``spec`` is the request body last sent (or about to be sent, while pending);
    ``outputs`` what the service answered that others may refer to (``declarationId``…);
    ``idempotency_key`` the key a movement was (or will be) sent with, so that a re-run
    re-sends with the same key; ``operation`` the kind of write (``create``, ``update``…).
    """

    address: str
    status: RecordStatus
    operation: str
    spec: Mapping[str, JSON]
    outputs: Mapping[str, Scalar] = field(default_factory=dict)
    idempotency_key: str | None = None
    error: ServiceFailure | None = None
    remote_status: str | None = None
    remote_errors: tuple[JSON, ...] = ()
    updated_at: str = ""

    def with_changes(self, **changes: JSON) -> ResourceRecord:
        """A copy with ``changes`` applied."""
        return replace(self, **changes)

    def to_json(self) -> dict[str, JSON]:
        data: dict[str, JSON] = {
            "status": self.status.value,
            "operation": self.operation,
            "spec": self.spec,
            "outputs": dict(self.outputs),
            "updatedAt": self.updated_at,
        }
        if self.idempotency_key is not None:
            data["idempotencyKey"] = self.idempotency_key
        if self.error is not None:
            data["error"] = self.error.to_json()
        if self.remote_status is not None:
            data["remoteStatus"] = self.remote_status
        if self.remote_errors:
            data["remoteErrors"] = list(self.remote_errors)
        return data

    @classmethod
    def from_json(cls, address: str, data: Mapping[str, JSON]) -> ResourceRecord:
        """Parse one record; a malformed one is a StateError naming the address."""
        try:
            error = data.get("error")
            return cls(
                address=address,
                status=RecordStatus(data["status"]),
                operation=str(data["operation"]),
                spec=dict(data.get("spec") or {}),
                outputs=dict(data.get("outputs") or {}),
                idempotency_key=data.get("idempotencyKey"),
                error=ServiceFailure.from_json(error) if error else None,
                remote_status=data.get("remoteStatus"),
                remote_errors=tuple(data.get("remoteErrors") or ()),
                updated_at=str(data.get("updatedAt", "")),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise StateError(f"the state record of {address} is malformed ({exc})") from exc


@dataclass
class State:
    """The whole state of one environment.

    ``lineage`` is fixed when the state is created; ``serial`` grows by one every time the
    file is written, so a saved plan can tell whether the state moved since.
    """

    lineage: str
    serial: int = 0
    resources: dict[str, ResourceRecord] = field(default_factory=dict)

    @classmethod
    def new(cls) -> State:
        return cls(lineage=str(uuid.uuid4()))

    def apply(self, address: str, record: ResourceRecord | None) -> None:
        """Set (or with None, forget) the record of ``address``."""
        if record is None:
            self.resources.pop(address, None)
        else:
            self.resources[address] = record
