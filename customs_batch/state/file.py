"""The state file: deterministic, versioned JSON that reads well in a git diff."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from customs_batch.errors import StateError
from customs_batch.state._atomic import describe, write_atomic
from customs_batch.state.model import ResourceRecord, State
from customs_batch.userfiles import FileRefused, read_user_file

STATE_VERSION = 1

# One function per older version, each turning version N into N + 1. Version 1 is the first.
UPGRADES: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {}


def dumps(state: State) -> bytes:
    """The state as canonical JSON: sorted keys, two-space indent, a final newline."""
    document = {
        "version": STATE_VERSION,
        "lineage": state.lineage,
        "serial": state.serial,
        "resources": {addr: state.resources[addr].to_json() for addr in sorted(state.resources)},
    }
    return (json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def loads(data: bytes, *, source: Path) -> State:
    """Parse a state file; anything malformed is a StateError, never a silent reset."""
    hint = (
        f"restore the previous state from {source.name}.backup or from version control; "
        "never delete the state to get past this: it records what was sent"
    )
    try:
        document = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise StateError(
            f"{source}: the state file is corrupt or truncated ({exc})", hint=hint
        ) from exc
    if not isinstance(document, dict):
        raise StateError(f"{source}: the state file is not a JSON object", hint=hint)
    document = _upgrade(document, source)
    resources = document.get("resources")
    if not isinstance(document.get("lineage"), str) or not isinstance(document.get("serial"), int):
        raise StateError(f"{source}: the state file has no valid lineage and serial", hint=hint)
    if not isinstance(resources, dict):
        raise StateError(f"{source}: the state file has no resources object", hint=hint)
    state = State(lineage=document["lineage"], serial=document["serial"])
    for address, record in resources.items():
        if not isinstance(record, dict):
            raise StateError(f"{source}: the record of {address} is not an object", hint=hint)
        state.resources[address] = ResourceRecord.from_json(address, record)
    return state


def _upgrade(document: dict[str, Any], source: Path) -> dict[str, Any]:
    version = document.get("version")
    if not isinstance(version, int) or version < 1:
        raise StateError(f"{source}: the state file has no valid version")
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


def read_state(path: Path) -> State | None:
    """The state at ``path``, or None when there is no state file yet."""
    try:
        data = read_user_file(path)
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
    return loads(data, source=path)


def write_state(path: Path, state: State) -> None:
    """Write ``state`` atomically (mode 0600), keeping the previous file as ``<name>.backup``."""
    data = dumps(state)
    safe = (
        f"nothing recorded was lost: {path.name} is as it was, and the journal beside it "
        "keeps every outcome not yet in it, to be folded in by the next command that writes "
        "the state (apply, refresh)"
    )
    try:
        previous = path.read_bytes()
    except FileNotFoundError:
        previous = None
    except OSError as exc:
        raise StateError(f"{path}: cannot read the state file ({describe(exc)})") from exc
    if previous is not None:
        write_atomic(path.with_name(path.name + ".backup"), previous, safe=safe)
    write_atomic(path, data, safe=safe)
