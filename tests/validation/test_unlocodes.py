"""UN/LOCODEs against the UNECE code list that pyunlocode ships (release 2023-1)."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from importlib.util import find_spec
from pathlib import Path

import pytest

from customs_batch.errors import CustomsBatchError
from customs_batch.findings import Severity
from customs_batch.kinds import Kind
from customs_batch.validation import unlocodes
from customs_batch.validation.rules import check_rules
from customs_batch.validation.unlocodes import CodeList, code_list, locations, unlocode_unknown
from tests.validation._documents import line_of, make_document
from tests.validation.samples import sample

# Busy seaports, airports and inland places; the package dropped earlier lacked 18 of them.
MAJOR = [
    "NLRTM",
    "NLAMS",
    "SGSIN",
    "DEHAM",
    "DEBRV",
    "CNSHA",
    "CNSZX",
    "CNNGB",
    "CNTAO",
    "CNTXG",
    "HKHKG",
    "KRPUS",
    "JPTYO",
    "JPYOK",
    "USNYC",
    "USLAX",
    "USLGB",
    "USSAV",
    "USHOU",
    "GBLON",
    "GBFXT",
    "GBSOU",
    "FRPAR",
    "FRLEH",
    "FRMRS",
    "BEANR",
    "BEZEE",
    "ESALG",
    "ESVLC",
    "ESBCN",
    "ITGOA",
    "ITGIT",
    "PLGDN",
    "GRPIR",
    "TRIST",
    "AEJEA",
    "AEDXB",
    "INNSA",
    "INBOM",
    "LKCMB",
    "MYPKG",
    "MYTPP",
    "THLCH",
    "VNSGN",
    "TWKHH",
    "AUSYD",
    "AUMEL",
    "CAVAN",
    "BRSSZ",
    "ZADUR",
    "EGPSD",
    "PAPTY",
    "ATVIE",
    "CHBSL",
    "CZPRG",
    "HUBUD",
    "DEDUS",
    "DEFRA",
    "DEMUC",
    "DEDUI",
    "PLWAW",
    "FRCDG",
    "GBLHR",
    "IEDUB",
    "SEGOT",
    "DKAAR",
    "FIHEL",
    "NOOSL",
    "EGCAI",
    "MACAS",
]


@pytest.fixture
def fresh_caches() -> Iterator[None]:
    """Forget what earlier tests read, before and after: a test may swap the code list."""
    for cached in (code_list, locations, unlocodes._names, unlocodes._block):
        cached.cache_clear()
    unlocodes._searched.clear()
    yield
    for cached in (code_list, locations, unlocodes._names, unlocodes._block):
        cached.cache_clear()
    unlocodes._searched.clear()


def _release_files() -> list[Path]:
    spec = find_spec("pyunlocode")
    assert spec is not None and spec.submodule_search_locations
    folder = Path(next(iter(spec.submodule_search_locations))) / "csv"
    return sorted(folder.glob("* UNLOCODE CodeListPart*.csv"))


def test_the_shipped_release_is_2023_1_and_has_the_busiest_places() -> None:
    assert code_list().edition == "2023-1"
    assert [code for code in MAJOR if unlocode_unknown(code) is not None] == []


def test_reading_country_blocks_finds_exactly_what_a_full_csv_parse_finds() -> None:
    expected: dict[str, set[str]] = {}
    for path in _release_files():
        with path.open(encoding="latin-1", newline="") as handle:
            for row in csv.reader(handle):
                if row[2]:
                    expected.setdefault(row[1], set()).add(row[2])
    assert 115_000 < sum(len(codes) for codes in expected.values()) < 120_000
    assert {country: set(locations(country)) for country in expected} == expected


def test_the_list_is_every_release_file_each_after_a_line_break(fresh_caches: None) -> None:
    joined = b"".join(b"\n" + path.read_bytes() for path in _release_files())
    assert code_list().text == joined


def test_searching_a_country_s_block_finds_what_its_set_holds(fresh_caches: None) -> None:
    # A remark may hold text like a code's (',"MA","KHN"' after a line break): only a code
    # after the first comma of its line counts.
    for country in ("MA", "DE", "NL", "US", "ZW"):
        known = sorted(locations(country))
        asked = [*known[:: max(1, len(known) // 20)], "ZZ9", "AAA", known[0][::-1]]
        unlocodes._searched.clear()
        assert [unlocodes._listed(country, code) for code in asked] == [
            code in known for code in asked
        ], country
        assert unlocodes._searched[country] == unlocodes._SEARCHED_CODES  # then the set


def test_a_remark_over_two_lines_does_not_end_its_country() -> None:
    # Morocco's list has a remark with a line break before Casablanca's airport (MACMN).
    assert b'"Midelt","KHN","--3-----","AA","1607",,"3240N 00444W","\n"\r\n' in code_list().text
    assert {"CMN", "CAS", "PTM"} <= locations("MA")
    problem = unlocode_unknown("MACNM")
    assert problem is not None
    assert problem[1].startswith(
        "check the code for a typing error; close to it: MACMN (Mohammed V International Airport);"
    )


def test_without_a_country_header_the_whole_list_is_searched(
    fresh_caches: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = (
        b'\n,"NL","AMS","Amsterdam","Amsterdam","NH","12345---","AF","0701",,"5222N 00454E",\r'
        b'\n"+","NL","RTM","Rotterdam","Rotterdam","ZH","12345---","AF","0701",,,"a\r\nremark"\r'
        b'\n,"BE","ANR","Antwerpen","Antwerpen","VAN","12345---","AF","0701",,,\r'
        b'\n"=","NL","","Den Haag = \'s-Gravenhage","Den Haag","",,"",,"","",""\r'
    )
    monkeypatch.setattr(unlocodes, "code_list", lambda: CodeList("2099-1", text))
    assert locations("NL") == {"AMS", "RTM"}
    assert locations("BE") == {"ANR"}
    assert unlocode_unknown("NLRTN") == (
        "'NLRTN' is not in the UN/LOCODE code list (UN/LOCODE 2099-1)",
        "check the code for a typing error; close to it: NLRTM (Rotterdam); "
        "`customs-batch validate --unlocodes off` leaves this check out",
    )


def test_the_hint_names_the_places_a_typing_error_may_have_meant() -> None:
    problem = unlocode_unknown("BEARN")
    assert problem is not None
    message, hint = problem
    assert message == "'BEARN' is not in the UN/LOCODE code list (UN/LOCODE 2023-1)"
    # Two letters swapped come first, then one letter off.
    assert hint.startswith("check the code for a typing error; close to it: BEANR (Antwerpen), ")
    assert hint.endswith(", ...; `customs-batch validate --unlocodes off` leaves this check out")
    assert unlocode_unknown("NLQQQ") == (
        "'NLQQQ' is not in the UN/LOCODE code list (UN/LOCODE 2023-1)",
        "check the code for a typing error; the list has no NL code close to it; "
        "`customs-batch validate --unlocodes off` leaves this check out",
    )


def test_a_malformed_code_is_left_to_the_layout_check() -> None:
    assert unlocode_unknown("NL RTM") is None
    assert unlocode_unknown("QQRTM") is None


def test_an_unknown_code_is_a_warning_at_the_code_and_can_be_turned_off() -> None:
    spec = sample(Kind.DEPARTURE_DECLARATION, unloadingUNLocode="NLRTN")
    document = make_document(Kind.DEPARTURE_DECLARATION, spec)
    found = [(f.rule, f.severity, f.location.line) for f in check_rules(document)]
    line = line_of(document, "spec", "unloadingUNLocode")
    assert found == [("code.unlocode-unknown", Severity.WARNING, line)]
    assert check_rules(document, unlocodes=None) == []


def test_a_missing_code_list_is_an_error_that_says_how_to_go_on(
    fresh_caches: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(unlocodes, "_data_folder", lambda: tmp_path)
    with pytest.raises(CustomsBatchError) as raised:
        code_list()
    assert raised.value.message == (
        f"the UN/LOCODE code list cannot be read: no release files in {tmp_path}"
    )
    assert raised.value.hint == (
        "reinstall customs-batch (it needs the pyunlocode package), "
        "or turn the check off with --unlocodes off"
    )
