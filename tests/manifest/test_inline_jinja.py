"""Jinja in the document's own metadata.name, values and spec strings."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.manifest.helpers import ENVELOPE, load_text, only, write

DOC = f"""{ENVELOPE}kind: DepartureDeclaration
metadata:
  name: "dep-{{{{ values.n }}}}"
values:
  n: 7
  weight: 12.5
  label: "lane-{{{{ values.n }}}}"
spec:
  totalWeight: "{{{{ values.weight * 2 }}}}"
  DeclarationItems:
    - quantity: "{{{{ values.n }}}}"
      grossMass: "{{{{ values.weight }}}} kg"
      description: "{{{{ values.n }}}}"
  commercialReference: "${{ref:Movement/m1.movementId}}"
"""


def test_a_lone_expression_keeps_the_type_of_its_value() -> None:
    doc = load_text(DOC).documents[0]
    assert doc.spec["totalWeight"] == 25.0
    assert doc.spec["DeclarationItems"][0]["quantity"] == 7


def test_text_around_an_expression_makes_text() -> None:
    doc = load_text(DOC).documents[0]
    assert doc.spec["DeclarationItems"][0]["grossMass"] == "12.5 kg"
    assert doc.name == "dep-7"
    assert doc.values["label"] == "lane-7"


def test_a_string_only_field_gets_the_text_of_the_value() -> None:
    assert load_text(DOC).documents[0].spec["DeclarationItems"][0]["description"] == "7"


def test_references_are_not_jinja() -> None:
    doc = load_text(DOC).documents[0]
    assert doc.spec["commercialReference"] == "${ref:Movement/m1.movementId}"


def test_an_undefined_variable_points_at_the_string() -> None:
    text = DOC.replace("values.weight * 2", "values.missing")
    result = load_text(text)
    finding = only(result, "template.undefined")
    assert (finding.location.file, finding.location.line) == ("m.yaml", 10)
    assert finding.location.path == ("spec", "totalWeight")
    assert result.documents == []


def test_a_syntax_error_in_an_expression_is_a_finding() -> None:
    finding = only(load_text(DOC.replace("values.weight * 2", "values.weight *")), "template.error")
    assert finding.location.line == 10


def test_a_rendered_name_must_still_be_a_valid_name() -> None:
    result = load_text(DOC.replace('"dep-{{ values.n }}"', '"{{ values.label }} x"'))
    assert only(result, "envelope.name").location.path == ("metadata", "name")


def test_a_reference_beside_an_expression_is_found_once() -> None:
    text = DOC.replace(
        '"${ref:Movement/m1.movementId}"', '"${ref:Movement/m1.movementId}-{{ values.n }}"'
    )
    doc = load_text(text).documents[0]
    assert doc.spec["commercialReference"] == "${ref:Movement/m1.movementId}-7"
    assert [r.text for r in doc.references] == ["${ref:Movement/m1.movementId}"]


def test_jinja_in_a_label_is_rendered_like_the_name() -> None:
    text = DOC.replace(
        'metadata:\n  name: "dep-{{ values.n }}"\n',
        'metadata:\n  name: "dep-{{ values.n }}"\n'
        '  labels: {lane: "ham-{{ values.n }}", kept: as-is}\n',
    )
    doc = load_text(text).documents[0]
    assert doc.labels == {"lane": "ham-7", "kept": "as-is"}


def test_a_label_that_does_not_render_is_a_finding_at_the_label() -> None:
    text = DOC.replace(
        'metadata:\n  name: "dep-{{ values.n }}"\n',
        'metadata:\n  name: "dep-{{ values.n }}"\n  labels: {lane: "{{ values.nope }}"}\n',
    )
    finding = only(load_text(text), "template.undefined")
    assert finding.location.path == ("metadata", "labels", "lane")
    assert finding.location.line == 5


def _departure(spec: str) -> str:
    return (
        f"{ENVELOPE}kind: DepartureDeclaration\nmetadata: {{name: d1}}\n"
        f"values: {{refs: [a, b]}}\nspec:\n{spec}"
    )


@pytest.mark.parametrize(
    ("value", "said"),
    [
        # Printed as "<generator object sync_do_map at 0x7f...>": accepted by the free-text
        # field, sent, and different on every run.
        ("\"{{ values.refs | map('upper') }}\"", "add `| list`, or `| join(', ')`"),
        ("\"REF-{{ values.refs | map('upper') }}\"", "add `| list`"),
        ('"{{ [values.refs | reverse] }}"', "add `| list`"),
        ('"{{ values.refs.pop }}"', "call it with `pop()`"),
        ('"{{ values.items() }}"', "add `| list`"),
    ],
)
def test_an_expression_that_gives_no_value_is_a_finding_not_python_s_text(
    value: str, said: str
) -> None:
    result = load_text(_departure(f"  commercialReference: {value}\n"))
    finding = only(result, "template.error")
    assert said in finding.message and " at 0x" not in finding.message
    assert finding.location.path == ("spec", "commercialReference")
    assert not result.documents


def test_a_value_holding_a_method_is_a_finding_in_a_typed_field_too() -> None:
    result = load_text(_departure("  Consignor: \"{{ {'name': values.refs.pop} }}\"\n"))
    assert "call it with `pop()`" in only(result, "template.error").message


def test_data_in_lists_and_mappings_is_still_a_value() -> None:
    spec = (
        "  commercialReference: \"{{ values.refs | map('upper') | join('-') }}\"\n"
        "  countryOfDispatch: \"{{ [values.refs | map('upper') | list] | first | first }}\"\n"
    )
    result = load_text(_departure(spec))
    assert [f for f in result.findings if f.rule.startswith("template.")] == []
    assert result.documents[0].spec["commercialReference"] == "A-B"


@pytest.mark.parametrize("expression", ["1e308 * 10", "(1e308 * 10) - (1e308 * 10)"])
def test_an_infinite_number_is_a_finding_at_its_expression(expression: str) -> None:
    # It became null on the way: "totalWeight must be of type number, got null None".
    result = load_text(_departure(f'  totalWeight: "{{{{ {expression} }}}}"\n'))
    finding = only(result, "template.error")
    assert "not a number JSON can hold" in finding.message
    assert finding.location.path == ("spec", "totalWeight")
    assert not [f for f in result.findings if f.rule == "schema.type"]


@pytest.mark.parametrize(
    "text",
    [
        "{% include 'inc.yaml.j2' %}",
        "{% import 'inc.yaml.j2' as m %}x",
        "{% extends 'inc.yaml.j2' %}",
    ],
)
def test_include_import_or_extends_in_a_manifest_string_says_to_use_a_template(
    text: str,
) -> None:
    write(Path("templates/inc.yaml.j2"), "name: From include\n")
    result = load_text(
        f"{ENVELOPE}kind: TemplateGroup\nmetadata: {{name: g1}}\n"
        f'spec: {{name: "{text}", code: C1, companyId: 1}}\n'
    )
    finding = only(result, "template.error")
    assert "cannot include, import or extend a template ('inc.yaml.j2')" in finding.message
    assert "`template: NAME`" in finding.hint
    assert "loader" not in finding.message


def test_include_in_a_row_string_is_one_finding_at_the_manifest() -> None:
    write(Path("data/g.csv"), "Code\nA\nB\n")
    result = load_text(
        f"{ENVELOPE}kind: TemplateGroup\nforEach: {{file: data/g.csv}}\n"
        'metadata: {name: "g-{{ row.Code }}"}\n'
        'spec: {name: "{% include \'inc.yaml.j2\' %}", code: "{{ row.Code }}", companyId: 1}\n'
    )
    finding = only(result, "template.error")
    assert (finding.location.file, finding.location.path) == ("m.yaml", ("spec", "name"))
    assert "`template: NAME`" in finding.hint
