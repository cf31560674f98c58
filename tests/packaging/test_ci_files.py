"""The pre-commit hook, the composite GitHub Action and the example workflow call commands
and options that exist, with formats the commands offer."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
import tomllib
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from customs_batch.cli.main import invoke, main
from customs_batch.errors import ExitCode
from customs_batch.execution.time_budget import parse_time_budget
from customs_batch.manifest.spreadsheet.reader import CSV_SUFFIXES, XLSX_SUFFIXES

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / "examples" / "ci" / ".github" / "workflows"
WORKFLOW = WORKFLOWS / "customs-batch.yml"
LONG_APPLY = WORKFLOWS / "customs-batch-long-apply.yml"


@cache
def _help(command: str) -> str:
    result = CliRunner().invoke(main, [*command.split(), "--help"])
    assert result.exit_code == 0, f"customs-batch {command} is not a command: {result.output}"
    return result.output


def _calls(script: str) -> Iterator[tuple[str, str]]:
    """(subcommand, the rest of the line) for every ``customs-batch`` call of a script."""
    for line in script.replace("\\\n", " ").splitlines():
        for match in re.finditer(r"(?:^|[\s;&|(])customs-batch ([a-z-]+)(.*)", line):
            yield match[1], match[2]


def _check_call(command: str, rest: str) -> None:
    text = _help(command)
    for option in re.findall(r"(?:^|[\s+])(-{1,2}[a-z][a-z-]*)", rest):
        assert re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", text), (
            f"customs-batch {command} has no option {option}"
        )
    for value in re.findall(r'--format "?(?:\$\{FORMAT:-)?([a-z]+)', rest):
        choices = re.search(r"--format \[([a-z|]+)\]", text)
        assert choices and value in choices[1].split("|"), f"{command} --format {value}"


def _scripts(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "run" and isinstance(value, str):
                yield value
            else:
                yield from _scripts(value)
    elif isinstance(node, list):
        for item in node:
            yield from _scripts(item)


def test_the_pre_commit_hook_runs_validate_on_manifest_changes() -> None:
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "customs-batch-validate"
    assert hook["language"] == "python"
    program, command = hook["entry"].split()
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert program in scripts and command == "validate"
    _help(command)
    # A reference names documents of other files: the whole project is validated.
    assert hook["pass_filenames"] is False
    files = re.compile(hook["files"])
    manifests = [p.relative_to(ROOT).as_posix() for p in (ROOT / "examples").rglob("*.yaml")]
    changed = ["data/movements.xlsx", "data/departures.csv", "templates/rotterdam.yaml.j2"]
    for path in [*manifests, *changed, "customs-batch.yaml"]:
        assert files.search(path), path
    for path in ["README.md", "customs_batch/cli/main.py", "examples/bad/yaml-syntax.yaml.bad"]:
        assert not files.search(path), path


@pytest.mark.parametrize(
    "path",
    [
        # forEach reads every spreadsheet format the reader knows, whatever the case
        *(f"data/rows{suffix}" for suffix in sorted(XLSX_SUFFIXES | CSV_SUFFIXES)),
        "data/ROWS.XLSX",
        # a template includes or imports any file of templates/: a macro changes its output
        "templates/offices.j2",
        "templates/parts/_parties.jinja",
        "customs/templates/macros.txt.j2",
    ],
)
def test_the_pre_commit_hook_runs_on_every_file_validate_reads(path: str) -> None:
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert re.search(hook["files"], path), f"a commit changing only {path} skips the hook"


def test_the_hook_entry_passes_on_the_example_project(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for folder in ("manifests", "templates", "data"):
        shutil.copytree(ROOT / "examples" / folder, tmp_path / folder)
    shutil.copy(ROOT / "examples" / "customs-batch.yaml", tmp_path)
    # Other YAML of the repository is no manifest: the hook reads the configured folders.
    (tmp_path / "docker-compose.yml").write_text("services:\n  web: {image: nginx}\n")
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert invoke(hook["entry"].split()[1:]) == 0, capsys.readouterr().out


def test_the_action_installs_the_tool_and_calls_existing_options() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    assert set(action["inputs"]["command"]["description"].replace(",", "").split()) >= {
        "validate",
        "plan",
        "apply",
    }
    scripts = list(_scripts(action["runs"]["steps"]))
    assert any("pip install" in script for script in scripts)
    calls = [call for script in scripts for call in _calls(script)]
    assert {command for command, _ in calls} == {"validate", "plan", "apply"}
    for command, rest in calls:
        _check_call(command, rest)
    plan = next(rest for command, rest in calls if command == "plan")
    assert '--format "${FORMAT:-markdown}"' in plan and "--detailed-exitcode" in plan
    for step in action["runs"]["steps"]:
        assert step.get("uses") or step.get("shell") == "bash", step


def _install_step(steps: list[dict[str, Any]]) -> dict[str, Any]:
    (step,) = [step for step in steps if "pip install" in step.get("run", "")]
    return step


@pytest.mark.parametrize(
    ("package", "installed"),
    [
        ("", "/runner/_actions/owner/customs-batch/v1"),  # the action's own checkout
        ("customs-batch==1.2.0", "customs-batch==1.2.0"),
        ("dist/customs_batch-1.2.0-py3-none-any.whl", "dist/customs_batch-1.2.0-py3-none-any.whl"),
    ],
)
def test_the_action_installs_from_its_own_checkout_unless_told_otherwise(
    tmp_path: Path, package: str, installed: str
) -> None:
    """customs-batch is not on PyPI: by default the action installs the copy of this
    repository that GitHub checked out for `uses:` (github.action_path)."""
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["inputs"]["package"]["default"] == ""
    step = _install_step(action["runs"]["steps"])
    assert step["env"] == {"PACKAGE": "${{ inputs.package }}"}
    # A `python` that records what it was asked to install, in place of the runner's.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "$RECORD"\n')
    (bin_dir / "python").chmod(0o755)
    record = tmp_path / "record"
    env = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "RECORD": str(record),
        "PACKAGE": package,
        "GITHUB_ACTION_PATH": "/runner/_actions/owner/customs-batch/v1",
    }
    subprocess.run(["bash", "-e", "-c", step["run"]], env=env, check=True)
    assert record.read_text().split() == ["-m", "pip", "install", "--quiet", installed]


@pytest.mark.parametrize("path", sorted(WORKFLOWS.glob("*.yml")), ids=lambda p: p.name)
def test_every_workflow_job_installs_the_tool_from_its_repository(path: Path) -> None:
    """customs-batch is not on PyPI: a job that runs it checks out its repository and
    installs that checkout, never a package by name."""
    workflow = yaml.safe_load(path.read_text())
    env = workflow["env"]
    assert env["CUSTOMS_BATCH_REPOSITORY"].endswith("/customs-batch") and env["CUSTOMS_BATCH_REF"]
    jobs = [job for job in workflow["jobs"].values() if any(_calls("\n".join(_scripts(job))))]
    assert jobs
    for job in jobs:
        steps = job["steps"]
        (checkout,) = [s for s in steps if "repository" in s.get("with", {})]
        assert checkout["uses"].startswith("actions/checkout@")
        assert checkout["with"]["repository"] == "${{ env.CUSTOMS_BATCH_REPOSITORY }}"
        assert checkout["with"]["ref"] == "${{ env.CUSTOMS_BATCH_REF }}"
        folder = checkout["with"]["path"]
        assert folder.startswith("."), "a hidden folder, which no folder search reads"
        install = _install_step(steps)
        assert install["run"].split() == ["pip", "install", f"./{folder}"]
        # The project's own checkout comes first: a later one would empty the workspace.
        project = next(s for s in steps if s.get("uses", "").startswith("actions/checkout@"))
        # A ref at most (a long apply's later part checks out the commit its chain started).
        assert set(project.get("with", {})) <= {"ref"}
        assert steps.index(project) < steps.index(checkout) < steps.index(install)
        first_call = next(s for s in steps if any(_calls(s.get("run", ""))))
        assert steps.index(install) < steps.index(first_call)


def test_no_ci_file_installs_the_tool_by_name_from_an_index() -> None:
    files = [ROOT / "action.yml", *WORKFLOWS.glob("*.yml"), ROOT / "examples/ci/README.md"]
    for file in files:
        assert not re.search(r"pip install (--quiet )?customs-batch\b", file.read_text()), file


def test_the_example_workflow_calls_existing_options() -> None:
    workflow = yaml.safe_load(WORKFLOW.read_text())
    calls = [call for script in _scripts(workflow["jobs"]) for call in _calls(script)]
    assert {command for command, _ in calls} == {"validate", "plan", "apply"}
    for command, rest in calls:
        _check_call(command, rest)
    plan = next(rest for command, rest in calls if command == "plan")
    assert "--format markdown -o plan.md" in plan


@pytest.mark.parametrize("path", sorted(WORKFLOWS.glob("*.yml")), ids=lambda p: p.name)
def test_every_example_workflow_calls_existing_commands_and_options(path: Path) -> None:
    calls = [
        call for script in _scripts(yaml.safe_load(path.read_text())) for call in _calls(script)
    ]
    assert calls, f"{path.name} calls no customs-batch command"
    for command, rest in calls:
        _check_call(command, rest)


def test_the_long_apply_workflow_dispatches_itself_again_on_the_budget_exit_code() -> None:
    workflow = yaml.safe_load(LONG_APPLY.read_text())
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert "workflow_dispatch" in triggers, "the resume job dispatches the workflow"
    apply_job, resume_job = workflow["jobs"]["apply"], workflow["jobs"]["resume"]
    (apply_call,) = [rest for s in _scripts(apply_job) for c, rest in _calls(s) if c == "apply"]
    budget = re.search(r"--time-budget (\S+)", apply_call)
    assert budget, apply_call
    seconds = parse_time_budget(budget[1]).seconds
    assert seconds < apply_job["timeout-minutes"] * 60, "the budget must end before the job"
    out_of_time = int(ExitCode.OUT_OF_TIME)
    script = "\n".join(_scripts(apply_job))
    assert f'"$code" != {out_of_time}' in script, "exit 4 must not fail the apply job"
    assert resume_job["if"].startswith(f"needs.apply.outputs.exit-code == '{out_of_time}' ||")
    assert resume_job["permissions"] == {"actions": "write"}
    (dispatch,) = _scripts(resume_job)
    assert f"gh workflow run {LONG_APPLY.name} " in dispatch


def test_the_plan_marker_the_workflow_looks_for_is_the_one_plan_writes() -> None:
    from customs_batch.reports._markdown import MARKER

    assert MARKER in WORKFLOW.read_text()


def test_the_tutorial_commands_exist() -> None:
    text = (ROOT / "docs" / "tutorial.md").read_text()
    calls = list(_calls("\n".join(line[2:] for line in text.splitlines() if line.startswith("$ "))))
    assert {command for command, _ in calls} >= {"init", "validate", "plan", "apply", "sandbox"}
    for command, rest in calls:
        if command in ("sandbox", "env", "state", "get"):
            sub, _, rest = rest.strip().partition(" ")
            command = f"{command} {sub}"
        _check_call(command, rest)


def _run_action_step(
    step: dict[str, Any], tmp_path: Path, env: dict[str, str], cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """One step of action.yml run as GitHub runs a `shell: bash` step (in ``cwd``, the
    workspace, when given)."""
    script = tmp_path / "step.sh"
    script.write_text(step["run"], encoding="utf-8")
    command = ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)]
    return subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, check=False)


def _outputs(github_output: Path) -> list[dict[str, str]]:
    """The outputs each run of a step wrote, one dict per run (a run starts at exit-code)."""
    runs: list[dict[str, str]] = []
    for line in github_output.read_text(encoding="utf-8").splitlines():
        key, _, value = line.partition("=")
        if key == "exit-code":
            runs.append({})
        runs[-1][key] = value
    return runs


def test_a_failed_plan_after_another_in_the_same_job_posts_no_earlier_plan(
    tmp_path: Path,
) -> None:
    """Two plan steps of one job (two environments, say) share $RUNNER_TEMP: when the second
    fails before writing its plan, its plan-file must not be the first one's, which the
    comment step would post as the plan of a pull request whose plan failed."""
    steps = yaml.safe_load((ROOT / "action.yml").read_text())["runs"]["steps"]
    run = next(step for step in steps if step.get("id") == "run")
    comment = next(step for step in steps if "gh pr comment" in step.get("run", ""))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # plan: the first call writes its -o file and finds changes, the second cannot plan.
    (bin_dir / "customs-batch").write_text(
        "#!/bin/sh\n"
        'if [ "$3" = sandbox ]; then\n'
        '  while [ "$1" != -o ]; do shift; done; echo "plan of sandbox" > "$2"; exit 2\n'
        "fi\n"
        "exit 1\n"
    )
    # gh: no comments on the pull request yet; what it is asked to post is recorded.
    (bin_dir / "gh").write_text(
        '#!/bin/sh\nif [ "$1" = api ]; then exit 0; fi\necho "$@" >> "$GH_RECORD"\n'
    )
    for program in bin_dir.iterdir():
        program.chmod(0o755)
    temp = tmp_path / "runner temp"
    temp.mkdir()
    base = {
        "PATH": f"{bin_dir}:{Path(sys.executable).parent}:/usr/bin:/bin",
        "RUNNER_TEMP": str(temp),
        "GITHUB_OUTPUT": str(tmp_path / "output"),
        "GH_RECORD": str(tmp_path / "gh"),
        "COMMAND": "plan",
        "PATHS": "",
        "FORMAT": "",
        "ARGS": "",
    }
    first = _run_action_step(run, tmp_path, {**base, "ENVIRONMENT": "sandbox"})
    second = _run_action_step(run, tmp_path, {**base, "ENVIRONMENT": "production"})
    assert (first.returncode, second.returncode) == (0, 1), first.stderr + second.stderr
    sandbox, production = _outputs(tmp_path / "output")
    assert Path(sandbox["plan-file"]).read_text() == "plan of sandbox\n"
    assert sandbox["plan-file"] != production["plan-file"]
    assert not Path(production["plan-file"]).exists()
    # The comment step of the second plan posts nothing; the first's posts its own plan.
    for outputs in (production, sandbox):
        env = {**base, "PR": "7", "GH_TOKEN": "t", "PLAN_FILE": outputs["plan-file"]}
        env["GITHUB_REPOSITORY"] = "owner/repo"
        assert _run_action_step(comment, tmp_path, env).returncode == 0
    posted = (tmp_path / "gh").read_text().splitlines()
    assert posted == [f"pr comment 7 --body-file {sandbox['plan-file']}"]


def test_the_action_runs_in_the_working_directory_it_is_given(tmp_path: Path) -> None:
    """A project in a folder of the repository: customs-batch.yaml (its environments, its
    state folder) is found from the current folder, so the action runs there, spaces in
    its name included; a folder that does not exist is an annotation naming it."""
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["inputs"]["working-directory"]["default"] == "."
    run = next(step for step in action["runs"]["steps"] if step.get("id") == "run")
    assert run["env"]["WORKING_DIRECTORY"] == "${{ inputs.working-directory }}"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "customs-batch").write_text('#!/bin/sh\npwd > "$RECORD"\necho "$@" >> "$RECORD"\n')
    (bin_dir / "customs-batch").chmod(0o755)
    workspace = tmp_path / "workspace"
    (workspace / "customs project").mkdir(parents=True)
    record = tmp_path / "record"
    env = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "RECORD": str(record),
        "RUNNER_TEMP": str(tmp_path),
        "GITHUB_OUTPUT": str(tmp_path / "output"),
        "COMMAND": "plan",
        "PATHS": "manifests/",
        "ENVIRONMENT": "sandbox",
        "FORMAT": "",
        "ARGS": "",
    }
    script = tmp_path / "step.sh"
    script.write_text(run["run"], encoding="utf-8")
    command = ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)]

    def step(folder: str) -> subprocess.CompletedProcess[str]:
        environ = {**env, "WORKING_DIRECTORY": folder}
        return subprocess.run(command, env=environ, cwd=workspace, capture_output=True, text=True)

    assert step("customs project").returncode == 0
    where, arguments = record.read_text().splitlines()
    assert where == str(workspace / "customs project")
    assert arguments.startswith("plan manifests/ --env sandbox --format markdown -o ")
    assert step(".").returncode == 0
    assert record.read_text().splitlines()[0] == str(workspace)
    missing = step("custom")
    assert missing.returncode == 64
    assert "::error title=customs-batch action::working-directory 'custom'" in missing.stdout


def test_the_tutorial_shows_what_plan_says_of_the_rate_limit(tmp_path: Path) -> None:
    """The tutorial's outputs are copied from a real run: with the sandbox environment it
    sets up (a rate limit, a local state), plan in text ends with a note on the rate limit,
    which a newcomer meets and must find in the page too."""
    from customs_batch.backends import rate_limit_note
    from customs_batch.environments import load_config

    text = (ROOT / "docs" / "tutorial.md").read_text()
    blocks = re.findall(r"```(\w*)\n(.*?)```", text, re.DOTALL)
    settings = next(body for lang, body in blocks if lang == "yaml" and "environments:" in body)
    (tmp_path / "customs-batch.yaml").write_text(settings)
    note = rate_limit_note(load_config(tmp_path / "customs-batch.yaml").environment("sandbox"))
    assert note is not None
    # In text, the format a person reads; a report written with -o is left as it is.
    plans = [body for lang, body in blocks if not lang and "$ customs-batch plan" in body]
    shown = [body for body in plans if "\nRequests: " in body]
    text_plans = [body for body in shown if "--format" not in body]
    assert len(text_plans) >= 3
    for body in text_plans:
        assert f"\nNote: {note}.\n" in body, body
    for body in shown:
        if "--format markdown" in body:
            assert "Note: " not in body, body


PLAN_OF = "<!-- customs-batch plan -->\n### customs-batch plan for `{}`\n\n{}\n"


@pytest.mark.parametrize(
    ("comments", "expected"),
    [
        # Another workflow's comment came last (github.token is every workflow's): the
        # action's own plan comment is the one edited, the other left alone.
        ([(11, PLAN_OF.format("sandbox", "old")), (12, "Coverage: 93%")], "PATCH 11"),
        # The plan of another environment is another comment: this one is created.
        ([(21, PLAN_OF.format("production", "old"))], "CREATE"),
        ([(31, "Coverage: 93%")], "CREATE"),
        ([], "CREATE"),
        # Edited on github.com, a body may come back with CRLF line ends.
        ([(41, PLAN_OF.format("sandbox", "old").replace("\n", "\r\n"))], "PATCH 41"),
    ],
)
def test_the_plan_comment_replaces_only_the_actions_own_comment_for_the_environment(
    tmp_path: Path, comments: list[tuple[int, str]], expected: str
) -> None:
    steps = yaml.safe_load((ROOT / "action.yml").read_text())["runs"]["steps"]
    comment = next(step for step in steps if "gh pr comment" in step.get("run", ""))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # gh: `api --paginate .../comments --jq ...` answers what the --jq filter gives, one
    # [id, body] array a line; an edit or a new comment is recorded with the body posted.
    (bin_dir / "gh").write_text(
        "#!/bin/sh\n"
        'if [ "$1 $2" = "api --paginate" ]; then cat "$COMMENTS"; exit 0; fi\n'
        'case "$1 $2" in\n'
        '  "api --method") echo "PATCH ${4##*/}"; echo "${6#body=@}" ;;\n'
        '  "pr comment") case "$*" in *--edit-last*) echo EDIT-LAST ;; *) echo CREATE ;; esac\n'
        '    echo "$5" ;;\n'
        "  *) exit 9 ;;\n"
        'esac >> "$RECORD"\n'
    )
    (bin_dir / "gh").chmod(0o755)
    listing = tmp_path / "comments"
    listing.write_text("".join(json.dumps([id_, body]) + "\n" for id_, body in comments))
    plan = tmp_path / "plan dir" / "plan.md"
    plan.parent.mkdir()
    plan.write_text(PLAN_OF.format("sandbox", "new"))
    env = {
        "PATH": f"{bin_dir}:{Path(sys.executable).parent}:/usr/bin:/bin",
        "COMMENTS": str(listing),
        "RECORD": str(tmp_path / "record"),
        "GITHUB_REPOSITORY": "owner/repo",
        "GH_TOKEN": "t",
        "PR": "7",
        "PLAN_FILE": str(plan),
    }
    result = _run_action_step(comment, tmp_path, env)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "record").read_text().splitlines() == [expected, str(plan)]


@pytest.mark.parametrize(
    ("paths", "passed"),
    [
        ("manifests/", ["manifests/"]),
        ("manifests/a.yaml  manifests/b.yaml", ["manifests/a.yaml", "manifests/b.yaml"]),
        ("manifests/*.yaml", ["manifests/a.yaml", "manifests/b.yaml"]),
        (
            "customs manifests/road freight.yaml\n  manifests/a.yaml  \n\n",
            ["customs manifests/road freight.yaml", "manifests/a.yaml"],
        ),
        ("", []),
    ],
)
def test_the_action_passes_each_path_as_one_argument(
    tmp_path: Path, paths: str, passed: list[str]
) -> None:
    """paths: one a line (a name with spaces whole), or words on one line (patterns
    expanded), each reaching customs-batch as one argument."""
    run = next(
        step
        for step in yaml.safe_load((ROOT / "action.yml").read_text())["runs"]["steps"]
        if step.get("id") == "run"
    )
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "customs-batch").write_text(
        '#!/bin/sh\nfor arg in "$@"; do printf "%s\\n" "$arg"; done > "$RECORD"\n'
    )
    (bin_dir / "customs-batch").chmod(0o755)
    workspace = tmp_path / "workspace"
    (workspace / "manifests").mkdir(parents=True)
    for name in ("a.yaml", "b.yaml"):
        (workspace / "manifests" / name).write_text("")
    record = tmp_path / "record"
    env = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "RECORD": str(record),
        "RUNNER_TEMP": str(tmp_path),
        "GITHUB_OUTPUT": str(tmp_path / "output"),
        "WORKING_DIRECTORY": ".",
        "COMMAND": "validate",
        "PATHS": paths,
        "ENVIRONMENT": "",
        "FORMAT": "",
        "ARGS": "",
    }
    done = _run_action_step(run, tmp_path, env, cwd=workspace)
    assert done.returncode == 0, done.stdout + done.stderr
    arguments = record.read_text().splitlines()
    assert arguments == ["validate", *passed, "--format", "github"]


def test_the_tutorial_says_its_apply_output_is_what_a_pipe_gets_and_a_terminal_does_not(
    tmp_path: Path,
) -> None:
    """The tutorial's apply output (one `done` line per operation, with the IDs, and an
    `Apply:` line) is what apply prints when its output is not a terminal; on a terminal it
    shows a progress bar and a table instead. The page must say which, and how to get it."""
    text = (ROOT / "docs" / "tutorial.md").read_text()
    section = text.split("## 6. Apply", 1)[1].split("```", 1)[0]
    assert "Where its output is not a terminal" in " ".join(section.split())
    assert "`customs-batch apply first.plan --env sandbox --wait | cat`" in section
    assert "\ndone     DepartureDeclaration/my-departure  declarationId=7003" in text

    project = tmp_path / "p"
    command = [sys.executable, "-m", "customs_batch"]
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path, "COLUMNS": "120"}
    subprocess.run([*command, "init", str(project)], env=env, check=True, capture_output=True)

    def apply(*, terminal: bool) -> str:
        shutil.rmtree(project / ".customs-batch", ignore_errors=True)  # a first apply
        plan = [*command, "plan", "-out", "first.plan"]
        subprocess.run(plan, cwd=project, env=env, check=True, capture_output=True)
        master, slave = os.openpty()  # stdin a terminal in both; stdout as asked
        chunks: list[bytes] = []

        def read() -> None:
            while True:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # the terminal's other end closed
                    return
                if not chunk:
                    return
                chunks.append(chunk)

        reader = threading.Thread(target=read)
        reader.start()
        try:
            done = subprocess.run(
                [*command, "apply", "first.plan"],
                cwd=project,
                stdin=slave,
                stdout=slave if terminal else subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=env,
                timeout=120,
                check=False,
            )
        finally:
            os.close(slave)
            reader.join()
            os.close(master)
        assert done.returncode == 0
        return b"".join(chunks).decode() if terminal else done.stdout.decode()

    piped = apply(terminal=False)
    assert re.search(r"^done     DepartureDeclaration/my-departure  declarationId=\d+", piped, re.M)
    assert re.search(r"^Apply: 6 succeeded, 0 failed", piped, re.M)
    shown = apply(terminal=True)
    assert "succeeded" in shown
    assert "done     DepartureDeclaration" not in shown and "Apply: 6 succeeded" not in shown


def _long_apply_step(job: str, name: str | None = None) -> dict[str, Any]:
    steps = yaml.safe_load(LONG_APPLY.read_text())["jobs"][job]["steps"]
    (step,) = [s for s in steps if "run" in s and (name is None or s.get("id") == name)]
    return dict(step)


def _run_long_apply_step(
    step: dict[str, Any], tmp_path: Path, env: dict[str, str], cwd: Path | None = None
) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """A step of the long-apply workflow as GitHub runs it (bash -e), with `customs-batch`,
    `git` and `gh` that record their arguments; ``env`` holds the step's `env:` resolved."""
    assert "${{" not in step["run"], "expressions reach the script through env, never inline"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    record = tmp_path / "record"
    record.write_text("")
    for program in ("customs-batch", "gh"):
        (bin_dir / program).write_text(
            f'#!/bin/sh\necho "{program} $*" >> "$RECORD"\nexit "${{CODE_OF_APPLY:-0}}"\n'
        )
    (bin_dir / "git").write_text(
        "#!/bin/sh\n"
        'case "$1" in\n'
        '  rev-parse) echo "$CHECKED_OUT" ;;\n'
        '  ls-remote) printf "%s\\t%s\\n" "$BRANCH_HEAD" "$3" ;;\n'
        "  *) exit 9 ;;\n"
        "esac\n"
    )
    for fake in bin_dir.iterdir():
        fake.chmod(0o755)
    output = tmp_path / "output"
    output.write_text("")
    environ = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "RECORD": str(record),
        "GITHUB_OUTPUT": str(output),
        "GITHUB_REF_NAME": "main",
        "GITHUB_REPOSITORY": "owner/manifests",
        **env,
    }
    script = tmp_path / "step.sh"
    script.write_text(step["run"], encoding="utf-8")
    command = ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)]
    done = subprocess.run(command, env=environ, cwd=cwd, capture_output=True, text=True)
    return done, record.read_text().splitlines()


