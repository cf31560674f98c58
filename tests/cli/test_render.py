"""`customs-batch render`: expanded documents on stdout, findings on stderr."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from customs_batch.cli.main import invoke

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _cli(*args: str) -> tuple[int, str, str]:
    """Run the CLI through click's runner and the real entry point's error handler."""
    with CliRunner().isolation() as (out, err, _):
        code = invoke(list(args))
    return code, out.getvalue().decode(), err.getvalue().decode()


def test_yaml_output_has_the_template_merged_and_references_as_written() -> None:
    code, out, err = _cli("render", str(EXAMPLES / "manifests"))
    assert (code, err) == (0, "")
    documents = list(yaml.safe_load_all(out))
    assert len(documents) == 15
    by_name = {doc["metadata"]["name"]: doc for doc in documents}
    departure = by_name["dep-rtm-ham-0001"]
    assert set(departure) == {"apiVersion", "kind", "metadata", "spec"}
    assert departure["spec"]["departureOffice"] == "NL000396"  # from the user template
    assert departure["spec"]["commercialReference"] == "ACME-2026-0001"  # from the spec
    assert departure["metadata"]["labels"] == {"lane": "rtm-ham"}
    built_in = by_name["dep-rtm-ant-0002"]["spec"]
    assert built_in["destinationOffice"] == "BE212000"  # from t1-road
    assert built_in["TransportMeans"][0]["identificationNumber"] == "NL-34-ABC"
    update = by_name["dep-rtm-ham-0001-consignee"]["spec"]
    assert update["declarationId"] == "${ref:DepartureDeclaration/dep-rtm-ham-0001.declarationId}"


def test_json_output_is_one_array_with_types_kept() -> None:
    code, out, _ = _cli("render", "--format", "json", str(EXAMPLES / "manifests" / "hawbs.yaml"))
    assert code == 0
    assert json.loads(out) == [
        {
            "apiVersion": "customs-batch/v1",
            "kind": "HawbDeactivation",
            "metadata": {"name": "hawb-a3-duplicate"},
            "spec": {"shipmentId": "shp_7Hk2Lm", "hawbId": "hawb_a3"},
        }
    ]


def test_input_with_errors_prints_nothing_and_exits_1() -> None:
    code, out, err = _cli("render", str(EXAMPLES / "bad" / "schema-enum.yaml.bad"))
    assert (code, out) == (1, "")
    assert "error[schema.enum]" in err
    assert err.endswith("1 error, 0 warnings in 1 document (1 file)\n")


def test_warnings_go_to_stderr_and_the_documents_still_print() -> None:
    Path("empty.yaml").write_text("# later\n", encoding="utf-8")
    hawbs = EXAMPLES / "manifests" / "hawbs.yaml"
    code, out, err = _cli("render", "empty.yaml", str(hawbs))
    assert code == 0
    assert "warning[yaml.empty-file]" in err
    assert "hawb-a3-duplicate" in out


def test_without_paths_the_project_manifests_are_rendered_as_validate_reads_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The hint a mistyped --target gives (`customs-batch render` lists the documents) runs.
    monkeypatch.chdir(tmp_path)
    assert _cli("init", "p")[0] == 0
    monkeypatch.chdir(tmp_path / "p")
    code, out, err = _cli("plan", "--target", "TemplateGroup/my-grup")
    assert code == 64 and "`customs-batch render` lists the documents" in err
    code, out, err = _cli("render")
    assert code == 0, err
    names = {(d["kind"], d["metadata"]["name"]) for d in yaml.safe_load_all(out)}
    assert ("TemplateGroup", "my-group") in names
    assert _cli("render", "manifests")[1] == out
    # Named in customs-batch.yaml: what validate reads without paths, not the folder.
    (tmp_path / "p" / "customs-batch.yaml").write_text(
        "manifests: [manifests/template-group.yaml]\n", encoding="utf-8"
    )
    code, out, err = _cli("render")
    assert code == 0, err
    assert {d["kind"] for d in yaml.safe_load_all(out)} == {"TemplateGroup"}


def test_paths_must_exist() -> None:
    code, _, err = _cli("render", "nope.yaml")
    assert code == 64
    assert "does not exist" in err


def test_an_access_code_prints_as_sensitive_unless_asked_for() -> None:
    code, out, err = _cli("render", str(EXAMPLES / "manifests" / "departures.yaml"))
    assert (code, err) == (0, "")
    departures = [d for d in yaml.safe_load_all(out) if d["kind"] == "DepartureDeclaration"]
    guarantees = [g for d in departures for g in d["spec"]["DeclarationGuarantees"]]
    assert guarantees and {g["accessCode"] for g in guarantees} == {"(sensitive)"}
    assert "accessCode: '1234'" not in out

    code, out, err = _cli("render", str(EXAMPLES / "manifests"), "--show-sensitive")
    departures = [d for d in yaml.safe_load_all(out) if d["kind"] == "DepartureDeclaration"]
    shown = {g["accessCode"] for d in departures for g in d["spec"]["DeclarationGuarantees"]}
    assert (code, shown) == (0, {"1234"})


@pytest.mark.parametrize("format_name", ["json", "yaml"])
def test_output_escapes_a_right_to_left_override_and_reads_back_the_same(
    tmp_path: Path, format_name: str
) -> None:
    # A value pasted with a right-to-left override (validate warns) was printed as is by
    # both formats, reordering the line on the terminal.
    manifest = tmp_path / "hawb.yaml"
    manifest.write_text(
        "apiVersion: customs-batch/v1\nkind: HawbDeactivation\nmetadata:\n  name: h1\n"
        '  labels: {note: "abc\\u202edcba"}\n'
        "spec: {shipmentId: shp_7Hk2Lm, hawbId: hawb_a3}\n",
        encoding="utf-8",
    )
    code, out, _ = _cli("render", "--format", format_name, str(manifest))
    assert code == 0, out
    assert "\u202e" not in out and "abc\\u202edcba" in out
    first = json.loads(out)[0] if format_name == "json" else yaml.safe_load(out)
    assert first["metadata"]["labels"]["note"] == "abc\u202edcba"
