"""The records of a state by address, each parsed only when it is first used.

A run that changes ten resources in a state of 100,000 should not pay for the 99,990 others:
parsing a record into Python objects is what loading a big state costs (about 15 µs each).
So a state read from its file keeps each record as its JSON text until something asks for
it, and keeps the text of every record it never changed, to write it back as it was.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Collection, Iterator, Mapping, MutableMapping
from pathlib import Path

import orjson

from customs_batch import jsontypes
from customs_batch.errors import StateError
from customs_batch.jsontypes import JSON
from customs_batch.sensitive import clear_value_pattern, kind_of_address
from customs_batch.state.model import RecordStatus, ResourceRecord


class Records(MutableMapping[str, ResourceRecord]):
    """A mapping of address to record whose values may still be text from the state file.

    ``entry_of(address)`` is the record's entry as read (``Kind/name": {...}``, see
    ``file.record_entry``), for a record this state never replaced: writing it back costs a
    copy, not a serialisation. Safe to read from several threads while one writes (apply's
    workers).
    """

    def __init__(self, source: Path | str | None = None) -> None:
        self._source = source
        self._values: dict[str, ResourceRecord | bytes | str] = {}
        self._entries: dict[str, bytes] = {}
        self._lock = threading.Lock()
        self.sealing: Callable[[ResourceRecord], ResourceRecord] | None = None
        """Digests a record's sensitive values as it is parsed (set by its State)."""
        self.clear_read = False
        """Whether an entry as read was found to hold a sensitive value in clear (looked
        for when the entry is written back or replaced, not when it is read)."""

    @classmethod
    def from_entries(cls, entries: dict[str, bytes], source: Path) -> Records:
        """Records kept as their ``entries`` in the state file (by address) until used."""
        records = cls(source)
        records._values = dict(entries)
        records._entries = entries
        return records

    @classmethod
    def from_texts(cls, texts: dict[str, str], source: str) -> Records:
        """Records kept as their JSON ``texts`` (by address) until used; they have no
        entry in a state file (a database's rows)."""
        records = cls(source)
        records._values = dict(texts)
        return records

    def any_clear(self) -> bool:
        """Whether an entry as read holds a sensitive value in clear (one search of each;
        the next write of the state digests them)."""
        pattern = clear_value_pattern()
        return any(
            pattern.search(entry) is not None and kind_of_address(address)
            for address, entry in self._entries.items()
        )

    def entry_of(self, address: str) -> bytes | None:
        """The record's entry as it was read, or None once it was replaced or when it holds
        a sensitive value in clear (written before digests were kept: it is written again,
        digested)."""
        entry = self._entries.get(address)
        if entry is not None and self._clear(address, entry):
            return None
        return entry

    def _clear(self, address: str, entry: bytes) -> bool:
        """Whether ``entry`` holds a sensitive value in clear (noted in ``clear_read``)."""
        if self.sealing is None or not kind_of_address(address):
            return False
        if clear_value_pattern().search(entry) is None:
            return False
        self.clear_read = True
        return True

    def __getitem__(self, address: str) -> ResourceRecord:
        value = self._values[address]
        if isinstance(value, ResourceRecord):
            return value
        with self._lock:
            value = self._values[address]
            if not isinstance(value, ResourceRecord):
                value = self._parse(address, value)
                self._values[address] = value
            return value

    def peek(self, address: str) -> ResourceRecord:
        """The record of ``address``, parsed if need be but not kept parsed: for a pass over
        every record (``state list``) that should not hold them all at once."""
        value = self._values[address]
        return value if isinstance(value, ResourceRecord) else self._parse(address, value)

    def text_of(self, address: str) -> bytes | str | None:
        """The record's text as read when it was never parsed, else None."""
        value = self._values.get(address)
        return None if value is None or isinstance(value, ResourceRecord) else value

    def __setitem__(self, address: str, record: ResourceRecord) -> None:
        with self._lock:
            self._values[address] = record
            self._replaced(address)

    def __delitem__(self, address: str) -> None:
        with self._lock:
            del self._values[address]
            self._replaced(address)

    def _replaced(self, address: str) -> None:
        entry = self._entries.pop(address, None)
        if entry is not None:
            self._clear(address, entry)

    def __contains__(self, address: object) -> bool:
        return address in self._values

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._values))

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"Records({len(self)} records)"

    def _parse(self, address: str, value: bytes | str) -> ResourceRecord:
        where = self._source or "the state"
        try:
            # An entry of the state file starts with the rest of its address.
            text = value[value.index(b'": {') + 3 :] if isinstance(value, bytes) else value
            data = _loads(text)
        except (UnicodeDecodeError, ValueError) as exc:
            raise StateError(
                f"{where}: the record of {address} is corrupt ({exc})", hint=_hint(where)
            ) from None
        if not isinstance(data, Mapping):
            raise StateError(
                f"{where}: the record of {address} is not an object", hint=_hint(where)
            )
        try:
            record = ResourceRecord.from_json(address, data)
        except StateError as exc:
            raise StateError(f"{where}: {exc}", hint=_hint(where)) from None
        if self.sealing is None or not kind_of_address(address):
            return record  # no sensitive value to digest: without the call (a plan reads all)
        return self.sealing(record)


