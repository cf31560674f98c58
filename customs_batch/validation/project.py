"""Project-wide checks: what no single document shows, only the batch as a whole.

What a kind brings to them is its model's (``kinds/<kind>.py``): its outputs, a field the
service keeps unique (``unique``), whether two equal requests may be meant
(``duplicate_meant``), the lanes of another kind its documents end (``ends_lanes``).
"""

from __future__ import annotations

import hashlib
import json
import pickle
from array import array
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any, cast

from customs_batch.findings import Finding, Location, Severity, a_or_an
from customs_batch.kinds import Address, Kind
from customs_batch.kinds.checks import LaneEnd, UniqueField
from customs_batch.kinds.model import normal_text
from customs_batch.kinds.registry import KINDS, model_of
from customs_batch.manifest.document import Document, Reference
from customs_batch.validation.common import IDENTITY_KEY, SPEC_DIGEST_KEY, is_reference
from customs_batch.validation.cross_document import check_cross_documents
from customs_batch.validation.cycles import find_cycles
from customs_batch.validation.order import check_order, lane_key, order_keys
from customs_batch.validation.ownership import check_owners, owner_keys

# What the checks below ask of each document's kind, as plain tables (asked of every
# document of a batch of 100,000).
_UNIQUE: dict[Kind, UniqueField] = {k: m.unique for k, m in KINDS.items() if m.unique}
_MEANT: dict[Kind, str] = {k: m.duplicate_meant for k, m in KINDS.items() if m.duplicate_meant}
_DECLARING: dict[Kind, Callable[[Any], tuple[str, ...]]] = {
    kind: model.identity
    for kind, model in KINDS.items()
    if model.identity is not None
    and model.lane is None  # each movement has its place in its lane: never twins
    and kind not in _UNIQUE  # a unique field repeated is reported as such
    and not (model.parties is not None and model.parties.updates)  # one owner per field
}
"""The kinds whose plan refuses two documents of one identity (``Identities``: sending
both would declare the same thing twice), with the identity of a spec."""
_LEFT_OUT: dict[Kind, tuple[tuple[str, ...], str]] = {
    k: (m.lane_fields, m.lane_left_out) for k, m in KINDS.items() if m.lane_left_out
}
"""The lane fields of a kind, and what a document is without one of them."""
_ENDS: dict[Kind, LaneEnd] = {k: m.ends_lanes for k, m in KINDS.items() if m.ends_lanes}
_ENDED: dict[Kind, tuple[tuple[str, ...], ...]] = {
    of: tuple(dict.fromkeys(end.fields for end in _ENDS.values() if end.of is of))
    for of in {end.of for end in _ENDS.values()}
}
"""The fields of each lane a document of the kind may be in that another kind ends."""


def check_project(documents: Sequence[Document], broken: Collection[Address] = ()) -> list[Finding]:
    """Findings about the batch: addresses, references, cycles, duplicated work, party
    fields written by two documents, movements of one HAWB in several files without order.

    ``broken`` are the addresses of documents left out for an error already reported: they
    are in the batch, so a reference to one is not reported again as naming nothing.

    Validate and plan run it a file at a time (:func:`project_findings`): a check added
    here must add what it relates documents by to :func:`meeting_keys`.
    """
    first: dict[Address, Document] = {}
    findings: list[Finding] = []
    for document in documents:
        earlier = first.setdefault(document.address, document)
        if earlier is not document:
            findings.append(_duplicate_address(document, earlier))
    findings.extend(_references(documents, first, frozenset(broken)))
    findings.extend(_cycles(first))
    findings.extend(_duplicate_unique_fields(documents))
    findings.extend(_duplicate_requests(documents))
    findings.extend(_same_declarations(documents))
    findings.extend(_lanes_left_out(documents))
    findings.extend(_ended_lanes(documents))
    findings.extend(check_owners(documents))
    findings.extend(check_order(documents))
    findings.extend(check_cross_documents(documents, first))
    return findings


