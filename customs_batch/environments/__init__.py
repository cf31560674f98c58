"""Environments: ``customs-batch.yaml``, the built-in ``local`` emulator, and API keys.

``load_project()`` finds and checks the configuration; ``ProjectConfig.select()`` picks the
environment (``--env``, ``$CUSTOMS_BATCH_ENV``, ``default_environment``, ``local``);
``connect()`` builds the run's client. No function here returns or prints a key except
``CredentialSource.resolve``, which only ``connect`` calls.
"""

from typing import TYPE_CHECKING, Any

from customs_batch.environments._config import (
    CONFIG_NAME,
    ENV_VARIABLE,
    ProjectConfig,
    env_words,
    find_config,
    load_config,
    load_project,
)
from customs_batch.environments._credentials import (
    SANDBOX_KEY,
    CredentialKind,
    CredentialSource,
)
from customs_batch.environments._environment import (
    LOCAL,
    Environment,
    NotifyOn,
    NotifySettings,
    StateKind,
    StateSettings,
    Timeouts,
)

if TYPE_CHECKING:
    from customs_batch.environments._connect import connect


def __getattr__(name: str) -> Any:
    # connect() builds the httpx client: imported when a command first needs it (see
    # customs_batch.client).
    if name != "connect":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from customs_batch.environments._connect import connect

    globals()["connect"] = connect
    return connect


__all__ = [
    "CONFIG_NAME",
    "ENV_VARIABLE",
    "LOCAL",
    "SANDBOX_KEY",
    "CredentialKind",
    "CredentialSource",
    "Environment",
    "NotifyOn",
    "NotifySettings",
    "ProjectConfig",
    "StateKind",
    "StateSettings",
    "Timeouts",
    "connect",
    "env_words",
    "find_config",
    "load_config",
    "load_project",
]
