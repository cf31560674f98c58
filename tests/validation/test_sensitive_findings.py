"""A finding about a sensitive value (a guarantee's access code) never quotes it: not in any
report format, the job summary, the load cache or an annotated copy (docs/state.md,
"Sensitive fields")."""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from customs_batch.cli.main import invoke
from customs_batch.commands.scaffold import files
from customs_batch.findings import Finding, Location, Severity
from customs_batch.kinds import Kind
from customs_batch.load_cache import LoadCache
from customs_batch.validation.policies import _without_sensitive_values
from tests.validation._documents import make_document

NOT_SHOWN = "the value is not shown, being sensitive"
GUARANTEE = (
    "  DeclarationGuarantees:\n"
    '    - {{guaranteeType: "1", guaranteeReferenceNumber: 24NL0000000000017, '
    "guaranteeAmount: {amount}, currencyCode: EUR, accessCode: {code}}}\n"
)
DEPARTURE = """apiVersion: customs-batch/v1
kind: DepartureDeclaration
{for_each}metadata:
  name: {name}
template: rotterdam
values: {{destination_office: DE004073, destination_country: DE{values}}}
spec:
  commercialReference: {reference}
  totalWeight: 125.5
{guarantee}  Consignor: {{name: Acme Export BV, eoriNo: NL123456789, countryCode: NL}}
  Consignee: {{name: Globex GmbH, countryCode: DE, city: Hamburg, street: Kai 1, postcode: "20457"}}
  DeclarationItems:
    - description: Steel bolts
      commodityCode: "731815"
      originCountry: NL
      quantity: 100
      grossMass: 125.5
      netWeight: 120.0
      netPrice: 250
      currency: EUR
      packaging:
        - {{sequenceNumber: 1, typeOfPackages: PX, quantity: 2, shippingMarks: MY-0001}}
"""


