"""The movement rules of the API document, as the emulator enforces them.

Each refusal is a sentence naming the field, answered 400 (section 7). The body has already
passed the movement schema, so types and enumerations are right; these are the rules the
schema cannot say: what each action needs, what each source allows, and what the shipment
has on file.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from customs_batch.sandbox.records import JsonObject
from customs_batch.sandbox.store import Store, Table

NEEDS_PARTY: Final = frozenset({"VAH", "VAB", "ISL", "USL"})
NO_DECLARATION: Final = frozenset({"ISL", "USL"})  # they reuse the linked movement's
SOURCES: Final[dict[str, frozenset[str]]] = {
    "VAH": frozenset({"EXTERNAL", "RTO_LICENSE"}),
    "VAB": frozenset({"EXTERNAL", "RTO_LICENSE"}),
    "ISC": frozenset({"INTERNAL", "EXTERNAL", "ENTREPOT"}),
    "USC": frozenset({"INTERNAL", "EXTERNAL", "ENTREPOT", "DECO"}),
}
FIELDS: Final[dict[str, tuple[str, ...]]] = {
    "INTERNAL": ("declarationId",),
    "EXTERNAL": ("documentType", "declarationType", "declarationNumber"),
    "ENTREPOT": ("documentType",),
    "RTO_LICENSE": (),
    "DECO": (),
}
FROM_SHIPMENT: Final = ("provider", "configuration", "processType")


def server_side_fields(body: JsonObject) -> list[str]:
    """Refusals for fields the service derives from the shipment."""
    return [
        f"{name} must not be sent: the service takes it from the shipment"
        for name in FROM_SHIPMENT
        if name in body
    ]


def misplaced_declaration(body: JsonObject) -> list[str]:
    """The refusal of a ``customsDeclaration`` sent with ISL or USL, whatever it holds.

    Asked before the schema: its reasons about a declaration that should not be there
    (``'source' is a required property``) would tell the client to complete it."""
    action = body.get("action")
    if isinstance(action, str) and action in NO_DECLARATION and "customsDeclaration" in body:
        return [
            f"customsDeclaration is not allowed for {action}: it reuses the linked movement's "
            "declaration"
        ]
    return []


def refusals(body: JsonObject, shipment: JsonObject, store: Store) -> list[str]:
    """Every rule ``body`` breaks for the RTO ``shipment``; empty when it may be created."""
    return list(_refusals(body, shipment, store))


def _refusals(body: JsonObject, shipment: JsonObject, store: Store) -> Iterator[str]:
    action = body["action"]
    public_id = shipment["publicId"]
    hawb_id = body.get("hawbId")
    unknown_hawb = False
    if hawb_id is not None:
        hawb = store.get(Table.HAWBS, hawb_id)
        if hawb is None or hawb["shipmentId"] != public_id:
            unknown_hawb = True
            yield f"hawbId: {hawb_id} is not a HAWB of shipment {public_id}"
        elif not hawb["isActive"]:
            yield f"hawbId: {hawb_id} is deactivated"
    party = body.get("partyId")
    if action in NEEDS_PARTY and party is None:
        yield f"partyId is required for {action}"
    elif party is not None and party not in shipment["parties"]:
        yield f"partyId: {party} is not a party of shipment {public_id}"
    declaration = body.get("customsDeclaration")
    if declaration is None:
        # Of a HAWB the shipment does not have, nothing can be on file: that is the reason
        # above, not a missing customsDeclaration.
        if (
            action not in NO_DECLARATION
            and not unknown_hawb
            and not _on_file(store, public_id, hawb_id)
        ):
            yield (
                f"customsDeclaration is required for {action}: no allocation is on file for "
                f"{hawb_id or 'the master AWB'} of shipment {public_id}"
            )
    elif action not in NO_DECLARATION:  # with ISL and USL: misplaced_declaration
        yield from _declaration_refusals(action, declaration, shipment)


def _declaration_refusals(
    action: str, declaration: JsonObject, shipment: JsonObject
) -> Iterator[str]:
    source = declaration["source"]
    if source not in SOURCES[action]:
        allowed = ", ".join(sorted(SOURCES[action]))
        yield f"customsDeclaration.source: {source} is not accepted for {action} (use {allowed})"
        return
    allowed_fields = FIELDS[source]
    for name in sorted(set(declaration) - {"source", *allowed_fields}):
        yield f"customsDeclaration.{name} is not allowed for source {source}"
    for name in allowed_fields:
        if name not in declaration:
            yield f"customsDeclaration.{name} is required for source {source}"
    dec_id = declaration.get("declarationId")
    if source == "INTERNAL" and dec_id is not None and dec_id not in shipment["declarations"]:
        yield (
            f"customsDeclaration.declarationId: {dec_id} is not a declaration with an accepted "
            f"MRN on shipment {shipment['publicId']}"
        )


def _on_file(store: Store, public_id: str, hawb_id: str | None) -> bool:
    """Whether an active allocation covers the HAWB (or, without one, the shipment)."""
    return any(
        allocation["shipmentId"] == public_id
        and allocation["isActive"]
        and (hawb_id is None or allocation["hawbId"] == hawb_id)
        for allocation in store.values(Table.ALLOCATIONS)
    )
