"""Bearer-key authentication with the service's 401 and 403 bodies."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache

from customs_batch.sandbox import contract
from customs_batch.sandbox.idempotency import COMPANY_SCOPE, company_scope
from customs_batch.sandbox.records import JsonObject
from customs_batch.sandbox.store import Store, Table
from customs_batch.sandbox.web import ApiError


@dataclass(frozen=True)
class Caller:
    """Who sent a request: the digest of its API key (see :func:`key_digest`) and its
    company."""

    key: str
    company_id: int


@lru_cache(maxsize=256)  # in memory only: every request of a client sends the same key
def key_digest(key: str) -> str:
    """What the emulator keeps of an API key (its table of keys, the rate limit's buckets):
    a SHA-256 digest, never the key, so that its database (``sandbox serve --db``) holds no
    key that could be used."""
    return "sha256:" + hashlib.sha256(key.encode()).hexdigest()


def is_key_digest(text: str) -> bool:
    """Whether ``text`` is a :func:`key_digest` (an older database kept the keys)."""
    return text.startswith("sha256:") and len(text) == 71


def authenticate(store: Store, authorization: str | None, now: float | None = None) -> Caller:
    """The caller named by an ``Authorization: Bearer <key>`` header, or a 401/403 error.
    ``now``: customs' clock, for a key rotated with an overlap (revoked from ``revokedAt``)."""
    scheme, _, key = (authorization or "").partition(" ")
    key = key.strip()
    record = (
        store.get(Table.API_KEYS, key_digest(key)) if key and scheme.lower() == "bearer" else None
    )
    if record is None or revoked(record, now):
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


def revoked(record: JsonObject, now: float | None) -> bool:
    """Whether the key of ``record`` (its table of keys) is revoked at ``now`` on customs'
    clock: at once by a rotation, or at the end of its overlap (``revokedAt``)."""
    revoked_at = record.get("revokedAt")
    return bool(record.get("revoked")) or (
        isinstance(revoked_at, (int, float)) and now is not None and now >= revoked_at
    )


def forget_raw_keys(store: Store) -> None:
    """Replace the API keys an older emulator database kept (in its table of keys) by their
    digests, and scope its idempotency rows, which older emulators scoped by the API key (the
    key itself, later its digest), by the key's company (``company_scope``)."""
    with store.lock():
        for record in store.values(Table.API_KEYS):
            key = str(record.get("key", ""))
            if key and not is_key_digest(key):
                store.rekey(Table.API_KEYS, key, key_digest(key))
                store.put(Table.API_KEYS, key_digest(key), {**record, "key": key_digest(key)})
        for slot in [slot for slot in store.ids(Table.IDEMPOTENCY) if isinstance(slot, str)]:
            scope, newline, rest = slot.partition("\n")
            if not newline or scope.startswith(COMPANY_SCOPE):
                continue
            digest = scope if is_key_digest(scope) else key_digest(scope)
            owner = store.get(Table.API_KEYS, digest)
            target = f"{company_scope(owner['companyId'])}\n{rest}" if owner else None
            held = store.get(Table.IDEMPOTENCY, target) if target else None
            record = store.get(Table.IDEMPOTENCY, slot) or {}
            if target and (held is None or held.get("at", 0) < record.get("at", 0)):
                store.rekey(Table.IDEMPOTENCY, slot, target)
            elif digest != scope:  # a row no request can match now, kept without the key
                store.rekey(Table.IDEMPOTENCY, slot, f"{digest}\n{rest}")