A, B = "a" * 40, "b" * 40


@pytest.mark.parametrize(
    ("event", "actor", "commit", "box", "checked_out", "guarded"),
    [
        # The run a push starts: the guard checks what the push brings.
        ("push", "alice", "", "", A, True),
        # A part the resume job dispatched, with the commit the chain started from.
        ("workflow_dispatch", "github-actions[bot]", A, "false", A, False),
        # "Run workflow" by hand: the branch as it is, guarded, unless the box is ticked.
        ("workflow_dispatch", "alice", "", "false", B, True),
        ("workflow_dispatch", "alice", "", "true", B, False),
        # A commit typed by hand is no part of a chain: still guarded.
        ("workflow_dispatch", "alice", A, "false", A, True),
        # Dispatched without a commit (an older resume job): the branch, guarded.
        ("workflow_dispatch", "github-actions[bot]", "", "false", B, True),
        # The checkout is not the chain's commit: guarded.
        ("workflow_dispatch", "github-actions[bot]", A, "false", B, True),
    ],
)
def test_the_long_apply_guard_is_off_only_for_the_rest_of_a_batch_a_guarded_run_started(
    tmp_path: Path,
    event: str,
    actor: str,
    commit: str,
    box: str,
    checked_out: str,
    guarded: bool,
) -> None:
    """A chain's later parts go on with the commit its first, guarded, run applied: a change
    pushed while the chain runs, or a run by hand, is checked by the large-change guard."""
    step = _long_apply_step("apply", "apply")
    assert step["env"]["EVENT"] == "${{ github.event_name }}"
    assert step["env"]["ACTOR"] == "${{ github.actor }}"
    assert step["env"]["CHAIN_COMMIT"] == "${{ inputs.commit }}"
    assert step["env"]["ALLOW_LARGE_CHANGE"] == "${{ inputs.allow-large-change }}"
    env = {
        "EVENT": event,
        "ACTOR": actor,
        "CHAIN_COMMIT": commit,
        "ALLOW_LARGE_CHANGE": box,
        "CHECKED_OUT": checked_out,
        "BRANCH_HEAD": B,
    }
    done, calls = _run_long_apply_step(step, tmp_path, env)
    assert done.returncode == 0, done.stderr
    (apply,) = calls
    assert apply.startswith("customs-batch apply manifests/ --auto-approve --time-budget ")
    assert ("--allow-large-change" not in apply) is guarded, apply
    outputs = dict(line.split("=", 1) for line in (tmp_path / "output").read_text().splitlines())
    assert outputs == {"commit": checked_out, "exit-code": "0", "branch-head": B}


