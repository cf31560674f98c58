"""The errors customs-batch raises, and the exit codes they map to.

Exception tree::

    CustomsBatchError            anything the user can act on; exit 3 unless said otherwise
    ├── UsageError               wrong words on the command line; exit 64
    ├── ConfigError              customs-batch.yaml or a seed file is wrong
    ├── ManifestError            a manifest cannot be read at all (not a finding)
    ├── StateError               the state, journal or lock cannot be used
    └── ServiceError             the service answered with an error, or could not be reached
                                 (subclasses live in customs_batch.client)

Exit codes (documented in the README): 0 success or no changes; 1 findings, failed
operations, or an apply declined (at its prompt, or by the large-change guard); 2 changes present (plan --detailed-exitcode only); 3 an error that stopped the
command; 4 apply's time budget ran out with operations left; 64 a usage error; 130
interrupted.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """Process exit codes; never 2 for anything but "changes present"."""

    OK = 0
    FINDINGS = 1
    CHANGES = 2
    ERROR = 3
    OUT_OF_TIME = 4
    USAGE = 64
    INTERRUPTED = 130


class CustomsBatchError(Exception):
    """Root of every error customs-batch reports to the user.

    ``message`` says what went wrong and where; ``hint`` says what to do about it.
    """

    exit_code: ExitCode = ExitCode.ERROR

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def details(self) -> str | None:
        """A longer report printed before the message (e.g. the findings), if any."""
        return None

    def __str__(self) -> str:
        if self.hint:
            return f"{self.message}\n  hint: {self.hint}"
        return self.message


class UsageError(CustomsBatchError):
    """The command line asks for something that cannot be done."""

    exit_code = ExitCode.USAGE


class ConfigError(CustomsBatchError):
    """A configuration or seed file is missing, unreadable or invalid."""


class ManifestError(CustomsBatchError):
    """A manifest path cannot be read at all."""


class StateError(CustomsBatchError):
    """The state file, journal or lock cannot be used."""


class ServiceError(CustomsBatchError):
    """The service refused a request or could not be reached."""
