"""Findings on values a template gave point at the template line that wrote them,
whatever whitespace control, comments and empty blocks the template uses."""

from __future__ import annotations

from pathlib import Path

import pytest

from customs_batch.cli._scaffold import TEMPLATE
from customs_batch.manifest import load_file
from customs_batch.validation.batch import validate_paths
from tests.manifest.helpers import ENVELOPE, write

BAD_OFFICE = "values: {destination_office: XX12, destination_country: DE}\n"


def _document(template: str) -> Path:
    write(Path("customs-batch.yaml"), "default_environment: local\n")
    write(Path("templates/t.yaml.j2"), template)
    return write(
        Path("m.yaml"),
        f"{ENVELOPE}kind: DepartureDeclaration\nmetadata: {{name: d1}}\ntemplate: t\n"
        f"{BAD_OFFICE}spec:\n  commercialReference: R-1\n",
    )


def _line_of(template: str, text: str) -> int:
    return next(n for n, line in enumerate(template.splitlines(), 1) if text in line)


def _office_finding_line(template: str) -> int:
    path = _document(template)
    findings = [
        f for f in validate_paths([path]).findings if f.location.path[-1:] == ("destinationOffice",)
    ]
    assert findings, validate_paths([path]).findings
    assert {f.location.file for f in findings} == {"templates/t.yaml.j2"}
    return findings[0].location.line


def test_the_template_init_writes_reports_at_its_own_lines() -> None:
    assert _office_finding_line(TEMPLATE) == _line_of(TEMPLATE, "destinationOffice:")


BODY = "destinationOffice: {{ values.destination_office }}\ncountryOfDestination: DE\n"
FORMS = {
    "a comment stripping both sides": "{#- a comment\n   over two lines -#}\ntype: DEPARTURE\n",
    "a comment without stripping": "{# a comment\n   over two lines #}\ntype: DEPARTURE\n",
    "a statement stripping before": "type: DEPARTURE\n\n\n{%- if true %}\nsecurity: '0'\n{%- endif %}\n",
    "a statement stripping after": "type: DEPARTURE\n{% if true -%}\n\n  \nsecurity: '0'\n{% endif -%}\n",
    "an if that renders nothing": "type: DEPARTURE\n{% if false %}\nsecurity: '0'\nmore: 1\n{% endif %}\n",
    "an expression stripping": "type: DEPARTURE\n\n{{- '\\nsecurity: \"0\"' }}\n\n\n",
    "a set block and a macro": (
        "{% set note %}\nline\nline\n{% endset %}\n{% macro m() %}\nx\n{% endmacro %}\n"
        "type: DEPARTURE\n"
    ),
    "a raw block": "{% raw %}\n{% endraw %}\ntype: DEPARTURE\n",
}


@pytest.mark.parametrize("head", FORMS.values(), ids=list(FORMS))
def test_each_whitespace_control_form_keeps_the_template_lines(head: str) -> None:
    template = head + BODY
    assert _office_finding_line(template) == _line_of(template, "destinationOffice:")


def test_a_value_from_a_multi_line_expression_points_at_the_expression() -> None:
    template = (
        "{#- two\nlines -#}\nDeclarationGuarantees: {{ [{'guaranteeType': 'X'}] | tojson(indent=2) }}\n"
        + BODY
    )
    path = _document(template)
    result = load_file(path)
    (document,) = result.documents
    assert document.positions[("spec", "DeclarationGuarantees", 0, "guaranteeType")].line == 3
    assert document.positions[("spec", "destinationOffice")].line == 4
