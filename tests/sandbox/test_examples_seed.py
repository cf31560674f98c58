"""The built-in seed fits examples/: its plain documents apply cleanly against the emulator."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import yaml

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "manifests"


def _plain_documents() -> list[dict[str, Any]]:
    """Documents without templates, rows or references: their spec is the request as is."""
    documents = []
    for path in sorted(EXAMPLES.glob("*.yaml")):
        for document in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            text = str(document)
            if (
                document
                and "template" not in document
                and "forEach" not in document
                and "${" not in text
                and "{{" not in text
            ):
                documents.append(document)
    return documents


def _apply(api: httpx.Client, document: dict[str, Any], n: int) -> httpx.Response:
    kind, spec = document["kind"], dict(document["spec"])
    if kind == "Movement":
        shipment = spec.pop("shipmentId")
        return api.post(
            f"/v1/shipments/{shipment}/movements", json=spec, headers={"Idempotency-Key": f"ex-{n}"}
        )
    if kind == "HawbDeactivation":
        return api.delete(f"/v1/shipments/{spec['shipmentId']}/hawbs/{spec['hawbId']}")
    if kind == "TemplateGroup":
        return api.post("/v1/declaration-templates/groups", json=spec)
    if kind == "ExportCancellation":
        return api.delete(f"/v1/declarations/{spec['declarationId']}")
    raise AssertionError(f"no plain example of kind {kind} was expected")


def test_plain_examples_apply_against_the_builtin_seed(api: httpx.Client) -> None:
    documents = [d for d in _plain_documents() if d["kind"] != "DepartureDeclaration"]
    kinds = {d["kind"] for d in documents}
    assert {"Movement", "HawbDeactivation", "TemplateGroup", "ExportCancellation"} <= kinds
    for n, document in enumerate(documents):
        response = _apply(api, document, n)
        assert response.is_success, f"{document['metadata']['name']}: {response.text}"
