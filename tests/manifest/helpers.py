"""Small helpers for the manifest tests: write a manifest, load it, pick findings."""

from __future__ import annotations

from pathlib import Path

from customs_batch.findings import Finding
from customs_batch.manifest import LoadResult, load_file

ENVELOPE = "apiVersion: customs-batch/v1\n"


def write(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` (creating folders) and return the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def load_text(text: str, name: str = "m.yaml") -> LoadResult:
    """Load ``text`` written to ``name`` in the current (temporary) folder."""
    return load_file(write(Path(name), text))


def rules(result: LoadResult) -> list[str]:
    """The rule ids of the findings, in order."""
    return [finding.rule for finding in result.findings]


def only(result: LoadResult, rule: str) -> Finding:
    """The single finding with ``rule``."""
    found = [finding for finding in result.findings if finding.rule == rule]
    assert len(found) == 1, result.findings
    return found[0]


def movement(spec: str, name: str = "mov-1", extra: str = "") -> str:
    """A Movement document with ``spec`` (indented YAML lines under ``spec:``)."""
    return f"{ENVELOPE}kind: Movement\nmetadata:\n  name: {name}\n{extra}spec:\n{spec}"


def cycle_manifest(size: int, through: str) -> str:
    """``size`` export cancellations, each waiting for the next and the last for the first,
    ``through`` a ``dependsOn`` entry or a ``${ref:}`` (``"dependsOn"`` or ``"reference"``)."""
    documents = []
    for i in range(size):
        following = f"ExportCancellation/c{(i + 1) % size}"
        if through == "dependsOn":
            metadata, number = f"  name: c{i}\n  dependsOn: [{following}]\n", str(501 + i)
        else:
            metadata, number = f"  name: c{i}\n", "${ref:" + following + ".declarationId}"
        documents.append(
            f"{ENVELOPE}kind: ExportCancellation\nmetadata:\n{metadata}"
            f"spec:\n  declarationId: {number}\n"
        )
    return "---\n".join(documents)


SHEET_HEADERS = ["Shipment", "HAWB", "Action", "Packages", "Gross weight", "Party"]
"""Columns A to F of the movement exports the forEach tests build."""
GOOD_ROW: list[object] = ["shp_7Hk2Lm", "hawb_a2", "ISL", 4, 40.5, "rpty_p1"]


def movement_sheet_manifest(file: str, extra: str = "") -> str:
    """A forEach Movement manifest over an export with :data:`SHEET_HEADERS`."""
    return (
        f"{ENVELOPE}kind: Movement\n"
        f"forEach: {{file: {file}{extra}}}\n"
        "metadata:\n"
        '  name: "mov-{{ row.HAWB }}-{{ row_number }}"\n'
        "spec:\n"
        '  shipmentId: "{{ row.Shipment }}"\n'
        '  hawbId: "{{ row.HAWB }}"\n'
        '  action: "{{ row.Action }}"\n'
        '  quantity: "{{ row.Packages }}"\n'
        "  grossWeightKg: \"{{ row['Gross weight'] }}\"\n"
        "  customsSupervision: Y\n"
        "  goodsHandlingCode: N\n"
        '  partyId: "{{ row.Party }}"\n'
    )


def write_xlsx(path: Path, rows: list[list[object]], sheet: str = "Movements") -> Path:
    """An XLSX file (written by openpyxl) with :data:`SHEET_HEADERS` and ``rows``."""
    import openpyxl

    book = openpyxl.Workbook()
    active = book.active
    assert active is not None
    active.title = sheet
    active.append(SHEET_HEADERS)
    for row in rows:
        active.append(row)
    path.parent.mkdir(parents=True, exist_ok=True)
    book.save(path)
    return path


def rewrite_cells(path: Path, cells: dict[str, str]) -> Path:
    """``path`` (a workbook openpyxl wrote) with each cell of ``cells`` (``"B2"``) replaced
    by the XML given, e.g. an Excel error ``<c r="B2" t="e"><v>#N/A</v></c>`` or a formula
    with no saved result ``<c r="B2"><f>A1</f></c>``; a cell openpyxl did not write is
    added at the end of its row."""
    import re
    import zipfile

    with zipfile.ZipFile(path) as archive:
        parts = {name: archive.read(name) for name in archive.namelist()}
    xml = parts["xl/worksheets/sheet1.xml"].decode()
    for reference, new in cells.items():
        xml, count = re.subn(rf'<c r="{reference}"(?:[^>]*/>|[^>]*>.*?</c>)', new, xml)
        if not count:
            row = re.sub("[A-Z]+", "", reference)
            xml, count = re.subn(rf'(<row r="{row}"[^>]*>.*?)(</row>)', rf"\g<1>{new}\g<2>", xml)
        assert count == 1, reference
    parts["xl/worksheets/sheet1.xml"] = xml.encode()
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in parts.items():
            archive.writestr(name, data)
    return path
