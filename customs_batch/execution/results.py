"""Where each spreadsheet row stands after apply: the row's documents, the IDs the service
gave them, their status from the state, the service's errors and when the last outcome was
recorded.

A row of a ``forEach`` spreadsheet gives one document (one per manifest that expands over
the sheet), or none when it has errors. :func:`row_results` joins the documents (with their
``source``: file, sheet, row), the validation's findings and the state, and asks each kind's
model what its IDs and service states mean; it never asks which kind it holds.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from types import MappingProxyType
from typing import Any

from customs_batch.execution.names import MovedName, moved_names, renamed_records
from customs_batch.findings import CsvReading, Finding, Severity, column_letter
from customs_batch.jsontypes import JSON
from customs_batch.kinds import Address
from customs_batch.kinds.actions import Action
from customs_batch.kinds.model import Reading, ServiceId, describe_error
from customs_batch.kinds.registry import model_of
from customs_batch.manifest import Document, discover, iter_file
from customs_batch.planning.graph import dependencies
from customs_batch.sensitive import is_digest, sensitive_paths, values_at
from customs_batch.state.lock import InFlight, running_request
from customs_batch.state.model import RecordStatus, ResourceRecord, Scalar, State


class ResultStatus(StrEnum):
    """Where a row (or one of its documents) stands, in the words ``results`` prints."""

    REJECTED = "rejected"
    """The service refused the last request, or customs rejected the declaration."""
    INVALID = "invalid"
    """The row's document has errors (``validate`` lists them): it cannot be applied."""
    NO_DOCUMENT = "no-document"
    """The row gave no document: a cell or an expression failed on it."""
    SKIPPED = "skipped"
    """Not sent: a document it depends on was refused (or skipped itself)."""
    NEEDS_DECISION = "needs-decision"
    """The outcome of the last request is unknown (see ``state adopt``), or ``refresh``
    found the object no longer at the service (see ``state rm --gone``)."""
    PENDING = "pending"
    """Sent; the service or customs has not decided yet (processing, cancellation asked)."""
    NOT_APPLIED = "not-applied"
    """Valid, and not sent yet."""
    FORGOTTEN = "forgotten"
    """Removed from the state by ``state rm``: no longer followed."""
    NOT_SELECTED = "not-selected"
    """Left out by ``-l``, ``--target`` or ``--exclude``."""
    DONE = "done"
    """Created or updated, and accepted as far as the state knows."""

    @property
    def outcome(self) -> Outcome:
        """The colour of the status: what the analyst has to do about the row."""
        return _OUTCOMES[self]


class Outcome(StrEnum):
    """What a status means for the row: failed (red), waiting (yellow), done (green), or
    none of these (not part of the run)."""

    FAILED = "failed"
    WAITING = "waiting"
    DONE = "done"
    NONE = "none"


_OUTCOMES = {
    ResultStatus.REJECTED: Outcome.FAILED,
    ResultStatus.INVALID: Outcome.FAILED,
    ResultStatus.NO_DOCUMENT: Outcome.FAILED,
    ResultStatus.SKIPPED: Outcome.FAILED,
    ResultStatus.NEEDS_DECISION: Outcome.WAITING,
    ResultStatus.PENDING: Outcome.WAITING,
    ResultStatus.NOT_APPLIED: Outcome.WAITING,
    ResultStatus.FORGOTTEN: Outcome.NONE,
    ResultStatus.NOT_SELECTED: Outcome.NONE,
    ResultStatus.DONE: Outcome.DONE,
}

_RANK = {status: rank for rank, status in enumerate(ResultStatus)}
"""The first status of the enum is the worst: a row takes its worst document's."""


_NO_IDS: Mapping[ServiceId, Scalar] = MappingProxyType({})
"""The IDs of a document the service gave none: one mapping shared by every such result
(a dict each took 64 bytes a row)."""
_NONE: frozenset[Any] = frozenset()
"""One empty set for every row (``frozenset(())`` makes a new one each time, 216 bytes)."""


@dataclass(frozen=True, slots=True)
class DocumentResult:
    """One document of a row: its address, the IDs the service gave it, where it stands,
    the service's errors (or why it was not sent) and when its last outcome was recorded."""

    address: str
    status: ResultStatus
    ids: Mapping[ServiceId, Scalar] = field(default_factory=lambda: _NO_IDS)
    service_state: str | None = None
    errors: tuple[str, ...] = ()
    at: str = ""

    def to_json(self) -> dict[str, JSON]:
        return {
            "address": self.address,
            "status": self.status.value,
            "ids": {what.value: value for what, value in self.ids.items()},
            "serviceState": self.service_state,
            "errors": list(self.errors),
            "at": self.at or None,
        }


