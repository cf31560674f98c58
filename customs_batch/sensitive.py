"""Sensitive fields: which they are (the schemas say, with ``"x-sensitive": true``) and the
keyed digest that the state, saved plans and every output hold in their place.

A guarantee's access code is a short secret (four digits at the service): a plain hash of it
is undone by trying the 10,000 codes, so what is kept is an HMAC-SHA256 under a key that is
not in the state. The key is derived (HKDF-SHA256) from the environment's API key, with the
state's lineage as the salt: the same code in two states has two digests, and whoever reads
a state, a backup or a plan file without the API key cannot test codes against it. The
digest names the key it was made with (its first eight hex digits of an HMAC of a fixed
word), so a digest made under another API key (after a key rotation) is told apart from a
changed value: it cannot be compared, and is left as it is (docs/state.md, "Sensitive
fields").

``DIGEST_PREFIX`` starts every digest: ``hmac-sha256:KEYID:HEX``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from functools import cache
from typing import TYPE_CHECKING

from customs_batch.jsontypes import JSON, JSONObject
from customs_batch.kinds import Kind

DIGEST_PREFIX = "hmac-sha256:"
SENSITIVE = "(sensitive)"
"""What a report prints in place of a sensitive value."""

_DIGEST = re.compile(r"hmac-sha256:([0-9a-f]{8}):[0-9a-f]{64}\Z")
_INFO = b"customs-batch sensitive fields v1"
ITEMS = "[]"
"""A step of a sensitive path that stands for every item of an array."""

Path = tuple[str, ...]


@cache
def sensitive_paths(kind: Kind) -> tuple[Path, ...]:
    """The paths in ``kind``'s spec whose values are sensitive, from its JSON Schema:
    ``("DeclarationGuarantees", "[]", "accessCode")``."""
    from customs_batch.resources import kind_schema

    schema = kind_schema(kind)
    found: list[Path] = []
    _walk_schema(schema, schema, (), found, set())
    return tuple(dict.fromkeys(found))


def _walk_schema(
    root: JSONObject, node: JSON, path: Path, found: list[Path], seen: set[str]
) -> None:
    if not isinstance(node, Mapping):
        return
    if node.get("x-sensitive") is True and path:
        found.append(path)
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/") and ref not in seen:
        target: JSON = root
        for step in ref[2:].split("/"):
            target = target.get(step) if isinstance(target, Mapping) else None
        _walk_schema(root, target, path, found, seen | {ref})
    for name, sub in (node.get("properties") or {}).items():
        _walk_schema(root, sub, (*path, str(name)), found, seen)
    if isinstance(node.get("items"), Mapping):
        _walk_schema(root, node["items"], (*path, ITEMS), found, seen)
    for word in ("allOf", "anyOf", "oneOf"):
        for sub in node.get(word) or ():
            _walk_schema(root, sub, path, found, seen)


@cache
def sensitive_texts() -> frozenset[str]:
    """Every kind's sensitive paths as a report writes them with the indices left out:
    ``DeclarationGuarantees[].accessCode``."""
    return frozenset(_path_text(path) for kind in Kind for path in sensitive_paths(kind))


def _path_text(path: Path) -> str:
    out = ""
    for step in path:
        out += step if step == ITEMS else (f".{step}" if out else step)
    return out


@cache
def _sensitive_steps() -> frozenset[Path]:
    return frozenset(path for kind in Kind for path in sensitive_paths(kind))


@cache
def sensitive_names() -> frozenset[str]:
    """The names of the sensitive fields, in any kind: ``accessCode``."""
    return frozenset(path[-1] for path in _sensitive_steps())


def covers(path: Sequence[str | int]) -> bool:
    """Whether the value at ``path`` in a spec (``("DeclarationGuarantees", 0,
    "accessCode")``), or one inside it, is sensitive in some kind's schema."""
    if sensitive_names().isdisjoint(path):  # nearly every path: one set look-up
        return False
    steps = tuple(ITEMS if type(step) is int else step for step in path)
    known = _sensitive_steps()
    return any(steps[:end] in known for end in range(1, len(steps) + 1))


def touches(path: Sequence[str | int]) -> bool:
    """Whether the value at ``path`` in a spec is sensitive, is inside a sensitive value, or
    may hold one (``("DeclarationGuarantees",)``, a list of guarantees with their codes)."""
    steps = tuple(ITEMS if type(step) is int else step for step in path)
    return any(
        known[: len(steps)] == steps or steps[: len(known)] == known for known in _sensitive_steps()
    )


_INDEX = re.compile(r"\[[0-9]+\]")


