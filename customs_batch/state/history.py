"""The history of an environment: an append-only, hash-chained log of what apply sent.

Unlike the journal (emptied when folded) and the records (the latest status only), the
history keeps every entry for good. Each entry holds ``seq`` (1, 2, …), ``prev`` (the hash
of the entry before it; :data:`GENESIS` for the first) and ``hash``: the SHA-256 of the
entry's canonical JSON without ``hash``. A changed entry no longer matches its hash; a
removed, reordered or re-hashed one no longer matches the ``prev`` of the entry after it:
:func:`verify` names the first entry where the chain breaks.

Two stores keep the same lines: :class:`LocalHistory` (JSON-lines files beside a local
state, rotated by size, mode 0600) and ``pg_history.PostgresHistory`` (a table beside a
PostgreSQL state). :func:`history_for` gives the one of a state backend.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Protocol

from customs_batch import jsontypes
from customs_batch.errors import StateError
from customs_batch.folders import make_private_folder
from customs_batch.state._atomic import fsync_dir, open_private, write_all, write_error
from customs_batch.state._lines import whole_lines
from customs_batch.state.backend import LocalBackend, StateBackend
from customs_batch.state.model import State
from customs_batch.userfiles import InputKind, open_user_file

GENESIS = "0" * 64
"""The ``prev`` of the first entry of a chain."""

ROTATE_BYTES = 64 * 1024 * 1024
"""A local history file is closed and a new one started once it would grow past this."""

CURRENT_FILE = "history.jsonl"
_ROTATED = re.compile(r"^history\.(\d{6,})\.jsonl$")


def canonical(body: Mapping[str, Any]) -> bytes:
    """The bytes an entry is hashed and stored as: sorted keys, no spaces, UTF-8."""
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def entry_hash(body: Mapping[str, Any]) -> str:
    """The hash of an entry: SHA-256 of its canonical JSON without ``hash``."""
    return hashlib.sha256(canonical({k: v for k, v in body.items() if k != "hash"})).hexdigest()


@dataclass(frozen=True)
class StoredEntry:
    """One entry as stored: where it is (a file and line, or a row) and its text."""

    where: str
    text: bytes

    def body(self) -> dict[str, Any] | None:
        """The entry's fields, or None when the text is not a JSON object."""
        try:
            value = jsontypes.loads(self.text)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None


class HistoryStore(Protocol):
    """Where one environment's history is kept."""

    def append(self, fields: Mapping[str, Any]) -> int:
        """Chain ``fields`` to the last entry and write it; its ``seq``. Durable with the
        next :meth:`sync` (at once where the store commits each entry)."""
        ...

    def sync(self) -> None:
        """Return once every entry appended so far is durable."""
        ...

    def close(self) -> None: ...

    def entries(self) -> Iterator[StoredEntry]:
        """Every entry, oldest first."""
        ...

    def last_entry(self) -> dict[str, Any] | None:
        """The fields of the newest entry (None: none, or not a JSON object)."""
        ...


class Chain:
    """The next ``seq`` and ``prev``: each :meth:`seal` makes the entry after the last."""

    def __init__(self, last: Mapping[str, Any] | None = None) -> None:
        self.seq = int(last["seq"]) if last else 0
        self.prev = str(last["hash"]) if last else GENESIS

    def seal(self, fields: Mapping[str, Any]) -> tuple[int, bytes]:
        """The entry after the last, as its stored bytes (no newline)."""
        body = {**fields, "seq": self.seq + 1, "prev": self.prev}
        body["hash"] = entry_hash(body)
        self.seq, self.prev = body["seq"], body["hash"]
        return self.seq, canonical(body)


@dataclass(frozen=True)
class Verification:
    """What :func:`verify` found: how many entries, the last one's seq and hash, and the
    first broken entry (where and why), if any."""

    entries: int
    last_seq: int
    last_hash: str
    broken_at: str | None = None
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.broken_at is None


def verify(entries: Iterable[StoredEntry]) -> Verification:
    """Walk the chain from the first entry; stop at the first that breaks it."""
    count, seq, prev = 0, 0, GENESIS
    for stored in entries:
        body = stored.body()
        reason = _broken(body, seq, prev)
        if reason:
            return Verification(count, seq, prev, stored.where, reason)
        assert body is not None
        count, seq, prev = count + 1, int(body["seq"]), str(body["hash"])
    return Verification(count, seq, prev)


