"""Closed code lists: kinds of packages, Incoterms 2020, the security indicator, transport modes,
guarantee types, and commodity codes that lost their leading zero on the way from a spreadsheet
or from ``values:``."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from customs_batch.findings import Finding, Severity
from customs_batch.kinds import Kind
from customs_batch.validation import code_lists
from customs_batch.validation.batch import validate_paths
from customs_batch.validation.code_fields import check_code_fields
from tests.validation._documents import make_document
from tests.validation.samples import sample


def _departure_findings(**changes: Any) -> list[Finding]:
    spec = sample(Kind.DEPARTURE_DECLARATION)
    item = spec["DeclarationItems"][0]
    for key, value in changes.items():
        if key in ("typeOfPackages",):
            item["packaging"][0][key] = value
        elif key == "commodityCode":
            item[key] = value
        else:
            spec[key] = value
    return check_code_fields(make_document(Kind.DEPARTURE_DECLARATION, spec))


def test_the_package_kinds_are_recommendation_21() -> None:
    kinds = code_lists.package_kinds()
    assert len(kinds) == 405
    assert kinds["BX"] == "Box" and kinds["CT"] == "Carton" and kinds["PX"] == "Pallet"
    assert "SX" not in kinds  # deleted from the recommendation


@pytest.mark.parametrize(
    ("written", "hint"),
    [
        ("BOX", "write the two-character code, not the name: BX (Box)"),
        ("Pallets", "write the two-character code, not the name: PX (Pallet)"),
        ("ct", "write it in capitals: CT (Carton)"),
        ("Q9", "write a two-character code, e.g. BX (box), CT (carton), PX (pallet)"),
    ],
)
def test_a_package_kind_not_in_the_list_is_an_error_saying_what_to_write(
    written: str, hint: str
) -> None:
    (finding,) = _departure_findings(typeOfPackages=written)
    assert finding.rule == "code.package-kind"
    assert finding.location.path == (
        "spec", "DeclarationItems", 0, "packaging", 0, "typeOfPackages"
    )  # fmt: skip
    assert finding.message == (
        f"{written!r} is not a kind-of-packages code of UN/ECE Recommendation 21, "
        "Revision 12 (2021)"
    )
    assert finding.hint == hint


def test_every_package_kind_of_the_list_passes() -> None:
    assert [
        code for code in code_lists.package_kinds() if _departure_findings(typeOfPackages=code)
    ] == []


def _template_group_findings(incoterm: str) -> list[Finding]:
    spec = sample(Kind.TEMPLATE_GROUP)
    spec["DeclarationTemplates"][0]["incoterm"] = incoterm
    return check_code_fields(make_document(Kind.TEMPLATE_GROUP, spec))


@pytest.mark.parametrize("rule", [*code_lists.INCOTERMS_2020, "XXX"])
def test_the_incoterms_2020_rules_pass(rule: str) -> None:
    assert _template_group_findings(rule) == []


def test_ddu_is_an_error_saying_it_has_not_existed_since_2010() -> None:
    (finding,) = _template_group_findings("DDU")
    assert finding.rule == "code.incoterm"
    assert finding.location.path == ("spec", "DeclarationTemplates", 0, "incoterm")
    assert finding.message == (
        "'DDU' is not an Incoterms 2020 rule: DDU (Delivered Duty Unpaid) has not existed "
        "since Incoterms 2010"
    )
    assert finding.hint.startswith("use DAP (Delivered At Place), or whichever of the 11 rules")


@pytest.mark.parametrize(
    ("written", "in_message", "hint_start"),
    [
        ("DAT", "was renamed DPU in Incoterms 2020", "use DPU"),
        ("fob", "", "write it in capitals: FOB"),
        ("FOBB", "", "write one of the 11 rules: EXW, FCA, CPT, CIP, DAP, DPU, DDP, FAS"),
    ],
)
def test_other_wrong_incoterms(written: str, in_message: str, hint_start: str) -> None:
    (finding,) = _template_group_findings(written)
    assert in_message in finding.message
    assert finding.hint.startswith(hint_start)


@pytest.mark.parametrize("code", ["0", "1", "2", "3"])
def test_the_security_indicator_codes_pass(code: str) -> None:
    assert _departure_findings(security=code) == []


def test_security_yes_says_yaml_1_1_reads_it_as_true() -> None:
    (finding,) = _departure_findings(security="yes")
    assert finding.rule == "code.security"
    assert finding.location.path == ("spec", "security")
    assert finding.message == (
        "'yes' is not a security indicator code: 0, 1, 2 or 3; unquoted, yes is the boolean "
        "true to a YAML 1.1 reader, not a code"
    )
    assert finding.hint.startswith('write the code as quoted text: security: "0"')
    (other,) = _departure_findings(security="4")
    assert other.message == "'4' is not a security indicator code: 0, 1, 2 or 3"


@pytest.mark.parametrize("code", ["7318150", "731815000"])
def test_a_commodity_code_of_7_or_9_digits_is_an_error(code: str) -> None:
    (finding,) = _departure_findings(commodityCode=code)
    assert finding.rule == "code.commodity"
    assert finding.message == (
        f"{code!r} is not a commodity code: 6, 8 or 10 digits (HS, CN or TARIC)"
    )
    assert "leading zero" in finding.hint


def test_a_commodity_code_in_other_digits_than_0_9_is_an_error() -> None:
    """731815 in Arabic-Indic digits passed the layout check (only a warning that its
    subheading does not exist) and would have been sent."""
    code = "\u0667\u0663\u0661\u0668\u0661\u0665"
    (finding,) = _departure_findings(commodityCode=code)
    assert finding.rule == "code.commodity" and finding.severity is Severity.ERROR


def test_a_code_that_starts_with_its_zero_gets_no_leading_zero_hint() -> None:
    (finding,) = _departure_findings(commodityCode="0901210")
    assert "leading zero" not in finding.hint


DEPARTURE_HEAD = "apiVersion: customs-batch/v1\nkind: DepartureDeclaration\n"


def _departure_manifest(extra: str, commodity: str) -> str:
    spec = copy.deepcopy(sample(Kind.DEPARTURE_DECLARATION))
    spec["DeclarationItems"][0]["commodityCode"] = "@CODE@"
    body = yaml.safe_dump({"spec": spec}, sort_keys=False).replace("'@CODE@'", commodity)
    return f"{DEPARTURE_HEAD}{extra}{body}"


def test_an_unquoted_code_in_values_keeps_its_leading_zero() -> None:
    # 0901.21 (roasted coffee) unquoted in values: was the number 901210000, whose first six
    # digits are a real subheading (9012.10, microscopes); a postcode 01067 became 1067
    # without a word. A whole number written with a leading zero in values is a code: its
    # text, as a spreadsheet cell 0150 is.
    manifest = _departure_manifest(
        "metadata: {name: dep-coffee}\nvalues:\n  hs: 0901210000\n", '"{{ values.hs }}"'
    )
    Path("m.yaml").write_text(manifest, encoding="utf-8")
    result = validate_paths(["m.yaml"])
    assert [f.rule for f in result.findings if f.severity is Severity.ERROR] == []


def test_a_code_cut_short_in_values_is_found_at_the_line() -> None:
    # Written without its zero (copied from a sheet that lost it): the length tells.
    manifest = _departure_manifest(
        "metadata: {name: dep-coffee}\nvalues:\n  hs: 901210000\n", '"{{ values.hs }}"'
    )
    Path("m.yaml").write_text(manifest, encoding="utf-8")
    result = validate_paths(["m.yaml"])
    (finding,) = result.findings
    assert finding.rule == "code.commodity"
    assert finding.message.startswith("'901210000' is not a commodity code")
    assert "'0901210000'" in finding.hint
    assert finding.location.file == "m.yaml"
    line = manifest.splitlines().index("  - description: Bolts") + 2
    assert finding.location.line == line


def test_a_number_cell_that_lost_its_zero_is_found_at_the_cell() -> None:
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "Items"
    sheet.append(["Reference", "HS"])
    sheet.append(["REF-1", 901210000])  # typed as 0901210000, kept as a number
    Path("data").mkdir()
    book.save("data/items.xlsx")
    manifest = _departure_manifest(
        'forEach: {file: data/items.xlsx}\nmetadata: {name: "dep-{{ row.Reference }}"}\n',
        '"{{ row.HS }}"',
    )
    Path("m.yaml").write_text(manifest, encoding="utf-8")
    result = validate_paths(["m.yaml"])
    (finding,) = result.findings
    assert finding.rule == "code.commodity"
    assert "leading zero" in finding.hint
    assert (finding.location.sheet, finding.location.row) == ("Items", 2)


def _transport_findings(transport_type: str) -> list[Finding]:
    spec = sample(Kind.DEPARTURE_DECLARATION)
    spec["TransportMeans"][0]["transportType"] = transport_type
    return check_code_fields(make_document(Kind.DEPARTURE_DECLARATION, spec))


def _template_transport_findings(field: str, mode: str) -> list[Finding]:
    spec = sample(Kind.TEMPLATE_GROUP)
    spec["DeclarationTemplates"][0][field] = mode
    return check_code_fields(make_document(Kind.TEMPLATE_GROUP, spec))


def test_the_transport_modes_are_cl018() -> None:
    assert list(code_lists.transport_modes()) == ["1", "2", "3", "4", "5", "7", "8", "9"]
    assert code_lists.transport_modes()["3"] == "Road transport"
    assert code_lists.two_digit_transport_modes()["30"] == "Road transport"


@pytest.mark.parametrize("field", ["arrivalTransportType", "borderTransportType"])
def test_every_cl018_mode_passes_in_a_template(field: str) -> None:
    assert [
        mode for mode in code_lists.transport_modes() if _template_transport_findings(field, mode)
    ] == []


@pytest.mark.parametrize(
    ("written", "hint"),
    [
        ("Road", "write the code, not the name: 3 (Road transport)"),
        ("truck", "write the code, not the name: 3 (Road transport)"),
        ("sea", "write the code, not the name: 1 (Maritime transport)"),
        (
            "30",
            "write 3 (Road transport): 30 is the same mode in the two-digit NCTS list, which "
            "this field does not take",
        ),
        ("Z", "write one of the codes, quoted: 1 (maritime transport), 2 (rail transport)"),
    ],
)
def test_a_border_transport_mode_not_in_cl018_is_an_error_saying_what_to_write(
    written: str, hint: str
) -> None:
    (finding,) = _template_transport_findings("borderTransportType", written)
    assert finding.rule == "code.transport-mode"
    assert finding.location.path == ("spec", "DeclarationTemplates", 0, "borderTransportType")
    assert finding.message == (
        f"{written!r} is not a transport mode code of the EU customs code list CL018 (one digit)"
    )
    assert finding.hint.startswith(hint)


@pytest.mark.parametrize(("code", "name"), [("0", "not specified"), ("6", "multimodal")])
def test_the_recommendation_19_codes_customs_leave_out_are_named(code: str, name: str) -> None:
    (finding,) = _template_transport_findings("arrivalTransportType", code)
    assert (
        f"{code} (transport mode {name}" in finding.message or f"{code} ({name}" in finding.message
    )
    assert "not a customs code" in finding.message
    assert finding.hint.startswith("write the mode of the active means of transport, or 9")


def test_a_transport_means_takes_cl018_and_the_two_digit_ncts_codes() -> None:
    every = [*code_lists.transport_modes(), *code_lists.two_digit_transport_modes()]
    assert [code for code in every if _transport_findings(code)] == []
    (finding,) = _transport_findings("31")
    assert finding.rule == "code.transport-mode"
    assert finding.location.path == ("spec", "TransportMeans", 0, "transportType")
    assert finding.message == (
        "'31' is not a transport mode code of the EU customs code list CL018 (one digit, or "
        "one of the two-digit NCTS codes)"
    )
    assert finding.hint == "write 3 (Road transport) or 30"
    (named,) = _transport_findings("ROAD")
    assert named.hint == "write the code, not the name: 3 (Road transport)"


def _guarantee_findings(guarantee_type: str) -> list[Finding]:
    spec = sample(Kind.DEPARTURE_DECLARATION)
    spec["DeclarationGuarantees"][0]["guaranteeType"] = guarantee_type
    return check_code_fields(make_document(Kind.DEPARTURE_DECLARATION, spec))


def test_the_guarantee_types_are_cl251() -> None:
    types = code_lists.guarantee_types()
    assert list(types) == ["0", "1", "2", "3", "4", "5", "8", "9", "A", "B", "J", "R"]
    assert types["1"] == "Comprehensive guarantee"
    assert [code for code in types if _guarantee_findings(code)] == []


@pytest.mark.parametrize(
    ("written", "hint"),
    [
        ("b", "write it in capitals: B (Guarantee for goods dispatched under the TIR procedure)"),
        ("Comprehensive", "write the code, not the name: 1 (comprehensive guarantee)"),
        ("TIR", "write the code, not the name: B (TIR)"),
        (
            "waiver",
            "write the code, not the name: 0 (guarantee waiver), 5 (waiver, amount below the "
            "statistical threshold), A (waiver by agreement)",
        ),
        ("vouchers", "write the code, not the name: 4 (individual guarantee in vouchers)"),
        ("7", "write one of the codes, quoted: 0 (guarantee waiver), 1 (comprehensive"),
    ],
)
def test_a_guarantee_type_not_in_cl251_is_an_error_saying_what_to_write(
    written: str, hint: str
) -> None:
    (finding,) = _guarantee_findings(written)
    assert finding.rule == "code.guarantee-type"
    assert finding.location.path == ("spec", "DeclarationGuarantees", 0, "guaranteeType")
    assert finding.message == f"{written!r} is not a guarantee type of the NCTS code list CL251"
    assert finding.hint.startswith(hint)


def test_codes_a_template_takes_from_values_are_found_at_the_manifest_line() -> None:
    Path("customs-batch.yaml").write_text("default_environment: local\n", encoding="utf-8")
    Path("templates").mkdir()
    Path("templates/t.yaml.j2").write_text(
        "type: DEPARTURE\n"
        "TransportMeans:\n"
        "  - {sequenceNumber: 1, mode: DEPARTURE, transportType: {{ values.mode | tojson }}}\n"
        "DeclarationGuarantees:\n"
        "  - guaranteeType: {{ values.guarantee | tojson }}\n",
        encoding="utf-8",
    )
    manifest = (
        f"{DEPARTURE_HEAD}metadata: {{name: dep-1}}\ntemplate: t\nvalues:\n"
        "  mode: road\n  guarantee: comprehensive\nspec:\n  totalWeight: 1\n"
    )
    Path("m.yaml").write_text(manifest, encoding="utf-8")
    findings = validate_paths(["m.yaml"]).findings
    by_rule = {f.rule: f for f in findings if f.rule.startswith("code.")}
    assert sorted(by_rule) == ["code.guarantee-type", "code.transport-mode"]
    mode, guarantee = by_rule["code.transport-mode"], by_rule["code.guarantee-type"]
    assert (mode.location.file, mode.location.line) == ("m.yaml", 6)
    assert mode.hint == "write the code, not the name: 3 (Road transport)"
    assert (guarantee.location.file, guarantee.location.line) == ("m.yaml", 7)
    assert guarantee.location.used_at is not None
    assert (guarantee.location.used_at.file, guarantee.location.used_at.line) == (
        "templates/t.yaml.j2",
        5,
    )


def test_docs_give_every_code_list_its_source_and_date() -> None:
    import re

    from customs_batch.validation import code_fields

    docs = Path(__file__).resolve().parents[2] / "docs" / "validation.md"
    text = docs.read_text(encoding="utf-8")
    section = text.split("### Every code list, its source and its date", 1)[1]
    section = section.split("\n### ", 1)[0]
    rows = {
        rule: line
        for line in section.splitlines()
        for rule in re.findall(r"`(code\.[a-z-]+)`", line)
    }
    lists = [
        code_fields.COUNTRY,
        code_fields.CURRENCY,
        code_fields.COMMODITY,
        code_fields.PACKAGE_KIND,
        code_fields.INCOTERM,
        code_fields.SECURITY,
        code_fields.TRANSPORT_MODE,
        code_fields.GUARANTEE_TYPE,
    ]
    for rule in [*(code.rule for code in lists), "code.hs-unknown", "code.unlocode-unknown"]:
        assert rule in rows, f"{rule} is not in the table of code lists"
        assert re.search(r"\b(19|20)\d\d\b", rows[rule]), f"{rule} has no date"
