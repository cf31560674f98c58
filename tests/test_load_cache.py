"""The load cache: a warm run finds and plans exactly what a cold one does, and reuses a file
only while nothing it depends on has changed."""

from __future__ import annotations

import ast
import importlib
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from customs_batch import load_cache
from customs_batch.cli.main import invoke, main
from customs_batch.errors import ExitCode
from customs_batch.findings import OUT_OF_MEMORY, Severity
from customs_batch.load_cache import (
    _MAGIC,
    CACHE_DIR_VARIABLE,
    CACHE_MAX_MB_VARIABLE,
    LOADING_VARIABLES,
    LoadCache,
    _Stored,
    cache_folder,
    each_file_cached,
    max_cache_bytes,
)
from customs_batch.manifest import load_file
from customs_batch.manifest.templates import _render, catalog
from customs_batch.planning import inputs
from customs_batch.planning.inputs import load_inputs
from customs_batch.validation import batch, suppressions, team_rules
from customs_batch.validation.batch import ValidationResult, validate_paths

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
PACKAGE = Path(__file__).resolve().parents[1] / "customs_batch"
# Broken examples that still read the project's template and spreadsheet: findings to cache.
BAD = ("for-each-column-type", "schema-enum", "template-undefined-key", "mrn-check-digit")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The examples' project (manifests, a template, a forEach over CSV and over XLSX) in the
    working folder, with a cache of its own, and the per-process caches of templates emptied
    before and after (each CLI run is a process of its own; the tests run in one)."""
    for name in ("customs-batch.yaml", "manifests", "templates", "data"):
        source = EXAMPLES / name
        if source.is_dir():
            shutil.copytree(source, tmp_path / name)
        else:
            shutil.copy(source, tmp_path / name)
    monkeypatch.setenv(CACHE_DIR_VARIABLE, str(tmp_path / "cache"))
    _forget_loaded_templates()
    yield tmp_path
    _forget_loaded_templates()


def _forget_loaded_templates() -> None:
    """Empty what a process keeps of the project's templates and policies: each CLI run is
    a process of its own, where the tests run in one."""
    _render._find_cached.cache_clear()
    _render._environment.cache_clear()
    _render._RENDERED.clear()
    catalog.shadowed_builtin.cache_clear()
    # (the module, not the function of the same name the package exports)
    importlib.import_module("customs_batch.manifest.discover")._root_of.cache_clear()
    team_rules.forget_policies()
    suppressions.path_suppressions.cache_clear()


def _with_bad(project: Path) -> Path:
    for name in BAD:
        shutil.copy(EXAMPLES / "bad" / f"{name}.yaml.bad", project / "manifests" / f"{name}.yaml")
    return project


def _loaded_files(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[str]:
    """Every file ``module.name`` (the per-file work) loads from now on."""
    loaded: list[str] = []
    work: Callable[[Any, Any], Any] = getattr(module, name)

    def counting(item: Any, settings: Any) -> Any:
        loaded.append(item if isinstance(item, str) else item[1])
        return work(item, settings)

    monkeypatch.setattr(module, name, counting)
    return loaded


def _validate(**options: Any) -> ValidationResult:
    _forget_loaded_templates()
    return validate_paths([Path("manifests")], jobs=1, cache=True, **options)


def test_a_warm_validate_finds_exactly_what_a_cold_one_does(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _with_bad(project)
    cold = validate_paths([Path("manifests")], jobs=1)
    first = _validate()
    loaded = _loaded_files(monkeypatch, batch, "_check_file")
    warm = _validate()
    assert loaded == []  # every file from the cache
    assert warm == first == cold
    assert {f.rule for f in warm.findings} >= {"schema.enum", "envelope.for-each"}


def test_a_warm_plan_loads_exactly_what_a_cold_one_does(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cold = load_inputs([Path("manifests")], jobs=1)
    _forget_loaded_templates()
    load_inputs([Path("manifests")], jobs=1, cache=True)
    loaded = _loaded_files(monkeypatch, inputs, "_load_file")
    _forget_loaded_templates()
    warm = load_inputs([Path("manifests")], jobs=1, cache=True)
    # Only the files whose documents hold an access code (the departures) are loaded again:
    # they are never cached, since the cache would keep the code in clear.
    departures = {
        str(path)
        for path in Path("manifests").glob("*.yaml")
        if "kind: DepartureDeclaration" in path.read_text(encoding="utf-8")
    }
    assert loaded and set(loaded) <= departures
    assert "manifests/movements.yaml" not in loaded
    assert warm.documents == cold.documents
    assert warm.validation == cold.validation
    assert len(warm.documents) > 10


def test_a_file_added_before_cached_ones_keeps_the_batch_order(project: Path) -> None:
    load_inputs([Path("manifests")], jobs=1, cache=True)
    text = (project / "manifests" / "movements.yaml").read_text(encoding="utf-8")
    (project / "manifests" / "aa-first.yaml").write_text(
        text.replace("name: mov-", "name: first-mov-"), encoding="utf-8"
    )
    _forget_loaded_templates()
    warm = load_inputs([Path("manifests")], jobs=1, cache=True)
    cold = load_inputs([Path("manifests")], jobs=1)
    assert [d.index for d in warm.documents] == [d.index for d in cold.documents]
    assert warm.documents == cold.documents


# The files that name a template (the project's, or a built-in one that a template of the
# project could hide): a change in templates/ reloads them, and only them.
USING_TEMPLATES = ["manifests/departures-sheet.yaml", "manifests/departures.yaml"]


def test_editing_a_template_reloads_the_files_that_use_templates_only(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _validate()
    template = project / "templates" / "rotterdam-export.yaml.j2"
    template.write_text(template.read_text(encoding="utf-8") + "\n{{ 1 / 0 }}\n", "utf-8")
    loaded = _loaded_files(monkeypatch, batch, "_check_file")
    warm = _validate()
    assert sorted(loaded) == USING_TEMPLATES
    assert "template.error" in {f.rule for f in warm.findings}
    assert warm == validate_paths([Path("manifests")], jobs=1)


def test_adding_a_template_to_the_project_reloads_the_files_that_use_templates(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _validate()
    builtin = PACKAGE.parent / "templates" / "t1-road.yaml.j2"
    shutil.copy(builtin, project / "templates" / "t1-road.yaml.j2")
    loaded = _loaded_files(monkeypatch, batch, "_check_file")
    _validate()
    assert sorted(loaded) == USING_TEMPLATES


def test_editing_a_spreadsheet_reloads_the_file_that_reads_it(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _validate()
    sheet = project / "data" / "departures.csv"
    data = sheet.read_bytes()
    sheet.write_bytes(data.replace(b";DE004073;", b";DE00407;", 1))
    loaded = _loaded_files(monkeypatch, batch, "_check_file")
    warm = _validate()
    assert loaded == ["manifests/departures-sheet.yaml"]
    assert warm == validate_paths([Path("manifests")], jobs=1)
    assert any(f.location.file.endswith("departures.csv") for f in warm.findings)


@pytest.mark.parametrize(
    "options",
    [
        {"hs_codes": None},
        {"unlocodes": None},
        {"mrn_check_digit": Severity.WARNING},
    ],
)
def test_an_option_that_changes_the_checks_reloads_every_file(
    project: Path, monkeypatch: pytest.MonkeyPatch, options: dict[str, Any]
) -> None:
    _with_bad(project)
    _validate()
    loaded = _loaded_files(monkeypatch, batch, "_check_file")
    changed = _validate(**options)
    assert len(loaded) == len(changed.files)
    assert changed == validate_paths([Path("manifests")], jobs=1, **options)


@pytest.mark.parametrize("variable", LOADING_VARIABLES)
def test_a_changed_limit_reloads_every_file(
    project: Path, monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    long = project / "manifests" / "long-comment.yaml"
    text = (project / "manifests" / "movements.yaml").read_text(encoding="utf-8")
    # Other names and other HAWBs: a HAWB's movements in two files would need dependsOn.
    copied = text.replace("mov-", "long-mov-").replace("hawb_", "hawb_L").replace("shp_", "shp_L")
    long.write_text("# " + "x" * 1_100_000 + "\n" + copied, "utf-8")
    # Roomy, then tight: the file and its first line are over 1 MB; a document of the
    # example holds more than 50 values.
    roomy = {"CUSTOMS_BATCH_MAX_DOCUMENT_VALUES": "100000"}
    tight = {"CUSTOMS_BATCH_MAX_DOCUMENT_VALUES": "50"}
    for name in LOADING_VARIABLES:
        monkeypatch.setenv(name, roomy.get(name, "4"))
    assert not _validate().failed()
    monkeypatch.setenv(variable, tight.get(variable, "1"))
    loaded = _loaded_files(monkeypatch, batch, "_check_file")
    limited = _validate()
    assert len(loaded) == len(limited.files)
    assert limited.failed()
    assert limited == validate_paths([Path("manifests")], jobs=1)


TEAM_POLICY = """\
id: team.no-template-groups
severity: error
kinds: [TemplateGroup]
expression: "false"
message: template groups are not ours to create
"""
MOVEMENT_POLICY = """\
id: team.small-movements
severity: warning
kinds: [Movement]
expression: "!has(spec.quantity) || int(spec.quantity) < 3"
message: a movement of 3 or more pieces is checked by hand
"""


def _same_warm_and_cold(work: str) -> set[tuple[str, str, str]]:
    """A warm run of ``work`` (validate or plan) gives what a cold one does: its findings
    (rule, severity, where the policy is written)."""
    _forget_loaded_templates()
    if work == "validate":
        warm = _validate()
        _forget_loaded_templates()
        cold = validate_paths([Path("manifests")], jobs=1)
        assert warm == cold
        found = warm
    else:
        planned = load_inputs([Path("manifests")], jobs=1, cache=True)
        _forget_loaded_templates()
        expected = load_inputs([Path("manifests")], jobs=1)
        assert planned.failed == expected.failed
        assert planned.documents == expected.documents
        assert planned.validation == expected.validation
        found = planned.validation
    every = [*found.findings, *found.suppressed]
    return {
        (f.rule, f.severity.value, f"{f.rule_at.file}:{f.rule_at.line}")
        for f in every
        if f.rule.startswith("team.") and f.rule_at is not None
    }


@pytest.mark.parametrize("work", ["validate", "plan"])
def test_a_policy_added_edited_or_removed_is_what_a_warm_run_checks(
    project: Path, work: str
) -> None:
    # Policies are checked where each file is loaded, so a file's cached findings hold them.
    assert _same_warm_and_cold(work) == set()
    policies = project / "policies"
    policies.mkdir()
    (policies / "team.yaml").write_text(TEAM_POLICY, "utf-8")
    found = _same_warm_and_cold(work)
    assert found == {("team.no-template-groups", "error", "policies/team.yaml:1")}
    # Edited: its severity, and its place in the file (the finding names the line).
    edited = "# moved down a line\n" + TEAM_POLICY.replace("severity: error", "severity: warning")
    (policies / "team.yaml").write_text(edited, "utf-8")
    found = _same_warm_and_cold(work)
    assert found == {("team.no-template-groups", "warning", "policies/team.yaml:2")}
    (policies / "movements.yml").write_text(MOVEMENT_POLICY, "utf-8")
    found = _same_warm_and_cold(work)
    assert ("team.small-movements", "warning", "policies/movements.yml:1") in found
    (policies / "team.yaml").unlink()
    found = _same_warm_and_cold(work)
    assert {rule for rule, _, _ in found} == {"team.small-movements"}
    (policies / "movements.yml").unlink()
    assert _same_warm_and_cold(work) == set()


@pytest.mark.parametrize("work", ["validate", "plan"])
def test_a_suppression_added_to_the_settings_is_what_a_warm_run_applies(
    project: Path, work: str
) -> None:
    # customs-batch.yaml's suppress list is applied to every run's findings, cached or not.
    (project / "policies").mkdir()
    (project / "policies" / "team.yaml").write_text(TEAM_POLICY, "utf-8")
    assert _same_warm_and_cold(work)
    settings = project / "customs-batch.yaml"
    settings.write_text(
        settings.read_text(encoding="utf-8")
        + "suppress:\n  - rule: team.no-template-groups\n"
        + '    paths: ["manifests/*.yaml"]\n    reason: agreed with the team\n',
        "utf-8",
    )
    assert _same_warm_and_cold(work)  # still reported, as suppressed
    _forget_loaded_templates()
    if work == "validate":
        assert not _validate().failed()
    else:
        assert not load_inputs([Path("manifests")], jobs=1, cache=True).failed


def test_a_policy_added_after_a_run_stops_a_warm_plan_from_the_command_line(
    project: Path,
) -> None:
    # Each run a process of its own, as a user runs them.
    environment = {**os.environ, CACHE_DIR_VARIABLE: str(project / "cache")}

    def run(*arguments: str) -> int:
        command = [sys.executable, "-m", "customs_batch", *arguments, "manifests"]
        return subprocess.run(
            command, cwd=project, env=environment, capture_output=True, check=False
        ).returncode

    assert (run("validate"), run("plan")) == (ExitCode.OK, ExitCode.OK)
    (project / "policies").mkdir()
    (project / "policies" / "team.yaml").write_text(TEAM_POLICY, "utf-8")
    assert run("validate") == run("validate", "--no-cache") == ExitCode.FINDINGS
    assert run("plan") == run("plan", "--no-cache") == ExitCode.FINDINGS
    (project / "policies" / "team.yaml").unlink()
    assert (run("validate"), run("plan")) == (ExitCode.OK, ExitCode.OK)


def test_a_file_in_the_policies_folder_that_is_no_policy_reloads_nothing(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "policies").mkdir()
    (project / "policies" / "team.yaml").write_text(TEAM_POLICY, "utf-8")
    _validate()
    (project / "policies" / "README.md").write_text("# Our rules\n", "utf-8")
    loaded = _loaded_files(monkeypatch, batch, "_check_file")
    _validate()
    assert loaded == []


def test_loading_variables_are_every_limit_the_loaders_read() -> None:
    read = set()
    # line_bound.py: the longest line, which the manifests' and the templates' loaders read
    # (shared with the policies' and the seeds' readers, so outside these folders).
    paths = [PACKAGE / "line_bound.py"]
    for folder in ("manifest", "validation"):
        paths += (PACKAGE / folder).rglob("*.py")
    for path in paths:
        text = path.read_text(encoding="utf-8")
        read |= {word for word in text.split('"') if word.startswith("CUSTOMS_BATCH_")}
    read |= {"CUSTOMS_BATCH_MAX_FILE_MB"}  # userfiles.py, read by every loader
    # Bounds the annotated copies a command writes after the findings (copy.py): it
    # changes no finding, so a cached load stays right whatever it is.
    read -= {"CUSTOMS_BATCH_MAX_COPY_CELLS"}
    assert read == set(LOADING_VARIABLES)


# Libraries the manifest and validation code imports only to write a workbook (a copy with
# results or findings, a template): they change no finding.
WRITERS = {"openpyxl", "xlsxwriter"}


def test_every_library_the_checks_use_is_part_of_the_fingerprint() -> None:
    # An upgraded library may check differently (the CEL library evaluates the policies).
    used: set[str] = set()
    for folder in ("manifest", "validation", "kinds"):
        for path in (PACKAGE / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    used |= {alias.name.split(".")[0] for alias in node.names}
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    used.add(node.module.split(".")[0])
                elif isinstance(node, ast.Call) and node.args:  # find_spec("cel")
                    name = getattr(node.func, "attr", getattr(node.func, "id", ""))
                    if name in ("find_spec", "import_module") and isinstance(
                        node.args[0], ast.Constant
                    ):
                        used.add(str(node.args[0].value).split(".")[0])
    third_party = used - set(sys.stdlib_module_names) - {"customs_batch", "__future__"}
    assert "cel" in third_party
    assert third_party - WRITERS <= set(load_cache._LIBRARIES)


def test_an_edited_manifest_is_reloaded_alone(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _validate()
    movements = project / "manifests" / "movements.yaml"
    movements.write_text(
        movements.read_text(encoding="utf-8").replace("quantity: 4", "quantity: -4"), "utf-8"
    )
    loaded = _loaded_files(monkeypatch, batch, "_check_file")
    warm = _validate()
    assert loaded == ["manifests/movements.yaml"]
    assert warm == validate_paths([Path("manifests")], jobs=1)


def _entries(folder: Path) -> list[Path]:
    return [p for p in folder.iterdir() if not p.name.startswith(".") and p.name != "CACHEDIR.TAG"]


@pytest.mark.parametrize("damage", [b"", b"garbage", _MAGIC + b"\x80\x05not a pickle"])
def test_a_corrupt_or_foreign_entry_is_ignored_and_written_again(
    project: Path, monkeypatch: pytest.MonkeyPatch, damage: bytes
) -> None:
    cold = _validate()
    entries = _entries(project / "cache")
    for entry in entries:
        entry.write_bytes(damage)
    loaded = _loaded_files(monkeypatch, batch, "_check_file")
    assert _validate() == cold
    assert len(loaded) == len(cold.files)
    assert all(entry.read_bytes().startswith(_MAGIC) for entry in entries)


def test_the_cache_is_readable_by_its_owner_only(project: Path) -> None:
    _validate()
    folder = project / "cache"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    for path in folder.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path.name
    assert len(_entries(folder)) == len(list((project / "manifests").glob("*.yaml")))


def test_no_cache_writes_nothing(project: Path) -> None:
    runner = CliRunner()
    for command in (["validate", "--no-cache", "manifests"], ["plan", "--no-cache", "manifests"]):
        result = runner.invoke(main, command)
        assert result.exit_code == 0, result.output
    assert not (project / "cache").exists()
    runner.invoke(main, ["validate", "manifests"])
    assert _entries(project / "cache")


def test_the_cache_lives_in_the_project_and_is_ignored_by_git(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(CACHE_DIR_VARIABLE)
    (project / "manifests" / "sub").mkdir()
    monkeypatch.chdir(project / "manifests" / "sub")
    assert cache_folder() == project / ".customs-batch" / "cache"
    monkeypatch.chdir(project)
    result = CliRunner().invoke(main, ["validate", "manifests"])
    assert result.exit_code == 0, result.output
    assert (project / ".customs-batch" / "cache" / ".gitignore").read_text().splitlines()[-1] == "*"


def test_without_a_project_the_cache_is_the_users(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_folder() == tmp_path / "xdg" / "customs-batch"


def test_the_cache_is_trimmed_oldest_first(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _validate()
    entries = sorted(_entries(project / "cache"))
    for age, entry in enumerate(entries):
        os.utime(entry, (1_000_000 + age, 1_000_000 + age))
    sizes = sum(entry.stat().st_size for entry in entries)
    cache = LoadCache.for_run("validate", "settings")
    assert cache is not None
    bound = sizes - entries[0].stat().st_size // 2  # just under what is there
    LoadCache(cache.folder, cache.fingerprint, bound).trim()
    left = set(_entries(project / "cache"))
    assert entries[0] not in left and entries[-1] in left
    assert sum(entry.stat().st_size for entry in left) <= bound * 0.8


def test_a_file_changed_while_it_loads_is_not_stored(project: Path) -> None:
    cache = LoadCache.for_run("test", "settings")
    assert cache is not None
    manifest = project / "manifests" / "movements.yaml"

    def edits_while_loading(file: str, settings: object) -> str:
        manifest.write_text(manifest.read_text(encoding="utf-8") + "\n# edited\n", "utf-8")
        return "result of the old content"

    stored = _Stored(edits_while_loading, cache, str)
    assert stored("manifests/movements.yaml", None) == "result of the old content"
    assert not (project / "cache").exists()
    assert cache.get("manifests/movements.yaml", {}) is None


def test_files_loaded_by_a_pool_of_processes_are_cached_the_same(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _with_bad(project)
    cold = validate_paths([Path("manifests")], jobs=1)
    assert validate_paths([Path("manifests")], jobs=2, cache=True) == cold
    cold_plan = load_inputs([Path("manifests")], jobs=1)
    pooled_plan = load_inputs([Path("manifests")], jobs=2, cache=True)
    assert pooled_plan.documents == cold_plan.documents
    loaded = _loaded_files(monkeypatch, batch, "_check_file")
    assert _validate() == cold
    assert loaded == []


def test_a_cache_that_cannot_be_written_is_no_error(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "not-a-folder").write_text("a file where the cache folder would be\n")
    monkeypatch.setenv(CACHE_DIR_VARIABLE, str(project / "not-a-folder"))
    assert _validate() == validate_paths([Path("manifests")], jobs=1)
    assert (project / "not-a-folder").read_text() == "a file where the cache folder would be\n"


def test_without_a_home_folder_there_is_no_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(Path, "home", staticmethod(no_home))
    assert LoadCache.for_run("validate", "settings") is None


def test_two_runs_sharing_a_cache_while_a_file_changes_leave_it_true(project: Path) -> None:
    # Two real runs at once on one cache, the manifest edited while they run. However their
    # steps interleave, what they leave must give a later run the findings of a cold one.
    movements = project / "manifests" / "movements.yaml"
    text = movements.read_text(encoding="utf-8")
    command = [sys.executable, "-m", "customs_batch", "validate", "--jobs", "2", "manifests"]
    environment = {**os.environ, CACHE_DIR_VARIABLE: str(project / "cache")}
    runs = [
        subprocess.Popen(command, cwd=project, env=environment, stdout=subprocess.DEVNULL)
        for _ in range(2)
    ]
    quantity = 5
    while any(run.poll() is None for run in runs):  # edits for as long as they run
        quantity += 1
        movements.write_text(text.replace("quantity: 4", f"quantity: {quantity}"), "utf-8")
    assert [run.wait(timeout=120) for run in runs] in ([0, 0], [0, 1], [1, 0], [1, 1])
    warm = _validate()
    assert warm == validate_paths([Path("manifests")], jobs=1)
    assert f"quantity: {quantity}" in movements.read_text(encoding="utf-8")


def test_a_file_changed_and_changed_back_while_it_loads_is_not_stored(project: Path) -> None:
    cache = LoadCache.for_run("test", "settings")
    assert cache is not None
    manifest = project / "manifests" / "movements.yaml"
    text = manifest.read_text(encoding="utf-8")

    def loads_other_content(file: str, settings: object) -> int:
        manifest.write_text(text.replace("quantity: 4", "quantity: [4"), "utf-8")  # broken
        loaded = load_file(Path(file))  # what the loader read is the other content
        manifest.write_text(text, "utf-8")  # and the file is as it was before the load
        return len(loaded.findings)

    stored = _Stored(loads_other_content, cache, str)
    assert stored("manifests/movements.yaml", None) == 2  # where the bracket opened, and closed
    assert cache.get("manifests/movements.yaml", {}) is None


def test_an_edited_schema_or_rule_of_the_tool_reloads_every_file(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from customs_batch import load_cache

    schemas = project / "tool-schemas"
    shutil.copytree(PACKAGE.parent / "schemas", schemas)
    monkeypatch.setattr(load_cache, "schemas_dir", lambda: schemas)
    load_cache.package_digest.cache_clear()
    _validate()
    movement = schemas / "movement.schema.json"
    movement.write_text(movement.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    load_cache.package_digest.cache_clear()
    loaded = _loaded_files(monkeypatch, batch, "_check_file")
    reloaded = _validate()
    load_cache.package_digest.cache_clear()
    assert len(loaded) == len(reloaded.files)


def test_nothing_is_written_on_a_disk_nearly_full(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = os.statvfs

    def nearly_full(path: str) -> Any:
        found = real(path)
        free = 60 * 1024 * 1024 // found.f_frsize  # 60 MB left: under the 64 MB kept free
        return os.statvfs_result((*found[:4], free, *found[5:]))

    monkeypatch.setattr(os, "statvfs", nearly_full)
    assert _validate() == validate_paths([Path("manifests")], jobs=1)
    assert not (project / "cache").exists()


def test_a_file_holding_an_access_code_is_never_cached(project: Path, tmp_path: Path) -> None:
    for path in (
        project / "manifests" / "departures.yaml",
        project / "templates" / "rotterdam-export.yaml.j2",
    ):
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace('accessCode: "1234"', 'accessCode: "Cache-7Q41"'), "utf-8")
    load_inputs([Path("manifests")], jobs=1, cache=True)
    entries = [path for path in (tmp_path / "cache").rglob("*") if path.is_file()]
    assert entries
    cached = b"".join(path.read_bytes() for path in entries)
    codes = {
        str(value)
        for doc in load_inputs([Path("manifests")], jobs=1).documents
        for guarantee in doc.spec.get("DeclarationGuarantees") or ()
        if (value := guarantee.get("accessCode"))
    }
    assert codes
    assert not any(code.encode() in cached for code in codes)


@pytest.mark.parametrize(
    "value", ["abc", "-5", "nan", "inf", "1e99", "12 MB", "\u0661\u0660", "\u0661.\u0665"]
)
def test_a_bound_that_is_not_a_number_of_megabytes_is_refused_clearly(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    monkeypatch.setenv(CACHE_MAX_MB_VARIABLE, value)
    assert invoke(["validate", "manifests"]) == ExitCode.ERROR
    err = capsys.readouterr().err
    assert f"error: {CACHE_MAX_MB_VARIABLE}={value!r} is not a number of megabytes" in err
    assert f"hint: set it to a number, e.g. {CACHE_MAX_MB_VARIABLE}=1024" in err
    assert "Traceback" not in err and "internal error" not in err
    assert not (project / "cache").exists()
    # --no-cache reads no bound.
    assert invoke(["validate", "--no-cache", "manifests"]) == ExitCode.OK


@pytest.mark.parametrize(("value", "expected"), [("", 512 << 20), ("0", 0), ("1.5", 3 << 19)])
def test_the_bound_is_megabytes(monkeypatch: pytest.MonkeyPatch, value: str, expected: int) -> None:
    monkeypatch.setenv(CACHE_MAX_MB_VARIABLE, value)
    assert max_cache_bytes() == expected


def test_a_file_of_more_documents_than_the_bound_is_not_cached(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A forEach over a big export: an entry would hold every row at once, which loading
    # never does. The examples' spreadsheets expand to several rows; the bound is set to one.
    files = sorted(str(path) for path in Path("manifests").glob("*.yaml"))
    count = {file: validate_paths([Path(file)], jobs=1).document_count for file in files}
    cold = validate_paths([Path("manifests")], jobs=1)
    stored = LoadCache.for_run("validate", batch._Settings(Severity.ERROR, Severity.WARNING, None))
    assert stored is not None

    def cached() -> set[str]:
        entries = set(_entries(project / "cache"))
        return {file for file in files if Path(stored.entry_path(file)) in entries}

    assert _validate() == cold
    unbounded = cached()
    shutil.rmtree(project / "cache")
    monkeypatch.setattr(load_cache, "MAX_CACHED_DOCUMENTS", 1)
    assert _validate() == cold
    bounded = cached()
    assert bounded == {file for file in unbounded if count[file] <= 1}
    assert bounded and unbounded - bounded  # both sorts of files are in the examples
    loaded = _loaded_files(monkeypatch, batch, "_check_file")
    assert _validate() == cold
    assert set(loaded) == set(files) - bounded


def test_plan_does_not_cache_a_file_of_more_documents_than_the_bound(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The bound is the cache's, so plan's entries (whole documents) keep it too.
    files = sorted(str(path) for path in Path("manifests").glob("*.yaml"))
    count = {file: len(load_inputs([Path(file)], jobs=1).documents) for file in files}
    cold = load_inputs([Path("manifests")], jobs=1)
    stored = LoadCache.for_run("plan", inputs._Settings(Severity.ERROR))
    assert stored is not None

    def cached() -> set[str]:
        _forget_loaded_templates()
        warm = load_inputs([Path("manifests")], jobs=1, cache=True)
        assert warm.documents == cold.documents
        entries = set(_entries(project / "cache"))
        return {file for file in files if Path(stored.entry_path(file)) in entries}

    unbounded = cached()
    shutil.rmtree(project / "cache")
    monkeypatch.setattr(load_cache, "MAX_CACHED_DOCUMENTS", 1)
    bounded = cached()
    assert bounded == {file for file in unbounded if count[file] <= 1}
    assert bounded and unbounded - bounded


def test_the_same_libraries_installed_again_keep_the_cache_and_an_upgrade_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CI installs the libraries afresh in every job, at new file times (the README's cache
    recipe restores .customs-batch/cache there): the same releases installed again keep the
    fingerprint, so the restored entries are used; another release, or other files of one,
    change it."""
    site = tmp_path / "site"

    def install(version: str, code: str, when: int) -> None:
        shutil.rmtree(site, ignore_errors=True)
        (site / "fakelib_cb").mkdir(parents=True)
        init = site / "fakelib_cb" / "__init__.py"
        init.write_text(code, encoding="utf-8")
        info = site / f"Fake.Lib-{version}.dist-info"
        info.mkdir()
        # A console script's line names the folder it was installed for: not a checked file.
        record = (
            f"../../../bin/fake,sha256=script{when},9\nfakelib_cb/__init__.py,sha256={code},9\n"
        )
        (info / "RECORD").write_text(record, encoding="utf-8")
        os.utime(init, ns=(when, when))
        importlib.invalidate_caches()

    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(load_cache, "_LIBRARIES", {"fakelib_cb": "fake-lib"})

    def fingerprint() -> bytes:
        cache = LoadCache.for_run("validate", "settings")
        assert cache is not None
        return cache.fingerprint

    install("1.0", "one", when=1_000_000_000_000_000_000)
    first = fingerprint()
    install("1.0", "one", when=2_000_000_000_000_000_000)
    assert fingerprint() == first, "the same release installed again"
    install("1.1", "one", when=2_000_000_000_000_000_000)
    assert fingerprint() != first, "another release"
    install("1.0", "two", when=2_000_000_000_000_000_000)
    assert fingerprint() != first, "other files of the same release"


