"""validate --format markdown: a job summary or pull-request comment of the findings."""

from __future__ import annotations

import itertools

from markdown_it import MarkdownIt

from customs_batch.findings import Finding, Location, Severity
from customs_batch.validation.batch import DocumentEntry, ValidationResult, sorted_findings
from customs_batch.validation.reporters import ReportOptions, make_reporter
from customs_batch.validation.reporters._markdown import MAX_CHARACTERS

PARSER = MarkdownIt("commonmark").enable("table")


def _result(*findings: Finding) -> ValidationResult:
    entries = (DocumentEntry("Movement/a", "m.yaml", 1),)
    return ValidationResult(sorted_findings(findings), entries, ("m.yaml",))


def _cells(text: str) -> list[list[str]]:
    rows: list[list[str]] = []
    tokens = PARSER.parse(text)
    for before, token in itertools.pairwise(tokens):
        if token.type == "tr_open":
            rows.append([])
        elif token.type == "inline" and before.type in ("th_open", "td_open"):
            rows[-1].append(token.content)
    return rows


CELL = Finding(
    "row.cell-type",
    Severity.ERROR,
    "'zwanzig' is not a number | really",
    Location("data/d.csv", 2, 14, sheet="d", row=2, column_name="Quantity"),
    hint="write a number, e.g. <20>",
)
WARNING = Finding("schema.type", Severity.WARNING, "odd", Location("m.yaml", 7, 3))


def test_a_table_row_per_finding_errors_first_with_the_cell_and_hint() -> None:
    text = make_reporter("markdown").render(_result(WARNING, CELL))
    assert text.startswith("### customs-batch validate: failed\n")
    assert "**1 error, 1 warning in 1 document (1 file)**" in text
    rows = _cells(text)
    assert rows[0] == ["", "rule", "where", "message"]
    assert rows[1][:2] == ["error", "`row.cell-type`"]
    assert rows[1][2] == "`data/d.csv:2` sheet 'd', row 2, column N 'Quantity'"
    assert rows[1][3] == (
        "'zwanzig' is not a number | really<br>*hint:* write a number, e.g. &lt;20&gt;"
    )
    assert rows[2][0] == "warning"


def test_warnings_pass_unless_strict_and_a_clean_run_has_no_table() -> None:
    assert "validate: passed" in make_reporter("markdown").render(_result(WARNING))
    strict = make_reporter("markdown", ReportOptions(strict=True)).render(_result(WARNING))
    assert "validate: failed" in strict
    clean = make_reporter("markdown").render(_result())
    assert "passed" in clean and "|" not in clean


def test_thousands_of_findings_stay_under_the_comment_limit() -> None:
    findings = [
        Finding("schema.type", Severity.ERROR, f"value {i} is wrong", Location("m.yaml", i, 1))
        for i in range(1, 5001)
    ]
    text = make_reporter("markdown").render(_result(*findings))
    assert len(text) <= MAX_CHARACTERS
    shown = len(_cells(text)) - 1
    assert 100 < shown < 5000
    assert f"... and {5000 - shown} more: run `customs-batch validate` for all." in text


HOSTILE = (
    "<script>alert(1)</script> [x](javascript:alert(1)) ![i](http://e/x.png) @team #12 "
    "*b* _i_ ~~s~~ `c` ``d`` a|b \\| back\\slash &amp;"
)


def test_a_value_quoted_in_a_message_is_shown_as_itself_in_its_cell() -> None:
    # A finding quotes the manifest's or the cell's value: in a pull-request comment it
    # must read as written, never as a link, an image, a code span, emphasis, an HTML
    # element, a mention GitHub notifies or an issue it links, nor break the table.
    finding = Finding(
        "code.currency",
        Severity.ERROR,
        f"{HOSTILE!r} is not an ISO 4217 currency code",
        Location("data/d.csv", 2, 14, sheet="@team #1", row=2, column_name="*Cur*|[x](y)"),
        hint=f"not {HOSTILE}",
    )
    text = make_reporter("markdown").render(_result(finding))
    rows = _cells(text)
    assert len(rows) == 2 and len(rows[1]) == 4
    html = PARSER.render(text)
    for tag in ("<a ", "<img", "<script", "<code>c<", "<code>d<", "<del>", "<strong>b"):
        assert tag not in html
    assert html.count("<em>") == 1  # the word hint:, the report's own
    assert "@team" not in text and "#12" not in text and "#1 " not in text
    shown = html.replace("<!-- -->", "").replace("&lt;", "<").replace("&gt;", ">")
    shown = shown.replace("&quot;", '"').replace("&amp;", "&")
    assert f"{HOSTILE!r} is not an ISO 4217 currency code" in shown
    assert f"not {HOSTILE}" in shown
    assert "sheet '@team #1', row 2, column N '*Cur*|[x](y)'" in shown
