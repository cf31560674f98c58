from __future__ import annotations

import threading
from collections.abc import Mapping

from customs_batch.execution.scheduler import NodeResult, NodeStatus, walk

CHAIN = {"b": ["a"], "c": ["b"], "x": []}


def _statuses(results: Mapping[str, NodeResult[str]]) -> dict[str, NodeStatus]:
    return {key: result.status for key, result in results.items()}


def test_dependents_run_after_their_dependencies() -> None:
    seen: list[str] = []
    lock = threading.Lock()

    def run(key: str) -> bool:
        with lock:
            seen.append(key)
        return True

    results = walk(["a", "x", "b", "c"], CHAIN, run, parallelism=4, stop=threading.Event())
    assert set(_statuses(results).values()) == {NodeStatus.SUCCEEDED}
    assert seen.index("a") < seen.index("b") < seen.index("c")


def test_a_failure_skips_its_dependents_and_independent_work_goes_on() -> None:
    results = walk(
        ["a", "b", "c", "x"], CHAIN, lambda key: key != "a", parallelism=2, stop=threading.Event()
    )
    assert _statuses(results) == {
        "a": NodeStatus.FAILED,
        "b": NodeStatus.SKIPPED,
        "c": NodeStatus.SKIPPED,
        "x": NodeStatus.SUCCEEDED,
    }
    assert results["c"].reason


def test_an_exception_is_a_failure_with_its_message() -> None:
    def run(key: str) -> bool:
        raise RuntimeError("boom")

    results = walk(["x"], {}, run, parallelism=1, stop=threading.Event())
    assert results["x"].status is NodeStatus.FAILED and "boom" in results["x"].reason


def test_blocked_nodes_do_not_run_and_block_their_dependents() -> None:
    ran: list[str] = []

    def run(key: str) -> bool:
        ran.append(key)
        return True

    results = walk(
        ["a", "b", "x"],
        CHAIN,
        run,
        parallelism=1,
        stop=threading.Event(),
        blocked={"a": "needs a decision"},
    )
    assert ran == ["x"]
    assert results["a"].status is NodeStatus.SKIPPED and results["b"].status is NodeStatus.SKIPPED


def test_parallelism_bounds_the_work_in_flight() -> None:
    in_flight = 0
    most = 0
    lock = threading.Lock()

    full = threading.Event()  # three keys have been in flight at once

    def run(key: str) -> bool:
        nonlocal in_flight, most
        with lock:
            in_flight += 1
            most = max(most, in_flight)
            if in_flight == 3:
                full.set()
        # No key finishes before three run together: the walk must start three at once.
        assert full.wait(timeout=30), "fewer than three keys ran at once"
        with lock:
            in_flight -= 1
        return True

    results = walk([str(i) for i in range(12)], {}, run, parallelism=3, stop=threading.Event())
    assert set(_statuses(results).values()) == {NodeStatus.SUCCEEDED}
    assert most == 3


def test_stop_lets_in_flight_work_finish_and_starts_nothing_new() -> None:
    stop = threading.Event()
    started: list[str] = []
    both = threading.Barrier(2, timeout=30)  # "a" and "b" are in flight together

    def run(key: str) -> bool:
        started.append(key)
        both.wait()
        stop.set()  # Ctrl-C while both are in flight
        return True

    results = walk(["a", "b", "c"], {}, run, parallelism=2, stop=stop)
    assert sorted(started) == ["a", "b"]
    assert _statuses(results) == {
        "a": NodeStatus.SUCCEEDED,
        "b": NodeStatus.SUCCEEDED,
        "c": NodeStatus.NOT_STARTED,
    }


def test_what_waits_for_a_blocked_node_says_it_is_left_as_it_is_not_unapplied() -> None:
    # A blocked node (a departure customs rejected) exists at the service: its dependents'
    # skip said it "was not applied".
    results = walk(
        ["a", "b"],
        {"b": ("a",)},
        lambda key: True,
        parallelism=1,
        stop=threading.Event(),
        blocked={"a": "7003 is invalid at the service"},
    )
    assert results["b"].reason == (
        "it waits for a, which this run leaves as it is: 7003 is invalid at the service"
    )
