"""forEach: an empty cell is no value; it is never written as the text ``None``."""

from __future__ import annotations

from pathlib import Path

from customs_batch.findings import Finding
from customs_batch.manifest import LoadResult, load_file
from tests.manifest.helpers import ENVELOPE, write

TEMPLATE = (
    "DeclarationTemplates:\n"
    "  - procedureType: H1\n"
    "    incoterm: DAP\n"
    "    incotermLocation: {{ values.loc }}\n"
    "    customsWarehouseID: \"{{ values.wh | default('W0') }}\"\n"
)


def _group(
    csv: str, *, name: str = "g-{{ row.Code }}", spec_name: str = "N-{{ row.Code }}"
) -> LoadResult:
    write(Path("customs-batch.yaml"), "default_environment: local\n")
    write(Path("templates/loc.yaml.j2"), TEMPLATE)
    write(Path("data/g.csv"), csv)
    manifest = (
        f"{ENVELOPE}kind: TemplateGroup\n"
        "forEach: {file: data/g.csv}\n"
        f'metadata: {{name: "{name}"}}\n'
        "template: loc\n"
        'values: {loc: "{{ row.Loc }}", wh: "{{ row.Wh }}"}\n'
        f'spec: {{name: "{spec_name}", code: "{{{{ row.Code }}}}", companyId: 1}}\n'
    )
    return load_file(write(Path("m.yaml"), manifest))


def _at(finding: Finding) -> tuple[str, int, str | None]:
    return (finding.rule, finding.location.line, finding.location.column_name)


def test_an_empty_cell_leaves_its_value_out_of_values() -> None:
    result = _group("Code,Loc,Wh\nA,Rotterdam,\n")
    assert result.findings == []
    (document,) = result.documents
    assert document.values == {"loc": "Rotterdam"}  # the empty Wh cell: no value
    (template,) = document.spec["DeclarationTemplates"]
    assert template["customsWarehouseID"] == "W0"  # the template's own default


def test_a_template_that_needs_a_value_of_an_empty_cell_is_an_error_at_that_cell() -> None:
    result = _group("Code,Loc,Wh\nA,Rotterdam,W1\nB,,W2\n")
    assert [d.name for d in result.documents] == ["g-A"]
    (finding,) = result.findings
    assert _at(finding) == ("row.empty-cell", 3, "Loc")
    assert "values.loc" in finding.message and "line 4" in finding.message
    assert finding.document == "TemplateGroup/g-B"


def test_an_empty_cell_inside_a_text_is_an_error_never_the_word_none() -> None:
    result = _group("Code,Loc,Wh\nA,Rotterdam,W1\nB,,W2\n", spec_name="N-{{ row.Loc }}")
    assert [d.spec["name"] for d in result.documents] == ["N-Rotterdam"]
    found = sorted(_at(f) for f in result.findings)
    assert ("row.empty-cell", 3, "Loc") in found
    text = next(f for f in result.findings if f.location.path == ("spec", "name"))
    assert text.message == "the cell is empty, and 'N-{{ row.Loc }}' needs it"


def test_an_empty_cell_in_the_name_is_an_error_at_that_cell() -> None:
    result = _group("Code,Loc,Wh\n,Rotterdam,W1\n", name="g-{{ row.Code }}-{{ row.Loc }}")
    assert result.documents == []
    assert [(*_at(f), f.location.path) for f in result.findings] == [
        ("row.empty-cell", 2, "Code", ("metadata", "name")),
        ("row.empty-cell", 2, "Code", ("spec", "name")),
    ]


def test_an_expression_printing_an_empty_cell_in_a_text_is_an_error() -> None:
    result = _group("Code,Loc,Wh\nA,,W1\n", spec_name="N-{{ row.Loc | string }}{{ row.Loc }}")
    assert result.documents == []
    assert [(*_at(f), f.location.path) for f in result.findings] == [
        ("row.empty-cell", 2, "Loc", ("spec", "name")),
    ], result.findings
    kept = _group("Code,Loc,Wh\nA,,W1\n", spec_name="N-{{ row.Loc | default('x', true) }}")
    assert kept.findings[0].location.path == ("template",)  # values.loc still needed
    assert all(f.location.path != ("spec", "name") for f in kept.findings)


