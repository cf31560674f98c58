"""The state file: deterministic, versioned JSON that reads well in a git diff.

Its layout is fixed (``json.dumps`` with sorted keys and an indent of two), and that makes
a big state cheap to use: a file in this layout is cut into one text per record without
parsing it (:func:`split_records`), each record is parsed when first used, and a record the
run did not change is written back as the very text it was read as. A file in any other
layout (edited by hand, written by another tool) is parsed whole, as before, and written in
the canonical layout the next time.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from customs_batch import jsontypes
from customs_batch.errors import StateError
from customs_batch.state._atomic import PRIVATE, describe, write_atomic, write_error
from customs_batch.state.model import ResourceRecord, State
from customs_batch.state.records import Records
from customs_batch.userfiles import FileRefused, InputKind, read_user_file

if TYPE_CHECKING:
    from customs_batch.sensitive import Sealer

STATE_VERSION = 1

# One function per older version, each turning version N into N + 1. Version 1 is the first.
UPGRADES: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {}


# What json.dumps(indent=2, sort_keys=True) writes around the records: the keys in order
# lineage, resources, serial, version (and first, in what `state pull` prints, formatVersion).
_HEAD = re.compile(
    rb'\{\n(?:  "formatVersion": [0-9]+,\n)?  "lineage": ("(?:[^"\\\n]|\\.)*"),\n  "resources": \{'
)
_TAIL = re.compile(rb'\n  \},\n  "serial": (-?[0-9]+),\n  "version": ([0-9]+)\n\}\n?\Z')
_RECORD_INDENT = b"\n    "
_NEXT_RECORD = b',\n    "'
_RECORD_END = b"\n    }"


def dumps(state: State) -> bytes:
    """The state as canonical JSON: sorted keys, two-space indent, a final newline.

    Byte for byte what ``json.dumps(document, indent=2, sort_keys=True,
    ensure_ascii=False)`` gives, built one record at a time so that a record kept as the
    text it was read as is copied, not serialised again.
    """
    return b"".join(dump_pieces(state))


def dump_pieces(state: State) -> list[bytes]:
    """:func:`dumps` in pieces of about a thousand records, to write one after the other
    instead of holding a second copy of a big state in memory."""
    records = state.resources
    addresses = sorted(records)
    kept = records.entry_of if isinstance(records, Records) else lambda _: None
    entries = [kept(address) or record_entry(address, records[address]) for address in addresses]
    pieces = [b'{\n  "lineage": ' + _json(state.lineage) + b',\n  "resources": ']
    if entries:
        pieces.append(b'{\n    "')
        for first in range(0, len(entries), _PIECE):
            if first:
                pieces.append(_NEXT_RECORD)
            pieces.append(_NEXT_RECORD.join(entries[first : first + _PIECE]))
        pieces.append(b"\n  }")
    else:
        pieces.append(b"{}")
    serial, version = _json(state.serial), _json(STATE_VERSION)
    pieces.append(b',\n  "serial": ' + serial + b',\n  "version": ' + version + b"\n}\n")
    return pieces


_PIECE = 1000


def pulled_pieces(state: State) -> list[bytes]:
    """What ``state pull`` prints, in pieces: the state file (:func:`dump_pieces`) with the
    key every JSON output of customs-batch carries its version under, ``formatVersion``,
    first (the state's version, also kept as ``version``, which a state file holds and
    ``state push`` reads). Canonical too: a pushed copy is cut into records unparsed."""
    from customs_batch.formats import VERSION_KEY

    pieces = dump_pieces(state)
    opening = b"{\n"  # the first piece opens with it, then the lineage
    key = _json(VERSION_KEY) + b": " + _json(STATE_VERSION)
    pieces[0] = opening + b"  " + key + b",\n" + pieces[0][len(opening) :]
    return pieces


def _json(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode()


def record_entry(address: str, record: ResourceRecord) -> bytes:
    """One record as the file holds it, from just after the opening quote of its address
    to its closing brace, indented two levels deep."""
    text = json.dumps(record.to_json(), indent=2, sort_keys=True, ensure_ascii=False)
    return _json(address)[1:] + b": " + text.replace("\n", "\n    ").encode()


def split_records(data: bytes) -> tuple[str, int, dict[str, bytes]] | None:
    """Lineage, serial and each record's entry (see :func:`record_entry`) of a state file in the canonical layout of
    the current version, found without parsing the records; None for any other file.

    In the canonical layout each record opens and closes on a line of its own indented by
    four spaces, every line inside it is indented by six or more, and nothing else is
    there. The lines are counted, so a record written another way (on one line, say)
    sends the file to the full parse instead of hiding inside its neighbour.
    """
    head = _HEAD.match(data)
    tail = _TAIL.search(data, max(0, len(data) - 200))
    if head is None or tail is None or int(tail.group(2)) != STATE_VERSION:
        return None
    start = head.end() + len(_RECORD_INDENT) + 1
    if data[head.end() : start] != _RECORD_INDENT + b'"':
        return None
    end = tail.start()
    if not data.endswith(_RECORD_END, start, end):
        return None
    # Split the whole file, not a copy of its records: the lineage and the serial sit on
    # lines indented by two, so the first and the last piece only need trimming.
    chunks = data.split(_NEXT_RECORD)
    chunks[-1] = chunks[-1][: len(chunks[-1]) - (len(data) - end)]
    chunks[0] = chunks[0][start:]
    # Two record-level lines per record (its key and its closing brace) and no other line
    # indented by less than six: data.count is fast, a loop over lines would not be.
    shallow = data.count(b"\n", start, end) - data.count(b"\n      ", start, end)
    if shallow != 2 * len(chunks) - 1:
        return None
    entries: dict[str, bytes] = {}
    for chunk in chunks:
        opened = chunk.find(b'": {\n')
        if opened < 0 or chunk.find(b"\n") != opened + 4 or not chunk.endswith(_RECORD_END):
            return None
        key = chunk[:opened]
        if b'"' in key or b"\\" in key:
            return None  # an address that needs unescaping: rare, parsed the long way
        try:
            entries[key.decode()] = chunk
        except UnicodeDecodeError:
            return None
    try:
        lineage = json.loads(head.group(1))
    except (UnicodeDecodeError, ValueError):
        return None
    return lineage, int(tail.group(1)), entries


def loads(data: bytes, *, source: Path, sealer: Sealer | None = None) -> State:
    """Parse a state file; anything malformed is a StateError, never a silent reset.

    A file in the canonical layout is cut into records that are parsed when first used (a
    malformed one is then a StateError naming it); any other file is parsed whole here.
    """
    split = split_records(data)
    if split is not None:
        lineage, serial, entries = split
        # Whether any record is in clear is found as the records are written back.
        return State(lineage, serial, Records.from_entries(entries, source), sealer)
    hint = (
        f"restore the previous state from {source.name}.backup or from version control; "
        "never delete the state to get past this: it records what was sent"
    )
    try:
        document = jsontypes.loads(data.decode("utf-8"))
    except ValueError as exc:  # not UTF-8, not JSON, or nested too deeply
        raise StateError(
            f"{source}: the state file is corrupt or truncated ({exc})", hint=hint
        ) from exc
    if not isinstance(document, dict):
        raise StateError(f"{source}: the state file is not a JSON object", hint=hint)
    document = _upgrade(document, source, hint)
    resources = document.get("resources")
    if not isinstance(document.get("lineage"), str) or not isinstance(document.get("serial"), int):
        raise StateError(f"{source}: the state file has no valid lineage and serial", hint=hint)
    if not isinstance(resources, dict):
        raise StateError(f"{source}: the state file has no resources object", hint=hint)
    state = State(lineage=document["lineage"], serial=document["serial"], sealer=sealer)
    for address, record in resources.items():
        if not isinstance(record, dict):
            raise StateError(f"{source}: the record of {address} is not an object", hint=hint)
        try:
            state.apply(address, ResourceRecord.from_json(address, record))
        except StateError as exc:
            raise StateError(f"{source}: {exc.message}", hint=hint) from None
    state.clear_at_rest = _holds_clear(data, sealer)
    return state


def _holds_clear(data: bytes, sealer: Sealer | None) -> bool:
    """Whether a state file's ``data`` holds a sensitive value in clear (one search of the
    whole file, about 1.3 ms a megabyte: for a file in another layout, parsed whole)."""
    from customs_batch.sensitive import clear_value_pattern

    return sealer is not None and clear_value_pattern().search(data) is not None


def _upgrade(document: dict[str, Any], source: Path, hint: str) -> dict[str, Any]:
    version = document.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise StateError(f"{source}: the state file has no valid version", hint=hint)
    if version > STATE_VERSION:
        raise StateError(
            f"{source}: the state was written by a newer customs-batch (state version {version}, "
            f"this one reads up to {STATE_VERSION})",
            hint="upgrade customs-batch; an older one must not rewrite a newer state",
        )
    while version < STATE_VERSION:
        document = UPGRADES[version](document)
        version += 1
        document["version"] = version
    return document


def read_state(path: Path, sealer: Sealer | None = None) -> State | None:
    """The state at ``path``, or None when there is no state file yet; with ``sealer``, its
    records' sensitive values are digests (see :mod:`customs_batch.sensitive`)."""
    try:
        data = read_user_file(path, kind=InputKind.STATE)
    except FileNotFoundError:
        return None
    except FileRefused as exc:
        raise StateError(
            f"{path}: cannot use it as the state file: {exc.reason}",
            hint=f"put the state file itself there, or restore {path.name}.backup"
            + (f"; or {exc.hint}" if exc.rule == "file.too-large" else ""),
        ) from None
    except OSError as exc:
        raise StateError(f"{path}: cannot read the state file ({exc.strerror})") from exc
    return loads(data, source=path, sealer=sealer)


