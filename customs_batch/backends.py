"""Which backend holds an environment's state (the ``state:`` block of its settings), the
rate limit that goes with it, and the client that uses both.

It composes ``environments`` (the settings), ``state`` (the backends) and ``client`` (the
rate limiter), so it sits above all three: none of them imports another's composition."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from customs_batch.client import RateLimiter
from customs_batch.environments import Environment, StateKind
from customs_batch.errors import ConfigError
from customs_batch.sensitive import Sealer
from customs_batch.service_address import service_key
from customs_batch.state.backend import STATE_FILE, LocalBackend, StateBackend
from customs_batch.state.marks import StateMarks

EMBEDDED_SERVICE = "the built-in sandbox"
"""The service a local state folder records for an environment without base_url (the
emulator run in-process)."""

if TYPE_CHECKING:
    import httpx

    from customs_batch.client import CustomsClient, RetryPolicy


def backend_for(
    environment: Environment,
    environ: Mapping[str, str] | None = None,
    *,
    allow_empty_state: bool = False,
) -> StateBackend:
    """The backend of ``environment``: files in its state folder, or a PostgreSQL database
    whose URL is read from the variable the configuration names (never from the file).

    ``allow_empty_state`` lets a state start empty although traces of an earlier one are
    there (a local state's backup or journal; the history of either).
    """
    settings = environment.state
    sealer = sealer_for(environment, environ)
    if settings.backend is StateKind.LOCAL:
        return LocalBackend(
            environment.state_dir,
            allow_empty_state=allow_empty_state,
            sealer=sealer,
            environment=environment.name,
            service=_service(environment),
            marks=_marks(environment),
        )
    # Imported here so that the local backend never loads the database driver.
    from customs_batch.state.postgres import PostgresBackend

    return PostgresBackend(
        state_url(environment, environ),
        settings.name or environment.name,
        sealer=sealer,
        allow_empty_state=allow_empty_state,
        service=_service(environment),
        local_folder=environment.state_dir,
    )


def _service(environment: Environment) -> str:
    """The service ``environment``'s state records: its base URL in the one form every way
    of writing it has (another environment writing the same service in other letters is
    the same service), or the built-in sandbox."""
    return service_key(environment.base_url) if environment.base_url else EMBEDDED_SERVICE


def _marks(environment: Environment) -> StateMarks | None:
    """The marks of the newest state seen in ``environment``'s state folder, kept in the
    load cache's folder; none for the embedded sandbox, whose data is in that folder."""
    if not environment.base_url:
        return None
    from customs_batch.load_cache import read_cache_file, write_cache_file

    return StateMarks(
        environment.state_dir,
        read=read_cache_file,
        write=write_cache_file,
        service=environment.base_url,
        environment=environment.name,
        fingerprint=lambda: file_digest(environment.state_dir / STATE_FILE),
    )


def file_digest(path: Path) -> str | None:
    """The SHA-256 of the file at ``path`` in hex, or None when it cannot be read (no
    state file yet: a first run's journal alone)."""
    try:
        with path.open("rb") as stream:
            return hashlib.file_digest(stream, "sha256").hexdigest()
    except OSError:
        return None


def sealer_for(environment: Environment, environ: Mapping[str, str] | None = None) -> Sealer:
    """What digests the sensitive values of ``environment``'s state: keyed by its API key,
    read only when a value has to be digested (docs/state.md, "Sensitive fields")."""

    def api_key() -> str:
        try:
            return environment.credential.resolve(environ)
        except ConfigError as exc:
            raise ConfigError(
                f"the state of environment {environment.name!r} keeps sensitive values "
                "(guarantee access codes) as digests keyed by the API key, and the key "
                f"cannot be read: {exc.message}",
                hint=exc.hint,
            ) from None

    return Sealer(api_key)


def state_url(environment: Environment, environ: Mapping[str, str] | None = None) -> str:
    """The database URL, from the variable ``state.url_env`` names."""
    environ = os.environ if environ is None else environ
    variable = environment.state.url_env or ""
    value = environ.get(variable)
    url = (value or "").strip()
    if not url:
        said = "is not set" if value is None else "is set but empty (or blank)"
        raise ConfigError(
            f"the state of environment {environment.name!r} is in PostgreSQL, and the "
            f"variable {variable} that holds the database URL {said}",
            hint=f"export {variable}=postgresql://USER@HOST:PORT/DATABASE (the password may "
            "be in the URL, in PGPASSWORD or in ~/.pgpass; never in customs-batch.yaml)",
        )
    return url


def rate_limiter_for(
    environment: Environment, api_key: str, environ: Mapping[str, str] | None = None
) -> RateLimiter:
    """The run's rate limiter: with the state in PostgreSQL, one limit per key shared by
    every process that uses the key; otherwise this process's own."""
    if environment.state.backend is StateKind.LOCAL or environment.rate_limit.requests is None:
        return RateLimiter(environment.rate_limit)
    from customs_batch.shared_rate_limit import SharedRateLimiter, key_fingerprint

    url = state_url(environment, environ)
    timeouts, limit = environment.timeouts, environment.rate_limit
    return SharedRateLimiter(
        limit,
        url,
        key_fingerprint(api_key),
        # A request out longer than the client waits for it was lost (a crash): it counts
        # as answered then, so it does not hold the key's window forever.
        stale_after=timeouts.connect + timeouts.read + limit.period,
    )


def connect(
    environment: Environment,
    *,
    environ: Mapping[str, str] | None = None,
    retry_policy: RetryPolicy | None = None,
    transport: httpx.BaseTransport | None = None,
) -> CustomsClient:
    """The run's client for ``environment``, whose rate limit is shared through the state's
    database when the state is in PostgreSQL (``environments.connect`` otherwise)."""
    from customs_batch.environments import connect as connect_environment

    return connect_environment(
        environment,
        environ=environ,
        retry_policy=retry_policy,
        transport=transport,
        shared_limiter=lambda key: rate_limiter_for(environment, key, environ),
    )


def rate_limit_note(environment: Environment) -> str | None:
    """What plan may say about the rate limit: None when it is off or shared through the
    state database; otherwise that it holds per process."""
    if environment.rate_limit.requests is None or environment.state.backend is StateKind.POSTGRES:
        return None
    return (
        f"the rate limit ({environment.rate_limit}) holds per process: runs that use the same "
        "key at the same time share the service's limit, not this one (keep the state in "
        "PostgreSQL to share one limit, docs/state.md)"
    )
