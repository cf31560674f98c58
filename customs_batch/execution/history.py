"""What an apply writes to the environment's history (``customs_batch.state.history``).

For each request: a ``request`` entry before it leaves (durable with its intent, so a run
killed while the request is out leaves an entry that shows it unanswered), then an
``answer`` entry with what came back, written before the outcome is recorded and durable
no later than it. A record-only operation is one entry: ``moved`` or ``dropped``.

Every entry names the run, the operator (user, host, and the CI run when there is one)
and the commit of the manifests. The body of a request is kept only as a digest keyed by
the API key (``Sealer.body_digest``): a plain hash of a body that holds a guarantee's access
code would give the code away to whoever tries the 10,000 codes. The history holds no access
code and never the API key.
"""

from __future__ import annotations

import getpass
import os
import socket
import subprocess
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from customs_batch.errors import ServiceError
from customs_batch.sensitive import Sealer, clear_values, without_quoted
from customs_batch.state.backend import StateSession
from customs_batch.state.history import LINEAGE_SHOWN, HistoryStore
from customs_batch.state.lock import LockInfo
from customs_batch.state.model import ResourceRecord, Scalar, State

if TYPE_CHECKING:
    from customs_batch.client import Exchange
    from customs_batch.planning.model import PlannedChange

GIT_TIMEOUT = 10.0

Operator = Mapping[str, str | Mapping[str, str] | None]
"""Who runs a change: ``user``, ``host`` and ``ci`` (the CI run, None outside CI)."""


def operator(environ: Mapping[str, str] | None = None) -> Operator:
    """Who runs this: the user, the host, and the CI run from the variables GitHub Actions
    and GitLab CI set (None outside CI)."""
    environ = os.environ if environ is None else environ
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (a bare container)
        user = str(os.getuid())
    return {"user": user, "host": socket.gethostname(), "ci": _ci(environ)}


def _ci(environ: Mapping[str, str]) -> dict[str, str] | None:
    if environ.get("GITHUB_RUN_ID"):
        server = environ.get("GITHUB_SERVER_URL", "https://github.com").rstrip("/")
        repository = environ.get("GITHUB_REPOSITORY", "")
        run_id = environ["GITHUB_RUN_ID"]
        return {
            "system": "github-actions",
            "runId": run_id,
            "url": f"{server}/{repository}/actions/runs/{run_id}" if repository else "",
            "commit": environ.get("GITHUB_SHA", ""),
            "actor": environ.get("GITHUB_ACTOR", ""),
        }
    if environ.get("CI_JOB_ID"):
        return {
            "system": "gitlab-ci",
            "runId": environ["CI_JOB_ID"],
            "url": environ.get("CI_JOB_URL", ""),
            "commit": environ.get("CI_COMMIT_SHA", ""),
            "actor": environ.get("GITLAB_USER_LOGIN", ""),
        }
    return None


