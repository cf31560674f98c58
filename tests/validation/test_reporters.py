"""Every report format, on hand-made findings, parsed back the way its consumer reads it."""

from __future__ import annotations

import json
import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from customs_batch.errors import UsageError
from customs_batch.findings import Finding, Location, Severity, Suppression
from customs_batch.validation.batch import DocumentEntry, ValidationResult, sorted_findings
from customs_batch.validation.reporters import (
    ReportOptions,
    _source,
    _text,
    make_reporter,
    reporter_names,
)
from customs_batch.validation.reporters._source import SourceLines

SOURCE = """\
apiVersion: customs-batch/v1
kind: Movement
metadata:
  name: mov-1
spec:
  action: ISL
\tquantity: 3
"""


def _result(tmp_path: Path) -> ValidationResult:
    (tmp_path / "m.yaml").write_text(SOURCE, encoding="utf-8")
    file = "m.yaml"  # tests run inside tmp_path
    findings = [
        Finding(
            "movement.action-source",
            Severity.ERROR,
            "ISL takes no customsDeclaration",
            Location(file, 6, 11, ("spec", "action")),
            hint="remove customsDeclaration: ISL reuses the linked movement's declaration",
            document="Movement/mov-1",
        ),
        Finding(
            "schema.type",
            Severity.WARNING,
            "quantity, looks odd: 100%\nreally",
            Location(file, 7, 12, ("spec", "quantity")),
            document="Movement/mov-1",
        ),
        Finding("yaml.syntax", Severity.ERROR, "bad \x00 byte", Location("broken.yaml", 2, 1)),
        Finding(
            "row.cell",
            Severity.INFO,
            "Gross weight is empty",
            Location("data/rows.xlsx", 5, 0, sheet="Export", row=5, column_name="Gross weight"),
        ),
    ]
    documents = (
        DocumentEntry("Movement/mov-1", file, 1),
        DocumentEntry("HawbDeactivation/h-1", file, 9),
    )
    return ValidationResult(sorted_findings(findings), documents, (file, "broken.yaml"))


def _clean(file: str) -> ValidationResult:
    return ValidationResult((), (DocumentEntry("Movement/a", file, 1),), (file,))


def test_registry_lists_every_format_text_first() -> None:
    assert reporter_names() == ["text", "github", "html", "json", "junit", "markdown", "sarif"]


def test_unknown_format_is_a_usage_error_naming_the_choices() -> None:
    with pytest.raises(UsageError, match="unknown findings format") as info:
        make_reporter("yaml")
    assert "sarif" in str(info.value)


def test_text_shows_location_rule_source_caret_and_hint(tmp_path: Path) -> None:
    result = _result(tmp_path)
    out = make_reporter("text").render(result).splitlines()
    file = result.files[0]
    first = out.index(
        f"{file}:6:11: error[movement.action-source]: ISL takes no customsDeclaration"
    )
    assert out[first + 1] == "    action: ISL"
    assert out[first + 2] == "  " + " " * 10 + "^"
    assert out[first + 3] == "  path: $.spec.action"
    assert out[first + 4].startswith("  hint: remove customsDeclaration")
    # A tab before the column stays a tab, so the caret lines up in any tab width.
    caret = out[out.index("  \tquantity: 3") + 1]
    assert caret == "  \t" + " " * 10 + "^"
    assert "  cell: sheet 'Export', row 5, column 'Gross weight'" in out
    assert out[-1] == "2 errors, 1 warning, 1 note in 2 documents (2 files)"


def test_text_skips_source_of_unreadable_files(tmp_path: Path) -> None:
    out = make_reporter("text").render(_result(tmp_path))
    assert "broken.yaml:2:1: error[yaml.syntax]" in out
    assert out.count("^") == 2


def test_text_shows_a_window_of_a_long_line_with_the_caret_on_the_same_character(
    tmp_path: Path,
) -> None:
    line = "spec: {hawbId: " + "h" * 1_000_000 + ", bogus: 1}"
    (tmp_path / "long.yaml").write_text(line + "\n", encoding="utf-8")
    column = line.index("bogus") + 1
    findings = [
        Finding(
            "schema.additional-property",
            Severity.ERROR,
            "unknown",
            Location("long.yaml", 1, column),
        ),
        Finding("schema.type", Severity.ERROR, "at the start", Location("long.yaml", 1, 7)),
    ]
    result = ValidationResult(sorted_findings(findings), (), ("long.yaml",))
    out = make_reporter("text").render(result)
    assert len(out) < 1000
    lines = out.splitlines()
    for text, word in ((lines[1], "{hawbId"), (lines[-3], "bogus")):
        shown, caret = text[2:], lines[lines.index(text) + 1]
        assert len(shown) <= 122
        assert shown[len(caret) - 3 :].startswith(word)
    assert lines[1].endswith("…") and lines[-3].startswith("  …")