_DIGITS = bytes.maketrans(b"123456789", b"000000000")
_LONG_NUMBER = b"0" * 19
"""19 digits in a row: the shortest integer orjson may read as a float (10**18 < 2**63)."""


def _loads(text: bytes | str) -> JSON:
    """``json.loads(text)``, by orjson where it gives the same: a plan parses every record
    of the state, and orjson does it in a third of the time (measured on 100,000 records,
    with this function's check). orjson reads an integer beyond 64 bits as a float, so an
    entry with 19 digits in a row goes to the standard library, as does what orjson
    refuses (NaN, a lone surrogate, deep nesting, a text not UTF-8): the standard library
    then reads it, or raises, as it always did. A database's row (text) is read the same
    way, as its UTF-8 bytes: a PostgreSQL state of 100,000 records parsed in 2.6 s by the
    standard library alone."""
    data = text
    if isinstance(data, str):
        try:
            data = data.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: the standard library's to read
            return jsontypes.loads(text)
    if _LONG_NUMBER not in data.translate(_DIGITS):
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass
    return jsontypes.loads(text)


def _hint(source: Path | str) -> str:
    if isinstance(source, Path):
        return (
            f"restore the previous state from {source.name}.backup or from version control; "
            "never delete the state to get past this: it records what was sent"
        )
    return "restore the state from a copy (`customs-batch state push`); never delete it"


def records_in(
    resources: Mapping[str, ResourceRecord], prefix: str, statuses: Collection[RecordStatus]
) -> Iterator[ResourceRecord]:
    """The records of addresses starting with ``prefix`` whose status is one of
    ``statuses``. A record still held as text is parsed only when its text names one of
    them, so a pass over a big state costs a substring search per record."""
    names = "|".join(re.escape(status.value) for status in statuses)
    named = re.compile(rf'"status"\s*:\s*"(?:{names})"')
    texts = resources.text_of if isinstance(resources, Records) else None
    for address in resources:
        if not address.startswith(prefix):
            continue
        text = texts(address) if texts is not None else None
        if text is not None:
            if isinstance(text, bytes):
                text = text.decode("utf-8", "replace")
            if named.search(text) is None:
                continue
        record = resources[address]
        if record.status in statuses:
            yield record


def by_output(
    resources: Mapping[str, ResourceRecord], kind: str, output: str
) -> dict[str, list[str]]:
    """The addresses of the records of ``kind`` (its spelling) by the value of their
    ``output`` (as text; records without it left out): which records stand for the object a
    record of another kind names (``KindModel.restates``), the state looked through once."""
    index: dict[str, list[str]] = {}
    prefix = f"{kind}/"
    for address in [a for a in resources if a.startswith(prefix)]:
        found = resources.get(address)
        value = found.outputs.get(output) if found is not None else None
        if value is not None:
            index.setdefault(str(value), []).append(address)
    return index


def each_record(resources: Mapping[str, ResourceRecord]) -> Iterator[tuple[str, ResourceRecord]]:
    """Every record in address order, without keeping them all parsed."""
    peek = resources.peek if isinstance(resources, Records) else resources.__getitem__
    for address in sorted(resources):
        yield address, peek(address)
