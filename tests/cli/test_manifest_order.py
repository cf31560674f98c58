"""Manifest order across files: a HAWB's movements in two files apply in the order
dependsOn states (not in file-name order), and without it validate and plan refuse."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import run

ARRIVAL = """\
apiVersion: customs-batch/v1
kind: Movement
metadata:
  name: a2-arrival
spec:
  shipmentId: shp_7Hk2Lm
  hawbId: hawb_a2
  action: VAH
  quantity: 4
  grossWeightKg: 40.0
  customsSupervision: Y
  goodsHandlingCode: N
  partyId: rpty_p1
  customsDeclaration:
    source: EXTERNAL
    documentType: X
    declarationType: IM
    declarationNumber: 24NLR1234567890120
"""
STORAGE = """\
apiVersion: customs-batch/v1
kind: Movement
metadata:
  name: a2-storage-in
{depends}spec:
  shipmentId: shp_7Hk2Lm
  hawbId: hawb_a2
  action: ISL
  quantity: 4
  grossWeightKg: 40.0
  customsSupervision: Y
  goodsHandlingCode: N
  partyId: rpty_p1
"""


def _write(folder: Path, depends: str) -> None:
    # The storage-in's file sorts first: file-name order would send it before the arrival.
    (folder / "manifests").mkdir()
    (folder / "manifests" / "a-storage.yaml").write_text(STORAGE.format(depends=depends))
    (folder / "manifests" / "b-arrival.yaml").write_text(ARRIVAL)


def test_movements_of_one_hawb_in_two_files_need_a_stated_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(tmp_path, "")
    code, out, _ = run(capsys, "validate", "manifests")
    assert code == 1
    assert "error[project.movement-order]" in out
    assert "`dependsOn: [Movement/a2-storage-in]` under `metadata:` of Movement/a2-arrival" in out
    code, _, err = run(capsys, "plan", "manifests")
    assert code == 1, err


def test_depends_on_orders_them_against_the_file_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(tmp_path, "  dependsOn: [Movement/a2-arrival]\n")
    assert run(capsys, "validate", "manifests")[0] == 0
    code, out, _ = run(capsys, "plan", "manifests", "--format", "json")
    assert [c["address"] for c in json.loads(out)["changes"]] == [
        "Movement/a2-arrival",
        "Movement/a2-storage-in",
    ]
    code, out, err = run(capsys, "apply", "manifests", "--auto-approve")
    assert code == 0, out + err
    done = [line.split()[1] for line in out.splitlines() if line.startswith("done")]
    assert done == ["Movement/a2-arrival", "Movement/a2-storage-in"]
