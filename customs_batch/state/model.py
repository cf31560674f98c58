"""The typed state: one record per applied address."""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import TYPE_CHECKING

from customs_batch.errors import StateError
from customs_batch.jsontypes import JSON

if TYPE_CHECKING:
    from customs_batch.sensitive import Sealer


Scalar = str | int | float | bool | None


class RecordStatus(StrEnum):
    """Where an address stands in its lifecycle.

    ``pending``: the intent to write was recorded and nothing since (the run was killed
    around the request): what the service did is unknown. ``unknown``: the request was sent
    and no answer came (a timeout, a dropped connection, a server error). ``applied``: the
    service created or updated it; its own state at the service (a departure's processing,
    ready, invalid…) is ``remote_status``. ``failed``: the service refused it; the error is
    kept, and when nothing was ever created (no outputs) nothing exists at the service.
    A request that never left (connection refused) is not recorded at all.
    ``forgotten``: a tombstone left by ``state rm``: customs-batch no longer tracks the
    object, but it still exists at the service, so its identity stays known and the same
    declaration is never submitted again under any name (``state rm --gone`` removes it).
    """

    PENDING = "pending"
    UNKNOWN = "unknown"
    APPLIED = "applied"
    FAILED = "failed"
    FORGOTTEN = "forgotten"

    @property
    def outcome_unknown(self) -> bool:
        """Whether what the service did with the last write is not known."""
        return self in (RecordStatus.PENDING, RecordStatus.UNKNOWN)


_STATUSES: dict[str, RecordStatus] = {status.value: status for status in RecordStatus}


