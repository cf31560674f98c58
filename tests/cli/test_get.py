"""``customs-batch get`` against the built-in local environment (the emulator in-process)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
import yaml

from customs_batch.cli.main import invoke
from customs_batch.environments import connect, load_project


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = invoke(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_json_prints_exactly_what_the_service_sent(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "get", "shipments", "--format", "json")
    assert code == 0
    shipments = json.loads(out)
    assert [s["shipmentId"] for s in shipments] == [1003, 1002, 1001]
    assert list(shipments[0]) == [
        "shipmentId",
        "referenceNumber",
        "status",
        "createdAt",
        "updatedAt",
    ]


def test_filters_reach_the_service(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = _run(capsys, "get", "shipments", "--status", "completed", "--format", "json")
    assert [s["referenceNumber"] for s in json.loads(out)] == ["REF-1003"]
    _, out, _ = _run(
        capsys, "get", "declarations", "--type", "export", "--order", "asc", "--format", "csv"
    )
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["declarationId"] for r in rows] == ["501", "502"]
    _, out, _ = _run(
        capsys, "get", "shipments", "--created-from", "2026-01-06", "--format", "jsonl"
    )
    assert len(out.splitlines()) == 2


def test_one_declaration_as_yaml(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "get", "declaration", "501", "--format", "yaml")
    assert code == 0
    record = yaml.safe_load(out)
    assert record["exporter"]["name"] == "Acme Export BV"
    assert len(record["items"]) == 2


def test_an_unknown_id_is_one_clear_line_and_exit_3(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "get", "declaration", "999")
    assert code == 3
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert "not found" in err
    assert "999" in err


def test_transit_lists_and_shows(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = _run(capsys, "get", "transit", "--status", "ready_to_declare", "--format", "json")
    assert [t["declarationId"] for t in json.loads(out)] == [7001]
    _, out, _ = _run(capsys, "get", "transit", "--status", "READY_TO_DECLARE", "--format", "json")
    assert [t["declarationId"] for t in json.loads(out)] == [7001]
    _, out, _ = _run(capsys, "get", "transit", "--help")
    assert "--status [NEW|READY_TO_DECLARE|" in out
    _, out, _ = _run(capsys, "get", "transit", "7002", "--format", "json")
    assert json.loads(out)["status"] == "processing"


def test_items_with_filters_and_one_item(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = _run(
        capsys, "get", "items", "--deleted", "all", "--archived", "all", "--format", "jsonl"
    )
    ids = {json.loads(line)["id"] for line in out.splitlines()}
    assert {9011, 9012} <= ids
    _, out, _ = _run(capsys, "get", "items", "--search", "Nuts", "--format", "json")
    assert [i["description"] for i in json.loads(out)] == ["Nuts"]
    _, out, _ = _run(capsys, "get", "item", "9001", "--format", "json")
    assert json.loads(out)["commodityCode"] == "731815"


def test_template_groups_as_a_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "get", "template-groups", "--company", "1")
    assert code == 0
    assert "DEFAULT" in out
    assert "page 1" in out


def test_hawbs_and_allocations_of_a_shipment(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = _run(capsys, "get", "hawbs", "shp_7Hk2Lm", "--all", "--format", "json")
    assert [h["hawbId"] for h in json.loads(out)] == ["hawb_a1", "hawb_a2", "hawb_a3"]
    _, out, _ = _run(capsys, "get", "allocations", "shp_7Hk2Lm", "--format", "csv")
    assert "alc_1" in out


def test_local_data_persists_between_commands(capsys: pytest.CaptureFixture[str]) -> None:
    with connect(load_project().select(None)) as client:
        client.deactivate_hawb("shp_7Hk2Lm", "hawb_a3")
    _, out, _ = _run(capsys, "get", "hawbs", "shp_7Hk2Lm", "--format", "json")
    assert len(json.loads(out)) == 2
    _, out, _ = _run(capsys, "get", "hawbs", "shp_7Hk2Lm", "--include-inactive", "--format", "json")
    assert json.loads(out)[2]["isActive"] is False


def test_paging_options(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = _run(capsys, "get", "shipments", "--limit", "2", "--page", "2", "--format", "json")
    assert [s["shipmentId"] for s in json.loads(out)] == [1001]
    code, _, err = _run(capsys, "get", "shipments", "--all", "--page", "2")
    assert code == 64
    assert "exclude each other" in err
    code, _, _ = _run(capsys, "get", "shipments", "--limit", "101")
    assert code == 64


@pytest.mark.parametrize("command", [["shipments"], ["hawbs", "shp_7Hk2Lm"], ["items"]])
def test_a_page_past_the_services_integers_is_refused_before_any_request(
    capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    # `get shipments --page 9223372036854775808` was sent, and the service's 400 ("page must
    # be from 1 to 9223372036854775807") ended it with exit 3, as if the service had failed.
    code, out, err = _run(capsys, "get", *command, "-v", "--page", str(2**63))
    assert code == 64, out + err
    assert "Invalid value for '--page'" in err and "1<=x<=9223372036854775807" in err
    assert "GET " not in err and "refused the request" not in err
    code, _, err = _run(capsys, "get", *command, "--page", str(2**63 - 1))
    assert code == 0, err


def test_a_table_footer_points_to_the_next_page(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = _run(capsys, "get", "shipments", "--limit", "2")
    assert "more with --page 2 or --all" in out


def test_verbose_logs_requests_with_the_key_redacted(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "get", "shipments", "--verbose")
    assert code == 0
    assert "GET http://local.sandbox/v1/shipments" in err
    assert "Bearer ***" in err
    assert "sandbox-key" not in err
    _, _, err = _run(capsys, "get", "shipments")
    assert err == ""


def test_an_unknown_environment_is_an_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUSTOMS_BATCH_ENV", "staging")
    code, _, err = _run(capsys, "get", "shipments")
    assert code == 3
    assert "$CUSTOMS_BATCH_ENV names environment 'staging'" in err


def test_every_get_command_has_an_example_in_its_help(capsys: pytest.CaptureFixture[str]) -> None:
    for command in [
        "shipments",
        "declarations",
        "declaration",
        "transit",
        "items",
        "item",
        "template-groups",
        "hawbs",
        "allocations",
    ]:
        code, out, _ = _run(capsys, "get", command, "--help")
        assert code == 0
        assert "customs-batch get" in out, command


def test_footers_give_the_totals_under_a_table_only(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = _run(capsys, "get", "shipments", "--format", "json", "--all")
    total = len(json.loads(out))
    _, out, _ = _run(capsys, "get", "shipments", "--limit", "2")
    assert out.rstrip().splitlines()[-1].startswith("page 1")
    assert f"records 1-2 of {total}; more with --page 2 or --all" in out
    # The shipments' list gives the total of records, not of pages: the pages it fills.
    pages = -(-total // 2)
    _, out, _ = _run(capsys, "get", "shipments", "--limit", "2", "--page", "2")
    assert out.rstrip().splitlines()[-1].startswith(f"page 2 of {pages}: records 3-")
    _, out, _ = _run(capsys, "get", "shipments", "--all")
    assert out.rstrip().splitlines()[-1] == f"all pages: {total} records"
    _, out, _ = _run(capsys, "get", "shipments", "--limit", "2", "--format", "csv")
    assert "page 1" not in out and "records" not in out


def test_o_is_always_a_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, _, err = _run(capsys, "get", "shipments", "-o", "json")
    assert code == 64
    assert "--format json" in err
    target = tmp_path / "shipments.json"
    code, out, _ = _run(capsys, "get", "shipments", "--all", "--format", "json", "-o", str(target))
    assert code == 0 and out == ""
    assert json.loads(target.read_text(encoding="utf-8"))
    assert target.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize(
    "argv",
    [
        ("get", "declaration", "50_1"),
        ("get", "declaration", "\u0665\u0660\u0661"),  # 501 in Arabic-Indic digits
        ("get", "declaration", "+501"),
        ("get", "transit", "700_1"),
        ("get", "item", "9_001"),
        ("get", "template-groups", "--company", "0_1"),
    ],
)
def test_an_id_is_read_as_the_service_reads_it_not_as_pythons_int(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]
) -> None:
    code, out, err = _run(capsys, *argv)
    assert code == 64, "Python's int() took it for another ID, which was then read"
    assert out == ""
    assert f"{argv[-1]!r} is not an ID of" in err
    assert "digits 0-9" in err


def test_an_id_with_leading_zeros_or_spaces_is_the_same_object(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = _run(capsys, "get", "declaration", " 0501 ", "--format", "json")
    assert code == 0
    assert json.loads(out)["declarationId"] == 501
    code, _, err = _run(capsys, "get", "item", "0")
    assert code == 64
    assert "they start at 1" in err
    # A company's ID starts at 1 too (the schemas' companyId, the service's filter): --company 0
    # was sent, and the service's 400 made it exit 3, where every other ID is refused here.
    code, out, err = _run(capsys, "get", "template-groups", "--company", "0")
    assert (code, out) == (64, "")
    assert "0 is not an ID of a company: they start at 1" in err


@pytest.mark.parametrize(
    "argv",
    [
        ("get", "declaration", "99999999999999999999"),
        ("get", "transit", "1" * 10_000),
        ("get", "template-groups", "--company", "12345678901234567890"),
    ],
)
def test_an_id_of_too_many_digits_is_not_said_to_be_written_in_other_digits(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]
) -> None:
    code, out, err = _run(capsys, *argv)
    assert code == 64
    assert out == ""
    assert "written in the digits 0-9" not in err, "it is written in them: the message was untrue"
    assert "at most 19 digits" in err
    assert len(err) < 600, "a 10,000-digit ID was echoed whole"


@pytest.mark.parametrize("command", ["hawbs", "allocations"])
@pytest.mark.parametrize("shipment", ["bad id", "7Hk2Lm", "shp_ok/../x", "shp-" + "a" * 100_000])
def test_a_shipment_id_in_no_form_of_one_is_refused_before_any_request(
    capsys: pytest.CaptureFixture[str], command: str, shipment: str
) -> None:
    # `get hawbs "bad id"` was sent and answered 404 (exit 3), and a 100 KB ID was echoed
    # whole in the request's path.
    code, out, err = _run(capsys, "get", command, "-v", shipment)
    assert code == 64, out + err
    assert "is not an RTO shipment ID: write shp_ followed by letters and digits" in err
    assert "GET " not in err and len(err) < 1_000
    code, _, err = _run(capsys, "get", command, " shp_7Hk2Lm ")
    assert code == 0, err


@pytest.mark.parametrize("command", ["hawbs", "allocations"])
def test_a_shipment_id_longer_than_any_is_refused_before_any_request(
    capsys: pytest.CaptureFixture[str], command: str
) -> None:
    # `get hawbs shp_` + 100,000 letters has the form of an ID: it was sent, failed as the
    # service's "URL too long", and -v printed the whole path.
    code, out, err = _run(capsys, "get", command, "-v", "shp_" + "a" * 100_000)
    assert code == 64, out + err
    assert "(100,004 characters) is not an RTO shipment ID: its IDs have at most 128" in err
    assert "GET " not in err and len(err) < 1_000
    code, _, err = _run(capsys, "get", command, "shp_" + "a" * 124)  # 128: the bound itself
    assert "at most 128" not in err


@pytest.mark.parametrize(
    ("command", "option"),
    [
        ("shipments", "--reference"),
        ("declarations", "--reference"),
        ("items", "--search"),
        ("items", "--sort-by"),
    ],
)
def test_an_empty_filter_is_a_usage_error_not_every_record(
    capsys: pytest.CaptureFixture[str], command: str, option: str
) -> None:
    # Found probing: `get shipments --reference "$REF"` with the variable unset listed
    # every shipment, as if no filter was given.
    code, out, err = _run(capsys, "get", command, option, "")
    assert (code, out) == (64, ""), err
    assert f"Invalid value for '{option}': '' is empty: give " in err


@pytest.mark.parametrize(
    ("argv", "target"),
    [
        (("get", "shipments", "--all"), ".customs-batch/nowhere/state.json"),
        (("get", "declaration", "501"), "customs-batch.yaml"),
        (("get", "transit", "7001"), "manifests/records.yaml"),
    ],
)
def test_an_output_file_refused_is_refused_before_anything_is_asked(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    argv: tuple[str, ...],
    target: str,
) -> None:
    # `get ... -o STATE` read the service (every page with --all), then refused the file with
    # exit 64: a usage error that had sent requests. An environment no service answers at
    # shows it: the refusal now comes first, not "cannot reach the service" (exit 3).
    Path("manifests").mkdir()
    Path("customs-batch.yaml").write_text(
        "manifests: [manifests]\n"
        "environments:\n"
        "  nowhere:\n"
        "    base_url: http://127.0.0.1:9\n"
        "    api_key_env: PROBE_KEY\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("PROBE_KEY", "sandbox-key")
    code, out, err = _run(capsys, *argv, "--env", "nowhere", "-o", target)
    assert (code, out) == (64, ""), err
    assert f"cannot write the records to {target}: " in err
    assert "cannot reach" not in err
