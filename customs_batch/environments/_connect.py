"""Building the run's client for an environment: the network, or the emulator in-process."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Mapping

import httpx

from customs_batch.client import CustomsClient, RateLimiter, RetryPolicy, Sender
from customs_batch.environments._environment import Environment
from customs_batch.errors import StateError
from customs_batch.folders import make_private_folder

LOCAL_BASE_URL = "http://local.sandbox"


def local_transport(environment: Environment) -> httpx.BaseTransport:
    """The built-in emulator as an in-process transport, its data in the state directory."""
    # Imported here so commands that never use `local` do not load the emulator.
    from customs_batch.sandbox import create_app
    from customs_batch.sandbox.inprocess import InProcessTransport

    try:
        make_private_folder(environment.state_dir)  # it holds the emulator's data
    except OSError as exc:
        raise _state_folder_error(environment, exc) from None
    # The emulator itself is unlimited; the client keeps the environment's rate_limit.
    return InProcessTransport(create_app(db_path=environment.sandbox_db, rate_limit=None))


def _state_folder_error(environment: Environment, exc: OSError) -> StateError:
    """The error for a state folder of ``local`` that cannot be made (a read-only checkout,
    a folder without write permission): which, why, and that nothing was sent."""
    name = errno.errorcode.get(exc.errno or 0)
    why = f"{exc.strerror or exc}, {name}" if name else (exc.strerror or str(exc))
    return StateError(
        f"{environment.state_dir}: cannot make the state folder, where the built-in local "
        f"emulator keeps its data ({why})",
        hint="run from a folder you may write in, or set state_dir in customs-batch.yaml to "
        "one; nothing was sent and the state is unchanged",
    )


def connect(
    environment: Environment,
    *,
    environ: Mapping[str, str] | None = None,
    transport: httpx.BaseTransport | None = None,
    retry_policy: RetryPolicy | None = None,
    shared_limiter: Callable[[str], RateLimiter] | None = None,
) -> CustomsClient:
    """The client of ``environment``, with one rate limiter for the whole run.

    ``transport`` replaces the network (tests); the built-in ``local`` environment gets the
    emulator in-process. ``shared_limiter`` makes the rate limiter of a key shared with
    other processes (``customs_batch.backends.connect`` passes the one kept in a
    PostgreSQL state); without it the limiter is this process's own. Raises ConfigError when the key is not where the environment says.
    After a 401 the client reads the key again from the same place, and goes on with it if
    it changed (a key rotated during a long run).
    """
    source = os.environ if environ is None else environ
    key = environment.credential.resolve(source)
    if transport is None and environment.builtin:
        transport = local_transport(environment)
    timeouts = environment.timeouts
    sender = Sender(
        environment.base_url or LOCAL_BASE_URL,
        key,
        rate_limiter=(
            shared_limiter(key)
            if shared_limiter is not None
            else RateLimiter(environment.rate_limit)
        ),
        retry_policy=retry_policy,
        timeout=httpx.Timeout(timeouts.read, connect=timeouts.connect),
        transport=transport,
        key_source=None if environment.builtin else lambda: environment.credential.resolve(source),
    )
    return CustomsClient(sender, environment.endpoints)
