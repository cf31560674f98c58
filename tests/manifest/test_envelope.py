"""Envelope checks: each problem a finding, the document left out, its neighbours kept."""

from __future__ import annotations

import pytest

from customs_batch.kinds import Address, Kind
from tests.manifest.helpers import ENVELOPE, load_text, movement, only, rules

GOOD = movement("  shipmentId: shp_1\n", name="good")


def test_a_good_document_has_its_envelope_read() -> None:
    text = movement(
        "  a: 1\n",
        extra="values: {x: 1}\n",
    ).replace(
        "  name: mov-1\n", "  name: mov-1\n  dependsOn: [TemplateGroup/eu]\n  labels: {lane: 5}\n"
    )
    result = load_text(text)
    assert result.findings == []
    doc = result.documents[0]
    assert doc.address == Address(Kind.MOVEMENT, "mov-1")
    assert doc.depends_on == (Address(Kind.TEMPLATE_GROUP, "eu"),)
    assert doc.labels == {"lane": "5"}
    assert doc.values == {"x": 1}


def test_a_wrong_api_version_is_a_finding() -> None:
    finding = only(load_text(GOOD.replace("customs-batch/v1", "v2")), "envelope.api-version")
    assert finding.location.line == 1
    assert "customs-batch/v1" in finding.hint
    assert "manifests:" not in finding.hint


def test_a_yaml_file_without_an_api_version_may_be_no_manifest_at_all() -> None:
    finding = only(load_text("services:\n  web: {image: nginx}\n"), "envelope.api-version")
    assert "customs-batch/v1" in finding.hint
    assert "under 'manifests:' in customs-batch.yaml" in finding.hint


def test_an_unknown_kind_suggests_the_closest() -> None:
    finding = only(load_text(GOOD.replace("Movement", "Movment")), "envelope.kind")
    assert "Did you mean 'Movement'" in finding.hint


def test_an_unknown_key_points_at_the_key_and_spares_the_missing_spec() -> None:
    result = load_text(GOOD.replace("spec:", "specification:"))
    finding = only(result, "envelope.unknown-key")
    assert (finding.location.line, finding.location.column) == (5, 1)
    assert "Did you mean 'spec'" in finding.hint
    assert rules(result) == ["envelope.unknown-key"]


def test_a_metadata_key_beside_metadata_says_where_it_belongs() -> None:
    """The movement-order hint names `dependsOn`: written at the top of the document, as a
    reader may take it, it is told to go under `metadata:`, not just listed as unknown."""
    text = GOOD.replace("  name: good\n", "  name: good\ndependsOn: [Movement/vah]\n")
    finding = only(load_text(text), "envelope.unknown-key")
    assert finding.location.path == ("dependsOn",)
    assert "'dependsOn' belongs under 'metadata:' (metadata.dependsOn)" in finding.hint


def test_an_unknown_metadata_key_is_a_finding() -> None:
    result = load_text(GOOD.replace("  name: good\n", "  name: good\n  label: x\n"))
    assert only(result, "envelope.unknown-key").location.path == ("metadata", "label")


def test_a_name_too_long_says_so_and_the_bound() -> None:
    # It said "'nnn…' is not a document name" with a hint of rules the name keeps (letters,
    # digits, '.', '_', '-'), and never that a name has at most 200 characters.
    result = load_text(GOOD.replace("  name: good\n", f"  name: {'n' * 201}\n"))
    finding = only(result, "envelope.name")
    assert finding.message == "the name is 201 characters long, more than the 200 a name may have"
    assert "200 characters at most" in finding.hint
    assert rules(load_text(GOOD.replace("  name: good\n", f"  name: {'n' * 200}\n"))) == []
    bad = only(load_text(GOOD.replace("  name: good\n", "  name: -x\n")), "envelope.name")
    assert bad.message == "'-x' is not a document name"


