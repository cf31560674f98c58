"""A batch of every kind, an emulator seeded for it, and the audit that counts what went wrong.

The batch has departures, template groups, movements (ISL and USL, on HAWBs and on the
master AWB), party updates of the new departures, HAWB deactivations and export
cancellations; every document submits something distinct, so every object the emulator
holds can be traced back to exactly one document (duplicates and lost outcomes are counted,
not guessed).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tests.e2e import batches
from tests.e2e.conftest import Project, Sandbox
from tests.e2e.recovery import pending_departures

EXTRA_SHIPMENT = "shp_7Hk2Lm"
FIRST_EXPORT = 801


def _hawb_number(serial: int) -> str:
    """An air waybill number with its check digit (the serial modulo 7)."""
    return f"176-{serial:07d}{serial % 7}"


class SeededSandbox(Sandbox):
    """The e2e emulator with spare HAWBs and export declarations to deactivate and cancel,
    started on a fixed port once it has one (so it can be killed and restarted in place)."""

    def __init__(self, directory: Path, spares: int) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        super().__init__(directory)
        seed = yaml.safe_load(self.seed.read_text(encoding="utf-8"))
        shipment = next(s for s in seed["shipments"] if s["publicId"] == EXTRA_SHIPMENT)
        for number in range(1, spares + 1):
            shipment["hawbs"].append(
                {
                    "hawbId": f"hawb_x{number:03d}",
                    "houseAirWaybillNumber": _hawb_number(3_000_000 + number),
                    "packageCount": 1,
                    "grossWeightKg": 1.0,
                }
            )
            seed["declarations"].append(
                {
                    "declarationId": FIRST_EXPORT + number - 1,
                    "shipmentId": 1001,
                    "type": "EXPORT",
                    "status": "ready",
                    "referenceNumber": "REF-1001",
                    "lrn": f"LRN{FIRST_EXPORT + number - 1}",
                    "mrn": "",
                    "createdAt": "2026-01-05T09:00:00.000Z",
                    "exporter": {"name": "Acme Export BV", "eoriNo": "NL123456789"},
                    "consignee": {"name": "Globex Ltd"},
                    "items": [],
                }
            )
        self.seed.write_text(yaml.safe_dump(seed), encoding="utf-8")

    def kill(self) -> None:
        """kill -9 the emulator (its SQLite file stays as the kill left it)."""
        assert self.process is not None
        self.process.kill()
        self.process.wait(timeout=30)
        self.stop()

    def template_groups(self) -> list[dict[str, Any]]:
        """Every template group the emulator holds, but the seed's."""
        found: list[dict[str, Any]] = []
        for page in range(1, 100):  # the list has no count: read until a short page
            listed = self.get("/v1/declaration-templates/groups", itemsPerPage=100, page=page)
            found += listed["result"]
            if len(listed["result"]) < 100:
                break
        return [g for g in found if g["code"] != "DEFAULT"]


@dataclass(frozen=True)
class Mix:
    """How many documents of each kind a batch has."""

    lanes: int = 4
    per_lane: int = 55
    departures: int = 40
    groups: int = 20
    party_updates: int = 10
    deactivations: int = 10
    cancellations: int = 10

    @property
    def total(self) -> int:
        return (
            self.lanes * self.per_lane
            + self.departures
            + self.groups
            + self.party_updates
            + self.deactivations
            + self.cancellations
        )

    @property
    def spares(self) -> int:
        return max(self.deactivations, self.cancellations)


def write_batch(project: Project, mix: Mix) -> None:
    """The manifests of ``mix`` in ``project``."""
    project.write("manifests/movements.yaml", batches.movements(mix.per_lane, mix.lanes))
    project.write("manifests/departures.yaml", batches.departures(mix.departures))
    project.write("manifests/groups.yaml", _dump(_group(n) for n in range(1, mix.groups + 1)))
    project.write(
        "manifests/updates.yaml", _dump(_party_update(n) for n in range(1, mix.party_updates + 1))
    )
    project.write(
        "manifests/hawbs.yaml", _dump(_deactivation(n) for n in range(1, mix.deactivations + 1))
    )
    project.write(
        "manifests/cancellations.yaml",
        _dump(_cancellation(n) for n in range(1, mix.cancellations + 1)),
    )


