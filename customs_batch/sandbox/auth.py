"""Bearer-key authentication with the service's 401 and 403 bodies."""

from __future__ import annotations

from dataclasses import dataclass

from customs_batch.sandbox import contract
from customs_batch.sandbox.store import Store, Table
from customs_batch.sandbox.web import ApiError


@dataclass(frozen=True)
class Caller:
    """Who sent a request: the API key and its company."""

    key: str
    company_id: int


def authenticate(store: Store, authorization: str | None) -> Caller:
    """The caller named by an ``Authorization: Bearer <key>`` header, or a 401/403 error."""
    scheme, _, key = (authorization or "").partition(" ")
    record = store.get(Table.API_KEYS, key.strip()) if scheme.lower() == "bearer" else None
    if record is None or record.get("revoked"):
        raise ApiError(
            contract.INVALID_CREDENTIALS,
            {
                "error": "INVALID_CREDENTIALS",
                "message": "missing, invalid or expired API key: send Authorization: Bearer <key>",
            },
        )
    if not record["active"]:
        raise ApiError(
            contract.UNAUTHORIZED,
            {"error": "UNAUTHORIZED", "message": "the account of this API key is not active"},
        )
    return Caller(record["key"], record["companyId"])
