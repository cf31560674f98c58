"""State: what has been applied to an environment, recorded so that nothing is lost.

The state file is deterministic JSON, versioned, with a lineage and a serial, written
atomically. Every operation of a run is recorded first in an append-only, fsynced journal
beside it, so that recording costs the same whether the state holds a hundred resources or a
hundred thousand; the journal is folded into the file at the end of a run and on the next
load after a crash.
"""

from customs_batch.state.backend import LocalBackend, StateBackend
from customs_batch.state.lock import LockInfo, StateLock
from customs_batch.state.model import RecordStatus, ResourceRecord, ServiceFailure, State

__all__ = [
    "LocalBackend",
    "LockInfo",
    "RecordStatus",
    "ResourceRecord",
    "ServiceFailure",
    "State",
    "StateBackend",
    "StateLock",
]