def _broken(body: Mapping[str, Any] | None, seq: int, prev: str) -> str:
    if body is None or not isinstance(body.get("hash"), str):
        return "it is not a history entry (not a JSON object with a hash)"
    if entry_hash(body) != body["hash"]:
        return "its content does not match its hash: it was changed after it was written"
    if body.get("prev") != prev:
        if prev == GENESIS:
            return (
                "the chain does not start here: the entries before it were removed (or an "
                "earlier history file)"
            )
        return (
            "it does not follow the entry before it: an entry between them was removed, "
            "the entries were reordered, or the one before it was changed and re-hashed"
        )
    if body.get("seq") != seq + 1:
        return f"it is numbered {body.get('seq')!r} where {seq + 1} was expected"
    return ""


class LocalHistory:
    """JSON-lines files in the state folder: ``history.jsonl``, and the full ones renamed
    ``history.000001.jsonl``, ``history.000002.jsonl``… (the chain runs on across them).

    Files are mode 0600. An entry is written at once and fsynced by :meth:`sync`; a line a
    crash left half-written was never acknowledged and is cut when writing starts again.
    """

    def __init__(self, directory: Path, *, rotate_bytes: int = ROTATE_BYTES) -> None:
        self.directory = directory
        self.path = directory / CURRENT_FILE
        self.rotate_bytes = rotate_bytes
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._size = 0
        self._chain: Chain | None = None
        self._written = 0
        self._synced = 0

    def files(self) -> list[Path]:
        """The history files, oldest first."""
        rotated = []
        if self.directory.is_dir():
            for path in self.directory.iterdir():
                match = _ROTATED.match(path.name)
                if match:
                    rotated.append((int(match.group(1)), path))
        files = [path for _, path in sorted(rotated)]
        return [*files, self.path] if self.path.exists() else files

    def entries(self) -> Iterator[StoredEntry]:
        """Every whole line of every file, oldest first (a last line cut short by a crash,
        never acknowledged, is left out)."""
        for path in self.files():
            try:
                data = path.read_bytes()
            except OSError as exc:
                raise StateError(f"{path}: cannot read the history ({exc.strerror})") from None
            yield from _stored_lines(data, path.name)

    def last_entry(self) -> dict[str, Any] | None:
        """The fields of the newest whole entry (None: none, or not a JSON object)."""
        for path in reversed(self.files()):
            try:
                line = _last_line(path)
            except OSError as exc:
                raise StateError(f"{path}: cannot read the history ({exc.strerror})") from None
            if line is not None:
                return StoredEntry(path.name, line).body()
        return None

    def append(self, fields: Mapping[str, Any]) -> int:
        with self._lock:
            try:
                if self._fd is None:
                    self._open()
                elif os.fstat(self._fd).st_size != self._size:
                    self._open_again()  # another process wrote (a run whose lock was broken)
                assert self._chain is not None and self._fd is not None
                seq, line = self._chain.seal(fields)
                line += b"\n"
                if self._size and self._size + len(line) > self.rotate_bytes:
                    self._rotate()
                write_all(self._fd, line)
            except OSError as exc:
                raise write_error(self.path, exc, safe=_SAFE, doing="cannot write") from None
            self._size += len(line)
            self._written += 1
            return seq

    def sync(self) -> None:
        with self._lock:
            if self._fd is None or self._synced == self._written:
                return
            try:
                os.fsync(self._fd)
            except OSError as exc:
                raise write_error(self.path, exc, safe=_SAFE, doing="cannot write") from None
            self._synced = self._written

    def close(self) -> None:
        self.sync()
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def _open(self) -> None:
        make_private_folder(self.directory)
        created = not self.path.exists()
        fd = open_private(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND)
        try:
            self._size = _cut_unfinished_line(fd)
            last = _last_line(self.path) if self._size else None
            if last is None:
                previous = self.files()[:-1]
                last = _last_line(previous[-1]) if previous else None
            self._chain = Chain(last_body(last))
        except BaseException:
            os.close(fd)
            raise
        if created:
            fsync_dir(self.directory)
        self._fd = fd

    def _open_again(self) -> None:
        """Chain on from what is in the files now, not from what this writer last wrote."""
        assert self._fd is not None
        os.fsync(self._fd)
        os.close(self._fd)
        self._fd = None
        self._synced = self._written
        self._open()

    def _rotate(self) -> None:
        """Close the full file under the next free number, and start an empty one."""
        assert self._fd is not None
        os.fsync(self._fd)
        os.close(self._fd)
        self._fd = None
        numbers = [int(m.group(1)) for p in self.files() if (m := _ROTATED.match(p.name))]
        os.rename(self.path, self.directory / f"history.{max(numbers, default=0) + 1:06d}.jsonl")
        self._fd = open_private(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND)
        fsync_dir(self.directory)
        self._size = 0
        self._synced = self._written


