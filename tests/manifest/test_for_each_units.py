"""The small parts of forEach: row ranges, cell conversion, row text without Jinja."""

from __future__ import annotations

import pytest

from customs_batch.manifest import RowRange
from customs_batch.manifest.jinja._engine import render_inline
from customs_batch.manifest.rows._cells import CellProblem, convert
from customs_batch.manifest.rows._plan import RowView, make_slot
from customs_batch.manifest.rows._range import ROW_PAST_EVERY_FILE

INTEGER = frozenset({"integer"})
NUMBER = frozenset({"number"})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("10-20", RowRange(10, 20)),
        (" 10 - 20 ", RowRange(10, 20)),
        ("10-", RowRange(10, None)),
        ("-20", RowRange(None, 20)),
        ("15", RowRange(15, 15)),
        ("20-10", None),
        ("-", None),
        ("ten", None),
        ("", None),
        ("0", None),  # rows are numbered from 1
        ("0-5", None),
        ("-0", None),
        ("00", None),
    ],
)
def test_row_ranges(text: str, expected: RowRange | None) -> None:
    assert RowRange.parse(text) == expected


@pytest.mark.parametrize(
    ("value", "types", "decimal_comma", "expected"),
    [
        ("12", INTEGER, False, 12),
        (" 12 ", INTEGER, False, 12),
        ("12.5", NUMBER, False, 12.5),
        ("12", NUMBER, False, 12),
        ("12,5", NUMBER, True, 12.5),
        ("1.250,75", NUMBER, True, 1250.75),
        ("1.000", INTEGER, True, 1000),  # thousands grouped as the export groups them
        ("1.000,00", INTEGER, True, 1000),
        ("12.345.678", INTEGER, True, 12345678),
        ("2.0", INTEGER, False, 2),  # a whole number as pandas writes it, as the XLSX 2.0
        ("-40.00", INTEGER, False, -40),
        (" 2.0000 ", frozenset({"integer", "reference"}), False, 2),
        ("-3", frozenset({"integer", "number"}), False, -3),
        ("0150", frozenset({"string"}), False, "0150"),
        (731815, frozenset({"string"}), False, "731815"),
        (12.5, NUMBER, False, 12.5),
        ("Ja", frozenset(), False, "Ja"),
    ],
)
def test_cells_convert_by_the_schema(
    value: object, types: frozenset[str], decimal_comma: bool, expected: object
) -> None:
    assert convert(value, types, decimal_comma=decimal_comma) == expected


@pytest.mark.parametrize(
    ("value", "types", "decimal_comma"),
    [
        ("12.5", INTEGER, False),
        ("12,5", NUMBER, False),
        ("12.5", NUMBER, True),
        ("1.000,5", INTEGER, True),
        ("0.500", INTEGER, True),
        ("1.000", INTEGER, False),
        ("12.000", INTEGER, False),  # a thousand grouped, more likely than 12
        ("2.5", INTEGER, False),
        ("2.0", INTEGER, True),  # a decimal point where a comma is the decimal mark
        ("2.", INTEGER, False),
        ("1e999", NUMBER, False),
        ("nan", NUMBER, False),
        ("perhaps", frozenset({"boolean"}), False),
    ],
)
def test_cells_that_do_not_convert_are_problems(
    value: str, types: frozenset[str], decimal_comma: bool
) -> None:
    assert isinstance(convert(value, types, decimal_comma=decimal_comma), CellProblem)


def test_row_text_is_filled_like_jinja_would() -> None:
    context = {"row": RowView({"HAWB": "hawb_1", "n": 3.5, "items": "x"}), "row_number": 7}
    for text in (
        "mov-{{ row.HAWB }}-{{ row_number }}",
        "{{ row['n'] }} kg of {{row.items}}",
        "{{ row.HAWB | upper }}",
        "{% if row.n %}a{% endif %}",
    ):
        slot = make_slot(("spec", "x"), text, True, None)
        assert slot.render(context) == render_inline(text, context, as_text=True)
    assert make_slot(("spec", "x"), "a-{{ row.HAWB }}", True, None).pieces is not None
    assert make_slot(("spec", "x"), "{{ row.HAWB | upper }}", True, None).pieces is None


def test_a_lone_cell_reference_is_a_cell_slot() -> None:
    slot = make_slot(("spec", "q"), "{{ row['Gross weight'] }}", False, None)
    assert slot.header == "Gross weight"
    assert slot.render({"row": RowView({"Gross weight": 4.5})}) == 4.5


