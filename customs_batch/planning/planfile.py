"""Saved plans: ``plan -out FILE`` writes one, ``apply FILE`` applies exactly it.

A plan file records the state's lineage and serial and a digest of the inputs, so an apply
can refuse a plan made against a state that has moved since, and a seal over its whole
content, so that one edited since it was written is refused (a plain digest, no key: it
catches accidental edits, not tampering; README says so). It holds request bodies, never
an API key, and their sensitive values (a guarantee's access code) only as keyed digests:
``apply`` reads those values again from the manifests the plan names, and refuses the plan
when one of them is not the value the plan was made with (:func:`restore_sensitive`).
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from customs_batch import jsontypes
from customs_batch.errors import CustomsBatchError, UsageError
from customs_batch.findings import Severity
from customs_batch.formats import VERSION_KEY
from customs_batch.jsontypes import JSON, JSONObject
from customs_batch.kinds import Address
from customs_batch.manifest.document import Document
from customs_batch.output_file import write_named_file
from customs_batch.planning.model import Action, Operation, Plan, PlannedChange
from customs_batch.sensitive import (
    Sealer,
    digest_key_id,
    has_sensitive,
    is_digest,
    masked,
    replaced,
    sensitive_paths,
    value_at,
    values_at,
)
from customs_batch.userfiles import InputKind, open_user_file

if TYPE_CHECKING:
    from customs_batch.state.model import State

PLAN_FORMAT = "customs-batch-plan"
PLAN_VERSION = 1
"""Under ``formatVersion``, as in every JSON output; plan files of version 1 written before
that named the key ``version`` and are read as well."""


class PlanFileError(CustomsBatchError):
    """A plan file that cannot be read or no longer applies."""


def digest_documents(
    documents: Sequence[Document], sealer: Sealer | None = None, lineage: str = ""
) -> str:
    """A digest of everything in the documents that decides what is sent, each sensitive
    value (a guarantee's access code) taken as its keyed digest (``sealer``, for the state
    of ``lineage``), or as ``(sensitive)`` without one: a plain hash over a four-digit code
    and the rest of the documents (which ``render --format json`` prints) gives the code
    away to whoever tries the 10,000 codes."""
    # The bytes of one JSON array of [address, spec, dependsOn] entries, hashed entry by
    # entry: the same digest as dumping the whole array at once, without 100,000 documents'
    # worth of JSON text in memory at the same time.
    digest = hashlib.sha256(b"[")
    for number, doc in enumerate(sorted(documents, key=lambda d: str(d.address))):
        spec: JSONObject = doc.spec
        if has_sensitive(doc.kind):
            spec = (
                masked(doc.kind, spec)
                if sealer is None
                else sealer.seal(doc.kind, spec, lineage, stored=False)
            )
        entry = [str(doc.address), spec, [str(a) for a in doc.depends_on]]
        text = json.dumps(entry, sort_keys=True, separators=(",", ":"), default=str)
        digest.update(b"," + text.encode() if number else text.encode())
    digest.update(b"]")
    return "sha256:" + digest.hexdigest()


def write_plan(
    path: Path,
    plan: Plan,
    *,
    environment: str,
    sealer: Sealer,
    manifests: Sequence[str] = (),
) -> None:
    """Save ``plan`` for ``environment`` as deterministic JSON, its sensitive values as
    digests (``sealer``, keyed for the plan's lineage); ``manifests`` are the paths the plan
    was made from, to read those values again at apply."""
    body = {
        "format": PLAN_FORMAT,
        VERSION_KEY: PLAN_VERSION,
        "environment": environment,
        "lineage": plan.lineage,
        "serial": plan.serial,
        "inputsDigest": plan.inputs_digest,
        "journal": plan.journal,
        "stateAt": plan.state_at,
        "manifests": list(manifests),
        "options": _options_to_json(plan),
        "changes": [_change_to_json(change, sealer, plan.lineage) for change in plan.changes],
    }
    body[_SEAL] = _seal(body)
    # Not sorted: "format" stays first, so a plan file is recognised from its first bytes.
    write_named_file(path, (json.dumps(body, indent=2) + "\n").encode(), what="plan")


_MRN = "mrnCheckDigit"
"""The key, under ``options``, of the ``--mrn-check-digit`` level a plan was made with."""
MRN_CHECK_WORDS: Mapping[str, Severity | None] = {
    "error": Severity.ERROR,
    "warning": Severity.WARNING,
    "off": None,
}
"""The levels of ``--mrn-check-digit``, by the word that names them (on the command line and
in a plan file)."""


def mrn_check_word(level: Severity | None) -> str:
    """The word of an ``--mrn-check-digit`` level (``off`` for None)."""
    return next(word for word, known in MRN_CHECK_WORDS.items() if known == level)


_CHOSEN = ("labels", "targets", "exclude")
"""The keys, under ``options``, of the ``-l``, ``--target`` and ``--exclude`` a plan was made
with (left out when not given)."""


def _options_to_json(plan: Plan) -> dict[str, JSON]:
    """A saved plan's ``options``: what ``apply`` reads its manifests again with."""
    options: dict[str, JSON] = {}
    if plan.mrn_check_digit is not None:
        options[_MRN] = plan.mrn_check_digit
    for key, given in zip(_CHOSEN, (plan.labels, plan.targets, plan.excluded), strict=True):
        if given:
            options[key] = list(given)
    return options


def _words(options: Mapping[str, JSON], key: str) -> tuple[str, ...]:
    """The strings of ``options[key]`` (none when absent); anything else is damage."""
    given = options.get(key) or []
    if not isinstance(given, list) or not all(isinstance(word, str) for word in given):
        raise ValueError(f"options.{key} is {given!r}")
    return tuple(str(word) for word in given)


_SEAL = "seal"
"""The key of a plan file's digest of everything else in it (:func:`_seal`)."""


def _seal(body: Mapping[str, JSON]) -> str:
    """A digest of a plan file's content but its seal: a file edited since ``plan -out``
    wrote it (an action changed by hand, a change added or dropped, a merge) no longer
    matches, and is refused rather than applied."""
    content = {key: value for key, value in body.items() if key != _SEAL}
    text = json.dumps(content, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def read_plan(path: Path, *, environment: str) -> Plan:
    """Load a saved plan; a plan for another environment or of another format is refused."""
    try:
        body = jsontypes.loads(path.read_bytes())
    except FileNotFoundError:
        raise PlanFileError(f"{path}: no such plan file") from None
    except (OSError, ValueError) as exc:
        raise PlanFileError(
            f"{path}: not a readable plan file ({exc})",
            hint="make a new one with `customs-batch plan -out FILE`",
        ) from exc
    if not isinstance(body, dict) or body.get("format") != PLAN_FORMAT:
        raise PlanFileError(f"{path}: not a customs-batch plan file")
    version = body.get(VERSION_KEY, body.get("version"))
    if version != PLAN_VERSION:
        raise PlanFileError(
            # As JSON: a version "1" (a string) said "version 1 is not 1".
            f"{path}: plan format version {json.dumps(version)} is not {PLAN_VERSION}",
            hint="make the plan again with this version of customs-batch",
        )
    if body.get(_SEAL) != _seal(body):
        why = (
            f"its {_SEAL} does not match its content"
            if _SEAL in body
            else f"it has no {_SEAL}: edited, or written by a version before plans had one"
        )
        raise PlanFileError(
            f"{path}: the plan file was changed since `customs-batch plan -out` wrote it "
            f"({why}): a saved plan is applied only as it was made and reviewed",
            hint="make a new one with `customs-batch plan -out FILE`",
        )
    if body.get("environment") != environment:
        raise PlanFileError(
            f"{path}: the plan was made for environment {body.get('environment')!r}, "
            f"not {environment!r}",
            hint=_made_for_hint(path, body.get("environment")),
        )
    try:
        changes = tuple(_change_from_json(item) for item in body["changes"])
        manifests = tuple(str(item) for item in body.get("manifests") or ())
        options = body.get("options") or {}
        if not isinstance(options, dict):
            raise TypeError(f"options is {type(options).__name__}, not an object")
        mrn_check_digit = options.get(_MRN)
        if mrn_check_digit is not None and mrn_check_digit not in MRN_CHECK_WORDS:
            raise ValueError(f"options.{_MRN} is {mrn_check_digit!r}")
        chosen = {key: _words(options, key) for key in _CHOSEN}
        return Plan(
            changes,
            str(body["lineage"]),
            int(body["serial"]),
            str(body["inputsDigest"]),
            manifests=manifests,
            journal=str(body.get("journal") or ""),
            state_at=str(body.get("stateAt") or ""),
            mrn_check_digit=None if mrn_check_digit is None else str(mrn_check_digit),
            labels=chosen["labels"],
            targets=chosen["targets"],
            excluded=chosen["exclude"],
        )
    except (KeyError, TypeError, ValueError, OverflowError) as exc:
        # OverflowError: a serial of 1e400, read as infinity, was "internal error".
        raise PlanFileError(
            f"{path}: the plan file is damaged ({exc})",
            hint="make a new one with `customs-batch plan -out FILE`",
        ) from exc


def check_current(plan: Plan, state: State, *, source: Path, state_at: str = "") -> None:
    """Refuse a plan made against another state, or against this state before it changed.

    A plan made while a journal was not yet folded is current only when the state was
    opened by folding that very journal (a run that had stopped): when the journal was
    still being written, the run that wrote it folded more than the plan saw, into a state
    of the same serial.
    """
    lineage, serial = state.lineage, state.serial
    if plan.lineage and lineage and plan.lineage != lineage:
        raise PlanFileError(
            f"{source}: the plan was made against another state (lineage {plan.lineage}, "
            f"this environment's is {lineage})",
            hint="make a new plan with `customs-batch plan -out FILE`",
        )
    if (plan.lineage, plan.serial) != (lineage, serial):
        raise PlanFileError(
            f"{source}: the plan is stale: the state changed since it was made "
            f"(serial {plan.serial} then, {serial} now)",
            hint="make a new plan with `customs-batch plan -out FILE` and review it",
        )
    if not plan.lineage and plan.state_at and state_at and plan.state_at != state_at:
        raise PlanFileError(
            f"{source}: the plan was made against the empty state at {plan.state_at}, not "
            f"this one ({state_at}): applied here, what it creates would be declared again "
            "when the plan is applied where it was made",
            hint="make a new plan here with `customs-batch plan -out FILE`",
        )
    if plan.journal != state.journal:
        raise PlanFileError(
            f"{source}: the plan is stale: it was made while the journal of another run "
            "was not yet folded into the state (that run was still applying, or had "
            "stopped), and the state was written since",
            hint="make a new plan with `customs-batch plan -out FILE` and review it",
        )


def check_inputs(plan: Plan, digest: str, *, source: Path, keyed: bool = False) -> None:
    """Refuse a saved plan whose manifests no longer give the documents it was made from:
    ``digest`` is theirs now (:func:`digest_documents`, over the documents the plan's
    selection chooses, as rendered from their templates and spreadsheets). Applied, the plan
    would send what the manifests said then, not what they say now: a departure corrected
    since would be declared as it was. ``keyed``: the documents hold access codes, digested
    with the API key, so a key changed since gives another digest too."""
    if not plan.inputs_digest or digest == plan.inputs_digest:
        return
    where_from = ", ".join(plan.manifests) or "."
    key = (
        " (or the API key changed: their access codes are compared by digests keyed by it)"
        if keyed
        else ""
    )
    raise PlanFileError(
        f"{source}: the manifests ({where_from}), with their templates and spreadsheets, "
        f"changed since the plan was made{key}: applied, it would send what they said then, "
        "not what they say now",
        hint="run apply from the folder the plan was made in; or make a new plan with "
        "`customs-batch plan -out FILE` and review it",
    )


def needs_manifests(plan: Plan) -> bool:
    """Whether applying ``plan`` sends a value the plan file holds only as a digest."""
    return any(_digested(change) for change in plan.changes)


def _digested(change: PlannedChange) -> list[tuple[tuple[str | int, ...], str]]:
    """The sensitive values of a change that sends, where the plan holds a digest."""
    if not change.requests:
        return []
    return [
        (where, value)
        for path in sensitive_paths(change.address.kind)
        for where, value in values_at(change.spec, path)
        if isinstance(value, str) and is_digest(value)
    ]


def restore_sensitive(
    plan: Plan,
    specs: Mapping[str, JSONObject],
    sealer: Sealer,
    *,
    source: Path,
    environment: str = "local",
) -> Plan:
    """``plan`` with each digest of a sensitive value it sends replaced by the value in
    ``specs`` (the manifests' documents by address), once that value's digest is the one
    the plan holds; a value that is gone or differs refuses the plan, and so does a digest
    made under another API key than ``sealer``'s (``environment``'s key now: rotated or
    wrong), which no value can be checked against."""
    changes: list[PlannedChange] = []
    where_from = ", ".join(plan.manifests) or "."
    for change in plan.changes:
        digested = _digested(change)
        if not digested:
            changes.append(change)
            continue
        spec = specs.get(str(change.address))
        if spec is None:
            raise PlanFileError(
                f"{source}: the plan sends {change.address}, whose sensitive values it holds "
                f"only as digests, and the manifests ({where_from}) no longer hold "
                f"{change.address}",
                hint="run apply from the folder the plan was made in, with the same manifests; "
                "or make a new plan with `customs-batch plan -out FILE`",
            )
        restored: dict[tuple[str | int, ...], JSON] = {}
        for where, digest in digested:
            if digest_key_id(digest) != sealer.key_id(plan.lineage):
                raise PlanFileError(
                    f"{source}: the API key environment {environment!r} uses now is not the "
                    f"one the plan was made with, so the value it holds only as a digest "
                    f"({change.address} {_where_text(where)}) cannot be checked against the "
                    "manifests",
                    hint="if the key was rotated, make a new plan with the current key "
                    f"(`customs-batch plan -out FILE --env {environment}`) and review it; "
                    "otherwise the key is wrong: `customs-batch env check --env "
                    f"{environment}` checks it with the service",
                )
            value = value_at(spec, where)
            if value is None or sealer.digest(value, plan.lineage) != digest:
                raise PlanFileError(
                    f"{source}: {change.address} {_where_text(where)} in the manifests "
                    f"({where_from}) is not the value the plan was made with: the manifests "
                    "changed since",
                    hint="make a new plan with `customs-batch plan -out FILE` and review it",
                )
            restored[where] = value
        changes.append(replace(change, spec=replaced(change.spec, restored)))
    return replace(plan, changes=tuple(changes))


def _made_for_hint(path: Path, made_for: object) -> str:
    """How to apply a plan made for another environment: with its --env, spelled out when
    the plan names one a shell can be given."""
    if not isinstance(made_for, str) or not made_for:
        return "apply it with the --env it was made for"
    command = shlex.join(["customs-batch", "apply", str(path), "--env", made_for])
    return f"apply it with the --env it was made for: `{command}`"


def _where_text(where: tuple[str | int, ...]) -> str:
    out = ""
    for step in where:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else step)
    return out


def _change_to_json(change: PlannedChange, sealer: Sealer, lineage: str) -> dict[str, JSON]:
    return {
        "address": str(change.address),
        "action": change.action.value,
        "operation": change.operation.value,
        "reason": change.reason,
        "spec": sealer.seal(change.address.kind, change.spec, lineage, stored=False),
        "unknown": [list(path) for path in change.unknown],
        "changed": list(change.changed),
        "origin": change.origin,
        "dependsOn": [str(a) for a in change.depends_on],
        "idempotencyKey": change.idempotency_key,
        "identity": list(change.identity),
        "movedFrom": str(change.moved_from) if change.moved_from else None,
        **({"listsFirst": True} if change.lists_first else {}),
    }


def _change_from_json(item: JSONObject) -> PlannedChange:
    key = item.get("idempotencyKey")
    if key is not None and not isinstance(key, str):
        # An integer here was sent with the other changes until the request was built:
        # "failed HawbDeactivation/...: AttributeError", the changes before it applied.
        raise TypeError(f"idempotencyKey of {item.get('address')} is {json.dumps(key)}")
    unknown = [tuple(path) for path in item.get("unknown", [])]
    if any(not isinstance(part, str | int) for path in unknown for part in path):
        raise TypeError(f"unknown of {item.get('address')} holds a path that is not one")
    changed = tuple(item.get("changed", []))
    if any(not isinstance(word, str) for word in changed):
        raise TypeError(f"changed of {item.get('address')} holds a value that is not text")
    return PlannedChange(
        address=_address(item["address"]),
        action=Action(item["action"]),
        operation=Operation(item["operation"]),
        reason=str(item.get("reason", "")),
        spec=dict(item.get("spec") or {}),
        unknown=tuple(unknown),
        changed=changed,
        origin=str(item.get("origin", "")),
        depends_on=tuple(_address(a) for a in item.get("dependsOn", [])),
        idempotency_key=key,
        identity=tuple(str(word) for word in item.get("identity") or ()),
        moved_from=_address(item["movedFrom"]) if item.get("movedFrom") else None,
        lists_first=item.get("listsFirst") is True,
    )


def _address(text: JSON) -> Address:
    address = Address.parse(text) if isinstance(text, str) else None
    if address is None:
        shown = repr(text) if isinstance(text, str) else json.dumps(text)
        raise ValueError(f"{shown} is not an address")
    return address


def is_plan_file(path: Path) -> bool:
    """Whether ``path`` is a saved plan (rather than a manifest or a folder of them)."""
    return _is_saved_plan(_head(path))


def _is_saved_plan(head: bytes | None) -> bool:
    return head is not None and head.lstrip().startswith(b"{") and PLAN_FORMAT.encode() in head


def saved_plan_among(paths: Sequence[Path]) -> Path | None:
    """The saved plan ``apply`` is given (None: ``paths`` are manifests), known by content.

    A file that is neither a saved plan nor a manifest is refused, a plan rendered for
    reading (``plan -o``) included, rather than read as manifests; so is a saved plan named
    with other paths. A manifest is a file with a top-level ``apiVersion`` or ``kind`` (or
    any ``.yaml``/``.yml`` file that is not a rendered plan, so that a broken manifest gets
    its findings).
    """
    heads = [(path, _head(path)) for path in paths]
    plans = [path for path, head in heads if _is_saved_plan(head)]
    if plans and len(paths) > 1:
        raise UsageError(
            f"{plans[0]} is a saved plan, and a saved plan is applied alone",
            hint=f"`customs-batch apply {plans[0]}` applies it; to apply manifests, name "
            "only manifests",
        )
    if plans:
        return plans[0]
    for path, head in heads:
        if head is None:
            continue  # a folder, or a file the manifest loader refuses with its reason
        rendered = _rendered_as(head)
        if rendered is None and (
            _MANIFEST_KEY.search(head) or path.suffix.lower() in (".yaml", ".yml")
        ):
            continue
        what = f" (it is a plan rendered as {rendered}, for reading)" if rendered else ""
        raise UsageError(
            f"{path}: not a saved plan{what}; write one with `customs-batch plan -out FILE`",
            hint="`plan -o FILE` writes a plan for people to read; `plan -out FILE` saves one "
            "that `customs-batch apply FILE` applies. To apply manifests, name the manifest "
            "files or their folder",
        )
    return None


_MANIFEST_KEY = re.compile(rb'^(?:apiVersion|kind)[ \t]*:|"(?:apiVersion|kind)"[ \t]*:', re.M)
"""A manifest's top-level key: block YAML starts it at the line's start; JSON quotes it."""

_RENDERED = (
    (b"Plan for environment ", "text"),
    (b"<!-- customs-batch plan -->", "markdown"),
    (b"flowchart ", "mermaid"),
    (b"digraph plan {", "dot"),
)


def _rendered_as(head: bytes) -> str | None:
    """The format of a plan ``plan --format NAME`` rendered, when ``head`` starts one."""
    start = head.lstrip()
    for signature, name in _RENDERED:
        if start.startswith(signature):
            return name
    if start.startswith(b"{") and re.match(rb'\{\s*"changes"\s*:', start):
        return "json"
    if start.startswith(b"<!DOCTYPE html>") and b"<title>customs-batch plan for " in start:
        return "html"
    return None


def _head(path: Path) -> bytes | None:
    """The first bytes of ``path`` when it is a regular file that can be read, else None."""
    try:
        with open_user_file(path, limit=_HEAD_LIMIT, raise_hint="", kind=InputKind.PLAN) as handle:
            head = handle.read(_HEAD)
    except (OSError, CustomsBatchError):
        return None
    # An editor that re-saves a file may put a UTF-8 byte order mark first: the content is
    # the same (reading the plan decodes it away; its seal still covers every value).
    return head.removeprefix(_BOM)


_BOM = b"\xef\xbb\xbf"


_HEAD = 64 * 1024
_HEAD_LIMIT = 1 << 62  # only the head is read: a file of any size is looked at
