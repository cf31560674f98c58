"""Scalars are typed by the schema of their place, else by the YAML 1.2 core schema."""

from __future__ import annotations

import math

import pytest

from tests.manifest.helpers import ENVELOPE, load_text

DEPARTURE = f"""{ENVELOPE}kind: DepartureDeclaration
metadata: {{name: dep-1}}
spec:
  security: 0
  totalWeight: 12
  Principal: {{name: Acme, countryCode: NO, postcode: 0150}}
  DeclarationItems:
    - {{commodityCode: 03054100, quantity: 5, grossMass: 1e3, description: yes}}
"""


def test_string_only_places_keep_the_text_as_written() -> None:
    spec = load_text(DEPARTURE).documents[0].spec
    assert spec["security"] == "0"
    assert spec["Principal"]["countryCode"] == "NO"
    assert spec["Principal"]["postcode"] == "0150"
    assert spec["DeclarationItems"][0]["commodityCode"] == "03054100"
    assert spec["DeclarationItems"][0]["description"] == "yes"


def test_other_places_use_the_yaml_1_2_core_schema() -> None:
    spec = load_text(DEPARTURE).documents[0].spec
    assert spec["totalWeight"] == 12 and isinstance(spec["totalWeight"], int)
    assert spec["DeclarationItems"][0]["quantity"] == 5
    assert spec["DeclarationItems"][0]["grossMass"] == 1000.0


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("true", True),
        ("True", True),
        ("FALSE", False),
        ("yes", "yes"),
        ("no", "no"),
        ("on", "on"),
        ("off", "off"),
        ("NO", "NO"),
        ("~", None),
        ("null", None),
        ("", None),
        ("0150", "0150"),  # a code: its zero is kept (YAML 1.2 would read 150)
        ("0o17", 15),
        ("0x1F", 31),
        ("-12", -12),
        ("1.5", 1.5),
        ("-.inf", -math.inf),
        ("1:30", "1:30"),
        ("2024-01-02", "2024-01-02"),
        ("'5'", "5"),
        ('"true"', "true"),
        ("!!str 5", "5"),
        ("!!int 7", 7),
    ],
)
def test_values_without_a_schema_follow_yaml_1_2(written: str, expected: object) -> None:
    text = f"{ENVELOPE}kind: Movement\nmetadata: {{name: m}}\nvalues:\n  x: {written}\nspec: {{}}\n"
    result = load_text(text)
    assert result.findings == []
    assert result.documents[0].values["x"] == expected


def test_a_number_too_long_to_convert_stays_text() -> None:
    digits = "9" * 5000
    text = f"{ENVELOPE}kind: Movement\nmetadata: {{name: m}}\nvalues: {{x: {digits}}}\nspec: {{}}\n"
    assert load_text(text).documents[0].values["x"] == digits


def test_not_a_number_is_a_float() -> None:
    text = f"{ENVELOPE}kind: Movement\nmetadata: {{name: m}}\nvalues: {{x: .nan}}\nspec: {{}}\n"
    assert math.isnan(load_text(text).documents[0].values["x"])


def test_a_yaml_1_1_boolean_in_a_boolean_field_stays_text_for_the_schema_to_refuse() -> None:
    text = f"{ENVELOPE}kind: TemplateGroup\nmetadata: {{name: g}}\nspec: {{isDefault: yes, companyId: 1}}\n"
    spec = load_text(text).documents[0].spec
    assert spec["isDefault"] == "yes"
    assert spec["companyId"] == 1


def test_an_unsupported_tag_is_a_finding() -> None:
    text = f"{ENVELOPE}kind: Movement\nmetadata: {{name: m}}\nspec: {{x: !!binary aGk=}}\n"
    result = load_text(text)
    assert [f.rule for f in result.findings] == ["yaml.tag"]
    assert result.findings[0].location.line == 4


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("!Foo Movement", "the tag !Foo is not supported"),
        ("!local Movement", "the tag !local is not supported"),
        ("!<tag:example.com,2000:foo> Movement", "the tag !<tag:example.com,2000:foo> is not"),
        ("!!timestamp Movement", "the tag !!timestamp is not supported"),
    ],
)
def test_an_unsupported_tag_is_named_as_written_and_is_the_only_finding(
    value: str, shown: str
) -> None:
    """Not ``!!!Foo``; and the value stays as written, so that the envelope does not also
    report the kind as missing."""
    text = f"{ENVELOPE}kind: {value}\nmetadata: {{name: m}}\nspec: {{}}\n"
    findings = load_text(text).findings
    assert [(f.rule, f.location.line) for f in findings] == [("yaml.tag", 2)], findings
    assert findings[0].message.startswith(shown)


