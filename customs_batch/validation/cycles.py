"""Cycles in the dependency graph of a batch (Tarjan's strongly connected components)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeVar

N = TypeVar("N")


def find_cycles(edges: Mapping[N, Sequence[N]]) -> list[list[N]]:
    """One cycle per strongly connected component that has one, as the list of its nodes.

    Each cycle starts at the component's first node in ``edges`` order and follows edges back
    to it; every node of ``edges`` must be a key (edges to unknown nodes are ignored).
    """
    order = {node: i for i, node in enumerate(edges)}
    components = _components(edges)
    cycles = []
    for component in components:
        members = set(component)
        start = min(component, key=order.__getitem__)
        if len(component) == 1 and start not in edges[start]:
            continue
        cycles.append(_path_back(edges, start, members))
    cycles.sort(key=lambda cycle: order[cycle[0]])
    return cycles


def _components(edges: Mapping[N, Sequence[N]]) -> list[list[N]]:
    """Tarjan's algorithm, iterative so that a long chain cannot exhaust the stack."""
    index: dict[N, int] = {}
    low: dict[N, int] = {}
    stack: list[N] = []
    on_stack: set[N] = set()
    out: list[list[N]] = []
    for root in edges:
        if root in index:
            continue
        work: list[tuple[N, int]] = [(root, 0)]
        while work:
            node, child = work.pop()
            if child == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            targets = [t for t in edges[node] if t in edges]
            if child < len(targets):
                work.append((node, child + 1))
                target = targets[child]
                if target not in index:
                    work.append((target, 0))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                out.append(component)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return out


def _path_back(edges: Mapping[N, Sequence[N]], start: N, members: set[N]) -> list[N]:
    """A shortest path from ``start`` round to itself inside one component (breadth first)."""
    previous: dict[N, N] = {}
    frontier = [start]
    while frontier:
        step = []
        for node in frontier:
            for target in edges[node]:
                if target == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return path[::-1]
                if target in members and target not in previous:
                    previous[target] = node
                    step.append(target)
        frontier = step
    return [start]