@dataclass(frozen=True, slots=True)
class RowResult:
    """One spreadsheet row: ``file``, ``sheet`` and ``row`` as validate names them, its
    documents (none when it gave none), and the row's findings that kept it from being
    applied."""

    file: str
    sheet: str
    row: int
    documents: tuple[DocumentResult, ...] = ()
    problems: tuple[str, ...] = ()
    withheld: frozenset[bytes] = field(default=frozenset(), repr=False, compare=False)
    """Keyed digests (:func:`cell_mark`) of the sensitive values the row's documents hold (a
    guarantee's access code): a copy of the sheet empties the columns that hold them."""
    withheld_columns: frozenset[int] = field(default=frozenset(), repr=False, compare=False)
    """The columns (numbers) read into a sensitive value of the row's documents, however
    composed (``"AC{{ row.Access }}"``): a copy of the sheet empties them too."""
    header: int | None = field(default=None, compare=False)
    """The row of the sheet's column names (``forEach.header``), when a document of the
    row says; None for a row that gave none."""
    reading: CsvReading | None = field(default=None, compare=False)
    """For a CSV file: the encoding and delimiter its ``forEach`` states, which a copy of
    the file reads it with (None: detected)."""

    def withholds(self, value: object) -> bool:
        """Whether a cell holding ``value`` gave (or holds) a sensitive value of the row."""
        return bool(self.withheld) and value is not None and cell_mark(value) in self.withheld

    @property
    def status(self) -> ResultStatus:
        """The worst status of its documents; ``no-document`` when it has none."""
        if not self.documents:
            return ResultStatus.NO_DOCUMENT
        return min((doc.status for doc in self.documents), key=_RANK.__getitem__)

    @property
    def errors(self) -> tuple[str, ...]:
        """What went wrong: the row's problems, then each document's errors."""
        return (*self.problems, *(error for doc in self.documents for error in doc.errors))

    @property
    def at(self) -> str:
        """When the last outcome of its documents was recorded ("" when none was)."""
        return max((doc.at for doc in self.documents), default="")

    def ids(self, what: ServiceId) -> tuple[Scalar, ...]:
        """The IDs of ``what`` its documents were given, in document order."""
        return tuple(doc.ids[what] for doc in self.documents if what in doc.ids)

    def to_json(self) -> dict[str, JSON]:
        return {
            "file": self.file,
            "sheet": self.sheet,
            "row": self.row,
            "status": self.status.value,
            "documents": [doc.to_json() for doc in self.documents],
            "errors": list(self.errors),
            "at": self.at or None,
        }


RowKey = tuple[str, str, int]


def row_results(
    documents: Sequence[Document],
    findings: Iterable[Finding],
    state: State,
    selected: Iterable[Address] | None = None,
    in_flight: InFlight | None = None,
) -> list[RowResult]:
    """Every spreadsheet row the documents and findings name, by file, sheet and row.

    ``documents`` are every document of the manifests (those with errors too),
    ``findings`` the validation's, ``selected`` the addresses a selection chose (None:
    all of them); ``in_flight``: for the time a record whose outcome is unknown was
    written, why it is a request of a run still holding the state's lock (pending, not a
    decision to make).
    """
    chosen = None if selected is None else set(selected)
    findings = list(findings)
    statuses = _Statuses(documents, state, _invalid_documents(findings), chosen, in_flight)
    rows: dict[RowKey, list[DocumentResult]] = {}
    problems: dict[RowKey, list[str]] = {}
    withheld: dict[RowKey, set[bytes]] = {}
    columns: dict[RowKey, set[int]] = {}
    headers: dict[RowKey, int] = {}
    readings: dict[str, CsvReading] = {}
    for doc in documents:
        source = doc.source
        if source.sheet is None:
            continue
        key = (source.file, source.sheet, source.line)
        if source.header is not None:
            headers[key] = source.header
        if source.reading is not None:
            readings[source.file] = source.reading
        rows.setdefault(key, []).append(statuses.result(doc.address))
        marks = _sensitive_marks(doc)
        if marks:
            withheld.setdefault(key, set()).update(marks)
        if doc.sensitive_columns:
            columns.setdefault(key, set()).update(n for n, _ in doc.sensitive_columns)
    for finding in findings:
        location = finding.location
        if location.sheet is None or not location.row or finding.severity is not Severity.ERROR:
            continue
        key = (location.file, location.sheet, location.row)
        if location.reading is not None:
            readings[location.file] = location.reading
        rows.setdefault(key, [])
        problems.setdefault(key, []).append(finding_text(finding))
    return [
        RowResult(
            *key,
            tuple(rows[key]),
            tuple(dict.fromkeys(problems.get(key, ()))),
            frozenset(withheld[key]) if key in withheld else _NONE,
            frozenset(columns[key]) if key in columns else _NONE,
            headers.get(key),
            readings.get(key[0]),
        )
        for key in sorted(rows)
    ]


