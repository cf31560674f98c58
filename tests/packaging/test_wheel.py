"""The wheel carries what the package needs at run time: schemas, templates, the seed."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_wheel_carries_schemas_templates_and_the_seed(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "hatchling", "build", "-t", "wheel", "-d", str(tmp_path)],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("customs_batch-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    schemas = sorted(p.name for p in (ROOT / "schemas").glob("*.schema.json"))
    templates = sorted(p.name for p in (ROOT / "templates").glob("*.yaml.j2"))
    assert schemas and templates
    for name in [*schemas, "patterns.json"]:
        assert f"customs_batch/_data/schemas/{name}" in names
    for name in templates:
        assert f"customs_batch/_data/templates/{name}" in names
    assert "customs_batch/sandbox/builtin-seed.yaml" in names
    for data in (
        "rec21-package-kinds.csv",
        "ncts-cl018-transport-modes.csv",
        "ncts-transport-modes-two-digit.csv",
        "ncts-cl251-guarantee-types.csv",
    ):
        assert f"customs_batch/validation/data/{data}" in names

    unpacked = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(unpacked)
    found = subprocess.run(
        [
            sys.executable,
            "-c",
            "from customs_batch.resources import schemas_dir, builtin_templates_dir, load_schema;"
            "from customs_batch.resources import load_pattern_hints; load_pattern_hints();"
            "load_schema('movement'); print(schemas_dir()); print(builtin_templates_dir());"
            "from customs_batch.validation.code_lists import package_kinds;"
            "assert package_kinds()['BX'] == 'Box';"
            "from customs_batch.validation.code_lists import guarantee_types, transport_modes;"
            "assert guarantee_types()['B'] and transport_modes()['3'] == 'Road transport'",
        ],
        cwd=tmp_path,
        env={"PYTHONPATH": str(unpacked), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    for line in found.stdout.splitlines():
        assert Path(line).is_relative_to(unpacked), line