def test_the_apply_that_commits_the_state_checks_out_the_branch_not_the_runs_commit() -> None:
    """The apply job commits the state folder to the branch after every run. A run that
    waited in the concurrency group for the one before it, and a job re-run (which keeps its
    first github.sha), were started for a commit without the state the runs since committed:
    actions/checkout without a ref checks out github.sha, and apply, planning from that older
    state, sent again every movement and departure those runs had created. With the branch's
    ref it checks out the branch as it is when the job starts, its newest state with it."""
    workflow = yaml.safe_load(WORKFLOW.read_text())
    steps = workflow["jobs"]["apply"]["steps"]
    assert any("git push" in step.get("run", "") for step in steps)  # the state is committed
    project = next(s for s in steps if s.get("uses", "").startswith("actions/checkout@"))
    assert project.get("with", {}).get("ref") == "${{ github.ref }}"
    assert workflow["jobs"]["apply"]["if"].endswith("github.ref == 'refs/heads/main'")


def test_a_long_apply_part_checks_out_the_chains_commit_not_the_branch() -> None:
    workflow = yaml.safe_load(LONG_APPLY.read_text())
    triggers = workflow.get("on", workflow.get(True))
    inputs = triggers["workflow_dispatch"]["inputs"]
    assert inputs["commit"]["default"] == ""
    assert inputs["allow-large-change"] == {**inputs["allow-large-change"], "type": "boolean"}
    assert inputs["allow-large-change"]["default"] is False
    steps = workflow["jobs"]["apply"]["steps"]
    project = next(s for s in steps if s.get("uses", "").startswith("actions/checkout@"))
    assert project["with"] == {"ref": "${{ inputs.commit || github.sha }}"}
    outputs = workflow["jobs"]["apply"]["outputs"]
    assert outputs["commit"] == "${{ steps.apply.outputs.commit }}"
    assert outputs["branch-head"] == "${{ steps.apply.outputs.branch-head }}"


