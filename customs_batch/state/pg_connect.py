"""Connecting to the state database, and errors that never show its URL or password.

The URL comes from an environment variable and may carry a password. libpq quotes parts
of a malformed URL in its messages (``invalid percent-encoded token: "<password>"``), so
every database error is scrubbed of the URL, the password and anything that looks like one
before it becomes a StateError.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

import psycopg
from psycopg.rows import TupleRow

from customs_batch.errors import StateError

CONNECT_TIMEOUT = 10
"""Seconds to wait for the server to answer a connection."""

HIDDEN = "***"
_URL_PASSWORD = re.compile(r"(postgres(?:ql)?://[^:/@\s]*:)([^@\s]*)@")
_KEYWORD_PASSWORD = re.compile(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE)


def scrub(text: str, url: str) -> str:
    """``text`` with the URL, its password and any other password-looking part hidden."""
    secrets = {url}
    for pattern in (_URL_PASSWORD, _KEYWORD_PASSWORD):
        for match in pattern.finditer(url):
            password = match.group(2).strip("'")
            if password:
                secrets |= {password, unquote(password)}
    for secret in sorted(secrets, key=len, reverse=True):
        if secret:
            text = text.replace(secret, HIDDEN)
    text = _URL_PASSWORD.sub(rf"\g<1>{HIDDEN}@", text)
    return _KEYWORD_PASSWORD.sub(rf"\g<1>{HIDDEN}", text)


def database_error(exc: psycopg.Error, url: str, doing: str, *, hint: str) -> StateError:
    """A StateError saying what failed while ``doing`` something, with no secret in it."""
    detail = " ".join(scrub(str(exc), url).split()) or type(exc).__name__
    return StateError(f"the state database: cannot {doing} ({detail})", hint=hint)


CONNECT_HINT = (
    "check that the database server is up and reachable, and that the variable named by "
    "state.url_env holds its URL (postgresql://USER@HOST:PORT/DATABASE); the password may "
    "also come from PGPASSWORD or ~/.pgpass"
)

LOST_HINT = (
    "every operation recorded before this is safe in the database, and the lock went with "
    "the connection; once the database answers again, run the same command again: it folds "
    "what was recorded and carries on (an operation whose answer was not recorded is shown "
    "as pending and re-sent with the same idempotency key, or left for you to decide)"
)


def connect(url: str) -> psycopg.Connection[TupleRow]:
    """An autocommit connection (transactions are explicit), named in pg_stat_activity."""
    try:
        return psycopg.connect(
            url,
            autocommit=True,
            connect_timeout=CONNECT_TIMEOUT,
            application_name="customs-batch",
        )
    except psycopg.Error as exc:
        raise database_error(exc, url, "connect", hint=CONNECT_HINT) from None
