"""Which history says that a state file is older than it: the newest entry's lineage and
serial against the state's, and what the message names (the local backend's, and
PostgreSQL's history rows)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from customs_batch.errors import StateError
from customs_batch.state import LocalBackend, State
from customs_batch.state.history import SHOWN_SENDS, LocalHistory, state_behind_history
from customs_batch.state.pg_history import PostgresHistory
from customs_batch.state.postgres import PostgresBackend

LINEAGE = "0123456789abcdef"
SHOWN = LINEAGE[:8]  # what an entry names of it


def _history(folder: Path, *entries: dict[str, Any]) -> LocalHistory:
    history = LocalHistory(folder)
    for entry in entries:
        history.append({"time": "t", "run": "run-1", "address": "Movement/m-1", **entry})
    history.sync()
    history.close()
    return history


def _answer(serial: int, address: str = "Movement/m-1", **extra: Any) -> dict[str, Any]:
    return {
        "event": "answer",
        "lineage": SHOWN,
        "serial": serial,
        "address": address,
        "status": 201,
        "ids": {"movementId": f"mov_{address[-1]}"},
        **extra,
    }


@pytest.mark.parametrize(
    ("entries", "serial", "behind"),
    [
        ([], 3, False),
        ([_answer(2)], 3, False),  # the run on serial 2 left serial 3: this state
        ([_answer(3)], 3, True),  # a run on serial 3 left serial 4, which is not here
        ([_answer(3)], 9, False),
        ([{**_answer(3), "event": "request"}], 3, False),  # killed before its intent
        ([{**_answer(4), "event": "request"}], 3, True),  # serial 4 existed
        ([{**_answer(3), "event": "dropped"}], 3, True),
        ([_answer(5), {"event": "answer", "status": 201}], 3, False),  # newest names none
        ([{**_answer(5), "lineage": "another"}], 3, False),  # a state begun anew
        ([{**_answer(5), "serial": "5"}], 3, False),
    ],
)
def test_the_newest_entry_decides(
    tmp_path: Path, entries: list[dict[str, Any]], serial: int, behind: bool
) -> None:
    history = _history(tmp_path, *entries)
    problem = state_behind_history(State(lineage=LINEAGE, serial=serial), history)
    assert (problem is not None) is behind, problem


def test_the_message_names_what_the_later_runs_created(tmp_path: Path) -> None:
    entries = [_answer(1, "Movement/old-1")]  # before the state's serial: not named
    entries += [_answer(2, f"Movement/new-{n}", run=f"run-{n % 2}") for n in range(12)]
    entries.append({**_answer(2, "Movement/refused"), "status": 409})
    history = _history(tmp_path, *entries)
    problem = state_behind_history(State(lineage=LINEAGE, serial=2), history)
    assert problem is not None
    assert "it has serial 2, but its history records apply running on serial 2" in problem
    assert "Movement/new-0 (movementId=mov_0)" in problem
    assert "old-1" not in problem and "refused" not in problem
    assert f"; and {12 - SHOWN_SENDS} more" in problem


def test_plan_and_apply_ask_the_backend_which_refuses_with_the_way_out(tmp_path: Path) -> None:
    _history(tmp_path, _answer(4))
    backend = LocalBackend(tmp_path)
    with pytest.raises(StateError) as refused:
        backend.refuse_a_state_behind_its_history(State(lineage=LINEAGE, serial=4))
    assert "state.json is older than its history" in refused.value.message
    assert refused.value.hint is not None and "customs-batch import ADDR ID" in refused.value.hint
    backend.refuse_a_state_behind_its_history(State(lineage=LINEAGE, serial=5))
    # --allow-empty-state: a state begun from less on purpose is not refused.
    LocalBackend(tmp_path, allow_empty_state=True).refuse_a_state_behind_its_history(
        State(lineage=LINEAGE, serial=4)
    )


def test_a_postgresql_state_behind_its_history_rows_is_refused_the_same_way(
    postgres_url: str,
) -> None:
    history = PostgresHistory(postgres_url, "prod")
    history.append({"time": "t", "run": "run-1", **_answer(4, "Movement/m-7")})
    history.close()
    backend = PostgresBackend(postgres_url, "prod")
    with pytest.raises(StateError) as refused:
        backend.refuse_a_state_behind_its_history(State(lineage=LINEAGE, serial=4))
    assert "the state prod in the database is older than its history" in refused.value.message
    assert "Movement/m-7 (movementId=mov_7)" in refused.value.message
    assert refused.value.hint is not None and "customs-batch import ADDR ID" in refused.value.hint
    backend.refuse_a_state_behind_its_history(State(lineage=LINEAGE, serial=5))
    # Another state's history rows say nothing of this one; --allow-empty-state is not checked.
    PostgresBackend(postgres_url, "staging").refuse_a_state_behind_its_history(
        State(lineage=LINEAGE, serial=1)
    )
    PostgresBackend(postgres_url, "prod", allow_empty_state=True).refuse_a_state_behind_its_history(
        State(lineage=LINEAGE, serial=1)
    )