@pytest.mark.parametrize(
    ("code", "dispatched"),
    [
        # The next part: the same commit, whatever the branch holds by now.
        ("4", f"--ref main -f commit={A}"),
        # The chain is done, the branch moved on: a run of the branch, guarded.
        ("0", "--ref main"),
    ],
)
def test_the_resume_job_dispatches_the_chains_commit_or_a_guarded_run_of_the_branch(
    tmp_path: Path, code: str, dispatched: str
) -> None:
    step = _long_apply_step("resume")
    assert step["env"]["CODE"] == "${{ needs.apply.outputs.exit-code }}"
    assert step["env"]["COMMIT"] == "${{ needs.apply.outputs.commit }}"
    env = {"CODE": code, "COMMIT": A, "GH_TOKEN": "t", "CHECKED_OUT": A, "BRANCH_HEAD": B}
    done, calls = _run_long_apply_step(step, tmp_path, env)
    assert done.returncode == 0, done.stderr
    expected = f"gh workflow run {LONG_APPLY.name} --repo owner/manifests {dispatched}"
    assert calls == [expected]


def test_the_resume_job_runs_on_the_budget_exit_or_when_a_part_ends_behind_the_branch() -> None:
    condition = " ".join(yaml.safe_load(LONG_APPLY.read_text())["jobs"]["resume"]["if"].split())
    assert condition == (
        "needs.apply.outputs.exit-code == '4' || (needs.apply.outputs.exit-code == '0' "
        "&& github.event_name == 'workflow_dispatch' "
        "&& needs.apply.outputs.branch-head != '' "
        "&& needs.apply.outputs.branch-head != needs.apply.outputs.commit)"
    )


