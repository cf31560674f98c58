"""Label selectors: kubectl's grammar parsed into requirements, and how each matches."""

from __future__ import annotations

import pytest

from customs_batch.errors import UsageError
from customs_batch.selector import LabelSelector, Operator, Requirement


def test_each_form_parses_into_its_requirement() -> None:
    selector = LabelSelector.parse("a=1, b==2,c!=3,d in (x, y),e notin (z),f,!g,h=,in=notin")
    assert selector.requirements == (
        Requirement("a", Operator.EQUALS, frozenset({"1"})),
        Requirement("b", Operator.EQUALS, frozenset({"2"})),
        Requirement("c", Operator.NOT_EQUALS, frozenset({"3"})),
        Requirement("d", Operator.IN, frozenset({"x", "y"})),
        Requirement("e", Operator.NOT_IN, frozenset({"z"})),
        Requirement("f", Operator.EXISTS),
        Requirement("g", Operator.DOES_NOT_EXIST),
        Requirement("h", Operator.EQUALS, frozenset({""})),
        Requirement("in", Operator.EQUALS, frozenset({"notin"})),
    )


@pytest.mark.parametrize(
    ("text", "labelled", "unlabelled"),
    [
        ("lane=ham", [True, False], False),
        ("lane!=ham", [False, True], True),
        ("lane in (ham,rtm)", [True, True], False),
        ("lane notin (ham)", [False, True], True),
        ("lane", [True, True], False),
        ("!lane", [False, False], True),
        ("lane,lane!=rtm", [True, False], False),
    ],
)
def test_a_missing_label_matches_only_the_negative_forms(
    text: str, labelled: list[bool], unlabelled: bool
) -> None:
    selector = LabelSelector.parse(text)
    assert [selector.matches({"lane": value}) for value in ("ham", "rtm")] == labelled
    assert selector.matches({"team": "road"}) is unlabelled


def test_repeated_selectors_must_all_hold() -> None:
    selector = LabelSelector.parse_all(["lane", "team=road"])
    assert selector is not None and selector.text == "lane,team=road"
    assert selector.matches({"lane": "x", "team": "road"})
    assert not selector.matches({"lane": "x"})
    assert LabelSelector.parse_all([]) is None


@pytest.mark.parametrize("text", ["lane in ham", "a b", "(a)", "a=b)", "!", "a!=(", "a<1"])
def test_malformed_selectors_are_usage_errors(text: str) -> None:
    with pytest.raises(UsageError, match="is not a label selector"):
        LabelSelector.parse(text)
