"""``history`` as functions: the requests an environment's history holds, and its proof.

:func:`read_history` gives one :class:`HistoryRow` per request (its ``request`` entry with
the ``answer`` that followed, if any) and per record-only operation (a move, a drop), oldest
first; :func:`verify_history` walks the hash chain (``customs_batch.state.history``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from customs_batch.commands._inputs import Inputs
from customs_batch.errors import UsageError
from customs_batch.state.history import HistoryStore, Verification, history_for, verify

NO_ANSWER = "unknown"
"""The status of a request whose answer was never recorded (the run was killed)."""


@dataclass(frozen=True)
class HistoryOptions:
    """Which history (``inputs.environment``), of which address, from when."""

    inputs: Inputs
    address: str | None = None
    since: datetime | None = None


@dataclass(frozen=True)
class HistoryRow:
    """One request and what came back, or one record-only operation."""

    seq: int
    time: str
    run: str
    operator: Mapping[str, Any]
    commit: str
    address: str
    operation: str
    event: str
    idempotency_key: str | None = None
    status: int | str = NO_ANSWER
    answered_at: str | None = None
    requests: tuple[Mapping[str, Any], ...] = ()
    ids: Mapping[str, Any] | None = None
    mrn: str | None = None
    errors: Any = None
    failure: str | None = None
    moved_from: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The row as the JSON format prints it."""
        return {
            "seq": self.seq,
            "time": self.time,
            "run": self.run,
            "operator": dict(self.operator),
            "commit": self.commit,
            "address": self.address,
            "operation": self.operation,
            "event": self.event,
            "idempotencyKey": self.idempotency_key,
            "status": self.status,
            "answeredAt": self.answered_at,
            "requests": [dict(r) for r in self.requests],
            "ids": dict(self.ids or {}),
            "mrn": self.mrn,
            "errors": self.errors,
            "failure": self.failure,
            "movedFrom": self.moved_from,
        }


def parse_since(text: str) -> datetime:
    """``--since``: a date (``2026-11-25``) or a time (``2026-11-25T10:00:00Z``); UTC when
    no zone is given."""
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise UsageError(
            f"--since {text!r} is not a date",
            hint="give a date like 2026-11-25 or a time like 2026-11-25T10:00:00Z",
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _store(inputs: Inputs) -> HistoryStore:
    environment = inputs.chosen_environment()
    return history_for(inputs.backend(environment))


def read_history(options: HistoryOptions) -> list[HistoryRow]:
    """The rows of the chosen environment's history, oldest first, filtered."""
    store = _store(options.inputs)
    try:
        return [row for row in history_rows(store) if _selected(row, options)]
    finally:
        store.close()


def verify_history(inputs: Inputs) -> Verification:
    """Whether the chosen environment's history chain is unbroken, and where it breaks."""
    store = _store(inputs)
    try:
        return verify(store.entries())
    finally:
        store.close()


def _selected(row: HistoryRow, options: HistoryOptions) -> bool:
    if options.address is not None and options.address not in (row.address, row.moved_from):
        return False
    if options.since is not None:
        try:
            moment = datetime.fromisoformat(row.time)
        except ValueError:
            return True  # a time this version cannot read is shown rather than hidden
        return moment >= options.since
    return True


def history_rows(store: HistoryStore) -> Iterator[HistoryRow]:
    """Requests joined with their answers, in the order the requests were written."""
    rows: dict[int, HistoryRow] = {}
    for stored in store.entries():
        body = stored.body()
        if body is None or not isinstance(body.get("seq"), int):
            continue  # `history verify` reports it
        event = body.get("event")
        request = body.get("request")
        if event == "answer" and type(request) is int and request in rows:
            rows[request] = _answered(rows[request], body)
            continue
        rows[body["seq"]] = HistoryRow(
            seq=body["seq"],
            time=str(body.get("time", "")),
            run=str(body.get("run", "")),
            operator=_object(body.get("operator")) or {},
            commit=str(body.get("commit") or ""),
            address=str(body.get("address", "")),
            operation=str(body.get("operation", "")),
            event=str(event),
            idempotency_key=body.get("idempotencyKey"),
            status=NO_ANSWER if event == "request" else "recorded",
            ids=_object(body.get("ids")),
            moved_from=body.get("movedFrom"),
        )
    yield from rows.values()


def _object(value: Any) -> Mapping[str, Any] | None:
    """``value`` when it is a JSON object, else None. An entry edited by hand is still
    shown (``history verify`` names it): a field of the wrong shape is shown as absent."""
    return value if isinstance(value, Mapping) else None


def _answered(row: HistoryRow, answer: Mapping[str, Any]) -> HistoryRow:
    attempts = answer.get("requests")
    return replace(
        row,
        status=answer.get("status", NO_ANSWER),
        answered_at=answer.get("time"),
        requests=tuple(
            attempt
            for attempt in (attempts if isinstance(attempts, list) else ())
            if isinstance(attempt, Mapping)
        ),
        ids=_object(answer.get("ids")),
        mrn=answer.get("mrn"),
        errors=answer.get("errors"),
        failure=answer.get("failure"),
    )