def test_text_summary_of_a_clean_run_uses_singulars(tmp_path: Path) -> None:
    out = make_reporter("text").render(_clean("a.yaml"))
    assert out == "0 errors, 0 warnings in 1 document (1 file)\n"


def test_json_is_stable_and_complete(tmp_path: Path) -> None:
    result = _result(tmp_path)
    report = json.loads(make_reporter("json").render(result))
    assert report["formatVersion"] == 2
    assert report["summary"] == {
        "ok": False,
        "errors": 2,
        "warnings": 1,
        "infos": 1,
        "documents": 2,
        "files": 2,
        "suppressed": 0,
    }
    assert report["suppressed"] == []
    first = report["findings"][0]
    assert list(first) == [
        "rule",
        "severity",
        "message",
        "hint",
        "file",
        "line",
        "column",
        "path",
        "document",
        "cell",
        "usedAt",
    ]
    assert first["usedAt"] is None
    rules = [finding["rule"] for finding in report["findings"]]
    assert rules == ["yaml.syntax", "row.cell", "movement.action-source", "schema.type"]
    cell = report["findings"][1]["cell"]
    assert cell == {"sheet": "Export", "row": 5, "column": "Gross weight"}
    assert report["findings"][2]["path"] == "$.spec.action"


def test_json_strict_makes_warnings_fail(tmp_path: Path) -> None:
    only_warning = ValidationResult(
        (Finding("w", Severity.WARNING, "m", Location("a.yaml", 1, 1)),), (), ("a.yaml",)
    )
    lenient = json.loads(make_reporter("json").render(only_warning))
    strict = json.loads(make_reporter("json", ReportOptions(strict=True)).render(only_warning))
    assert lenient["summary"]["ok"] is True
    assert strict["summary"]["ok"] is False


def _parse_github(line: str) -> tuple[str, dict[str, str], str]:
    """Read a workflow command back the way the Actions runner does."""

    def unescape(text: str) -> str:
        for code, char in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
            text = text.replace(code, char)
        return text

    assert line.startswith("::")
    head, _, message = line[2:].partition("::")
    command, _, props = head.partition(" ")
    pairs = dict(prop.split("=", 1) for prop in props.split(","))
    return command, {key: unescape(value) for key, value in pairs.items()}, unescape(message)


def test_github_annotations_round_trip_through_the_runner_escaping(tmp_path: Path) -> None:
    result = _result(tmp_path)
    lines = make_reporter("github").render(result).splitlines()
    commands = [_parse_github(line) for line in lines if line.startswith("::")]
    assert len(commands) == 4
    assert lines[-1].endswith("in 2 documents (2 files)")
    command, props, message = commands[2]
    assert command == "error"
    assert props == {
        "file": result.files[0],
        "line": "6",
        "col": "11",
        "title": "movement.action-source",
    }
    assert message.startswith("ISL takes no customsDeclaration\nhint: remove")
    assert commands[3][0] == "warning"
    assert commands[3][2] == "quantity, looks odd: 100%\nreally"
    assert commands[1][0] == "notice"
    # Every annotation stays on one line: newlines are escaped, not written.
    assert all("\n" not in line for line in lines)


def test_github_escapes_separators_in_properties() -> None:
    finding = Finding("a:b,c", Severity.ERROR, "m", Location("dir,x/a:b%.yaml", 1, 1))
    line = make_reporter("github").render(ValidationResult((finding,), (), ("x",))).splitlines()[0]
    assert "file=dir%2Cx/a%3Ab%25.yaml" in line
    assert "title=a%3Ab%2Cc" in line
    assert _parse_github(line)[1]["file"] == "dir,x/a:b%.yaml"


def test_junit_has_a_case_per_document_and_per_failed_file(tmp_path: Path) -> None:
    result = _result(tmp_path)
    root = ET.fromstring(make_reporter("junit").render(result))
    assert root.tag == "testsuites"
    suite = root.find("testsuite")
    assert suite is not None
    cases = {case.get("name"): case for case in suite.iter("testcase")}
    assert set(cases) == {
        "Movement/mov-1",
        "HawbDeactivation/h-1",
        "load broken.yaml",
        "load data/rows.xlsx",
    }
    failure = cases["Movement/mov-1"].find("failure")
    assert failure is not None
    assert failure.get("type") == "movement.action-source"
    assert failure.get("message") == "ISL takes no customsDeclaration"
    assert cases["HawbDeactivation/h-1"].find("failure") is None
    assert cases["load data/rows.xlsx"].find("failure") is None  # a note does not fail
    load_failure = cases["load broken.yaml"].find("failure")
    assert load_failure is not None
    assert load_failure.get("message") == "bad \\x00 byte"  # NUL escaped, the XML parses
    assert suite.get("tests") == "4"
    assert suite.get("failures") == "2"


