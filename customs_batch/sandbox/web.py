"""HTTP plumbing shared by the handlers: error answers, JSON bodies, query parameters."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import date
from typing import Any, NoReturn

from starlette.datastructures import QueryParams
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from customs_batch.sandbox import contract, strictjson
from customs_batch.sandbox.records import JsonObject
from customs_batch.sandbox.request_schemas import BodyValidator, capped


class ApiError(Exception):
    """An error answer: the status, the JSON body and extra headers."""

    def __init__(self, status: int, body: JsonObject, headers: dict[str, str] | None = None):
        super().__init__(body.get("message", ""))
        self.status = status
        self.body = body
        self.headers = headers or {}


def error(status: int, message: str | list[str], **headers: str) -> ApiError:
    """The NestJS-style error of section 7: ``{statusCode, message, error}``.

    A 400's ``message`` is always a list of reasons (one reason is a list of one), as a
    validation failure's is, so a client reads every 400 one way; other statuses carry a
    sentence.
    """
    if status == contract.BAD_REQUEST and isinstance(message, str):
        message = [message]
    body = {"statusCode": status, "message": message, "error": contract.REASONS.get(status, "")}
    return ApiError(status, body, {k.replace("_", "-"): v for k, v in headers.items()})


def fail(status: int, message: str | list[str]) -> NoReturn:
    """Raise ``error(status, message)``."""
    raise error(status, message)


# One encoder for every answer: json.dumps with options builds a new one per call.
_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def json_response(
    body: Any, status: int = contract.OK, headers: dict[str, str] | None = None
) -> Response:
    """A compact JSON response; strict JSON only (a non-finite number is a bug, not output).

    The body's text is UTF-8 whatever it holds: a lone surrogate (which no request brings
    in, ``json_body`` refuses it, but a database an older emulator wrote may hold) is shown
    as U+FFFD, the replacement character, instead of failing the answer.
    """
    text = _ENCODER.encode(body)
    try:
        content = text.encode()
    except UnicodeEncodeError:
        content = strictjson.SURROGATE.sub("\ufffd", text).encode()
    return Response(content, status, headers, media_type="application/json")


def header(request: Request, name: bytes) -> str | None:
    """The first value of the header ``name`` (in lower case, as ASGI servers send names),
    what ``request.headers.get`` gives, read from the scope in one loop: Starlette's header
    mapping takes three calls of Python and three of C per lookup, and every request looks
    up three."""
    headers: list[tuple[bytes, bytes]] = request.scope["headers"]
    for key, value in headers:
        if key == name:
            return value.decode("latin-1")
    return None


_SINGLE_HEADERS = {
    b"authorization": "Authorization",
    b"content-type": "Content-Type",
    contract.IDEMPOTENCY_KEY.lower().encode(): contract.IDEMPOTENCY_KEY,
}
"""The headers the service reads one value of: none is a list (RFC 9110 lets a recipient
join repeated fields only when the field is a list)."""


def require_single_headers(request: Request) -> None:
    """400 naming each of ``_SINGLE_HEADERS`` the request carries more than once.

    Two ``Authorization`` or two ``Idempotency-Key`` headers are ambiguous: taking one of
    them silently would bind a movement to a key the client may not retry with, or
    authenticate with a key the client did not mean.
    """
    headers: list[tuple[bytes, bytes]] = request.scope["headers"]
    seen: set[bytes] = set()
    twice: list[str] = []
    for key, _ in headers:
        shown = _SINGLE_HEADERS.get(key)
        if shown is None:
            continue
        if key in seen and shown not in twice:
            twice.append(shown)
        seen.add(key)
    if twice:
        fail(
            contract.BAD_REQUEST,
            [
                f"the {name} header is given more than once: a request carries one {name}; "
                "send it once"
                for name in twice
            ],
        )


def public(record: JsonObject) -> JsonObject:
    """The record without the emulator's private fields (those starting with ``_``)."""
    return {key: value for key, value in record.items() if not key.startswith("_")}


