"""Schemathesis against /openapi.json of the in-process emulator: never a server error.

A few examples per operation here; ``make fuzz-sandbox`` runs many more by setting
``SANDBOX_FUZZ_EXAMPLES``.
"""

from __future__ import annotations

import os

import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error

from customs_batch.sandbox import create_app

EXAMPLES = int(os.environ.get("SANDBOX_FUZZ_EXAMPLES", "5"))
AUTH = {"Authorization": "Bearer sandbox-key"}

# The rate limit is off: fuzzing sends far more than 100 requests a minute. Closing the
# test gate would hold every later request, and a key rotation would revoke the key they
# send: both controls have tests of their own.
schema = (
    schemathesis.openapi.from_asgi("/openapi.json", create_app(rate_limit=None))
    .exclude(path="/_sandbox/gate", method="POST")
    .exclude(path="/_sandbox/keys/rotate")
)


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
def test_no_server_error(case: schemathesis.Case) -> None:  # type: ignore[type-arg]
    case.call_and_validate(headers=AUTH, checks=[not_a_server_error])