_MARK_KEY = secrets.token_bytes(32)
"""The key of this process's cell marks: a mark is never written, and says nothing of a
short code (four digits) without it."""


def cell_mark(value: object) -> bytes:
    """The keyed digest of a value as a cell shows it (text, spaces around left out)."""
    return hmac.new(_MARK_KEY, str(value).strip().encode(), hashlib.sha256).digest()


def _sensitive_marks(doc: Document) -> set[bytes]:
    return {
        cell_mark(value)
        for path in sensitive_paths(doc.kind)
        for _, value in values_at(doc.spec, path)
        if value not in (None, "") and not is_digest(value)
    }


def finding_text(finding: Finding) -> str:
    """A finding as a row's error: its rule, its column when it has one, its message."""
    location = finding.location
    where = ""
    if location.column_number >= 1:
        where = f" (column {column_letter(location.column_number)} {location.column_name or ''})"
    elif location.column_name:
        where = f" (column {location.column_name})"
    return f"[{finding.rule}]{where.replace(' )', ')')} {finding.message}"


def _invalid_documents(findings: Sequence[Finding]) -> set[str]:
    return {f.document for f in findings if f.severity is Severity.ERROR and f.document}


class _Statuses:
    """The status of each document, memoized: a document without a record is skipped when
    one it depends on failed or was skipped, which asks that one's status."""

    def __init__(
        self,
        documents: Sequence[Document],
        state: State,
        invalid: set[str],
        chosen: set[Address] | None,
        in_flight: InFlight | None = None,
    ) -> None:
        self.state = state
        self.in_flight = in_flight
        self.invalid = invalid
        self.chosen = chosen
        self.needs = dependencies(documents)
        self.moved: dict[str, MovedName] = moved_names(documents, state)
        self.renamed = renamed_records(documents, state)
        self.done: dict[Address, DocumentResult] = {}

    def result(
        self, address: Address, visiting: frozenset[Address] = frozenset()
    ) -> DocumentResult:
        known = self.done.get(address)
        if known is None:
            known = self._result(address, visiting | {address})
            self.done[address] = known
        return known

    def _result(self, address: Address, visiting: frozenset[Address]) -> DocumentResult:
        text = str(address)
        record = self.state.resources.get(text)
        moved = self.moved.get(text)
        if moved is not None:
            # Its name's record is another row's declaration: neither its IDs nor its state.
            why = moved.words()
            return DocumentResult(
                text,
                ResultStatus.NEEDS_DECISION,
                errors=(why,),
                at=record.updated_at if record else "",
            )
        if record is not None and not record.never_created:
            return recorded_result(address, record, self.in_flight)
        earlier = self.renamed.get(text)
        if earlier is not None and (old := Address.parse(earlier.address)) is not None:
            # Renamed since the last apply: what the service holds is under the old name.
            found = recorded_result(old, earlier, self.in_flight)
            note = (
                f"recorded as {earlier.address}, a name no document has now: this document "
                "renamed since the last apply (`customs-batch plan` shows whether the next "
                "apply moves that record to this name)"
            )
            return replace(found, address=text, errors=(note, *found.errors))
        if record is not None:
            return recorded_result(address, record, self.in_flight)
        if text in self.invalid:
            return DocumentResult(text, ResultStatus.INVALID, errors=("the row has errors",))
        if self.chosen is not None and address not in self.chosen:
            return DocumentResult(text, ResultStatus.NOT_SELECTED)
        for needed in self.needs.get(address, ()):
            if needed in visiting:
                continue  # a cycle is validate's to report
            found = self.result(needed, visiting)
            if found.status.outcome is Outcome.FAILED:
                why = f"not sent: it depends on {needed}, which is {found.status.value}"
                return DocumentResult(text, ResultStatus.SKIPPED, errors=(why,))
        return DocumentResult(text, ResultStatus.NOT_APPLIED)


