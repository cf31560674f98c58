"""The newest state this project has read or written in each local state folder, kept in
the load cache's folder, so that a state folder put back whole to an older copy is not
planned from.

A state file put back alone is caught by its history (``history.state_behind_history``),
but a folder put back whole (an old CI cache, an older commit of a repository that keeps
the folder, a copy from a backup) brings its history back with it and holds no trace of the
runs after it: a plan from it would declare again what they created. The *mark* of a folder
is a small file naming the lineage, serial and number of records of the newest state seen
there, and when: ``plan`` and ``apply`` refuse a state of the same lineage with a lower
serial, or no state at all where the mark saw records. ``--allow-empty-state`` takes the
state as it is, and the mark follows it.

A command that writes an older copy (a ``refresh`` or ``state rm`` of it) raises its serial
without bringing back what it lacks: the mark keeps the digest of each state file so written
(its *forks*), and refuses those, whatever their serial, while it takes the newest copy put
back again (the very file it saw, or a later one of the lineage that is none of the forks),
as the refusal's hint says to do.

A mark lives outside the state folder so that putting the folder back does not put it back
too; it is as safe to delete as the cache (the check is then not made until a command has
read the folder again). The embedded sandbox has no marks: its data is in the state folder,
and goes back with it.

A folder's mark is found by the folder's path. So that an older copy put back at another
path (a restore into a new folder, a CI workspace of another name) is caught too, the newest
serial of each state (by lineage, service and environment) is also kept, with the folder it was seen in:
a state of that lineage with a lower serial is behind it wherever it is. Only a state that
moved forward from a state not behind anything moves that mark (an older copy being mended
never does), or one taken as it is (``--allow-empty-state``, ``state push``).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from customs_batch import jsontypes
from customs_batch.state.model import State


@dataclass(frozen=True)
class Mark:
    """The newest state seen in a folder: its lineage, serial, records and when."""

    lineage: str
    serial: int
    records: int
    at: str
    diverged: bool = False
    """Set when a command wrote the folder's state while it was behind this mark (a
    ``refresh`` or ``state rm`` of an older copy): its serial may have caught up, but it
    still lacks what the newer state had, until ``--allow-empty-state`` takes it."""
    short: bool = False
    """Set when ``import`` or ``state adopt`` wrote the folder's state while it was behind
    this mark (catching an older copy up): its serial may have reached the mark's, but it
    is caught up only once it holds as many records as the mark saw."""
    digest: str = ""
    """The SHA-256 of the state file the mark saw ("" when unknown: a mark written before
    digests were kept)."""
    forks: tuple[str, ...] = ()
    """The state files written while behind this mark (``diverged``), each as
    ``SERIAL:SHA-256``: an older copy however far its serial went, never the newest put
    back."""
    folder: str = ""
    """The folder the state was seen in, when it is not the one the mark is checked for
    (the newest serial of a lineage, seen elsewhere); empty for the folder's own."""


# The forks a mark keeps: a few hundred bytes each way, under the cache file's 64 KiB.
_FORKS_KEPT = 100