_SAFE = "the entries already written are kept; nothing was sent after the failed write"


def first_file_with_a_send(directory: Path) -> Path | None:
    """The oldest history file in ``directory`` that shows apply sent or recorded something
    from this state folder: an ``answer``, ``moved`` or ``dropped`` entry (None: none does).

    Each of those is written once the run had recorded in its journal, so the environment
    had a state. ``request`` entries alone are what a first run killed before its first
    intent leaves: a request leaves only once its intent is recorded, so none of them was
    sent. A line a crash left unfinished was never acknowledged and does not count.
    """
    for path in LocalHistory(directory).files():
        try:
            with path.open("rb") as file:
                for line in file:
                    if not line.endswith(b"\n") or not line.strip():
                        continue
                    body = StoredEntry(path.name, line).body()
                    if body is None or body.get("event") != "request":
                        return path  # a damaged entry is a trace too
        except OSError as exc:
            raise StateError(f"{path}: cannot read the history ({exc.strerror})") from None
    return None


def _cut_unfinished_line(fd: int) -> int:
    """Cut a line a crash left half-written; the size of what is left."""
    size = os.fstat(fd).st_size
    if size == 0:
        return 0
    os.lseek(fd, size - 1, os.SEEK_SET)
    if os.read(fd, 1) == b"\n":
        return size
    keep = 0
    step = 65536
    end = size
    while end > 0 and not keep:
        start = max(0, end - step)
        os.lseek(fd, start, os.SEEK_SET)
        chunk = os.read(fd, end - start)
        found = chunk.rfind(b"\n")
        if found >= 0:
            keep = start + found + 1
        end = start
    os.ftruncate(fd, keep)
    os.fsync(fd)
    return keep


LONGEST_ENTRY = 64 * 1024 * 1024
"""The longest line of a history file read back: an entry is a few hundred bytes; a longer
line is damage (read whole, it would cost its size in memory and, found from the end, time)."""


def _last_line(path: Path) -> bytes | None:
    """The last whole line of ``path`` (None when it has none), read from the end in
    pieces, each once."""
    with path.open("rb") as file:
        end = file.seek(0, os.SEEK_END)
        pieces: list[bytes] = []
        newlines = read = 0
        while end > 0:
            start = max(0, end - 65536)
            file.seek(start)
            piece = file.read(end - start)
            pieces.append(piece)
            newlines += piece.count(b"\n")
            read += len(piece)
            end = start
            if newlines >= 2 or (end == 0 and newlines >= 1):
                return b"".join(reversed(pieces)).split(b"\n")[-2]
            if read > LONGEST_ENTRY:
                raise StateError(
                    f"{path}: the last entry of the history is longer than "
                    f"{LONGEST_ENTRY // (1024 * 1024)} MB: the file is damaged",
                    hint="run `customs-batch history verify` to see where; keep the damaged "
                    "file as evidence and move it out of the state folder to start a new chain",
                )
    return None


def last_body(line: bytes | None) -> dict[str, Any] | None:
    """The fields of the last entry, to chain the next one to (None: no entry yet)."""
    if line is None:
        return None
    body = StoredEntry("", line).body()
    if (
        body is None
        or not isinstance(body.get("seq"), int)
        or not isinstance(body.get("hash"), str)
    ):
        raise StateError(
            "the last entry of the history is damaged, so no new entry can be chained to it",
            hint="run `customs-batch history verify` to see where; keep the damaged file as "
            "evidence and move it out of the state folder to start a new chain",
        )
    return body


