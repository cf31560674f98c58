"""The walk of the dependency graph, separate from what each node does.

Nodes run on a bounded pool of threads as soon as everything they depend on has succeeded;
a node whose dependency failed or was skipped is skipped too; independent work goes on.
When ``stop`` is set (Ctrl-C, SIGTERM) no new node starts, and what is in flight finishes.
"""

from __future__ import annotations

import heapq
import threading
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from enum import StrEnum
from typing import Generic, TypeVar

Key = TypeVar("Key")


class NodeStatus(StrEnum):
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    SKIPPED = "skipped"
    NOT_STARTED = "not-started"


@dataclass(frozen=True)
class NodeResult(Generic[Key]):
    key: Key
    status: NodeStatus
    reason: str = ""


def walk(
    order: Sequence[Key],
    dependencies: Mapping[Key, Sequence[Key]],
    run: Callable[[Key], bool],
    *,
    parallelism: int,
    stop: threading.Event,
    blocked: Mapping[Key, str] | None = None,
    on_result: Callable[[NodeResult[Key]], None] | None = None,
) -> dict[Key, NodeResult[Key]]:
    """Run every key of ``order`` (a valid dependency order) with ``run``.

    ``run`` returns True on success and False on a recorded failure; an exception from it is
    a failure too. ``blocked`` names keys that must not run (refused, needs decision): their
    dependents are skipped with that reason. ``on_result`` is called once per key, from the
    walking thread, as soon as its result is known.
    """
    position = {key: i for i, key in enumerate(order)}
    blocked = blocked or {}
    waiting = {key: 0 for key in order}
    dependents: dict[Key, list[Key]] = defaultdict(list)
    for key in order:
        for dep in dependencies.get(key, ()):
            if dep in position:
                waiting[key] += 1
                dependents[dep].append(key)
    results: dict[Key, NodeResult[Key]] = {}

    def settle(result: NodeResult[Key]) -> None:
        results[result.key] = result
        if on_result is not None:
            on_result(result)

    def skip_dependents(key: Key, why: str) -> None:
        pending = list(dependents[key])
        while pending:
            dependent = pending.pop()
            if dependent not in results:
                settle(NodeResult(dependent, NodeStatus.SKIPPED, why))
                pending.extend(dependents[dependent])

    ready: list[tuple[int, Key]] = []

    def release(key: Key) -> None:
        for dependent in dependents[key]:
            waiting[dependent] -= 1
            if waiting[dependent] == 0 and dependent not in results:
                heapq.heappush(ready, (position[dependent], dependent))

    for key in order:
        if waiting[key] == 0:
            heapq.heappush(ready, (position[key], key))

    running: dict[Future[bool], Key] = {}
    with ThreadPoolExecutor(max_workers=max(1, parallelism)) as pool:
        while ready or running:
            while ready and len(running) < parallelism and not stop.is_set():
                _, key = heapq.heappop(ready)
                if key in results:
                    continue
                if key in blocked:
                    settle(NodeResult(key, NodeStatus.SKIPPED, blocked[key]))
                    skip_dependents(key, f"{key} was not applied: {blocked[key]}")
                    continue
                running[pool.submit(run, key)] = key
            if not running:
                break
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                key = running.pop(future)
                error = future.exception()
                if error is None and future.result():
                    settle(NodeResult(key, NodeStatus.SUCCEEDED))
                    release(key)
                else:
                    reason = f"{type(error).__name__}: {error}" if error else ""
                    settle(NodeResult(key, NodeStatus.FAILED, reason))
                    skip_dependents(key, f"{key} failed")
    for key in order:
        if key not in results:
            results[key] = NodeResult(key, NodeStatus.NOT_STARTED, "stopped before it started")
    return results