def test_junit_strict_counts_warnings_as_failures(tmp_path: Path) -> None:
    result = _result(tmp_path)
    root = ET.fromstring(make_reporter("junit", ReportOptions(strict=True)).render(result))
    failure = next(
        case.find("failure")
        for case in root.iter("testcase")
        if case.get("name") == "Movement/mov-1"
    )
    assert failure is not None
    assert failure.get("message") == "2 findings"


def test_sarif_has_the_required_structure(tmp_path: Path) -> None:
    result = _result(tmp_path)
    log = json.loads(make_reporter("sarif").render(result))
    assert log["version"] == "2.1.0"
    assert log["$schema"].endswith("sarif-2.1.0.json")
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "customs-batch"
    rule_ids = [rule["id"] for rule in driver["rules"]]
    assert rule_ids == sorted({finding.rule for finding in result.findings})
    levels = {item["ruleId"]: item["level"] for item in run["results"]}
    assert levels == {
        "movement.action-source": "error",
        "schema.type": "warning",
        "yaml.syntax": "error",
        "row.cell": "note",
    }
    for item in run["results"]:
        assert rule_ids[item["ruleIndex"]] == item["ruleId"]
        assert item["message"]["text"]
        physical = item["locations"][0]["physicalLocation"]
        assert physical["artifactLocation"]["uri"]
        assert physical["region"]["startLine"] >= 1
    first = next(item for item in run["results"] if item["ruleId"] == "movement.action-source")
    assert first["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 6,
        "startColumn": 11,
    }


def test_sarif_omits_the_region_when_the_line_is_unknown() -> None:
    finding = Finding("r", Severity.ERROR, "m", Location("my dir/a.yaml"))
    log = json.loads(make_reporter("sarif").render(ValidationResult((finding,), (), ("x",))))
    physical = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert physical == {"artifactLocation": {"uri": "my%20dir/a.yaml"}}


@pytest.mark.parametrize("name", ["text", "json", "github", "junit", "sarif"])
def test_every_format_renders_a_clean_run(name: str) -> None:
    out = make_reporter(name).render(_clean("a.yaml"))
    assert out.endswith("\n")
    assert "error" not in out.replace("errors", "").replace('"errors": 0', "")


