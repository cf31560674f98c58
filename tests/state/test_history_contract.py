"""The history's promises, checked the same way on each state backend (local files and a
real PostgreSQL server): entries read back in order and verify, the next run chains on,
a SIGKILL loses nothing synced, and a tampered entry is named."""

from __future__ import annotations

import json
import os
import signal
import stat
from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest

from customs_batch.errors import StateError
from customs_batch.state.history import (
    HistoryStore,
    LocalHistory,
    Verification,
    history_for,
    last_ids,
    push_history,
    verify,
)
from tests.state.conftest import STATE_NAME, Backends

APPEND_AND_HOLD = """
from customs_batch.state.history import history_for
store = history_for(backend)
for n in range(5):
    store.append({"event": "request", "address": f"Movement/m{n}"})
store.sync()
print("synced", flush=True)
sys.stdin.readline()
"""


def _store(backends: Backends) -> HistoryStore:
    return history_for(backends.make())


def _addresses(store: HistoryStore) -> list[str]:
    return [json.loads(e.text)["address"] for e in store.entries()]


def _verified(backends: Backends) -> Verification:
    store = _store(backends)
    try:
        return verify(store.entries())
    finally:
        store.close()


def test_entries_read_back_in_order_verify_and_the_next_run_chains_on(
    backends: Backends,
) -> None:
    first = _store(backends)
    assert list(first.entries()) == []
    assert _verified(backends).ok
    for n in range(3):
        assert first.append({"event": "request", "address": f"Movement/m{n}"}) == n + 1
    first.sync()
    first.close()

    second = _store(backends)  # another run
    assert second.append({"event": "dropped", "address": "Movement/m3"}) == 4
    second.sync()
    assert _addresses(second) == [f"Movement/m{n}" for n in range(4)]
    result = verify(second.entries())
    assert result.ok and result.entries == 4 and result.last_seq == 4
    second.close()


def test_the_local_history_is_private_to_its_owner(backends: Backends) -> None:
    store = _store(backends)
    store.append({"event": "request", "address": "Movement/m"})
    store.close()
    if backends.kind == "local":
        assert isinstance(store, LocalHistory)
        assert stat.S_IMODE(store.path.stat().st_mode) == 0o600


def test_what_was_synced_survives_a_sigkill_and_the_chain_goes_on(backends: Backends) -> None:
    child = backends.start(APPEND_AND_HOLD)
    assert child.stdout is not None
    try:
        assert child.stdout.readline().strip() == "synced"
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.communicate(timeout=30)  # and close its pipes
    store = _store(backends)
    assert _addresses(store) == [f"Movement/m{n}" for n in range(5)]
    store.append({"event": "request", "address": "Movement/after"})
    store.sync()
    result = verify(store.entries())
    assert result.ok and result.entries == 6
    store.close()


def test_a_tampered_entry_is_named(backends: Backends) -> None:
    store = _store(backends)
    for n in range(4):
        store.append({"event": "answer", "address": f"Movement/m{n}", "status": 201})
    store.close()
    if backends.kind == "local":
        path = Path(backends.where) / "history.jsonl"
        lines = path.read_bytes().splitlines(keepends=True)
        body = json.loads(lines[2])
        body["status"] = 400
        lines[2] = json.dumps(body).encode() + b"\n"
        path.write_bytes(b"".join(lines))
        expected = "history.jsonl line 3"
    else:
        with psycopg.connect(backends.where, autocommit=True) as connection:
            connection.execute(
                "UPDATE customs_batch_history SET entry = replace(entry, '201', '400') "
                "WHERE state = %s AND seq = 3",
                (STATE_NAME,),
            )
        expected = "entry 3"
    result = _verified(backends)
    assert not result.ok and result.broken_at == expected and result.entries == 2


def test_a_removed_entry_is_named(backends: Backends) -> None:
    store = _store(backends)
    for n in range(4):
        store.append({"event": "request", "address": f"Movement/m{n}"})
    store.close()
    if backends.kind == "local":
        path = Path(backends.where) / "history.jsonl"
        lines = path.read_bytes().splitlines(keepends=True)
        path.write_bytes(b"".join(lines[:1] + lines[2:]))
        expected = "history.jsonl line 2"
    else:
        with psycopg.connect(backends.where, autocommit=True) as connection:
            connection.execute(
                "DELETE FROM customs_batch_history WHERE state = %s AND seq = 2", (STATE_NAME,)
            )
        expected = "entry 3"
    result = _verified(backends)
    assert result.broken_at == expected and "does not follow" in result.reason


def test_two_writers_at_once_keep_one_chain(backends: Backends) -> None:
    # A run whose lock was broken (`force-unlock --force`) may write once more while the
    # next run writes: each chains on from what is there, never from what it last wrote.
    first, second = _store(backends), _store(backends)
    try:
        for n in range(3):
            first.append({"event": "request", "address": f"Movement/first-{n}"})
            first.sync()
            second.append({"event": "request", "address": f"Movement/second-{n}"})
            second.sync()
    finally:
        first.close()
        second.close()
    result = _verified(backends)
    assert result.ok and result.entries == 6


