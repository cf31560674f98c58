"""Where validation meets the team's own rules: the project root of each file."""

from __future__ import annotations

from pathlib import Path

import pytest

from customs_batch.errors import ConfigError
from customs_batch.validation import team_rules


def test_the_project_root_is_kept_by_folder_not_by_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Kept by file in 4,096 places, a run of 200,000 files looked each one's root up again
    # (twice): a third of validating them. One folder is one place, whatever its files.
    (tmp_path / "customs-batch.yaml").write_text("{}\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    team_rules._folder_root.cache_clear()
    files = [f"manifests/m{number}.yaml" for number in range(5_000)]
    assert team_rules.roots_of(files) == [tmp_path.resolve()]
    assert team_rules.roots_of([*files, "other/x.yaml"]) == [tmp_path.resolve()]
    kept = team_rules._folder_root.cache_info()
    assert (kept.misses, kept.currsize) == (2, 2)


def test_a_file_whose_project_would_be_the_file_system_root_is_named_in_the_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir("/")
    team_rules._folder_root.cache_clear()
    for name in ("a.yaml", "b.yaml"):
        manifest = tmp_path / "manifests" / name
        with pytest.raises(ConfigError, match=f"{manifest}: its project would be /"):
            team_rules.project_root(str(manifest))


def test_the_roots_of_a_run_are_looked_up_once_a_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 20,000 folders of one manifest each: more folders than the cache keeps, so every file
    # was a lookup of its own, twice a run (37 of 56 s of validate).
    (tmp_path / "customs-batch.yaml").write_text("{}\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    looked_up: list[str] = []
    real = team_rules.project_root

    def counted(file: str) -> Path:
        looked_up.append(file)
        return real(file)

    monkeypatch.setattr(team_rules, "project_root", counted)
    files = [f"manifests/d{number}/{name}.yaml" for number in range(5_000) for name in "ab"]
    kept, suppressed = team_rules.finish([], [], files)
    assert kept == suppressed == []
    assert looked_up == files[::2]
