"""Validate whole folders of manifests: load files in parallel, check, sort the findings.

Memory stays flat as the number of files grows: each file is loaded and its documents are
checked one by one (schema and rules) where it was loaded, then only a slim copy of every
document travels on to the project-wide checks: its address, references, dependsOn, the few
spec fields those checks read, a digest of the whole spec, and the handful of positions they
report at (see :func:`slim_document`). One big file is still held whole while it is checked.

Big inputs are loaded by a pool of processes, file by file (:mod:`customs_batch.workers`).
"""

from __future__ import annotations

import dataclasses
import gc
import hashlib
import json
import pickle
import sys
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from customs_batch.collector import bulk
from customs_batch.findings import Finding, JsonPath, Severity
from customs_batch.kinds import Address
from customs_batch.kinds.registry import KINDS
from customs_batch.load_cache import MAX_CACHED_DOCUMENTS, LoadCache, each_file_cached
from customs_batch.manifest import NO_ROW_IN_RANGE, RowRange, discover, iter_file, load_paths
from customs_batch.manifest.document import Document, Position
from customs_batch.manifest.rows.positions import RowPositions
from customs_batch.sensitive import has_sensitive, masked
from customs_batch.validation.checks import document_findings, validate_documents
from customs_batch.validation.common import IDENTITY_KEY, SPEC_DIGEST_KEY
from customs_batch.validation.findings_cap import FindingsCap, capped_at_each_file
from customs_batch.validation.ownership import PARTY_FIELDS_KEY, party_fields
from customs_batch.validation.project import (
    NO_ADDRESSES,
    ProjectPart,
    broken_addresses,
    declared_identity,
    named,
    project_findings,
    project_part,
)
from customs_batch.validation.sensitive_cells import (
    SensitiveCells,
    SheetColumn,
    value_lines,
    without_lines,
)
from customs_batch.validation.suppressions import ANNOTATION
from customs_batch.validation.team_rules import check_team_rules, finish


def _project_spec_keys() -> tuple[str, ...]:
    """The spec fields the project-wide checks read, as the kinds' models name them (template
    codes and their company, the HAWB of movements and deactivations, the declaration a
    party update or a cancellation is aimed at, and the variant of one)."""
    keys: dict[str, None] = {}
    for model in KINDS.values():
        if model.unique is not None:
            keys.update(dict.fromkeys((model.unique.field, model.unique.within)))
        keys.update(dict.fromkeys(model.lane_fields))
        if model.ends_lanes is not None:
            keys.update(dict.fromkeys(model.ends_lanes.fields))
        if model.takes_id is not None:
            keys[model.takes_id.field] = None
            if model.takes_id.variants:
                keys["variant"] = None
        if model.parties is not None and model.parties.updates is not None:
            keys.update(dict.fromkeys((model.parties.updates, "variant")))
    return tuple(keys)


_PROJECT_SPEC_KEYS = _project_spec_keys()
_PARTY_KINDS = frozenset(kind for kind, model in KINDS.items() if model.parties is not None)
"""The kinds whose documents write party fields (a departure, a party update)."""
_PARTY_UPDATES = frozenset(
    kind for kind, model in KINDS.items() if model.parties and model.parties.updates
)
"""The kinds that write the party fields of another document's declaration."""
_shapes: dict[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]] = {}
"""The party fields documents write, one tuple for each shape: rows of one sheet share it."""


@dataclass(frozen=True, slots=True)
class DocumentEntry:
    """What a report needs to know of one document: its address and where it starts."""

    address: str
    file: str
    line: int

    @classmethod
    def of(cls, document: Document) -> DocumentEntry:
        """The entry of ``document``."""
        return cls(str(document.address), document.source.file, document.source.line)

    def fields(self) -> tuple[str, str, int]:
        """Its values, to send as a plain tuple (pickled 100,000 times at most)."""
        return (self.address, self.file, self.line)


