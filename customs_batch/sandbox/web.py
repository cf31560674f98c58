"""HTTP plumbing shared by the handlers: error answers, JSON bodies, query parameters."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import date
from typing import Any, NoReturn

from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import Response

from customs_batch.sandbox import contract
from customs_batch.sandbox.records import JsonObject
from customs_batch.sandbox.schemas import BodyValidator


class ApiError(Exception):
    """An error answer: the status, the JSON body and extra headers."""

    def __init__(self, status: int, body: JsonObject, headers: dict[str, str] | None = None):
        super().__init__(body.get("message", ""))
        self.status = status
        self.body = body
        self.headers = headers or {}


def error(status: int, message: str | list[str], **headers: str) -> ApiError:
    """The NestJS-style error of section 7: ``{statusCode, message, error}``."""
    body = {"statusCode": status, "message": message, "error": contract.REASONS.get(status, "")}
    return ApiError(status, body, {k.replace("_", "-"): v for k, v in headers.items()})


def fail(status: int, message: str | list[str]) -> NoReturn:
    """Raise ``error(status, message)``."""
    raise error(status, message)


def json_response(
    body: Any, status: int = contract.OK, headers: dict[str, str] | None = None
) -> Response:
    """A compact JSON response."""
    content = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()
    return Response(content, status, headers, media_type="application/json")


def public(record: JsonObject) -> JsonObject:
    """The record without the emulator's private fields (those starting with ``_``)."""
    return {key: value for key, value in record.items() if not key.startswith("_")}


async def json_body(request: Request) -> JsonObject:
    """The request body as a JSON object, or a 400 saying why it is not one."""
    raw = await request.body()
    try:
        body = json.loads(raw, parse_constant=_refuse_constant)
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, NaN or Infinity
        fail(contract.BAD_REQUEST, [f"the body is not valid JSON: {exc}"])
    except RecursionError:
        fail(contract.BAD_REQUEST, ["the body is nested too deeply"])
    if not isinstance(body, dict):
        fail(contract.BAD_REQUEST, ["the body must be a JSON object"])
    return body


def _refuse_constant(name: str) -> Any:
    """NaN and Infinity are not JSON, though Python's parser takes them."""
    raise ValueError(f"{name} is not a JSON number")


def check_schema(validator: BodyValidator, body: JsonObject) -> None:
    """Answer 400 with every reason the schema gives against ``body``."""
    reasons = validator.reasons(body)
    if reasons:
        fail(contract.BAD_REQUEST, reasons)


class Query:
    """Typed access to query parameters; every problem becomes a 400 naming the parameter."""

    def __init__(self, params: QueryParams) -> None:
        self._params = params

    def _raw(self, name: str) -> str | None:
        return self._params.get(name)

    def integer(self, name: str, default: int, low: int = 1, high: int | None = None) -> int:
        """An integer within [low, high]."""
        raw = self._raw(name)
        if raw is None:
            return default
        try:
            value = int(raw)
        except ValueError:
            fail(contract.BAD_REQUEST, [f"{name} must be an integer, not '{raw}'"])
        if value < low or (high is not None and value > high):
            bounds = f"from {low} to {high}" if high is not None else f"at least {low}"
            fail(contract.BAD_REQUEST, [f"{name} must be {bounds}, not {value}"])
        return value

    def optional_integer(self, name: str) -> int | None:
        """An integer, or None when absent."""
        if self._raw(name) is None:
            return None
        return self.integer(name, 0, low=-(2**63), high=2**63)

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
            fail(contract.BAD_REQUEST, [f"{name} must be true or false, not '{raw}'"])
        return raw.lower() == "true"

    def choice(self, name: str, allowed: Sequence[str], default: str | None = None) -> str | None:
        """One of ``allowed``."""
        raw = self._raw(name)
        if raw is None:
            return default
        if raw not in allowed:
            fail(contract.BAD_REQUEST, [f"{name} must be one of {', '.join(allowed)}, not '{raw}'"])
        return raw

    def text(self, name: str) -> str | None:
        """Free text."""
        return self._raw(name)

    def day(self, name: str) -> date | None:
        """A YYYY-MM-DD date."""
        raw = self._raw(name)
        if raw is None:
            return None
        try:
            return date.fromisoformat(raw)
        except ValueError:
            fail(contract.BAD_REQUEST, [f"{name} must be a date YYYY-MM-DD, not '{raw}'"])


def page_of(records: list[JsonObject], page: int, size: int) -> list[JsonObject]:
    """The records of 1-based ``page`` with ``size`` per page, without private fields."""
    start = (page - 1) * size
    return [public(record) for record in records[start : start + size]]


def total_pages(total: int, size: int) -> int:
    """How many pages ``total`` records fill."""
    return (total + size - 1) // size
