"""``render`` as a function: the documents expanded, the findings, the exit code."""

from __future__ import annotations

from pathlib import Path

from customs_batch.commands.init import InitOptions, init_project
from customs_batch.commands.render import RenderOptions, render_documents
from customs_batch.errors import ExitCode
from customs_batch.kinds import Kind

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_a_new_project_renders_every_document_with_its_template(tmp_path: Path) -> None:
    init_project(InitOptions(tmp_path / "project"))
    result = render_documents(RenderOptions((tmp_path / "project" / "manifests",)))
    assert result.exit_code is ExitCode.OK
    assert not result.validation.failed()
    # One manifest per kind.
    assert sorted(document["kind"] for document in result.documents) == sorted(Kind)
    (departure,) = (d for d in result.documents if d["kind"] == "DepartureDeclaration")
    assert departure["spec"]["type"] == "DEPARTURE"  # from the project's template


def test_input_with_errors_exits_1_with_its_findings() -> None:
    result = render_documents(RenderOptions((EXAMPLES / "bad" / "schema-enum.yaml.bad",)))
    assert result.exit_code is ExitCode.FINDINGS
    assert [finding.rule for finding in result.validation.findings] == ["schema.enum"]
