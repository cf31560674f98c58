"""The one way a command reaches the service: a client for the chosen environment, alone
(``get``, ``env check``) or with the state's session under its lock (``apply``,
``refresh``, ``import``, ``state adopt``).

httpx is imported only when a client is opened, so that a command that sends nothing
(``plan``, ``status``) starts without it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from customs_batch.client import CustomsClient, RetryPolicy
    from customs_batch.environments import Environment
    from customs_batch.state import StateBackend
    from customs_batch.state.backend import StateSession


def open_client(
    environment: Environment, *, retry_policy: RetryPolicy | None = None
) -> CustomsClient:
    """The run's client for ``environment`` (its rate limit shared through the state's
    database when the state is in PostgreSQL); close it, or use it in a ``with``."""
    from customs_batch.backends import connect

    return connect(environment, retry_policy=retry_policy)


@contextmanager
def locked_session(
    environment: Environment, backend: StateBackend, operation: str, *, lock_timeout: float
) -> Iterator[tuple[CustomsClient, StateSession]]:
    """The run's client and ``backend``'s session under the state lock (waiting up to
    ``lock_timeout`` seconds for another run's); both closed on the way out, the session
    first, so what it recorded is saved whatever the client does."""
    with (
        open_client(environment) as client,
        backend.open(operation, lock_timeout=lock_timeout) as session,
    ):
        yield client, session