def is_sensitive(path: str) -> bool:
    """Whether the value at ``path`` (``DeclarationGuarantees[0].accessCode``) is
    sensitive in some kind's schema."""
    return _INDEX.sub(ITEMS, path) in sensitive_texts()


@cache
def clear_value_pattern() -> re.Pattern[bytes]:
    """Finds a sensitive field holding anything but a digest or null in JSON text: a record
    written before digests were kept (upgraded when next written)."""
    names = sorted({path[-1] for kind in Kind for path in sensitive_paths(kind)})
    alternatives = b"|".join(re.escape(json.dumps(name).encode()) for name in names)
    return re.compile(
        rb"(?:" + alternatives + rb')\s*:\s*+(?!"hmac-sha256:[0-9a-f]{8}:[0-9a-f]{64}"|null)'
    )


def is_digest(value: object) -> bool:
    """Whether ``value`` is a digest this module made."""
    return isinstance(value, str) and _DIGEST.match(value) is not None


def digest_key_id(digest: str) -> str | None:
    """The eight hex digits naming the key a digest was made under (None: not a digest)."""
    found = _DIGEST.match(digest)
    return found.group(1) if found else None


def has_sensitive(kind: Kind) -> bool:
    """Whether ``kind``'s schema marks any field sensitive."""
    return bool(sensitive_paths(kind))


def values_at(spec: JSON, path: Path) -> Iterator[tuple[tuple[str | int, ...], JSON]]:
    """Every value at ``path`` in ``spec`` with its concrete path (indices filled in)."""
    yield from _values_at(spec, path, ())


def _values_at(
    value: JSON, path: Path, where: tuple[str | int, ...]
) -> Iterator[tuple[tuple[str | int, ...], JSON]]:
    if not path:
        yield where, value
        return
    step, rest = path[0], path[1:]
    if step == ITEMS:
        if type(value) is list:
            for index, item in enumerate(value):
                yield from _values_at(item, rest, (*where, index))
    elif (type(value) is dict or isinstance(value, Mapping)) and step in value:
        yield from _values_at(value[step], rest, (*where, step))


def replaced(spec: JSONObject, changes: Mapping[tuple[str | int, ...], JSON]) -> dict[str, JSON]:
    """A copy of ``spec`` with the value at each concrete path of ``changes`` replaced (the
    containers on the way copied, the rest shared)."""
    out: dict[str, JSON] = dict(spec)
    for where, value in changes.items():
        holder: JSON = out
        for step in where[:-1]:
            inner = holder[step]
            inner = dict(inner) if isinstance(inner, Mapping) else list(inner)
            holder[step] = inner
            holder = inner
        holder[where[-1]] = value
    return out


_BODY_SALT = "customs-batch request bodies"
"""The salt of the key of :meth:`Sealer.body_digest` (a lineage is a UUID: never this)."""

_DIGESTS_KEPT = 65536
"""How many values' digests a sealer keeps (a few MB at most)."""