def manifests_commit(folder: Path) -> str:
    """``git rev-parse HEAD`` in ``folder``; empty when it is not in a git work tree, or git
    is missing or fails (the history never stops a run for want of git)."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and len(commit) in (40, 64) else ""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class RunHistory:
    """The entries of one run, in ``store``."""

    store: HistoryStore
    operator: Operator
    commit: str
    sealer: Sealer
    """Digests each body sent, keyed by the environment's API key."""
    run: str = field(default_factory=lambda: uuid.uuid4().hex)
    clock: Callable[[], str] = _now
    state: Callable[[], State] | None = None
    """The state the run records into: each entry names its lineage and serial, so that a
    state file older than its history is known (``state.history.state_behind_history``)."""

    def _append(self, event: str, change: PlannedChange, **fields: object) -> int:
        entry: dict[str, object] = {
            "time": self.clock(),
            "run": self.run,
            "operator": self.operator,
            "commit": self.commit,
            "event": event,
            "address": str(change.address),
            "operation": change.operation.value,
            **fields,
        }
        if self.state is not None:
            state = self.state()
            if state.lineage:  # a first run's state gets its lineage with its first record
                entry["lineage"] = state.lineage[:LINEAGE_SHOWN]
                entry["serial"] = state.serial
        return self.store.append(entry)

    def requested(self, change: PlannedChange, key: str | None) -> int:
        """The entry written before a request leaves; its ``seq``."""
        return self._append("request", change, idempotencyKey=key)

    def answered(
        self,
        request: int,
        change: PlannedChange,
        key: str | None,
        exchanges: list[Exchange],
        outputs: Mapping[str, Scalar] | None = None,
        error: ServiceError | None = None,
    ) -> None:
        """The entry of what came back for the request entry ``request``."""
        last = exchanges[-1] if exchanges else None
        status: int | str = "unknown" if last is None or last.status is None else last.status
        if error is not None and _never_left(error):
            status = "not-sent"
        fields: dict[str, object] = {
            "request": request,
            "idempotencyKey": key,
            "status": status,
            "requests": [
                {
                    "method": e.method,
                    "path": e.path,
                    "bodyDigest": (
                        None if e.body_sha256 is None else self.sealer.body_digest(e.body_sha256)
                    ),
                    "status": e.status,
                }
                for e in exchanges
            ],
            "ids": _ids(outputs or {}),
            "mrn": next((e.mrn for e in reversed(exchanges) if e.mrn), None),
        }
        if error is not None:
            # An access code the service quotes back is kept as (sensitive), as in the state.
            secrets = clear_values(change.address.kind, change.spec)
            fields["errors"] = without_quoted(last.errors, secrets) if last is not None else None
            fields["failure"] = without_quoted(error.message, secrets)
        self._append("answer", change, **fields)

    def moved(self, change: PlannedChange, outputs: Mapping[str, Scalar]) -> None:
        """A renamed document took over its record; nothing was sent."""
        self._append("moved", change, movedFrom=str(change.moved_from), ids=_ids(outputs))

    def adopted(self, change: PlannedChange, outputs: Mapping[str, Scalar]) -> None:
        """A creation refused as a duplicate (409) found its object at the service, the same
        as asked, and took it as its own: the IDs the state records from now on."""
        self._append("adopted", change, ids=_ids(outputs))

    def handed_over(self, change: PlannedChange) -> None:
        """Party fields changed owner between two documents of one declaration; nothing
        was sent."""
        self._append("handed-over", change)

    def dropped(self, change: PlannedChange) -> None:
        """A record was dropped (its document is gone); nothing was sent."""
        self._append("dropped", change)


def _never_left(error: ServiceError) -> bool:
    from customs_batch.client import NotSentError

    return isinstance(error, NotSentError)


def _ids(outputs: Mapping[str, Scalar]) -> dict[str, Scalar]:
    return {k: v for k, v in sorted(outputs.items()) if k == "id" or k.endswith("Id")}


class HistoriedSession:
    """A state session whose every wait for the disk (or commit) first makes the history
    durable: an outcome is never on disk before its history entry."""

    def __init__(self, session: StateSession, history: HistoryStore) -> None:
        self._session = session
        self._history = history

    @property
    def state(self) -> State:
        return self._session.state

    @state.setter
    def state(self, value: State) -> None:
        self._session.state = value

    @property
    def lock_info(self) -> LockInfo:
        return self._session.lock_info

    @lock_info.setter
    def lock_info(self, value: LockInfo) -> None:
        self._session.lock_info = value

    def record(self, record: ResourceRecord) -> None:
        self._history.sync()
        self._session.record(record)

    def record_soon(self, record: ResourceRecord) -> None:
        self._session.record_soon(record)

    def when_durable(self, callback: Callable[[], None]) -> None:
        self._session.when_durable(callback)

    def flush(self) -> None:
        try:
            self._history.sync()
        finally:  # outcomes are made durable even when the history cannot be
            self._session.flush()

    def forget(self, address: str) -> None:
        self._history.sync()
        self._session.forget(address)

    def check_lock(self) -> None:
        self._session.check_lock()

    def replace(self, state: State) -> None:
        self._history.sync()
        self._session.replace(state)

    def close(self) -> None:
        self._history.sync()
        self._session.close()

    def __enter__(self) -> HistoriedSession:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