def _dump(documents: Iterable[dict[str, Any]]) -> str:
    return yaml.safe_dump_all(list(documents), sort_keys=False)


def _document(kind: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "customs-batch/v1",
        "kind": kind,
        "metadata": {"name": name},
        "spec": spec,
    }


def _group(number: int) -> dict[str, Any]:
    template = {
        "procedureType": "H1",
        "declarationType": "IM",
        "additionalDeclarationType": "A",
        "declarationOffice": "NL000396",
        "countryOfDispatch": "DE",
        "countryOfDestination": "NL",
        "incoterm": "DAP",
        "incotermLocation": "Rotterdam",
    }
    spec = {
        "name": f"Reliability group {number}",
        "code": f"REL-{number:03d}",
        "companyId": 1,
        "isDefault": False,
        "DeclarationTemplates": [template],
    }
    return _document("TemplateGroup", f"group-{number:03d}", spec)


def _party_update(number: int) -> dict[str, Any]:
    spec = {
        "declarationId": f"${{ref:DepartureDeclaration/dep-e2e-{number:02d}.declarationId}}",
        "variant": "departure",
        # What the departure leaves out: it owns the party fields it writes.
        "Consignee": {"eoriNo": f"BE{number:010d}"},
    }
    return _document("TransitPartyUpdate", f"update-{number:02d}", spec)


def _deactivation(number: int) -> dict[str, Any]:
    spec = {"shipmentId": EXTRA_SHIPMENT, "hawbId": f"hawb_x{number:03d}"}
    return _document("HawbDeactivation", f"hawb-x{number:03d}", spec)


def _cancellation(number: int) -> dict[str, Any]:
    spec = {"declarationId": FIRST_EXPORT + number - 1}
    return _document("ExportCancellation", f"cancel-{FIRST_EXPORT + number - 1}", spec)


@dataclass
class Audit:
    """What a finished batch left, counted at the emulator and in the state."""

    resources: int = 0
    duplicates: int = 0
    """Objects the emulator holds more than once for one document (extra copies)."""
    lost: int = 0
    """Objects the emulator created that no state record names."""
    phantoms: int = 0
    """Objects the state names that the emulator does not hold."""
    not_applied: int = 0
    """State records not applied once the runs were done."""
    converged: bool = False
    """Whether ``plan --detailed-exitcode`` found nothing left to do."""
    history: HistoryCheck = field(default_factory=lambda: HistoryCheck())
    details: list[str] = field(default_factory=list)


def audit(project: Project, sandbox: SeededSandbox, mix: Mix) -> Audit:
    """Count duplicates, lost outcomes and phantoms of a batch applied to the end."""
    result = Audit(resources=mix.total)
    records = project.state()
    outputs = {address: record["outputs"] for address, record in records.items()}
    result.not_applied = sum(1 for r in records.values() if r["status"] != "applied")
    if result.not_applied:
        result.details.append(f"not applied: {sorted(pending_departures(records))}")

    movements = sandbox.movements()
    movement_copies = Counter(batches.movement_identity(m) for m in movements)
    departures = sandbox.created_transit()
    departure_copies = Counter(d.get("totalWeight") for d in departures.values())
    groups = sandbox.template_groups()
    group_copies = Counter(g["code"] for g in groups)
    for copies in (movement_copies, departure_copies, group_copies):
        extra = {identity: n for identity, n in copies.items() if n > 1}
        result.duplicates += sum(n - 1 for n in extra.values())
        if extra:
            result.details.append(f"duplicates: {extra}")

    recorded = {
        "Movement/": {o.get("movementId") for a, o in outputs.items() if a.startswith("Movement/")},
        "DepartureDeclaration/": {
            o.get("declarationId") for a, o in outputs.items() if a.startswith("Departure")
        },
        "TemplateGroup/": {o.get("id") for a, o in outputs.items() if a.startswith("Template")},
    }
    held = {
        "Movement/": {m["movementId"] for m in movements},
        "DepartureDeclaration/": set(departures),
        "TemplateGroup/": {g["id"] for g in groups},
    }
    for kind, ids in held.items():
        lost = ids - recorded[kind]
        phantoms = recorded[kind] - ids - {None}
        result.lost += len(lost)
        result.phantoms += len(phantoms)
        if lost or phantoms:
            result.details.append(f"{kind} lost {sorted(lost)} phantoms {sorted(phantoms)}")
    wanted = mix.lanes * mix.per_lane + mix.departures + mix.groups
    if len(movements) + len(departures) + len(groups) - result.duplicates != wanted:
        result.details.append(
            f"created {len(movements)} movements, {len(departures)} departures, "
            f"{len(groups)} groups; wanted {wanted} in all"
        )
    result.history = check_history(project, records, held)
    result.details += result.history.gaps
    done = project.run("plan", "--detailed-exitcode")
    result.converged = done.returncode == 0
    if not result.converged:
        result.details.append("plan after the runs:\n" + done.stdout[-3000:] + done.stderr[-2000:])
    return result