# -- the checks, a file at a time -----------------------------------------------------------
#
# Every finding above is about documents that share something: a name (written, referred
# to, depended on, or one differing only by case), a request, a code of a company, a lane,
# a declaration whose party fields they write. Documents that share nothing never meet in
# a finding, and a document's findings do not depend on documents it shares nothing with,
# nor on where those stand in the batch (only the order among the documents that meet
# counts). So each file's findings can be worked out over the file alone, once, where it
# is loaded (and kept in the load cache with it); only the files that share something with
# another file are checked again together. A run with 10 files changed out of 1,000 checks
# those 10 again, not the 100,000 documents, and its findings are those of checking all of
# them at once (tests/validation/test_project_parts.py compares the two).
#
# A check added above must say here what it relates documents by (meeting_keys), or files
# would be checked apart that it relates.


class ProjectPart:
    """What one file brings to the project-wide checks: what its documents could share with
    another file's (``keys``, see :func:`meeting_keys`; None when they are worked out only if
    the run has other files, from the documents and ``broken``), and the findings of the
    checks over the file alone.

    Sent from a loading process and kept in the load cache with its findings pickled apart,
    read when asked for: a run reads every file's findings after its documents, not between
    them, so that the memory they take is freed in one piece (91,000 warnings read between
    the documents of 1,000 files raised a plan's peak from 375 to 399 MiB, measured)."""

    __slots__ = ("_data", "_findings", "broken", "keys", "severe")

    def __init__(
        self,
        keys: bytes | None,
        findings: tuple[Finding, ...] = (),
        data: bytes | None = None,
        broken: frozenset[Address] = frozenset(),
        severe: bool | None = None,
    ) -> None:
        self.keys = keys
        self._findings = findings
        self._data = data
        self.broken = broken
        self.severe = (
            any(finding.severity is Severity.ERROR for finding in findings)
            if severe is None
            else severe
        )
        """Whether any of the findings is an error (known without reading them)."""

    @property
    def findings(self) -> tuple[Finding, ...]:
        if self._data is not None:
            self._findings = pickle.loads(self._data)
            self._data = None
        return self._findings

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        data = self._data
        if data is None and self._findings:
            data = pickle.dumps(self._findings, protocol=pickle.HIGHEST_PROTOCOL)
        return _project_part, (self.keys, data, self.broken, self.severe)


NO_ADDRESSES: frozenset[Address] = frozenset()
"""The one empty set of addresses that parts and outcomes read back share (an empty set is
216 bytes, and each read back is one of its own)."""


def _project_part(
    keys: bytes | None, data: bytes | None, broken: frozenset[Address], severe: bool
) -> ProjectPart:
    return ProjectPart(keys, (), data, broken or NO_ADDRESSES, severe)


def project_part(
    documents: Sequence[Document], broken: Collection[Address], *, keys: bool = True
) -> ProjectPart:
    """The checks over one file's ``documents`` alone (``broken``: the file's documents left
    out for an error already reported). Without ``keys`` they are worked out later, and only
    if the run has other files (a big export that is never cached: keys for each of its rows
    would cost every run, most of which read that one file)."""
    if len(documents) == 1 and not documents[0].references and not documents[0].depends_on:
        # Every finding of these checks is about two documents, or about what a document
        # names: a file of one document naming nothing has none (most of a repository of
        # one document a file; checking each alone cost it 7 %).
        findings: tuple[Finding, ...] = ()
    else:
        findings = tuple(check_project(documents, broken))
    if keys:
        return ProjectPart(meeting_keys(documents, broken), findings)
    return ProjectPart(None, findings, broken=frozenset(broken))


def project_findings(
    parts: Sequence[ProjectPart],
    documents_of: Callable[[int], Sequence[Document]],
    broken: Collection[Address] = (),
    *,
    errors_only: bool = False,
) -> list[Finding]:
    """The findings of :func:`check_project` over every file of the batch, from each file's
    ``parts`` (in batch order): a file that shares nothing with another keeps its own
    findings; the files that share something are checked again together, their documents
    asked of ``documents_of`` (the file's place in ``parts``). ``broken``: as for
    :func:`check_project`, of the whole batch. With ``errors_only``, a file that shares
    nothing and has no error brings nothing (its warnings are not read): every error is
    there, and some warnings (for a run that needs to know only whether there is an
    error)."""
    keys = [
        part.keys
        if part.keys is not None or len(parts) < 2
        else meeting_keys(documents_of(index), part.broken)
        for index, part in enumerate(parts)
    ]
    meets = sharing(keys)
    findings = [
        finding
        for part, meet in zip(parts, meets, strict=True)
        if not meet and (part.severe or not errors_only)
        for finding in part.findings
    ]
    together = [doc for index, meet in enumerate(meets) if meet for doc in documents_of(index)]
    if together:
        findings.extend(check_project(together, broken))
    return findings


