"""`customs-batch validate` points each finding at the line to fix, and one broken document
hides nothing else: the other documents of its file, and the batch-wide checks, still run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from customs_batch.cli.main import invoke
from customs_batch.validation.unlocodes import code_list

HEADER = "apiVersion: customs-batch/v1\n"


def _findings(*paths: str) -> list[tuple[str, str, int]]:
    """(rule, file, line) of every finding of ``validate --format json``."""
    with CliRunner().isolation() as (out, _, _):
        invoke(["validate", "--format", "json", *paths])
    report: dict[str, Any] = json.loads(out.getvalue().decode())
    return [(f["rule"], f["file"], f["line"]) for f in report["findings"]]


def _cancel(name: str, number: str = "501", depends_on: str = "") -> str:
    depends = f"  dependsOn: [{depends_on}]\n" if depends_on else ""
    return (
        f"{HEADER}kind: ExportCancellation\nmetadata:\n  name: {name}\n{depends}"
        f"spec:\n  declarationId: {number}\n"
    )


def test_a_missing_field_of_a_nested_mapping_points_at_its_key() -> None:
    Path("m.yaml").write_text(
        f"{HEADER}kind: TransitPartyUpdate\nmetadata:\n  name: u1\nspec:\n"
        "  declarationId: 7\n  Principal: {}\n",
        encoding="utf-8",
    )
    # Principal: {} lacks every field: the schema's minProperties, at the "Principal:" key.
    assert _findings("m.yaml") == [("schema.min-properties", "m.yaml", 7)]


def test_a_cycle_through_a_reference_is_reported_once_at_the_depends_on_of_its_first() -> None:
    Path("a.yaml").write_text(_cancel("c1", depends_on="ExportCancellation/c2"), encoding="utf-8")
    Path("b.yaml").write_text(
        _cancel("c2", number="${ref:ExportCancellation/c1.declarationId}"), encoding="utf-8"
    )
    assert _findings("a.yaml", "b.yaml") == [
        ("project.cycle", "a.yaml", 5),
    ]


def test_a_duplicate_key_does_not_hide_the_other_documents_or_the_batch_checks() -> None:
    broken = _cancel("c1").replace(
        "declarationId: 501\n", "declarationId: 501\n  declarationId: 502\n"
    )
    Path("a.yaml").write_text(
        broken
        + "---\n"
        + _cancel("c2", depends_on="ExportCancellation/c1, ExportCancellation/gone"),
        encoding="utf-8",
    )
    # c1 is left out for its error but is in the batch: only the truly unknown name is
    # reported; c2's own checks and the batch checks still run.
    assert _findings("a.yaml") == [
        ("yaml.duplicate-key", "a.yaml", 7),
        ("project.unknown-dependency", "a.yaml", 13),
    ]


def test_a_syntax_error_does_not_hide_the_documents_after_it() -> None:
    broken = _cancel("c1").replace("declarationId: 501", "declarationId: [501")
    Path("a.yaml").write_text(
        broken + "---\n" + _cancel("c2", number="five", depends_on="ExportCancellation/c1"),
        encoding="utf-8",
    )
    Path("b.yaml").write_text(
        _cancel(
            "c3",
            number="${ref:ExportCancellation/c1.declarationId}",
            depends_on="ExportCancellation/c2",
        ),
        encoding="utf-8",
    )
    assert _findings("a.yaml", "b.yaml") == [
        ("yaml.unclosed", "a.yaml", 6),
        ("yaml.syntax", "a.yaml", 7),
        ("schema.type", "a.yaml", 14),
    ]


def test_an_open_quote_is_reported_where_it_opened_and_where_the_parser_gave_up() -> None:
    text = _cancel("c1").replace("name: c1", 'name: "c1') + "---\n" + _cancel("c2")
    Path("a.yaml").write_text(text, encoding="utf-8")
    with CliRunner().isolation() as (out, _, _):
        code = invoke(["validate", "a.yaml"])
    report = out.getvalue().decode()
    assert code == 1
    assert "a.yaml:4:9: error[yaml.unclosed]: this quoted text is not closed" in report
    assert "the parser gave up at line 7" in report
    assert "a.yaml:7:1: error[yaml.syntax]" in report
    assert "1 document (1 file)" in report  # c2, after the broken one, was read and checked


def test_hints_say_what_a_valid_value_looks_like_and_bounds_are_named() -> None:
    Path("m.yaml").write_text(
        _cancel("c1", number="-5") + "---\n" + _cancel("c2", number="99999999999999999999999"),
        encoding="utf-8",
    )
    Path("p.yaml").write_text(
        f"{HEADER}kind: HawbDeactivation\nmetadata:\n  name: d1\nspec:\n"
        "  shipmentId: shp_1\n  hawbId: HAWB-1\n",
        encoding="utf-8",
    )
    with CliRunner().isolation() as (out, _, _):
        code = invoke(["validate", "m.yaml", "p.yaml"])
    report = out.getvalue().decode()
    assert code == 1
    assert "error[schema.minimum]: declarationId must be at least 1, got -5" in report
    assert (
        "error[schema.maximum]: declarationId must be at most 9223372036854775807, "
        "got 99999999999999999999999"
    ) in report
    assert "hawbId: 'HAWB-1' is not a HAWB ID (hawb_ followed by letters and digits)" in report
    assert "hint: write it like hawb_a1" in report
    assert "^hawb_" not in report


def test_an_unknown_hs_subheading_warns_and_hs_codes_off_turns_it_off() -> None:
    bad = Path(__file__).resolve().parents[2] / "examples" / "bad" / "code-hs-unknown.yaml.bad"
    with CliRunner().isolation() as (out, _, _):
        code = invoke(["validate", "--strict", str(bad)])
    report = out.getvalue().decode()
    assert code == 1
    assert "warning[code.hs-unknown]: '731899': subheading 7318.99 does not exist" in report
    with CliRunner().isolation() as (out, _, _):
        code = invoke(["validate", "--strict", "--hs-codes", "off", str(bad)])
    assert (code, out.getvalue().decode()) == (0, "0 errors, 0 warnings in 1 document (1 file)\n")


def test_an_unknown_unlocode_warns_and_unlocodes_off_turns_it_off() -> None:
    bad = (
        Path(__file__).resolve().parents[2] / "examples" / "bad" / "code-unlocode-unknown.yaml.bad"
    )
    with CliRunner().isolation() as (out, _, _):
        code = invoke(["validate", "--strict", str(bad)])
    report = out.getvalue().decode()
    assert code == 1
    assert (
        "warning[code.unlocode-unknown]: 'BEARN' is not in the UN/LOCODE code list "
        "(UN/LOCODE 2023-1)"
    ) in report
    assert "hint: check the code for a typing error; close to it: BEANR (Antwerpen), " in report
    with CliRunner().isolation() as (out, _, _):
        code = invoke(["validate", "--strict", "--unlocodes", "off", str(bad)])
    assert (code, out.getvalue().decode()) == (0, "0 errors, 0 warnings in 1 document (1 file)\n")


def test_the_help_names_the_shipped_unlocode_release() -> None:
    with CliRunner().isolation() as (out, _, _):
        invoke(["validate", "--help"])
    help_text = " ".join(out.getvalue().decode().split())
    assert f"UN/LOCODE code list ({code_list().edition}) is reported" in help_text


def test_a_file_broken_everywhere_stops_after_a_hundred_syntax_errors() -> None:
    broken = _cancel("c").replace("declarationId: 501", "declarationId: [501") + "---\n"
    Path("a.yaml").write_text(broken * 1000, encoding="utf-8")
    found = _findings("a.yaml")
    assert [rule for rule, _, _ in found].count("yaml.syntax") == 101
    assert found[-1] == ("yaml.syntax", "a.yaml", 7 * 100)  # the "---" of document 101
    with CliRunner().isolation() as (out, _, _):
        invoke(["validate", "a.yaml"])
    assert "reading stopped after 100 syntax errors" in out.getvalue().decode()
