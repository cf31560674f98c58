"""A value a template copied from the document's ``values`` is reported at the manifest's
value (where it is fixed), naming the template place that used it."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from customs_batch.cli.main import invoke
from customs_batch.findings import Finding
from customs_batch.validation.batch import validate_paths
from tests.manifest.helpers import ENVELOPE, write

VALUES = """values:
  office: DE04073
  destination: NL000396
  principal:
    name: ACME
    eoriNo: NOT-AN-EORI
"""
OFFICE_LINE = 6  # the line of 'office:' in the manifest
TEMPLATE = """type: DEPARTURE
departureOffice: {{ values.office | tojson }}
destinationOffice: {{ values.destination }}
countryOfDispatch: {{ values.office[:2] | lower | tojson }}
Principal: {{ values.principal | tojson }}
procedureType: {{ values.procedure | default("D9") | tojson }}
commercialReference: REF-{{ values.office }}
"""


def _project(template: str = TEMPLATE, values: str = VALUES) -> Path:
    write(Path("customs-batch.yaml"), "default_environment: local\n")
    write(Path("templates/t.yaml.j2"), template)
    return write(
        Path("m.yaml"),
        f"{ENVELOPE}kind: DepartureDeclaration\nmetadata: {{name: d1}}\ntemplate: t\n"
        f"{values}spec:\n  totalWeight: 1\n",
    )


def _at(path: Path, field: str) -> list[Finding]:
    return [f for f in validate_paths([path]).findings if f.location.path[1:2] == (field,)]


def test_a_value_passed_through_values_is_reported_at_the_manifest_with_the_template_line() -> None:
    (finding,) = _at(_project(), "departureOffice")
    assert finding.rule == "code.customs-office"
    where = finding.location
    assert (where.file, where.line, where.column) == ("m.yaml", OFFICE_LINE, 11)
    assert where.used_at is not None
    used = where.used_at
    assert (used.file, used.line, used.column) == ("templates/t.yaml.j2", 2, 21)
    assert where.used_at_text() == "used by the template at templates/t.yaml.j2:2:21"


def test_a_value_inside_a_mapping_the_template_copied_is_found_in_the_manifest() -> None:
    findings = _at(_project(), "Principal")
    eori = [f for f in findings if f.location.path == ("spec", "Principal", "eoriNo")]
    assert eori, findings
    assert {(f.location.file, f.location.line) for f in eori} == {("m.yaml", 10)}
    assert all(f.location.used_at is not None for f in eori)


def test_a_value_the_template_computes_stays_at_the_template() -> None:
    (dispatch,) = _at(_project(), "countryOfDispatch")  # 'de' is not a country code
    assert (dispatch.location.file, dispatch.location.line) == ("templates/t.yaml.j2", 4)
    assert dispatch.location.used_at is None
    values = VALUES + "  procedure: XX\n"
    (procedure,) = _at(_project(values=values), "procedureType")  # given: traced
    assert (procedure.location.file, procedure.location.line) == ("m.yaml", 11)
    template = TEMPLATE.replace(
        'procedureType: {{ values.procedure | default("D9") | tojson }}\n', ""
    )
    template += "procedureType: {{ values.procedure | default('D9') }}\n"
    (default,) = _at(_project(template), "procedureType")  # not given: the template's default
    assert default.location.file == "templates/t.yaml.j2"


def test_every_format_names_the_template_place() -> None:
    path = _project()
    runner = CliRunner()
    outputs = {}
    for name in ("text", "json", "sarif", "github", "markdown", "junit"):
        with runner.isolation() as (out, _, _):
            invoke(["validate", "--format", name, str(path)])
        outputs[name] = out.getvalue().decode()
    used = "used by the template at templates/t.yaml.j2:2:21"
    assert f"m.yaml:{OFFICE_LINE}:11: error[code.customs-office]" in outputs["text"]
    assert f"\n  {used}\n    departureOffice: {{{{ values.office | tojson }}}}\n" in outputs["text"]
    for name in ("github", "markdown", "junit", "sarif"):
        assert used in outputs[name], name
    report = json.loads(outputs["json"])
    office = next(f for f in report["findings"] if f["rule"] == "code.customs-office")
    assert (office["file"], office["line"]) == ("m.yaml", OFFICE_LINE)
    assert office["usedAt"] == {"file": "templates/t.yaml.j2", "line": 2, "column": 21}
    sarif = json.loads(outputs["sarif"])
    result = next(r for r in sarif["runs"][0]["results"] if r["ruleId"] == "code.customs-office")
    related = result["relatedLocations"][0]["physicalLocation"]
    assert related["artifactLocation"]["uri"] == "templates/t.yaml.j2"
    assert related["region"] == {"startLine": 2, "startColumn": 21}


def test_under_for_each_a_cell_passed_through_values_is_reported_at_the_cell() -> None:
    write(Path("data/d.csv"), "Ref,Office\nR-1,DE004073\nR-2,DE04073\n")
    manifest = (
        f"{ENVELOPE}kind: DepartureDeclaration\nforEach: {{file: data/d.csv}}\n"
        'metadata: {name: "d-{{ row.Ref | lower }}"}\ntemplate: t\n'
        'values: {office: "{{ row.Office }}", destination: NL000396,'
        " principal: {name: A, eoriNo: NL123456789}}\n"
        "spec:\n  totalWeight: 1\n"
    )
    _project()
    path = write(Path("m.yaml"), manifest)
    (finding,) = _at(path, "departureOffice")
    where = finding.location
    assert (where.file, where.row, where.column_name) == ("data/d.csv", 3, "Office")
    assert where.used_at is not None
    assert (where.used_at.file, where.used_at.line) == ("templates/t.yaml.j2", 2)
    # What the template computes from the cell stays at the row.
    (dispatch,) = [f for f in _at(path, "countryOfDispatch") if f.location.row == 2]
    assert (dispatch.location.column_name, dispatch.location.used_at) == (None, None)
