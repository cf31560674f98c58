"""Findings on values a template gave point at the template line that wrote them,
whatever whitespace control, comments and empty blocks the template uses; a value the
template copied from the document's ``values`` is reported at the manifest's value, with
that template line."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from customs_batch.cli.main import invoke
from customs_batch.commands.scaffold import TEMPLATE
from customs_batch.manifest import load_file
from customs_batch.validation.batch import validate_paths
from tests.manifest.helpers import ENVELOPE, write

BAD_OFFICE = "values: {destination_office: XX12, destination_country: DE}\n"
OFFICE_IN_MANIFEST = f"m.yaml:5:{BAD_OFFICE.index('XX12') + 1}"


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
    """The template line of the office finding (reported at the office in ``values``)."""
    path = _document(template)
    findings = [
        f for f in validate_paths([path]).findings if f.location.path[-1:] == ("destinationOffice",)
    ]
    assert findings, validate_paths([path]).findings
    assert {(f.location.file, f.location.line) for f in findings} == {("m.yaml", 5)}
    used = [f.location.used_at for f in findings]
    assert all(u is not None and u.file == "templates/t.yaml.j2" for u in used)
    assert used[0] is not None
    return used[0].line


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
    office = document.positions[("spec", "destinationOffice")]
    assert (office.file, office.line) == ("m.yaml", 5)
    assert office.used_at is not None and office.used_at.line == 4


def _validate_text(template: str) -> str:
    """The text report of ``validate`` of a document whose office comes from ``template``."""
    path = _document(template)
    with CliRunner().isolation() as (out, _, _):
        invoke(["validate", str(path)])
    return out.getvalue().decode()


def _place(template: str, text: str, *, after: str = "") -> str:
    """``templates/t.yaml.j2:LINE:COL``: 1-based, of the first ``text`` after ``after`` on
    the first line holding ``after`` (or ``text``)."""
    lines = template.splitlines()
    number = next(n for n, line in enumerate(lines, 1) if (after or text) in line)
    line = lines[number - 1]
    column = line.index(text, line.index(after) if after else 0) + 1
    return f"templates/t.yaml.j2:{number}:{column}"


OFFICE = "error[code.customs-office]: 'XX12' is not a customs office code"
COLUMN_FORMS = {
    "an expression": "destinationOffice: {{ values.destination_office }}\n",
    "an expression without spaces": "destinationOffice: {{values.destination_office}}\n",
    "an expression stripping before it": "destinationOffice: {{- '  ' }}{{ values.destination_office }}\n",
    "a comment before it on the line": "destinationOffice: {# the office #}{{ values.destination_office }}\n",
    "a comment with braces above": "{# {{ not an expression }} #}\ndestinationOffice: {{ values.destination_office }}\n",
    "a raw block above": "{% raw %}x: '{{ y }}'{% endraw %}\ndestinationOffice: {{ values.destination_office }}\n",
    "quoted braces in a tag above": "{% set x = '{{ %}' %}# {{ '}}' }}\ndestinationOffice: {{ values.destination_office }}\n",
    "whitespace control over lines": (
        "{#- a comment\n   over two lines -#}\ntype: DEPARTURE\n{%- if true %}\n"
        "destinationOffice: {{ values.destination_office }}\n{%- endif %}\n"
    ),
    "a block tag joining two lines": (
        "type: DEPARTURE\ndestinationOffice:\n{%- if true %}   {{ values.destination_office }}{% endif %}\n"
    ),
}


@pytest.mark.parametrize("template", COLUMN_FORMS.values(), ids=list(COLUMN_FORMS))
def test_a_value_an_expression_gave_points_at_the_expression(template: str) -> None:
    report = _validate_text(template + "countryOfDestination: DE\n")
    expected = _place(template, "values.destination_office")
    assert f"{OFFICE_IN_MANIFEST}: {OFFICE}" in report, report
    assert f"\n  used by the template at {expected}\n" in report, report


def test_a_literal_value_keeps_its_column_after_an_expression_and_a_comment() -> None:
    template = (
        "{#- header -#}\ndestinationOffice: {{ values.destination_office }}\n"
        "{% if true -%}\n   countryOfDestination: {# fixed #}QQ\n{%- endif %}\n"
    )
    report = _validate_text(template)
    expected = _place(template, "QQ")
    assert f"{expected}: error[code.country]: 'QQ' is not an ISO 3166-1" in report, report
    # The text report's caret stands under the value in the template's own line.
    line = template.splitlines()[3]
    caret = " " * line.index("QQ") + "^"
    assert f"\n  {line}\n  {caret}\n" in report


def test_a_value_written_around_an_expression_points_at_its_first_character() -> None:
    template = "destinationOffice: {{ '' }}XX{{ values.destination_office[2:] }}\n"
    report = _validate_text(template)
    assert f"{_place(template, 'XX')}: {OFFICE}" in report, report


def test_values_of_a_multi_line_expression_point_at_the_expression() -> None:
    template = (
        "{#- two\nlines -#}\nDeclarationGuarantees: "
        "{{ [{'guaranteeType': '1', 'guaranteeAmount': 'lots'}] | tojson(indent=2) }}\n" + BODY
    )
    report = _validate_text(template)
    # The output's third line, '    "guaranteeAmount": "lots"', is the expression's.
    where = _place(template, "[{'guaranteeType'")
    message = "DeclarationGuarantees[0].guaranteeAmount must be of type number"
    assert f"{where}: error[schema.type]: {message}" in report, report
