"""What validate checks of a kind is its model's: every sort of code and every rule set a
model may name has its check in validation, and validation asks the model, not the kind."""

from __future__ import annotations

import dataclasses

import pytest

from customs_batch.findings import Finding, Severity
from customs_batch.kinds import Kind
from customs_batch.kinds.checks import CodeSort, RuleSet
from customs_batch.kinds.registry import KINDS
from customs_batch.manifest.document import Document
from customs_batch.resources import kind_schema
from customs_batch.validation import rules
from customs_batch.validation.code_fields import CODE_RULES, check_code_fields
from tests.validation._documents import make_document
from tests.validation.samples import sample


def test_every_sort_of_code_has_its_check_under_a_code_rule_id() -> None:
    assert set(CODE_RULES) == set(CodeSort)
    for sort, code in CODE_RULES.items():
        # A transport means' mode is checked apart (it also takes two-digit codes) under
        # the rule id of every transport mode.
        shared = {CodeSort.TRANSPORT_MEANS_MODE: CodeSort.TRANSPORT_MODE}
        assert code.rule == f"code.{shared.get(sort, sort).value}"


def test_every_rule_set_has_its_function() -> None:
    assert set(rules.RULE_SETS) == set(RuleSet)


@pytest.mark.parametrize("kind", list(Kind))
def test_every_code_field_of_a_model_is_a_field_of_its_schema(kind: Kind) -> None:
    schema = kind_schema(kind)
    for pattern, _sort in KINDS[kind].code_fields:
        node = schema
        for part in pattern:
            node = node["items"] if part == "*" else node["properties"][part]
            while "$ref" in node:
                node = schema["$defs"][node["$ref"].removeprefix("#/$defs/")]
        assert node.get("type") == "string" or "anyOf" in node, (kind, pattern)


@pytest.fixture
def movement_checked_as_a_departure(monkeypatch: pytest.MonkeyPatch) -> list[Document]:
    """The registry with the movement's model naming a departure's checks, the departure's
    rule set counting the documents it is asked about."""
    changed = dataclasses.replace(
        KINDS[Kind.MOVEMENT],
        code_fields=((("currency",), CodeSort.CURRENCY),),
        rules=(*KINDS[Kind.MOVEMENT].rules, RuleSet.DEPARTURE),
    )
    monkeypatch.setattr("customs_batch.kinds.registry.KINDS", {**KINDS, Kind.MOVEMENT: changed})
    asked: list[Document] = []

    def departure_rules(document: Document, check_digits: Severity | None) -> list[Finding]:
        asked.append(document)
        return []

    monkeypatch.setitem(rules.RULE_SETS, RuleSet.DEPARTURE, departure_rules)
    return asked


def test_validation_asks_the_model_which_checks_apply(
    movement_checked_as_a_departure: list[Document],
) -> None:
    document = make_document(Kind.MOVEMENT, {**sample(Kind.MOVEMENT), "currency": "eur"})
    (finding,) = check_code_fields(document)
    assert finding.rule == "code.currency"
    found = rules.check_rules(document, hs_codes=None, unlocodes=None)
    assert "code.currency" in {f.rule for f in found}
    assert movement_checked_as_a_departure == [document]
