"""One state per environment: two environments of ``customs-batch.yaml`` never share one.

A state records the objects of one service by their IDs there. An environment block copied
from another whose ``state_dir`` (or ``state: name``) was not changed would read the other
environment's records as its own: its plan would take objects at the other service for
created, and its apply would send updates to their IDs at its own service. Refused when the
file is read, before any command uses either state.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from customs_batch.environments._environment import Environment, StateKind
from customs_batch.errors import ConfigError


def refuse_shared_states(environments: Mapping[str, Environment], path: Path) -> None:
    """ConfigError naming the first two environments whose states are one."""
    seen: dict[tuple[str, ...], str] = {}
    for name, environment in environments.items():
        where, said = _state_of(environment)
        other = seen.setdefault(where, name)
        if other != name:
            # Values are not quoted (see _config.py): the fields that are equal are named.
            raise ConfigError(
                f"{path}: environments {other} and {name} share one state ({said}): each "
                "would read the other's records as its own, and send its updates to objects "
                "of the other's service",
                hint="give each environment its own state: its own state_dir, or, for a "
                "state in PostgreSQL, its own name in its state block",
            )


def _state_of(environment: Environment) -> tuple[tuple[str, ...], str]:
    """Where the environment's state is, comparable, and how to say so."""
    state = environment.state
    if state.backend is StateKind.POSTGRES:
        where = ("postgres", state.url_env or "", state.name or environment.name)
        return where, f"the same name in the database of ${state.url_env}"
    folder = os.path.normcase(os.path.realpath(environment.state_dir))
    return ("local", folder), "the same state_dir"