@dataclass(frozen=True)
class ValidationResult:
    """The outcome of validating a set of paths: findings in report order, and what was read."""

    findings: tuple[Finding, ...]
    documents: tuple[DocumentEntry, ...]
    files: tuple[str, ...]
    suppressed: tuple[Finding, ...] = ()
    """Findings a suppression with a reason silenced: reported apart, never failing."""
    edges: tuple[tuple[str, str, str], ...] = ()
    """The documents' dependencies within the batch, for a picture, when asked for
    (``validate_paths(graph=True)``): (what comes first, what waits for it, why:
    ``reference`` or ``dependsOn``)."""
    sensitive_columns: frozenset[SheetColumn] = frozenset()
    """The spreadsheet columns that gave a sensitive value (a guarantee's access code) in
    some row: an annotated copy leaves them empty."""

    @property
    def document_count(self) -> int:
        """How many documents were checked."""
        return len(self.documents)

    def counts(self) -> Counter[Severity]:
        """How many findings of each severity (every severity present, 0 when none)."""
        counts: Counter[Severity] = Counter(dict.fromkeys(Severity, 0))
        counts.update(finding.severity for finding in self.findings)
        return counts

    def failed(self, *, strict: bool = False) -> bool:
        """Whether the findings fail the run: any error, or any warning under ``strict``."""
        counts = self.counts()
        return counts[Severity.ERROR] > 0 or (strict and counts[Severity.WARNING] > 0)


@dataclass(frozen=True)
class RenderResult:
    """Documents as ``render`` prints them, and the validation of the same input."""

    documents: list[dict[str, Any]]
    result: ValidationResult


class _Slims:
    """A file's slim documents (see :func:`slim_document`), pickled apart: a run that takes
    the file from the load cache, or from a loading process, reads them only when asked for
    (when the file shares something with another, see
    :func:`customs_batch.validation.project.project_findings`, or for a graph), and their
    :class:`DocumentEntry` from a table sent beside them."""

    __slots__ = ("_data", "_documents", "_entries")

    def __init__(
        self,
        documents: list[Document] | None,
        data: bytes | None = None,
        entries: tuple[tuple[str, str, int], ...] = (),
    ) -> None:
        self._documents = documents
        self._data = data
        self._entries = entries

    def get(self) -> list[Document]:
        if self._documents is None:
            assert self._data is not None
            with bulk():  # see validate_paths
                self._documents = pickle.loads(self._data)
            self._data = None
        return self._documents

    def entries(self) -> Iterator[DocumentEntry]:
        """What a report needs to know of each document (without reading the documents)."""
        if self._documents is None:
            return (DocumentEntry(*entry) for entry in self._entries)
        return map(DocumentEntry.of, self._documents)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        data, entries = self._data, self._entries
        if self._documents is not None:
            data = pickle.dumps(self._documents, protocol=pickle.HIGHEST_PROTOCOL)
            entries = tuple(DocumentEntry.of(d).fields() for d in self._documents)
        return _slims_of, (data, entries)


def _slims_of(data: bytes, entries: tuple[tuple[str, str, int], ...]) -> _Slims:
    return _Slims(None, data, entries)


@dataclass(frozen=True, slots=True)
class _FileOutcome:
    """What a worker sends back for one file: small, whatever the size of the file.

    Held for every file of a run: with slots, and its empty sets shared once read back
    (:func:`_file_outcome`), a file without documents held 1.76 KB before, most of it a
    dict of attributes and three empty sets of 216 bytes each."""

    file: str
    findings: list[Finding]
    project: ProjectPart
    """The project-wide checks over this file alone."""
    broken: frozenset[Address]
    """The file's documents left out for an error already reported, by address."""
    annotated: list[Document]
    """The slim copies of the documents with a suppress annotation."""
    slims: _Slims
    sensitive_columns: frozenset[SheetColumn] = frozenset()
    """The file's spreadsheet columns that gave a sensitive value (see
    :func:`sensitive_columns`)."""

    @property
    def documents(self) -> list[Document]:
        """The slim copies of the file's documents (see :func:`slim_document`)."""
        return self.slims.get()

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        fields = (self.findings, self.project, self.broken, self.annotated, self.slims)
        return _file_outcome, (self.file, *fields, self.sensitive_columns)


def _file_outcome(
    file: str,
    findings: list[Finding],
    project: ProjectPart,
    broken: frozenset[Address],
    annotated: list[Document],
    slims: _Slims,
    sensitive_columns: frozenset[SheetColumn],
) -> _FileOutcome:
    """A file's outcome read back (from a loading process, from the load cache)."""
    return _FileOutcome(
        file,
        findings,
        project,
        broken or NO_ADDRESSES,
        annotated,
        slims,
        sensitive_columns or NO_COLUMNS,
    )


NO_COLUMNS: frozenset[SheetColumn] = frozenset()
"""The one empty set of columns that outcomes read back share."""


