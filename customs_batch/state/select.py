"""Which backend holds an environment's state: the ``state:`` block of its settings."""

from __future__ import annotations

import os
from collections.abc import Mapping

from customs_batch.environments import Environment, StateKind
from customs_batch.errors import ConfigError
from customs_batch.state.backend import LocalBackend, StateBackend


def backend_for(
    environment: Environment,
    environ: Mapping[str, str] | None = None,
    *,
    allow_empty_state: bool = False,
) -> StateBackend:
    """The backend of ``environment``: files in its state folder, or a PostgreSQL database
    whose URL is read from the variable the configuration names (never from the file).

    ``allow_empty_state`` lets a local state start empty although traces of an earlier one
    (a backup, a journal) are there; a database keeps no such traces apart from its rows.
    """
    settings = environment.state
    if settings.backend is StateKind.LOCAL:
        return LocalBackend(environment.state_dir, allow_empty_state=allow_empty_state)
    environ = os.environ if environ is None else environ
    variable = settings.url_env or ""
    url = environ.get(variable, "").strip()
    if not url:
        raise ConfigError(
            f"the state of environment {environment.name!r} is in PostgreSQL, and the "
            f"variable {variable} that holds the database URL is not set",
            hint=f"export {variable}=postgresql://USER@HOST:PORT/DATABASE (the password may "
            "be in the URL, in PGPASSWORD or in ~/.pgpass; never in customs-batch.yaml)",
        )
    # Imported here so that the local backend never loads the database driver.
    from customs_batch.state.postgres import PostgresBackend

    return PostgresBackend(url, settings.name or environment.name)
