"""The collector pause around bulk loading: restored as found, and what was built is frozen."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from customs_batch.collector import bulk


@pytest.fixture(autouse=True)
def _collector_restored() -> Iterator[None]:
    was_enabled = gc.isenabled()
    yield
    gc.unfreeze()
    if was_enabled:
        gc.enable()
    else:
        gc.disable()


@pytest.mark.parametrize("enabled", [True, False])
def test_bulk_pauses_the_collector_and_restores_it(enabled: bool) -> None:
    if enabled:
        gc.enable()
    else:
        gc.disable()
    with bulk():
        assert not gc.isenabled()
    assert gc.isenabled() is enabled


def test_what_bulk_built_is_left_out_of_later_collections() -> None:
    gc.unfreeze()
    with bulk():
        built = [{"spec": {"n": n}} for n in range(1000)]
    assert gc.get_freeze_count() >= len(built)


def test_bulk_restores_the_collector_when_the_work_fails() -> None:
    gc.enable()
    with pytest.raises(ValueError), bulk():
        raise ValueError("broken input")
    assert gc.isenabled()
