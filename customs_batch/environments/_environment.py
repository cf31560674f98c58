"""An environment: where the service is, how to authenticate, how fast to go."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from enum import StrEnum
from pathlib import Path
from types import MappingProxyType

from customs_batch.client import EndpointMap, RateLimit
from customs_batch.environments._credentials import CredentialKind, CredentialSource

LOCAL = "local"
STATE_DIR = ".customs-batch"


@dataclass(frozen=True)
class Timeouts:
    """Seconds to wait for a connection and for an answer."""

    connect: float = 10.0
    read: float = 30.0

    @property
    def answered_within(self) -> timedelta:
        """How long after a request left any answer to it would have come."""
        return timedelta(seconds=self.connect + self.read)


class StateKind(StrEnum):
    """Where an environment's state lives."""

    LOCAL = "local"
    POSTGRES = "postgres"


@dataclass(frozen=True)
class StateSettings:
    """The ``state:`` block of an environment.

    ``url_env`` names the variable holding the database URL (never the URL itself: it may
    carry a password); ``name`` is the state's name in the database.
    """

    backend: StateKind = StateKind.LOCAL
    url_env: str | None = None
    name: str | None = None


@dataclass(frozen=True)
class LargeChangeGuard:
    """The ``large_change_guard:`` block: once the state holds ``min_records`` records, an
    apply whose creates exceed ``max_create_share`` of them stops, sending nothing, unless
    ``--allow-large-change`` is given."""

    min_records: int = 50
    max_create_share: float = 0.5


class NotifyOn(StrEnum):
    """When an apply sends a notification."""

    REJECTION = "rejection"
    """Customs rejected something (a departure ``invalid``, a cancellation refused)."""
    NEEDS_DECISION = "needs-decision"
    """An outcome is unknown: someone must look before it is sent again."""
    END = "end"
    """Every apply that got as far as a plan, however it ended."""


DEFAULT_NOTIFY_ON = frozenset({NotifyOn.REJECTION, NotifyOn.NEEDS_DECISION})


@dataclass(frozen=True)
class NotifySettings:
    """The ``notify:`` block of an environment.

    ``urls_env`` names the variable holding the notification URLs (never the URLs
    themselves: they carry the services' tokens); ``on`` is when to send one.
    """

    urls_env: str
    on: frozenset[NotifyOn] = DEFAULT_NOTIFY_ON


@dataclass(frozen=True)
class Environment:
    """One named target of the tool.

    ``base_url`` None means the built-in emulator, run in-process with its data in SQLite
    under ``state_dir``.
    """

    name: str
    base_url: str | None
    credential: CredentialSource
    rate_limit: RateLimit
    parallelism: int
    timeouts: Timeouts
    state_dir: Path
    endpoint_overrides: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    state: StateSettings = field(default_factory=StateSettings)
    large_change_guard: LargeChangeGuard = field(default_factory=LargeChangeGuard)
    notify: NotifySettings | None = None
    """Where and when apply sends notifications; None: it sends none."""

    @property
    def builtin(self) -> bool:
        """Whether this is the in-process emulator rather than a service over the network."""
        return self.base_url is None

    @property
    def endpoints(self) -> EndpointMap:
        """The endpoint map of docs/api-choices.md, with this environment's overrides."""
        return EndpointMap().with_overrides(self.endpoint_overrides)

    @property
    def sandbox_db(self) -> Path:
        """Where the built-in emulator keeps its data."""
        return self.state_dir / "sandbox.sqlite3"


def local_environment(
    root: Path,
    *,
    state_dir: str = STATE_DIR,
    rate_limit: RateLimit | None = None,
    parallelism: int = 4,
    timeouts: Timeouts | None = None,
) -> Environment:
    """The built-in ``local`` environment of a project rooted at ``root``."""
    return Environment(
        name=LOCAL,
        base_url=None,
        credential=CredentialSource(CredentialKind.BUILTIN),
        rate_limit=rate_limit or RateLimit(None),
        parallelism=parallelism,
        timeouts=timeouts or Timeouts(),
        state_dir=root / state_dir / LOCAL,
    )