def _status(value: JSON) -> RecordStatus:
    """``RecordStatus(value)``, by a look-up for a valid one (the enum's call is a tenth
    of parsing a record)."""
    found = _STATUSES.get(value) if type(value) is str else None
    return found if found is not None else RecordStatus(value)


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
    superseded: tuple[JSON, ...] = ()
    """Earlier submissions this one replaced (a departure the service rejected, then
    corrected and submitted again): their outputs, service state and errors."""
    identity: tuple[str, ...] = ()
    """What makes it the same thing at the service (the kind's identity, as the plan that
    created it computed it); empty in records written before identities were kept."""
    forgotten_from: str | None = None
    """For a tombstone: the status the record had when ``state rm`` forgot it. For an
    attempt whose outcome was unknown that ``state forget`` took back keeping its
    Idempotency-Key (``failed``, nothing recorded made): the status the attempt had
    (:attr:`kept_key`)."""
    not_found_at: str | None = None
    """When ``refresh`` last found the object no longer at the service (the service
    answered that it does not hold its ID), until a read finds it again: whether it is gone
    for good is the user's to confirm (``state rm --gone``)."""
    found_instead: str | None = None
    """Set with ``not_found_at`` when what the service holds at the recorded ID is another
    object (its ID given again, after a sandbox reset say): how it differs, by the kind's
    identity and the fields that cannot change."""
    maybe_held: tuple[JSON, ...] = ()
    """While the outcome of its last request is unknown: what each earlier update whose
    answer was lost too, since the last answer, would have left of what the object is known
    by (a template group's code), oldest first, where its last request would leave another
    value: the service may hold the object as any of those requests left it, until an
    answer settles it (a group whose code changed A -> B, then B -> C, both answers lost,
    may be at B)."""
    target_seen: Mapping[str, JSON] = field(default_factory=dict)
    """For a write to an object its spec does not describe (a party update of a declaration
    made elsewhere, named by its number): what the read before its first write gave of that
    object's fields no call can change (a transit declaration's weight, offices, procedure),
    so that a later read finding other values there finds another object at the ID (given
    again after a sandbox reset, say) and nothing is sent to it."""
    unverified: str | None = None
    """Set when the read before a write could not tell whether the object at the recorded
    ID is the record's (a party update written before ``targetSeen`` was kept, whose
    declaration's creation time the bounded list of declarations made since did not
    reach): what was not verified. Nothing is sent; the plan holds it for a decision
    until ``state adopt`` records the object as the record's, after the user checked it."""
    done_at: str | None = None
    """When a read first found the object done (in its kind's ``done_states``: a
    cancellation customs granted), kept by later reads until its request is sent again:
    a later state its kind reads with it (an export declaration ``submitted`` again after
    its cancellation was granted: the service's data reset) is undone there, not refused
    (``KindModel.reading``)."""
    look_since: str | None = None
    """For a creation apply held unsent because the service listed objects made in the last
    day (or since the state's last write, when earlier) that no record holds and that could
    be it (made by a run whose records were not kept: a CI runner lost before it committed
    the state): the time from which the service's objects are looked at for it, as for a
    creation whose outcome is unknown (its status). Nothing of it was sent by this
    state."""

    @property
    def kept_key(self) -> str | None:
        """The Idempotency-Key of an attempt ``state forget`` took back while the service
        honoured it (``failed``, nothing recorded made, ``forgotten_from`` its status then):
        the next creation of its document is sent under it while the service still honours
        it and the document is unchanged. None for any other record."""
        if (
            self.status is RecordStatus.FAILED
            and self.forgotten_from is not None
            and not self.outputs
        ):
            return self.idempotency_key
        return None

    @property
    def never_created(self) -> bool:
        """Refused by the service with nothing created: nothing of it exists there."""
        return self.status is RecordStatus.FAILED and not self.outputs

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
        if self.superseded:
            data["superseded"] = list(self.superseded)
        if self.identity:
            data["identity"] = list(self.identity)
        if self.forgotten_from is not None:
            data["forgottenFrom"] = self.forgotten_from
        if self.not_found_at is not None:
            data["notFoundAt"] = self.not_found_at
        if self.found_instead is not None:
            data["foundInstead"] = self.found_instead
        if self.maybe_held:
            data["maybeHeld"] = list(self.maybe_held)
        if self.target_seen:
            data["targetSeen"] = dict(self.target_seen)
        if self.unverified is not None:
            data["unverified"] = self.unverified
        if self.done_at is not None:
            data["doneAt"] = self.done_at
        if self.look_since is not None:
            data["lookSince"] = self.look_since
        return data

    @classmethod
    def from_json(cls, address: str, data: Mapping[str, JSON]) -> ResourceRecord:
        """Parse one record; a malformed one is a StateError naming the address."""
        try:
            error = data.get("error")
            status = data["status"]
            words = data.get("identity") or ()
            outputs = dict(data.get("outputs") or {})
            superseded = tuple(data.get("superseded") or ())
            fields = {
                "address": address,
                "status": _status(status),
                "operation": str(data["operation"]),
                "spec": dict(data.get("spec") or {}),
                "outputs": outputs,
                "idempotency_key": data.get("idempotencyKey"),
                "error": ServiceFailure.from_json(error) if error else None,
                "remote_status": data.get("remoteStatus"),
                "remote_errors": tuple(data.get("remoteErrors") or ()),
                "updated_at": str(data.get("updatedAt", "")),
                "superseded": superseded,
                "identity": tuple([str(word) for word in words]) if words else (),
                "forgotten_from": data.get("forgottenFrom"),
                "not_found_at": data.get("notFoundAt"),
                "found_instead": data.get("foundInstead"),
                "maybe_held": tuple(data.get("maybeHeld") or ()),
                "target_seen": dict(data.get("targetSeen") or {}),
                "unverified": data.get("unverified"),
                "done_at": data.get("doneAt"),
                "look_since": data.get("lookSince"),
            }
            # What the commands read as IDs and as earlier submissions (a hand edit of a
            # pushed copy): a list or an object there ended in an internal error. (An
            # output's class is compared, not isinstance: JSON gives exactly dict and list,
            # and a plan parses every record, 100,000 of them in a big state.)
            for value in outputs.values():
                if value.__class__ in _CONTAINERS:
                    raise TypeError("an output that is not a scalar")
            for item in superseded:
                if not isinstance(item, Mapping):
                    raise TypeError("a superseded entry that is not an object")
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            why = _what_is_wrong(data) or str(exc)
            raise StateError(f"the state record of {address} is malformed ({why})") from exc
        # What the frozen dataclass's __init__ would set, in its order, without its call
        # of object.__setattr__ per field: a plan reads every record of the state, and
        # that was two thirds of parsing one into this class (measured on 100,000).
        record = object.__new__(cls)
        record.__dict__.update(fields)
        return record


