"""The sandbox emulator of the Customs Declaration Service: app, store, seed, faults.

``create_app`` builds the ASGI application; ``InProcessTransport`` runs it behind a
synchronous ``httpx.Client``; ``customs-batch sandbox serve`` serves it over HTTP.
"""

from customs_batch.sandbox.app import create_app
from customs_batch.sandbox.faults import FaultSpec, parse_faults
from customs_batch.sandbox.inprocess import InProcessTransport
from customs_batch.sandbox.ratelimit import DEFAULT_RATE_LIMIT, RateLimit, parse_rate_limit
from customs_batch.sandbox.seed import ApiKey, Seed, builtin_seed, builtin_seed_text, load_seed

__all__ = [
    "DEFAULT_RATE_LIMIT",
    "ApiKey",
    "FaultSpec",
    "InProcessTransport",
    "RateLimit",
    "Seed",
    "builtin_seed",
    "builtin_seed_text",
    "create_app",
    "load_seed",
    "parse_faults",
    "parse_rate_limit",
]