def sharing(keys: Sequence[bytes | None]) -> list[bool]:
    """For the keys of each part (:func:`meeting_keys`; None: a part alone), whether it
    shares one with another part."""
    if len(keys) < 2:
        return [False] * len(keys)
    known = [part or b"" for part in keys]
    # Set operations over each file's keys, no loop over documents here; the biggest part's
    # keys are only looked up, never held in a set (a spreadsheet of 100,000 rows beside a
    # few small files would hold 300,000 numbers: 25 MB).
    order = sorted(range(len(known)), key=lambda index: len(known[index]))
    seen: set[int] = set()
    shared: set[int] = set()
    for index in order[:-1]:
        numbers = key_numbers(known[index])
        shared.update(seen.intersection(numbers))
        seen.update(numbers)
    shared.update(seen.intersection(key_numbers(known[order[-1]])))
    return [not shared.isdisjoint(key_numbers(part)) for part in known]


def key_numbers(keys: bytes) -> memoryview:
    """The keys of :func:`meeting_keys` as numbers (8 bytes each, read as this machine reads
    them: every part of a run is read the same way)."""
    return memoryview(keys).cast("Q")


_KEY_BATCH = 8192  # texts of keys gathered before they are digested: a bound on memory


def meeting_keys(documents: Iterable[Document], broken: Iterable[Address] = ()) -> bytes:
    """What ``documents`` could share with documents of another file, as the checks relate
    them: two documents a check relates always share a key (two documents sharing a key need
    not be related: a key may stand for more than the check compares, and two keys may have
    the same digest).

    8 bytes of a digest per key, one after another: stable from run to run (they are kept in
    the load cache), 8 bytes a key (100,000 rows of a spreadsheet keep 1.6 MB), and holding
    no value of a document."""
    digests = bytearray()
    texts: set[str] = {_name_key(address) for address in broken}
    add = texts.add
    for document in documents:
        kind = document.kind
        add(f"n\0{kind._value_}\0{document.name.casefold()}")  # names, in any case
        for reference in document.references:
            add(_name_key(reference.target))
        for target in document.depends_on:
            add(_name_key(target))
        end = _ENDS.get(kind)
        for fields in (*_ENDED.get(kind, ()), *((end.fields,) if end is not None else ())):
            ended = _lane_key(document, fields)
            if ended is not None:
                add(lane_key(ended))
        lanes = order_keys(document)
        texts.update(lanes)
        texts.update(owner_keys(document))
        unique = _UNIQUE.get(kind)
        if unique is not None:
            value = document.spec.get(unique.field)
            value = normal_text(value) if isinstance(value, str) else value
            add(f"u\0{kind._value_}\0{document.spec.get(unique.within)!r}\0{value}")
        elif not lanes:
            # A lane is made of the spec alone: two documents sending the same request are
            # in the same lane, and already share its key.
            add(_request_key(document))
        if kind in _LEFT_OUT and document.source.sheet is not None:
            add(_sheet_key(document))
        declared = declared_identity(document)
        if declared is not None:
            add(f"d\1{kind._value_}\1{declared[0]}")
        if len(texts) >= _KEY_BATCH:
            digests += _digests(texts)
            texts.clear()
    digests += _digests(texts)
    return bytes(digests)


def _digests(texts: Iterable[str]) -> bytes:
    blake2b = hashlib.blake2b
    return b"".join(
        blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest() for text in texts
    )


def _name_key(address: Address) -> str:
    return f"n\0{address.kind._value_}\0{address.name.casefold()}"


