"""The errors the client raises, each carrying the service's status and body.

Exception tree (all under ``customs_batch.errors.ServiceError``)::

    ServiceError
    ├── ServiceResponseError     the service answered with an error status
    │   ├── AuthenticationError  401: the key is invalid or expired
    │   ├── PermissionDeniedError 403: no permission, or the account is not active
    │   ├── NotFoundError        404: no such resource, or not yours; 410: gone
    │   ├── RateLimitedError     429: over the rate limit; carries Retry-After
    │   ├── RequestRefusedError  any other 4xx: the service's message says why
    │   └── ServerError          5xx: the service failed
    ├── ConnectionFailedError    the service could not be reached, or timed out
    │   └── NotSentError         the request never left (connection refused, DNS failure)
    │       └── TlsFailedError   no secure connection: certificate not trusted, or no TLS
    └── UnexpectedResponseError  a 2xx whose body is not what the API document describes

Messages never contain the API key: the client removes it from any text it quotes.
"""

from __future__ import annotations

import html
import json
import math
import time
from datetime import UTC
from email.utils import parsedate_to_datetime

from customs_batch.errors import ServiceError
from customs_batch.jsontypes import JSON

REDACTED = "***"


def redact(text: str, secret: str | None) -> str:
    """``text`` with every occurrence of ``secret`` replaced by ``***``."""
    if secret:
        return text.replace(secret, REDACTED)
    return text


class ServiceResponseError(ServiceError):
    """The service answered ``status`` with ``body`` (parsed JSON, or the text)."""

    def __init__(
        self,
        message: str,
        *,
        status: int,
        body: JSON,
        operation: str,
        hint: str | None = None,
    ) -> None:
        super().__init__(message, hint=hint)
        self.status = status
        self.body = body
        self.operation = operation

    @property
    def service_message(self) -> str:
        """The ``message`` of the service's error body, or the body itself."""
        return service_message(self.body)


class AuthenticationError(ServiceResponseError):
    """401: the API key is invalid or expired."""


class PermissionDeniedError(ServiceResponseError):
    """403: the key has no permission, or the account is not yet active."""


class NotFoundError(ServiceResponseError):
    """404: the resource does not exist or is not accessible with this key; or 410 Gone:
    the service says it no longer holds it (taken alike: the object is not there)."""


class RateLimitedError(ServiceResponseError):
    """429: over the rate limit; ``retry_after`` is in seconds. ``after_failures``: how many
    attempts of the same request that left failed otherwise before (a lost answer, a 5xx),
    each of which the service may have processed (0: every answer was a 429, or the other
    attempts never left, so the service processed none of them)."""

    after_failures: int = 0

    def __init__(
        self, message: str, *, status: int, body: JSON, operation: str, retry_after: float
    ) -> None:
        super().__init__(message, status=status, body=body, operation=operation)
        self.retry_after = retry_after


class RequestRefusedError(ServiceResponseError):
    """Any other 4xx: the request was refused, for the reason in the service's message."""


class ServerError(ServiceResponseError):
    """5xx: the service failed to handle the request."""


class ConnectionFailedError(ServiceError):
    """The service could not be reached, dropped the connection, or did not answer in time."""

    def __init__(self, message: str, *, operation: str, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.operation = operation


class NotSentError(ConnectionFailedError):
    """The request never left: the connection was refused or timed out while connecting,
    the host name did not resolve, or the request could not be built. Nothing happened at
    the service, so sending it again is always safe."""


class TlsFailedError(NotSentError):
    """No secure connection to the service could be made: its certificate is not trusted
    here, or it does not speak TLS at all. Nothing was sent, and sending again cannot help
    until the environment's settings change, so it is never retried."""


class UnexpectedResponseError(ServiceError):
    """A success response whose body does not have the documented shape."""


def service_message(body: object) -> str:
    """The human part of an error body: its ``message`` (joined if a list), else the body,
    on one line; an HTML page (a proxy's or a gateway's, not the service's) as its text."""
    if isinstance(body, dict):
        message = body.get("message")
        if isinstance(message, list):
            return "; ".join(str(part) for part in message)
        if message is not None:
            return str(message)
        return json.dumps(body, sort_keys=True)
    text = str(body)[:_READ_CHARS]
    page = text.lstrip().startswith("<")
    text = " ".join((_page_text(text) if page else text).split())
    if page and not text:
        return "(an HTML page without text)"
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 1] + "…"