def recorded_result(
    address: Address,
    record: ResourceRecord,
    in_flight: InFlight | None = None,
) -> DocumentResult:
    """Where a recorded document stands, as its kind's model reads the record; a request
    of a run still holding the state's lock (``in_flight`` says why) is pending."""
    model = model_of(address.kind)
    ids = model.ids(record)
    text, at = str(address), record.updated_at
    if record.status is RecordStatus.FORGOTTEN:
        return DocumentResult(text, ResultStatus.FORGOTTEN, ids, at=at)
    running = running_request(in_flight, record)
    if running:
        return DocumentResult(text, ResultStatus.PENDING, ids, errors=(running,), at=at)
    if record.status.outcome_unknown:
        decision = model.unknown_outcome(address, record, datetime.now(UTC))
        if decision.action is not Action.NEEDS_DECISION:
            # Repeated safely by the next apply (a movement with its recorded key): nothing
            # to decide, and forgetting it would send it as new.
            why = f"the outcome of the last request is unknown: the next apply repeats it ({decision.reason})"
            return DocumentResult(text, ResultStatus.NOT_APPLIED, ids, errors=(why,), at=at)
        why = "the outcome of the last request is unknown: see `customs-batch state adopt`"
        if record.not_found_at is not None:  # and its object not found, or another there
            why = decision.reason
        return DocumentResult(text, ResultStatus.NEEDS_DECISION, ids, errors=(why,), at=at)
    if record.kept_key is not None:  # taken back by `state forget`: refused by no one
        why = record.error.message if record.error else ""
        return DocumentResult(text, ResultStatus.NOT_APPLIED, ids, errors=(why,), at=at)
    if record.status is RecordStatus.FAILED:
        refused = (record.error.message,) if record.error and record.error.message else ()
        return DocumentResult(text, ResultStatus.REJECTED, ids, errors=refused, at=at)
    if record.status is RecordStatus.APPLIED and record.not_found_at is not None:
        why = model.not_found_words(text, record, record.not_found_at, record.found_instead)
        return DocumentResult(text, ResultStatus.NEEDS_DECISION, ids, errors=(why,), at=at)
    words = model.service_words(record) or record.outputs.get("status")
    state = None if words is None else str(words)
    errors = tuple(service_error_text(error) for error in record.remote_errors)
    ended = model.ended(record)
    if ended is not None:
        return DocumentResult(text, ResultStatus.NEEDS_DECISION, ids, state, (ended,), at)
    reading = model.reading(state, record)
    if reading is Reading.UNDONE:
        undone = (
            f"{model.identifier(record)} is {state} at the service again: what it did is "
            "undone there, and the next apply sends it again"
        )
        return DocumentResult(text, ResultStatus.NOT_APPLIED, ids, state, (undone,), at)
    if reading is Reading.REJECTED:
        status = ResultStatus.REJECTED
    elif model.undecided(state) or state in model.processing_states:
        status = ResultStatus.PENDING
    else:
        status = ResultStatus.DONE
    return DocumentResult(text, status, ids, state, errors, at)


def service_error_text(error: JSON) -> str:
    """One entry of the service's ``errors``: ``CODE field: message`` where it has them,
    as status, plan and apply show it."""
    return describe_error(error)


@dataclass(frozen=True, order=True)
class RowPlace:
    """The spreadsheet row a document came from: file, sheet and row, as validate names
    them."""

    file: str
    sheet: str
    row: int

    def to_json(self) -> dict[str, JSON]:
        return {"file": self.file, "sheet": self.sheet, "row": self.row}


def spreadsheet_rows(paths: Sequence[Path], state: State | None = None) -> dict[str, RowPlace]:
    """The row of every document the manifests under ``paths`` make from a spreadsheet, by
    address. Read leniently: a file or row with errors gives what it can, and nothing is
    checked beyond what loading does (``status`` groups by it and needs no more).

    With ``state``, by the address of the record that holds what the row declares: where
    the names moved with the rows (:func:`moved_names`), a record is the declaration of the
    row that declares it, not of the row its name is now given to."""
    places: dict[str, RowPlace] = {}
    documents: list[Document] = []
    for file in discover(paths):
        for item in iter_file(file):
            if not isinstance(item, Document):
                continue
            documents.append(item)
            source = item.source
            if source.sheet is not None:
                places[str(item.address)] = RowPlace(source.file, str(source.sheet), source.line)
    if state is None:
        return places
    moved = moved_names(documents, state)
    own = dict(places)
    # A record whose document was renamed since the last apply: under that document's row.
    for address, earlier in renamed_records(documents, state).items():
        if address in own and earlier.address not in own:
            places[earlier.address] = own[address]
    for address in moved:
        places.pop(address, None)
    # Each record of a moved name under the row that declares it, if one does.
    for address, name in moved.items():
        if name.declarer is not None and str(name.declarer.address) in own:
            places[address] = own[str(name.declarer.address)]
        if name.holder is not None and address in own:
            places[name.holder.address] = own[address]
    return places
