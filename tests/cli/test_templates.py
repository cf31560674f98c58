"""``customs-batch templates list|show``, and the warning for a template hiding a built-in."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from customs_batch.cli.main import invoke
from customs_batch.resources import builtin_templates_dir
from tests.manifest.helpers import ENVELOPE, load_text, only, write


def _cli(*args: str) -> tuple[int, str, str]:
    with CliRunner().isolation() as (out, err, _):
        code = invoke(list(args))
    return code, out.getvalue().decode(), err.getvalue().decode()


def _project_template(name: str, text: str) -> None:
    write(Path("customs-batch.yaml"), "default_environment: local\n")
    write(Path("templates") / f"{name}.yaml.j2", text)


def test_list_names_every_built_in_template_with_its_summary() -> None:
    code, out, _ = _cli("templates", "list")
    assert code == 0
    lines = out.splitlines()
    builtins = sorted(p.name.removesuffix(".yaml.j2") for p in builtin_templates_dir().iterdir())
    assert [line.split()[0] for line in lines] == builtins
    assert any(
        line.startswith("t1-road") and "built-in" in line and "T1 transit departure" in line
        for line in lines
    )


def test_list_puts_the_project_template_first_and_marks_the_hidden_built_in() -> None:
    _project_template("t1-road", "{#- Our own T1 defaults -#}\ntype: DEPARTURE\n")
    _project_template("rotterdam", "# Rotterdam departures\ntype: DEPARTURE\n")
    code, out, _ = _cli("templates", "list")
    assert code == 0
    assert "rotterdam          project           Rotterdam departures" in out
    t1 = [line for line in out.splitlines() if "t1-road" in line or "hides" in line]
    assert t1[0].split() == ["t1-road", "project", "Our", "own", "T1", "defaults"]
    assert "warning: hides the built-in template t1-road" in t1[1]
    assert t1[2].startswith("t1-road            built-in, hidden")


def test_show_prints_the_template_that_is_used_and_says_where_it_is() -> None:
    code, out, err = _cli("templates", "show", "t1-road")
    assert code == 0
    assert out == (builtin_templates_dir() / "t1-road.yaml.j2").read_text(encoding="utf-8")
    assert err.startswith("# built-in template ")
    _project_template("t1-road", "type: DEPARTURE\n")
    code, out, err = _cli("templates", "show", "t1-road")
    assert (code, out) == (0, "type: DEPARTURE\n")
    assert "hides the built-in" in err


def test_show_of_an_unknown_name_suggests_the_closest() -> None:
    code, out, err = _cli("templates", "show", "t1-rod")
    assert code != 0
    assert out == ""
    assert "error: no template named 't1-rod'" in err
    assert "did you mean 't1-road'?" in err
    assert "Traceback" not in err


def test_show_of_an_unknown_name_is_a_usage_error() -> None:
    # It exited 3, as for a template file that cannot be read; the name typed is the mistake.
    assert _cli("templates", "show", "nope")[0] == 64


def test_a_project_template_hiding_a_built_in_gives_a_warning_at_the_document() -> None:
    _project_template("t1-road", "type: DEPARTURE\n")
    manifest = (
        f"{ENVELOPE}kind: DepartureDeclaration\nmetadata: {{name: d1}}\ntemplate: t1-road\n"
        "spec:\n  commercialReference: R-1\n"
    )
    finding = only(load_text(manifest), "template.shadows-built-in")
    assert finding.severity.value == "warning"
    assert finding.location.line == 4
    assert "is used instead of the built-in template 't1-road'" in finding.message
    assert "Rename the project template" in finding.hint


def test_no_warning_for_a_template_of_its_own_name() -> None:
    _project_template("rotterdam", "type: DEPARTURE\n")
    manifest = (
        f"{ENVELOPE}kind: DepartureDeclaration\nmetadata: {{name: d1}}\ntemplate: rotterdam\n"
        "spec:\n  commercialReference: R-1\n"
    )
    assert [f.rule for f in load_text(manifest).findings if f.rule.startswith("template")] == []


def test_show_of_a_template_linked_out_of_the_project_is_refused_as_validate_refuses_it() -> None:
    # `ln -s /proc/self/environ templates/leak.yaml.j2` must not print the API key.
    _project_template("rotterdam", "type: DEPARTURE\n")
    Path("templates/leak.yaml.j2").symlink_to("/proc/self/environ")
    code, out, err = _cli("templates", "show", "leak")
    assert (code, out) == (3, "")
    assert "templates/leak.yaml.j2: the template resolves to /proc/" in err
    assert "outside the template folders" in err
    assert "hint: copy the template into templates/" in err
    assert "PATH=" not in err and "internal error" not in err
    code, out, _ = _cli("templates", "list")
    assert code == 0 and "PATH=" not in out
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("leak"))
    assert lines[at].split() == ["leak", "project,", "refused"]
    assert lines[at + 1].split()[:2] == [
        "refused:",
        f"{Path.cwd() / 'templates' / 'leak.yaml.j2'}:",
    ]
    assert "outside the template folders" in lines[at + 1]
    assert "rotterdam          project" in out


def test_show_of_a_template_that_is_not_utf8_says_so() -> None:
    write(Path("customs-batch.yaml"), "default_environment: local\n")
    Path("templates").mkdir()
    Path("templates/bad.yaml.j2").write_bytes(b"{# \xff #}\nx: 1\n")
    code, out, err = _cli("templates", "show", "bad")
    assert (code, out) == (3, "")
    assert "templates/bad.yaml.j2: cannot read the template ('utf-8' codec" in err
    assert "hint: save the template as UTF-8 text" in err
    assert "internal error" not in err
    code, out, _ = _cli("templates", "list")
    assert code == 0
    assert [line.split() for line in out.splitlines() if line.startswith("bad")] == [
        ["bad", "project,", "refused"]
    ]


def test_a_template_file_no_document_can_name_is_listed_as_refused() -> None:
    _project_template("road eu", "{# EU road group defaults #}\nisDefault: true\n")
    _project_template("zoll-ü", "{# Zoll #}\nisDefault: true\n")
    code, out, _ = _cli("templates", "list")
    assert code == 0
    lines = out.splitlines()
    at = next(n for n, line in enumerate(lines) if line.startswith("road eu"))
    assert lines[at].split() == ["road", "eu", "project,", "refused"]
    assert "'road eu' is not a template name" in lines[at + 1]
    assert "rename the file, e.g. to road-eu.yaml.j2" in lines[at + 1]
    assert any(line.startswith("zoll-ü") and "refused" in line for line in lines)
    code, out, err = _cli("templates", "show", "road eu")
    assert (code, out) == (3, "")
    assert "so no document's template: can name it" in err
    assert "isDefault" not in err


def test_a_project_folder_that_does_not_exist_is_a_usage_error() -> None:
    # `templates list --project /nonexistent` listed the built-ins and exited 0.
    for args in (["list"], ["show", "t1-road"]):
        code, out, err = _cli("templates", *args, "--project", "no-such-folder")
        assert code == 64, (out, err)
        assert "'no-such-folder' does not exist" in err
        assert out == ""
