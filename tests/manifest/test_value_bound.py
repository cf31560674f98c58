"""A document of more YAML values than the bound (200,000) is one finding, counted while it is
composed, so that its nodes never all exist at once; its neighbours still load."""

from __future__ import annotations

import pytest

from customs_batch.errors import ConfigError
from customs_batch.manifest.yaml._compose import compose_each
from customs_batch.manifest.yaml._value_bound import (
    DEFAULT_MAX_DOCUMENT_VALUES,
    MAX_DOCUMENT_VALUES_VARIABLE,
    max_document_values,
)
from tests.manifest.helpers import load_text, movement, only, rules

GOOD = movement("  shipmentId: shp_7Hk2Lm\n", name="good")


def flow_list(items: int) -> str:
    """``x: [1, 1, ...]``: a mapping, its key, the list and ``items`` values."""
    return "x: [" + ",".join(["1"] * items) + "]\n"


def test_a_document_over_the_bound_is_one_finding_at_its_line_and_the_others_load() -> None:
    # 400,000 values on one line of 0.8 MB: before the bound, 215 MB of nodes and values.
    text = GOOD + "---\n" + flow_list(400_000) + "---\n" + GOOD.replace("good", "after")
    result = load_text(text)
    finding = only(result, "yaml.too-large")
    assert rules(result) == ["yaml.too-large"]
    assert (finding.location.line, finding.location.column) == (8, 1)
    assert finding.message == (
        "the document at line 8 holds 400,003 YAML values, more than 200,000 (every key, "
        "value, list and mapping counts); it is not read"
    )
    assert finding.hint.endswith(f"{MAX_DOCUMENT_VALUES_VARIABLE}=400003.")
    assert [doc.name for doc in result.documents] == ["good", "after"]


def test_a_document_over_the_bound_in_block_style_is_found_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(MAX_DOCUMENT_VALUES_VARIABLE, "1000")
    block = movement("".join(f"  k{i}: {i}\n" for i in range(600)), name="big")
    result = load_text(GOOD + "---\n" + block)
    assert rules(result) == ["yaml.too-large"]
    assert only(result, "yaml.too-large").document == "Movement/big"
    assert [doc.name for doc in result.documents] == ["good"]


@pytest.mark.parametrize(("items", "refused"), [(997, False), (998, True)])
def test_the_bound_counts_every_node(
    monkeypatch: pytest.MonkeyPatch, items: int, refused: bool
) -> None:
    # The mapping, its key and the list are three values: 997 items make 1,000.
    monkeypatch.setenv(MAX_DOCUMENT_VALUES_VARIABLE, "1000")
    text = "a: 1\n---\n" + flow_list(items)
    problems = [item for item in compose_each(text) if not hasattr(item, "tag")]
    assert [p.rule for p in problems] == (["yaml.too-large"] if refused else [])


def test_aliases_are_not_new_values(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MAX_DOCUMENT_VALUES_VARIABLE, "1000")
    text = "a: &l [" + ",".join(["1"] * 900) + "]\nb: [" + ",".join(["*l"] * 90) + "]\n"
    assert [item for item in compose_each(text) if not hasattr(item, "tag")] == []


def test_the_bound_the_hint_names_reads_the_document(monkeypatch: pytest.MonkeyPatch) -> None:
    # Found by a probe: the hint named twice the bound, which a document of more than that
    # still exceeded (5 values, then 10, for a movement of 20).
    monkeypatch.setenv(MAX_DOCUMENT_VALUES_VARIABLE, "1000")
    text = GOOD + "---\n" + flow_list(4321)
    finding = only(load_text(text), "yaml.too-large")
    assert "holds 4,324 YAML values, more than 1,000" in finding.message
    assert finding.hint.endswith(f"{MAX_DOCUMENT_VALUES_VARIABLE}=4324.")
    monkeypatch.setenv(MAX_DOCUMENT_VALUES_VARIABLE, "4324")
    assert "yaml.too-large" not in rules(load_text(text))  # read (no manifest: other findings)
    monkeypatch.setenv(MAX_DOCUMENT_VALUES_VARIABLE, "4323")
    assert rules(load_text(text)) == ["yaml.too-large"]


def test_a_syntax_error_after_the_bound_is_still_reported(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(MAX_DOCUMENT_VALUES_VARIABLE, "1000")
    text = flow_list(2000) + "y: [\n---\n" + GOOD
    result = load_text(text)
    assert rules(result) == ["yaml.too-large", "yaml.syntax"]
    # How many values the document holds is not known: the YAML after the bound is broken.
    assert "holds more than 1,000 YAML values" in only(result, "yaml.too-large").message
    assert [doc.name for doc in result.documents] == ["good"]


def test_the_largest_departure_loads_far_under_the_default() -> None:
    # 999 goods items (the most a transit declaration takes) of 8 fields and 5 packages of 4
    # fields each: 64,000 values, under a third of the bound, in block style.
    package = "        - {sequenceNumber: 1, typeOfPackages: PX, quantity: 2, shippingMarks: M}\n"
    item = (
        "    - description: Steel bolts\n      commodityCode: '731815'\n"
        "      originCountry: NL\n      quantity: 100\n      grossMass: 125.5\n"
        "      netWeight: 120.0\n      netPrice: 250\n      currency: EUR\n"
        "      packaging:\n" + package * 5
    )
    text = (
        "apiVersion: customs-batch/v1\nkind: DepartureDeclaration\nmetadata:\n  name: big\n"
        "spec:\n  DeclarationItems:\n" + item * 999
    )
    result = load_text(text)
    assert "yaml.too-large" not in rules(result)
    assert len(result.documents[0].spec["DeclarationItems"]) == 999


def test_the_bound_is_raised_by_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert max_document_values({}) == DEFAULT_MAX_DOCUMENT_VALUES == 200_000
    assert max_document_values({MAX_DOCUMENT_VALUES_VARIABLE: " 500000 "}) == 500_000
    monkeypatch.setenv(MAX_DOCUMENT_VALUES_VARIABLE, "500000")
    result = load_text(flow_list(400_000))
    assert "yaml.too-large" not in rules(result)


@pytest.mark.parametrize(
    "value", ["many", "0", "-5", "1e6", "200k", "\u0661\u0660", "²", "1" + "0" * 5000]
)  # 5,001 digits were an internal error (int() refuses them)
def test_a_bound_that_is_not_a_count_is_refused(value: str) -> None:
    with pytest.raises(ConfigError, match=MAX_DOCUMENT_VALUES_VARIABLE) as caught:
        max_document_values({MAX_DOCUMENT_VALUES_VARIABLE: value})
    assert "whole number" in (caught.value.hint or "")
