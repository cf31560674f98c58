"""What earlier plans found unchanged: a document, as loaded, against its record, as read.

A re-plan of 100,000 documents with 10 changed compares 99,990 documents with records that
did not change either. Whether a document without references is unchanged is a function of
two things: its spec, and its record (the record's status, what the service said of it,
what it recorded as sent). A document is known by its version (its file's outcome in the
load cache and its place in the file: the same version, the same spec, see
:data:`customs_batch.load_cache.Versions`), and its record by its text in the state. So
each comparison that found a document unchanged is kept as a digest of the two, and a later
plan that meets the same document and the same record text knows the answer without parsing
the record or comparing.

Only a comparison that can be nothing but a function of the two is kept:

- the document's spec had no reference (resolving it gave the spec itself, nothing left
  unknown): a reference's value is another record's;
- it holds no sensitive value (a guarantee's access code is compared as a digest keyed by
  the API key, which is not in either text): a file whose documents hold one is never in
  the load cache (:meth:`customs_batch.load_cache.LoadCache.put`), so it has no version;
- its record was the record under its own name, as the state file (or database) holds it,
  and the plan decided "no change" by the ordinary comparison (not a rename, not a record
  forgotten, refused, rejected or waiting: each of those has its own decision, made again).

The digests are kept in the load cache's folder, one note for each environment (so that
two environments planned in turn do not replace each other's), written whole by the run
that planned every document (a part chosen with ``-l`` leaves the note as it was), holding
the digests of the documents that run found unchanged, each with the place in its lane its
record says its request was sent at (a movement's: the next plan counts the lane on from it
without reading the record's identity again, see
:meth:`customs_batch.planning.identity.Identities.count`). A note that is
missing, unreadable, or from another version of the tool is no error: every document is
then compared.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from customs_batch.load_cache import LoadCache
from customs_batch.manifest import Document

_DIGEST_SIZE = 16
_PLACE_SIZE = 4
_ENTRY_SIZE = _DIGEST_SIZE + _PLACE_SIZE
"""A note's entry: the digest of a comparison, then the place in its lane its record was
sent at (little-endian; :data:`_NO_PLACE` for none)."""
_NO_PLACE = (1 << (8 * _PLACE_SIZE)) - 1


class Unchanged:
    """The comparisons earlier plans found unchanged, and those this plan finds."""

    __slots__ = ("_cache", "_found", "_known", "_name", "_version_of", "_whole")

    def __init__(
        self,
        cache: LoadCache,
        environment: str,
        version_of: Callable[[Document], bytes | None],
        *,
        whole: bool = True,
    ) -> None:
        """``whole``: the plan is of every document (not a part chosen with -l, --target or
        --exclude): only then does what it finds replace the note."""
        self._cache = cache
        self._whole = whole
        self._name = f"unchanged {environment}"
        self._version_of = version_of
        self._known = _read(cache.read_note(self._name))
        self._found: dict[bytes, int] = {}

    def key(self, document: Document, address: str, record: bytes | str | None) -> bytes | None:
        """The digest of ``document`` (at ``address``) and the text of its ``record`` as
        the state holds it (None: no record, or a record already parsed), or None when the
        comparison of the two could depend on anything else."""
        if record is None:
            return None
        version = self._version_of(document)
        if version is None:
            return None
        if isinstance(record, str):  # a database's row
            record = record.encode("utf-8", "surrogatepass")
        text = b"".join((version, address.encode("utf-8", "surrogateescape"), b"\0", record))
        return hashlib.blake2b(text, digest_size=_DIGEST_SIZE).digest()

    def known(self, key: bytes) -> bool:
        """Whether an earlier plan found this comparison unchanged (kept for the next)."""
        sent = self._known.get(key)
        if sent is None:
            return False
        self._found[key] = sent
        return True

    def sent_at(self, key: bytes) -> int | None:
        """For a comparison :meth:`known`, the place in its lane the record says its
        request was sent at, as the plan that found it read it (None: none)."""
        sent = self._known.get(key, _NO_PLACE)
        return None if sent == _NO_PLACE else sent

    def found(self, key: bytes, sent_at: int | None) -> None:
        """This plan found the comparison of ``key`` unchanged, against a record whose
        request was sent at ``sent_at`` in its lane (:meth:`Identities.placed
        <customs_batch.planning.identity.Identities.placed>`): the next plan counts the
        document in its lane from this, without reading the record's identity."""
        if sent_at is None:
            self._found[key] = _NO_PLACE
        elif 0 <= sent_at < _NO_PLACE:
            self._found[key] = sent_at
        # (A place past what the note holds is not noted: the document is compared again.)

    def save(self) -> None:
        """Keep what this plan found for the next (written only when it differs, and only
        by a plan of every document: a part would leave the next whole plan to compare the
        rest again)."""
        if self._whole and self._found != self._known:
            found = self._found
            self._cache.write_note(
                self._name,
                b"".join(key + found[key].to_bytes(_PLACE_SIZE, "little") for key in sorted(found)),
            )


def _read(data: bytes | None) -> dict[bytes, int]:
    if not data or len(data) % _ENTRY_SIZE:
        return {}
    return {
        data[at : at + _DIGEST_SIZE]: int.from_bytes(
            data[at + _DIGEST_SIZE : at + _ENTRY_SIZE], "little"
        )
        for at in range(0, len(data), _ENTRY_SIZE)
    }