def validate_paths(
    paths: Sequence[Path | str],
    *,
    jobs: int | None = None,
    mrn_check_digit: Severity | None = Severity.ERROR,
    rows: RowRange | None = None,
    hs_codes: Severity | None = Severity.WARNING,
    unlocodes: Severity | None = Severity.WARNING,
    cache: bool = False,
    graph: bool = False,
) -> ValidationResult:
    """Load and validate every manifest under ``paths``.

    ``jobs`` is the number of loading processes; None picks one per CPU for big inputs
    (see :func:`customs_batch.workers.worker_count`), else 1. ``mrn_check_digit`` is the severity of a wrong
    MRN or GRN check character (None: not checked), ``hs_codes`` that of a commodity code
    whose HS subheading does not exist, ``unlocodes`` that of a UN/LOCODE missing from the
    code list. ``rows`` limits every ``forEach``. With ``cache``, each file's findings and
    documents are taken from the load cache while nothing they depend on has changed
    (:mod:`customs_batch.load_cache`). The project-wide checks run over each file where it
    is loaded, and again over the files that share something with another file
    (:func:`customs_batch.validation.project.project_findings`). With ``graph``,
    the result holds the documents' dependencies too (for a report that draws them: 0.2 s
    at 100,000 rows, so only when asked).
    """
    files = [str(path) for path in discover([Path(path) for path in paths])]
    findings: list[Finding] = []
    settings = _Settings(mrn_check_digit, hs_codes, rows, unlocodes)
    hint = "run again with --jobs 1 to validate in one process"
    stored = LoadCache.for_run("validate", settings, enabled=cache)
    outcomes = each_file_cached(
        files, _check_file, settings, jobs, hint=hint, cache=stored, file_of=str
    )
    # Reading 1,000 cached entries builds many objects at once: with the collector running,
    # it scanned them again and again, twice the time of the reading (measured). Frozen
    # after, as a plan's are, so the report's collections skip them too.
    with bulk():
        done = list(outcomes)
    broken: set[Address] = set()
    columns: set[SheetColumn] = set()
    for outcome in done:
        findings.extend(outcome.findings)
        broken |= outcome.broken
        columns |= outcome.sensitive_columns

    def complete(index: int) -> list[Document]:
        # A row with values left out was checked on its own, never across documents.
        return [doc for doc in done[index].documents if not doc.left_out]

    with _collector_paused():  # 100,000 slim documents from one spreadsheet: see there
        project = project_findings([o.project for o in done], complete, broken)
        findings.extend(capped_at_each_file(project, findings))
    annotated = [doc for outcome in done for doc in outcome.annotated]
    entries = tuple(entry for outcome in done for entry in outcome.slims.entries())
    if rows is not None:
        findings = rows_named_none(findings, entries, files)
    kept, suppressed = finish(findings, annotated, files)
    slims = [doc for outcome in done for doc in outcome.documents] if graph else []
    return ValidationResult(
        sorted_findings(kept),
        entries,
        tuple(files),
        sorted_findings(suppressed),
        document_edges(slims) if graph else (),
        frozenset(columns),
    )


def render_paths(
    paths: Sequence[Path | str],
    *,
    mrn_check_digit: Severity | None = Severity.ERROR,
    rows: RowRange | None = None,
    hs_codes: Severity | None = Severity.WARNING,
    unlocodes: Severity | None = Severity.WARNING,
) -> RenderResult:
    """Load, validate and expand every document under ``paths``, all held in memory."""
    loaded = load_paths([Path(path) for path in paths], rows=rows, partial=True)
    findings = [*loaded.findings]
    findings.extend(
        validate_documents(
            loaded.documents,
            mrn_check_digit=mrn_check_digit,
            hs_codes=hs_codes,
            unlocodes=unlocodes,
            broken=broken_addresses(loaded.findings),
        )
    )
    entries = tuple(DocumentEntry.of(doc) for doc in loaded.documents)
    if rows is not None:
        findings = rows_named_none(findings, entries, loaded.files)
    kept, suppressed = finish(findings, loaded.documents, loaded.files)
    result = ValidationResult(
        sorted_findings(kept), entries, tuple(loaded.files), sorted_findings(suppressed)
    )
    complete = [doc for doc in loaded.documents if not doc.left_out]
    return RenderResult([expanded(doc) for doc in complete], result)


