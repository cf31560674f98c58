"""validate_paths: the streaming, slim path finds exactly what validate_documents finds."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from customs_batch.errors import CustomsBatchError, ManifestError
from customs_batch.findings import Finding, Location, Severity
from customs_batch.kinds import Kind
from customs_batch.manifest import NO_ROW_IN_RANGE, Document, load_paths
from customs_batch.validation import batch, validate_documents
from customs_batch.validation.batch import (
    ValidationResult,
    slim_document,
    sorted_findings,
    validate_paths,
)
from tests.client.bodies import departure as departure_spec
from tests.validation._documents import make_document

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

MOVEMENT = """\
apiVersion: customs-batch/v1
kind: Movement
metadata:
  name: {name}
spec:
  shipmentId: shp_7Hk2Lm
  hawbId: hawb_a2
  action: ISL
  quantity: 4
  grossWeightKg: 40.0
  customsSupervision: Y
  goodsHandlingCode: N
  partyId: rpty_p1
"""

# One of every project-wide problem, spread over files so they meet only in the project check.
PROJECT = {
    "a.yaml": MOVEMENT.format(name="mov-1")
    + "---\n"
    + MOVEMENT.format(name="mov-2")
    + """---
apiVersion: customs-batch/v1
kind: HawbDeactivation
metadata:
  name: hawb-a2
spec: {shipmentId: shp_7Hk2Lm, hawbId: hawb_a2}
""",
    "b.yaml": """\
apiVersion: customs-batch/v1
kind: TemplateGroup
metadata: {name: g1}
spec: {name: One, code: SAME, companyId: 1}
---
apiVersion: customs-batch/v1
kind: TemplateGroup
metadata: {name: g2, dependsOn: [ExportCancellation/c1]}
spec: {name: Two, code: SAME, companyId: 1}
""",
    "c.yaml": """\
apiVersion: customs-batch/v1
kind: ExportCancellation
metadata: {name: c1, dependsOn: [TemplateGroup/g2, Movement/nowhere]}
spec:
  declarationId: ${ref:DepartureDeclaration/missing.declarationId}
---
apiVersion: customs-batch/v1
kind: ExportCancellation
metadata: {name: c1}
spec: {declarationId: 502}
---
apiVersion: customs-batch/v1
kind: TransitPartyUpdate
metadata: {name: p1}
spec:
  declarationId: ${ref:ExportCancellation/c1.nothing}
  Principal: {name: Acme}
""",
    "d.yaml": MOVEMENT.format(name="mov-3")
    + """---
apiVersion: customs-batch/v1
kind: TransitPartyUpdate
metadata: {name: p2}
spec:
  declarationId: 7002
  Consignee: {name: Initech, street: Kade 9}
---
apiVersion: customs-batch/v1
kind: TransitPartyUpdate
metadata: {name: p3}
spec:
  declarationId: 7002
  Consignee: {street: Kade 10}