async def json_body(request: Request) -> JsonObject:
    """The request body as a JSON object, or the 4xx that says why it is not one.

    415 unless ``Content-Type`` is ``application/json`` (in UTF-8) and the body is sent as
    is (no ``Content-Encoding`` but ``identity``); 413 past
    ``MAX_BODY_BYTES``, without reading past the chunk that crosses it; 400 for a body that
    is not UTF-8, not JSON, not an object, holds a number the service would refuse, an
    object naming a key twice, or a string holding a lone surrogate escape (``"\\ud800"``),
    each named by its path.
    """
    _require_json(header(request, b"content-type"))
    _require_as_is(_list_header(request, b"content-encoding"))
    raw = await _bounded_body(request, contract.MAX_BODY_BYTES)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        fail(contract.BAD_REQUEST, [f"the body is not UTF-8: byte {exc.start} is not valid there"])
    try:
        body = strictjson.loads(text)
    except strictjson.NotStrictJson as exc:
        fail(contract.BAD_REQUEST, [f"the body has a number the service refuses: {exc}"])
    except (strictjson.LoneSurrogates, strictjson.DuplicateKeys) as exc:
        fail(contract.BAD_REQUEST, capped(exc.reasons))
    except ValueError as exc:  # JSONDecodeError
        fail(contract.BAD_REQUEST, [f"the body is not valid JSON: {exc}"])
    except RecursionError:
        fail(contract.BAD_REQUEST, [_TOO_DEEP])
    if not isinstance(body, dict):
        fail(contract.BAD_REQUEST, ["the body must be a JSON object"])
    # Counting brackets first: a body with few of them cannot nest deeply (most never walk).
    limit = contract.MAX_BODY_DEPTH
    if text.count("[") + text.count("{") > limit and strictjson.deeper_than(text, limit):
        fail(contract.BAD_REQUEST, [_TOO_DEEP])
    return body


_TOO_DEEP = (
    f"the body is nested too deeply: at most {contract.MAX_BODY_DEPTH} levels of objects "
    "and arrays inside one another"
)


def _require_json(content_type: str | None) -> None:
    if content_type == "application/json":
        return  # what nearly every client sends: nothing to take apart
    media_type, _, parameters = (content_type or "").partition(";")
    if media_type.strip().lower() != "application/json":
        shown = f"'{strictjson.clip(content_type)}'" if content_type else "none"
        fail(
            contract.UNSUPPORTED_MEDIA_TYPE,
            f"the body must be sent with Content-Type: application/json, not {shown}",
        )
    for parameter in parameters.split(";"):
        name, _, value = parameter.partition("=")
        charset = value.strip().strip('"').lower()
        if name.strip().lower() == "charset" and charset not in ("utf-8", "utf8"):
            fail(
                contract.UNSUPPORTED_MEDIA_TYPE,
                f"the body must be UTF-8, not charset {strictjson.clip(charset)}",
            )


def _list_header(request: Request, name: bytes) -> str | None:
    """Every value of the list header ``name``, joined as RFC 9110 joins repeated fields."""
    values = [value.decode("latin-1") for key, value in request.scope["headers"] if key == name]
    return ", ".join(values) if values else None


def _require_as_is(content_encoding: str | None) -> None:
    """The API's bodies are JSON as is: a compressed one would be read as JSON (a gzip body
    'not UTF-8', a plain body labelled gzip taken as sent), so a coding is refused with the
    415 HTTP gives a content coding the server does not take."""
    if content_encoding is None:
        return
    codings = [coding.strip().lower() for coding in content_encoding.split(",")]
    if any(coding not in ("", "identity") for coding in codings):
        fail(
            contract.UNSUPPORTED_MEDIA_TYPE,
            "the body must be sent as is, not with Content-Encoding: "
            f"{strictjson.clip(content_encoding)}",
        )


async def _bounded_body(request: Request, limit: int) -> bytes:
    """The body, or a 413 as soon as it is known to be longer than ``limit`` bytes."""
    declared = header(request, b"content-length") or ""
    if declared.isascii() and declared.isdigit() and int(declared) > limit:
        raise _too_large(limit)  # without reading a byte of it
    # Read as Request.stream() does, without an async generator (asyncio hooks every one).
    chunks: list[bytes] = []
    size = 0
    receive = request.receive
    while True:
        message = await receive()
        if message["type"] == "http.request":
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise _too_large(limit)
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)
        elif message["type"] == "http.disconnect":
            raise ClientDisconnect()


def _too_large(limit: int) -> ApiError:
    return error(
        contract.PAYLOAD_TOO_LARGE, f"the body is larger than the limit of {limit:,} bytes"
    )


def check_schema(validator: BodyValidator, body: JsonObject) -> JsonObject:
    """Answer 400 with every reason the schema gives against ``body``; else the body to
    hold, its integer fields as integers (``1.0`` is held and answered as ``1``)."""
    reasons = validator.reasons(body)
    if reasons:
        fail(contract.BAD_REQUEST, reasons)
    return validator.with_integers(body)