class Sealer:
    """Digests the sensitive values of specs under a key derived from the API key that
    ``api_key`` returns (asked for only when a value has to be digested, once).

    ``needs`` says, for the error when the key cannot be had, what it was needed for.
    """

    def __init__(self, api_key: Callable[[], str]) -> None:
        self._api_key = api_key
        self._secret: bytes | None = None
        self._missing: Exception | None = None
        self._keys: dict[str, tuple[bytes, str]] = {}
        self._digests: dict[tuple[str, str], str] = {}
        self._lock = threading.Lock()
        self.uncompared = 0
        """How many sensitive values :meth:`compared` could not compare (no key)."""

    def has_key(self) -> bool:
        """Whether the API key can be read (asked for once)."""
        if self._secret is not None:
            return True
        if self._missing is not None:
            return False
        try:
            with self._lock:
                if self._secret is None:
                    self._secret = self._api_key().encode()
        except Exception as exc:  # the caller's error (a ConfigError): kept, not raised
            self._missing = exc
            return False
        return True

    def compared(
        self, kind: Kind, spec: JSONObject, recorded: JSONObject, lineage: str
    ) -> JSONObject:
        """``spec`` as a record keeps it, to compare with ``recorded``: sensitive values
        digested. Without the API key (a plan where the key is not set) a value cannot be
        digested: where ``recorded`` holds one it is taken as unchanged, elsewhere it shows
        as ``(sensitive)``, and :attr:`uncompared` counts them."""
        if not sensitive_paths(kind):
            return spec
        if self.has_key():
            return self.seal(kind, spec, lineage, stored=False, like=recorded)
        changes: dict[tuple[str | int, ...], JSON] = {}
        for path in sensitive_paths(kind):
            for where, value in values_at(spec, path):
                if value is None:
                    continue
                old = value_at(recorded, where)
                changes[where] = SENSITIVE if old is None else old
                self.uncompared += old is not None
        return replaced(spec, changes) if changes else spec

    def _key(self, lineage: str) -> tuple[bytes, str]:
        found = self._keys.get(lineage)
        if found is not None:
            return found
        with self._lock:
            if self._secret is None:
                self._secret = self._api_key().encode()
            # HKDF-SHA256 (RFC 5869) with one block of output: extract with the lineage as
            # the salt, expand with a fixed info.
            prk = hmac.new(lineage.encode(), self._secret, hashlib.sha256).digest()
            key = hmac.new(prk, _INFO + b"\x01", hashlib.sha256).digest()
            key_id = hmac.new(key, b"key id", hashlib.sha256).hexdigest()[:8]
            self._keys[lineage] = (key, key_id)
            return key, key_id

    def digest(self, value: JSON, lineage: str) -> str:
        """The digest of one value (its canonical JSON, so ``"1234"`` and ``1234`` differ).

        Kept for the values met before (a batch's declarations share a few guarantees), so
        an unchanged re-plan of many departures pays a dict look-up for each."""
        cache_key = (lineage, value) if type(value) is str else None
        if cache_key is not None:
            found = self._digests.get(cache_key)
            if found is not None:
                return found
        key, key_id = self._key(lineage)
        text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        digest = f"{DIGEST_PREFIX}{key_id}:{hmac.digest(key, text.encode(), 'sha256').hex()}"
        if cache_key is not None:
            if len(self._digests) >= _DIGESTS_KEPT:
                self._digests.clear()
            self._digests[cache_key] = digest
        return digest

    def body_digest(self, body_sha256: str) -> str:
        """What a history keeps of a request's body: an HMAC-SHA256 of the body's SHA-256
        (``body_sha256``, hex) under a key derived from the API key as the state's digests'
        are, with a fixed salt of its own (a state's first request is sent before it has a
        lineage). A plain hash of a body that holds an access code is undone by trying the
        10,000 codes; this one only by whoever holds the API key (docs/state.md, "What an
        entry holds")."""
        key, key_id = self._key(_BODY_SALT)
        mac = hmac.digest(key, body_sha256.encode(), "sha256").hex()
        return f"{DIGEST_PREFIX}{key_id}:{mac}"

    def key_id(self, lineage: str) -> str:
        """The eight hex digits that name the key of ``lineage`` in its digests."""
        return self._key(lineage)[1]

    def seal(
        self,
        kind: Kind,
        spec: JSONObject,
        lineage: str,
        *,
        stored: bool = True,
        like: JSONObject | None = None,
    ) -> JSONObject:
        """``spec`` with each sensitive value replaced by its digest (``spec`` itself when
        there is none). ``stored``: a value that is a digest already stays (a record);
        otherwise every value is digested (what the manifests ask for). ``like``: a
        recorded spec to compare with; where it holds a digest made under another key,
        that digest is taken as is, since the two cannot be compared."""
        changes: dict[tuple[str | int, ...], JSON] = {}
        for path in sensitive_paths(kind):
            for where, value in values_at(spec, path):
                if value is None or (stored and is_digest(value)):
                    continue
                old = value_at(like, where) if like is not None else None
                if isinstance(old, str) and is_digest(old) and old[12:20] != self.key_id(lineage):
                    changes[where] = old
                else:
                    changes[where] = self.digest(value, lineage)
        return replaced(spec, changes) if changes else spec


def value_at(spec: JSON, where: tuple[str | int, ...]) -> JSON:
    """The value at the concrete path ``where`` in ``spec``, or None."""
    for step in where:
        if type(step) is int:
            spec = spec[step] if type(spec) is list and step < len(spec) else None
        else:
            spec = spec.get(step) if type(spec) is dict or isinstance(spec, Mapping) else None
    return spec


def has_clear_values(kind: Kind, spec: JSONObject) -> bool:
    """Whether ``spec`` holds a sensitive value that is not a digest."""
    return any(
        value is not None and not is_digest(value)
        for path in sensitive_paths(kind)
        for _, value in values_at(spec, path)
    )


def masked(kind: Kind, spec: JSONObject) -> JSONObject:
    """``spec`` with each sensitive value that is not a digest shown as ``(sensitive)``."""
    changes = {
        where: SENSITIVE
        for path in sensitive_paths(kind)
        for where, value in values_at(spec, path)
        if value is not None and not is_digest(value)
    }
    return replaced(spec, changes) if changes else spec


