"""Jinja errors name the variable, suggest the closest key and point at line and column."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.manifest.helpers import ENVELOPE, load_text, movement_sheet_manifest, only, write

VALUES = "values: {dest_office: DE004073, destination_country: DE}\n"


def _with_template(body: str) -> Path:
    write(Path("customs-batch.yaml"), "default_environment: local\n")
    write(Path("templates/t.yaml.j2"), body)
    return Path("templates/t.yaml.j2")


def _departure(extra: str, spec: str = "  commercialReference: R-1\n") -> str:
    return f"{ENVELOPE}kind: DepartureDeclaration\nmetadata: {{name: d1}}\n{extra}spec:\n{spec}"


def test_a_misspelt_key_in_a_template_names_it_and_suggests_the_closest() -> None:
    _with_template("{#- note\n -#}\ntype: DEPARTURE\ndestinationOffice: {{ values.dest_ofice }}\n")
    finding = only(load_text(_departure("template: t\n" + VALUES)), "template.undefined")
    assert finding.message.startswith("values has no key 'dest_ofice'")
    assert finding.hint == (
        "Did you mean 'dest_office'? The keys of values are: 'dest_office', 'destination_country'."
    )
    assert finding.location.file == "templates/t.yaml.j2"
    assert (finding.location.line, finding.location.column) == (4, 23)
    assert "dict object" not in finding.message


def test_a_subscript_and_a_nested_mapping_are_named_as_written() -> None:
    _with_template("a: 1\nb: {{ values['addr'].cty }}\n")
    values = "values: {addr: {city: Köln, street: Hafen 1}}\n"
    finding = only(load_text(_departure("template: t\n" + values)), "template.undefined")
    assert finding.message.startswith("values['addr'] has no key 'cty'")
    assert finding.hint.startswith("Did you mean 'city'?")
    assert finding.location.column == 7


def test_an_unknown_variable_suggests_values() -> None:
    spec = '  commercialReference: "{{ valuse.ref }}"\n'
    finding = only(load_text(_departure(VALUES, spec)), "template.undefined")
    assert finding.message == "in '{{ valuse.ref }}': unknown variable 'valuse'"
    assert finding.hint.startswith("Did you mean 'values'?")


def test_a_division_by_zero_says_so_with_the_template_line() -> None:
    _with_template("a: 1\n\nb: {{ 1 / 0 }}\n")
    finding = only(load_text(_departure("template: t\n")), "template.error")
    assert finding.message.startswith("division by zero in the expression at line 3")
    assert finding.location.line == 3
    assert "ZeroDivisionError" not in finding.message


_LONG_NUMBER = "(2**64)**64 * (2**64)**64 * (2**64)**64 * (2**64)**64"
"""A number of 4,933 digits: within the bound on integers, past what Python writes as text."""


def test_a_number_too_long_to_write_in_a_template_is_too_large_not_python_advice() -> None:
    _with_template(f"a: 1\nb: {{{{ {_LONG_NUMBER} }}}}\n")
    finding = only(load_text(_departure("template: t\n")), "template.too-large")
    assert "more than 4,300 digits cannot be written as text" in finding.message
    assert finding.location.line == 2
    assert "set_int_max_str_digits" not in finding.message


def test_a_number_too_long_to_write_in_a_document_string_is_too_large() -> None:
    spec = f'  commercialReference: "R-{{{{ {_LONG_NUMBER} }}}}"\n'
    finding = only(load_text(_departure("", spec)), "template.too-large")
    assert "more than 4,300 digits cannot be written as text" in finding.message
    assert "set_int_max_str_digits" not in finding.message


def test_text_plus_a_number_says_what_to_do() -> None:
    spec = "  commercialReference: \"{{ 'R-' + 1 }}\"\n"
    finding = only(load_text(_departure("", spec)), "template.error")
    assert "the text 'R-' and the number 1 do not go together with '+'" in finding.message
    assert "TypeError" not in finding.message


def test_a_missing_column_behind_a_filter_lists_the_columns() -> None:
    Path("data").mkdir()
    Path("data/m.csv").write_text(
        "Shipment,HAWB,Action,Packages,Gross weight,Party\nshp_7Hk2Lm,h1,ISL,4,40.5,rpty_p1\n"
    )
    manifest = movement_sheet_manifest("data/m.csv").replace(
        '"{{ row.Packages }}"', '"{{ row.Packets | int }}"'
    )
    finding = only(load_text(manifest), "template.undefined")
    assert "the row has no column 'Packets'" in finding.message
    assert finding.hint.startswith("Did you mean 'Packages'? The columns of the row are: ")


def test_an_unknown_filter_suggests_the_closest() -> None:
    spec = '  commercialReference: "{{ values.dest_office | uper }}"\n'
    finding = only(load_text(_departure(VALUES, spec)), "template.error")
    assert "No filter named 'uper'" in finding.message
    assert finding.hint == "Did you mean 'upper'? Only Jinja's built-in filters are available."


def test_an_item_past_the_end_of_a_list_says_how_many_there_are() -> None:
    _with_template("a: 1\nb: {{ values.offices[2] }}\n")
    values = "values: {offices: [DE004073, NL000396]}\n"
    finding = only(load_text(_departure("template: t\n" + values)), "template.undefined")
    assert finding.message.startswith("values.offices has no item 2 (it has 2)")


UNDEFINED_USES = {
    "tojson": "{{ values.offfice | tojson }}",
    "tojson inside a mapping": "{{ {'office': values.offfice} | tojson }}",
    "tojson inside a list": "{{ [values.offfice] | tojson }}",
    "upper": "{{ values.offfice | upper }}",
    "length": "{{ values.offfice | length }}",
    "int": "{{ values.offfice | int }}",
    "abs": "{{ values.offfice | abs }}",
    "round": "{{ values.offfice | round }}",
    "join": "{{ values.offfice | join(',') }}",
    "sort": "{{ [values.offfice, 1] | sort }}",
    "arithmetic": "{{ values.offfice + 1 }}",
    "arithmetic on the right": "{{ 1 * values.offfice }}",
    "concatenation": "{{ 'DE' ~ values.offfice }}",
    "percent format": "{{ '%d' % values.offfice }}",
    "negation": "{{ -values.offfice }}",
    "equality": "{{ values.offfice == 'DE004073' }}",
    "ordering": "{{ values.offfice < 3 }}",
    "in an empty list": "{{ values.offfice in [] }}",
    "in a text": "{{ values.offfice in 'DE004073' }}",
    "not in": "{{ values.offfice not in ['x'] }}",
    "containing": "{{ 'DE' in values.offfice }}",
    "iteration": "{% for c in values.offfice %}{{ c }}{% endfor %}",
    "attribute": "{{ values.offfice.code }}",
    "item": "{{ values.offfice[0] }}",
    "condition": "{% if values.offfice %}DE004073{% endif %}",
}


@pytest.mark.parametrize("expression", UNDEFINED_USES.values(), ids=UNDEFINED_USES.keys())
def test_every_use_of_a_misspelt_key_is_the_same_finding_with_did_you_mean(
    expression: str,
) -> None:
    _with_template(f"type: DEPARTURE\n\ndestinationOffice: {expression}\n")
    result = load_text(_departure("template: t\n" + VALUES))
    finding = only(result, "template.undefined")
    # The plain case's finding: the key, where the values came from, the closest key.
    assert finding.message == "values has no key 'offfice' (template used at m.yaml:4)"
    assert finding.hint.startswith("Did you mean 'dest_office'? The keys of values are: ")
    assert finding.location.file == "templates/t.yaml.j2"
    assert finding.location.line == 3
    assert finding.location.column == expression.index("values.offfice") + 20
    assert [f.rule for f in result.findings if f.rule.startswith("template")] == [
        "template.undefined"
    ]


@pytest.mark.parametrize(
    "expression",
    ["{{ values.offfice | default('DE004073') | tojson }}", "{{ values.offfice is defined }}"],
)
def test_asking_whether_a_value_is_defined_is_not_an_error(expression: str) -> None:
    _with_template(f"type: DEPARTURE\ndestinationOffice: {expression}\n")
    result = load_text(_departure("template: t\n" + VALUES))
    assert not [f for f in result.findings if f.rule.startswith("template")]


@pytest.mark.parametrize(
    "expression", ["{{ values.offfice | tojson }}", "{{ values.offfice in [] }}"]
)
def test_a_misspelt_key_used_in_a_document_string_is_named(expression: str) -> None:
    spec = f'  commercialReference: "{expression}"\n'
    finding = only(load_text(_departure(VALUES, spec)), "template.undefined")
    assert finding.message == f"in '{expression}': values has no key 'offfice'"
    assert finding.hint.startswith("Did you mean 'dest_office'?")


def test_a_missing_column_through_tojson_lists_the_columns() -> None:
    Path("data").mkdir()
    Path("data/m.csv").write_text(
        "Shipment,HAWB,Action,Packages,Gross weight,Party\nshp_7Hk2Lm,h1,ISL,4,40.5,rpty_p1\n"
    )
    manifest = movement_sheet_manifest("data/m.csv").replace(
        '"{{ row.Packages }}"', '"{{ row.Packets | tojson }}"'
    )
    finding = only(load_text(manifest), "template.undefined")
    assert "the row has no column 'Packets'" in finding.message
    assert finding.hint.startswith("Did you mean 'Packages'? The columns of the row are: ")


def test_a_missing_column_in_a_template_of_a_for_each_names_the_manifest() -> None:
    _with_template("partyId: rpty_1\nquantity: {{ row.Packets | tojson }}\n")
    Path("data").mkdir()
    Path("data/m.csv").write_text(
        "Shipment,HAWB,Action,Packages,Gross weight,Party\nshp_7Hk2Lm,h1,ISL,4,40.5,rpty_p1\n"
    )
    manifest = (
        movement_sheet_manifest("data/m.csv")
        .replace('  partyId: "{{ row.Party }}"\n', "")
        .replace('  quantity: "{{ row.Packages }}"\n', "")
        .replace("metadata:", "template: t\nmetadata:")
    )
    finding = only(load_text(manifest), "template.undefined")
    assert finding.message == "the row has no column 'Packets' (template used at m.yaml:4)"
    assert finding.hint.startswith("Did you mean 'Packages'? The columns of the row are: ")
    assert (finding.location.file, finding.location.line) == ("templates/t.yaml.j2", 2)


@pytest.mark.parametrize(
    ("tag", "what"),
    [
        ("{% include values %}", "not a mapping"),
        ("{% include [values] %}", "not a mapping"),
        ("{% include none %}", "not none"),
        ("{% extends values %}", "not a mapping"),
        ("{% import 5 as v %}", "not the number 5"),
        ("{% from values import x %}", "not a mapping"),
    ],
)
def test_a_template_name_that_is_not_text_says_so(tag: str, what: str) -> None:
    _with_template(f"a: 1\n{tag}\n")
    finding = only(load_text(_departure("template: t\n" + VALUES)), "template.error")
    assert finding.message.startswith(
        "include, import and extends take a template's name as text, such as "
        f"'road/t1.yaml.j2' (or a list of such names), {what}"
    )
    assert finding.location.line == 2
    for python in ("KeyError", "unhashable", "split", "empty list"):
        assert python not in finding.message
