"""`customs-batch init`: a new project that validates clean, and no clobbering."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from customs_batch.cli.main import invoke
from customs_batch.kinds import kind_names
from customs_batch.validation.batch import validate_paths
from tests.cli.conftest import run_alone


def _cli(*args: str) -> tuple[int, str, str]:
    """Run the CLI through click's runner and the real entry point's error handler."""
    with CliRunner().isolation() as (out, err, _):
        code = invoke(list(args))
    return code, out.getvalue().decode(), err.getvalue().decode()


def test_the_new_project_validates_clean_with_one_document_per_kind() -> None:
    code, out, _ = _cli("init", "project")
    assert code == 0
    assert out.splitlines()[-1] == "next: cd project && customs-batch validate"
    result = validate_paths([Path("project")])
    assert result.findings == ()
    # One example of every kind of the registry (each kind module gives its EXAMPLE).
    kinds = sorted(entry.address.split("/")[0] for entry in result.documents)
    assert kinds == sorted(kind_names())
    assert Path("project/templates/rotterdam.yaml.j2").is_file()
    assert Path("project/data/README.md").is_file()


def test_the_config_names_only_the_local_environment() -> None:
    _cli("init", "project")
    config = Path("project/customs-batch.yaml").read_text(encoding="utf-8")
    assert yaml.safe_load(config) == {"default_environment": "local", "manifests": ["manifests"]}
    assert "#   sandbox:" in config
    assert "api_key_env" in config


def test_a_folder_that_is_not_empty_is_refused_unless_forced() -> None:
    Path("busy").mkdir()
    Path("busy/notes.txt").write_text("mine", encoding="utf-8")
    code, out, err = _cli("init", "busy")
    assert (code, out) == (64, "")
    assert "busy is not empty" in err
    assert "--force" in err
    assert not Path("busy/customs-batch.yaml").exists()
    assert _cli("init", "--force", "busy")[0] == 0
    assert Path("busy/customs-batch.yaml").is_file()
    assert Path("busy/notes.txt").read_text(encoding="utf-8") == "mine"


def test_an_empty_existing_folder_and_the_default_folder_are_fine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    Path("empty").mkdir()
    assert _cli("init", "empty")[0] == 0
    Path("here").mkdir()
    monkeypatch.chdir("here")
    assert _cli("init")[0] == 0
    assert Path("customs-batch.yaml").is_file()


def test_a_file_in_the_way_is_a_usage_error() -> None:
    Path("taken").write_text("x", encoding="utf-8")
    assert _cli("init", "taken")[0] == 64


def test_the_readme_markdown_plan_example_is_what_plan_writes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    start = readme.index("````markdown\n#### To create") + len("````markdown\n")
    example = readme[start : readme.index("````", start)]
    assert "values declared</summary>" in example  # a creation shows what it declares
    _cli("init", "project")
    monkeypatch.chdir("project")
    code, out, _ = _cli("plan", "--format", "markdown", "--target", "TemplateGroup/my-group")
    assert code == 0
    assert example in out


def test_the_next_step_quotes_a_folder_with_a_space() -> None:
    # `next: cd my project && ...` changed into the folder `my` in a shell.
    code, out, _ = _cli("init", "my project")
    assert code == 0
    assert out.splitlines()[-1] == "next: cd 'my project' && customs-batch validate"


def test_the_files_created_are_listed_one_a_line_whatever_the_folder_s_name() -> None:
    # `init $'new\nproj'` printed "created new", then "proj/customs-batch.yaml" on a line
    # of its own, for each file.
    code, out, _ = _cli("init", "new\nproj")
    assert code == 0
    created = [line for line in out.splitlines() if line.startswith("created ")]
    assert created and all(line.startswith("created new\\nproj/") for line in created), out
    assert not any(line.startswith("proj/") for line in out.splitlines()), out


@pytest.mark.parametrize("named", [[], ["."], ["./"]])
def test_the_next_step_in_the_current_folder_is_only_validate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, named: list[str]
) -> None:
    # `next: cd . && customs-batch validate` asked to change into the folder one is in.
    (tmp_path / "fresh").mkdir()
    monkeypatch.chdir(tmp_path / "fresh")
    code, out, err = _cli("init", *named)
    assert code == 0, err
    assert out.splitlines()[-1] == "next: customs-batch validate"


def test_a_named_pipe_or_a_device_named_as_the_folder_is_a_usage_error() -> None:
    os.mkfifo("pipe")
    for name in ("pipe", os.devnull):
        code, out, err = _cli("init", name)
        assert (code, out) == (64, ""), err
        assert f"'{name}' is not a folder (it is a " in err


def test_a_named_pipe_in_place_of_a_project_file_is_refused_not_waited_on() -> None:
    Path("busy").mkdir()
    os.mkfifo("busy/customs-batch.yaml")
    # In a process of its own: writing to the pipe would wait for a reader for ever.
    done = run_alone("init", "--force", "busy")
    assert done.returncode not in (0, 2), done.stderr
    assert "busy/customs-batch.yaml: a named pipe is there, not a file" in done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr


def test_init_force_replaces_links_never_what_they_point_at(tmp_path: Path) -> None:
    # The user named the folder, not where a link in it points: a file outside the project
    # and customs-batch's own state keep what they hold.
    assert _cli("init", "p")[0] == 0
    outside = tmp_path / "outside.txt"
    outside.write_text("kept\n", encoding="utf-8")
    state = Path("p/.customs-batch/local/state.json")
    state.parent.mkdir(parents=True)
    state.write_text('{"state": "kept"}\n', encoding="utf-8")
    Path("p/manifests/movement.yaml").unlink()
    Path("p/manifests/movement.yaml").symlink_to(outside)
    Path("p/data/README.md").unlink()
    Path("p/data/README.md").symlink_to(Path("../.customs-batch/local/state.json"))
    code, _, err = _cli("init", "--force", "p")
    assert code == 0, err
    assert outside.read_text(encoding="utf-8") == "kept\n"
    assert state.read_text(encoding="utf-8") == '{"state": "kept"}\n'
    for written in ("p/manifests/movement.yaml", "p/data/README.md"):
        assert not Path(written).is_symlink() and Path(written).stat().st_size > 0


def test_init_into_customs_batch_s_own_folder_is_refused_before_anything_is_written() -> None:
    code, out, err = _cli("init", ".customs-batch/local")
    assert (code, out) == (64, ""), err
    assert "it is in .customs-batch, customs-batch's own folder" in err
    assert not Path(".customs-batch").exists()


def test_a_dash_is_refused_not_taken_for_a_folder_named_dash() -> None:
    # `customs-batch init -` made a folder named `-`; everywhere else `-` is standard input
    # or output, which a project of files cannot be written to.
    code, out, err = _cli("init", "-")
    assert code == 64, out + err
    assert "not to standard output (-)" in err
    assert not Path("-").exists()
    # A folder really named `-` is still written by its path.
    code, _, err = _cli("init", "./-")
    assert code == 0, err
    assert Path("-/customs-batch.yaml").is_file()
    assert "next: cd ./- && customs-batch validate" in _cli("init", "./-", "--force")[1]