""",
}


def _write_project(root: Path) -> None:
    (root / "customs-batch.yaml").write_text("default_environment: local\n", encoding="utf-8")
    for name, text in PROJECT.items():
        (root / name).write_text(text, encoding="utf-8")


def _reference(paths: list[Path]) -> tuple[Finding, ...]:
    """What the one-shot path gives: every document in memory, validate_documents over all."""
    loaded = load_paths(paths)
    return sorted_findings([*loaded.findings, *validate_documents(loaded.documents)])


def test_the_slim_project_checks_find_what_the_full_documents_give(tmp_path: Path) -> None:
    _write_project(tmp_path)
    result = validate_paths([tmp_path], jobs=1)
    expected = _reference([tmp_path])
    assert result.findings == expected
    rules = {finding.rule for finding in result.findings}
    assert {
        "project.duplicate-request",
        "project.duplicate-template-code",
        "project.hawb-deactivated-with-movements",
        "project.unknown-reference",
        "project.unknown-output-field",
        "project.unknown-dependency",
        "project.duplicate-address",
        "project.cycle",
        "project.two-owners",
        "project.movement-order",
    } <= rules
    # Locations and documents survive the slimming too.
    assert [(f.location, f.document) for f in result.findings] == [
        (f.location, f.document) for f in expected
    ]


def test_a_process_pool_gives_the_same_result_in_the_same_order(tmp_path: Path) -> None:
    _write_project(tmp_path)
    for number in range(6):
        (tmp_path / f"m{number}.yaml").write_text(MOVEMENT.format(name=f"m{number}"))
    alone = validate_paths([tmp_path], jobs=1)
    pooled = validate_paths([tmp_path], jobs=2)
    assert pooled == alone
    assert [entry.address for entry in pooled.documents][:3] == [
        "Movement/mov-1",
        "Movement/mov-2",
        "HawbDeactivation/hawb-a2",
    ]


def _die(*args: object) -> list[object]:
    os._exit(9)  # what the kernel's OOM killer does to a worker, from the pool's view


def test_a_dead_worker_is_an_error_with_a_way_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for number in range(2):
        (tmp_path / f"m{number}.yaml").write_text(MOVEMENT.format(name=f"m{number}"))
    monkeypatch.setattr(batch, "_check_file", _die)
    with pytest.raises(CustomsBatchError, match="loading the manifests died") as info:
        validate_paths([tmp_path], jobs=2)
    assert info.value.hint == "run again with --jobs 1 to validate in one process"


def test_the_examples_validate_clean_and_are_counted() -> None:
    result = validate_paths([EXAMPLES / "manifests"])
    assert result.findings == ()
    assert result.document_count == 15
    assert len(result.files) == 8
    assert not result.failed(strict=True)


def test_mrn_check_digit_severity_is_passed_to_the_rules() -> None:
    bad = EXAMPLES / "bad" / "mrn-check-digit.yaml.bad"
    assert validate_paths([bad]).findings[0].severity is Severity.ERROR
    assert validate_paths([bad], mrn_check_digit=Severity.WARNING).findings[0].severity is (
        Severity.WARNING
    )
    assert validate_paths([bad], mrn_check_digit=None).findings == ()


def test_a_missing_path_is_a_manifest_error(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match="no such file"):
        validate_paths([tmp_path / "nope"])


def test_slim_documents_keep_only_small_specs(tmp_path: Path) -> None:
    (tmp_path / "m.yaml").write_text(MOVEMENT.format(name="m"), encoding="utf-8")
    (document,) = load_paths([tmp_path / "m.yaml"]).documents
    slim = slim_document(document)
    assert set(slim.spec) == {"shipmentId", "hawbId", "\0digest"}
    assert len(slim.positions) < len(document.positions)
    assert slim.locate(("spec", "hawbId")) == document.locate(("spec", "hawbId"))
    assert slim.locate(("metadata", "name")) == document.locate(("metadata", "name"))


def test_findings_are_sorted_and_exact_duplicates_dropped() -> None:
    later = Finding("b", Severity.ERROR, "m", Location("a.yaml", 3, 1))
    earlier = Finding("z", Severity.WARNING, "m", Location("a.yaml", 1, 5))
    other_file = Finding("a", Severity.ERROR, "m", Location("0.yaml", 9, 9))
    assert sorted_findings([later, earlier, later, other_file]) == (other_file, earlier, later)


def test_strict_makes_warnings_fail() -> None:
    warning = Finding("w", Severity.WARNING, "m", Location("a.yaml", 1, 1))
    result = ValidationResult((warning,), (), ("a.yaml",))
    assert not result.failed()
    assert result.failed(strict=True)


ROWS_MANIFEST = """\
apiVersion: customs-batch/v1
kind: Movement
forEach: {file: rows.csv}
metadata:
  name: "mov-{{ row_number }}"
spec:
  shipmentId: "{{ row.Shipment }}"
  hawbId: "{{ row.HAWB }}"
  action: ISL
  quantity: "{{ row.Packages }}"
  grossWeightKg: 12.5
  customsSupervision: Y
  goodsHandlingCode: N
  partyId: rpty_p1
"""


def _bytes_kept_by_slim_rows(folder: Path, rows: int) -> int:
    """Bytes still allocated after slimming every row of a ``rows``-row forEach."""
    import tracemalloc

    from customs_batch.manifest import iter_file
    from customs_batch.manifest.document import Document

    lines = ["Shipment;HAWB;Packages"]
    lines += [f"shp_{number % 7:05d};hawb_{number:07d};{1 + number % 40}" for number in range(rows)]
    (folder / "rows.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    tracemalloc.start()
    try:
        slims = [
            slim_document(item)
            for item in iter_file(folder / "rows.yaml")
            if isinstance(item, Document)
        ]
        assert len(slims) == rows
        return tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()


def test_a_spreadsheet_row_costs_the_project_checks_little_memory(tmp_path: Path) -> None:
    # What 100,000 rows keep for the project-wide checks, per row: the slim document, its
    # spec with the HAWB fields and digest, its row number and name (919 bytes before they
    # became slotted and shared what every row has in common). Allocations are counted,
    # not timed: the same on every machine.
    (tmp_path / "rows.yaml").write_text(ROWS_MANIFEST, encoding="utf-8")
    _bytes_kept_by_slim_rows(tmp_path, 10)  # caches filled once: schemas, templates
    small = _bytes_kept_by_slim_rows(tmp_path, 1_000)
    big = _bytes_kept_by_slim_rows(tmp_path, 3_000)
    per_row = (big - small) / 2_000
    # 762 bytes before each row kept where its cells are in the CSV text (about 90 bytes),
    # so that a finding points at the physical line and column, not the row number.
    assert per_row < 880, f"{per_row:.0f} bytes kept per row"


def test_a_slim_document_keeps_no_digest_an_access_code_can_be_tested_against() -> None:
    # The slim documents live in the load cache: a plain digest over the spec with its code
    # gave the code away to whoever tries the 10,000 codes (the rest: render --format json).
    def departure(code: str) -> Document:
        spec = {**departure_spec(), "DeclarationGuarantees": [{"accessCode": code}]}
        return make_document(Kind.DEPARTURE_DECLARATION, spec, name="d")

    digest = slim_document(departure("4821")).spec["\0digest"]
    assert digest == slim_document(departure("4822")).spec["\0digest"]
    tried = {batch._digest(departure(f"{n:04d}").spec) for n in range(10_000)}
    assert digest not in tried


_ONE_CELL_IN_THREE_FIELDS = """\
apiVersion: customs-batch/v1
kind: DepartureDeclaration
forEach: {file: d.csv}
metadata:
  name: "dep-{{ row.Ref | lower }}"
