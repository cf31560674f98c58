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
from collections.abc import Iterator
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
    digest = hashlib.sha256()
    for part in _canonical([method, path, body]):
        digest.update(part.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


class _Raw(str):
    """Text of the canonical form itself (a bracket, a comma), not a value to encode."""


def _canonical(value: object) -> Iterator[str]:
    """The canonical JSON text of a parsed value, in parts: object keys sorted, numbers by
    value (an integral float as the integer it is), no whitespace.

    A loop over a stack, not a recursion: a body nested as deeply as the JSON reader takes
    is a 400 of the schema, never a RecursionError here (``json.dumps`` runs out of stack a
    few levels shallower than ``json.loads`` does).
    """
    pending: list[object] = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, _Raw):
            yield item
        elif isinstance(item, dict):
            entries = sorted(item.items())
            pending.append(_Raw("}"))
            for index in range(len(entries) - 1, -1, -1):
                key, child = entries[index]
                pending.append(child)
                pending.append(_Raw(json.dumps(key) + ":"))
                if index:
                    pending.append(_Raw(","))
            yield "{"
        elif isinstance(item, list):
            pending.append(_Raw("]"))
            for index in range(len(item) - 1, -1, -1):
                pending.append(item[index])
                if index:
                    pending.append(_Raw(","))
            yield "["
        elif isinstance(item, float) and item.is_integer():
            yield str(int(item))
        else:  # a string, an integer, a fraction, true, false or null
            yield json.dumps(item)


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
