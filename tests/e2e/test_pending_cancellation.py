"""Export cancellations customs decides later, against a real ``sandbox serve`` process:
pending until read, followed by ``apply --wait`` to canceled or refused, one DELETE each.

The emulator runs on a manual clock and decides a requested cancellation 2 s of that clock
after the request: the cancellations stay pending, whatever real time passes, until the test
moves the clock. Its seed makes customs refuse the cancellation of 503.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.e2e.conftest import Project, Sandbox

CANCELLATIONS = "".join(
    "---\napiVersion: customs-batch/v1\nkind: ExportCancellation\n"
    f"metadata: {{name: cancel-{n}}}\nspec: {{declarationId: {n}}}\n"
    for n in (502, 503)
)


def _refusing_503(sandbox: Sandbox) -> None:
    """503: an export declaration already submitted, whose cancellation customs refuses."""
    seed = yaml.safe_load(sandbox.seed.read_text())
    seed["declarations"].append(
        {
            "declarationId": 503,
            "shipmentId": 1002,
            "type": "EXPORT",
            "status": "submitted",
            "referenceNumber": "REF-1002-B",
            "cancellationAnswer": "refused",
        }
    )
    sandbox.seed.write_text(yaml.safe_dump(seed), encoding="utf-8")


def test_requested_cancellations_stay_pending_until_customs_decides(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    _refusing_503(sandbox)
    sandbox.start(processing_seconds=2)
    project = Project(tmp_path / "project", sandbox)
    project.write("manifests/cancellations.yaml", CANCELLATIONS)

    sent = project.run("apply", "--auto-approve")
    assert sent.returncode == 0, sent.stdout + sent.stderr
    assert sent.stdout.count("waiting  ExportCancellation/") == 2
    assert "0 succeeded" in sent.stdout and "2 waiting" in sent.stdout

    planned = project.run("plan", "--detailed-exitcode")
    assert planned.returncode == 2, planned.stdout + planned.stderr
    assert planned.stdout.count("* waiting") == 2
    assert "2 waiting at the service" in planned.stdout
    again = project.run("apply", "--auto-approve")  # still pending: nothing sent again
    assert again.returncode == 0, again.stdout + again.stderr
    assert "2 waiting" in again.stdout

    sandbox.advance_clock(2)  # customs decides
    followed = project.run("apply", "--auto-approve", "--wait")
    assert followed.returncode == 1, followed.stdout + followed.stderr
    assert "done     ExportCancellation/cancel-502" in followed.stdout
    assert "502 is canceled" in followed.stdout
    assert "503 is submitted: customs refused the cancellation" in followed.stdout

    after = project.run("plan", "--detailed-exitcode")
    assert after.returncode == 1, after.stdout + after.stderr
    assert "! rejected       ExportCancellation/cancel-503" in after.stdout
    assert "cancel-502" not in after.stdout  # canceled: unchanged from now on
    status = project.run("status").stdout
    assert "ExportCancellation/cancel-502  502  canceled" in status
    assert "ExportCancellation/cancel-503  503  submitted  rejected" in status

    # At the service, through its read endpoints: one request each, each decided.
    assert sandbox.get("/v1/declarations/502")["status"] == "canceled"
    assert sandbox.get("/v1/declarations/503")["status"] == "submitted"
    assert sandbox.requests("DELETE", "/declarations") == 2