template: t1-road
values: {office: NL000510, destination: DE004073, destination_country: DE}
spec:
  commercialReference: "{{ row.Ref }}"
  totalWeight: "{{ row.Weight }}"
  unloadingCountry: DE
  unloadingLocation: Hamburg
  Consignor: {name: Acme, eoriNo: NL123456789, countryCode: NL}
  Consignee: {name: G, countryCode: DE, city: H, street: K 2, postcode: "20457"}
  DeclarationItems:
    - description: goods
      commodityCode: "090421"
      originCountry: NL
      quantity: 1
      grossMass: "{{ row.Weight }}"
      netWeight: "{{ row.Weight }}"
      netPrice: 10
      currency: EUR
"""


_VALIDATE = (sys.executable, "-m", "customs_batch", "validate", "--no-cache")


def test_findings_alike_but_for_their_path_come_in_one_order_in_every_process(
    tmp_path: Path,
) -> None:
    """A cell used by three fields gives three findings at the cell, alike but for their
    path: the report is the same bytes whatever the process's string hashing
    (``PYTHONHASHSEED``), which orders a set."""
    (tmp_path / "m.yaml").write_text(_ONE_CELL_IN_THREE_FIELDS, encoding="utf-8")
    rows = "".join(f"R{n},1,{n}:{n}\n" for n in range(1, 9))
    (tmp_path / "d.csv").write_text("Ref,Qty,Weight\n" + rows, encoding="utf-8")
    reports = set()
    for seed in ("0", "1", "2", "3", "12345"):
        done = subprocess.run(
            [*_VALIDATE, "--format", "json", "m.yaml"],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env={**os.environ, "PYTHONHASHSEED": seed},
            check=False,
            timeout=120,
        )
        assert done.returncode == 1, done.stderr
        assert done.stdout.count('"row.cell-type"') == 3 * 8
        reports.add(done.stdout)
    assert len(reports) == 1


def test_rows_named_none_acts_on_the_loaders_signal_not_on_the_words() -> None:
    """The warning that a sheet had no row in the range asked for was told from others by
    the end of its message: a reworded message would have let a run that read no row pass."""
    at = Location("manifests/m.yaml", 7)
    flagged = Finding(
        "envelope.for-each", Severity.WARNING, "any words", at, signal=NO_ROW_IN_RANGE
    )
    alike = Finding(
        "envelope.for-each", Severity.WARNING, "m.xlsx has no data rows in the rows asked for", at
    )
    raised = batch.rows_named_none([flagged, alike], (), ["manifests/m.yaml"])
    assert [finding.severity for finding in raised] == [Severity.ERROR, Severity.WARNING]
    assert "--rows names no data row of any sheet" in raised[0].hint


def test_the_outcome_of_a_file_without_documents_read_back_is_small(tmp_path: Path) -> None:
    # 200,000 empty manifests held 1.76 KB each once their outcomes were read back (from a
    # loading process, from the load cache): a dict of attributes and three empty sets of
    # 216 bytes each. The sets read back are now one shared set, and there is no dict.
    import pickle

    empty = tmp_path / "empty.yaml"
    empty.write_text("", encoding="utf-8")
    settings = batch._Settings(Severity.ERROR, Severity.WARNING, None, Severity.WARNING)
    sent = pickle.dumps(batch._check_file(str(empty), settings))
    first, second = pickle.loads(sent), pickle.loads(sent)
    assert [f.rule for f in first.findings] == ["yaml.empty-file"]
    assert not hasattr(first, "__dict__")
    assert first.broken is second.broken is first.project.broken is second.project.broken
    assert first.sensitive_columns is second.sensitive_columns
