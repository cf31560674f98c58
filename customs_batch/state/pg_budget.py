"""One rate budget per API key, shared through the state database by every process that
uses the key: two applies at once (two CI jobs, a laptop and a runner) stay under the
environment's ``rate_limit`` together instead of each using all of it.

The budget is an even spacing (one request every ``period / requests`` seconds, with a
small margin, ``MARGIN``: unlike the local limiter it keeps no window of answers) kept in a
row: each slot is taken with one UPDATE that moves the row's next free slot on,
on the server's clock, so every host agrees on the time. The row is keyed by a SHA-256
fingerprint of the key, never the key. A pause after a 429 moves the shared slot too, so
every process holds back. If the database cannot be reached for a slot, the process falls
back to its own spacing (it still keeps the limit alone) and says so once in the log.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
import weakref
from collections.abc import Callable

import psycopg
from psycopg.rows import TupleRow

from customs_batch.client import RateLimit, RateLimiter
from customs_batch.errors import StateError
from customs_batch.state.pg_connect import connect
from customs_batch.state.pg_schema import ensure_schema

logger = logging.getLogger("customs_batch.state")
RETRY_SECONDS = 30.0
"""After the database failed to give a slot, how long the local spacing alone is used."""

_TAKE = """
WITH now AS (SELECT extract(epoch FROM clock_timestamp())::float8 AS t)
UPDATE customs_batch_rate_budgets AS b
   SET next_slot = greatest(b.next_slot, now.t) + %(interval)s
  FROM now
 WHERE b.fingerprint = %(fingerprint)s
RETURNING b.next_slot - %(interval)s, now.t
"""
_PAUSE = """
UPDATE customs_batch_rate_budgets
   SET next_slot = greatest(next_slot, extract(epoch FROM clock_timestamp()) + %(seconds)s)
 WHERE fingerprint = %(fingerprint)s
"""


def key_fingerprint(api_key: str) -> str:
    """What identifies a key's budget in the database: a SHA-256 hex digest, not the key."""
    return hashlib.sha256(b"customs-batch rate budget\0" + api_key.encode()).hexdigest()


class SharedRateLimiter(RateLimiter):
    """A RateLimiter whose slots come from the key's budget row in the database."""

    def __init__(
        self,
        limit: RateLimit,
        url: str,
        fingerprint: str,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        super().__init__(limit, clock=clock, sleep=sleep)
        self._url = url
        self.fingerprint = fingerprint
        self._database_lock = threading.Lock()
        self._connection: psycopg.Connection[TupleRow] | None = None
        self._fallen_back = False
        self._retry_at = 0.0

    def take_slot(self) -> tuple[float, float]:
        """Take the next shared slot: (the slot, the server's time now), in epoch seconds."""
        params = {"interval": self.limit.interval, "fingerprint": self.fingerprint}
        with self._database_lock:
            connection = self._connect()
            try:
                row = connection.execute(_TAKE, params).fetchone()
            except psycopg.Error as exc:
                self._drop()
                raise StateError(f"the rate budget: {type(exc).__name__}") from None
        assert row is not None  # the row was made when connecting
        return float(row[0]), float(row[1])

    def acquire(self) -> float:
        """Wait for this caller's slot in the shared budget; return how long it waited."""
        if self.limit.requests is None:
            return 0.0
        if self._clock() < self._retry_at:
            return super().acquire()
        try:
            slot, now = self.take_slot()
        except StateError as exc:
            self._retry_at = self._clock() + RETRY_SECONDS
            if not self._fallen_back:
                self._fallen_back = True
                logger.warning(
                    "the shared rate budget is out of reach: %s; this process keeps the rate "
                    "limit on its own until it is back",
                    exc.message,
                )
            return super().acquire()
        wait = slot - now
        if wait > 0:
            self._sleep(wait)
        return max(wait, 0.0)

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

    def _connect(self) -> psycopg.Connection[TupleRow]:
        if self._connection is None:
            connection = connect(self._url)
            try:
                ensure_schema(connection)
                # A slot lost in a crash costs nothing: no need to wait for the disk.
                connection.execute("SET synchronous_commit = off")
                connection.execute(
                    "INSERT INTO customs_batch_rate_budgets (fingerprint, next_slot) "
                    "VALUES (%s, 0) ON CONFLICT (fingerprint) DO NOTHING",
                    (self.fingerprint,),
                )
            except psycopg.Error as exc:
                connection.close()
                raise StateError(f"the rate budget: {type(exc).__name__}") from None
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