@pytest.mark.parametrize(
    ("spec", "shown"),
    [
        ("!!python/object:os.system {hawbId: hawb_1}", "!!python/object:os.system on a mapping"),
        ("!Custom {hawbId: hawb_1}", "!Custom on a mapping"),
        ("{labels: !!set {x, y}}", "!!set on a mapping"),
        ("{x: !!omap [a: 1]}", "!!omap on a list"),
        ("{x: !!python/object/apply:os.system [touch]}", "!!python/object/apply:os.system on a"),
    ],
)
def test_a_tag_on_a_mapping_or_a_list_is_a_finding_not_ignored(spec: str, shown: str) -> None:
    text = f"{ENVELOPE}kind: Movement\nmetadata: {{name: m}}\nspec: {spec}\n"
    findings = [f for f in load_text(text).findings if f.rule == "yaml.tag"]
    assert len(findings) == 1 and findings[0].location.line == 4, findings
    assert f"the tag {shown}" in findings[0].message
    # An explicit core tag of the right kind is no finding.
    plain = f"{ENVELOPE}kind: Movement\nmetadata: !!map {{name: m}}\nspec: {{x: !!seq [1]}}\n"
    assert not load_text(plain).findings


@pytest.mark.parametrize("written", ["0x" + "f" * 3_600, "0o" + "7" * 4_800, "9" * 5_000])
def test_an_integer_too_long_to_print_stays_text_for_the_schema_to_report(written: str) -> None:
    # 0x and 3,600 f is 4,335 decimal digits: Python converts it, then refuses to print it
    # (an "internal error" wherever the value was printed or hashed).
    manifest = f"{ENVELOPE}kind: Movement\nmetadata: {{name: m}}\nspec:\n  quantity: {written}\n"
    result = load_text(manifest)
    assert result.documents[0].spec["quantity"] == written
    assert load_text(manifest.replace(written, "0x" + "f" * 20)).documents[0].spec[
        "quantity"
    ] == int("f" * 20, 16)


def test_a_hex_integer_up_to_the_largest_double_is_a_number_and_past_it_text() -> None:
    # No whole number past the largest double (2**1024) is read: JSON readers make it
    # infinite (the bound of 4,300 decimal digits Python prints lies far beyond it).
    def quantity(written: str) -> object:
        manifest = (
            f"{ENVELOPE}kind: Movement\nmetadata: {{name: m}}\nspec:\n  quantity: {written}\n"
        )
        return load_text(manifest).documents[0].spec["quantity"]

    assert quantity(hex(2**1024 - 1)) == 2**1024 - 1
    assert quantity(hex(2**1024)) == hex(2**1024)
    assert quantity(hex(10**4300 - 1)) == hex(10**4300 - 1)


@pytest.mark.parametrize("written", ["~", "null", "NULL", ""])
def test_yaml_s_null_in_a_text_field_is_an_error_never_the_text_sent(written: str) -> None:
    # `city: ~` (or `city:`) was kept as the text "~" (or ""), and sent as the consignee's
    # city without a word.
    text = DEPARTURE.replace(
        "postcode: 0150}", "postcode: 0150}\n  Consignee:\n    city: " + written
    )
    spec = load_text(text).documents[0].spec
    assert spec["Consignee"]["city"] is None  # the schema check says so (test_schemas.py)


def test_a_quoted_null_word_in_a_text_field_is_that_text() -> None:
    text = DEPARTURE.replace("postcode: 0150}", "postcode: 0150}\n  Consignee: {city: 'null'}")
    assert load_text(text).documents[0].spec["Consignee"]["city"] == "null"


def test_a_number_with_a_leading_zero_in_values_is_kept_as_written() -> None:
    # `values: {zip: 01067}` filled a postcode "{{ values.zip }}" with "1067".
    text = DEPARTURE.replace("spec:\n", "values: {zip: 01067, n: 7, neg: -0150, o: 0o17}\nspec:\n")
    values = load_text(text).documents[0].values
    assert values == {"zip": "01067", "n": 7, "neg": "-0150", "o": 15}