@pytest.mark.parametrize(("code", "step_code"), [("4", 0), ("1", 1), ("3", 3)])
def test_a_long_apply_part_out_of_time_passes_and_any_other_failure_fails(
    tmp_path: Path, code: str, step_code: int
) -> None:
    env = {
        "EVENT": "push",
        "ACTOR": "alice",
        "CHAIN_COMMIT": "",
        "ALLOW_LARGE_CHANGE": "",
        "CHECKED_OUT": A,
        "BRANCH_HEAD": A,
        "CODE_OF_APPLY": code,
    }
    done, _ = _run_long_apply_step(_long_apply_step("apply", "apply"), tmp_path, env)
    assert done.returncode == step_code
    outputs = dict(line.split("=", 1) for line in (tmp_path / "output").read_text().splitlines())
    assert outputs == {"commit": A, "exit-code": code, "branch-head": A}


@pytest.mark.parametrize("path", sorted(WORKFLOWS.glob("*.yml")), ids=lambda p: p.name)
def test_every_job_that_checks_out_may_read_a_private_repository(path: Path) -> None:
    """A job that lists its permissions has none it does not list (GitHub): one that checks
    out must list contents, or actions/checkout cannot fetch a private repository."""
    workflow = yaml.safe_load(path.read_text())
    for name, job in workflow["jobs"].items():
        if not any(s.get("uses", "").startswith("actions/checkout@") for s in job["steps"]):
            continue
        permissions = job.get("permissions", workflow.get("permissions"))
        if permissions is None:  # the repository's default, which reads
            continue
        assert isinstance(permissions, dict), (name, permissions)
        assert permissions.get("contents") in ("read", "write"), f"job {name}: {permissions}"


