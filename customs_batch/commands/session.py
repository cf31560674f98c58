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
        moved_from = backend.service_moved_from
        if moved_from is not None:
            _check_the_new_service(environment, backend, client, session, moved_from)
        yield client, session


def _check_the_new_service(
    environment: Environment,
    backend: StateBackend,
    client: CustomsClient,
    session: StateSession,
    moved_from: str,
) -> None:
    """The environment names another service than the one its state was written for (its
    base_url changed, or the state was pushed): before anything is sent, the new one must
    hold the recorded objects as recorded (the same service at a new address, an emulator
    restarted on another port), and the state then names it; otherwise the records' IDs
    there would be other objects, and their updates would go to them."""
    from customs_batch.errors import StateError
    from customs_batch.execution.reconcile import differs_from_the_recorded_service
    from customs_batch.state.backend import PUSHED_SERVICE

    why = differs_from_the_recorded_service(client, session.state)
    if why is None:
        backend.confirm_service()
        return
    name = environment.name
    words = backend.service_words()
    if moved_from == PUSHED_SERVICE:
        held = (
            f"{words.where} holds a state pushed there with `customs-batch state push`, "
            f"and {name!r} is at {backend.service}, which does not hold its records: {why}. "
            "Its records are objects of another service"
        )
        hint = (
            f"push back the state that was {name!r}'s (a copy `customs-batch state pull` "
            f"printed before), or give {name!r} {words.own}; if these records are objects of "
            f"{backend.service} (this environment's own state, pushed back, and the objects "
            f"were changed at the service since), {words.forget} and run again: the next "
            "refresh or plan shows what changed"
        )
    else:
        held = (
            f"{words.where} holds the state of environment {name!r} at {moved_from} "
            f"({words.kept} says so), but {name!r} is now at {backend.service}, which does "
            f"not hold its records: {why}. Its records are objects at {moved_from}"
        )
        hint = (
            f"point {name!r} back at {moved_from}, or give the new service {words.own}; only "
            f"if it is the same service at a new address, {words.forget} and run again"
        )
    raise StateError(
        f"{held}: their updates and cancellations would go to other objects here, "
        "and what they declare would be taken as sent. Nothing was sent",
        hint=hint,
    )
