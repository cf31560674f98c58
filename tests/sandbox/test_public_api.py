"""The public names of customs_batch.sandbox, which other packages import."""

from __future__ import annotations

import inspect

import customs_batch.sandbox as sandbox


def test_public_api() -> None:
    assert sorted(sandbox.__all__) == sorted(
        [
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
    )


def test_create_app_options() -> None:
    parameters = inspect.signature(sandbox.create_app).parameters
    assert list(parameters) == [
        "seed",
        "db_path",
        "rate_limit",
        "processing_seconds",
        "faults",
        "fault_seed",
        "clock",
        "manual_clock",
        "request_log",
    ]
    assert parameters["rate_limit"].default == sandbox.RateLimit(100, 60.0)
