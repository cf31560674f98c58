"""Idempotency-Key semantics of section 7: replay, 422 on another request, 409 while in flight.

A key is bound to the whole request it first came with: method, path and body. Its scope is
the company, whichever of the company's API keys sends it (``company_scope``). The same
key on another path (another shipment's movements) is another request, refused as one
with another body is, never answered with the first request's movement.

Only successful answers are remembered: a refused request releases its key, so the client
can fix the body and send it again under the same key.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass
from enum import Enum

from customs_batch.sandbox import contract
from customs_batch.sandbox.records import JsonObject
from customs_batch.sandbox.store import Store, Table


class Verdict(Enum):
    """What to do with a request that carries an Idempotency-Key."""

    NEW = "new"
    REPLAY = "replay"
    OTHER_REQUEST = "other-request"  # another method, path or body than the key's first
    IN_FLIGHT = "in-flight"


@dataclass(frozen=True)
class Lookup:
    """The verdict, and for a replay the first response."""

    verdict: Verdict
    status: int = 0
    body: JsonObject | None = None


def fingerprint(method: str, path: str, body: JsonObject) -> str:
    """A digest of the request: its method, its path and its JSON body, as JSON means it.

    Key order and whitespace are ignored, and a number counts by its value wherever it is
    in the body: JSON has one number type, so ``10``, ``10.0`` and ``1e1`` are one request
    (a retry that spells a number another way is replayed, not refused with 422).
    """
    text = json.dumps([method, path, _by_value(body)], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _by_value(value: object) -> object:
    """``value`` with each integral float as the integer it is (``10.0`` as ``10``).

    The digest is the canonical JSON text (keys sorted, no whitespace) that a database of an
    older emulator holds, made by the JSON encoder in one pass: it was made a part at a time
    (a Python step per value, about 1 s for a movement body of 200,000 numbers, in which the
    emulator answered no one). Recursion is safe: ``json_body`` refuses a body nested more
    than ``MAX_BODY_DEPTH`` levels before a fingerprint is taken.
    """
    if isinstance(value, float):
        return int(value) if value.is_integer() else value
    if isinstance(value, dict):
        return {key: _by_value(child) for key, child in value.items()}
    if isinstance(value, list):
        return [_by_value(child) for child in value]
    return value


COMPANY_SCOPE = "company:"


def company_scope(company_id: int) -> str:
    """The scope of a company's Idempotency-Keys: the company, not the API key it sent.

    The service's keys are rotated (a new key, the clients switch over, the old key revoked
    about 24 hours later: as long as an Idempotency-Key lasts), so a retry of a request
    whose answer was lost may come with the company's new key; scoped by API key, it would
    create the movement a second time.
    """
    return f"{COMPANY_SCOPE}{company_id}"


class Idempotency:
    """Remembers the first successful answer per (company, Idempotency-Key) for 24 hours."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._in_flight: dict[str, str] = {}
        self._lock = threading.Lock()

    def begin(self, scope: str, key: str, digest: str, now: float) -> Lookup:
        """Look the key up; on NEW the key is held as in flight until ``finish`` or ``release``."""
        slot = f"{scope}\n{key}"
        with self._lock:
            if slot in self._in_flight:
                return Lookup(Verdict.IN_FLIGHT)
            done = self._store.get(Table.IDEMPOTENCY, slot)
            if done is not None and now - done["at"] < contract.IDEMPOTENCY_TTL_SECONDS:
                if done["digest"] != digest:
                    return Lookup(Verdict.OTHER_REQUEST)
                return Lookup(Verdict.REPLAY, done["status"], done["body"])
            self._in_flight[slot] = digest
            return Lookup(Verdict.NEW)

    def finish(self, scope: str, key: str, status: int, body: JsonObject, now: float) -> None:
        """Remember the successful answer of an in-flight key."""
        slot = f"{scope}\n{key}"
        with self._lock:
            digest = self._in_flight.pop(slot)
            record = {"digest": digest, "status": status, "body": body, "at": now}
            self._store.put(Table.IDEMPOTENCY, slot, record)

    def release(self, scope: str, key: str) -> None:
        """Forget an in-flight key whose request was refused."""
        with self._lock:
            self._in_flight.pop(f"{scope}\n{key}", None)
