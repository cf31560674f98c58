"""What the other states of the same service declare: a creation planned here is compared
with each of their records by identity, and a record of 100,000 never used is not parsed
for it (its identity is read from its text)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from customs_batch.execution.elsewhere import ObjectsHeldElsewhere
from customs_batch.jsontypes import JSON
from customs_batch.kinds import Kind
from customs_batch.kinds.registry import model_of
from customs_batch.state import RecordStatus, ResourceRecord, State
from customs_batch.state.backend import OtherState
from customs_batch.state.records import Records

SERVICE = "http://customs.shared.test"


def _group(
    code: str, status: RecordStatus = RecordStatus.APPLIED, **extra: object
) -> dict[str, JSON]:
    spec = {"name": code.title(), "code": code, "companyId": 1, "DeclarationTemplates": []}
    identity = model_of(Kind.TEMPLATE_GROUP).identity
    assert identity is not None
    record = ResourceRecord(
        f"TemplateGroup/{code.lower()}",
        status,
        "create",
        spec,
        outputs={"id": 1} if status is not RecordStatus.FAILED else {},
        identity=identity(spec),
    )
    data = record.to_json()
    data.update(extra)
    return data


def _other(records: dict[str, dict[str, JSON]], *, as_rows: bool) -> OtherState:
    """Another state of the service whose records are still their text: a database's rows,
    or a state file's entries."""
    if as_rows:
        resources = Records.from_texts(
            {address: json.dumps(data) for address, data in records.items()}, "the state de"
        )
    else:
        resources = Records.from_entries(
            {
                address: f"{json.dumps(address)}: {json.dumps(data)}".encode()
                for address, data in records.items()
            },
            Path("de/state.json"),
        )
    return OtherState("the state of environment 'de'", SERVICE, State("l", 1, resources), "", "de")


@pytest.mark.parametrize("as_rows", [True, False])
def test_a_creation_meets_the_record_that_declares_it_and_parses_no_other(as_rows: bool) -> None:
    records = {f"TemplateGroup/g{n}": _group(f"G{n}") for n in range(50)}
    other = _other(records, as_rows=as_rows)
    found = ObjectsHeldElsewhere(lambda: [other]).declaring(
        Kind.TEMPLATE_GROUP, ("companyId=1", "code= G7 ")
    )
    assert found is not None
    held, record = found
    assert held.address == "TemplateGroup/g7"
    assert record.spec["code"] == "G7"
    resources = other.state.resources
    assert isinstance(resources, Records)
    unparsed = [address for address in records if resources.text_of(address) is not None]
    assert unparsed == [address for address in records if address != "TemplateGroup/g7"]


@pytest.mark.parametrize("as_rows", [True, False])
def test_a_tombstone_or_a_refused_creation_declares_nothing(as_rows: bool) -> None:
    records = {
        "TemplateGroup/a": _group("G", RecordStatus.FORGOTTEN),
        "TemplateGroup/b": _group("G", RecordStatus.FAILED),
        "TemplateGroup/c": _group("G"),
        "TemplateGroup/d": _group("G"),
        "TemplateGroup/e": _group("H", RecordStatus.FORGOTTEN),
    }
    others = ObjectsHeldElsewhere(lambda: [_other(records, as_rows=as_rows)])
    found = others.declaring(Kind.TEMPLATE_GROUP, ("companyId=1", "code=G"))
    assert found is not None
    assert found[0].address == "TemplateGroup/c"  # the first live one, in address order
    assert others.declaring(Kind.TEMPLATE_GROUP, ("companyId=1", "code=H")) is None


def test_a_record_that_kept_no_identity_is_compared_by_its_request() -> None:
    # Imported, or written before identities were kept: its identity is its spec's.
    data = _group("OLD")
    del data["identity"]
    others = ObjectsHeldElsewhere(lambda: [_other({"TemplateGroup/old": data}, as_rows=True)])
    found = others.declaring(Kind.TEMPLATE_GROUP, ("companyId=1", "code=OLD"))
    assert found is not None
    assert found[0].address == "TemplateGroup/old"