@pytest.mark.parametrize("path", sorted(WORKFLOWS.glob("*.yml")), ids=lambda p: p.name)
def test_the_tool_checkout_takes_a_token_that_reads_another_private_repository(
    path: Path,
) -> None:
    """github.token reads the workflow's repository only: the tool's checkout from another
    repository takes the token the README names, and keeps no credentials on disk."""
    readme = (ROOT / "examples" / "ci" / "README.md").read_text()
    token = "${{ secrets.CUSTOMS_BATCH_TOOL_TOKEN || github.token }}"
    assert f"token: {token}" in readme
    for job in yaml.safe_load(path.read_text())["jobs"].values():
        for step in job["steps"]:
            if "repository" in step.get("with", {}):
                assert step["with"]["token"] == token
                assert step["with"]["persist-credentials"] is False


def test_the_tutorials_refusal_is_what_plan_prints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The tutorial's refused movement, copied from a run, carries the hint plan prints
    (with the run's `--env`, so that the command it names acts on the same state)."""
    text = (ROOT / "docs" / "tutorial.md").read_text()
    shown = next(
        line.strip() for line in text.splitlines() if "a movement is immutable once" in line
    )
    monkeypatch.chdir(tmp_path)
    assert invoke(["init", "p"]) == 0
    monkeypatch.chdir(tmp_path / "p")
    assert invoke(["apply", "--env", "local", "--auto-approve"]) == 0
    movement = Path("manifests/movement.yaml")
    movement.write_text(movement.read_text().replace("quantity: 6", "quantity: 7"))
    capsys.readouterr()
    assert invoke(["plan", "--env", "local"]) == 1
    printed = next(
        line.strip()
        for line in capsys.readouterr().out.splitlines()
        if "a movement is immutable once" in line
    )
    assert shown == printed.replace("--env local", "--env sandbox")
