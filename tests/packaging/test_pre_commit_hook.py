"""The pre-commit hook run by pre-commit itself, in a repository that holds other YAML files
than manifests: pre-commit clones this repository at a commit, installs it into a virtual
environment of its own (pip, with the dependencies from PyPI) and runs the hook as a user's
commit would."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from customs_batch.cli.main import invoke

ROOT = Path(__file__).resolve().parents[2]
HOOK = "customs-batch-validate"

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not (ROOT / ".git").exists(), reason="pre-commit needs a git checkout"),
]

WORKFLOW = """\
name: ci
on: push
jobs:
  test:
    runs-on: ubuntu-latest
    steps: [{uses: actions/checkout@v4}]
"""
COMPOSE = """\
services:
  web:
    image: nginx:1.27
    ports: ["8080:80"]
"""


def _git(repo: Path, *args: str) -> str:
    identity = ["-c", "user.name=test", "-c", "user.email=test@example.com"]
    command = ["git", "-C", str(repo), *identity, "-c", "commit.gpgsign=false", *args]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout


def _hook_repository(folder: Path) -> str:
    """This checkout as it is, uncommitted changes included, committed to a repository of its
    own (what ``pre-commit try-repo`` does): its commit, for ``rev:``."""
    files = _git(ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    for name in filter(None, files.split("\0")):
        if (ROOT / name).is_file():  # a file deleted in the working tree is gone here too
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, folder / name)
    _git(folder, "init", "--quiet")
    _git(folder, "add", "--all")
    _git(folder, "commit", "--quiet", "--no-verify", "-m", "the hook repository")
    return _git(folder, "rev-parse", "HEAD").strip()


def _commit_hook(repo: Path, home: Path) -> subprocess.CompletedProcess[str]:
    """``pre-commit run --all-files``: what a commit runs, on every tracked file."""
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    command = [sys.executable, "-m", "pre_commit", "run", "--all-files"]
    return subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True, timeout=600)


def test_the_hook_validates_the_manifests_and_leaves_other_yaml_alone(tmp_path: Path) -> None:
    hooks = tmp_path / "customs-batch"
    rev = _hook_repository(hooks)
    repo = tmp_path / "repo"
    assert invoke(["init", str(repo)]) == 0  # writes `manifests: [manifests]`
    (repo / ".github" / "workflows").mkdir(parents=True)
    (repo / ".github" / "workflows" / "x.yml").write_text(WORKFLOW, encoding="utf-8")
    (repo / "docker-compose.yml").write_text(COMPOSE, encoding="utf-8")
    (repo / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {hooks}\n    rev: {rev}\n    hooks:\n      - id: {HOOK}\n",
        encoding="utf-8",
    )
    _git(repo, "init", "--quiet")
    _git(repo, "add", "--all")
    home = tmp_path / "pre-commit"

    passed = _commit_hook(repo, home)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "customs-batch validate" in passed.stdout and "Passed" in passed.stdout

    departure = repo / "manifests" / "departure.yaml"
    departure.write_text(
        departure.read_text(encoding="utf-8").replace("totalWeight: 125.5", "totalWeight: heavy"),
        encoding="utf-8",
    )
    _git(repo, "add", "--all")
    failed = _commit_hook(repo, home)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "Failed" in failed.stdout
    assert "manifests/departure.yaml:" in failed.stdout
    assert "error[schema.type]" in failed.stdout
    assert "docker-compose.yml" not in failed.stdout and "x.yml" not in failed.stdout