def test_a_missing_name_is_a_finding() -> None:
    result = load_text(GOOD.replace("  name: good\n", "  labels: {}\n"))
    assert rules(result) == ["envelope.name"]


def test_bad_depends_on_entries_are_findings() -> None:
    text = GOOD.replace("  name: good\n", "  name: good\n  dependsOn: [Nope/x, Movement]\n")
    result = load_text(text)
    assert rules(result) == ["envelope.depends-on", "envelope.depends-on"]
    assert result.findings[1].location.path == ("metadata", "dependsOn", 1)


def test_a_bad_for_each_is_a_finding_at_the_manifest() -> None:
    text = movement("  a: 1\n", extra="forEach: {file: rows.csv, rows: 20-10, sheeet: A}\n")
    result = load_text(text)
    assert rules(result) == ["envelope.for-each", "envelope.for-each"]
    assert {f.location.path for f in result.findings} == {
        ("forEach", "sheeet"),
        ("forEach", "rows"),
    }
    assert all(f.location.file == "m.yaml" and f.location.line == 5 for f in result.findings)


def test_a_bad_envelope_leaves_out_only_its_own_document() -> None:
    result = load_text(GOOD + "---\n" + GOOD.replace("good", "bad").replace("Movement", "X"))
    assert [d.name for d in result.documents] == ["good"]
    assert only(result, "envelope.kind").document == "X/bad"


def test_a_missing_spec_without_template_is_a_finding() -> None:
    assert rules(load_text(f"{ENVELOPE}kind: Movement\nmetadata: {{name: m}}\n")) == [
        "envelope.spec"
    ]


def test_previous_names_are_read_and_bad_ones_are_findings() -> None:
    text = GOOD.replace("  name: good\n", "  name: good\n  previousNames: [old, older]\n")
    result = load_text(text)
    assert result.findings == []
    assert result.documents[0].previous_names == ("old", "older")

    bad = GOOD.replace("  name: good\n", "  name: good\n  previousNames: [Movement/old, good]\n")
    result = load_text(bad)
    assert rules(result) == ["envelope.previous-names", "envelope.previous-names"]
    assert result.findings[0].location.path == ("metadata", "previousNames", 0)
    assert result.documents == []

    rows = movement("  a: 1\n", extra="forEach: {file: rows.csv}\n").replace(
        "  name: mov-1\n", "  name: mov-1\n  previousNames: [old]\n"
    )
    assert "envelope.previous-names" in rules(load_text(rows))


def test_annotations_are_read_and_a_list_is_a_finding() -> None:
    text = GOOD.replace(
        "  name: good\n", "  name: good\n  annotations: {customs-batch/suppress: 'x: y'}\n"
    )
    result = load_text(text)
    assert result.findings == []
    assert result.documents[0].annotations == {"customs-batch/suppress": "x: y"}

    bad = GOOD.replace("  name: good\n", "  name: good\n  annotations: [a]\n")
    result = load_text(bad)
    finding = only(result, "envelope.annotations")
    assert finding.location.path == ("metadata", "annotations")
    assert result.documents == []


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("dép-1", "'é' is not one of them: letters A-Z and a-z only, without accents"),
        ("my arrival", "a space is not one of them: write '-' instead"),
        ("a/b", "'/' is not one of them"),
        (
            "hawb_a4\u00a0-4",  # a cell's trailing non-breaking space, pasted from a web page
            "a non-breaking space (U+00A0, which shows as a space or as nothing) is not one "
            "of them: remove it, or write '-' instead",
        ),
    ],
)
def test_a_name_with_a_character_no_name_takes_is_told_which(name: str, said: str) -> None:
    # The hint said a name "holds letters": é is one, to the person who wrote it.
    text = f'{ENVELOPE}kind: Movement\nmetadata: {{name: "{name}"}}\nspec: {{}}\n'
    finding = only(load_text(text), "envelope.name")
    assert finding.hint.endswith(f"; {said}.")
