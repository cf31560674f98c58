"""ExportCancellation: known by its declaration; pending until customs decides."""

from __future__ import annotations

from types import SimpleNamespace
from typing import cast

from customs_batch.client import CustomsClient
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


class _Declarations:
    """A client whose export declarations answer ``status``."""

    def __init__(self, status: str) -> None:
        self.status = status

    def get_declaration(self, declaration_id: int) -> SimpleNamespace:
        return SimpleNamespace(raw={"declarationId": declaration_id, "status": self.status})


def test_its_status_words_are_found_in_either_case() -> None:
    # CANCELED is how the API document's transit list writes canceled: the same decision.
    model = model_of(KIND)
    assert model.refresh is not None
    asked = ResourceRecord(
        "ExportCancellation/c",
        RecordStatus.APPLIED,
        "cancel-export",
        {"declarationId": 501},
        outputs={"declarationId": 501, "canceled": False},
    )
    found = model.refresh(cast(CustomsClient, _Declarations("CANCELED")), [asked])
    answer = found["ExportCancellation/c"]
    assert answer is not None and answer.outputs == {"declarationId": 501, "canceled": True}
    assert "CANCELLATION_REQUESTED" in model.pending_states
    assert "RELEASED" in model.rejected_states and "CANCELED" not in model.rejected_states


def test_a_status_word_the_api_does_not_give_is_undecided_never_done() -> None:
    model = model_of(KIND)
    for word in ("cancellation_pending", "CANCELLATION_REQ", "done"):
        assert model.unknown_state(word) and model.undecided(word), word
        assert "never counted as done" in model.unknown_words(word)
    assert model.undecided("cancellation_requested")
    known: tuple[str | None, ...] = ("canceled", "CANCELED", "submitted", None)
    for state in known:
        assert not model.unknown_state(state) and not model.undecided(state), state
        assert model.unknown_words(state) == ""
    # A kind without done_states knows every word it is shown.
    movement = model_of(Kind.MOVEMENT)
    assert movement.done_states is None and not movement.unknown_state("cancellation_pending")


def test_a_declaration_read_not_yet_submitted_had_its_cancellation_undone_not_refused() -> None:
    # Found by an outside probe: after the service's data was reset, 501 was `ready` again,
    # and plan, status and the notification said customs refused the cancellation. A ready
    # declaration is cancelled at once by DELETE: nothing was refused, and sending the
    # cancellation again ends with it cancelled.
    from customs_batch.execution.reconcile import entry_lines, status_entries
    from customs_batch.execution.results import ResultStatus, recorded_result
    from customs_batch.planning import plan_changes
    from customs_batch.state import State

    from ..planning.helpers import doc

    model = model_of(KIND)
    assert "ready" not in model.rejected_states and "ready" in model.undone_states
    assert "submitted" in model.rejected_states and "invalid" in model.undone_states
    assert not model.unknown_state("ready") and not model.undecided("ready")
    record = ResourceRecord(
        "ExportCancellation/c",
        RecordStatus.APPLIED,
        "cancel-export",
        {"declarationId": 501},
        outputs={"declarationId": 501, "canceled": False},
        remote_status="ready",
    )
    state = State(lineage="lin", serial=3)
    state.apply(record.address, record)
    (change,) = plan_changes([doc(KIND, "c", {"declarationId": 501}, 0)], state).changes
    assert (change.action, change.operation.value) == (Action.CREATE, "cancel-export")
    assert "501 is ready at the service again" in change.reason
    assert "refused" not in change.reason
    (entry,) = status_entries(state)
    assert not entry.rejected and entry.undone
    # Not done: counted blocking, as the next apply sends it again.
    assert entry.blocks
    assert "undone" in entry_lines(entry)[0] and "rejected" not in entry_lines(entry)[0]
    result = recorded_result(change.address, record)
    assert result.status is ResultStatus.NOT_APPLIED
    assert "the next apply sends it again" in result.errors[0]


def test_a_status_of_a_submitted_declaration_after_the_cancellation_was_granted_is_undone() -> None:
    # Found by an outside probe: a cancellation read granted (canceled), its declaration
    # then read `submitted` again (the service's data reset), was said refused by customs
    # (plan rejected, status exit 1, "remove the document, then state rm"): following that
    # left the declaration uncancelled. Customs never takes a cancellation back: the record
    # keeps that it was granted (done_at), and the kind reads the status as undone.
    from customs_batch.execution.reconcile import status_entries
    from customs_batch.execution.results import ResultStatus, recorded_result
    from customs_batch.kinds.model import Reading
    from customs_batch.planning import plan_changes
    from customs_batch.state import State

    from ..planning.helpers import doc

    model = model_of(KIND)
    requested = ResourceRecord(
        "ExportCancellation/c",
        RecordStatus.APPLIED,
        "cancel-export",
        {"declarationId": 502},
        outputs={"declarationId": 502, "canceled": False},
        remote_status="cancellation_requested",
        updated_at="2026-01-01T00:00:00.000Z",
    )
    assert model.noting_done(requested, "2026-01-02T00:00:00.000Z") is requested
    granted = model.noting_done(
        requested.with_changes(remote_status="canceled"), "2026-01-02T00:00:00.000Z"
    )
    assert granted.done_at == "2026-01-02T00:00:00.000Z"
    assert model.noting_done(granted, "2026-01-03T00:00:00.000Z") is granted  # first kept
    assert ResourceRecord.from_json(granted.address, granted.to_json()) == granted
    for word in ("submitted", "ACCEPTED", "released"):
        # Never granted: customs refused it. Granted before: undone at the service.
        assert model.reading(word, requested) is Reading.REJECTED, word
        assert model.reading(word, granted) is Reading.UNDONE, word
    assert model.reading("canceled", granted) is Reading.DONE
    assert model.reading("cancellation_requested", granted) is Reading.PENDING
    assert model.reading("ready", granted) is Reading.UNDONE
    assert model.reading("ready", requested) is Reading.UNDONE

    reset = granted.with_changes(remote_status="submitted")
    state = State(lineage="lin", serial=3)
    state.apply(reset.address, reset)
    (change,) = plan_changes([doc(KIND, "c", {"declarationId": 502}, 0)], state).changes
    assert (change.action, change.operation.value) == (Action.CREATE, "cancel-export")
    assert "refused" not in change.reason
    (entry,) = status_entries(state)
    assert entry.undone and not entry.rejected and entry.blocks
    result = recorded_result(change.address, reset)
    assert result.status is ResultStatus.NOT_APPLIED
    assert "the next apply sends it again" in result.errors[0]
    # Not granted before: refused, as customs said.
    refused = requested.with_changes(remote_status="submitted")
    state.apply(refused.address, refused)
    (change,) = plan_changes([doc(KIND, "c", {"declarationId": 502}, 0)], state).changes
    assert change.action is Action.REJECTED
    assert recorded_result(change.address, refused).status is ResultStatus.REJECTED
