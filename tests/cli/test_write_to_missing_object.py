"""A write to an object the service does not hold (an export cancellation of a declaration
number it has no declaration at, a HAWB deactivation of a HAWB it does not list): the
failure names which object was looked for, so that the user knows what to check."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.conftest import run

MANIFESTS = """\
apiVersion: customs-batch/v1
kind: ExportCancellation
metadata: {name: cancel-missing}
spec: {declarationId: 99999}
---
apiVersion: customs-batch/v1
kind: HawbDeactivation
metadata: {name: deactivate-missing}
spec: {shipmentId: shp_7Hk2Lm, hawbId: hawb_zz}
"""


def test_the_failure_names_the_object_that_was_not_found(
    capsys: pytest.CaptureFixture[str],
) -> None:
    Path("manifests").mkdir()
    Path("manifests/missing.yaml").write_text(MANIFESTS, encoding="utf-8")
    code, out, err = run(capsys, "apply", "manifests", "--auto-approve")
    assert code == 1, out + err
    # It said "the object it writes to was not found" and nothing of which one.
    assert (
        "ExportCancellation/cancel-missing  not sent: the object it writes to "
        "(declarationId=99999) was not found at the service" in out
    )
    assert (
        "HawbDeactivation/deactivate-missing  not sent: the object it writes to "
        "(shipmentId=shp_7Hk2Lm, hawbId=hawb_zz) was not found at the service" in out
    )