_EXACT_SCALARS = frozenset((str, int, float, bool, type(None)))


def _request_key(document: Document) -> str:
    """What two documents sending the same request share: the kind and the spec's
    top-level values of the plain types (values of other types, nested ones too, are left
    out: two equal specs give the same text). A slim document holds a digest of its whole
    spec: that is what it shares with equal ones."""
    digest = document.spec.get(SPEC_DIGEST_KEY)
    if type(digest) is int:
        return f"r\0{document.kind._value_}\0{digest}"
    parts = sorted(
        f"{key}\0{type(value).__name__}\0{value!r}"
        for key, value in document.spec.items()
        if type(value) in _EXACT_SCALARS
    )
    return "\1".join(("r", document.kind._value_, *parts))


def where(document: Document) -> str:
    """``file:line`` of a document, for messages naming another document."""
    return f"{document.source.file}:{document.source.line}"


def _finding(
    document: Document,
    rule: str,
    location: Location,
    message: str,
    hint: str,
    severity: Severity = Severity.ERROR,
) -> Finding:
    return Finding(rule, severity, message, location, hint, document=str(document.address))


def _duplicate_address(document: Document, earlier: Document) -> Finding:
    message = f"{document.address} is defined twice; the first is at {where(earlier)}"
    hint = "names must be unique within a kind: rename one of them"
    return _finding(
        document, "project.duplicate-address", document.locate(("metadata", "name")), message, hint
    )


def reference_location(document: Document, reference: Reference) -> Location:
    """Where a reference was written (its path may be given with or without ``spec``)."""
    path = reference.path if reference.path[:1] == ("spec",) else ("spec", *reference.path)
    return document.locate(path)


def broken_addresses(findings: Iterable[Finding]) -> frozenset[Address]:
    """The addresses that loading findings name: documents written but not built."""
    return named(finding.document for finding in findings if finding.document is not None)


def named(documents: Iterable[str]) -> frozenset[Address]:
    """The addresses of ``documents`` (``Kind/name``) that are addresses."""
    return frozenset(a for a in map(Address.parse, set(documents)) if a is not None)


def _references(
    documents: Sequence[Document], known: dict[Address, Document], broken: frozenset[Address]
) -> list[Finding]:
    findings = []
    for document in documents:
        for reference in document.references:
            if reference.target in broken and reference.target not in known:
                continue
            finding = _reference(document, reference, known)
            if finding is not None:
                findings.append(finding)
        for index, target in enumerate(document.depends_on):
            if target not in known and target not in broken:
                location = document.locate(("metadata", "dependsOn", index))
                message = f"dependsOn names {target}, which is not in the batch"
                hint = "check the kind and name, or remove the entry"
                rule = "project.unknown-dependency"
                findings.append(_finding(document, rule, location, message, hint))
    return findings


def _reference(
    document: Document, reference: Reference, known: dict[Address, Document]
) -> Finding | None:
    location = reference_location(document, reference)
    target = reference.target
    if target not in known:
        message = f"{reference.text} refers to {target}, which is not in the batch"
        hint = "check the kind and name, or add the document it refers to"
        return _finding(document, "project.unknown-reference", location, message, hint)
    fields = model_of(target.kind).outputs
    if reference.field in fields:
        return None
    message = (
        f"{reference.text}: {a_or_an(target.kind.value)} has no outcome field {reference.field!r}"
    )
    hint = f"use one of: {', '.join(sorted(fields))}"
    return _finding(document, "project.unknown-output-field", location, message, hint)


def _cycles(known: dict[Address, Document]) -> list[Finding]:
    """One finding per cycle, at the ``dependsOn`` entry or reference of its first document
    that closes it (removing any one edge of the cycle breaks it). A cycle of thousands of
    documents is still one finding naming its first few members and their count: a finding
    per member, each printing the whole path, grew as the square of its length."""
    # Only a document that names another can be on a cycle: the rest (every row of a
    # spreadsheet, say) are left out of the search and its tables.
    edges: dict[Address, list[Address]] = {}
    for address, doc in known.items():
        if doc.references or doc.depends_on:
            targets = (*(r.target for r in doc.references), *doc.depends_on)
            edges[address] = [t for t in targets if t in known]
    findings = []
    hint = "break the cycle: remove a reference or a dependsOn entry from one of these documents"
    for cycle in find_cycles(edges):
        document = known[cycle[0]]
        location = _edge_location(document, cycle[1 % len(cycle)])
        message = describe_cycle([str(address) for address in cycle])
        findings.append(_finding(document, "project.cycle", location, message, hint))
    return findings