class StateMarks:
    """The mark of one state folder, read and written through ``read`` and ``write`` (files
    of the cache folder by name; a missing, unreadable or unwritable one is no error)."""

    def __init__(
        self,
        folder: Path,
        *,
        read: Callable[[str], bytes | None],
        write: Callable[[str, bytes], None],
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
        service: str = "",
        environment: str = "",
        fingerprint: Callable[[], str | None] = lambda: None,
    ) -> None:
        # By folder and service: a folder reused by an environment of another service (an
        # old name given to a new environment) starts without the other's mark.
        self.folder = os.path.abspath(folder)
        where = f"{self.folder}\0{service}".encode("utf-8", "surrogateescape")
        self.name = ".state-" + hashlib.blake2b(where, digest_size=16).hexdigest()
        self._service = service
        self._environment = environment
        self._read = read
        self._write = write
        self._now = now
        self._fingerprint = fingerprint

    def mark(self) -> Mark | None:
        """The folder's mark, or None (none yet, or not readable as one)."""
        return self._read_mark(self.name)

    def _lineage_name(self, lineage: str) -> str:
        # By environment too: a state copied into another environment's folder on purpose
        # goes its own way there (refused or not by the rules of a copied state, not these).
        key = f"{lineage}\0{self._service}\0{self._environment}"
        digest = hashlib.blake2b(key.encode("utf-8", "surrogateescape"), digest_size=16)
        return ".lineage-" + digest.hexdigest()

    def _newest_elsewhere(self, state: State) -> Mark | None:
        """The newest serial of ``state``'s lineage seen in another folder than this one
        when it is above ``state``'s, else None."""
        if not state.lineage:
            return None
        newest = self._read_mark(self._lineage_name(state.lineage))
        if newest is None or newest.lineage != state.lineage or newest.serial <= state.serial:
            return None
        return newest

    def _read_mark(self, name: str) -> Mark | None:
        data = self._read(name)
        if not data:
            return None
        try:
            fields = jsontypes.loads(data)
            mark = Mark(
                str(fields["lineage"]),
                int(fields["serial"]),
                int(fields["records"]),
                str(fields["at"]),
                bool(fields.get("diverged", False)),
                bool(fields.get("short", False)),
                str(fields.get("digest", "")),
                tuple(str(fork) for fork in fields.get("forks", [])),
                str(fields.get("folder", "")),
            )
        except (ValueError, KeyError, TypeError):
            return None
        return mark if mark.lineage else None

    def behind(self, state: State) -> Mark | None:
        """The mark ``state`` falls short of, or None: a state of the mark's lineage with a
        lower serial, or, where the mark saw records, no state or another state (a
        ``state.json`` copied from another project: the objects of the one seen here would
        be declared again); else a newer serial of its lineage seen in another folder (this
        one put back from an older copy at another path), whose ``folder`` says where."""
        mark = self.mark()
        if mark is not None:
            if state.lineage == mark.lineage and self._is_fork(state, mark):
                return mark  # a copy written while behind the mark
            if mark.diverged:
                if not self._newest_again(state, mark):
                    return mark
            elif state.lineage == mark.lineage:
                if state.serial < mark.serial:
                    return mark
                if mark.short and len(state.resources) < mark.records:
                    return mark
            elif mark.records:
                return mark
        return self._newest_elsewhere(state)

    def note(
        self, state: State, *, exact: bool = False, behind: bool = False, catching_up: bool = False
    ) -> None:
        """Keep ``state`` as the folder's newest. Without ``exact`` (a state taken as it
        is, ``--allow-empty-state``), a mark of a newer serial of its lineage, or of another
        lineage with records, stays; ``behind``: the state was written while behind the
        mark (a mending command on an older copy), which the mark then keeps saying;
        ``catching_up``: written while behind it by a command that records what exists at
        the service (``import``, ``state adopt``), which the mark takes once the state
        holds as many records as it saw."""
        if not state.lineage:
            return
        mark = self.mark()
        if mark is None and not exact and (behind or catching_up):
            # Behind the newest serial seen elsewhere: this folder's mark says so from now on.
            mark = self._newest_elsewhere(state)
        records = len(state.resources)
        self._note_lineage(state, exact=exact, moving=not (behind or catching_up))
        if mark is not None and not exact:
            if behind or (mark.diverged and not self._newest_again(state, mark)):
                digest = self._fingerprint()
                fork = f"{state.serial}:{digest}"
                forks = mark.forks if digest is None or fork in mark.forks else (*mark.forks, fork)
                if not mark.diverged or forks != mark.forks:
                    diverged = replace(mark, diverged=True, forks=forks[-_FORKS_KEPT:])
                    self._write(self.name, _text(diverged))
                return
            short = state.serial < mark.serial or records < mark.records
            if (catching_up or mark.short) and mark.lineage == state.lineage and short:
                if not mark.short:
                    self._write(self.name, _text(replace(mark, short=True)))
                return
            if mark.lineage != state.lineage and mark.records:
                return  # another state where one with records was: only taken as it is
            if mark.lineage == state.lineage and mark.serial > state.serial:
                return
            if (
                mark.lineage == state.lineage
                and (mark.serial, mark.records) == (state.serial, records)
                and not mark.diverged
                and (mark.digest or self._fingerprint() is None)
            ):
                return  # nothing to write
        # The forks of the lineage stay refused once the newest copy is back; a state taken
        # as it is (``exact``) may be one of them, and starts without.
        forks = mark.forks if mark is not None and mark.lineage == state.lineage else ()
        stamp = self._now().strftime("%Y-%m-%d %H:%M UTC")
        newest = Mark(state.lineage, state.serial, records, stamp, digest=self._fingerprint() or "")
        self._write(self.name, _text(replace(newest, forks=() if exact else forks)))

    def _newest_again(self, state: State, mark: Mark) -> bool:
        """Whether ``state``, read where the mark says an older copy was written, is the
        newest copy put back: the state file the mark saw, or a later one of its lineage
        that is none of the copies written while behind (known only when the mark kept
        their digests)."""
        if state.lineage != mark.lineage or not mark.forks or state.serial < mark.serial:
            return False
        if self._is_fork(state, mark):
            return False
        digest = self._fingerprint()
        if digest is None:
            return False
        return state.serial > mark.serial or digest == mark.digest

    def _is_fork(self, state: State, mark: Mark) -> bool:
        """Whether ``state`` is a state file written while behind ``mark``; the file is
        digested only when a fork has its serial (not on every plan once one was written)."""
        prefix = f"{state.serial}:"
        if not any(fork.startswith(prefix) for fork in mark.forks):
            return False
        return f"{prefix}{self._fingerprint()}" in mark.forks

    def _note_lineage(self, state: State, *, exact: bool, moving: bool) -> None:
        """Keep ``state``'s serial as its lineage's newest, with this folder: when taken as
        it is (``exact``), or when it moved forward past the newest from a state behind
        nothing (``moving``, and not behind this folder's mark)."""
        name = self._lineage_name(state.lineage)
        if not exact:
            if not moving or self.behind(state) is not None:
                return
            newest = self._read_mark(name)
            if newest is not None and newest.serial >= state.serial:
                return
        stamp = self._now().strftime("%Y-%m-%d %H:%M UTC")
        seen = Mark(state.lineage, state.serial, len(state.resources), stamp, folder=self.folder)
        self._write(name, _text(seen))


def _text(mark: Mark) -> bytes:
    fields = {
        "lineage": mark.lineage,
        "serial": mark.serial,
        "records": mark.records,
        "at": mark.at,
        "diverged": mark.diverged,
        "short": mark.short,
        "digest": mark.digest,
        "forks": list(mark.forks),
    }
    if mark.folder:
        fields["folder"] = mark.folder
    return json.dumps(fields).encode("utf-8")
