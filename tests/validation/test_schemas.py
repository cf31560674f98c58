"""The shipped JSON Schemas: well formed, loader-friendly, and saying what the API says."""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest

from customs_batch.kinds import Kind
from customs_batch.kinds.model import MAX_ID_LENGTH
from customs_batch.manifest.yaml._scalars import resolve_plain
from customs_batch.resources import load_pattern_hints, load_schema, schemas_dir
from customs_batch.validation.schemas import compiled, envelope_schema, spec_schema
from tests.validation.samples import SAMPLES, sample

NAMES = ["envelope", *(kind.schema_name for kind in Kind)]
# Fields holding codes: the YAML loader must keep them strings ("0010", "DE004073").
# (documentCategory is an integer in template groups: the API document says so.)
CODE_FIELDS = {
    "countryCode", "postCode", "postcode", "commodityCode", "security", "departureOffice",
    "destinationOffice", "declarationOffice", "currency", "currencyCode", "typeCode",
    "loadingUNLocode", "unloadingUNLocode", "procedureType", "eoriNo", "guaranteeReferenceNumber",
}  # fmt: skip


def _subschemas(node: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    if isinstance(node, dict):
        yield path, node
        for key, child in node.items():
            yield from _subschemas(child, (*path, key))
    elif isinstance(node, list):
        for i, child in enumerate(node):
            yield from _subschemas(child, (*path, str(i)))


def test_every_kind_and_the_envelope_have_a_schema_file() -> None:
    files = sorted(p.name for p in schemas_dir().glob("*.schema.json"))
    assert files == sorted(f"{name}.schema.json" for name in NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_schema_is_valid_draft_2020_12_with_id_and_title(name: str) -> None:
    schema = load_schema(name)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == f"https://customs-batch.dev/schemas/{name}.schema.json"
    assert schema["title"]


@pytest.mark.parametrize("name", NAMES)
def test_schema_is_friendly_to_the_yaml_loader(name: str) -> None:
    schema = load_schema(name)
    for path, node in _subschemas(schema):
        if "$ref" in node:
            assert node["$ref"].startswith("#/$defs/"), path
            assert node["$ref"].removeprefix("#/$defs/") in schema["$defs"], path
        elif "anyOf" in node:
            kinds = [branch.get("type") or branch.get("$ref") for branch in node["anyOf"]]
            assert kinds == ["integer", "#/$defs/reference"], path
        elif path[-2:-1] == ("properties",) or path[-1:] in (("items",), ("additionalProperties",)):
            assert "type" in node, f"{name}: {'/'.join(path)} has no type"
        if path[-2:-1] == ("properties",):
            assert node.get("description"), f"{name}: {'/'.join(path)} has no description"
            if path[-1] in CODE_FIELDS:
                assert node.get("type") == "string", f"{name}: {'/'.join(path)} must be a string"


@pytest.mark.parametrize("kind", list(Kind))
def test_sample_spec_is_valid(kind: Kind) -> None:
    assert spec_schema(kind).violations(SAMPLES[kind]) == []
    assert spec_schema(kind).is_valid(SAMPLES[kind])


def test_compiled_schemas_are_cached() -> None:
    assert compiled("movement") is spec_schema(Kind.MOVEMENT)


def test_reference_pattern_matches_each_kind_and_nothing_else() -> None:
    cancel = spec_schema(Kind.EXPORT_CANCELLATION)
    for kind in Kind:
        assert cancel.is_valid({"declarationId": f"${{ref:{kind.value}/dep-1.declarationId}}"})
    for bad in ("${ref:Shipment/x.id}", "${ref:DepartureDeclaration/x}", "ref:Movement/x.id"):
        assert not cancel.is_valid({"declarationId": bad}), bad


ENVELOPE_OK = {"apiVersion": "customs-batch/v1", "kind": "Movement", "metadata": {"name": "m-1"}}


@pytest.mark.parametrize(
    ("change", "rule", "path"),
    [
        ({"apiVersion": "v2"}, "schema.const", ("apiVersion",)),
        ({"kind": "Shipment"}, "schema.enum", ("kind",)),
        ({"metadata": {"name": "-bad"}}, "schema.pattern", ("metadata", "name")),
        ({"metadata": {"name": "x" * 201}}, "schema.max-length", ("metadata", "name")),
        ({"metadata": {"name": "a", "dependsOn": ["Movement"]}}, "schema.pattern", ("metadata", "dependsOn", 0)),
        ({"metadata": {"name": "a", "labels": {"lane": 3}}}, "schema.type", ("metadata", "labels", "lane")),
        ({"metadata": {}}, "schema.required", ("metadata",)),
        ({"specs": {}}, "schema.additional-property", ("specs",)),
    ],
)  # fmt: skip
def test_envelope_violations(change: dict[str, Any], rule: str, path: tuple[Any, ...]) -> None:
    violations = envelope_schema().violations({**ENVELOPE_OK, **change})
    assert [(v.rule, v.path) for v in violations] == [(rule, path)]


def test_envelope_accepts_a_full_document_without_spec() -> None:
    document = {
        **ENVELOPE_OK,
        "metadata": {"name": "m.1", "dependsOn": ["TemplateGroup/eu-road"], "labels": {"a": "b"}},
        "template": "t1-road",
        "values": {"office": "DE004073"},
        "forEach": {"file": "data.xlsx"},
    }
    assert envelope_schema().violations(document) == []


@pytest.mark.parametrize(
    ("kind", "changes", "rule", "path"),
    [
        (Kind.MOVEMENT, {"action": "XXX"}, "schema.enum", ("action",)),
        (Kind.MOVEMENT, {"customsSupervision": "yes"}, "schema.enum", ("customsSupervision",)),
        (Kind.MOVEMENT, {"goodsHandlingCode": "Z"}, "schema.enum", ("goodsHandlingCode",)),
        (Kind.MOVEMENT, {"quantity": 1.5}, "schema.type", ("quantity",)),
        (Kind.MOVEMENT, {"quantity": -1}, "schema.minimum", ("quantity",)),
        (Kind.MOVEMENT, {"shipmentId": "1001"}, "schema.pattern", ("shipmentId",)),
        (Kind.MOVEMENT, {"hawbId": "hawb-a1"}, "schema.pattern", ("hawbId",)),
        (Kind.MOVEMENT, {"partyId": "pty_1"}, "schema.pattern", ("partyId",)),
        (Kind.MOVEMENT, {"shipmentId": None}, "schema.required", ()),
        (Kind.MOVEMENT, {"processType": "IMPORT_HANDLING"}, "schema.additional-property", ("processType",)),
        (Kind.MOVEMENT, {"idempotencyKey": "k"}, "schema.additional-property", ("idempotencyKey",)),
        (Kind.MOVEMENT, {"customsDeclaration": {"source": "INTERNAL", "declarationId": "q9"}}, "schema.pattern", ("customsDeclaration", "declarationId")),
        (Kind.MOVEMENT, {"customsDeclaration": {"source": "OTHER"}}, "schema.enum", ("customsDeclaration", "source")),
        (Kind.DEPARTURE_DECLARATION, {"type": "ARRIVAL"}, "schema.const", ("type",)),
        (Kind.DEPARTURE_DECLARATION, {"procedureType": "D5"}, "schema.enum", ("procedureType",)),
        (Kind.DEPARTURE_DECLARATION, {"totalWeight": "130"}, "schema.type", ("totalWeight",)),
        (Kind.DEPARTURE_DECLARATION, {"companyId": "${ref:TemplateGroup/g.id}"}, "schema.type", ("companyId",)),
        (Kind.DEPARTURE_DECLARATION, {"DeclarationItems": []}, "schema.min-items", ("DeclarationItems",)),
        (Kind.DEPARTURE_DECLARATION, {"Principal": {"nam": "A"}}, "schema.additional-property", ("Principal", "nam")),
        (Kind.DEPARTURE_DECLARATION, {"goodsLocationAddress": {}}, "schema.required", ("goodsLocationAddress",)),
        (Kind.TEMPLATE_GROUP, {"isDefault": "yes"}, "schema.type", ("isDefault",)),
        (Kind.TEMPLATE_GROUP, {"DeclarationTemplates": [{"incoterms": "DAP"}]}, "schema.additional-property", ("DeclarationTemplates", 0, "incoterms")),
        (Kind.TRANSIT_PARTY_UPDATE, {"variant": "arrivals"}, "schema.enum", ("variant",)),
        (Kind.TRANSIT_PARTY_UPDATE, {"declarationId": "4711"}, "schema.type", ("declarationId",)),
        (Kind.TRANSIT_PARTY_UPDATE, {"Principal": {}}, "schema.min-properties", ("Principal",)),
        (Kind.HAWB_DEACTIVATION, {"hawbId": None}, "schema.required", ()),
        (Kind.EXPORT_CANCELLATION, {"declarationId": 0}, "schema.minimum", ("declarationId",)),
        (Kind.EXPORT_CANCELLATION, {"declarationId": 2**63}, "schema.maximum", ("declarationId",)),
        (Kind.EXPORT_CANCELLATION, {"declarationId": 1.5}, "schema.type", ("declarationId",)),
        (Kind.EXPORT_CANCELLATION, {"declarationId": "${ref:Movement/m}"}, "schema.pattern", ("declarationId",)),
        (Kind.DEPARTURE_DECLARATION, {"companyId": 0}, "schema.minimum", ("companyId",)),
        (Kind.TEMPLATE_GROUP, {"companyId": 10**20}, "schema.maximum", ("companyId",)),
        (Kind.MOVEMENT, {"customsDeclaration": {"source": "EXTERNAL", "documentType": "X", "declarationType": " ", "declarationNumber": "INV-1"}}, "schema.min-length", ("customsDeclaration", "declarationType")),
        (Kind.TEMPLATE_GROUP, {"name": "  "}, "schema.min-length", ("name",)),
        (Kind.DEPARTURE_DECLARATION, {"commercialReference": "\t "}, "schema.min-length", ("commercialReference",)),
    ],
)  # fmt: skip
def test_spec_violations(
    kind: Kind, changes: dict[str, Any], rule: str, path: tuple[Any, ...]
) -> None:
    violations = spec_schema(kind).violations(sample(kind, **changes))
    assert [(v.rule, v.path) for v in violations] == [(rule, path)]
    assert violations[0].message and violations[0].hint


def test_a_text_of_only_spaces_where_a_value_is_needed_says_so() -> None:
    """Such a text passed the schema's count of characters and was sent."""
    (blank,) = spec_schema(Kind.TEMPLATE_GROUP).violations(sample(Kind.TEMPLATE_GROUP, code=" "))
    assert blank.message == "code holds only spaces"
    assert blank.hint.startswith("write the value (")
    padded = sample(Kind.TEMPLATE_GROUP, code=" G1 ", name="Group ")
    assert spec_schema(Kind.TEMPLATE_GROUP).violations(padded) == []  # text within: the rules'


def test_violation_messages_and_hints_tell_what_to_do() -> None:
    movement = spec_schema(Kind.MOVEMENT)
    (enum,) = movement.violations(sample(Kind.MOVEMENT, action="VAX"))
    assert "'VAX'" in enum.message and enum.hint == "use one of: VAH, VAB, ISL, USL, ISC, USC"
    (missing,) = movement.violations(sample(Kind.MOVEMENT, grossWeightKg=None))
    assert missing.message == 'missing required field "grossWeightKg"'
    assert missing.hint.startswith('add "grossWeightKg": Gross weight')
    (typo,) = movement.violations(sample(Kind.MOVEMENT, hawbID="hawb_a1"))
    assert typo.message == 'unknown field "hawbID"' and 'did you mean "hawbId"?' in typo.hint


@pytest.mark.parametrize("name", NAMES)
def test_every_pattern_is_told_in_words_with_an_example(name: str) -> None:
    hints = load_pattern_hints()
    for path, node in _subschemas(load_schema(name)):
        if "pattern" in node and isinstance(node["pattern"], str):
            hint = hints.get(node["pattern"])
            assert hint is not None, f"{name}: {'/'.join(path)}: add its pattern to patterns.json"
            assert re.fullmatch(node["pattern"], hint["example"]), hint
            assert hint["is"] and hint["form"]


@pytest.mark.parametrize("name", [kind.schema_name for kind in Kind])
def test_every_integer_has_the_bounds_the_service_takes(name: str) -> None:
    for path, node in _subschemas(load_schema(name)):
        if node.get("type") == "integer":
            assert node.get("maximum") == 2**63 - 1, f"{name}: {'/'.join(path)}"
            assert "minimum" in node, f"{name}: {'/'.join(path)}"


def test_a_pattern_violation_says_what_a_valid_value_looks_like() -> None:
    (found,) = spec_schema(Kind.MOVEMENT).violations(sample(Kind.MOVEMENT, partyId="party-1"))
    assert found.message == (
        "partyId: 'party-1' is not an RTO party ID (rpty_ followed by letters and digits)"
    )
    assert found.hint == "write it like rpty_p1"
    assert "[A-Za-z0-9]" not in found.message + found.hint


@pytest.mark.parametrize(
    ("party", "hint"),
    [
        ("rpty_p1 ", "remove a space at its end"),
        ("\u00a0rpty_p1", "remove a non-breaking space at its start"),
        (" rpty_p1\u00a0", "remove the spaces at its start and end"),
    ],
)
def test_a_value_that_fits_but_for_a_space_is_told_to_lose_the_space(party: str, hint: str) -> None:
    """A cell's trailing space (a non-breaking one pasted from a web page too) does not show
    in the sheet: "write it like rpty_p1" named nothing to change."""
    (found,) = spec_schema(Kind.MOVEMENT).violations(sample(Kind.MOVEMENT, partyId=party))
    assert found.hint == f"{hint} (in the cell or the manifest, where it does not show)"


PREFIXED_ID = re.compile(r"\^[a-z]+_\[A-Za-z0-9\]\+\$")


@pytest.mark.parametrize("name", NAMES)
def test_every_prefixed_id_has_the_length_bound_get_and_import_take(name: str) -> None:
    # A shipmentId of 100 KB had the form of one: sent, it failed as "URL too long".
    for path, node in _subschemas(load_schema(name)):
        if PREFIXED_ID.fullmatch(str(node.get("pattern", ""))):
            assert node.get("maxLength") == MAX_ID_LENGTH, f"{name}: {'/'.join(path)}"


def test_a_text_too_long_is_told_by_its_length_not_echoed_whole() -> None:
    long_id = "shp_" + "a" * 100_000
    (found,) = spec_schema(Kind.MOVEMENT).violations(sample(Kind.MOVEMENT, shipmentId=long_id))
    assert found.rule == "schema.max-length"
    assert found.message == (
        f"shipmentId: 'shp_{'a' * 52}... is 100,004 characters long; an RTO shipment ID has "
        "at most 128"
    )
    assert found.hint.startswith("write a shorter value")
    assert spec_schema(Kind.MOVEMENT).is_valid(sample(Kind.MOVEMENT, shipmentId="shp_" + "a" * 124))


def test_a_number_out_of_bounds_names_the_bound() -> None:
    cancel = spec_schema(Kind.EXPORT_CANCELLATION)
    (low,) = cancel.violations(sample(Kind.EXPORT_CANCELLATION, declarationId=-5))
    assert low.message == "declarationId must be at least 1, got -5"
    (high,) = cancel.violations(sample(Kind.EXPORT_CANCELLATION, declarationId=10**23))
    assert high.message == (
        "declarationId must be at most 9223372036854775807, got 100000000000000000000000"
    )
    assert high.hint.startswith("write a number from 1 to 9223372036854775807")


def test_integer_or_reference_accepts_both() -> None:
    update = spec_schema(Kind.TRANSIT_PARTY_UPDATE)
    reference = "${ref:DepartureDeclaration/dep-ham-0001.declarationId}"
    assert update.is_valid(sample(Kind.TRANSIT_PARTY_UPDATE, declarationId=reference))
    assert update.is_valid(sample(Kind.TRANSIT_PARTY_UPDATE, declarationId=7))


def test_schema_files_are_plain_utf8_json() -> None:
    """Each file is the loaded schema, but for the lists of kinds filled in when loaded."""

    def without_kind_lists(node: Any) -> Any:
        if isinstance(node, dict):
            filled = {"enum", "pattern"} if "x-kinds" in node else set()
            return {k: without_kind_lists(v) for k, v in node.items() if k not in filled}
        if isinstance(node, list):
            return [without_kind_lists(v) for v in node]
        return node

    for name in NAMES:
        text = (schemas_dir() / f"{name}.schema.json").read_text(encoding="utf-8")
        assert json.loads(text) == without_kind_lists(load_schema(name))


def test_values_json_cannot_hold_become_violations_not_tracebacks() -> None:
    movement = spec_schema(Kind.MOVEMENT)
    spec = sample(Kind.MOVEMENT, shipmentId=datetime.date(2024, 1, 2), quantity=b"3")
    spec["customsDeclaration"][1] = "x"
    violations = [(v.rule, v.path) for v in movement.violations(spec)]
    assert ("schema.type", ("shipmentId",)) in violations
    assert ("schema.type", ("quantity",)) in violations
    assert ("schema.type", ("customsDeclaration",)) in violations
    assert not movement.is_valid(spec)


@pytest.mark.parametrize("number", [float("inf"), float("-inf"), float("nan")])
def test_a_number_json_cannot_hold_is_named_once_at_its_field(number: float) -> None:
    # YAML's .inf, .nan and 1e400 reached the validator as null: "grossWeightKg must be of
    # type number, got null None".
    spec = {**SAMPLES[Kind.MOVEMENT], "grossWeightKg": number}
    violations = spec_schema(Kind.MOVEMENT).violations(spec)
    assert [(v.rule, v.path) for v in violations] == [("schema.not-finite", ("grossWeightKg",))]
    assert "is not a number JSON can hold" in violations[0].message
    assert "null" not in violations[0].message


@pytest.mark.parametrize(
    ("kind", "field", "written", "size"),
    [
        (Kind.MOVEMENT, "quantity", "1" * 5000, "5,000 digits"),
        (Kind.MOVEMENT, "grossWeightKg", "-" + "9" * 4400, "4,400 digits"),
    ],
)
def test_a_yaml_number_too_long_to_read_is_said_to_be_one(
    kind: Kind, field: str, written: str, size: str
) -> None:
    # The loader keeps it as its text: "quantity must be of type number, got string '1111…".
    spec = sample(kind, **{field: resolve_plain(written)})
    (violation,) = spec_schema(kind).violations(spec)
    assert violation.path == (field,)
    assert violation.message == f"{field} is a number of {size}, too long to read (at most 4,300)"
    assert violation.hint.startswith("write a shorter number")


def test_a_quoted_text_of_digits_in_a_text_field_is_no_number_too_long() -> None:
    spec = sample(Kind.MOVEMENT, hawbId="1" * 5000)
    assert all(
        "too long to read" not in v.message for v in spec_schema(Kind.MOVEMENT).violations(spec)
    )


@pytest.mark.parametrize(
    ("kind", "field", "written", "size"),
    [
        (Kind.DEPARTURE_DECLARATION, "totalWeight", "1" + "0" * 400, " of 401 digits"),
        (Kind.DEPARTURE_DECLARATION, "totalWeight", "-1" + "0" * 400, " of 401 digits"),
        (Kind.EXPORT_CANCELLATION, "declarationId", "9" * 309, " of 309 digits"),
        (Kind.TRANSIT_PARTY_UPDATE, "declarationId", "0x" + "f" * 4000, ""),
    ],
)
def test_a_whole_number_beyond_any_float_is_not_finite_once(
    kind: Kind, field: str, written: str, size: str
) -> None:
    # `totalWeight: 1` and 400 zeros passed the schema, then the mass rule said
    # "internal error: OverflowError: int too large to convert to float". The loader keeps
    # it as its text, which the schema names as the number it is, once.
    spec = sample(kind, **{field: resolve_plain(written)})
    violations = spec_schema(kind).violations(spec)
    assert [(v.rule, v.path) for v in violations] == [("schema.not-finite", (field,))]
    assert violations[0].message == (
        f"{field} is a number{size}, beyond the largest number JSON readers hold (about 1.8e308)"
    )


def test_the_largest_whole_number_a_double_holds_is_still_read() -> None:
    assert resolve_plain(str(2**1024 - 1)) == 2**1024 - 1
    assert resolve_plain(str(2**1024)) == str(2**1024)


def test_a_null_in_a_field_says_it_is_empty_and_how_to_leave_it_out() -> None:
    # YAML's null (`hawbId: ~`, `hawbId:`) read "hawbId must be of type string, got null
    # None": neither what was wrong nor that deleting the line leaves the field out.
    spec = {**SAMPLES[Kind.MOVEMENT], "hawbId": None}
    violations = spec_schema(Kind.MOVEMENT).violations(spec)
    assert [(v.rule, v.path) for v in violations] == [("schema.type", ("hawbId",))]
    assert violations[0].message == "hawbId is empty (YAML's null), and it must be of type string"
    assert "delete its line" in violations[0].hint


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("60.5", "without quotes"),
        ("60", "without quotes"),
        ("60,5", "decimal point"),
        ("1.234,5", "decimal point"),
        ("1,234.5", "commas that group thousands"),
    ],
)
def test_a_number_written_as_text_is_told_how_to_write_it(written: str, said: str) -> None:
    # `grossWeightKg: "60.5"` or `grossWeightKg: 60,5` had the hint "write a number": the
    # person had, as they saw it.
    spec = {**SAMPLES[Kind.MOVEMENT], "grossWeightKg": written}
    (violation,) = spec_schema(Kind.MOVEMENT).violations(spec)
    assert violation.rule == "schema.type"
    assert said in violation.hint
    assert written not in violation.hint
