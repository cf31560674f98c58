from __future__ import annotations

from typing import Any

import pytest

from customs_batch.kinds import Address, Kind
from customs_batch.manifest.document import Document, Position, Reference
from customs_batch.planning.references import REF
from customs_batch.state.model import ResourceRecord
from customs_batch.state.records import Records


def doc(kind: Kind, name: str, spec: dict[str, Any], index: int, *deps: str) -> Document:
    """A document as the loader gives it, with its references parsed from the spec."""
    refs = []
    for key, value in spec.items():
        if isinstance(value, str):
            for match in REF.finditer(value):
                target = Address.parse(match.group(1))
                assert target is not None
                refs.append(Reference(target, match.group(2), ("spec", key), match.group(0)))
    return Document(
        kind=kind,
        name=name,
        spec=spec,
        source=Position("m.yaml", index * 10 + 1, 1),
        index=index,
        depends_on=tuple(a for a in (Address.parse(d) for d in deps) if a is not None),
        references=tuple(refs),
    )


def movement(name: str, index: int, hawb: str = "hawb_a1", quantity: int = 1) -> Document:
    spec = {
        "shipmentId": "shp_7Hk2Lm",
        "hawbId": hawb,
        "action": "ISL",
        "quantity": quantity,
        "grossWeightKg": 1.5,
        "customsSupervision": "Y",
        "goodsHandlingCode": "N",
        "partyId": "rpty_p1",
    }
    return doc(Kind.MOVEMENT, name, spec, index)


def parsed_records(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The addresses whose record is parsed from its text from now on."""
    parsed: list[str] = []
    parse = Records._parse

    def counting(records: Records, address: str, value: bytes | str) -> ResourceRecord:
        parsed.append(address)
        return parse(records, address, value)

    monkeypatch.setattr(Records, "_parse", counting)
    return parsed