_READ_CHARS = 20_000  # of a body that is not JSON: enough for a gateway's error page
_SHOWN_CHARS = 300
_HIDDEN = frozenset({"head", "script", "style", "template"})


def _page_text(page: str) -> str:
    """The text a browser would show of an HTML page (a proxy's or a gateway's error page):
    no tags, comments, head, scripts or styles. One pass, each search starting where the
    last ended, so a page of any shape costs its length."""
    lower = page.lower()
    shown: list[str] = []
    at = 0
    while at < len(page):
        opened = page.find("<", at)
        if opened < 0:
            shown.append(page[at:])
            break
        shown.append(page[at:opened])
        if lower.startswith("<!--", opened):
            closed = page.find("-->", opened + 4)
            at = len(page) if closed < 0 else closed + 3
            continue
        closed = page.find(">", opened + 1)
        if closed < 0:
            break
        words = lower[opened + 1 : closed].split(None, 1)
        if words and words[0] in _HIDDEN:
            ending = lower.find("</" + words[0], closed + 1)
            closed = -1 if ending < 0 else lower.find(">", ending)
            if closed < 0:
                break
        at = closed + 1
    return html.unescape(" ".join(shown))


MAX_RETRY_AFTER = 86400.0
"""The longest a 429's Retry-After is waited, in seconds: a day, 24 times the longest rate
window of the API document (1000 requests per hour in production), and as long as an
Idempotency-Key is honoured."""


def parse_retry_after(value: str | None, default: float = 1.0, now: float | None = None) -> float:
    """Seconds from a ``Retry-After`` header; ``default`` when unusable.

    Both forms of HTTP (RFC 9110, 10.2.3): a number of seconds (``120``), or the time to
    retry at, an HTTP-date (``Wed, 21 Oct 2026 07:28:00 GMT``), which is the seconds from
    ``now`` (the time of day, unless given) until then, 0 once it has passed. Read as the
    default 1 s, a service's "retry at the top of the hour" was sent again every second, its
    429s used up in seconds. A number that is no finite number of seconds (``inf``) is
    unusable too, and a wait is at most ``MAX_RETRY_AFTER``, a day: waited out, a Retry-After
    of ``inf`` or ``10000000000`` (a valid delta-seconds) failed the run with an
    OverflowError of the sleep, past what the platform's clock counts.
    """
    if value is None:
        return default
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError, OverflowError):
            return default
        if when.tzinfo is None:  # asctime's form has no zone: every HTTP date is in GMT
            when = when.replace(tzinfo=UTC)
        seconds = when.timestamp() - (time.time() if now is None else now)
    if not math.isfinite(seconds):
        return default
    return min(max(0.0, seconds), MAX_RETRY_AFTER)


def error_for_status(
    status: int, body: JSON, *, operation: str, retry_after: str | None, secret: str | None
) -> ServiceResponseError:
    """The typed error for an error ``status``, with a message that says what to check."""
    said = redact(service_message(body), secret)
    where = f"{operation} -> {status}"
    if status == 401:
        return AuthenticationError(
            f"the service rejected the API key ({where}): {said}; check that the environment's "
            "key variable or key file holds a current key (keys are rotated)",
            status=status,
            body=body,
            operation=operation,
        )
    if status == 403:
        return PermissionDeniedError(
            f"the API key is not allowed to do this ({where}): {said}; check that the account "
            "is activated and that the key has permission for this operation",
            status=status,
            body=body,
            operation=operation,
        )
    if status == 404:
        return NotFoundError(
            f"not found ({where}): {said}; check the ID and that it belongs to your company",
            status=status,
            body=body,
            operation=operation,
        )
    if status == 410:
        return NotFoundError(
            f"gone ({where}): {said}; the service no longer holds it",
            status=status,
            body=body,
            operation=operation,
        )
    if status == 429:
        seconds = parse_retry_after(retry_after)
        return RateLimitedError(
            f"rate limited ({where}), retry after {seconds:g} s: {said}; lower the "
            "environment's rate_limit to the service's limit",
            status=status,
            body=body,
            operation=operation,
            retry_after=seconds,
        )
    if status >= 500:
        return ServerError(
            f"the service failed ({where}): {said}",
            status=status,
            body=body,
            operation=operation,
            hint="this is on the service's side; try again later",
        )
    return RequestRefusedError(
        f"the service refused the request ({where}): {said}",
        status=status,
        body=body,
        operation=operation,
        hint="fix the request as the service's message says",
    )