def _project(root: Path) -> None:
    scaffold = files()
    for name in ("customs-batch.yaml", "templates/rotterdam.yaml.j2"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(scaffold[name], encoding="utf-8")
    (root / "manifests").mkdir()
    (root / "data").mkdir()


def _csv_cell(root: Path) -> str:
    """A forEach CSV declaring its access codes a number, one of them mistyped ``44l7``."""
    _project(root)
    (root / "data" / "g.csv").write_text("Ref;Access\nR-1;4417\nR-2;44l7\n", encoding="utf-8")
    (root / "manifests" / "departure.yaml").write_text(
        DEPARTURE.format(
            for_each="forEach: {file: ../data/g.csv, columns: {Access: number}}\n",
            name='"my-departure-{{ row_number }}"',
            values="",
            reference='"{{ row.Ref }}"',
            guarantee=GUARANTEE.format(amount=5000, code='"{{ row.Access }}"'),
        ),
        encoding="utf-8",
    )
    return "44l7"


def _yaml_value(root: Path) -> str:
    """A manifest writing its access code as a list by mistake: ``["9931"]``."""
    _project(root)
    (root / "manifests" / "departure.yaml").write_text(
        DEPARTURE.format(
            for_each="",
            name="my-departure",
            values="",
            reference="REF-Y",
            guarantee=GUARANTEE.format(amount=5000, code='["9931"]'),
        ),
        encoding="utf-8",
    )
    return "9931"


def _through_values(root: Path) -> str:
    """A cell read into ``values`` and from there into the access code: its finding is at
    ``values.code``, not at the sensitive field, and says nothing of the cell either."""
    _project(root)
    (root / "data" / "g.csv").write_text("Ref;Access\nR-1;4417\nR-2;44l7\n", encoding="utf-8")
    (root / "manifests" / "departure.yaml").write_text(
        DEPARTURE.format(
            for_each="forEach: {file: ../data/g.csv, columns: {Access: number}}\n",
            name='"my-departure-{{ row_number }}"',
            values=', code: "{{ row.Access }}"',
            reference='"{{ row.Ref }}"',
            guarantee=GUARANTEE.format(amount=5000, code='"{{ values.code }}"'),
        ),
        encoding="utf-8",
    )
    return "44l7"


CASES: dict[str, Callable[[Path], str]] = {
    "csv-cell": _csv_cell,
    "yaml-value": _yaml_value,
    "through-values": _through_values,
}


def _validate(*argv: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    with CliRunner(env=env).isolation() as (out, err, _):
        code = invoke(["validate", *argv])
    return code, out.getvalue().decode(), err.getvalue().decode()


def _holding(folder: Path, secret: str) -> list[str]:
    """The files under ``folder`` whose bytes (or, for an XLSX workbook, whose parts) hold
    ``secret``."""
    found = []
    for path in folder.rglob("*"):
        if not path.is_file():
            continue
        data = path.read_bytes()
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as book:
                data = b"".join(book.read(name) for name in book.namelist())
        if secret.encode() in data:
            found.append(str(path.relative_to(folder)))
    return found


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize(
    "format_name", ["text", "json", "sarif", "github", "junit", "markdown", "html"]
)
def test_no_report_format_quotes_the_access_code(
    tmp_path: Path, case: str, format_name: str
) -> None:
    secret = CASES[case](tmp_path)
    summary = tmp_path / "summary.md"
    code, out, _ = _validate(
        "--format",
        format_name,
        "-o",
        f"report.{format_name}",
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert code == 1
    report = (tmp_path / f"report.{format_name}").read_text(encoding="utf-8")
    assert "not shown" in report
    assert secret not in report
    assert secret not in summary.read_text(encoding="utf-8")
    assert secret not in out


@pytest.mark.parametrize("case", list(CASES))
def test_the_terminal_report_says_what_is_wrong_without_the_code(tmp_path: Path, case: str) -> None:
    secret = CASES[case](tmp_path)
    _, out, _ = _validate()
    assert secret not in out
    expected = {
        "csv-cell": "column 'Access' is declared number, but the cell is not a number; "
        + NOT_SHOWN,
        "yaml-value": "DeclarationGuarantees[0].accessCode is of the wrong type (array); "
        + NOT_SHOWN,
        "through-values": "column 'Access': the cell fails the check row.cell-type; " + NOT_SHOWN,
    }[case]
    assert expected in out
    # The source line holding the value is left out; the cell is named instead.
    assert "accessCode: [" not in out
    if case != "yaml-value":
        assert "cell: sheet 'g', row 3, column B 'Access'" in out


@pytest.mark.parametrize("case", list(CASES))
def test_the_load_cache_never_holds_the_access_code(tmp_path: Path, case: str) -> None:
    secret = CASES[case](tmp_path)
    first = _validate("--format", "json")
    again = _validate("--format", "json")  # from the cache
    assert again == first
    cache = tmp_path / ".customs-batch" / "cache"
    assert [path for path in cache.iterdir() if not path.name.startswith((".", "CACHEDIR"))]
    assert _holding(tmp_path / ".customs-batch", secret) == []


def test_the_source_line_of_another_finding_shows_no_access_code(tmp_path: Path) -> None:
    """A guarantee written on one line: a finding on its amount quotes the line with the
    code shown as (sensitive), the caret still under the amount."""
    _project(tmp_path)
    (tmp_path / "manifests" / "departure.yaml").write_text(
        DEPARTURE.format(
            for_each="",
            name="my-departure",
            values="",
            reference="REF-Y",
            guarantee=GUARANTEE.format(amount="lots", code='"5813"'),
        ),
        encoding="utf-8",
    )
    _, out, _ = _validate()
    assert "5813" not in out
    line = next(line for line in out.splitlines() if "guaranteeAmount: lots" in line)
    assert "accessCode: (sensitive)}" in line
    caret = out.splitlines()[out.splitlines().index(line) + 1]
    assert line[caret.index("^") :].startswith("lots")


def test_a_code_on_the_line_after_its_name_shows_as_sensitive(tmp_path: Path) -> None:
    """A flow mapping wrapped after ``accessCode:``: a finding on the next line quotes it
    with the code shown as (sensitive), the caret still under what it is about."""
    _project(tmp_path)
    guarantee = (
        "  DeclarationGuarantees:\n"
        '    - {guaranteeType: "1", accessCode:\n'
        '       "5813", guaranteeReferenceNumber: 24NL0000000000017, guaranteeAmount: lots,\n'
        "       currencyCode: EUR}\n"
    )
    (tmp_path / "manifests" / "departure.yaml").write_text(
        DEPARTURE.format(
            for_each="", name="my-departure", values="", reference="REF-Y", guarantee=guarantee
        ),
        encoding="utf-8",
    )
    _, out, _ = _validate()
    assert "5813" not in out
    line = next(line for line in out.splitlines() if "guaranteeAmount: lots" in line)
    assert line.lstrip().startswith("(sensitive), guaranteeReferenceNumber")
    caret = out.splitlines()[out.splitlines().index(line) + 1]
    assert line[caret.index("^") :].startswith("lots")


def test_a_line_of_values_holding_the_code_is_not_quoted(tmp_path: Path) -> None:
    """``values: {code: "5813", ...}`` feeding ``accessCode: "{{ values.code }}"``: a finding
    at that line (a value beside the code) is told without quoting the line."""
    _project(tmp_path)
    guarantee = (
        "  DeclarationGuarantees:\n"
        '    - {guaranteeType: "1", guaranteeReferenceNumber: 24NL0000000000017, '
        'guaranteeAmount: 5000, currencyCode: EUR, accessCode: "{{ values.code }}"}\n'
    )
    document = DEPARTURE.format(
        for_each="", name="my-departure", values=', code: "5813"', reference="REF-Y",
        guarantee=guarantee,
    ).replace("destination_country: DE", "destination_country: XX")  # fmt: skip
    (tmp_path / "manifests" / "departure.yaml").write_text(document, encoding="utf-8")
    code, out, _ = _validate()
    assert code == 1 and "manifests/departure.yaml:6:" in out  # the finding, at the line
    assert "5813" not in out
    with CliRunner().isolation() as (stdout, stderr, _):
        invoke(["plan"])
    assert b"5813" not in stdout.getvalue() + stderr.getvalue()


def test_a_guarantee_quoted_whole_shows_no_access_code(tmp_path: Path) -> None:
    """A schema message that quotes a value holding a guarantee (written where the list of
    them belongs) shows its code as (sensitive)."""
    _project(tmp_path)
    guarantee = '  DeclarationGuarantees:\n    guaranteeType: "1"\n    accessCode: "5813"\n'
    (tmp_path / "manifests" / "departure.yaml").write_text(
        DEPARTURE.format(
            for_each="",
            name="my-departure",
            values="",
            reference="REF-Y",
            guarantee=guarantee,
        ),
        encoding="utf-8",
    )
    _, out, _ = _validate("--format", "json")
    assert "5813" not in out
    assert "DeclarationGuarantees must be of type array, got object" in out
    assert "'accessCode': '(sensitive)'" in out


def test_every_finding_at_a_sensitive_field_is_told_without_its_value() -> None:
    """Whoever makes the finding: the message is replaced, and the finding marked."""
    at = Location("m.yaml", 3, 5, ("spec", "DeclarationGuarantees", 0, "accessCode"))
    finding = Finding("team.code", Severity.ERROR, "the code '5813' is wrong", at, "hint")
    assert finding.sensitive
    assert finding.message == (
        f"DeclarationGuarantees[0].accessCode: the value fails the check team.code; {NOT_SHOWN}"
    )
    elsewhere = Location("m.yaml", 3, 5, ("spec", "DeclarationGuarantees", 0, "guaranteeType"))
    kept = Finding("team.type", Severity.ERROR, "type '9' is wrong", elsewhere)
    assert not kept.sensitive and kept.message == "type '9' is wrong"


@dataclass
class _Outcome:
    """What a load gives back, as the cache sees it."""

    findings: list[Finding]
    documents: tuple[object, ...] = ()


def test_the_load_cache_refuses_an_outcome_whose_finding_quotes_an_access_code(
    tmp_path: Path,
) -> None:
    """The second guard: a finding at a sensitive field that was not told without its value
    (made around the first) is never stored."""

    manifest = tmp_path / "m.yaml"
    manifest.write_text("kind: x\n", encoding="utf-8")
    cache = LoadCache(str(tmp_path / "cache"), b"fingerprint", 1 << 30)
    at = Location("m.yaml", 3, 5, ("spec", "DeclarationGuarantees", 0, "accessCode"))
    finding = Finding("schema.type", Severity.ERROR, "the told message", at)
    assert cache.put(str(manifest), b"digest", (), _Outcome([finding])) is not None
    object.__setattr__(finding, "message", "got array ['9931']")
    object.__setattr__(finding, "sensitive", False)
    assert cache.put(str(manifest), b"digest", (), _Outcome([finding])) is None


@pytest.mark.parametrize("case", list(CASES))
def test_plan_reports_the_findings_without_the_access_code(tmp_path: Path, case: str) -> None:
    """plan loads the manifests its own way (whole documents, its own cache entries)."""
    secret = CASES[case](tmp_path)
    with CliRunner().isolation() as (out, err, _):
        code = invoke(["plan"])
    shown = out.getvalue().decode() + err.getvalue().decode()
    assert code != 0
    assert NOT_SHOWN in shown
    assert secret not in shown
    assert _holding(tmp_path / ".customs-batch", secret) == []


def test_a_policy_error_quoting_an_access_code_does_not_show_it() -> None:
    """The expression library's error may quote what it was given (``int('5813x')``)."""
    document = make_document(
        Kind.DEPARTURE_DECLARATION,
        {"DeclarationGuarantees": [{"guaranteeType": "1", "accessCode": "5813x"}]},
    )
    error = "ValueError: invalid literal for int() with base 10: '5813x'"
    expression = "int(spec.DeclarationGuarantees[0].accessCode) > 0"
    assert _without_sensitive_values(error, document, expression) == (
        "ValueError: the expression failed on a value of this document, not shown: the "
        "document holds a sensitive value"
    )
    # A field the expression names is no value of the document: it is said.
    missing = "no field 'guaranteeAmount'"
    named = "spec.DeclarationGuarantees[0].guaranteeAmount > 0"
    assert _without_sensitive_values(missing, document, named) == missing


@pytest.mark.parametrize(
    ("code", "expression", "shown"),
    [
        # CEL writes the code escaped: S3C\\RET"X, never the text replaced before.
        ("'S3C\\RET\"X'", '{"a": 1}[spec.DeclarationGuarantees[0].accessCode] == 1', "RET"),
        # A value computed from the code: 1234 + 1.
        (
            '"1234"',
            '{"a": 1}[string(int(spec.DeclarationGuarantees[0].accessCode) + 1)] == 1',
            "1235",
        ),
    ],
)
@pytest.mark.parametrize(
    "format_name", ["text", "json", "sarif", "github", "junit", "markdown", "html"]
)
def test_a_policy_evaluation_error_never_shows_a_value_of_a_document_with_a_code(
    tmp_path: Path, code: str, expression: str, shown: str, format_name: str
) -> None:
    _project(tmp_path)
    (tmp_path / "manifests" / "departure.yaml").write_text(
        DEPARTURE.format(
            for_each="",
            name="my-departure",
            values="",
            reference="REF-Y",
            guarantee=GUARANTEE.format(amount=5000, code=code),
        ),
        encoding="utf-8",
    )
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "s.yaml").write_text(
        f"id: team.s1\nseverity: error\nexpression: '{expression}'\nmessage: m\n",
        encoding="utf-8",
    )
    _, out, err = _validate("--format", format_name)
    assert "policy team.s1 could not be evaluated on this document" in out
    assert "not shown: the document holds a sensitive value" in out
    assert shown not in out + err