def test_every_library_of_the_fingerprint_is_known_by_its_release() -> None:
    """A distribution named wrong in _LIBRARIES would fall back to the files' times, and a CI
    job, which installs the libraries afresh, would never use its restored cache."""
    for module, distribution in load_cache._LIBRARIES.items():
        release = load_cache._installed(module, distribution)
        assert release is not None and release[0].endswith(".dist-info"), (module, release)


def test_a_file_whose_spreadsheet_ran_out_of_memory_is_not_cached(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A run short of memory (ulimit -v, a small CI runner) reported the manifest as too large
    # and cached it: the next run, with the memory it needs, repeated the error.
    from customs_batch.manifest.rows import _for_each

    def no_memory(source: Any) -> Any:
        raise MemoryError

    with monkeypatch.context() as patched:
        patched.setattr(_for_each, "read_rows", no_memory)
        short = _validate()
    out_of_memory = [f for f in short.findings if f.rule == OUT_OF_MEMORY]
    assert out_of_memory
    assert all("ran out of memory reading" in f.message for f in out_of_memory)
    assert all("more memory" in f.hint for f in out_of_memory)
    sheets = sorted({f.location.file for f in out_of_memory})
    loaded = _loaded_files(monkeypatch, batch, "_check_file")
    roomy = _validate()
    assert sorted(loaded) == sheets and loaded
    assert not any(f.rule == OUT_OF_MEMORY for f in roomy.findings)
    assert roomy == validate_paths([Path("manifests")], jobs=1)


def test_no_cached_entry_is_kept_around_its_outcome(project: Path) -> None:
    # The entries read from the cache (key, digests, dependencies around each outcome) were
    # all held until the last outcome was given: 200,000 of them beside the outcomes.
    import gc

    _validate()  # fills the cache
    _forget_loaded_templates()
    files = sorted(str(path) for path in Path("manifests").glob("*.yaml"))
    settings = batch._Settings(Severity.ERROR, Severity.WARNING, None, Severity.WARNING)
    stored = LoadCache.for_run("validate", settings, enabled=True)
    assert stored is not None
    cached = sum(stored.get(file, {}) is not None for file in files)
    assert cached >= 3

    def entries_alive() -> int:
        gc.collect()
        return sum(isinstance(thing, load_cache._Entry) for thing in gc.get_objects())

    assert entries_alive() == 0
    versions: load_cache.Versions = []
    outcomes = each_file_cached(
        files,
        batch._check_file,
        settings,
        1,
        hint="",
        cache=stored,
        file_of=str,
        versions=versions,
    )
    next(outcomes)
    assert entries_alive() == 0
    assert len(list(outcomes)) == len(files) - 1
    assert entries_alive() == 0
    assert sum(version is not None for version in versions) == cached