@pytest.mark.parametrize(
    "data",
    [b"", b"a", b"a\n", b"a\nb", b"a\r\nb\rc\n\nd", b"\n\n", b"x\r", b"\r\n", b"a\n\r\nb"],
)
@pytest.mark.parametrize("split_bytes", [4 * 1024 * 1024, 0])
def test_source_lines_are_cut_as_splitlines_cuts_them_in_any_order(
    tmp_path: Path, data: bytes, split_bytes: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Both ways of cutting: a file split at once, and one (bigger than the bound) whose
    # breaks are found as far as asked.
    monkeypatch.setattr(_source, "_SPLIT_BYTES", split_bytes)
    path = tmp_path / "m.yaml"
    path.write_bytes(data)
    expected = [line.decode() for line in data.splitlines()]
    numbers = list(range(1, len(expected) + 3))
    for order in (numbers, numbers[::-1]):
        lines = SourceLines()
        found = {n: lines.line(str(path), n) for n in order}
        assert [found[n] for n in numbers] == [*expected, None, None]


FORGED = "x\nerror[fake]: injected\n.yaml"
NOT_UTF8 = os.fsdecode(b"bad\xff.yaml")


def _hostile_names() -> ValidationResult:
    findings = [
        Finding("schema.type", Severity.ERROR, f"see {name}", Location(name, 3, 1), hint="h|x")
        for name in (FORGED, NOT_UTF8, "p|ipe.yaml")
    ]
    return ValidationResult(tuple(findings), (), (FORGED, NOT_UTF8, "p|ipe.yaml"))


@pytest.mark.parametrize("name", reporter_names())
def test_no_format_prints_a_forged_line_or_bytes_that_are_not_utf_8(name: str) -> None:
    report = make_reporter(name).render(_hostile_names())
    report.encode("utf-8")  # no lone surrogate left: any output encodes it
    assert not any(line.lstrip().startswith("error[fake]") for line in report.splitlines())


def test_text_escapes_a_newline_and_a_byte_that_is_not_utf_8_in_a_file_name() -> None:
    report = make_reporter("text").render(_hostile_names())
    assert "x\\nerror[fake]: injected\\n.yaml:3:1: error[schema.type]: see x\\nerror" in report
    assert "bad\\xff.yaml:3:1: error[schema.type]: see bad\\xff.yaml" in report


def test_json_and_sarif_keep_the_exact_names_in_valid_utf_8() -> None:
    result = _hostile_names()
    report = json.loads(make_reporter("json").render(result).encode("utf-8"))
    assert [f["file"] for f in report["findings"]] == [FORGED, NOT_UTF8, "p|ipe.yaml"]
    sarif = json.loads(make_reporter("sarif").render(result).encode("utf-8"))
    uris = [
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in sarif["runs"][0]["results"]
    ]
    assert uris == ["x%0Aerror%5Bfake%5D%3A%20injected%0A.yaml", "bad%FF.yaml", "p%7Cipe.yaml"]


def test_markdown_keeps_one_table_row_per_finding() -> None:
    report = make_reporter("markdown").render(_hostile_names())
    rows = [line for line in report.splitlines() if line.startswith("| error |")]
    assert len(rows) == 3
    assert all(line.endswith(" |") for line in rows)
    # Each row has its 4 cells: every pipe of a name or hint is escaped.
    assert all(len(re.split(r"(?<!\\)\|", line)) == 6 for line in rows)
    assert "`x\\nerror[fake]: injected\\n.yaml:3`" in report


def test_github_keeps_each_annotation_on_one_line_and_the_name_for_the_runner() -> None:
    lines = make_reporter("github").render(_hostile_names()).splitlines()
    commands = [_parse_github(line) for line in lines if line.startswith("::")]
    assert [props["file"] for _, props, _ in commands] == [FORGED, "bad\\xff.yaml", "p|ipe.yaml"]


def test_the_line_counting_elided_spreadsheet_findings_escapes_the_file_name() -> None:
    name = "x\nerror[fake]: injected.csv"
    findings = tuple(
        Finding(
            "row.cell-type",
            Severity.ERROR,
            "bad",
            Location(name, row, 4, sheet="S", row=row, column_name="D"),
        )
        for row in range(2, 1002)
    )
    report = make_reporter("text").render(ValidationResult(findings, (), (name,)))
    elided = next(line for line in report.splitlines() if line.startswith("… and"))
    assert "in x\\nerror[fake]: injected.csv at rows" in elided
    assert not any(line.startswith("error[fake]") for line in report.splitlines())


TRICKY_SOURCE = (
    b"plain: ascii\n"
    b"\tkey:\tv\xc3\xa4lue \xe6\x9d\xb1\xe4\xba\xac\r\n"  # tabs, non-ASCII, CRLF
    b"esc: \x1b[31mred\x7f \xc2\x85 end\r"  # terminal escape, DEL, C1 control, a lone CR
    b"sep: a\xe2\x80\xa8b\xe2\x80\xaec\xd8\x9c\n"  # line separator, bidirectional controls
    b"bad: \xff\xfe utf8\x0b\x0c tab\there\n"  # not UTF-8; vertical tab and form feed
    + b"long: "
    + b"x\t" * 100
    + b"target"
    + b"y" * 300
    + b"\n"
    + b"\xe2\x80\xa8first\n"
)
HOSTILE_NAME = "odd\u2028name\x1b\tt\xe4b.yaml"


def _tricky() -> ValidationResult:
    (Path("t.yaml")).write_bytes(TRICKY_SOURCE)
    Path("tpl.yaml.j2").write_bytes(b"a: 1\n  office: {{ values.office }}  \n")
    Path(HOSTILE_NAME).write_bytes(b"x: 1\n")

    def at(line: int, column: int, path: tuple[str | int, ...] = ()) -> Location:
        return Location("t.yaml", line, column, path)

    findings = (
        Finding("r.one", Severity.ERROR, "plain", at(1, 1, ("spec", "plain")), hint="plain hint"),
        Finding(
            "r.two",
            Severity.WARNING,
            "tab\tand ä 東京 and \u2028 and \r\n",
            at(2, 6, ("spec", 0, "käy\n")),
            hint="hint with \x1b and \u202e",
        ),
        Finding("r.three", Severity.INFO, "control", at(3, 7)),
        Finding("r.four", Severity.ERROR, "separators", at(4, 9)),
        Finding("r.five", Severity.ERROR, "bad bytes", at(5, 8)),
        Finding("r.six", Severity.ERROR, "long line", at(6, 210)),
        Finding("r.seven", Severity.ERROR, "no column", at(6, 0)),
        Finding("r.eight", Severity.ERROR, "no line", at(0, 0)),
        Finding("r.nine", Severity.ERROR, "past the end", at(99, 1)),
        Finding("r.ten", Severity.ERROR, "line separator first", at(7, 2)),
        Finding("r.eleven", Severity.ERROR, "column past the line", at(1, 40)),
        Finding(
            "r.twelve", Severity.ERROR, "hostile", Location(HOSTILE_NAME, 1, 2, ("a",)), "x\ny"
        ),
        Finding("r.thirteen", Severity.ERROR, "missing file", Location("nope\r.yaml", 3, 1)),
        Finding(
            "r.fourteen",
            Severity.WARNING,
            "from a template",
            Location("t.yaml", 1, 8, ("spec", "office"), used_at=Location("tpl.yaml.j2", 2, 11)),
        ),
        Finding(
            "r.fifteen",
            Severity.WARNING,
            "from a template, no column",
            Location("t.yaml", 2, 0, used_at=Location("tpl.yaml.j2", 2, 0)),
        ),
        Finding(
            "row.cell",
            Severity.ERROR,
            "cell \x1b",
            Location("d\n.xlsx", 5, 3, ("x",), sheet="S\u2028", row=5, column_name="N\r"),
            hint="fix\tit",
        ),
    )
    suppressed = (
        Finding(
            "r.sup",
            Severity.WARNING,
            "quiet",
            at(2, 3),
            suppression=Suppression("because", "t.yaml:1", in_source=True),
        ),
    )
    return ValidationResult(findings, (), ("t.yaml",), suppressed=suppressed)


TRICKY_REPORT = [
    "t.yaml:1:1: error[r.one]: plain",
    "  plain: ascii",
    "  ^",
    "  path: $.spec.plain",
    "  hint: plain hint",
    "t.yaml:2:6: warning[r.two]: tab\tand ä 東京 and \\u2028 and \\r\\n",
    "  \tkey:\tvälue 東京",
    "  \t    ^",
    "  path: $.spec[0].käy\\n",
    "  hint: hint with \\x1b and \\u202e",
    "t.yaml:3:7: info[r.three]: control",
    "  esc: \\x1b[31mred\\x7f \\x85 end",
    "           ^",
    "t.yaml:4:9: error[r.four]: separators",
    "  sep: a\\u2028b\\u202ec\\u061c",
    "               ^",
    "t.yaml:5:8: error[r.five]: bad bytes",
    "  bad: \ufffd\ufffd utf8\\x0b\\x0c tab\there",
    "         ^",
    "t.yaml:6:210: error[r.six]: long line",
    "  …" + "\tx" * 28 + "\ttarget" + "y" * 57 + "…",
    "   " + "\t " * 29 + "  ^",
    "t.yaml:6: error[r.seven]: no column",
    "  long: " + "x\t" * 57 + "…",
    "t.yaml: error[r.eight]: no line",
    "t.yaml:99:1: error[r.nine]: past the end",
    "t.yaml:7:2: error[r.ten]: line separator first",
    "  \\u2028first",
    "        ^",
    "t.yaml:1:40: error[r.eleven]: column past the line",
    "  plain: ascii",
    "              ^",
    "odd\\u2028name\\x1b\ttäb.yaml:1:2: error[r.twelve]: hostile",
    "  x: 1",
    "   ^",
    "  path: $.a",
    "  hint: x\\ny",
    "nope\\r.yaml:3:1: error[r.thirteen]: missing file",
    "t.yaml:1:8: warning[r.fourteen]: from a template",
    "  plain: ascii",
    "         ^",
    "  used by the template at tpl.yaml.j2:2:11",
    "    office: {{ values.office }}",
    "  path: $.spec.office",
    "t.yaml:2: warning[r.fifteen]: from a template, no column",
    "  \tkey:\tvälue 東京",
    "  used by the template at tpl.yaml.j2:2",
    "    office: {{ values.office }}",
    "d\\n.xlsx:5:3: error[row.cell]: cell \\x1b",
    "  cell: sheet 'S\\u2028', row 5, column C 'N\\r'",
    "  path: $.x",
    "  hint: fix\tit",
    "t.yaml:2:3: suppressed[r.sup]: quiet (reason: because; at t.yaml:1)",
    "12 errors, 3 warnings, 1 note, 1 suppressed in 0 documents (1 file)",
]


@pytest.mark.parametrize("split_bytes", [4 * 1024 * 1024, 0])
def test_text_report_of_tricky_text_is_exactly_these_bytes(
    split_bytes: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Control characters, non-ASCII, separators, carriage returns, tabs before the caret, a
    # long line cut around its column, bytes that are not UTF-8, in names, values and
    # source lines: every byte pinned, with the file split at once and cut as far as asked.
    monkeypatch.setattr(_source, "_SPLIT_BYTES", split_bytes)
    report = make_reporter("text").render(_tricky())
    assert report == "\n".join(TRICKY_REPORT) + "\n"


@pytest.mark.parametrize("remembered", [4096, 1])
def test_text_report_is_the_same_however_few_escaped_texts_are_remembered(
    remembered: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # File names, paths and hints escaped once and looked up after that: forgetting them
    # (at the bound, here after every one) changes nothing. Paths shared by findings, in
    # turns, and paths made anew for each, equal to the one before or not.
    monkeypatch.setattr(_text, "_REMEMBERED", remembered)
    shared = (("a", 0), ("a", 1))
    findings = tuple(
        Finding(
            "r",
            Severity.ERROR,
            "m",
            Location(
                f"f{n % 3}\x1b.yaml", 0, 0, shared[n // 2 % 2] if n < 9 else ("a", n // 2 % 2)
            ),
            hint=f"h\n{n % 3}",
        )
        for n in range(18)
    )
    report = make_reporter("text").render(ValidationResult(findings, (), ()))
    expected = [
        line
        for n in range(18)
        for line in (
            f"f{n % 3}\\x1b.yaml: error[r]: m",
            f"  path: $.a[{n // 2 % 2}]",
            f"  hint: h\\n{n % 3}",
        )
    ]
    assert report == "\n".join([*expected, "18 errors, 0 warnings in 0 documents (0 files)"]) + "\n"


@pytest.mark.parametrize("kept", [64, 2, 1])
def test_text_report_reads_each_file_once_while_it_is_kept_and_is_the_same_either_way(
    kept: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Only the files asked for last are kept (a report of 1,000 files held them all): a
    # template quoted between one file and the next stays, a file forgotten is read again.
    monkeypatch.setattr(_source, "KEPT_FILES", kept)
    reads: list[str] = []
    read_lines = _source._read_lines

    def counted(file: str) -> _source._Lines | None:
        reads.append(file)
        return read_lines(file)

    monkeypatch.setattr(_source, "_read_lines", counted)
    Path("t.j2").write_text("a: {{ x }}\nb: {{ y }}\n", encoding="utf-8")
    findings = []
    expected = []
    for n in range(4):
        Path(f"m{n}.yaml").write_text(f"first: {n}\nsecond: {n}\n", encoding="utf-8")
        for line, text, used in ((1, "first", "b: {{ y }}"), (2, "second", "a: {{ x }}")):
            at = Location(f"m{n}.yaml", line, 1, used_at=Location("t.j2", 3 - line, 4))
            findings.append(Finding("r", Severity.WARNING, "m", at))
            expected += [f"m{n}.yaml:{line}:1: warning[r]: m", f"  {text}: {n}", "  ^"]
            expected += [f"  used by the template at t.j2:{3 - line}:4", f"    {used}"]
    report = make_reporter("text").render(ValidationResult(tuple(findings), (), ()))
    assert report == "\n".join([*expected, "0 errors, 8 warnings in 0 documents (0 files)"]) + "\n"
    once = ["m0.yaml", "t.j2", "m1.yaml", "m2.yaml", "m3.yaml"]
    assert reads == (
        once if kept > 1 else [f for n in range(4) for f in [f"m{n}.yaml", "t.j2"] * 2]
    )


def test_text_escapes_a_template_line_its_name_and_a_suppression(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a template or a suppression says reaches a terminal escaped, as a finding's own
    lines do: no escape sequence, no forged line."""
    monkeypatch.chdir(tmp_path)
    Path("t.yaml").write_text("office: x\n", encoding="utf-8")
    template = "tpl\x1b[2J.j2"
    Path(template).write_text("office: \x1b]0;owned\x07{{ values.office }}\n", encoding="utf-8")
    used = Location(template, 1, 9)
    finding = Finding("r.one", Severity.WARNING, "m", Location("t.yaml", 1, 9, used_at=used))
    silenced = Finding(
        "r.two",
        Severity.WARNING,
        "quiet\nerror[fake]: forged",
        Location("t.yaml", 1, 1),
        suppression=Suppression("because\x1b[31m", "t.yaml:1\r", in_source=True),
    )
    result = ValidationResult((finding,), (), ("t.yaml",), suppressed=(silenced,))
    report = make_reporter("text").render(result)
    assert "\x1b" not in report and "\x07" not in report and "\r" not in report
    assert "  used by the template at tpl\\x1b[2J.j2:1:9" in report
    assert "    office: \\x1b]0;owned\\x07{{ values.office }}" in report
    assert (
        "t.yaml:1:1: suppressed[r.two]: quiet\\nerror[fake]: forged "
        "(reason: because\\x1b[31m; at t.yaml:1\\r)"
    ) in report
    assert not any(line.startswith("error[fake]") for line in report.splitlines())


@pytest.mark.parametrize("format_name", ["github", "sarif"])
def test_ci_formats_name_files_from_the_top_of_the_repository_under_a_working_directory(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    format_name: str,
) -> None:
    """The runner places an annotation's relative file, and code scanning a SARIF result's
    relative URI, from the top of the repository (GITHUB_WORKSPACE): a step run in the
    project's folder (working-directory: customs) names its files from there, so they must
    be said from the top, or nothing reaches the diff. Outside the workspace, and without
    one, files stay as the findings name them."""
    from customs_batch.cli.main import invoke

    workspace = tmp_path / "repo"
    assert invoke(["init", str(workspace / "customs")]) == 0
    departure = workspace / "customs" / "manifests" / "departure.yaml"
    departure.write_text(departure.read_text().replace("totalWeight: 125.5", "totalWeight: x"))
    monkeypatch.chdir(workspace / "customs")
    capsys.readouterr()

    def annotated_file() -> str:
        assert invoke(["validate", "--format", format_name, "--no-cache"]) == 1
        out = capsys.readouterr().out
        if format_name == "sarif":
            (result,) = json.loads(out)["runs"][0]["results"]
            return str(result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])
        (line,) = [line for line in out.splitlines() if line[:2] == "::"]
        return _parse_github(line)[1]["file"]

    assert annotated_file() == "manifests/departure.yaml"  # no workspace: as found
    monkeypatch.setenv("GITHUB_WORKSPACE", str(workspace))
    assert annotated_file() == "customs/manifests/departure.yaml"
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path / "elsewhere"))
    assert annotated_file() == "manifests/departure.yaml"


def test_junit_gives_a_broken_file_its_own_case_beside_a_document_of_the_same_address() -> None:
    # broken.yaml names ExportCancellation/c-1 before its YAML breaks; ok.yaml holds a valid
    # document of that address, and a forEach's row document has a finding at its manifest.
    findings = [
        Finding(
            "yaml.syntax",
            Severity.ERROR,
            "did not find expected key",
            Location("broken.yaml", 7, 2),
            document="ExportCancellation/c-1",
        ),
        Finding(
            "schema.type",
            Severity.ERROR,
            "not a string",
            Location("rows.yaml", 9, 5, ("spec", "x")),
            document="DepartureDeclaration/row-2",
        ),
        Finding(
            "template.x",
            Severity.ERROR,
            "in the template",
            Location("t.yaml.j2", 3, 1),
            document="ExportCancellation/c-1",
        ),
    ]
    documents = (
        DocumentEntry("ExportCancellation/c-1", "ok.yaml", 1),
        DocumentEntry("DepartureDeclaration/row-2", "data/rows.csv", 2),
    )
    result = ValidationResult(
        sorted_findings(findings), documents, ("ok.yaml", "broken.yaml", "rows.yaml")
    )
    root = ET.fromstring(make_reporter("junit").render(result))
    cases = {
        (case.get("classname"), case.get("name")): case.find("failure")
        for case in root.iter("testcase")
    }
    assert set(cases) == {
        ("ok.yaml", "ExportCancellation/c-1"),
        ("broken.yaml", "ExportCancellation/c-1"),
        ("data/rows.csv", "DepartureDeclaration/row-2"),
    }
    broken = cases["broken.yaml", "ExportCancellation/c-1"]
    assert broken is not None and broken.get("type") == "yaml.syntax"
    valid = cases["ok.yaml", "ExportCancellation/c-1"]
    assert valid is not None and valid.get("type") == "template.x"  # only its own
    row = cases["data/rows.csv", "DepartureDeclaration/row-2"]
    assert row is not None and row.get("type") == "schema.type"


def test_sarif_messages_escape_what_a_viewer_reads_as_an_embedded_link() -> None:
    # SARIF 2.1.0, 3.11.6: "[text](target)" in a message is a link a viewer draws; a value
    # quoted in a message (or a hint) is shown as written, its brackets and backslashes
    # escaped, and reads back to the same text once they are taken off.
    value = "[click](https://evil.example) [x](1) back\\slash"
    finding = Finding(
        "code.currency",
        Severity.ERROR,
        f"'{value}' is not an ISO 4217 currency code",
        Location("m.yaml", 3, 1),
        hint=f"not {value}",
    )
    log = json.loads(make_reporter("sarif").render(ValidationResult((finding,), (), ("m.yaml",))))
    text = log["runs"][0]["results"][0]["message"]["text"]
    escaped = "\\[click\\](https://evil.example) \\[x\\](1) back\\\\slash"
    assert text == f"'{escaped}' is not an ISO 4217 currency code Hint: not {escaped}"
    assert log["runs"][0]["tool"]["driver"]["rules"][0]["help"]["text"] == f"not {escaped}"
    assert (
        re.sub(r"\\(.)", r"\1", text)
        == f"'{value}' is not an ISO 4217 currency code Hint: not {value}"
    )


def test_sarif_messages_double_the_braces_a_viewer_reads_as_a_placeholder() -> None:
    # SARIF 2.1.0, 3.11.5: "{0}" in a message is a placeholder for the result's arguments,
    # and a brace outside one is written "{{" or "}}". A template expression quoted in a
    # finding was shown by a viewer with half its braces.
    finding = Finding(
        "template.undefined",
        Severity.ERROR,
        "'{{ row.weight }}' names no column {0}",
        Location("m.yaml", 3, 1),
        hint="write {{ row['Gross weight'] }}",
    )
    log = json.loads(make_reporter("sarif").render(ValidationResult((finding,), (), ("m.yaml",))))
    text = log["runs"][0]["results"][0]["message"]["text"]
    assert text == (
        "'{{{{ row.weight }}}}' names no column {{0}} Hint: write {{{{ row\\['Gross weight'\\] }}}}"
    )
    help_text = log["runs"][0]["tool"]["driver"]["rules"][0]["help"]["text"]
    assert help_text == "write {{{{ row\\['Gross weight'\\] }}}}"
    # A viewer's reading: the pairs undone, then the link escapes taken off.
    shown = re.sub(r"\\(.)", r"\1", text.replace("{{", "{").replace("}}", "}"))
    assert shown == "'{{ row.weight }}' names no column {0} Hint: write {{ row['Gross weight'] }}"


def test_junit_stays_well_formed_xml_when_a_file_name_or_a_value_holds_u_ffff() -> None:
    # Found by a probe: a manifest named "h\uffffx.yaml" (a byte sequence XML 1.0 cannot
    # carry, escaped or not) gave a junit file no parser reads: the test report view of the
    # CI job failed to load. The attributes now drop it as the text already did.
    finding = Finding(
        "code.currency",
        Severity.ERROR,
        "'EU\ufffeR' is not an ISO 4217 currency code",
        Location("m/h\uffffx.yaml", 3, 1),
        document="Movement/m\uffff",
    )
    result = ValidationResult(
        (finding,), (DocumentEntry("Movement/m\uffff", "m/h\uffffx.yaml", 1),), ("m/h\uffffx.yaml",)
    )
    root = ET.fromstring(make_reporter("junit").render(result).split("\n", 1)[1])
    case = root.find("testsuite/testcase")
    assert case is not None
    assert case.get("classname") == "m/h\ufffdx.yaml"
    failure = case.find("failure")
    assert failure is not None
    assert failure.get("message") == "'EU\ufffdR' is not an ISO 4217 currency code"


def test_the_text_report_is_written_a_piece_at_a_time() -> None:
    # validate of 200,000 empty files held every line of the report, then the report
    # joined, before a byte was written; now a piece of about LINES_A_PIECE lines at a time.
    from customs_batch.validation.reporters._text import LINES_A_PIECE, TextReporter

    files = [f"m{number:05d}.yaml" for number in range(6_000)]
    findings = [
        Finding(
            "yaml.empty-file",
            Severity.WARNING,
            "the file holds no documents",
            Location(file, 1, 1),
            "Add documents or delete the file.",
        )
        for file in files
    ]
    result = ValidationResult(sorted_findings(findings), (), tuple(files))
    pieces = list(TextReporter().pieces(result))
    assert len(pieces) >= 2
    assert all(piece.endswith("\n") for piece in pieces)
    assert all(piece.count("\n") <= LINES_A_PIECE + 10 for piece in pieces)
    whole = "".join(pieces)
    assert whole == TextReporter().render(result)
    assert whole.count("warning[yaml.empty-file]") == len(files)
    assert whole.endswith("0 errors, 6000 warnings in 0 documents (6000 files)\n")