CYCLE_SHOWN = 5  # members of a cycle a message names before it counts the rest


def describe_cycle(members: Sequence[str]) -> str:
    """``dependency cycle: a -> b -> a``; a longer cycle names its first members and a count."""
    if len(members) <= CYCLE_SHOWN:
        return "dependency cycle: " + " -> ".join((*members, members[0]))
    shown = " -> ".join(members[:CYCLE_SHOWN])
    rest = len(members) - CYCLE_SHOWN
    return (
        f"dependency cycle of {len(members):,} documents: {shown} -> ... "
        f"({rest:,} more) -> {members[0]}"
    )


def _edge_location(document: Document, target: Address) -> Location:
    """Where ``document`` names ``target``: its dependsOn entry, else its reference."""
    for index, named in enumerate(document.depends_on):
        if named == target:
            return document.locate(("metadata", "dependsOn", index))
    for reference in document.references:
        if reference.target == target:
            return reference_location(document, reference)
    return document.locate(())


def _duplicate_unique_fields(documents: Sequence[Document]) -> list[Finding]:
    """Each document sharing the value of a field its kind keeps unique (a template group's
    code within its company) with another of that kind, at that field."""
    groups: dict[tuple[Kind, str, str], list[Document]] = {}
    uniques: dict[Kind, UniqueField] = {}
    for document in documents:
        unique = _UNIQUE.get(document.kind)
        if unique is None:
            continue
        value, within = document.spec.get(unique.field), document.spec.get(unique.within)
        if not isinstance(value, str) or is_reference(value):
            continue
        uniques[document.kind] = unique
        # As plan compares it (its identity): "MÜLLER" composed and decomposed, or with a
        # space after it, is one code.
        key = (document.kind, repr(within), normal_text(value))  # repr: hashable
        groups.setdefault(key, []).append(document)
    findings = []
    for (kind, _, _), group in groups.items():
        unique = uniques[kind]
        for document in group if len(group) > 1 else ():
            others = [other for other in group if other is not document]
            more = f" (and {len(others) - 1} more)" if len(others) > 1 else ""
            there = others[0].locate(("spec", unique.field))
            mine, theirs = document.spec[unique.field], others[0].spec[unique.field]
            spelled = (
                f" (written {theirs!r} there: the same letters in another Unicode form, or "
                "with spaces around them)"
                if mine != theirs
                else ""
            )
            message = (
                f"{unique.what} {mine!r} of {unique.within_word} "
                f"{document.spec.get(unique.within)} is also used by {others[0].address} at "
                f"{there.file}:{there.line}{spelled}{more}"
            )
            location = document.locate(("spec", unique.field))
            findings.append(
                _finding(
                    document, "project.duplicate-template-code", location, message, unique.hint
                )
            )
    return findings


def _exact(spec: Any) -> int | str:
    """What equal specs, and only they, share: a slim spec's digest of its whole spec (a
    number it already holds), else the spec's canonical JSON. No kind's schema lets a written
    spec hold that key, so a spec that does is reported as an error whatever this finds."""
    digest = spec.get(SPEC_DIGEST_KEY)
    if type(digest) is int:
        return digest
    return json.dumps(spec, sort_keys=True, separators=(",", ":"), default=str)


_SCALARS = (str, int, float, bool)  # a tuple: isinstance with a union is slower


def _fingerprint(document: Document) -> int:
    """A cheap key that equal specs of one kind share: a hash of the kind and the top-level
    scalar fields. Only a hash is kept: the sets themselves, one per document, were most of
    the memory of this check over 100,000 spreadsheet rows; documents whose hashes collide
    are told apart by their kind and canonical JSON anyway."""
    scalars = frozenset(
        (key, value)
        for key, value in document.spec.items()
        if value is None or isinstance(value, _SCALARS)
    )
    return hash((document.kind, scalars))


