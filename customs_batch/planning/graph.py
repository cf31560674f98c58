"""The dependency graph of a batch and the order it is applied in."""

from __future__ import annotations

import heapq
from array import array
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from itertools import pairwise

from customs_batch.collector import bulk
from customs_batch.errors import CustomsBatchError
from customs_batch.jsontypes import JSON
from customs_batch.kinds import Address
from customs_batch.kinds.registry import KINDS
from customs_batch.manifest.document import Document

STUCK_SHOWN = 5  # documents a cycle error names before it counts the rest


class EdgeReason(StrEnum):
    """Why one document waits for another."""

    REFERENCE = "reference"
    DEPENDS_ON = "dependsOn"
    SAME_LANE = "same shipment/HAWB"


@dataclass(frozen=True)
class Edge:
    """One arrow of the graph: the document waited for, and every reason to wait for it."""

    target: Address
    reasons: tuple[EdgeReason, ...]


def dependencies(documents: Sequence[Document]) -> dict[Address, tuple[Address, ...]]:
    """What each document waits for: its references, its ``dependsOn``, and the movement
    before it on the same shipment and HAWB in the same file (the service gives movements
    meaning by order; across files, their order is what ``dependsOn`` says).
    Edges to addresses outside the batch are left out: those are already applied or are
    reported by validation.
    """
    found = dict(_walk(documents))
    return {
        address: tuple([target for target, _ in targets]) if (targets := found.get(address)) else ()
        for address in [doc.address for doc in documents]
    }


def dependencies_of(
    documents: Sequence[Document], edges: Mapping[Address, Sequence[Edge]]
) -> dict[Address, tuple[Address, ...]]:
    """:func:`dependencies` from the documents' :func:`dependency_edges`, without walking
    the graph again: the same targets in the same order, ``()`` for a document that waits
    for nothing."""
    deps: dict[Address, tuple[Address, ...]] = {}
    for doc in documents:
        address = doc.address
        found = edges.get(address)
        if not found:
            deps[address] = ()
        elif len(found) == 1:  # most documents that wait wait for one: no generator
            deps[address] = (found[0].target,)
        else:
            deps[address] = tuple([edge.target for edge in found])
    return deps


def dependency_edges(documents: Sequence[Document]) -> dict[Address, tuple[Edge, ...]]:
    """The same graph as :func:`dependencies`, each edge with the reasons it exists (a
    reference and a ``dependsOn`` to the same document make one edge with both)."""
    # A document that waits for nothing has no entry (readers default to no edges). Built
    # with the collector paused: its collections of the new edges, while 100,000 documents
    # wait, were twice the time of the walk itself (measured).
    with bulk():
        return {
            address: tuple([Edge(target, tuple(reasons)) for target, reasons in targets])
            for address, targets in _walk(documents)
        }


Waits = list[tuple[Address, list[EdgeReason]]]
"""What one document waits for: each target (in the order first found) and why."""


def _walk(documents: Sequence[Document]) -> list[tuple[Address, Waits]]:
    """Each document that waits for something, in the order of ``documents`` (a document
    named twice: once, at its first place, with what both wait for), and what it waits
    for. A pass to find the lanes two documents share, then one over the documents, with
    no table by address but the batch's: tables by address, and by
    pair of addresses, cost a plan of 100,000 documents most of the time of its graph (an
    address's hash is a Python call; measured)."""
    lanes = {kind: model.lane for kind, model in KINDS.items()}
    # Which lanes more than one document is on, found before any table of the batch is
    # made: the lane of each document as a hash, packed, sorted (equal ones are neighbours).
    # Only those lanes need their last document kept: a bulk load of 100,000 movements,
    # each on its own HAWB, held a table of 100,000 lanes (8 MB, the top of its plan's
    # memory) to find no edge.
    hashes = array("q")
    for doc in documents:
        lane_of = lanes[doc.kind]
        hashes.append(0 if lane_of is None else hash(_lane(doc, lane_of)) or 1)
    ordered = sorted(hashes)
    shared = {a for a, b in pairwise(ordered) if a == b}
    shared.discard(0)
    del ordered
    # Document.address builds a new Address on every access: take each one once (measured:
    # a third of this function's time on 10,000 documents).
    addresses = [doc.address for doc in documents]
    batch = set(addresses)
    named_once = len(batch) == len(addresses)
    found: list[tuple[Address, Waits]] = []
    seen: dict[Address, Waits] = {}  # only for documents named twice
    last_in_lane: dict[tuple[str, ...], Address] = {}
    pairs: Iterable[tuple[Address, Document, int]] = zip(addresses, documents, hashes, strict=True)
    in_order = not any(earlier.index > later.index for earlier, later in pairwise(documents))
    if not in_order:
        pairs = sorted(pairs, key=lambda p: p[1].index)
    for address, doc, lane_hash in pairs:
        own: Waits = [] if named_once else seen.setdefault(address, [])
        waited = len(own)
        for ref in doc.references:
            if ref.target in batch and ref.target != address:
                _note(own, ref.target, EdgeReason.REFERENCE)
        for target in doc.depends_on:
            if target in batch and target != address:
                _note(own, target, EdgeReason.DEPENDS_ON)
        lane_of = lanes[doc.kind]
        if lane_hash in shared and lane_of is not None:
            # Manifest order is document order within a file (row order within a sheet of
            # a forEach); across them the order is what dependsOn says (validation refuses
            # a lane spread over several without it).
            lane = _lane(doc, lane_of)
            previous = last_in_lane.get(lane)
            if previous is not None:
                _note(own, previous, EdgeReason.SAME_LANE)
            last_in_lane[lane] = address
        if own and not waited:
            found.append((address, own))
    if in_order and named_once:
        return found
    # In the order of ``documents``, each address at its first place, as readers expect.
    first: dict[Address, int] = {}
    for place, address in enumerate(addresses):
        first.setdefault(address, place)
    return sorted(found, key=lambda pair: first[pair[0]])


