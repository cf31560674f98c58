"""The JSON Schema of ``customs-batch.yaml``."""

from __future__ import annotations

from typing import Any

# Upper case by convention, and so that a key pasted here is not taken for a name.
ENV_VAR_NAME = r"^[A-Z_][A-Z0-9_]*$"
# [0-9], not \d: \d takes any script's digits, and 10/minute written in Arabic-Indic digits
# was taken for 10/minute.
RATE_LIMIT = r"^(off|[0-9]+(\.[0-9]+)?\s*/\s*(second|minute|hour)s?)$"
ENDPOINT = r"^(GET|POST|PATCH|PUT|DELETE) /\S*$"

# EXPECTED, a keyword of ours beside a `pattern`, an `anyOf` or a `uniqueItems`: what the
# value must be, in words, ending "must ..." (validators ignore it): the error for the file
# says it instead of a regular expression or the name of a JSON Schema keyword.
# tests/environments check that every such rule has one.
EXPECTED = "x-expected"
_VARIABLE = (
    "the NAME of an environment variable: capital letters, digits and '_', not starting with a "
    "digit (like CUSTOMS_SANDBOX_KEY)"
)
_NAME = "a name made of letters, digits, '_', '.' and '-', starting with a letter or a digit"

_TIMEOUTS: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "connect": {"type": "number", "exclusiveMinimum": 0},
        "read": {"type": "number", "exclusiveMinimum": 0},
    },
}

_STATE: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "backend": {"enum": ["local", "postgres"]},
        "url_env": {"type": "string", "pattern": ENV_VAR_NAME, EXPECTED: _VARIABLE},
        "name": {"type": "string", "pattern": r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", EXPECTED: _NAME},
    },
    "if": {"properties": {"backend": {"const": "postgres"}}, "required": ["backend"]},
    "then": {"required": ["url_env"]},
}

_LARGE_CHANGE_GUARD: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "min_records": {"type": "integer", "minimum": 1},
        "max_create_share": {"type": "number", "exclusiveMinimum": 0},
    },
}

_NOTIFY: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["urls_env"],
    "properties": {
        "urls_env": {"type": "string", "pattern": ENV_VAR_NAME, EXPECTED: _VARIABLE},
        "on": {
            "type": "array",
            "minItems": 1,
            "uniqueItems": True,
            "items": {"enum": ["rejection", "needs-decision", "end"]},
            EXPECTED: "rejection, needs-decision and end, each at most once: e.g. [rejection, end]",
        },
    },
}

ENVIRONMENT: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "base_url": {
            "type": "string",
            "pattern": r"^https?://[^\s@]+$",
            EXPECTED: (
                "http:// or https:// and the service's host, e.g. https://sandbox.customs.example, "
                "with no space and no user:password@ (the API key is read from api_key_env or "
                "api_key_file, never from the URL)"
            ),
        },
        "api_key_env": {"type": "string", "pattern": ENV_VAR_NAME, EXPECTED: _VARIABLE},
        "api_key_file": {"type": "string", "minLength": 1},
        # `rate_limit: off` unquoted is the boolean false to a YAML 1.1 reader: accept it.
        "rate_limit": {
            "anyOf": [{"type": "string", "pattern": RATE_LIMIT}, {"const": False}],
            EXPECTED: (
                "a number of requests, more than 0 and written in digits 0-9, per second, minute "
                "or hour (e.g. 100/minute, 0.5/second), or off"
            ),
        },
        "parallelism": {"type": "integer", "minimum": 1, "maximum": 64},
        "timeouts": _TIMEOUTS,
        "endpoints": {
            "type": "object",
            "additionalProperties": {
                "type": "string",
                "pattern": ENDPOINT,
                EXPECTED: "a method and a path, e.g. 'POST /declarations'",
            },
        },
        "state_dir": {"type": "string", "minLength": 1},
        "state": _STATE,
        "large_change_guard": _LARGE_CHANGE_GUARD,
        "notify": _NOTIFY,
    },
}

CONFIG: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "customs-batch.yaml",
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "default_environment": {"type": "string", "minLength": 1},
        # The files and folders holding the project's manifests, relative to the file: what
        # PATHS default to, so that other YAML of the repository is never read as a manifest.
        "manifests": {
            "type": "array",
            "minItems": 1,
            "items": {"type": "string", "minLength": 1},
        },
        "state_dir": {"type": "string", "minLength": 1},
        "environments": {
            "type": "object",
            "propertyNames": {"pattern": r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", EXPECTED: _NAME},
            "additionalProperties": ENVIRONMENT,
        },
        # Findings silenced for some files, with a reason: validation reads and checks the
        # entries (validation/suppressions.py), each problem a finding at its line.
        "suppress": {"type": "array", "items": {"type": "object"}},
    },
}
