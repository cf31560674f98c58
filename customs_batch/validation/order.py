"""Written order: the movements of one HAWB are ordered by what the manifests say.

Manifest order is document order within a file (row order within the sheet a ``forEach``
expands over); between files there is none (file names are not an order anyone wrote
down). Movements of one shipment and HAWB spread over several
files must therefore be ordered by ``dependsOn`` (or references) between them: every two of
them, one must come after the other through the dependency graph.

The documents in lanes are those of a kind whose model has a ``lane`` (``kinds/<kind>.py``),
made of its ``lane_fields``.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence
from itertools import pairwise

from customs_batch.findings import Finding, Location, Severity
from customs_batch.kinds import Address
from customs_batch.kinds.registry import KINDS
from customs_batch.manifest.document import Document
from customs_batch.validation.common import is_reference

RULE = "project.movement-order"
_LANES = {kind: (model.lane, model.lane_fields) for kind, model in KINDS.items() if model.lane}


def _lane(document: Document) -> tuple[str, ...] | None:
    found = _LANES.get(document.kind)  # a plain dict: asked three times a document
    if found is None:
        return None
    lane, fields = found
    spec = document.spec
    for name in fields:  # a loop, not any(): this runs three times for each of 100,000 rows
        if is_reference(spec.get(name)):
            return None
    return lane(spec)


def order_keys(document: Document) -> tuple[str, ...]:
    """What this check can relate ``document`` to another file's documents by (see
    :func:`customs_batch.validation.project.meeting_keys`): its lane. The edges it walks
    are references and ``dependsOn``, which the names say."""
    lane = _lane(document)
    return () if lane is None else (lane_key(lane),)


def lane_key(values: tuple[str, ...]) -> str:
    """The key of a lane, or of another kind's documents ending it (the same text for the
    same values: a movement's lane and its HAWB's deactivation meet by one key)."""
    return "l\0" + "\0".join(values)


def _written_in(document: Document) -> tuple[str, str]:
    """Where document order holds: a file, or a sheet of the spreadsheet a ``forEach``
    expands over (its rows are in row order; they carry no place in their manifest)."""
    return (document.source.file, document.source.sheet or "")


def check_order(documents: Sequence[Document]) -> list[Finding]:
    """A finding for each two movements of one HAWB, in different files, with no order
    between them (reported at the one that comes later in manifest order)."""
    lanes = _shared_lanes(documents)
    spread = [
        (lane, members)
        for lane, members in lanes.items()
        if len({_written_in(member) for member in members}) > 1
    ]
    if not spread:
        return []
    edges = _edges(documents, lanes.values())
    position = _topological_positions(documents, edges)
    findings = []
    for lane, members in spread:
        placed = sorted(
            (m for m in members if m.address in position), key=lambda m: position[m.address]
        )
        for earlier, later in pairwise(placed):
            if not _reaches(later.address, earlier.address, edges, position):
                findings.append(_unordered(later, earlier, lane))
    return findings


def _shared_lanes(documents: Sequence[Document]) -> dict[tuple[str, ...], list[Document]]:
    """The movements of each lane that more than one movement shares, when movements come
    from more than one file. Cheap on a big export: with one file nothing is kept, and
    otherwise a hash per movement (a list per row was 10 MiB at 100,000 rows)."""
    first: Document | None = None
    several = False
    for document in documents:
        if _lane(document) is not None:
            if first is None:
                first = document
            elif _written_in(document) != _written_in(first):
                several = True
                break
    if not several:
        return {}
    seen: set[int] = set()
    repeated: set[int] = set()
    for document in documents:
        lane = _lane(document)
        if lane is not None:
            key = hash(lane)
            if key in seen:
                repeated.add(key)
            seen.add(key)
    del seen
    lanes: dict[tuple[str, ...], list[Document]] = {}
    for document in documents:
        lane = _lane(document)
        if lane is not None and hash(lane) in repeated:
            lanes.setdefault(lane, []).append(document)
    return lanes


def _edges(
    documents: Sequence[Document], lanes: Iterable[list[Document]]
) -> dict[Address, list[Address]]:
    """What each document waits for: references, dependsOn, and the movement before it on
    the same HAWB in the same file."""
    known = {document.address for document in documents}
    edges: dict[Address, list[Address]] = {}
    for document in documents:
        targets = [r.target for r in document.references] + list(document.depends_on)
        own = [t for t in targets if t in known and t != document.address]
        if own:
            edges[document.address] = own
    for members in lanes:
        last_in_file: dict[tuple[str, str], Address] = {}
        for member in members:  # in batch order
            previous = last_in_file.get(_written_in(member))
            if previous is not None:
                edges.setdefault(member.address, []).append(previous)
            last_in_file[_written_in(member)] = member.address
    return edges


def _topological_positions(
    documents: Sequence[Document], edges: dict[Address, list[Address]]
) -> dict[Address, int]:
    """Each document's place in an order where it comes after what it waits for (manifest
    order among the ready ones); documents on a cycle have none (reported as a cycle)."""
    # Place in the batch, not Document.index: validate numbers each file's documents from 0.
    index: dict[Address, int] = {}
    for place, document in enumerate(documents):
        index.setdefault(document.address, place)
    waiting = {address: 0 for address in index}
    dependents: dict[Address, list[Address]] = {}
    for address, targets in edges.items():
        for target in targets:
            waiting[address] += 1
            dependents.setdefault(target, []).append(address)
    ready = [(index[a], str(a), a) for a, count in waiting.items() if count == 0]
    heapq.heapify(ready)
    position: dict[Address, int] = {}
    while ready:
        _, _, address = heapq.heappop(ready)
        position[address] = len(position)
        for dependent in dependents.get(address, ()):
            waiting[dependent] -= 1
            if waiting[dependent] == 0:
                heapq.heappush(ready, (index[dependent], str(dependent), dependent))
    return position


def _reaches(
    start: Address, goal: Address, edges: dict[Address, list[Address]], position: dict[Address, int]
) -> bool:
    """Whether ``start`` waits for ``goal``, directly or through others. Only documents
    placed after ``goal`` can lie on such a path: the others are not walked."""
    floor = position[goal]
    seen = {start}
    stack = [start]
    while stack:
        for target in edges.get(stack.pop(), ()):
            if target == goal:
                return True
            if target not in seen and position.get(target, -1) > floor:
                seen.add(target)
                stack.append(target)
    return False


def _unordered(later: Document, earlier: Document, lane: tuple[str, ...]) -> Finding:
    shipment, hawb = lane
    what = f"HAWB {hawb} of {shipment}" if hawb else f"the master AWB of {shipment}"
    message = (
        f"{later.address} and {earlier.address} at {earlier.source.file}:"
        f"{earlier.source.line} move {what} from different files, and nothing says which "
        "goes first: the service gives movements their meaning by their order"
    )
    hint = (
        "manifest order holds only within a file (or a forEach's sheet): state the order with "
        f"`dependsOn: [{earlier.address}]` under `metadata:` of {later.address} (or the other "
        "way round), or keep the HAWB's movements in one file"
    )
    location: Location = later.locate(("metadata", "name"))
    return Finding(RULE, Severity.ERROR, message, location, hint, document=str(later.address))
