"""A file reports at most 10,000 findings; past that, one finding per rule counts the rest."""

from __future__ import annotations

from pathlib import Path

import pytest

from customs_batch.findings import Finding, Location, Severity
from customs_batch.planning.inputs import load_inputs
from customs_batch.validation import findings_cap
from customs_batch.validation.batch import validate_paths
from customs_batch.validation.findings_cap import FindingsCap
from tests.manifest.helpers import movement, write

SPEC = (
    "  shipmentId: shp_7Hk2Lm\n  hawbId: hawb_a1\n  action: ISL\n  quantity: 4\n"
    "  grossWeightKg: 50.2\n  customsSupervision: Y\n  goodsHandlingCode: N\n"
    "  partyId: rpty_p1\n"
)


def unknown_keys(count: int, name: str = "mov-1", extra: str = "") -> str:
    """A movement with ``count`` unknown spec keys: one schema finding each."""
    return movement(SPEC + "".join(f"  k{i:06d}: 1\n" for i in range(count)), name, extra)


def finding(
    rule: str, line: int, severity: Severity = Severity.ERROR, document: str | None = None
) -> Finding:
    return Finding(rule, severity, "m", Location("m.yaml", line, 1), "h", document=document)


def test_the_first_findings_are_kept_and_the_rest_counted_by_rule() -> None:
    cap = FindingsCap(3)
    kept = cap.admitted(finding("a.x", line) for line in range(1, 5))
    kept += cap.admitted([finding("b.y", 9, Severity.WARNING, document="Movement/m")])
    kept += cap.admitted([finding("a.x", 10, Severity.WARNING, document="Movement/n")])
    assert [f.location.line for f in kept] == [1, 2, 3]
    left_out = {f.rule: f for f in cap.left_out()}
    assert left_out["a.x"].message == (
        "2 more a.x findings of this file left out, the first at line 4: a file reports at "
        "most 3 findings"
    )
    assert left_out["a.x"].severity is Severity.ERROR  # the worst of them
    assert left_out["a.x"].location.line == 4
    assert left_out["a.x"].document is None  # two documents (and none)
    assert left_out["b.y"].severity is Severity.WARNING
    assert left_out["b.y"].document == "Movement/m"
    assert "1 more b.y finding of" in left_out["b.y"].message
    assert cap.left_out_documents == {"Movement/m", "Movement/n"}


def test_a_spreadsheet_cell_is_named_but_not_pointed_at() -> None:
    cap = FindingsCap(0)
    cell = Location("data/m.csv", 12, 3, sheet="m", row=12, column_name="Action")
    cap.admit(Finding("row.cell-type", Severity.ERROR, "m", cell))
    (summary,) = cap.left_out()
    assert summary.location == Location("data/m.csv")
    assert "the first at data/m.csv, sheet 'm', row 12, column C 'Action'" in summary.message


def test_a_file_of_more_findings_reports_10000_and_counts_the_rest() -> None:
    # Before the cap: one finding per key, 300,006 for 300,000 keys (0.8 GB, 10 s).
    write(Path("m/big.yaml"), unknown_keys(10_050))
    write(Path("m/other.yaml"), unknown_keys(3, name="mov-2").replace("hawb_a1", "hawb_a2"))
    result = validate_paths([Path("m")], jobs=1)
    big = [f for f in result.findings if f.location.file == "m/big.yaml"]
    assert len(big) == 10_001
    (summary,) = [f for f in big if "left out" in f.message]
    assert summary.rule == "schema.additional-property"
    assert summary.severity is Severity.ERROR
    assert summary.message.startswith(
        "50 more schema.additional-property findings of this file left out, the first at "
        "line 10,014:"
    )
    assert summary.document == "Movement/mov-1"
    assert len([f for f in result.findings if f.location.file == "m/other.yaml"]) == 3
    assert result.failed()


def test_a_suppression_of_the_rule_silences_the_findings_left_out_too() -> None:
    note = "  annotations:\n    customs-batch/suppress: 'schema.additional-property: legacy'\n"
    write(Path("m/big.yaml"), unknown_keys(10_005, extra=note))
    result = validate_paths([Path("m")], jobs=1)
    assert result.findings == ()
    assert len(result.suppressed) == 10_001
    assert not result.failed()


def test_the_findings_of_loading_count_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(findings_cap, "MAX_FINDINGS_PER_FILE", 5)
    # Ten documents, each a duplicate key: ten findings of loading.
    duplicate = movement(SPEC + "  action: VAH\n", name="{}")
    write(Path("m/a.yaml"), "---\n".join(duplicate.format(f"d{i}") for i in range(10)))
    result = validate_paths([Path("m")], jobs=1)
    assert [f.rule for f in result.findings] == ["yaml.duplicate-key"] * 6
    assert "5 more yaml.duplicate-key findings" in result.findings[5].message


def test_a_plan_keeps_to_the_limit_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(findings_cap, "MAX_FINDINGS_PER_FILE", 5)
    write(Path("m/big.yaml"), unknown_keys(12))
    inputs = load_inputs([Path("m")], jobs=1)
    assert inputs.failed
    findings = inputs.validation.findings
    assert [f.rule for f in findings] == ["schema.additional-property"] * 6
    assert "7 more schema.additional-property findings" in findings[-1].message


def _copies(count: int, hawb: str = "hawb_a1") -> str:
    """``count`` HAWB deactivations asking the same: an error at each after the first
    (project.duplicate-request)."""
    return "---\n".join(
        f"apiVersion: customs-batch/v1\nkind: HawbDeactivation\nmetadata: {{name: {hawb}-{n}}}\n"
        f"spec: {{shipmentId: shp_7Hk2Lm, hawbId: {hawb}}}\n"
        for n in range(count)
    )


@pytest.mark.parametrize("reader", ["validate", "plan"])
def test_the_project_wide_findings_of_a_file_keep_to_its_limit_too(
    monkeypatch: pytest.MonkeyPatch, reader: str
) -> None:
    """The checks across documents (here the same request in twelve documents: eleven
    errors) count at
    their file after its own findings: 'a file reports at most 10,000 findings'."""
    monkeypatch.setattr(findings_cap, "MAX_FINDINGS_PER_FILE", 5)
    write(Path("m/big.yaml"), _copies(12))
    write(Path("m/small.yaml"), _copies(3, hawb="hawb_a2"))
    if reader == "validate":
        findings = list(validate_paths([Path("m")], jobs=1).findings)
    else:
        inputs = load_inputs([Path("m")], jobs=1)
        assert inputs.failed
        findings = list(inputs.validation.findings)
    big = [f for f in findings if f.location.file == "m/big.yaml"]
    assert [f.rule for f in big] == ["project.duplicate-request"] * 6, big
    (summary,) = [f for f in big if "left out" in f.message]
    assert summary.message.startswith("6 more project.duplicate-request findings of this file")
    assert summary.severity is Severity.ERROR
    small = [f for f in findings if f.location.file == "m/small.yaml"]
    assert [f.rule for f in small] == ["project.duplicate-request"] * 2


def test_a_file_s_own_findings_come_first_in_its_limit() -> None:
    own = [finding("schema.x", line) for line in range(1, 4)]
    project = [finding("project.y", line) for line in range(10, 15)]
    kept = findings_cap.capped_at_each_file(project, own, limit=5)
    assert [f.location.line for f in kept if "left out" not in f.message] == [10, 11]
    (summary,) = [f for f in kept if "left out" in f.message]
    assert summary.message.startswith("3 more project.y findings of this file left out")
    assert findings_cap.capped_at_each_file(project, [], limit=5) == project
