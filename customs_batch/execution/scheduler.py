"""The walk of the dependency graph, separate from what each node does.

Nodes run on a bounded number of worker threads as soon as everything they depend on has
succeeded; a node whose dependency failed or was skipped is skipped too; independent work
goes on.
When ``stop`` is set (Ctrl-C, SIGTERM) no new node starts, and what is in flight finishes;
the same when ``admit`` (a time budget) refuses the next node.
"""

from __future__ import annotations

import heapq
import threading
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Generic, TypeVar

Key = TypeVar("Key")


class NodeStatus(StrEnum):
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    SKIPPED = "skipped"
    NOT_STARTED = "not-started"
    WAITING = "waiting"
    """Done on our side, not decided at the service (a requested cancellation): what
    depends on it goes on, as after a success. Set by the run, never by the walk."""


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
    admit: Callable[[int], bool] | None = None,
    idle: Callable[[], None] | None = None,
) -> dict[Key, NodeResult[Key]]:
    """Run every key of ``order`` (a valid dependency order) with ``run``.

    ``run`` returns True on success and False on a recorded failure; an exception from it is
    a failure too. ``blocked`` names keys that must not run (needs decision): their
    dependents are skipped with that reason. ``on_result`` is called once per key as soon as
    its result is known, one call at a time. ``admit(in_flight)`` is asked before each key
    starts, with the number of keys running; once it says no, nothing more starts (what is
    running finishes) and the keys left are NOT_STARTED, as after a stop. ``idle`` is
    called by a worker, outside every lock, when it finds no ready key after finishing one,
    and when it leaves.

    The workers take ready keys themselves (earliest in ``order`` first) and release what
    waited for them, so no thread sits between a finished key and the next one.
    """
    graph = _Graph(order, dependencies, blocked or {}, on_result, admit)
    workers = [
        threading.Thread(target=graph.work, args=(run, stop, idle), name=f"apply-{i}", daemon=True)
        for i in range(max(1, parallelism))
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return graph.finish()


class _Graph(Generic[Key]):
    """The shared bookkeeping of a walk, guarded by one condition variable."""

    def __init__(
        self,
        order: Sequence[Key],
        dependencies: Mapping[Key, Sequence[Key]],
        blocked: Mapping[Key, str],
        on_result: Callable[[NodeResult[Key]], None] | None,
        admit: Callable[[int], bool] | None = None,
    ) -> None:
        self.order = order
        self.admit = admit
        self.closed = False  # the budget refused a key: nothing more starts
        self.position = {key: i for i, key in enumerate(order)}
        self.blocked = blocked
        self.on_result = on_result
        self.waiting = dict.fromkeys(order, 0)
        self.dependents: dict[Key, list[Key]] = defaultdict(list)
        for key in order:
            for dep in dependencies.get(key, ()):
                if dep in self.position:
                    self.waiting[key] += 1
                    self.dependents[dep].append(key)
        self.results: dict[Key, NodeResult[Key]] = {}
        self.ready = [(self.position[k], k) for k in order if self.waiting[k] == 0]
        heapq.heapify(self.ready)
        self.running = 0
        self.changed = threading.Condition()

    def work(
        self, run: Callable[[Key], bool], stop: threading.Event, idle: Callable[[], None] | None
    ) -> None:
        """One worker: take the next ready key, run it, record it; until nothing is left."""
        while True:
            key = self._take(stop)
            if key is None:
                if idle is not None:
                    idle()
                return
            try:
                ok, reason = run(key), ""
            except Exception as exc:  # a failure of this node, recorded; the walk goes on
                ok, reason = False, f"{type(exc).__name__}: {exc}"
            with self.changed:
                self.running -= 1
                if ok:
                    self._settle(NodeResult(key, NodeStatus.SUCCEEDED))
                    self._release(key)
                else:
                    self._settle(NodeResult(key, NodeStatus.FAILED, reason))
                    self._skip_dependents(key, f"{key} failed")
                self.changed.notify_all()
                starved = not self.ready
            if starved and idle is not None:
                idle()

    def _take(self, stop: threading.Event) -> Key | None:
        with self.changed:
            while True:
                if stop.is_set() or self.closed:
                    return None
                while self.ready:
                    position, key = heapq.heappop(self.ready)
                    if key in self.results:
                        continue
                    if key in self.blocked:
                        self._settle(NodeResult(key, NodeStatus.SKIPPED, self.blocked[key]))
                        self._skip_dependents(
                            key,
                            f"it waits for {key}, which this run leaves as it is: {self.blocked[key]}",
                        )
                        continue
                    if self.admit is not None and not self.admit(self.running):
                        heapq.heappush(self.ready, (position, key))
                        self.closed = True
                        self.changed.notify_all()
                        return None
                    self.running += 1
                    return key
                if self.running == 0:
                    self.changed.notify_all()
                    return None
                # Woken by a finished key (new work, or the end) or, every so often, to
                # notice a stop that came while nothing finished.
                self.changed.wait(0.1)

    def _settle(self, result: NodeResult[Key]) -> None:
        self.results[result.key] = result
        if self.on_result is not None:
            self.on_result(result)

    def _release(self, key: Key) -> None:
        for dependent in self.dependents[key]:
            self.waiting[dependent] -= 1
            if self.waiting[dependent] == 0 and dependent not in self.results:
                heapq.heappush(self.ready, (self.position[dependent], dependent))

    def _skip_dependents(self, key: Key, why: str) -> None:
        pending = list(self.dependents[key])
        while pending:
            dependent = pending.pop()
            if dependent not in self.results:
                self._settle(NodeResult(dependent, NodeStatus.SKIPPED, why))
                pending.extend(self.dependents[dependent])

    def finish(self) -> dict[Key, NodeResult[Key]]:
        for key in self.order:
            if key not in self.results:
                self.results[key] = NodeResult(
                    key, NodeStatus.NOT_STARTED, "stopped before it started"
                )
        return self.results
