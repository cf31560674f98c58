"""Manifest files over worker processes: how many, in order, and a dead worker."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from customs_batch.workers import (
    POOL_MIN_BYTES,
    POOL_MIN_FILES,
    WorkerDied,
    cpus,
    each_file,
    worker_count,
)


def _files(folder: Path, count: int, size: int = 10) -> list[str]:
    paths = []
    for number in range(count):
        path = folder / f"m{number:04d}.yaml"
        path.write_bytes(b"#" * size)
        paths.append(str(path))
    return paths


@pytest.mark.parametrize(("jobs", "count", "expected"), [(4, 2, 2), (1, 600, 1), (3, 0, 1)])
def test_jobs_asked_for_are_used_up_to_one_a_file(
    tmp_path: Path, jobs: int, count: int, expected: int
) -> None:
    assert worker_count(jobs, _files(tmp_path, count)) == expected


def test_jobs_asked_for_are_at_most_four_per_cpu(tmp_path: Path) -> None:
    """--jobs 100000 over many files: memory stays bounded, loading is CPU work."""
    files = _files(tmp_path, 4 * cpus() + 3)
    assert worker_count(100_000, files) == 4 * cpus()
    assert worker_count(2, files) == min(2, 4 * cpus())


def test_a_small_input_stays_in_this_process(tmp_path: Path) -> None:
    assert worker_count(None, _files(tmp_path, 3)) == 1
    assert worker_count(None, _files(tmp_path, POOL_MIN_FILES - 1)) == 1


def test_many_files_or_many_bytes_use_every_cpu(tmp_path: Path) -> None:
    (tmp_path / "many").mkdir()
    (tmp_path / "big").mkdir()
    many = _files(tmp_path / "many", POOL_MIN_FILES)
    big = _files(tmp_path / "big", 2, size=POOL_MIN_BYTES // 2)
    assert worker_count(None, many) == cpus()
    assert worker_count(None, big) == min(cpus(), 2)
    assert worker_count(None, big[:1]) == 1  # one file is one process's work


def _shout(file: str, suffix: str) -> str:
    return f"{Path(file).name}{suffix}:{os.getpid()}"


def test_a_pool_gives_each_file_s_outcome_in_the_order_of_the_files(tmp_path: Path) -> None:
    files = _files(tmp_path, 20)
    pooled = list(each_file(files, _shout, "!", 2, hint="h"))
    assert [outcome.split(":")[0] for outcome in pooled] == [
        f"{Path(file).name}!" for file in files
    ]
    assert str(os.getpid()) not in {outcome.split(":")[1] for outcome in pooled}
    alone = list(each_file(files, _shout, "!", 1, hint="h"))
    assert {outcome.split(":")[1] for outcome in alone} == {str(os.getpid())}


def _die(file: str, settings: object) -> str:
    os._exit(9)  # what the kernel's OOM killer does to a worker, from the pool's view


def test_a_dead_worker_is_an_error_with_the_callers_way_out(tmp_path: Path) -> None:
    with pytest.raises(WorkerDied, match="died") as info:
        list(each_file(_files(tmp_path, 2), _die, None, 2, hint="run again with --jobs 1"))
    assert info.value.hint == "run again with --jobs 1"
