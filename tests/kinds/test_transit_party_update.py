"""TransitPartyUpdate: known by its declaration and the party fields it writes."""

from __future__ import annotations

from typing import Any, cast

from customs_batch.jsontypes import JSONObject
from customs_batch.kinds import Kind
from customs_batch.kinds.actions import Action, Operation
from customs_batch.kinds.registry import model_of
from customs_batch.state import RecordStatus, ResourceRecord
from tests.kinds.helpers import after_unknown, identity

KIND = Kind.TRANSIT_PARTY_UPDATE
SPEC = {"declarationId": 7003, "Consignee": {"eoriNo": "DE1"}}


def test_its_identity_is_its_declaration_variant_and_fields_not_their_values() -> None:
    base = identity(KIND, SPEC)
    assert identity(KIND, {**SPEC, "declarationId": 7004}) != base
    assert identity(KIND, {**SPEC, "variant": "arrival"}) != base
    assert identity(KIND, {**SPEC, "Principal": {"name": "P"}}) != base
    assert identity(KIND, {**SPEC, "Consignee": {"eoriNo": "DE2"}}) == base
    # A PATCH writes only the fields it names: another field of the same party is another
    # write, not the same one sent twice.
    assert identity(KIND, {**SPEC, "Consignee": {"city": "Bremen"}}) != base
    assert identity(KIND, {**SPEC, "Consignee": {"city": "B", "eoriNo": "D"}}) == identity(
        KIND, {**SPEC, "Consignee": {"eoriNo": "E", "city": "C"}}
    )
    outdated = model_of(KIND).identity_outdated
    assert outdated is not None
    assert outdated(("declarationId=7003", "variant=null", "parties=Consignee"))
    assert not outdated(tuple(identity(KIND, SPEC)))


def test_it_is_a_patch_safe_to_repeat_and_its_declaration_cannot_change() -> None:
    model = model_of(KIND)
    assert model.create is Operation.UPDATE_TRANSIT_PARTIES
    assert "declarationId" not in model.mutable
    assert after_unknown(KIND).action is Action.CREATE
    assert after_unknown(KIND, outputs={"declarationId": 7003}).action is Action.UPDATE


def test_the_read_before_a_patch_reads_the_declaration_the_patch_goes_to() -> None:
    # An update following its resubmitted departure: its intent keeps the answer of its last
    # PATCH (the rejected declaration's number) while its spec names the replacement, where
    # the PATCH goes. The read before it must be of that one, or what it keeps as seen of
    # the declaration (targetSeen) is the rejected one's.
    from customs_batch.client import CustomsClient, RateLimit, RateLimiter, Sender
    from customs_batch.sandbox import InProcessTransport, create_app
    from customs_batch.state import RecordStatus, ResourceRecord

    read = model_of(KIND).read_target
    assert read is not None
    intent = ResourceRecord(
        "TransitPartyUpdate/p",
        RecordStatus.PENDING,
        Operation.UPDATE_TRANSIT_PARTIES.value,
        {**SPEC, "declarationId": 7002},
        outputs={"declarationId": 7001, "status": "processing"},
    )
    sender = Sender(
        "http://sandbox.test",
        "sandbox-key",
        rate_limiter=RateLimiter(RateLimit.parse("off")),
        transport=InProcessTransport(create_app(rate_limit=None)),
    )
    with CustomsClient(sender) as client:
        found = read(client, [intent])[intent.address]
    assert found is not None
    assert found.outputs["declarationId"] == 7002


class _Listing:
    """A client whose transit list holds ``entries`` (newest first), ``size`` a page: the
    pages asked for are kept."""

    def __init__(self, entries: list[dict[str, object]], size: int) -> None:
        self.entries = entries
        self.size = size
        self.asked: list[tuple[int, int]] = []

    def list_transit(self, filters: object, *, page: int, page_size: int) -> object:
        from customs_batch.client import Page, TransitDeclaration

        self.asked.append((page, page_size))
        start = (page - 1) * page_size
        held = self.entries[start : start + page_size]
        records = tuple(TransitDeclaration.from_json(cast(JSONObject, raw)) for raw in held)
        return Page(records, page, page_size, len(self.entries), None)


def _old_record(**changes: Any) -> ResourceRecord:
    """A party update's record as a version that kept no targetSeen wrote it."""
    record = ResourceRecord(
        "TransitPartyUpdate/p",
        RecordStatus.APPLIED,
        Operation.UPDATE_TRANSIT_PARTIES.value,
        SPEC,
        outputs={"declarationId": 7003, "status": "processing"},
        updated_at="2026-11-01T10:00:00.000Z",
    )
    return record.with_changes(**changes)


def test_a_record_without_target_seen_lists_at_most_listed_pages_of_declarations() -> None:
    # The declarations made since its last write may be thousands on a busy account: at
    # most LISTED_PAGES pages are read, and a declaration not among them is not verified.
    from customs_batch.client import CustomsClient
    from customs_batch.kinds import transit_party_update as kind

    record = _old_record()
    many = [
        {"declarationId": n, "createdAt": "2026-11-02T00:00:00Z"} for n in range(9000, 8000, -1)
    ]
    client = _Listing([*many, {"declarationId": 7003, "createdAt": "2026-11-02T00:00:00Z"}], 100)
    made, unverified = kind.created_since(cast(CustomsClient, client), record)
    assert made is None and unverified is not None and "7003" in unverified
    assert client.asked == [(n, kind.PAGE_SIZE) for n in range(1, kind.LISTED_PAGES + 1)]

    # Found within the bound: its time, for the kind's model to compare with the write.
    client = _Listing([*many[:150], {"declarationId": 7003, "createdAt": "2026-11-02T01:00Z"}], 100)
    assert kind.created_since(cast(CustomsClient, client), record) == ("2026-11-02T01:00Z", None)
    assert len(client.asked) == 2

    # Found with no time it gives: not verified either, never taken.
    client = _Listing([{"declarationId": 7003}], 100)
    made, unverified = kind.created_since(cast(CustomsClient, client), record)
    assert made is None and unverified is not None and "gives none" in unverified

    # A list that ends without it: made before the days listed, the record's.
    client = _Listing(many[:30], 100)
    assert kind.created_since(cast(CustomsClient, client), record) == (None, None)
    assert len(client.asked) == 1


def test_only_a_record_without_target_seen_lists_first() -> None:
    from customs_batch.kinds import Address

    model = model_of(KIND)
    old = _old_record()
    seen = _old_record(target_seen={"totalWeight": 1})
    update = Operation.UPDATE_TRANSIT_PARTIES
    assert model.lists_for(update, old)
    assert not model.lists_for(update, seen)
    assert not model.lists_for(update, None)
    assert not model.requests_at_least(update)  # not for every party update: per record
    # One that refers to the departure of the state it updates: that record tells it, by
    # the time its declaration was made (a page of the list), whatever its own record holds.
    departure = Address(Kind.DEPARTURE_DECLARATION, "d")
    assert model.lists_for(update, old, (departure,))
    assert model.lists_for(update, seen, (departure,))
    assert model.lists_for(update, None, (departure,))
