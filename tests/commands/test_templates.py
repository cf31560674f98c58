"""``templates`` as functions: the project's templates before the built-in ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from customs_batch.commands.templates import (
    TemplateOptions,
    TemplatesOptions,
    list_templates,
    show_template,
)
from customs_batch.errors import ManifestError
from customs_batch.resources import builtin_templates_dir


def _project(root: Path) -> None:
    (root / "templates").mkdir(parents=True)
    (root / "customs-batch.yaml").write_text("default_environment: local\n", encoding="utf-8")
    text = "{#- Our own T1 defaults -#}\ntype: DEPARTURE\n"
    (root / "templates" / "t1-road.yaml.j2").write_text(text, encoding="utf-8")


def test_the_list_is_every_built_in_template_without_a_project(tmp_path: Path) -> None:
    names = [info.name for info in list_templates(TemplatesOptions(tmp_path))]
    builtins = sorted(p.name.removesuffix(".yaml.j2") for p in builtin_templates_dir().iterdir())
    assert names == builtins


def test_a_project_template_hides_the_built_in_of_its_name(tmp_path: Path) -> None:
    _project(tmp_path)
    # Found from a folder inside the project, as validate finds it.
    (tmp_path / "manifests").mkdir()
    infos = list_templates(TemplatesOptions(tmp_path / "manifests"))
    ours, builtin = (info for info in infos if info.name == "t1-road")
    assert (ours.origin, ours.hides is not None, ours.hidden_by) == ("project", True, None)
    assert builtin.origin == "built-in" and builtin.hidden_by == ours.path
    shown = show_template(TemplateOptions(tmp_path, "t1-road"))
    assert shown.text.startswith("{#- Our own T1 defaults")
    assert shown.info.hides is not None


def test_an_unknown_template_is_a_manifest_error(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match="no-such-template"):
        show_template(TemplateOptions(tmp_path, "no-such-template"))


def test_a_template_the_loader_refuses_is_listed_with_why_and_not_shown(tmp_path: Path) -> None:
    _project(tmp_path)
    (tmp_path / "templates" / "leak.yaml.j2").symlink_to("/proc/self/environ")
    (tmp_path / "templates" / "latin1.yaml.j2").write_bytes(b"# caf\xe9\nx: 1\n")
    (tmp_path / "templates" / "alias.yaml.j2").symlink_to("t1-road.yaml.j2")
    infos = {info.name: info for info in list_templates(TemplatesOptions(tmp_path))}
    assert "outside the template folders" in (infos["leak"].refused or "")
    assert "cannot read the template" in (infos["latin1"].refused or "")
    assert (infos["alias"].refused, infos["alias"].summary) == (None, "Our own T1 defaults")
    for name in ("leak", "latin1"):
        assert infos[name].summary == ""
        with pytest.raises(ManifestError) as raised:
            show_template(TemplateOptions(tmp_path, name))
        assert (infos[name].refused or "-").startswith(raised.value.message)
    assert show_template(TemplateOptions(tmp_path, "alias")).text.startswith("{#- Our own")
