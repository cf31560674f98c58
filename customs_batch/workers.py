"""Manifest files spread over worker processes: how many, and the pool that runs them.

Loading is bounded by YAML parsing, one core's work per file, so a big input is spread over
a pool of processes by file; a small one stays in this process, where starting the pool
costs more than it saves (measured in docs/benchmarks.md, "Offline validation" and "Re-plan").
Both ``validate`` and ``plan`` load through here, each with its own work per file.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, TypeVar

from customs_batch.errors import CustomsBatchError
from customs_batch.userfiles import ReadFiles, add_files_read, collecting_reads

if TYPE_CHECKING:
    import multiprocessing.context

# A pool pays off from this many files, or from this many bytes of manifests (10,000 small
# movements in 100 files are 4 MB and load in about 1.2 s of one core).
POOL_MIN_FILES = 500
POOL_MIN_BYTES = 2 * 1024 * 1024
# Files per task sent to a worker: at most this many (a round trip per task), and at least
# four tasks per worker, so that one worker is not left with the big files at the end.
CHUNK_FILES = 64
_TASKS_PER_WORKER = 4

Item = TypeVar("Item")
Settings = TypeVar("Settings")
Outcome = TypeVar("Outcome")


class WorkerDied(CustomsBatchError):
    """A loading process died (out of memory, or killed): nothing it loaded is used."""


JOBS_PER_CPU = 4
"""The most loading processes ``--jobs`` starts per CPU: loading is CPU work, so more only
add memory (each process holds an interpreter and its part of the files)."""


def worker_count(jobs: int | None, files: Sequence[str]) -> int:
    """How many processes load ``files``: ``jobs`` if given (at most :data:`JOBS_PER_CPU`
    per CPU, and one a file), else by the size of the input."""
    if jobs is not None:
        return max(1, min(jobs, len(files), JOBS_PER_CPU * cpus()))
    if len(files) < 2:
        return 1
    if len(files) < POOL_MIN_FILES and _total_bytes(files, POOL_MIN_BYTES) < POOL_MIN_BYTES:
        return 1
    return max(1, min(cpus(), len(files)))


def each_file(
    files: Sequence[Item],
    work: Callable[[Item, Settings], Outcome],
    settings: Settings,
    workers: int,
    *,
    hint: str,
) -> Iterator[Outcome]:
    """``work(file, settings)`` for each of ``files`` (paths, or what names one), in their
    order, here or in a pool of ``workers`` processes.

    ``work`` and ``settings`` must be picklable (a module-level function, a dataclass) when
    ``workers`` is above 1; what ``work`` returns is sent back, so it should be small.
    ``hint`` says how to run again in one process, should a worker die. What the workers
    read is noted as read by this process (:func:`customs_batch.userfiles.files_read`).
    """
    if workers <= 1:
        for file in files:
            yield work(file, settings)
        return
    # Imported here: a run of one file needs no pool, and `validate one.yaml` starts faster.
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    size = max(1, min(CHUNK_FILES, -(-len(files) // (workers * _TASKS_PER_WORKER))))
    chunks = [list(files[start : start + size]) for start in range(0, len(files), size)]
    try:
        with ProcessPoolExecutor(workers, mp_context=_pool_context()) as pool:
            for outcomes, read in pool.map(
                _each, [work] * len(chunks), chunks, [settings] * len(chunks)
            ):
                add_files_read(read)
                yield from outcomes
    except BrokenProcessPool as exc:
        raise WorkerDied(
            "a process loading the manifests died (out of memory, or killed)", hint=hint
        ) from exc


def _each(
    work: Callable[[Item, Settings], Outcome], files: list[Item], settings: Settings
) -> tuple[list[Outcome], ReadFiles]:
    """In a loading process: the outcomes, and the files read for them."""
    with collecting_reads() as read:
        return [work(file, settings) for file in files], read


def _pool_context() -> multiprocessing.context.BaseContext:
    # fork shares the already imported modules (schemas compiled, yaml loaded): a worker is
    # ready in milliseconds where spawn re-imports everything (see docs/benchmarks.md).
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


def _total_bytes(files: Sequence[str], enough: int) -> int:
    """The size of ``files`` together, counted until it reaches ``enough``."""
    total = 0
    for file in files:
        try:
            total += os.stat(file).st_size
        except OSError:
            continue  # the loader reports an unreadable file where it meets it
        if total >= enough:
            break
    return total


def cpus() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1