_FINGERPRINT_PARTS = 4
"""The table of fingerprints is built a part of them at a time: a table of 100,000 at once
(each key a Python number) was 10 MB at the top of a bulk load's memory."""


def _duplicate_requests(documents: Sequence[Document]) -> list[Finding]:
    # The exact test (canonical JSON of a full spec) costs tens of microseconds a document:
    # only documents whose cheap fingerprints collide pay for it. A fingerprint seen once keeps
    # its document alone, not in a list: most of 100,000 rows are seen once. Fingerprints are
    # kept packed, 8 bytes a document, and grouped a part at a time (by the fingerprint, so
    # that equal ones meet in one part); the findings come in the order of each group's
    # first document, as one table over them all would give them.
    # Two equal documents of a kind with a unique field share it: that check reports them.
    prints = array("q", (0 if doc.kind in _UNIQUE else _fingerprint(doc) for doc in documents))
    found: list[tuple[int, list[Finding]]] = []
    for part in range(_FINGERPRINT_PARTS):
        groups: dict[int, int | list[int]] = {}
        for place, key in enumerate(prints):
            if key % _FINGERPRINT_PARTS != part:
                continue
            if not key and documents[place].kind in _UNIQUE:
                continue
            group = groups.setdefault(key, place)
            if isinstance(group, list):
                group.append(place)
            elif group != place:
                groups[key] = [group, place]
        for group in groups.values():
            if not isinstance(group, list):
                continue
            seen: dict[tuple[Kind, int | str], Document] = {}
            findings = []
            for place in group:
                document = documents[place]
                earlier = seen.setdefault((document.kind, _exact(document.spec)), document)
                if earlier is not document and earlier.address != document.address:
                    findings.append(_duplicate_request(document, earlier))
            if findings:
                found.append((group[0], findings))
    found.sort(key=lambda pair: pair[0])
    return [finding for _, findings in found for finding in findings]


def _sheet_key(document: Document) -> str:
    """What the rows of one sheet of one kind share (two manifests may read one sheet)."""
    source = document.source
    return f"s\0{document.kind._value_}\0{source.file}\0{source.sheet}"


def _lanes_left_out(documents: Sequence[Document]) -> list[Finding]:
    """Rows of a sheet that leave out a lane field the sheet's other rows give (an empty
    cell leaves its field out): each is a warning saying what such a document is."""
    given: dict[tuple[str, str], int] = {}
    missing: list[tuple[Document, str]] = []
    for document in documents:
        left_out = _LEFT_OUT.get(document.kind)
        if left_out is None or document.source.sheet is None:
            continue
        key = _sheet_key(document)
        for field in left_out[0]:
            if field in document.spec:
                given[(key, field)] = given.get((key, field), 0) + 1
            else:
                missing.append((document, field))
    findings = []
    for document, field in missing:
        others = given.get((_sheet_key(document), field), 0)
        if not others:
            continue
        source = document.source
        message = (
            f"{document.address} (row {source.line}) gives no {field}, where {others} other "
            f"row(s) of {source.file} give one: {_LEFT_OUT[document.kind][1]}"
        )
        hint = (
            f"fill the row's {field} cell; if the row is meant so, say why in a suppression "
            "(docs/validation.md, Suppressions)"
        )
        location = document.locate(("spec",))
        findings.append(
            _finding(document, "project.lane-left-out", location, message, hint, Severity.WARNING)
        )
    return findings


DeclaredIdentity = tuple[int, tuple[str, ...]]
"""What a document declares, kept small (a slim document of each of 100,000 rows holds
one): a digest of its identity's words, and the fields they name (one tuple for every
document of a shape)."""
_FIELDS: dict[tuple[str, ...], tuple[str, ...]] = {}