def clear_values(kind: Kind, spec: JSONObject) -> tuple[str, ...]:
    """The sensitive values of ``spec`` that are not digests (an access code as sent)."""
    return tuple(
        value
        for path in sensitive_paths(kind)
        for _, value in values_at(spec, path)
        if isinstance(value, str) and value and not is_digest(value)
    )


def without_quoted(value: JSON, secrets: Sequence[str]) -> JSON:
    """``value`` (a service's message, an error body) with each of ``secrets`` it quotes
    shown as ``(sensitive)``: a service that repeats the access code it was sent must not
    bring it back into the state, a report or a log."""
    if not secrets:
        return value
    if isinstance(value, str):
        for secret in sorted(secrets, key=len, reverse=True):
            value = value.replace(secret, SENSITIVE)
        return value
    if isinstance(value, dict):
        return {
            without_quoted(str(k), secrets): without_quoted(v, secrets) for k, v in value.items()
        }
    if isinstance(value, list):
        return [without_quoted(item, secrets) for item in value]
    return value


def masked_document(document: JSONObject) -> JSONObject:
    """A rendered document (``kind`` and ``spec``) with its sensitive values shown as
    ``(sensitive)``; unchanged when its kind has none."""
    kind = _sensitive_kinds().get(str(document.get("kind")))
    spec = document.get("spec")
    if kind is None or not isinstance(spec, Mapping):
        return document
    return {**document, "spec": masked(kind, spec)}


@cache
def _sensitive_kinds() -> dict[str, Kind]:
    return {kind.value: kind for kind in Kind if sensitive_paths(kind)}


def kind_of_address(address: str) -> Kind | None:
    """The kind of ``Kind/name`` when its schema marks any field sensitive, else None."""
    return _sensitive_kinds().get(address.split("/", 1)[0])


if TYPE_CHECKING:
    from customs_batch.state.model import ResourceRecord


def sealed_record(record: ResourceRecord, sealer: Sealer, lineage: str) -> ResourceRecord:
    """``record`` with the sensitive values of its spec, and of the specs of the submissions
    it replaced, as digests (``record`` itself when it holds none in clear)."""
    kind = kind_of_address(record.address)
    if kind is None:
        return record
    if record.error is not None or record.remote_errors:
        record = _without_quoted_values(kind, record, sealer, lineage)
    spec = sealer.seal(kind, record.spec, lineage)
    superseded = tuple(
        {**entry, "spec": sealer.seal(kind, entry["spec"], lineage)}
        if isinstance(entry, Mapping) and isinstance(entry.get("spec"), Mapping)
        else entry
        for entry in record.superseded
    )
    if spec is record.spec and all(
        a is b or a == b for a, b in zip(superseded, record.superseded, strict=True)
    ):
        return record
    return record.with_changes(spec=spec, superseded=superseded)


def _without_quoted_values(
    kind: Kind, record: ResourceRecord, sealer: Sealer, lineage: str
) -> ResourceRecord:
    """``record`` with the access codes of its spec masked in the service's error and
    errors it keeps: those the spec holds in clear (recorded in the same write as the
    answer that quotes them), and, where it holds digests (a later read: refresh, a wait),
    each word of the errors whose digest is one of them."""
    secrets = clear_values(kind, record.spec)
    if not secrets:
        secrets = _quoted_digested(kind, record, sealer, lineage)
    if not secrets:
        return record
    error = record.error
    if error is not None:
        error = replace(
            error,
            message=str(without_quoted(error.message, secrets)),
            body=without_quoted(dict(error.body), secrets),
        )
    errors = tuple(without_quoted(list(record.remote_errors), secrets))
    return record.with_changes(error=error, remote_errors=errors)


_WORD = re.compile(r"""[^\s"'`,;:()\[\]{}<>=]{1,256}""")
"""A word of a service's message that could be a value it quotes (``"1234"``, ``A-12``)."""


def _quoted_digested(
    kind: Kind, record: ResourceRecord, sealer: Sealer, lineage: str
) -> tuple[str, ...]:
    """The words of ``record``'s error and errors whose digest is one its spec holds."""
    digests = {
        value
        for path in sensitive_paths(kind)
        for _, value in values_at(record.spec, path)
        if isinstance(value, str) and is_digest(value)
    }
    if not digests or not sealer.has_key():
        return ()
    said = json.dumps(
        [record.error.to_json() if record.error else None, list(record.remote_errors)],
        ensure_ascii=False,
    )
    words = {found.rstrip(".!?") for found in _WORD.findall(said)} | set(_WORD.findall(said))
    return tuple(word for word in words if word and sealer.digest(word, lineage) in digests)
