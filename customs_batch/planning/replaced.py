"""IDs the state records as replaced: an object customs rejected, submitted again under a new
ID (a departure ``invalid``, corrected). A document that names the old ID by its value, not
by a ``${ref:}`` (which follows the resubmission), would send its request to a declaration
customs never accepted, not to the one that took its place: plan refuses it, naming both.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from customs_batch.jsontypes import JSON
from customs_batch.kinds import Address
from customs_batch.kinds.model import Decision
from customs_batch.kinds.registry import model_of
from customs_batch.manifest.document import Document
from customs_batch.planning.model import Action, Operation
from customs_batch.state.model import ResourceRecord, Scalar
from customs_batch.state.records import Records


class ReplacedIds:
    """By an ID a record's object had before it was replaced (as text): that record's address
    and the ID its object has now. Made from the state when a document first names an ID by
    its value (a party update's ``declarationId: 7003``); a state of 100,000 records is
    looked through by their text, and only those that replaced something are parsed."""

    def __init__(
        self,
        resources: Mapping[str, ResourceRecord],
        recorded: Callable[[str], ResourceRecord | None],
    ) -> None:
        self._resources = resources
        self._recorded = recorded
        self._by_id: dict[str, tuple[str, str, Scalar]] | None = None

    def refusal(self, doc: Document, spec: Mapping[str, JSON]) -> Decision | None:
        """Why ``doc`` is refused when the ID its kind takes (``takes_id``), written as a
        value, is one the state records as replaced; None otherwise."""
        takes = model_of(doc.kind).takes_id
        if takes is None:
            return None
        field = takes.field
        if any(tuple(reference.path) == ("spec", field) for reference in doc.references):
            return None  # a reference follows the resubmission
        value = spec.get(field)
        if isinstance(value, bool) or not isinstance(value, int | str):
            return None
        found = self._index().get(str(value))
        if found is None:
            return None
        holder, output, now = found
        ref = f"${{ref:{holder}.{output}}}"
        instead = f"write `{ref}` (it follows a resubmission), or {now}"
        return Decision(
            Action.REFUSED,
            Operation.NONE,
            f"{field} {value} names an object {holder} replaced: customs never accepted it, "
            f"and {holder} was submitted again as {now}. Sent to {value}, this request would "
            f"go to the rejected declaration, not to the one that took its place: {instead}",
        )

    def _index(self) -> dict[str, tuple[str, str, Scalar]]:
        if self._by_id is not None:
            return self._by_id
        by_id: dict[str, tuple[str, str, Scalar]] = {}
        resources = self._resources
        text_of = resources.text_of if isinstance(resources, Records) else None
        for address in resources:
            text = text_of(address) if text_of is not None else None
            if text is not None and (
                "superseded" not in text if isinstance(text, str) else b"superseded" not in text
            ):
                continue  # replaced nothing: not parsed
            record = self._recorded(address)
            if record is None or not record.superseded:
                continue
            parsed = Address.parse(address)
            id_field = model_of(parsed.kind).id_field if parsed is not None else None
            if id_field is None:
                continue
            now = record.outputs.get(id_field)
            for entry in record.superseded:
                outputs = entry.get("outputs") if isinstance(entry, Mapping) else None
                old = outputs.get(id_field) if isinstance(outputs, Mapping) else None
                if old is not None and old != now and not isinstance(old, dict | list):
                    by_id[str(old)] = (address, id_field, now)
        self._by_id = by_id
        return by_id
