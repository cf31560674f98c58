from __future__ import annotations

import dataclasses
import random

import pytest

from customs_batch.errors import CustomsBatchError
from customs_batch.kinds import Address, Kind
from customs_batch.manifest.document import Document, Position
from customs_batch.planning import dependency_order
from customs_batch.planning.graph import dependencies, dependencies_of, dependency_edges

from .helpers import doc, movement

VAH = Address(Kind.MOVEMENT, "vah")


def _names(docs) -> list[str]:  # type: ignore[no-untyped-def]
    return [d.name for d in docs]


def test_a_reference_orders_its_target_first() -> None:
    update = doc(
        Kind.TRANSIT_PARTY_UPDATE,
        "upd",
        {"declarationId": "${ref:DepartureDeclaration/dep.declarationId}"},
        0,
    )
    departure = doc(Kind.DEPARTURE_DECLARATION, "dep", {"type": "DEPARTURE"}, 1)
    assert _names(dependency_order([update, departure])) == ["dep", "upd"]


def test_depends_on_orders_and_unrelated_documents_keep_manifest_order() -> None:
    first = doc(Kind.EXPORT_CANCELLATION, "a", {"declarationId": 1}, 0, "TemplateGroup/g")
    second = doc(Kind.EXPORT_CANCELLATION, "b", {"declarationId": 2}, 1)
    group = doc(Kind.TEMPLATE_GROUP, "g", {"code": "G"}, 2)
    assert _names(dependency_order([first, second, group])) == ["b", "g", "a"]


def test_movements_on_one_shipment_and_hawb_are_chained_in_manifest_order() -> None:
    docs = [movement("m1", 0), movement("other", 1, hawb="hawb_a2"), movement("m2", 2)]
    deps = dependencies(docs)
    assert [str(a) for a in deps[docs[2].address]] == ["Movement/m1"]
    assert deps[docs[1].address] == ()


def test_movements_of_one_hawb_in_two_files_are_ordered_by_depends_on_not_file_names() -> None:
    """ISL written in a file named before VAH's, and told to wait for it: VAH goes first
    (file-name order chained them the other way, into a cycle)."""
    storage_in = dataclasses.replace(
        movement("isl", 0), source=Position("a-storage.yaml", 1, 1), depends_on=(VAH,)
    )
    arrival = dataclasses.replace(movement("vah", 1), source=Position("b-arrival.yaml", 1, 1))
    assert _names(dependency_order([storage_in, arrival])) == ["vah", "isl"]
    assert dependencies([storage_in, arrival])[arrival.address] == ()


def test_dependencies_taken_from_the_edges_are_the_walked_ones_in_the_same_order() -> None:
    update = doc(
        Kind.TRANSIT_PARTY_UPDATE,
        "upd",
        {"declarationId": "${ref:DepartureDeclaration/dep.declarationId}"},
        0,
        "DepartureDeclaration/dep",
        "Movement/m1",
    )
    departure = doc(Kind.DEPARTURE_DECLARATION, "dep", {"type": "DEPARTURE"}, 1)
    docs = [update, departure, movement("m1", 2), movement("other", 3, hawb="x"), movement("m2", 4)]
    walked = dependencies(docs)
    taken = dependencies_of(docs, dependency_edges(docs))
    assert list(taken.items()) == list(walked.items())
    assert walked[update.address] == (departure.address, docs[2].address)
    assert walked[docs[4].address] == (docs[2].address,) and walked[departure.address] == ()


def test_a_cycle_is_an_error_naming_its_members() -> None:
    a = doc(Kind.EXPORT_CANCELLATION, "a", {"declarationId": 1}, 0, "ExportCancellation/b")
    b = doc(Kind.EXPORT_CANCELLATION, "b", {"declarationId": 2}, 1, "ExportCancellation/a")
    with pytest.raises(CustomsBatchError, match="ExportCancellation/a, ExportCancellation/b"):
        dependency_order([a, b])


def test_a_long_cycle_names_its_first_members_and_counts_the_rest() -> None:
    size = 10_000
    docs = [
        doc(
            Kind.EXPORT_CANCELLATION,
            f"c{i:05}",
            {"declarationId": i + 1},
            i,
            f"ExportCancellation/c{(i + 1) % size:05}",
        )
        for i in range(size)
    ]
    with pytest.raises(CustomsBatchError) as raised:
        dependency_order(docs)
    message = str(raised.value)
    assert "ExportCancellation/c00004 and 9,995 more\n" in message
    assert len(message) < 300


def _ready_first(docs: list[Document]) -> list[str]:
    """The order by its definition: repeatedly, of the documents whose dependencies are all
    placed, the one with the lowest index."""
    deps = dependencies(docs)
    placed: list[Document] = []
    left = sorted(docs, key=lambda d: d.index)
    while left:
        done = {d.address for d in placed}
        ready = next(d for d in left if all(t in done for t in deps[d.address]))
        placed.append(ready)
        left.remove(ready)
    return _names(placed)


@pytest.mark.parametrize("seed", range(40))
def test_the_order_is_the_lowest_index_ready_first_in_manifest_order_or_not(seed: int) -> None:
    """Movements chained in their lanes (each waits only for one before it: the order is
    the batch's own, without the walk) mixed with dependsOn to later documents (the walk),
    the batch given in its own order or shuffled."""
    rng = random.Random(seed)
    size = 12
    docs = [
        dataclasses.replace(
            movement(f"m{i:02}", i, hawb=rng.choice(["h1", "h2", "h3"])),
            depends_on=(Address(Kind.MOVEMENT, f"m{rng.randrange(i + 1, size):02}"),)
            if i < size - 1 and rng.random() < 0.15 * (seed % 3)
            else (),
        )
        for i in range(size)
    ]
    if seed % 2:
        rng.shuffle(docs)
    try:
        expected = _ready_first(docs)
    except StopIteration:  # a cycle
        with pytest.raises(CustomsBatchError, match="cycle"):
            dependency_order(docs)
        return
    assert _names(dependency_order(docs)) == expected