_CONTAINERS = (dict, list)
"""What JSON gives that is no scalar: an output of either is malformed."""

_OBJECTS = {
    "spec": "its spec is",
    "outputs": "its outputs are",
    "error": "its error is",
    "targetSeen": "its targetSeen is",
}
_LISTS = {
    "identity": "its identity is",
    "remoteErrors": "its remoteErrors are",
    "superseded": "its superseded is",
    "maybeHeld": "its maybeHeld is",
}


def _what_is_wrong(data: Mapping[str, JSON]) -> str:
    """What makes a record unreadable, in the file's words (a record edited by hand); ""
    when none of these is it. Only asked once parsing failed: the checks cost nothing then."""
    if not isinstance(data, Mapping):
        return f"it is {_shown(data)}, not an object"
    if "status" not in data:
        return "its status is missing"
    if not isinstance(data["status"], str) or data["status"] not in _STATUSES:
        return f"its status is {_shown(data['status'])}, not one of {', '.join(_STATUSES)}"
    if "operation" not in data:
        return "its operation is missing"
    for name, says in _OBJECTS.items():
        if data.get(name) and not isinstance(data[name], Mapping):
            return f"{says} {_shown(data[name])}, not an object"
    for name, says in _LISTS.items():
        if data.get(name) and not isinstance(data[name], list):
            return f"{says} {_shown(data[name])}, not a list"
    for key, value in (data.get("outputs") or {}).items():
        if isinstance(value, (Mapping, list)):
            return f"its output {key} is {_shown(value)}, not a text, a number, true, false or null"
    for item in data.get("superseded") or ():
        if not isinstance(item, Mapping):
            return f"its superseded holds {_shown(item)}, not an object"
    return ""


def _shown(value: JSON) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


@dataclass
class State:
    """The whole state of one environment.

    ``lineage`` is fixed when the state is created; ``serial`` grows by one every time the
    file is written, so a saved plan can tell whether the state moved since. A state read
    from its file holds its ``resources`` as :class:`~customs_batch.state.records.Records`,
    each parsed when first used.
    """

    lineage: str
    serial: int = 0
    resources: MutableMapping[str, ResourceRecord] = field(default_factory=dict)
    sealer: Sealer | None = field(default=None, compare=False, repr=False)
    """Digests the sensitive values of every record this state holds (see
    :mod:`customs_batch.sensitive`); None keeps them as they are (a state in memory)."""
    clear_at_rest: bool = field(default=False, compare=False, repr=False)
    """Whether the file this state was read from holds a sensitive value in clear (written
    before digests were kept): its backup is then written digested too."""
    journal: str = field(default="", compare=False, repr=False)
    """What of a run's journal this state holds beyond the stored state: a fingerprint of
    the journal ``read`` replayed, or the one ``open`` folded in; empty when there was none.
    A saved plan keeps it, so that a plan made from the journal of a run still recording
    (the same serial once that run folds the rest) is not taken as current."""

    def __post_init__(self) -> None:
        from customs_batch.state.records import Records

        if isinstance(self.resources, Records):
            self.resources.sealing = self.seal

    @classmethod
    def new(cls) -> State:
        return cls(lineage=str(uuid.uuid4()))

    def seal(self, record: ResourceRecord) -> ResourceRecord:
        """``record`` with its sensitive values as digests under this state's key."""
        if self.sealer is None:
            return record
        from customs_batch.sensitive import sealed_record

        return sealed_record(record, self.sealer, self.lineage)

    def sealed_by(self, sealer: Sealer | None) -> State:
        """This state with every record digested by ``sealer`` (a state brought in whole:
        ``state push``)."""
        self.sealer = sealer
        if sealer is not None:
            for address in list(self.resources):
                self.resources[address] = self.seal(self.resources[address])
        return self

    def apply(self, address: str, record: ResourceRecord | None) -> None:
        """Set (or with None, forget) the record of ``address``, its sensitive values
        digested."""
        if record is None:
            self.resources.pop(address, None)
        else:
            self.resources[address] = self.seal(record)
