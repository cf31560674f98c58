"""One rate limit per API key, shared through the state database by every process that
uses the key: two applies at once (two CI jobs, a laptop and a runner) stay under the
environment's ``rate_limit`` together instead of each using all of it.

The shared limit keeps the local limiter's rule (see customs_batch/client/_ratelimit.py) across
processes: a request may leave only ``period`` after the answers of all requests N or more
before it have come back, whichever process sent them, and the requests are evenly spaced
(one every ``period / requests`` seconds, with a small margin, ``MARGIN``). Spacing alone is
not enough: a process that takes its slot and is scheduled late sends late, close to the
next process's slot, and the service's window sees N + 1.

The key's row in ``customs_batch_rate_budgets`` (the table's first name, kept; keyed by a SHA-256 fingerprint of the key,
never the key) holds the next free slot and the number of the last request given out;
``customs_batch_rate_requests`` holds the last requests, each with when it may leave and when
its answer came back (NULL while it is out), all on the database server's clock, so every
host agrees on the time. Taking a request is one short transaction on the row; the taker
then waits until every request N or more before it is answered (it asks again every
``POLL_SECONDS``) and leaves ``period`` after the latest of those answers. Older answered
requests are folded into the row's ``horizon`` (the latest of their answers). A request
lost in a crash is never answered: once it has been out longer than the client's timeouts
and a period (``stale_after``), it counts as answered then, so it does not block the key.

A pause after a 429 moves the shared slot too, so every process holds back. If the database
cannot be reached, the process falls back to its own limiter (it still keeps the limit
alone) and says so once in the log.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

import psycopg
from psycopg.rows import TupleRow

from customs_batch.client import RateLimit, RateLimiter
from customs_batch.errors import StateError
from customs_batch.state.pg_connect import connect
from customs_batch.state.pg_tables import ensure_tables

logger = logging.getLogger("customs_batch.state")
_T = TypeVar("_T")
RETRY_SECONDS = 30.0
"""After the database failed to give a slot, how long the local spacing alone is used."""

POLL_SECONDS = 0.025
"""How often a request that waits for an answer of another process asks the database again."""

_TAKE = """
WITH now AS (SELECT extract(epoch FROM clock_timestamp())::float8 AS t)
UPDATE customs_batch_rate_budgets AS b
   SET next_slot = greatest(b.next_slot, now.t) + %(interval)s,
       last_request = b.last_request + 1
  FROM now
 WHERE b.fingerprint = %(fingerprint)s
RETURNING b.next_slot - %(interval)s, now.t, b.last_request
"""
# The requests N or more before the new one that are answered (or stale) leave the table:
# only the latest of their answers matters, kept in the row's horizon.
_FOLD = """
WITH gone AS (
    DELETE FROM customs_batch_rate_requests
     WHERE fingerprint = %(fingerprint)s AND request <= %(request)s - %(capacity)s
       AND (answered IS NOT NULL OR sent < %(now)s - %(stale)s)
    RETURNING coalesce(answered, sent + %(stale)s) AS answered
)
UPDATE customs_batch_rate_budgets
   SET horizon = greatest(horizon, (SELECT max(answered) FROM gone))
 WHERE fingerprint = %(fingerprint)s
"""
_RECORD = """
INSERT INTO customs_batch_rate_requests (fingerprint, request, sent)
VALUES (%(fingerprint)s, %(request)s, %(slot)s)
"""
# What the window says about a request: how many of those N or more before it are still
# out, and the latest answer among them (a stale one counts as answered when it went stale).
_WINDOW = """
WITH now AS (SELECT extract(epoch FROM clock_timestamp())::float8 AS t)
SELECT now.t,
       (SELECT horizon FROM customs_batch_rate_budgets WHERE fingerprint = %(fingerprint)s),
       count(*) FILTER (WHERE r.answered IS NULL AND r.sent >= now.t - %(stale)s),
       max(coalesce(r.answered, r.sent + %(stale)s))
  FROM now
  LEFT JOIN customs_batch_rate_requests AS r
    ON r.fingerprint = %(fingerprint)s AND r.request <= %(request)s - %(capacity)s
 GROUP BY now.t
"""
_LEAVE = """
UPDATE customs_batch_rate_requests SET sent = %(slot)s
 WHERE fingerprint = %(fingerprint)s AND request = %(request)s
"""
_ANSWERED = """
UPDATE customs_batch_rate_requests SET answered = extract(epoch FROM clock_timestamp())
 WHERE fingerprint = %(fingerprint)s AND request = %(request)s
"""
_PAUSE = """
UPDATE customs_batch_rate_budgets
   SET next_slot = greatest(next_slot, extract(epoch FROM clock_timestamp()) + %(seconds)s)
 WHERE fingerprint = %(fingerprint)s
