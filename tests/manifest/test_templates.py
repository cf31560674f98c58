"""Templates: lookup, merge under spec, errors with file and line, bounded renders."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from customs_batch.manifest import LoadResult, load_file
from customs_batch.manifest.jinja import _engine
from customs_batch.manifest.templates import _render
from tests.manifest.helpers import ENVELOPE, load_text, only, rules, write


def departure(extra: str, spec: str = "  commercialReference: R-1\n", name: str = "d1") -> str:
    return f"{ENVELOPE}kind: DepartureDeclaration\nmetadata: {{name: {name}}}\n{extra}spec:\n{spec}"


def user_template(name: str, text: str) -> None:
    write(Path("customs-batch.yaml"), "default_environment: local\n")
    write(Path("templates") / f"{name}.yaml.j2", text)


def test_the_built_in_t1_road_template_fills_defaults_the_document_overrides() -> None:
    values = "values: {office: DE004073, destination: NL000396, vehicle: HH-1}\n"
    spec = "  security: '1'\n  commercialReference: R-1\n"
    result = load_text(departure("template: t1-road\n" + values, spec))
    assert result.findings == []
    doc = result.documents[0]
    assert doc.template == "t1-road"
    assert doc.spec["declarationType"] == "externalTransit"
    assert doc.spec["departureOffice"] == "DE004073"
    assert doc.spec["countryOfDestination"] == "NL"
    assert doc.spec["security"] == "1"
    assert doc.spec["TransportMeans"][0]["mode"] == "DEPARTURE"
    assert doc.spec["TransportMeans"][0]["identificationNumber"] == "HH-1"
    template_position = doc.positions[("spec", "declarationType")]
    assert template_position.file.endswith("t1-road.yaml.j2")
    assert doc.positions[("spec", "security")].file == "m.yaml"


def test_the_built_in_template_group_defaults() -> None:
    text = (
        f"{ENVELOPE}kind: TemplateGroup\nmetadata: {{name: eu}}\ntemplate: eu-road-templates\n"
        "values: {office: NL000396, dispatch_countries: [DE, BE]}\n"
        "spec: {name: EU road, code: EU-ROAD, companyId: 1}\n"
    )
    result = load_text(text)
    assert result.findings == []
    templates = result.documents[0].spec["DeclarationTemplates"]
    assert [t["countryOfDispatch"] for t in templates] == ["DE", "BE"]
    assert templates[0]["declarationOffice"] == "NL000396"


def test_mappings_merge_recursively_and_lists_are_replaced() -> None:
    user_template(
        "base",
        "Principal: {name: Default, countryCode: NO}\nDeclarationItems: [{description: a}, {description: b}]\n",
    )
    spec = "  Principal: {name: Mine}\n  DeclarationItems: [{description: c}]\n"
    doc = load_text(departure("template: base\n", spec)).documents[0]
    assert doc.spec["Principal"] == {"name": "Mine", "countryCode": "NO"}
    assert doc.spec["DeclarationItems"] == [{"description": "c"}]


def test_template_output_is_typed_by_the_spec_schema() -> None:
    user_template("typed", "security: 0\ntotalWeight: 10\nPrincipal: {postcode: 0150}\n")
    spec = load_text(departure("template: typed\n")).documents[0].spec
    assert (spec["security"], spec["totalWeight"], spec["Principal"]["postcode"]) == (
        "0",
        10,
        "0150",
    )


def test_a_user_template_wins_over_a_built_in_one_of_the_same_name() -> None:
    user_template("t1-road", "procedureType: D3\n")
    assert load_text(departure("template: t1-road\n")).documents[0].spec["procedureType"] == "D3"


def test_templates_are_found_from_the_project_root_above_the_manifest() -> None:
    user_template("base", "procedureType: D2\n")
    path = write(Path("manifests/deep/m.yaml"), departure("template: base\n"))
    assert load_file(path).documents[0].spec["procedureType"] == "D2"


def test_a_missing_template_names_the_folders_searched() -> None:
    finding = only(load_text(departure("template: nope\n")), "template.not-found")
    assert "nope.yaml.j2" in finding.message
    assert finding.location.line == 4


def test_a_template_name_cannot_leave_the_templates_folder() -> None:
    assert rules(load_text(departure("template: ../secret\n"))) == ["template.not-found"]


_NOT_A_PATH = "Write the name of a template, not a path: its file under templates/ without"


@pytest.mark.parametrize("name", ["../secret", "/etc/passwd"])
def test_a_path_as_template_name_is_not_told_to_create_that_file(name: str) -> None:
    finding = only(load_text(departure(f"template: {name}\n")), "template.not-found")
    assert finding.hint.startswith(_NOT_A_PATH)
    assert "Create templates/" not in finding.hint


def test_a_path_as_template_name_under_for_each_is_not_told_to_create_that_file() -> None:
    write(Path("a.csv"), "Reference\nR-1\n")
    text = departure("template: /etc/passwd\nforEach: {file: a.csv}\n")
    finding = only(load_text(text), "template.not-found")
    assert finding.hint.startswith(_NOT_A_PATH)


def test_a_template_name_with_its_suffix_is_told_to_drop_it() -> None:
    finding = only(load_text(departure("template: t1-road.yaml.j2\n")), "template.not-found")
    assert finding.hint == "Write the name without .yaml.j2: `template: t1-road`."


def test_a_syntax_error_names_the_template_file_and_line() -> None:
    user_template("broken", "a: 1\nb: {% if %}\n")
    result = load_text(departure("template: broken\n"))
    finding = only(result, "template.error")
    assert finding.location.file.endswith("broken.yaml.j2")
    assert finding.location.line == 2
    assert "m.yaml:4" in finding.message
    assert result.documents == []


def test_an_undefined_variable_names_the_template_line() -> None:
    user_template("needs", "a: 1\n\nb: {{ values.office }}\n")
    finding = only(load_text(departure("template: needs\n")), "template.undefined")
    assert finding.location.line == 3
    assert "office" in finding.message


def test_a_runtime_error_names_the_template_line() -> None:
    user_template("divide", "a: 1\nb: {{ 1 // 0 }}\n")
    finding = only(load_text(departure("template: divide\n")), "template.error")
    assert finding.location.line == 2


def test_a_template_must_render_a_mapping() -> None:
    user_template("list", "- a\n- b\n")
    assert rules(load_text(departure("template: list\n"))) == ["template.not-mapping"]


def test_invalid_yaml_from_a_template_names_the_template() -> None:
    user_template("badyaml", "a: [\n")
    finding = only(load_text(departure("template: badyaml\n")), "yaml.syntax")
    assert finding.location.file.endswith("badyaml.yaml.j2")


def test_an_endless_loop_ends_with_a_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_engine, "RENDER_SECONDS", 0.2)
    user_template(
        "loop", "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}\n"
    )
    finding = only(load_text(departure("template: loop\n")), "template.timeout")
    assert finding.location.line == 1


def test_endless_recursion_ends_with_a_finding() -> None:
    user_template("recurse", "{% macro f() %}{{ f() }}{% endmacro %}a: {{ f() }}\n")
    assert (
        "recursion" in only(load_text(departure("template: recurse\n")), "template.error").message
    )


def test_21_nested_for_loops_are_a_finding_at_the_21st_loop_of_the_template() -> None:
    # Python compiles at most 20 nested loops: its SyntaxError named the generated code's
    # line (91) and was reported at the manifest's `template:` line as "in the expression"
    loops = "".join(f"{{% for i{n} in [1] %}}\n" for n in range(21))
    user_template("loops", "type: DEPARTURE\n" + loops + "a: 1\n" + "{% endfor %}\n" * 21)
    finding = only(load_text(departure("template: loops\n")), "template.error")
    assert finding.location.file == str(Path("templates") / "loops.yaml.j2")
    assert finding.location.line == 22
    assert "20 {% for %} loops" in finding.message
    assert "SyntaxError" not in finding.message and "Indentation" not in finding.message


def test_blocks_nested_past_python_s_indentation_are_a_finding_at_the_template() -> None:
    ifs = "{% if 1 %}\n" * 120
    user_template("ifs", ifs + "a: 1\n" + "{% endif %}\n" * 120)
    finding = only(load_text(departure("template: ifs\n")), "template.error")
    assert finding.location.file == str(Path("templates") / "ifs.yaml.j2")
    assert 1 < finding.location.line <= 120
    assert "nests too deeply" in finding.message and "Indentation" not in finding.message


def test_brackets_nested_past_the_parser_are_a_finding_at_the_template_line() -> None:
    deep = "(" * 3000 + "1" + ")" * 3000
    user_template("parens", "type: DEPARTURE\n\na: {{ " + deep + " }}\n")
    finding = only(load_text(departure("template: parens\n")), "template.error")
    assert finding.location.file == str(Path("templates") / "parens.yaml.j2")
    assert finding.location.line == 3
    assert "nests too deeply" in finding.message and "endless recursion" not in finding.message


@pytest.mark.parametrize(
    "text",
    ["{{ " + "(" * 3000 + "1" + ")" * 3000 + " }}", "{% if 1 %}" * 120 + "R" + "{% endif %}" * 120],
)
def test_an_expression_nested_too_deeply_in_a_manifest_says_so(text: str) -> None:
    finding = only(load_text(departure("", f"  commercialReference: '{text}'\n")), "template.error")
    assert finding.location.file == "m.yaml" and finding.location.line == 5
    assert "the expression nests too deeply" in finding.message
    assert "recursion" not in finding.message and "Indentation" not in finding.message


def test_huge_output_ends_with_a_finding() -> None:
    user_template("huge", "{% for a in range(100000) %}{{ 'x' * 1000 }}{% endfor %}\n")
    assert rules(load_text(departure("template: huge\n"))) == ["template.too-large"]


def test_the_sandbox_refuses_unsafe_attributes() -> None:
    user_template("escape", "a: {{ values.__class__.__mro__ }}\n")
    finding = only(load_text(departure("template: escape\n")), "template.error")
    assert "unsafe" in finding.message


def test_references_written_by_a_template_are_found_unless_overridden() -> None:
    user_template(
        "refs",
        "commercialReference: ${ref:Movement/m1.movementId}\nsecurity: ${ref:Movement/m2.status}\n",
    )
    doc = load_text(departure("template: refs\n", "  security: '0'\n")).documents[0]
    assert [str(r.target) for r in doc.references] == ["Movement/m1"]


def test_an_endless_loop_ends_off_the_main_thread_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_engine, "RENDER_SECONDS", 0.2)
    user_template(
        "loop", "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}\n"
    )
    path = write(Path("m.yaml"), departure("template: loop\n"))
    with ThreadPoolExecutor(1) as pool:
        result = pool.submit(load_file, path).result(timeout=60)
    assert rules(result) == ["template.timeout"]


def test_a_template_linked_out_of_the_template_folders_is_refused() -> None:
    # `ln -s /proc/self/environ templates/leak.j2` would put the API key into a finding.
    secret = Path("outside.txt")
    secret.write_text("CUSTOMS_API_KEY=very-secret\n")
    user_template("t", 'a: 1\nloadingLocation: "{% include "leak.j2" %}"\n')
    Path("templates/leak.j2").symlink_to(secret.resolve())
    Path("templates/env.yaml.j2").symlink_to("/proc/self/environ")
    for name in ("t", "env"):
        result = load_text(departure(f"template: {name}\n"))
        assert result.documents == []
        finding = only(result, "template.error")
        assert "outside the template folders" in finding.message
        assert "very-secret" not in finding.message
        assert "PATH=" not in finding.message


def test_a_template_linked_within_the_template_folders_is_read() -> None:
    user_template("real", "loadingLocation: Rotterdam\n")
    Path("templates/alias.yaml.j2").symlink_to("real.yaml.j2")
    result = load_text(departure("template: alias\n"))
    assert result.findings == []
    assert result.documents[0].spec["loadingLocation"] == "Rotterdam"


def test_a_template_output_over_the_value_bound_is_told_as_such(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CUSTOMS_BATCH_MAX_DOCUMENT_VALUES", "100")
    user_template("many", "{% for i in range(200) %}k{{ i }}: {{ i }}\n{% endfor %}")
    finding = only(load_text(departure("template: many\n")), "yaml.too-large")
    assert finding.message.startswith(
        "the template's output: the document at line 1 holds 401 YAML values, more than 100"
    )
    assert finding.location.file.endswith("many.yaml.j2")


@pytest.mark.parametrize(
    "statement",
    ['{% include "../customs-batch.yaml" %}', "{% import values.file as c %}"],
)
def test_an_include_with_dot_dot_says_why_it_is_not_found(statement: str) -> None:
    # The finding's message was the name alone: "../customs-batch.yaml".
    user_template("leak", "type: DEPARTURE\n" + statement + "\n")
    values = 'values: {file: "../../../etc/passwd"}\n'
    finding = only(load_text(departure("template: leak\n" + values)), "template.error")
    assert finding.location.file == str(Path("templates") / "leak.yaml.j2")
    assert finding.location.line == 2
    assert "not found: templates are read only from the template folders" in finding.message
    assert "a name with '..' is never found" in finding.message


def test_a_template_that_includes_itself_is_named_as_a_cause_of_endless_recursion() -> None:
    # The message only asked about "a macro calling itself".
    user_template("again", "type: DEPARTURE\n{% include 'again.yaml.j2' %}\n")
    finding = only(load_text(departure("template: again\n")), "template.error")
    assert "endless recursion" in finding.message
    assert "a template that includes itself" in finding.message


def test_a_template_printing_a_generator_is_a_finding_at_its_line() -> None:
    user_template("gen", "type: DEPARTURE\ncommercialReference: {{ values.refs | map('upper') }}\n")
    values = "values: {refs: [a, b]}\n"
    result = load_text(departure("template: gen\n" + values, "  security: '0'\n"))
    finding = only(result, "template.error")
    assert finding.location.file == str(Path("templates") / "gen.yaml.j2")
    assert finding.location.line == 2
    assert "add `| list`" in finding.message


LOOP = "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}"


def test_a_template_that_runs_out_of_time_is_not_rendered_for_every_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Found by an outside probe: each row rendered the template again and waited out the
    # whole time of a render (a sheet of 10,000 rows would have taken 14 hours).
    monkeypatch.setattr(_engine, "RENDER_SECONDS", 0.2)
    user_template("loop", f"name: g-{{{{ values.r }}}}{LOOP}\ncode: C\ncompanyId: 1\n")
    write(Path("rows.csv"), "Ref\n" + "".join(f"r{n}\n" for n in range(5)))
    result = load_text(
        f"{ENVELOPE}kind: TemplateGroup\nforEach: {{file: rows.csv}}\n"
        'metadata: {name: "g-{{ row_number }}"}\ntemplate: loop\n'
        'values: {r: "{{ row.Ref }}"}\nspec: {}\n'
    )
    # Said once for the manifest each: the rows after the second are not rendered.
    messages = [f.message for f in result.findings if f.rule == "template.timeout"]
    assert len(messages) == 2, result.findings
    assert messages[0].startswith("rendering took longer than 0.2 seconds")
    assert messages[1].startswith("not rendered: rendering this template took longer than 0.2")


def test_an_expression_that_runs_out_of_time_is_not_rendered_for_every_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_engine, "RENDER_SECONDS", 0.2)
    write(Path("customs-batch.yaml"), "default_environment: local\n")
    write(Path("rows.csv"), "Ref\n" + "".join(f"r{n}\n" for n in range(4)))
    result = load_text(
        f"{ENVELOPE}kind: TemplateGroup\nforEach: {{file: rows.csv}}\n"
        'metadata: {name: "g-{{ row_number }}"}\n'
        f'spec: {{name: "g-{{{{ row.Ref }}}}{LOOP}", code: C, companyId: 1}}\n'
    )
    messages = [f.message for f in result.findings if f.location.path == ("spec", "name")]
    assert len(messages) == 4, result.findings
    assert ["not rendered" in m for m in messages] == [False, False, True, True], messages


@pytest.mark.parametrize("name", ["rotterdam export", "Straße", "road:t1"])
def test_a_name_with_a_character_no_name_takes_is_not_called_a_path(name: str) -> None:
    finding = only(load_text(departure(f"template: {name}\n")), "template.not-found")
    assert not finding.hint.startswith(_NOT_A_PATH), "the name is no path: the hint was untrue"
    assert "letters A-Z and a-z, digits" in finding.hint
    assert "Create templates/" not in finding.hint


@pytest.mark.parametrize("name", ["./t1-road", "road\\\\t1", "road//t1", "C:/t/t1", "~/t1"])
def test_a_name_written_as_any_path_is_told_so(name: str) -> None:
    finding = only(load_text(departure(f"template: '{name}'\n")), "template.not-found")
    assert finding.hint.startswith(_NOT_A_PATH)


DENSE = "x: [{% for i in range(1000) %}{{ i % 10 }},{% endfor %}]\n"
"""A template printing 2,000 characters, each value with a mark placing it (and each ',')."""


def test_the_output_bound_counts_the_users_characters_not_the_marks_placing_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 0.8 MB of one-digit values was refused as "longer than 10,000,000 characters".
    monkeypatch.setattr(_render, "MAX_OUTPUT_CHARS", 10_000)
    user_template("dense", DENSE)
    result = load_text(departure("template: dense\n"))
    assert "template.too-large" not in rules(result), result.findings
    assert len(result.documents[0].spec["x"]) == 1000


def test_the_marked_output_has_its_own_bound_and_words(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_render, "MAX_MARKED_CHARS", 20_000)
    monkeypatch.setattr(_engine, "MAX_MARKED_CHARS", 20_000)
    user_template("dense", DENSE)
    finding = only(load_text(departure("template: dense\n")), "template.too-large")
    assert finding.message.startswith(
        "the rendered output, with the marks that place each of its values and lines at its "
        "template line (one per expression and per line of text, each holding the template's "
        "name), is longer than 20,000 characters"
    )
    assert finding.hint is not None and "fewer, larger values" in finding.hint


@pytest.mark.parametrize(
    ("included", "rule", "line", "column", "said"),
    [
        ("a: 1\nloadingLocation: {{ values.nope }}\n", "template.undefined", 2, 21, "values has"),
        ("a: 1\nloadingLocation: {{ values.office \n", "template.error", 2, 1, "syntax error"),
        ("a: 1\nloadingLocation: {{ 1 / 0 }}\n", "template.error", 2, 1, "division by zero"),
    ],
)
def test_an_error_in_an_included_template_is_placed_in_that_template(
    included: str, rule: str, line: int, column: int, said: str
) -> None:
    # A syntax error in the included file was placed at line 1 of the template including
    # it; an undefined value, at the include (and said "the mapping has no key").
    user_template("outer", "type: DEPARTURE\n\n{% include 'inner.j2' %}\n")
    write(Path("templates") / "inner.j2", included)
    finding = only(load_text(departure("template: outer\nvalues: {office: X}\n")), rule)
    assert finding.location.file == str(Path("templates") / "inner.j2")
    assert (finding.location.line, finding.location.column) == (line, column)
    assert said in finding.message
    assert "(template used at m.yaml:" in finding.message


def _group(name: str, template: str = "group") -> str:
    values = f"values: {{name: {name!r}}}\n"
    return (
        f"{ENVELOPE}kind: TemplateGroup\nmetadata: {{name: g1}}\ntemplate: {template}\n{values}"
        "spec: {code: G-1, companyId: 1, DeclarationTemplates: [{procedureType: H1}]}\n"
    )


def test_a_value_an_expression_prints_is_never_cut_short_by_a_hash_yaml_reads_as_a_comment() -> (
    None
):
    # `name: {{ values.name }}` printing `Acme #1 imports` was read by YAML as `Acme` and a
    # comment: the group was sent as "Acme", without a word.
    user_template("group", "# the group's name\nname: {{ values.name }}  # from values\n")
    finding = only(load_text(_group("Acme #1 imports")), "template.comment-in-value")
    assert finding.location.file.endswith("group.yaml.j2")
    assert (finding.location.line, finding.location.column) == (2, 10)
    assert "'Acme #1 imports'" in finding.message and "'Acme'" in finding.message
    assert "| tojson" in finding.hint


def test_a_hash_inside_a_word_or_a_quoted_value_is_text_and_no_finding() -> None:
    user_template("group", 'name: {{ values.name }}\ncode: "{{ values.name }}"\n')
    result = load_text(_group("Acme#1 imports"))
    assert result.findings == []
    assert result.documents[0].spec["name"] == "Acme#1 imports"
    user_template("quoted", "name: {{ values.name | tojson }}\n")
    result = load_text(_group("Acme #1 imports", "quoted"))
    assert result.findings == []
    assert result.documents[0].spec["name"] == "Acme #1 imports"


def _groups_over_sheet() -> LoadResult:
    """A template group per row of data/g.csv (Code, Name), its name printed by the
    template ``group`` from ``values.name``."""
    manifest = (
        f"{ENVELOPE}kind: TemplateGroup\nforEach: {{file: data/g.csv}}\n"
        'metadata: {name: "g-{{ row.Code }}"}\ntemplate: group\n'
        'values: {name: "{{ row.Name }}"}\n'
        "spec: {code: G-1, companyId: 1, DeclarationTemplates: [{procedureType: H1}]}\n"
    )
    return load_file(write(Path("m.yaml"), manifest))


def test_under_for_each_the_row_whose_value_is_cut_short_is_named_and_gives_no_document() -> None:
    user_template("group", "name: {{ values.name }}\n")
    write(Path("data/g.csv"), "Code,Name\nG1,Acme imports\nG2,Acme #2 imports\n")
    result = _groups_over_sheet()
    finding = only(result, "template.comment-in-value")
    assert (finding.location.file, finding.location.row) == ("data/g.csv", 3)
    assert finding.location.path == ("spec", "name")
    assert "templates/group.yaml.j2, line 1" in finding.message
    assert [doc.name for doc in result.documents] == ["g-G1"]


def test_a_sensitive_value_cut_short_is_not_quoted() -> None:
    user_template("guarantee", "DeclarationGuarantees:\n  - accessCode: {{ values.code }}\n")
    result = load_text(departure("template: guarantee\nvalues: {code: 'ab #cd'}\n"))
    finding = only(result, "template.comment-in-value")
    assert finding.location.path == ("spec", "DeclarationGuarantees", 0, "accessCode")
    assert "ab" not in finding.message and finding.sensitive


def test_under_for_each_a_template_output_that_is_no_yaml_names_the_first_row_giving_it() -> None:
    # Reported once for the manifest, at the template line: which of thousands of rows
    # printed the text YAML could not read was not said.
    user_template("group", "name: {{ values.name }}\n")
    write(Path("data/g.csv"), "Code,Name\nG1,Acme imports\nG2,Acme: imports\n")
    finding = only(_groups_over_sheet(), "yaml.syntax")
    assert finding.message.endswith("(first given by row 3 of data/g.csv)")
    assert "| tojson" in finding.hint