def rows_named_none(
    findings: list[Finding], entries: Sequence[DocumentEntry], files: Sequence[str]
) -> list[Finding]:
    """``findings``, where ``--rows`` named no data row of any ``forEach`` sheet (a range
    past every sheet's last row, a typo), with each sheet's "no data rows in the rows asked
    for" warning an error: a run that read no row is not a green run. A sheet that has rows
    in the range while another has none keeps the warning."""
    empty = [finding for finding in findings if finding.signal == NO_ROW_IN_RANGE]
    if not empty:
        return findings
    manifests = set(files)
    read_a_row = any(entry.file not in manifests for entry in entries) or any(
        finding.location.file not in manifests for finding in findings
    )
    if read_a_row:
        return findings
    hint = (
        "--rows names no data row of any sheet: check the range against the sheets' row "
        "numbers (the header is not a data row)"
    )
    errors = {
        id(finding): dataclasses.replace(finding, severity=Severity.ERROR, hint=hint)
        for finding in empty
    }
    return [errors.get(id(finding), finding) for finding in findings]


def document_edges(documents: Sequence[Document]) -> tuple[tuple[str, str, str], ...]:
    """Each document's references and ``dependsOn`` to another document of the batch, once
    per pair (the planner adds the order of movements in a lane; a picture of what a
    manifest says needs only these)."""
    present = {str(doc.address) for doc in documents}
    reasons: dict[tuple[str, str], list[str]] = {}
    for doc in documents:
        address = str(doc.address)
        pointed = [(str(ref.target), "reference") for ref in doc.references]
        pointed += [(str(target), "dependsOn") for target in doc.depends_on]
        for target, reason in pointed:
            if target in present and target != address:
                why = reasons.setdefault((target, address), [])
                if reason not in why:
                    why.append(reason)
    return tuple((first, then, ", ".join(why)) for (first, then), why in reasons.items())


def expanded(document: Document) -> dict[str, Any]:
    """A document as it will be sent: envelope and the merged, rendered spec."""
    metadata: dict[str, Any] = {"name": document.name}
    if document.depends_on:
        metadata["dependsOn"] = [str(address) for address in document.depends_on]
    if document.labels:
        metadata["labels"] = dict(document.labels)
    if document.annotations:
        metadata["annotations"] = dict(document.annotations)
    return {
        "apiVersion": "customs-batch/v1",
        "kind": document.kind.value,
        "metadata": metadata,
        "spec": _plain(document.spec),
    }


def sort_key(finding: Finding) -> tuple[str, int, int, str, str]:
    """Report order: by file, line, column, then rule and message for a stable output."""
    loc = finding.location
    return (loc.file, loc.line, loc.column, finding.rule, finding.message)


def sorted_findings(findings: Iterable[Finding]) -> tuple[Finding, ...]:
    """``findings`` in report order, exact duplicates removed.

    Findings alike in :func:`sort_key` (one check's at two paths of a document, told at its
    start) are put in the order of their whole text: a set's order follows the hashes of
    strings, which change from one process to the next, and a report of the same input must
    be the same bytes every run."""
    unique = list(set(findings))
    keys = list(map(sort_key, unique))
    order = sorted(range(len(unique)), key=keys.__getitem__)
    ordered = [unique[at] for at in order]
    if len(set(keys)) == len(keys):  # nearly always: no two alike
        return tuple(ordered)
    keys = [keys[at] for at in order]
    start = 0
    for at in range(1, len(keys) + 1):
        if at == len(keys) or keys[at] != keys[start]:
            if at - start > 1:
                ordered[start:at] = sorted(ordered[start:at], key=repr)
            start = at
    return tuple(ordered)


def slim_document(document: Document) -> Document:
    """A copy of ``document`` holding only what the project-wide checks read.

    The spec keeps the fields those checks look at and a digest of the whole spec, so two
    slim specs are equal exactly when the full ones are; positions keep only the places
    those checks report at, so their findings point where they would on the full document.
    """
    spec: dict[str, Any] = {
        key: _shared(key, document.spec[key]) for key in _PROJECT_SPEC_KEYS if key in document.spec
    }
    # Its access codes left out: the digest lives in the load cache, and a plain one over a
    # four-digit code and the rest of the spec (`render --format json` prints it) is undone
    # by trying the 10,000 codes. Two documents differing only there are then one request
    # (project.duplicate-request), as they declare the same thing, which plan refuses.
    spec[SPEC_DIGEST_KEY] = _digest(
        masked(document.kind, document.spec) if has_sensitive(document.kind) else document.spec
    )
    declared = declared_identity(document)
    if declared is not None:
        spec[IDENTITY_KEY] = declared
    if document.kind in _PARTY_KINDS:
        written = tuple(party_fields(document.spec))
        spec[PARTY_FIELDS_KEY] = _shapes.setdefault(written, written)
    return Document(
        kind=document.kind,
        name=document.name,
        spec=spec,
        source=document.source,
        index=document.index,
        depends_on=document.depends_on,
        annotations=document.annotations,
        references=document.references,
        left_out=document.left_out,
        # A spreadsheet row's positions are computed when asked for, from a table every
        # row shares: kept as they are, they cost a few bytes instead of a dict (100,000 rows).
        positions=(
            document.positions.untraced()
            if isinstance(document.positions, RowPositions)
            else project_positions(document)
        ),
    )