ID_OUTPUT = {
    "Movement/": "movementId",
    "DepartureDeclaration/": "declarationId",
    "TemplateGroup/": "id",
}
"""The output holding the ID the service gave an object of each kind it creates."""
WRITES = ("POST ", "PUT ", "PATCH ", "DELETE ")
"""The methods of the requests that change something at the service."""


@dataclass
class HistoryCheck:
    """What the history (``history verify`` and ``history --format json``) holds once the
    runs are done, checked against every object the emulator holds."""

    verified: bool = False
    entries: int = 0
    """History rows (a request with its answer, or a record-only operation)."""
    write_exchanges: int = 0
    """Requests that change something, as the history's answers list them (retries too)."""
    objects: int = 0
    """Objects the emulator created and the state names (movements, departures, groups)."""
    named: int = 0
    """Of those, with a history answer naming their address and the ID the service gave."""
    answer_lost: int = 0
    """Of those, with only their request in the history: its answer never reached apply (a
    kill, a dropped connection) and the ID was recorded later (by ``state adopt``, which
    writes no history entry: docs/state.md, "History")."""
    operations: int = 0
    """Deactivations, cancellations and party updates applied: each has its request."""
    operations_named: int = 0
    """Of those, with a successful answer in the history."""
    operations_answer_lost: int = 0
    """Of those, with only requests whose answer never reached apply (a later run read the
    outcome from the service)."""
    gaps: list[str] = field(default_factory=list)


def history_figures(found: HistoryCheck) -> dict[str, Any]:
    """The figures of ``found`` for the report (the gaps fail the test instead)."""
    return {k: v for k, v in asdict(found).items() if k != "gaps"}


def check_history(
    project: Project, records: dict[str, dict[str, Any]], held: dict[str, set[Any]]
) -> HistoryCheck:
    """``history verify`` passes, and every object the emulator holds has in the history
    the request that created it under its address, with the answer naming its ID unless
    that answer was lost; every other operation applied has its answer."""
    found = HistoryCheck()
    verified = project.run("history", "verify")
    found.verified = verified.returncode == 0
    if not found.verified:
        found.gaps.append(f"history verify: {verified.stdout[-1000:]}{verified.stderr[-2000:]}")
    shown = project.run("history", "--format", "json")
    assert shown.returncode == 0, shown.stderr
    rows = json.loads(shown.stdout)["entries"]
    found.entries = len(rows)
    found.write_exchanges = sum(
        1
        for row in rows
        for exchange in row.get("requests") or ()
        if f"{exchange.get('method')} ".startswith(WRITES)
    )
    by_address: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_address.setdefault(row["address"], []).append(row)
    for address, record in records.items():
        kind = address.split("/", 1)[0] + "/"
        kept = by_address.get(address, [])
        if kind in held:
            given = record["outputs"].get(ID_OUTPUT[kind])
            if given is None or given not in held[kind]:
                continue  # not an object the emulator holds (counted as a phantom)
            found.objects += 1
            if any((row.get("ids") or {}).get(ID_OUTPUT[kind]) == given for row in kept):
                found.named += 1
            elif any(row["event"] == "request" for row in kept):
                found.answer_lost += 1
            else:
                found.gaps.append(f"{address} ({given}): no history entry")
        elif record["status"] == "applied":
            found.operations += 1
            if any(_succeeded(row) for row in kept):
                found.operations_named += 1
            elif any(row["event"] == "request" for row in kept):
                found.operations_answer_lost += 1
            else:
                found.gaps.append(f"{address}: no history entry")
    return found


def _succeeded(row: dict[str, Any]) -> bool:
    status = row.get("status")
    return isinstance(status, int) and 200 <= status < 300
