"""TransitPartyUpdate: known by its declaration and the party fields it writes."""

from __future__ import annotations

from customs_batch.kinds import Kind
from customs_batch.kinds.actions import Action, Operation
from customs_batch.kinds.registry import model_of
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