def declared_identity(document: Document) -> DeclaredIdentity | None:
    """What ``document`` declares, as its kind's plan tells two declarations apart (None
    for a kind whose plan takes two equal ones as two: movements, each in its place)."""
    identify = _DECLARING.get(document.kind)
    if identify is None:
        return None
    kept = document.spec.get(IDENTITY_KEY)
    if type(kept) is tuple:  # a slim document's (a manifest's YAML never gives a tuple)
        return cast(DeclaredIdentity, kept)
    words = identify(document.spec)
    text = "\0".join(words).encode("utf-8", "surrogatepass")
    digest = int.from_bytes(hashlib.blake2b(text, digest_size=16).digest())
    fields = tuple(word.partition("=")[0] for word in words if not word.startswith("place="))
    return digest, _FIELDS.setdefault(fields, fields)


def _same_declarations(documents: Sequence[Document]) -> list[Finding]:
    """Two documents that declare the same thing (the same declarant, reference, offices
    and goods), which plan refuses: sending both would declare it twice. Equal requests
    are ``project.duplicate-request`` already."""
    first: dict[tuple[Kind, int], Document] = {}
    findings = []
    for document in documents:
        declared = declared_identity(document)
        if declared is None:
            continue
        earlier = first.setdefault((document.kind, declared[0]), document)
        if earlier is document or earlier.address == document.address:
            continue
        if _exact(earlier.spec) == _exact(document.spec):
            continue
        message = (
            f"{document.address} declares the same {', '.join(declared[1])} as "
            f"{earlier.address} at {where(earlier)}: sending both would declare it twice, and "
            "plan refuses it"
        )
        hint = "remove one of them; if they are really different, make them differ in these fields"
        location = document.locate(("spec",))
        findings.append(_finding(document, "project.same-declaration", location, message, hint))
    return findings


def _duplicate_request(document: Document, earlier: Document) -> Finding:
    message = (
        f"{document.address} would send the same request as {earlier.address} at {where(earlier)}"
    )
    # Two equal movements may be meant (two loads of the same size); anything else twice is a
    # mistake. The kind's model says which (``duplicate_meant``).
    meant = _MEANT.get(document.kind)
    severity = Severity.ERROR if meant is None else Severity.WARNING
    hint = "remove one of them, or change what differs"
    if meant is not None:
        hint += f"; {meant}"
    location = document.locate(("spec",))
    return _finding(document, "project.duplicate-request", location, message, hint, severity)


def _lane_key(document: Document, fields: tuple[str, ...]) -> tuple[str, ...] | None:
    """The values of ``fields`` in the document's spec, when all are text and no reference."""
    spec = document.spec
    values = tuple([spec.get(name) for name in fields])
    for value in values:  # a loop, not all(): this runs for each of 100,000 rows
        if not isinstance(value, str) or is_reference(value):
            return None
    return cast(tuple[str, ...], values)


def _ended_lanes(documents: Sequence[Document]) -> list[Finding]:
    findings: list[Finding] = []
    for end in dict.fromkeys(_ENDS.values()):
        kinds = {kind for kind, other in _ENDS.items() if other == end}
        findings.extend(_lane_ended(documents, kinds, end))
    return findings


def _lane_ended(documents: Sequence[Document], kinds: set[Kind], end: LaneEnd) -> list[Finding]:
    # Only the lanes some document ends are looked for among the other kind's documents: a
    # table of every movement's HAWB would hold a list per row of a 100,000-row export.
    ended = {
        key
        for document in documents
        if document.kind in kinds and (key := _lane_key(document, end.fields)) is not None
    }
    lanes: dict[tuple[str, ...], list[Document]] = {}
    for document in documents if ended else ():
        key = _lane_key(document, end.fields) if document.kind is end.of else None
        if key is not None and key in ended:
            lanes.setdefault(key, []).append(document)
    findings = []
    for document in documents:
        key = _lane_key(document, end.fields) if document.kind in kinds else None
        if key is None or key not in lanes:
            continue
        moving = lanes[key]
        more = end.more.format(count=len(moving) - 1) if len(moving) > 1 else ""
        message = end.message.format(*key, first=moving[0].address, more=more)
        location = document.locate(("spec", end.fields[-1]))
        findings.append(_finding(document, end.rule, location, message, end.hint, Severity.WARNING))
    return findings