def test_a_value_left_out_by_an_empty_cell_is_not_taken_for_one_never_given() -> None:
    # Renders are remembered by the values' text: {wh: W1} without loc is the same text
    # whether an empty cell left loc out or the document never gave it.
    in_row = _group("Code,Loc,Wh\nB,,W1\n")
    assert [_at(f) for f in in_row.findings] == [("row.empty-cell", 2, "Loc")]
    write(
        Path("one.yaml"),
        (
            f"{ENVELOPE}kind: TemplateGroup\nmetadata: {{name: one}}\ntemplate: loc\n"
            "values: {wh: W1}\nspec: {name: One, code: ONE, companyId: 1}\n"
        ),
    )
    (finding,) = load_file(Path("one.yaml")).findings
    assert finding.rule == "template.undefined" and "no key 'loc'" in finding.message
    again = _group("Code,Loc,Wh\nB,,W1\n")
    assert [_at(f) for f in again.findings] == [("row.empty-cell", 2, "Loc")]


def test_a_filter_or_an_operator_never_makes_an_empty_cell_a_text_or_a_number() -> None:
    # Found in review: `row.x | upper` gave 'NONE' (`| string`, `~` gave 'None', `| int` 0)
    # for an empty cell, sent as the declaration's value.
    for expression in (
        "{{ row.Loc | upper }}",
        "{{ row.Loc | upper | default('x', true) }}",
        "{{ row.Loc | string }}",
        "{{ row.Loc ~ '' }}",
        "{{ row.Loc | int }}",
        "{{ row.Loc | replace('a', 'b') }}",
        "{{ row.Loc | trim }}",
        "{{ row.Loc + 1 }}",
    ):
        result = _group("Code,Loc,Wh\nA,,W1\n", spec_name=expression)
        assert result.documents == [], expression
        assert [(*_at(f), f.location.path) for f in result.findings] == [
            ("row.empty-cell", 2, "Loc", ("spec", "name")),
        ], (expression, result.findings)


def test_an_empty_cell_is_still_no_value_to_tests_defaults_and_lone_expressions() -> None:
    for expression, name in (
        ("{{ row.Wh | default('x') }}", "x"),  # replaced, as an undefined value is
        ("{{ row.Wh | default('x', true) | upper }}", "X"),
        ("{{ 'none' if row.Wh is none else 'some' }}", "none"),
        ("{{ 'none' if row.Wh == none else 'some' }}", "none"),
        ("{{ row.Wh or 'y' }}", "y"),
        ("{{ row | tojson }}", '{"Code": "A", "Loc": "R", "Wh": null}'),
    ):
        result = _group("Code,Loc,Wh\nA,R,\n", spec_name=expression)
        names = [d.spec["name"] for d in result.documents]
        assert names == [name], (expression, result.findings)


def test_a_template_that_makes_an_empty_cell_text_is_an_error_at_the_cell() -> None:
    # Found by an outside probe: a template reading `row.Loc | upper` over an empty cell
    # said "EmptyCell in the expression at line 4: Loc", once for the sheet, at no cell.
    loud = TEMPLATE.replace("{{ values.loc }}", "{{ row.Loc | upper }}")
    write(Path("templates/loud.yaml.j2"), loud)
    _group("Code,Loc,Wh\nA,Rotterdam,W1\nB,,W2\n")  # the project, with the template loc
    write(Path("m.yaml"), Path("m.yaml").read_text().replace("template: loc", "template: loud"))
    again = load_file(Path("m.yaml"))
    assert [d.name for d in again.documents] == ["g-A"]
    (finding,) = again.findings
    assert _at(finding) == ("row.empty-cell", 3, "Loc"), finding
    assert "EmptyCell" not in finding.message and "the template" in finding.message


def test_default_none_keeps_an_empty_cell_no_value() -> None:
    # `default(none) | upper` gave "NONE": None made text by the filter.
    result = _group("Code,Loc,Wh\nA,R,\n", spec_name="{{ row.Wh | default(none) | upper }}")
    assert result.documents == []
    assert [_at(f) for f in result.findings] == [("row.empty-cell", 2, "Wh")]
