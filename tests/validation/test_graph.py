"""Cycles in the dependency graph."""

from __future__ import annotations

from customs_batch.validation.cycles import find_cycles


def test_no_cycle_in_a_dag() -> None:
    assert find_cycles({"a": ["b", "c"], "b": ["c"], "c": []}) == []


def test_self_loop_is_a_cycle() -> None:
    assert find_cycles({"a": ["a"], "b": []}) == [["a"]]


def test_each_cycle_starts_at_its_first_node_and_follows_edges() -> None:
    edges = {"x": ["c"], "c": ["a"], "a": ["b"], "b": ["c"], "d": ["e"], "e": ["d"]}
    assert find_cycles(edges) == [["c", "a", "b"], ["d", "e"]]


def test_edges_to_unknown_nodes_are_ignored() -> None:
    assert find_cycles({"a": ["zz", "b"], "b": ["a"]}) == [["a", "b"]]


def test_long_chain_does_not_exhaust_the_stack() -> None:
    size = 5000
    edges = {i: [i + 1] for i in range(size)}
    edges[size] = [0]
    (cycle,) = find_cycles(edges)
    assert cycle == list(range(size + 1))