@pytest.mark.parametrize("as_text", [True, False])
def test_two_bracketed_references_are_two_columns(as_text: bool) -> None:
    # The first reference's opening quote and the last one's closing quote were read as one
    # name: a column "HAWB no'] }}-{{ row['Seq" that no sheet has.
    context = {"row": RowView({"HAWB no": "hawb_a1", "Seq": 1, "a": "x", "b": "y"})}
    for text in (
        "{{ row['HAWB no'] }}-{{ row['Seq'] }}",
        '{{ row["HAWB no"] }}-{{ row["Seq"] }}',
        "{{ row['a'] ~ row['b'] }}",
        "{{ row['a'] }}{{ row['b'] }}",
    ):
        slot = make_slot(("spec", "x"), text, as_text, None)
        assert slot.header is None
        assert set(slot.headers()) <= {"HAWB no", "Seq", "a", "b"}
        assert slot.render(context) == render_inline(text, context, as_text=as_text)
    slot = make_slot(("spec", "x"), "{{ row['HAWB no'] }}-{{ row['Seq'] }}", as_text, None)
    assert slot.render(context) == "hawb_a1-1"


@pytest.mark.parametrize(
    ("value", "types", "decimal_comma"),
    [
        ("\u0663", INTEGER, False),  # Arabic-Indic 3
        ("\u0661\u0662.5", NUMBER, False),
        ("\u0661\u0662,5", NUMBER, True),
        ("\u0967\u0968", INTEGER, True),  # Devanagari 12
        ("2\u0660", INTEGER, False),  # ASCII and Arabic-Indic mixed
    ],
)
def test_digits_of_another_script_are_no_number(
    value: str, types: frozenset[str], decimal_comma: bool
) -> None:
    # As a YAML manifest reads them: `quantity: ٣` is a string, not 3.
    problem = convert(value, types, decimal_comma=decimal_comma)
    assert isinstance(problem, CellProblem)
    assert "digits 0-9" in problem.hint


def test_a_row_range_is_ascii_digits() -> None:
    assert RowRange.parse("\u0663-\u0665") is None
    assert RowRange.parse("3-5") == RowRange(3, 5)


def test_a_row_number_of_thousands_of_digits_is_past_every_row_not_a_crash() -> None:
    # int() refuses more than 4,300 digits: `validate --rows 1-999...9` (5,000 digits) ended
    # in "internal error: ValueError". No file holds that many rows: the number reads as
    # past the last row of any, as a number of 20 digits already did.
    many = "9" * 5000
    assert RowRange.parse(f"1-{many}") == RowRange(1, ROW_PAST_EVERY_FILE)
    assert RowRange.parse(f"{many}-") == RowRange(ROW_PAST_EVERY_FILE, None)
    assert RowRange.parse(f"{many}-{many}") == RowRange(ROW_PAST_EVERY_FILE, ROW_PAST_EVERY_FILE)
    assert RowRange.parse(f"{many}-3") is None
    assert RowRange.parse("0" * 5000 + "7-9") == RowRange(7, 9)
    assert RowRange.parse("99999999999999999999-") == RowRange(ROW_PAST_EVERY_FILE, None)


@pytest.mark.parametrize(
    ("text", "types"),
    [
        ("1,234.50", frozenset({"number"})),
        ("12,345,678.5", frozenset({"number"})),
        ("1,000", frozenset({"integer"})),
    ],
)
def test_a_number_with_commas_grouping_thousands_is_told_to_drop_them(
    text: str, types: frozenset[str]
) -> None:
    # '1,234.50' (an English export of a column formatted with a thousands separator) had
    # the hint "Write the number with a decimal point, e.g. 12.5": it has one.
    problem = convert(text, types, decimal_comma=False)
    assert isinstance(problem, CellProblem)
    assert "group thousands" in problem.hint
    assert text not in problem.hint  # hints are shown for sensitive fields too


@pytest.mark.parametrize("text", ["12,5", "1.234,5", "250,00"])
def test_a_decimal_comma_where_the_sheet_does_not_say_is_told_to_set_decimal_comma(
    text: str,
) -> None:
    # In a ';'-separated export the hint began "Write the number with a decimal point": the
    # export was right, the manifest had not said how it writes numbers.
    problem = convert(text, frozenset({"number"}), decimal_comma=None)
    assert isinstance(problem, CellProblem)
    assert problem.hint.startswith("This export writes decimal commas")
    assert "decimalComma: true" in problem.hint
