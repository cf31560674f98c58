"""``env`` as functions: the environments of customs-batch.yaml and whether a key works,
never showing a key."""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from customs_batch.client import (
    AuthenticationError,
    Exchange,
    NotFoundError,
    PermissionDeniedError,
    RetryPolicy,
)
from customs_batch.commands.session import open_client
from customs_batch.environments import Environment, StateKind, load_project
from customs_batch.errors import ExitCode, ServiceError


@dataclass(frozen=True)
class EnvOptions:
    """``name``: an environment of customs-batch.yaml (None: ``$CUSTOMS_BATCH_ENV``, then
    the configured default)."""

    name: str | None = None


@dataclass(frozen=True)
class EnvironmentEntry:
    """An environment, and whether it is the one chosen when none is named."""

    environment: Environment
    default: bool

    def describe(self) -> dict[str, Any]:
        """Its settings and where its key is read from, not the key."""
        environment = self.environment
        return {
            "name": environment.name,
            "base_url": environment.base_url or "built-in emulator (in-process)",
            "api_key": environment.credential.describe(),
            "rate_limit": str(environment.rate_limit),
            "parallelism": environment.parallelism,
            "timeouts": {
                "connect": environment.timeouts.connect,
                "read": environment.timeouts.read,
            },
            "state_dir": str(environment.state_dir),
            "state": _state_place(environment),
            "endpoint_overrides": dict(environment.endpoint_overrides),
            "default": self.default,
        }


def _state_place(environment: Environment) -> str:
    """Where the environment's state is: its folder, or its name in the database of the
    variable ``url_env`` names (whether set; never the URL, which may hold a password)."""
    state = environment.state
    if state.backend is StateKind.POSTGRES and state.url_env:
        value = os.environ.get(state.url_env)
        found = "not set" if value is None else "set" if value.strip() else "empty"
        return f"postgres: the state {state.name} in the database of ${state.url_env} ({found})"
    return f"local: files in {environment.state_dir}"


def list_environments() -> tuple[EnvironmentEntry, ...]:
    """Every environment of the project around the working folder (the built-in ``local``
    included), by name."""
    project = load_project()
    chosen = project.select(None).name
    return tuple(
        EnvironmentEntry(environment, environment.name == chosen)
        for _, environment in sorted(project.environments.items())
    )


def show_environment(options: EnvOptions) -> EnvironmentEntry:
    """The environment ``options`` names."""
    project = load_project()
    environment = project.select(options.name)
    return EnvironmentEntry(environment, environment.name == project.select(None).name)


@dataclass(frozen=True)
class CheckResult:
    """What one authenticated call said of the key: ``problem`` is None when the service
    accepted it, after ``elapsed_ms``; otherwise why it did not."""

    environment: str
    where: str
    source: str
    elapsed_ms: float | None = None
    problem: str | None = None
    hint: str | None = None
    """With a problem, what to do about it, when the error says."""
    failed_first: str = ""
    """The attempts that failed before the last one (a connection dropped, a 503), in
    words; empty when the first attempt was the last."""

    @property
    def exit_code(self) -> ExitCode:
        """0 when the key works, else 3."""
        return ExitCode.OK if self.problem is None else ExitCode.ERROR

    @property
    def message(self) -> str:
        """The one line that says how the check went."""
        retried = f"; before it, {self.failed_first}" if self.failed_first else ""
        if self.problem is not None:
            return f"{self.environment}: {self.problem}{retried}"
        return (
            f"{self.environment}: {self.where} accepted the key from {self.source} "
            f"({self.elapsed_ms:.0f} ms{retried})"
        )


def check_environment(
    options: EnvOptions,
    clock: Callable[[], float] = time.perf_counter,
    retry_policy: RetryPolicy | None = None,
) -> CheckResult:
    """Make one cheap authenticated call (one page of one template group) and say whether
    the key works; ``clock`` (seconds) times it. The call is retried as apply retries a
    read (``retry_policy``, apply's by default): a connection dropped once, or a 503, is
    not taken for a wrong address or key; the result names the attempts that failed. The
    service's refusal or absence is the result's ``problem``; a configuration that names
    no usable key is raised."""
    environment = load_project().select(options.name)
    checked = CheckResult(
        environment.name,
        environment.base_url or "the built-in emulator",
        environment.credential.describe(),
    )
    started = clock()
    hint: str | None = None
    attempts: list[Exchange] = []
    try:
        with open_client(environment, retry_policy=retry_policy) as client:
            attempts = client.sender.watch()
            client.list_template_groups(page_size=1)
    except AuthenticationError as error:
        problem = (
            f"{checked.where} rejected the key from {checked.source} as invalid or expired "
            f"(401): {error.service_message}. Check that it holds the current key."
        )
    except PermissionDeniedError as error:
        problem = (
            f"{checked.where} knows the key from {checked.source} but refuses it (403): "
            f"{error.service_message}. Check that the account is activated and the key has "
            "permission."
        )
    except NotFoundError as error:
        # The client's words for a 404 say to check the ID; the check names none: the
        # list of template groups is not where base_url says the API is.
        problem = (
            f"{checked.where} has no list of template groups where the API's paths should "
            f"be ({error.status}, {error.operation}): {error.service_message}"
        )
        hint = (
            "check the environment's base_url: it is the address the API's paths (/v1/...) "
            "follow, with the service's path prefix if it has one (or the list_template_groups "
            "path of its endpoints:, when it sets one)"
        )
    except ServiceError as error:
        problem, hint = error.message, error.hint
    else:
        return CheckResult(
            checked.environment,
            checked.where,
            checked.source,
            (clock() - started) * 1000,
            failed_first=_failed_first(attempts),
        )
    return CheckResult(
        checked.environment,
        checked.where,
        checked.source,
        problem=problem,
        hint=hint,
        failed_first=_failed_first(attempts),
    )


def _failed_first(attempts: list[Exchange]) -> str:
    """The attempts before the last, in words: ``2 attempts failed (1 no answer, 1 503)``."""
    earlier = Counter("no answer" if a.status is None else str(a.status) for a in attempts[:-1])
    if not earlier:
        return ""
    said = ", ".join(f"{n} {what}" for what, n in earlier.items())
    count = sum(earlier.values())
    return f"{count} attempt(s) failed ({said}), retried as apply retries them"