_INTEGER = re.compile(r"-?[0-9]+")
# Python's date.fromisoformat also takes 20260107 and 2026-W02-5; the service's dates are
# YYYY-MM-DD only.
_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_MAX_INTEGER_TEXT = len(str(contract.INT_MIN))


def _shown(raw: str) -> str:
    """A query value quoted in an error message, clipped when long."""
    return f"'{strictjson.clip(raw)}'"


class Query:
    """Typed access to query parameters; every problem becomes a 400 naming the parameter."""

    def __init__(self, params: QueryParams) -> None:
        self._params = params

    def _raw(self, name: str) -> str | None:
        return self._params.get(name)

    def integer(self, name: str, default: int, low: int = 1, high: int | None = None) -> int:
        """An integer within [low, high]; ``high`` is at most, and by default, 2^63 - 1.

        A value beyond the 64-bit range is refused naming the whole range it must be in
        (``page must be from 1 to 9223372036854775807``), whichever the parameter: "at least
        1" would not be the reason. A value in that range but below ``low`` of a parameter
        without ``high`` is "at least ``low``".
        """
        raw = self._raw(name)
        if raw is None:
            return default
        if not _INTEGER.fullmatch(raw):
            fail(contract.BAD_REQUEST, [f"{name} must be an integer, not {_shown(raw)}"])
        # Compared as text first: int() of a huge literal is slow, and refused past 4,300
        # digits. Leading zeros are no digits of the value (page=0001 is page 1, however many).
        sign = "-" if raw.startswith("-") else ""
        digits = raw.removeprefix("-").lstrip("0") or "0"
        if len(digits) < _MAX_INTEGER_TEXT:
            value = int(sign + digits)
        else:
            value = contract.INT_MIN - 1 if raw.startswith("-") else contract.INT_MAX + 1
        top = contract.INT_MAX if high is None else high
        if value < low or value > top:
            beyond_64_bits = not contract.INT_MIN <= value <= contract.INT_MAX
            bounds = (
                f"from {low} to {top}" if high is not None or beyond_64_bits else f"at least {low}"
            )
            fail(contract.BAD_REQUEST, [f"{name} must be {bounds}, not {_shown(raw)}"])
        return value

    def optional_integer(self, name: str, low: int = 1) -> int | None:
        """An integer of at least ``low`` (an ID: 1), or None when absent."""
        if self._raw(name) is None:
            return None
        return self.integer(name, 0, low=low)

    def page(self) -> int:
        """The page number (>= 1, default 1)."""
        return self.integer(contract.PAGE, 1)

    def page_size(self, name: str) -> int:
        """A page size (1..100, default 20) under the parameter ``name``."""
        return self.integer(name, contract.PAGE_SIZE_DEFAULT, 1, contract.PAGE_SIZE_MAX)

    def boolean(self, name: str, default: bool = False) -> bool:
        """``true`` or ``false``."""
        raw = self._raw(name)
        if raw is None:
            return default
        if raw.lower() not in ("true", "false"):
            fail(contract.BAD_REQUEST, [f"{name} must be true or false, not {_shown(raw)}"])
        return raw.lower() == "true"

    def choice(self, name: str, allowed: Sequence[str], default: str | None = None) -> str | None:
        """One of ``allowed``."""
        raw = self._raw(name)
        if raw is None:
            return default
        if raw not in allowed:
            choices = ", ".join(allowed)
            fail(contract.BAD_REQUEST, [f"{name} must be one of {choices}, not {_shown(raw)}"])
        return raw

    def text(self, name: str) -> str | None:
        """Free text."""
        return self._raw(name)

    def day(self, name: str) -> date | None:
        """A YYYY-MM-DD date (exactly that form, and a day of the calendar)."""
        raw = self._raw(name)
        if raw is None:
            return None
        try:
            if _DAY.fullmatch(raw):
                return date.fromisoformat(raw)
        except ValueError:
            pass
        fail(contract.BAD_REQUEST, [f"{name} must be a date YYYY-MM-DD, not {_shown(raw)}"])


def page_of(records: list[JsonObject], page: int, size: int) -> list[JsonObject]:
    """The records of 1-based ``page`` with ``size`` per page, without private fields."""
    start = (page - 1) * size
    return [public(record) for record in records[start : start + size]]


def total_pages(total: int, size: int) -> int:
    """How many pages ``total`` records fill."""
    return (total + size - 1) // size