"""


def key_fingerprint(api_key: str) -> str:
    """What identifies a key's row in the database: a SHA-256 hex digest, not the key (the
    salt keeps its first words: existing rows are keyed by it)."""
    return hashlib.sha256(b"customs-batch rate budget\0" + api_key.encode()).hexdigest()


class SharedRateLimiter(RateLimiter):
    """A RateLimiter whose slots and window come from the key's row in the database.

    ``stale_after``: how long a request may be out before it counts as answered (lost in a
    crash); the client's timeouts and a period.
    """

    def __init__(
        self,
        limit: RateLimit,
        url: str,
        fingerprint: str,
        *,
        stale_after: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        super().__init__(limit, clock=clock, sleep=sleep)
        self._url = url
        self.fingerprint = fingerprint
        self.stale_after = stale_after
        self._database_lock = threading.Lock()
        self._connection: psycopg.Connection[TupleRow] | None = None
        self._fallen_back = False
        self._retry_at = 0.0
        self._out = threading.local()  # the number of this thread's request while it is out

    def take_slot(self) -> tuple[float, float]:
        """Take the next shared request: (its evenly spaced slot, the server's time now), in
        epoch seconds. It is out (in the window) until ``release``."""
        request, slot, now = self._take()
        self._out.request = request
        return slot, now

    def _take(self) -> tuple[int, float, float]:
        params: dict[str, Any] = {
            "interval": self.limit.interval,
            "fingerprint": self.fingerprint,
            "capacity": self._capacity,
            "stale": self.stale_after,
        }

        def take(connection: psycopg.Connection[TupleRow]) -> tuple[int, float, float]:
            with connection.transaction():
                row = connection.execute(_TAKE, params).fetchone()
                assert row is not None  # the row was made when connecting
                slot, now, request = float(row[0]), float(row[1]), int(row[2])
                moment = {**params, "request": request, "now": now, "slot": slot}
                connection.execute(_FOLD, moment)
                connection.execute(_RECORD, moment)
            return request, slot, now

        return self._in_database(take)

    def _window_slot(self, request: int, spaced: float) -> tuple[float, float] | None:
        """When ``request`` may leave by the window (and the server's time now), or None
        while a request N or more before it is still out."""
        params: dict[str, Any] = {
            "fingerprint": self.fingerprint,
            "capacity": self._capacity,
            "stale": self.stale_after,
            "request": request,
        }

        def look(connection: psycopg.Connection[TupleRow]) -> tuple[float, float] | None:
            row = connection.execute(_WINDOW, params).fetchone()
            assert row is not None
            now, horizon, out, answered = row
            if out:
                return None
            latest = max(float(horizon), float(answered) if answered is not None else 0.0)
            slot = max(spaced, latest + self._window)
            connection.execute(_LEAVE, {**params, "slot": slot})
            return slot, float(now)

        return self._in_database(look)

    def acquire(self) -> float:
        """Wait for this caller's slot in the shared rate limit; return how long it waited
        (0 when the caller reserved it: :meth:`reserve`)."""
        if self._reserved():
            return 0.0
        self.release()  # a thread sends one request at a time: its last one is answered
        if self.limit.requests is None or self._called_off():
            return 0.0
        if self._clock() < self._retry_at:
            return super().acquire()
        waited = 0.0
        try:
            request, spaced, _now = self._take()
            self._out.request = request
            while (found := self._window_slot(request, spaced)) is None:
                # Another process's answer is not back yet.
                if self._nap(POLL_SECONDS):
                    return waited  # called off (reserve): its release answers the request
                waited += POLL_SECONDS
        except StateError as exc:
            self._fall_back(exc)
            return waited + super().acquire()
        slot, now = found
        wait = slot - now
        if wait > 0:
            self._nap(wait)
        return waited + max(wait, 0.0)

    def release(self) -> None:
        """The calling thread's request is answered (or failed): every process counts it in
        the window until ``period`` after now."""
        super().release()
        request: int | None = getattr(self._out, "request", None)
        if request is None:
            return
        self._out.request = None
        params = {"fingerprint": self.fingerprint, "request": request}
        try:
            self._in_database(lambda connection: connection.execute(_ANSWERED, params))
        except StateError as exc:
            self._fall_back(exc)  # the request counts as answered once it is stale

    def pause(self, seconds: float) -> None:
        """A 429: hold back every process that shares the key for ``seconds``."""
        super().pause(seconds)
        with self._database_lock:
            try:
                self._connect().execute(
                    _PAUSE, {"seconds": seconds, "fingerprint": self.fingerprint}
                )
            except (psycopg.Error, StateError):
                self._drop()  # the local pause still holds this process back

    def _in_database(self, work: Callable[[psycopg.Connection[TupleRow]], _T]) -> _T:
        with self._database_lock:
            connection = self._connect()
            try:
                return work(connection)
            except psycopg.Error as exc:
                self._drop()
                raise StateError(f"the shared rate limit: {type(exc).__name__}") from None

    def _fall_back(self, exc: StateError) -> None:
        self._retry_at = self._clock() + RETRY_SECONDS
        if not self._fallen_back:
            self._fallen_back = True
            logger.warning(
                "the shared rate limit is out of reach: %s; this process keeps the rate "
                "limit on its own until it is back",
                exc.message,
            )

    def _connect(self) -> psycopg.Connection[TupleRow]:
        if self._connection is None:
            connection = connect(self._url)
            try:
                ensure_tables(connection)
                # A slot lost in a crash costs nothing: no need to wait for the disk.
                connection.execute("SET synchronous_commit = off")
                connection.execute(
                    "INSERT INTO customs_batch_rate_budgets (fingerprint, next_slot) "
                    "VALUES (%s, 0) ON CONFLICT (fingerprint) DO NOTHING",
                    (self.fingerprint,),
                )
            except psycopg.Error as exc:
                connection.close()
                raise StateError(f"the shared rate limit: {type(exc).__name__}") from None
            self._connection = connection
            weakref.finalize(self, connection.close)
        return self._connection

    def _drop(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def close(self) -> None:
        """Close the database connection (the next slot opens another)."""
        with self._database_lock:
            self._drop()
