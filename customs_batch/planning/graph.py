"""The dependency graph of a batch and the order it is applied in."""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from itertools import pairwise

from customs_batch.errors import CustomsBatchError
from customs_batch.kinds import Address
from customs_batch.kinds.registry import model_of
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
    return {
        address: tuple(targets)
        for address, targets in _walk(documents, lambda address, target, reason: None).items()
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
        deps[address] = tuple(edge.target for edge in found) if found else ()
    return deps


def dependency_edges(documents: Sequence[Document]) -> dict[Address, tuple[Edge, ...]]:
    """The same graph as :func:`dependencies`, each edge with the reasons it exists (a
    reference and a ``dependsOn`` to the same document make one edge with both)."""
    reasons: dict[tuple[Address, Address], list[EdgeReason]] = defaultdict(list)

    def note(address: Address, target: Address, reason: EdgeReason) -> None:
        found = reasons[address, target]  # one lookup: an address's hash is a Python call
        if reason not in found:
            found.append(reason)

    # A document that waits for nothing has no entry (readers default to no edges).
    return {
        address: tuple(Edge(target, tuple(reasons[address, target])) for target in targets)
        for address, targets in _walk(documents, note).items()
        if targets
    }


def _walk(
    documents: Sequence[Document], note: Callable[[Address, Address, EdgeReason], None]
) -> dict[Address, Sequence[Address]]:
    # Document.address builds a new Address on every access: take each one once (measured:
    # a third of this function's time on 10,000 documents).
    addresses = [doc.address for doc in documents]
    # A list only for a document that waits for another: most rows of a big export wait
    # for nothing, and share the empty tuple.
    deps: dict[Address, Sequence[Address]] = dict.fromkeys(addresses, ())
    last_in_lane: dict[tuple[str, ...], Address] = {}
    pairs: Iterable[tuple[Address, Document]] = zip(addresses, documents, strict=True)
    if any(earlier.index > later.index for earlier, later in pairwise(documents)):
        pairs = sorted(pairs, key=lambda p: p[1].index)
    for address, doc in pairs:
        found = deps[address]
        own: list[Address] = found if isinstance(found, list) else []
        for target in (ref.target for ref in doc.references):
            if target in deps and target != address:
                note(address, target, EdgeReason.REFERENCE)
                if target not in own:
                    own.append(target)
        for target in doc.depends_on:
            if target in deps and target != address:
                note(address, target, EdgeReason.DEPENDS_ON)
                if target not in own:
                    own.append(target)
        lane_of = model_of(doc.kind).lane
        if lane_of is not None:
            # Manifest order is document order within a file (row order within a sheet of
            # a forEach); across them the order is what dependsOn says (validation refuses
            # a lane spread over several without it).
            lane = (doc.kind.value, doc.source.file, doc.source.sheet or "", *lane_of(doc.spec))
            previous = last_in_lane.get(lane)
            if previous is not None:
                note(address, previous, EdgeReason.SAME_LANE)
                if previous not in own:
                    own.append(previous)
            last_in_lane[lane] = address
        if own:
            deps[address] = own
    return deps


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