LINEAGE_SHOWN = 8
"""Characters of the state's lineage an entry names (a random UUID's first eight: two
lineages of one folder alike in them is one chance in four billion)."""

SHOWN_SENDS = 10
"""Objects named, at most, when a state is older than its history."""


def _ids_given(body: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The IDs an entry says the service gave its object (an answer of success, an
    adoption, a move onto it), or None."""
    ids, status = body.get("ids"), body.get("status")
    if not isinstance(ids, dict) or not ids:
        return None
    if body.get("event") in ("moved", "adopted") or (type(status) is int and 200 <= status < 300):
        return ids
    return None


def state_behind_history(state: State, history: HistoryStore) -> str | None:
    """What the history records beyond ``state``, or None when the state is not behind it.

    Each entry apply writes names the lineage (its first characters) and serial of the state
    its run recorded into (a run records into serial N and leaves serial N + 1). The newest
    entry alone decides, so a plan reads one line: an answer or a record-only entry of
    serial N says that serial N + 1 or later exists; a request entry alone (a run killed
    before recording its intent) says that serial N does. Entries of another lineage (a state begun anew with
    ``--allow-empty-state``) or without one (written before entries named it) say nothing.
    Only then is the whole history read, for the objects to name.
    """
    last = history.last_entry()
    lineage = state.lineage[:LINEAGE_SHOWN]
    if last is None or not lineage or last.get("lineage") != lineage:
        return None
    serial = last.get("serial")
    if type(serial) is not int:
        return None
    newest = serial if last.get("event") == "request" else serial + 1
    if state.serial >= newest:
        return None
    created: dict[str, str] = {}
    runs: set[str] = set()
    for stored in history.entries():
        body = stored.body()
        if (
            body is None
            or body.get("lineage") != lineage
            or type(body.get("serial")) is not int
            or body["serial"] < state.serial
        ):
            continue
        runs.add(str(body.get("run")))
        ids = _ids_given(body)
        if ids is not None:
            shown = ", ".join(f"{key}={value}" for key, value in ids.items())
            created[str(body.get("address"))] = shown
    named = [f"{address} ({ids})" for address, ids in created.items()]
    listed = "; ".join(named[:SHOWN_SENDS])
    if len(named) > SHOWN_SENDS:
        listed += f"; and {len(named) - SHOWN_SENDS} more"
    what = f"the IDs the service gave them: {listed}" if named else "no ID the service gave them"
    return (
        f"it has serial {state.serial}, but its history records apply running on serial "
        f"{serial} of this state ({len(runs)} run(s) from serial {state.serial} on), and "
        f"{what}. Planning from this state would send those documents again (goods declared "
        "twice, movements created twice)"
    )


@dataclass(frozen=True)
class Beyond:
    """What :func:`entries_beyond` found: entries of one history past the chain it shares
    with another, how many runs wrote them, and the objects they created (a few named)."""

    entries: int
    runs: int
    created: tuple[str, ...]
    more: int

    def said(self, lacking: str) -> str:
        """The entries and the runs, ``lacking`` (who lacks them), then the objects."""
        listed = "; ".join(self.created)
        if self.more:
            listed += f"; and {self.more} more"
        what = f"the IDs the service gave them: {listed}" if listed else "no ID given"
        entries = f"{self.entries} entr{'y' if self.entries == 1 else 'ies'}"
        return f"{entries} of {self.runs} run(s) {lacking} ({what})"


def entries_beyond(mine: HistoryStore, theirs: HistoryStore, lineage: str) -> Beyond | None:
    """The entries of ``mine`` written into the state of ``lineage`` after the chain that
    ``mine`` and ``theirs`` share from their first entry (compared by hash), or None when
    there is none: what ``theirs`` never recorded. Entries of another lineage (a state begun
    anew) or without one say nothing. Both are read once, entry by entry, side by side."""
    shown = lineage[:LINEAGE_SHOWN]
    other = iter(theirs.entries())
    shared = True
    entries = 0
    runs: set[str] = set()
    created: dict[str, str] = {}
    more: set[str] = set()
    try:
        for stored in mine.entries():
            body = stored.body()
            if shared:
                held = next(other, None)
                held_body = held.body() if held is not None else None
                if (
                    body is not None
                    and held_body is not None
                    and body.get("hash") == held_body.get("hash")
                ):
                    continue
                shared = False
            if body is None or body.get("lineage") != shown:
                continue
            entries += 1
            runs.add(str(body.get("run")))
            ids = _ids_given(body)
            if ids is not None:
                address = str(body.get("address"))
                if address in created or len(created) < SHOWN_SENDS:
                    ids_shown = ", ".join(f"{key}={value}" for key, value in ids.items())
                    created[address] = f"{address} ({ids_shown})"
                else:
                    more.add(address)
    finally:
        close = getattr(other, "close", None)
        if close is not None:
            close()
    if not entries:
        return None
    return Beyond(entries, len(runs), tuple(created.values()), len(more))


def last_ids(history: HistoryStore, address: str, lineage: str) -> frozenset[str]:
    """The IDs (as text) the history last gave ``address`` in the state of ``lineage``:
    those of its newest answer of success, adoption or move onto it (a renamed document
    taking its record). What the state kept of an object whose record is gone for good
    (``state rm --gone``), for ``import`` to tell the object the address stood for from
    another one. Empty when there is none, or when its newest such entry moved its record
    to another name. Entries of another lineage (a state begun anew) say nothing; those
    without one (written before entries named it) count. Read entry by entry, parsing only
    those whose text names ``address``."""
    shown = lineage[:LINEAGE_SHOWN]
    named = json.dumps(address, ensure_ascii=False)[1:-1].encode()
    found: frozenset[str] = frozenset()
    for stored in history.entries():
        if named not in stored.text:
            continue
        body = stored.body()
        if body is None or body.get("lineage", shown) != shown:
            continue
        if body.get("event") == "moved" and body.get("movedFrom") == address:
            found = frozenset()  # its record went to another name
            continue
        ids, status = body.get("ids"), body.get("status")
        if (
            body.get("address") == address
            and isinstance(ids, dict)
            and ids
            and (
                body.get("event") in ("moved", "adopted")
                or (body.get("event") == "answer" and type(status) is int and 200 <= status < 300)
            )
        ):
            found = frozenset(str(value) for value in ids.values())
    return found


@contextmanager
def reading_history(backend: StateBackend) -> Iterator[HistoryStore]:
    """The history kept beside ``backend``'s state, closed once read."""
    store = history_for(backend)
    try:
        yield store
    finally:
        store.close()


def history_for(backend: StateBackend) -> HistoryStore:
    """The history kept beside ``backend``'s state."""
    if isinstance(backend, LocalBackend):
        return LocalHistory(backend.directory)
    from customs_batch.state.pg_history import PostgresHistory
    from customs_batch.state.postgres import PostgresBackend

    if isinstance(backend, PostgresBackend):
        return PostgresHistory(backend.url, backend.name)
    raise TypeError(f"no history for {type(backend).__name__}")


def read_history_file(path: Path) -> Iterator[StoredEntry]:
    """The entries of a history file as ``state pull --history`` writes it (one stored
    entry a line, oldest first), each line read with a bound; a last line without its
    newline is read too (a file cut short shows as a broken chain, never as less).
    Raises FileRefused for a file that is not read (not regular, a loop of links, too large)."""
    try:
        # Read as every file the tool reads: a named pipe, a device or a loop of links is
        # refused naming what it is (the command said "no such file" of each).
        with open_user_file(path, kind=InputKind.STATE) as file:
            number = streak = 0  # streak: blank lines in a row
            while True:
                line = file.readline(LONGEST_ENTRY + 1)
                if not line:
                    return
                number += 1
                if len(line) > LONGEST_ENTRY:
                    raise StateError(
                        f"{path} line {number}: longer than {LONGEST_ENTRY // (1024 * 1024)} "
                        "MB, which no history entry is",
                        hint="give the file `customs-batch state pull --history` printed",
                    )
                text = line.rstrip(b"\r\n")
                if text.strip():
                    streak = 0
                    yield StoredEntry(f"{path.name} line {number}", text)
                    continue
                streak += 1
                if streak >= _BLANK_STREAK:  # a long run of blank lines: the rest in blocks
                    number += _pass_blank_lines(file)  # (such a file took 12 s per 100 MB)
                    streak = 0
    except OSError as exc:
        raise StateError(f"cannot read {path}: {exc.strerror}") from None


def _stored_lines(data: bytes, name: str) -> Iterator[StoredEntry]:
    """Every whole line of the history file ``data`` (named ``name``) as an entry, but a
    run of blank lines as one: its first, which is no JSON object (``history verify`` names
    it, the other readers pass over it). One entry for each of them took ``history`` 7
    minutes and 1.7 GB over 100 MB of blank lines."""
    for number, line in whole_lines(data):
        yield StoredEntry(f"{name} line {number}", line)


def _pass_blank_lines(file: BinaryIO) -> int:
    """Pass over the whole lines of only spaces ahead of ``file``'s position (a line's
    start), in blocks: how many. ``file`` is left at the start of the line after them."""
    count = 0
    while True:
        at = file.tell()
        block = file.read(_BLANK_BLOCK)
        blank = len(block) - len(block.lstrip())
        end = block.rfind(b"\n", 0, blank) + 1
        count += block.count(b"\n", 0, end)
        file.seek(at + end)
        if end < len(block) or len(block) < _BLANK_BLOCK:
            return count


_BLANK_BLOCK = 1 << 20
"""The bytes :func:`_pass_blank_lines` reads at a time."""
_BLANK_STREAK = 64
"""Blank lines in a row read one by one before the rest of the run is read in blocks (a
blank line between entries costs no block read)."""


@dataclass(frozen=True)
class HistoryPushed:
    """What :func:`push_history` did: the entries added, those the history already held,
    and the last entry's ``seq`` and ``hash`` (as ``history verify`` prints them)."""

    added: int
    kept: int
    last_seq: int
    last_hash: str


def push_history(path: Path, store: HistoryStore) -> HistoryPushed:
    """Add to ``store`` the entries of the history file ``path`` it does not hold yet.

    The file's chain must be whole from its first entry, and ``store`` must hold the same
    chain's first entries (none at all, or what an earlier push of the same file wrote
    before it stopped): anything else is refused before an entry is written. Each entry is
    chained again in the same order, which gives it the same ``seq``, ``prev`` and ``hash``
    (the hash covers the fields, ``seq`` and ``prev``), so the moved history verifies as the
    old one did, to the same last hash. The caller holds the state lock.
    """
    source = verify(read_history_file(path))
    if not source.ok:
        raise StateError(
            f"{path} is not a whole history: broken at {source.broken_at}: {source.reason}",
            hint="give the file `customs-batch state pull --history` printed, whole; a history "
            "whose chain is broken cannot be moved (keep its old files as they are)",
        )
    held = verify(store.entries())
    if not held.ok:
        raise StateError(
            f"this environment's history is broken at {held.broken_at}: {held.reason}; "
            "nothing was added to it",
            hint="run `customs-batch history verify` to see where",
        )
    if held.entries > source.entries:
        raise StateError(
            f"this environment's history holds {held.entries} entries, more than the "
            f"{source.entries} of {path}; nothing was added to it",
            hint="a history is pushed only into an empty one, before apply runs there",
        )
    added = 0
    for stored in read_history_file(path):
        body = stored.body()
        assert body is not None  # verified above
        seq = int(body["seq"])
        if seq < held.last_seq:
            continue
        if seq == held.last_seq:
            if body["hash"] != held.last_hash:
                raise StateError(
                    f"this environment's history holds {held.entries} entries that are not "
                    f"the first ones of {path} (its entry {seq} differs); nothing was added",
                    hint="a history is pushed only into an empty one, before apply runs there",
                )
            continue
        store.append({k: v for k, v in body.items() if k not in ("seq", "prev", "hash")})
        added += 1
    store.sync()
    last = store.last_entry() if source.entries else None
    if source.entries and (last is None or last.get("hash") != source.last_hash):
        raise StateError(
            f"the history pushed from {path} does not end with its last entry "
            f"(hash {source.last_hash})",
            hint="run `customs-batch history verify`, and push the file again",
        )
    return HistoryPushed(added, held.entries, source.last_seq, source.last_hash)
