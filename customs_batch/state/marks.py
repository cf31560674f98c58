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

A mark lives outside the state folder so that putting the folder back does not put it back
too; it is as safe to delete as the cache (the check is then not made until a command has
read the folder again). The embedded sandbox has no marks: its data is in the state folder,
and goes back with it.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from customs_batch.state.model import State


@dataclass(frozen=True)
class Mark:
    """The newest state seen in a folder: its lineage, serial, records and when."""

    lineage: str
    serial: int
    records: int
    at: str


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
    ) -> None:
        where = os.path.abspath(folder).encode("utf-8", "surrogateescape")
        self.name = ".state-" + hashlib.blake2b(where, digest_size=16).hexdigest()
        self._read = read
        self._write = write
        self._now = now

    def mark(self) -> Mark | None:
        """The folder's mark, or None (none yet, or not readable as one)."""
        data = self._read(self.name)
        if not data:
            return None
        try:
            fields = json.loads(data)
            mark = Mark(
                str(fields["lineage"]),
                int(fields["serial"]),
                int(fields["records"]),
                str(fields["at"]),
            )
        except (ValueError, KeyError, TypeError):
            return None
        return mark if mark.lineage else None

    def behind(self, state: State) -> Mark | None:
        """The mark ``state`` falls short of, or None: a state of the mark's lineage with a
        lower serial, or, where the mark saw records, no state or another state (a
        ``state.json`` copied from another project: the objects of the one seen here would
        be declared again)."""
        mark = self.mark()
        if mark is None:
            return None
        if state.lineage == mark.lineage:
            return mark if state.serial < mark.serial else None
        return mark if mark.records else None

    def note(self, state: State, *, exact: bool = False) -> None:
        """Keep ``state`` as the folder's newest, unless the mark names a newer serial of
        its lineage; with ``exact``, whatever the mark named (a state taken as it is)."""
        if not state.lineage:
            return
        mark = self.mark()
        records = len(state.resources)
        if mark is not None and mark.lineage == state.lineage and not exact:
            if mark.serial > state.serial:
                return
            if mark.serial == state.serial and mark.records == records:
                return  # nothing to write
        fields = {
            "lineage": state.lineage,
            "serial": state.serial,
            "records": records,
            "at": self._now().strftime("%Y-%m-%d %H:%M UTC"),
        }
        self._write(self.name, json.dumps(fields).encode("utf-8"))