def _shared(key: str, value: Any) -> Any:
    # The same shipment or company on many rows: one string for all of them, not one per
    # row's cell (HAWBs, unique per row, are left alone).
    if key == "hawbId" or type(value) is not str or len(value) > 64:
        return value
    return sys.intern(value)


def project_positions(document: Document) -> dict[JsonPath, Position]:
    """The few positions of ``document`` the project-wide checks report at."""
    wanted: list[JsonPath] = [(), ("metadata", "name"), ("spec",), ("spec", "code")]
    wanted.extend((("spec", "hawbId"), ("spec", "variant")))
    if ANNOTATION in document.annotations:
        wanted.append(("metadata", "annotations", ANNOTATION))
    if document.kind in _PARTY_UPDATES:
        wanted.extend(("spec", *written) for written in party_fields(document.spec))
    wanted.extend(("metadata", "dependsOn", index) for index in range(len(document.depends_on)))
    for reference in document.references:
        path = reference.path
        wanted.append(path if path[:1] == ("spec",) else ("spec", *path))
    positions: dict[JsonPath, Position] = {}
    for path in wanted:
        found = _nearest_position(document, path)
        if found is not None:
            positions[found[0]] = found[1]
    return positions


def _nearest_position(document: Document, path: JsonPath) -> tuple[JsonPath, Position] | None:
    # The same walk as Document.locate, keeping the path it stopped at.
    probe = path
    while True:
        position = document.positions.get(probe)
        if position is not None:
            return probe, position
        if not probe:
            return None
        probe = probe[:-1]


def _digest(spec: Any) -> int:
    # An int, not a hex string: half the bytes, for each of 100,000 rows. (Two requests
    # differing only by 1 and 1.0 are one at the service: the plan refuses them by their
    # identities, which compare numbers by value; a second dumps here cost validate 15 %.)
    text = json.dumps(spec, sort_keys=True, separators=(",", ":"), default=str)
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest())


@dataclass(frozen=True)
class _Settings:
    """The options of the checks, sent to each worker."""

    mrn_check_digit: Severity | None
    hs_codes: Severity | None
    rows: RowRange | None
    unlocodes: Severity | None = Severity.WARNING


def _check_file(file: str, settings: _Settings) -> _FileOutcome:
    """Load one file and check each of its documents; runs in a worker or in-process.

    Documents are streamed and only their slim copies kept: a forEach over a spreadsheet
    of 100,000 rows never holds 100,000 full documents."""
    findings: list[Finding] = []
    cap = FindingsCap()
    slims: list[Document] = []
    cells = SensitiveCells()
    quoted: set[tuple[str, int]] = set()
    with _collector_paused():
        for item in iter_file(Path(file), rows=settings.rows, partial=True):
            if not isinstance(item, Document):
                if cap.admit(item):
                    findings.append(item)
                continue
            cells.note(item)
            quoted |= value_lines(item)
            checked = document_findings(
                item,
                mrn_check_digit=settings.mrn_check_digit,
                hs_codes=settings.hs_codes,
                unlocodes=settings.unlocodes,
            )
            findings += cap.admitted(checked)
            findings += cap.admitted(check_team_rules(item))
            slims.append(slim_document(item))
        findings += cap.left_out()
        left_out = {doc.address for doc in slims if doc.left_out}
        broken = broken_addresses(findings) | named(cap.left_out_documents) | left_out
        complete = [doc for doc in slims if not doc.left_out] if left_out else slims
        project = project_part(complete, broken, keys=len(slims) <= MAX_CACHED_DOCUMENTS)
    annotated = [doc for doc in slims if ANNOTATION in doc.annotations]
    findings = without_lines(cells.withheld(findings), quoted)
    return _FileOutcome(
        file, findings, project, frozenset(broken), annotated, _Slims(slims), cells.columns()
    )


@contextmanager
def _collector_paused() -> Iterator[None]:
    # The checks make no reference cycles, but the cycle collector would scan every object of
    # a big file's documents again and again: for 10,000 documents in one file it doubled
    # the time. Paused only while checking, restored as it was.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _plain(value: Any) -> Any:
    """Mappings and sequences of any type as plain dicts and lists, for the dumpers."""
    if isinstance(value, dict) or hasattr(value, "items"):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value