def _lane(
    doc: Document, lane_of: Callable[[Mapping[str, JSON]], tuple[str, ...]]
) -> tuple[str, ...]:
    """``doc``'s lane: its kind, file and sheet, and what its kind's lane is made of."""
    source = doc.source
    return (doc.kind._value_, source.file, source.sheet or "", *lane_of(doc.spec))


def _note(own: Waits, target: Address, reason: EdgeReason) -> None:
    """Add to ``own`` the edge to ``target`` for ``reason``."""
    for known, reasons in own:
        if known == target:
            if reason not in reasons:
                reasons.append(reason)
            return
    own.append((target, [reason]))


def dependency_order(
    documents: Sequence[Document], deps: Mapping[Address, tuple[Address, ...]] | None = None
) -> list[Document]:
    """The documents in an order where each comes after what it depends on; among the
    documents that are ready at the same time, manifest order wins, so the order is stable.
    """
    deps = dependencies(documents) if deps is None else deps
    if len(deps) == len(documents) and not any(deps.values()):
        # Nothing waits (every row of an export, say): manifest order, without the tables
        # below (a few hundred bytes a document at 100,000 documents).
        if all(earlier.index < later.index for earlier, later in pairwise(documents)):
            return list(documents)
        return sorted(documents, key=lambda doc: (doc.index, doc.address))
    if _waiting_only_for_earlier(documents, deps):
        # Each waits only for documents before it (the movements of a HAWB, one after
        # another): the walk below would give manifest order, at 8 lookups a document.
        if all(earlier.index < later.index for earlier, later in pairwise(documents)):
            return list(documents)
        return sorted(documents, key=lambda doc: (doc.index, doc.address))
    by_address = {doc.address: doc for doc in documents}
    waiting = {address: len(targets) for address, targets in deps.items()}
    dependents: dict[Address, list[Address]] = defaultdict(list)
    for address, targets in deps.items():
        for target in targets:
            dependents[target].append(address)
    ready = [(by_address[a].index, a) for a, count in waiting.items() if count == 0]
    heapq.heapify(ready)
    ordered: list[Document] = []
    while ready:
        _, address = heapq.heappop(ready)
        ordered.append(by_address[address])
        for dependent in dependents[address]:
            waiting[dependent] -= 1
            if waiting[dependent] == 0:
                heapq.heappush(ready, (by_address[dependent].index, dependent))
    if len(ordered) != len(documents):
        stuck = sorted(str(a) for a, count in waiting.items() if count > 0)
        # The first few and a count: thousands of names would make one unreadable line.
        named = ", ".join(stuck[:STUCK_SHOWN])
        more = f" and {len(stuck) - STUCK_SHOWN:,} more" if len(stuck) > STUCK_SHOWN else ""
        raise CustomsBatchError(
            f"the documents depend on each other in a cycle: {named}{more}",
            hint="run `customs-batch validate` to see the cycle and break it",
        )
    return ordered


def _waiting_only_for_earlier(
    documents: Sequence[Document], deps: Mapping[Address, tuple[Address, ...]]
) -> bool:
    """Whether ``deps`` are those of ``documents`` (one entry each, addresses distinct) and
    every document waits only for documents with a lower index: manifest order is then the
    order :func:`dependency_order` gives (the lowest index ready is always the lowest
    left)."""
    index = {doc.address: doc.index for doc in documents}
    if not len(index) == len(documents) == len(deps):
        return False
    for doc in documents:
        targets = deps.get(doc.address)
        if targets is None:
            return False
        for target in targets:
            before = index.get(target)
            if before is None or before >= doc.index:
                return False
    return True