def _old_history(folder: Path, count: int) -> Path:
    """A history of ``count`` entries written by a local store, as `state pull --history`
    prints it: each stored entry a line."""
    old = LocalHistory(folder)
    for n in range(count):
        old.append({"event": "request", "address": f"Movement/m{n}", "run": "r1"})
    old.close()
    pulled = folder.parent / f"{folder.name}-history.jsonl"
    pulled.write_bytes(b"".join(e.text + b"\n" for e in LocalHistory(folder).entries()))
    return pulled


def test_a_pushed_history_is_the_same_chain_and_the_next_run_chains_on(
    backends: Backends, tmp_path: Path
) -> None:
    pulled = _old_history(tmp_path / "old", 4)
    before = verify(LocalHistory(tmp_path / "old").entries())
    store = _store(backends)
    try:
        pushed = push_history(pulled, store)
        assert (pushed.added, pushed.kept) == (4, 0)
        assert (pushed.last_seq, pushed.last_hash) == (4, before.last_hash)
        # The same entries, byte for byte: the moved history verifies to the same hash.
        assert [e.text for e in store.entries()] == pulled.read_bytes().splitlines()
        # Pushed again (a rerun of the recipe): nothing added, nothing refused.
        assert push_history(pulled, store).added == 0
        assert store.append({"event": "request", "address": "Movement/next"}) == 5
    finally:
        store.close()
    after = _verified(backends)
    assert after.ok and after.entries == 5


def test_a_push_that_stopped_half_way_goes_on_and_a_different_history_is_refused(
    backends: Backends, tmp_path: Path
) -> None:
    pulled = _old_history(tmp_path / "old", 5)
    lines = pulled.read_bytes().splitlines(keepends=True)
    first_two = tmp_path / "first-two.jsonl"
    first_two.write_bytes(b"".join(lines[:2]))
    store = _store(backends)
    try:
        assert push_history(first_two, store).added == 2
        rest = push_history(pulled, store)  # the rest: a push that stopped goes on
        assert (rest.added, rest.kept, rest.last_seq) == (3, 2, 5)
    finally:
        store.close()
    other = _old_history(tmp_path / "other", 5)  # the same entries but another run's
    other.write_bytes(other.read_bytes().replace(b'"run":"r1"', b'"run":"r2"'))
    store = _store(backends)
    try:
        with pytest.raises(StateError, match="not a whole history"):
            push_history(other, store)  # edited: its hashes no longer match
        assert verify(store.entries()).entries == 5
    finally:
        store.close()


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (lambda lines: lines[1:], "the chain does not start here"),
        (lambda lines: [lines[0], lines[2]], "does not follow the entry before it"),
        (lambda lines: [*lines[:2], lines[2][:-9] + b"\n"], "not a history entry"),
    ],
    ids=["first-entry-missing", "entry-removed", "cut-short"],
)
def test_a_broken_history_file_is_refused_before_anything_is_written(
    backends: Backends,
    tmp_path: Path,
    edit: Callable[[list[bytes]], list[bytes]],
    said: str,
) -> None:
    pulled = _old_history(tmp_path / "old", 3)
    pulled.write_bytes(b"".join(edit(pulled.read_bytes().splitlines(keepends=True))))
    store = _store(backends)
    try:
        with pytest.raises(StateError, match=said) as refused:
            push_history(pulled, store)
        assert "state pull --history" in (refused.value.hint or "")
        assert list(store.entries()) == []
    finally:
        store.close()


def test_a_history_is_not_pushed_over_a_different_one(backends: Backends, tmp_path: Path) -> None:
    pulled = _old_history(tmp_path / "old", 3)
    store = _store(backends)
    try:
        store.append({"event": "request", "address": "Movement/here-already"})
        with pytest.raises(StateError, match="entry 1 differs"):
            push_history(pulled, store)
        assert [json.loads(e.text)["seq"] for e in store.entries()] == [1]
    finally:
        store.close()


def test_the_ids_an_address_was_last_given_are_read_back_alike(backends: Backends) -> None:
    """What `import` reads to tell a template group the address stood for from another
    (``last_ids``), the same from either backend, a non-ASCII name included."""
    store = _store(backends)
    try:
        for address, ident in (("TemplateGroup/straße", 3), ("TemplateGroup/other", 4)):
            store.append(
                {"event": "answer", "address": address, "status": 201, "ids": {"id": ident}}
            )
        store.append({"event": "answer", "address": "TemplateGroup/straße", "status": 500})
        store.sync()
        assert last_ids(store, "TemplateGroup/straße", "abcdefgh") == frozenset({"3"})
    finally:
        store.close()