def write_state(path: Path, state: State) -> None:
    """Write ``state`` atomically (mode 0600), keeping the previous file as ``<name>.backup``."""
    data = dump_pieces(state)  # finds the records as read that hold a value in clear
    records = state.resources
    if isinstance(records, Records) and records.clear_read:
        state.clear_at_rest = True
    safe = (
        f"nothing recorded was lost: {path.name} is as it was, and the journal beside it "
        "keeps every outcome not yet in it, to be folded in by the next command that writes "
        "the state (apply, refresh)"
    )
    backup = path.with_name(path.name + ".backup")
    if state.clear_at_rest:
        # The file being replaced was written before sensitive values were digested: its
        # backup is kept digested, not as a second copy of the values in clear.
        previous = read_state(path, state.sealer)
        if previous is not None:
            write_atomic(backup, b"".join(dump_pieces(previous)), safe=safe)
    else:
        _keep_backup(path, backup, safe)
    write_atomic(path, data, safe=safe)
    state.clear_at_rest = False
    if isinstance(records, Records):
        records.clear_read = False


def _keep_backup(path: Path, backup: Path, safe: str) -> None:
    """Make the current file ``backup``: a second name for it (a hard link, renamed into
    place), so an 81 MB state is not read and written again; a copy where the file system
    has no hard links. The rename of the new state that follows makes both durable."""
    tmp = backup.with_name(f".{backup.name}.{os.getpid()}.tmp")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    try:
        os.link(path, tmp, follow_symlinks=True)
    except FileNotFoundError:
        return  # no state file yet
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EMLINK, errno.EXDEV):
            raise write_error(backup, exc, safe=safe) from None
        _copy_backup(path, backup, safe)
        return
    try:
        os.chmod(tmp, PRIVATE)  # a state file left 0644 by an older version
        os.replace(tmp, backup)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise write_error(backup, exc, safe=safe) from None


def _copy_backup(path: Path, backup: Path, safe: str) -> None:
    try:
        previous = path.read_bytes()
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StateError(f"{path}: cannot read the state file ({describe(exc)})") from exc
    write_atomic(backup, previous, safe=safe)
