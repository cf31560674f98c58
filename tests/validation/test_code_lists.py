"""Closed code lists: kinds of packages, Incoterms 2020, the security indicator, and commodity
codes that lost their leading zero on the way from a spreadsheet or from ``values:``."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from customs_batch.findings import Finding
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


def test_a_code_that_starts_with_its_zero_gets_no_leading_zero_hint() -> None:
    (finding,) = _departure_findings(commodityCode="0901210")
    assert "leading zero" not in finding.hint


DEPARTURE_HEAD = "apiVersion: customs-batch/v1\nkind: DepartureDeclaration\n"


def _departure_manifest(extra: str, commodity: str) -> str:
    spec = copy.deepcopy(sample(Kind.DEPARTURE_DECLARATION))
    spec["DeclarationItems"][0]["commodityCode"] = "@CODE@"
    body = yaml.safe_dump({"spec": spec}, sort_keys=False).replace("'@CODE@'", commodity)
    return f"{DEPARTURE_HEAD}{extra}{body}"


def test_an_unquoted_code_in_values_that_lost_its_zero_is_found_at_the_line() -> None:
    # 0901.21 (roasted coffee) unquoted is the number 901210000, whose first six digits are
    # a real subheading (9012.10, microscopes): only its length gives it away.
    manifest = _departure_manifest(
        "metadata: {name: dep-coffee}\nvalues:\n  hs: 0901210000\n", '"{{ values.hs }}"'
    )
    Path("m.yaml").write_text(manifest, encoding="utf-8")
    result = validate_paths(["m.yaml"])
    (finding,) = result.findings
    assert finding.rule == "code.commodity"
    assert finding.message.startswith("'901210000' is not a commodity code")
    assert "'0901210000'" in finding.hint and "unquoted number in values:" in finding.hint
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
