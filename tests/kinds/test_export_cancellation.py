"""ExportCancellation: known by its declaration; pending until customs decides."""

from __future__ import annotations

from customs_batch.kinds import Kind
from customs_batch.kinds.actions import Action
from customs_batch.kinds.export_cancellation import service_words
from customs_batch.kinds.registry import model_of
from customs_batch.state import RecordStatus, ResourceRecord
from tests.kinds.helpers import after_unknown, identity

KIND = Kind.EXPORT_CANCELLATION


def test_its_identity_is_its_declaration() -> None:
    assert identity(KIND, {"declarationId": 501}) != identity(KIND, {"declarationId": 502})


def test_a_requested_cancellation_is_pending_and_a_refused_one_rejected() -> None:
    model = model_of(KIND)
    asked = ResourceRecord(
        "ExportCancellation/c",
        RecordStatus.APPLIED,
        "cancel-export",
        {},
        outputs={"canceled": False},
    )
    assert service_words(asked) == "cancellation_requested"
    assert "cancellation_requested" in model.pending_states
    assert service_words(asked.with_changes(outputs={"canceled": True})) == "canceled"
    assert not model.pending_states & model.rejected_states
    assert after_unknown(KIND).action is Action.CREATE  # a DELETE is safe to repeat
