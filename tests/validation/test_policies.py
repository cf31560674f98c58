"""The team's own rules (policies/*.yaml) and suppressions, through `validate`, `plan` and
`policy test`, as a user meets them."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from customs_batch.cli.main import invoke
from customs_batch.validation import policy_cost

DEPARTURE = """\
apiVersion: customs-batch/v1
kind: ExportCancellation
metadata:
  name: {name}
  labels: {{lane: {lane}}}
spec:
  declarationId: {declaration}
"""

POLICY = """\
id: team.declaration-range
severity: error
kinds: [ExportCancellation]
expression: spec.declarationId < 1000
message: our declarations are numbered below 1000
"""


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = invoke(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _manifest(path: str, name: str, declaration: int, lane: str = "rtm-ham") -> None:
    file = Path(path)
    file.parent.mkdir(parents=True, exist_ok=True)
    text = DEPARTURE.format(name=name, declaration=declaration, lane=lane)
    file.write_text(text, encoding="utf-8")


def _policy(text: str, name: str = "team.yaml") -> None:
    Path("policies").mkdir(exist_ok=True)
    Path("policies", name).write_text(text, encoding="utf-8")


def test_a_policy_finding_in_text_at_the_field_it_names(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _manifest("manifests/a.yaml", "ok", 7)
    _manifest("manifests/b.yaml", "too-big", 4711)
    _policy(POLICY)
    code, out, _ = _run(capsys, "validate")
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == (
        "manifests/b.yaml:7:18: error[team.declaration-range]: "
        "our declarations are numbered below 1000"
    )
    assert "  hint: policy team.declaration-range at policies/team.yaml:1" in lines
    assert lines[-1] == "1 error, 0 warnings in 2 documents (2 files)"


def test_a_policy_finding_in_sarif_with_its_line(capsys: pytest.CaptureFixture[str]) -> None:
    _manifest("manifests/b.yaml", "too-big", 4711)
    _policy("# the team's rules\n" + POLICY.replace("error", "warning"))
    code, out, _ = _run(capsys, "validate", "--format", "sarif")
    assert code == 0  # a warning
    (result,) = json.loads(out)["runs"][0]["results"]
    assert result["ruleId"] == "team.declaration-range"
    assert result["level"] == "warning"
    assert result["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 7,
        "startColumn": 18,
    }
    assert "policies/team.yaml:2" in result["message"]["text"]
    # The policy's file and line, as a place of its own code scanning links to.
    assert result["relatedLocations"] == [
        {
            "id": 0,
            "physicalLocation": {
                "artifactLocation": {"uri": "policies/team.yaml"},
                "region": {"startLine": 2},
            },
            "message": {"text": "the policy that made this finding"},
        }
    ]


def test_an_evaluation_error_in_sarif_names_the_policy_file_and_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _manifest("manifests/a.yaml", "ok", 7)
    _policy("\n\n" + POLICY.replace("spec.declarationId < 1000", "spec.office == 'NL000396'"))
    code, out, _ = _run(capsys, "validate", "--format", "sarif")
    assert code == 1
    (result,) = json.loads(out)["runs"][0]["results"]
    assert result["ruleId"] == "policy.evaluation-error"
    (related,) = result["relatedLocations"]
    assert related["physicalLocation"] == {
        "artifactLocation": {"uri": "policies/team.yaml"},
        "region": {"startLine": 3},
    }


def test_policies_apply_to_plan_too(capsys: pytest.CaptureFixture[str]) -> None:
    _manifest("manifests/b.yaml", "too-big", 4711)
    _policy(POLICY)
    code, out, err = _run(capsys, "plan")
    assert code == 1
    assert "error[team.declaration-range]" in out + err
    assert "fix them before planning" in err


def test_a_policy_file_that_cannot_be_read_is_an_error_not_left_out(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A pipe, a device, a link to nothing or a loop of links named like a policy file: an
    error each (a named pipe is not waited on), never the team's rules silently not made."""
    _manifest("manifests/a.yaml", "ok", 7)
    _policy(POLICY)
    policies = Path("policies")
    os.mkfifo(policies / "pipe.yaml")
    (policies / "zero.yaml").symlink_to(os.devnull)
    (policies / "gone.yml").symlink_to(policies / "nothing.yaml")
    (policies / "loop-a.yaml").symlink_to("loop-b.yaml")
    (policies / "loop-b.yaml").symlink_to("loop-a.yaml")
    (policies / "notes.yaml").mkdir()  # a folder is no policy file, and no error
    code, out, err = _run(capsys, "validate", "--format", "json")
    assert code == 1 and "Traceback" not in err
    found = {
        Path(f["file"]).name: f["rule"]
        for f in json.loads(out)["findings"]
        if f["file"].startswith("policies")
    }
    assert found == {
        "gone.yml": "policy.invalid",
        "loop-a.yaml": "file.symlink-loop",
        "loop-b.yaml": "file.symlink-loop",
        "pipe.yaml": "file.not-regular",
        "zero.yaml": "file.not-regular",
    }
    code, out, err = _run(capsys, "policy", "test")
    assert code == 1 and "pipe.yaml" in out + err and "Traceback" not in err


@pytest.mark.parametrize(
    ("make", "rule"),
    [
        (os.mkfifo, "file.not-regular"),
        (lambda path: Path(path).symlink_to(path), "file.symlink-loop"),
        (lambda path: Path(path).symlink_to("nothing"), "policy.invalid"),
    ],
)
def test_a_policies_folder_that_is_no_folder_is_an_error_not_no_policies(
    capsys: pytest.CaptureFixture[str], make: Any, rule: str
) -> None:
    # Found probing: `policies` a named pipe, a loop of links or a link to nothing: every
    # policy was left out, silently; validate passed and `policy test` said "nothing to test".
    _manifest("manifests/a.yaml", "ok", 7)
    make("policies")
    code, out, err = _run(capsys, "validate", "--format", "json")
    assert code == 1 and "Traceback" not in err
    found = [(f["file"], f["rule"]) for f in json.loads(out)["findings"]]
    assert found == [("policies", rule)]
    code, out, err = _run(capsys, "policy", "test")
    assert code == 1 and "policies" in out + err and "nothing to test" not in out + err


def test_a_policy_in_a_subfolder_of_policies_is_read(capsys: pytest.CaptureFixture[str]) -> None:
    _manifest("manifests/b.yaml", "too-big", 4711)
    Path("policies/lanes").mkdir(parents=True)
    _policy(POLICY, "lanes/rtm.yaml")
    Path("policies/.hidden").mkdir()
    Path("policies/.hidden/x.yaml").write_text("not: a policy\n", encoding="utf-8")
    os.symlink("..", "policies/lanes/back")  # a loop of folders is read once
    code, out, _ = _run(capsys, "validate")
    assert code == 1
    assert "  hint: policy team.declaration-range at policies/lanes/rtm.yaml:1" in out
    assert "1 error, 0 warnings" in out


def test_a_policy_file_named_in_capitals_is_read(capsys: pytest.CaptureFixture[str]) -> None:
    # policies/Lanes.YAML was left out: the rule it holds never ran, and validate passed.
    _manifest("manifests/B.YAML", "too-big", 4711)
    _policy(POLICY, "Lanes.YAML")
    code, out, _ = _run(capsys, "validate")
    assert code == 1
    assert "  hint: policy team.declaration-range at policies/Lanes.YAML:1" in out
    assert "1 error, 0 warnings in 1 document (1 file)" in out


def test_a_bad_policy_file_is_findings_at_its_lines_never_a_traceback(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _manifest("manifests/a.yaml", "ok", 7)
    _policy(
        "id: team.one\nseverity: error\nexpresion: spec.x\nmessage: m\n"  # misspelt key
        "---\nid: team.two\nseverity: error\nexpression: spec.(\nmessage: m\n"
        "---\nid: team.three\nseverity: fatal\nexpression: 'true'\nmessages: m\n"
        "---\nid: team.four\nseverity: error\n"
        "expression: spec.a.all(x, spec.a.all(y, spec.a.all(z, x == y && y == z)))\n"
        "message: m\n"
    )
    code, out, err = _run(capsys, "validate", "--format", "json")
    assert code == 1 and "Traceback" not in err
    found = [
        (f["file"], f["line"], f["message"])
        for f in json.loads(out)["findings"]
        if f["rule"] == "policy.invalid"
    ]
    hints = [f["hint"] for f in json.loads(out)["findings"] if "expresion" in f["message"]]
    assert hints[0].startswith("did you mean 'expression'? ")
    file = str(Path("policies", "team.yaml"))
    assert found == [
        (file, 1, "the policy has no 'expression'"),
        (file, 3, "unknown key 'expresion' in a policy"),
        (
            file,
            8,
            "policy team.two: the expression does not compile: column 6: Syntax error: "
            "no viable alternative at input '.('",
        ),
        (file, 11, "the policy has no 'message'"),
        (file, 12, "severity 'fatal' is not error or warning"),
        (file, 14, "unknown key 'messages' in a policy"),
        (
            file,
            18,
            "policy team.four: the expression nests 3 comprehensions (all, exists, map, "
            "filter), more than 2",
        ),
    ]


def test_a_bad_labels_selector_is_the_policys_at_its_line_hinted_once(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _manifest("manifests/a.yaml", "a", 7)
    _policy(POLICY.replace("kinds:", 'labels: "lane in (a,b"\nkinds:'))
    code, out, _ = _run(capsys, "validate")
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == (
        "policies/team.yaml:3:9: error[policy.invalid]: the policy's labels 'lane in (a,b' is "
        "not a label selector: expected ) to close in (...)"
    )
    assert "-l " not in out and "\\n" not in out
    assert sum(line.startswith("  hint: labels is a label selector") for line in lines) == 1


def test_a_huge_expression_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    _manifest("manifests/a.yaml", "ok", 7)
    _policy(POLICY.replace("< 1000", "< 1000" + " && true" * 300))
    code, out, _ = _run(capsys, "validate")
    assert code == 1
    assert "the expression is 2425 characters, more than 2000" in out


def test_an_evaluation_error_names_the_policy(capsys: pytest.CaptureFixture[str]) -> None:
    _manifest("manifests/a.yaml", "ok", 7)
    _policy(POLICY.replace("spec.declarationId < 1000", "spec.office == 'NL000396'"))
    code, out, err = _run(capsys, "validate")
    assert code == 1 and "Traceback" not in err
    assert "error[policy.evaluation-error]: policy team.declaration-range could not be " in out
    assert "no field 'office'" in out


def test_kinds_labels_and_paths_choose_the_documents(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _manifest("manifests/ham/a.yaml", "ham", 4711, lane="rtm-ham")
    _manifest("manifests/ant/b.yaml", "ant", 4712, lane="rtm-ant")
    _manifest("manifests/ham/c.yaml", "ham-two", 4713, lane="rtm-ant")
    _policy(
        POLICY
        + "labels: lane in (rtm-ant)\npaths: ['manifests/ham/*.yaml']\n"
        + "---\n"
        + POLICY.replace("team.declaration-range", "team.other-kind").replace(
            "[ExportCancellation]", "[Movement]"
        )
    )
    code, out, _ = _run(capsys, "validate", "--format", "json")
    assert code == 1
    found = [(f["rule"], f["document"]) for f in json.loads(out)["findings"]]
    assert found == [("team.declaration-range", "ExportCancellation/ham-two")]


def test_policy_test_runs_the_examples(capsys: pytest.CaptureFixture[str]) -> None:
    examples = (
        "examples:\n"
        "  good: [{kind: ExportCancellation, metadata: {name: a}, spec: {declarationId: 5}}]\n"
        "  bad: [{kind: ExportCancellation, metadata: {name: a}, spec: {declarationId: 5000}}]\n"
    )
    _policy(POLICY + examples)
    code, out, _ = _run(capsys, "policy", "test")
    assert (code, out) == (0, "ok   team.declaration-range: 1 good, 1 bad\n")


def test_policy_test_fails_naming_the_policy_whose_examples_misbehave(
    capsys: pytest.CaptureFixture[str],
) -> None:
    wrong = (
        "examples:\n"
        "  good: [{kind: ExportCancellation, metadata: {name: a}, spec: {declarationId: 5000}}]\n"
        "  bad: [{kind: ExportCancellation, metadata: {name: a}, spec: {declarationId: 5}}]\n"
    )
    _policy(POLICY + wrong)
    code, out, _ = _run(capsys, "policy", "test")
    assert code == 1
    where = "team.declaration-range (policies/team.yaml:1)"
    assert out.splitlines() == [
        f"FAIL {where}: good example 1: the policy refuses it",
        f"FAIL {where}: bad example 1: the policy lets it through",
    ]


def test_policy_test_fails_a_good_example_the_policy_does_not_select(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Another kind, and labels outside the selector: the expression never ran on them.
    examples = (
        'labels: "lane=rtm"\n'
        "examples:\n"
        "  good:\n"
        "  - {kind: DepartureDeclaration, metadata: {name: a, labels: {lane: rtm}}, spec: {}}\n"
        "  - {kind: ExportCancellation, metadata: {name: b, labels: {lane: other}},"
        " spec: {declarationId: 5}}\n"
        "  - {kind: ExportCancellation, metadata: {name: c, labels: {lane: rtm}},"
        " spec: {declarationId: 5}}\n"
    )
    _policy(POLICY + examples)
    code, out, _ = _run(capsys, "policy", "test")
    assert code == 1
    where = "team.declaration-range (policies/team.yaml:1)"
    assert out.splitlines() == [
        f"FAIL {where}: good example 1: the policy does not apply to it (kinds or labels)",
        f"FAIL {where}: good example 2: the policy does not apply to it (kinds or labels)",
    ]


def test_policy_test_checks_an_examples_metadata_as_a_manifests(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Labels that are not a mapping of texts once crashed the selector (unhashable list).
    _policy(
        POLICY.replace("kinds:", 'labels: "a=b"\nkinds:')
        + "examples:\n"
        + "  good: [{kind: ExportCancellation, metadata: {name: a, labels: {a: [1]}},"
        + " spec: {declarationId: 5}}]\n"
        + "  bad:\n"
        + "    - {kind: ExportCancellation, metadata: {name: a, labels: [1]}, spec: {declarationId: 5000}}\n"
        + "    - {kind: ExportCancellation, metadata: [1], spec: {declarationId: 5000}}\n"
        + "    - {kind: ExportCancellation, metadata: {name: a, labels: {a: b}}, spec: {declarationId: 5000}}\n"
    )
    code, out, err = _run(capsys, "policy", "test")
    assert code == 1
    assert "internal error" not in err
    where = "team.declaration-range (policies/team.yaml:1)"
    assert out.splitlines() == [
        f"FAIL {where}: good example 1: label 'a' must be a text (at $.metadata.labels.a)."
        " Quote the label's value.",
        f"FAIL {where}: bad example 1: labels must be a mapping (at $.metadata.labels)."
        " Write 'labels: {lane: ham-rtm}'.",
        f"FAIL {where}: bad example 2: metadata must be a mapping (key: value lines)"
        " (at $.metadata). Give the document a 'metadata:' mapping.",
    ]


def test_a_document_suppresses_a_finding_with_a_reason(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _manifest("manifests/b.yaml", "too-big", 4711)
    text = Path("manifests/b.yaml").read_text(encoding="utf-8")
    annotation = (
        "  annotations:\n"
        "    customs-batch/suppress: 'team.declaration-range: the 2019 series, agreed'\n"
    )
    Path("manifests/b.yaml").write_text(
        text.replace("spec:", annotation + "spec:"), encoding="utf-8"
    )
    _policy(POLICY)
    code, out, _ = _run(capsys, "validate")
    assert code == 0
    assert out.splitlines()[-1] == "0 errors, 0 warnings, 1 suppressed in 1 document (1 file)"
    assert "suppressed[team.declaration-range]" in out and "the 2019 series, agreed" in out
    code, out, _ = _run(capsys, "validate", "--format", "sarif")
    (result,) = json.loads(out)["runs"][0]["results"]
    assert result["suppressions"] == [
        {"kind": "inSource", "justification": "the 2019 series, agreed (manifests/b.yaml:7)"}
    ]


def test_a_suppression_without_a_reason_is_an_error_and_silences_nothing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _manifest("manifests/b.yaml", "too-big", 4711)
    text = Path("manifests/b.yaml").read_text(encoding="utf-8")
    annotation = "  annotations:\n    customs-batch/suppress: 'team.declaration-range:'\n"
    Path("manifests/b.yaml").write_text(
        text.replace("spec:", annotation + "spec:"), encoding="utf-8"
    )
    _policy(POLICY)
    code, out, _ = _run(capsys, "validate", "--format", "json")
    assert code == 1
    report = json.loads(out)
    assert [(f["rule"], f["line"]) for f in report["findings"]] == [
        ("suppress.without-reason", 7),
        ("team.declaration-range", 9),
    ]
    assert report["summary"]["suppressed"] == 0


def test_the_configuration_suppresses_a_rule_for_paths(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _manifest("manifests/legacy/a.yaml", "old", 4711)
    _manifest("manifests/b.yaml", "new", 4712)
    Path("customs-batch.yaml").write_text(
        "suppress:\n"
        "  - rule: team.declaration-range\n"
        "    paths: ['manifests/legacy/*.yaml']\n"
        "    reason: the old series, closed in March\n"
        "  - rule: schema.type\n"
        "    paths: ['manifests/*.yaml']\n",
        encoding="utf-8",
    )
    _policy(POLICY)
    code, out, _ = _run(capsys, "validate", "--format", "json")
    report = json.loads(out)
    assert [(f["rule"], f["file"], f["line"]) for f in report["findings"]] == [
        ("suppress.without-reason", "customs-batch.yaml", 5),
        ("team.declaration-range", str(Path("manifests/b.yaml")), 7),
    ]
    (suppressed,) = report["suppressed"]
    assert suppressed["file"] == str(Path("manifests/legacy/a.yaml"))
    assert suppressed["suppression"] == {
        "reason": "the old series, closed in March",
        "where": "customs-batch.yaml:2",
    }
    code, out, _ = _run(capsys, "validate", "--format", "sarif")
    assert code == 1  # manifests/b.yaml, and the suppression without a reason
    kinds = [r.get("suppressions") for r in json.loads(out)["runs"][0]["results"]]
    assert [
        {
            "kind": "external",
            "justification": "the old series, closed in March (customs-batch.yaml:2)",
        }
    ] in kinds


def test_a_built_in_rule_is_suppressed_by_its_id(capsys: pytest.CaptureFixture[str]) -> None:
    _manifest("manifests/b.yaml", "dup", 4711)
    _manifest("manifests/c.yaml", "dup", 4711)
    text = Path("manifests/c.yaml").read_text(encoding="utf-8")
    annotation = (
        "  annotations:\n    customs-batch/suppress: 'project.duplicate-address: on purpose'\n"
    )
    Path("manifests/c.yaml").write_text(
        text.replace("spec:", annotation + "spec:"), encoding="utf-8"
    )
    code, out, _ = _run(capsys, "validate")
    assert code == 0
    assert "suppressed[project.duplicate-address]" in out
    assert "1 suppressed" in out.splitlines()[-1]


def test_render_keeps_the_annotations(capsys: pytest.CaptureFixture[str]) -> None:
    _manifest("manifests/b.yaml", "ok", 7)
    text = Path("manifests/b.yaml").read_text(encoding="utf-8")
    annotation = "  annotations:\n    customs-batch/suppress: 'schema.type: a test'\n"
    Path("manifests/b.yaml").write_text(
        text.replace("spec:", annotation + "spec:"), encoding="utf-8"
    )
    code, out, _ = _run(capsys, "render", "manifests", "--format", "json")
    assert code == 0
    (document,) = json.loads(out)
    assert document["metadata"]["annotations"] == {"customs-batch/suppress": "schema.type: a test"}


def test_a_date_in_an_example_is_compared_as_its_text(capsys: pytest.CaptureFixture[str]) -> None:
    # YAML reads 2026-03-01 as a date; the service receives its text.
    _policy(
        POLICY.replace("spec.declarationId < 1000", "spec.when.startsWith('2026-')")
        + "examples:\n"
        + "  good: [{kind: ExportCancellation, metadata: {name: a}, spec: {when: 2026-03-01}}]\n"
        + "  bad: [{kind: ExportCancellation, metadata: {name: a}, spec: {when: 2025-03-01}}]\n"
    )
    code, out, err = _run(capsys, "policy", "test")
    assert (code, out) == (0, "ok   team.declaration-range: 1 good, 1 bad\n"), err


def test_an_expression_reading_the_spec_whole_sees_every_field(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Only the fields a policy names are handed to the CEL library, unless it reads more.
    _manifest("manifests/a.yaml", "ok", 7)
    _policy(
        POLICY.replace("spec.declarationId < 1000", "size(spec) == 1 && 'declarationId' in spec")
        + "---\n"
        + POLICY.replace("team.declaration-range", "team.named").replace(
            "spec.declarationId < 1000", "spec.declarationId == 8 && !has(spec.other)"
        )
    )
    code, out, _ = _run(capsys, "validate", "--format", "json")
    assert code == 1
    findings = json.loads(out)["findings"]
    assert [f["rule"] for f in findings] == ["team.named"]


def test_nested_comprehensions_over_a_long_list_are_refused_not_run(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # 5,000 x 5,000 steps would be 25 million: past the bound, an evaluation error instead.
    Path("manifests").mkdir()
    Path("manifests/a.yaml").write_text(
        "apiVersion: customs-batch/v1\nkind: ExportCancellation\nmetadata:\n  name: a\n"
        f"spec:\n  declarationId: 7\n  notes: {list(range(5000))}\n",
        encoding="utf-8",
    )
    _policy(
        POLICY.replace(
            "spec.declarationId < 1000",
            "spec.notes.all(a, spec.notes.exists(b, a == b))",
        ).replace("kinds: [ExportCancellation]\n", "")
    )
    code, out, _ = _run(capsys, "validate", "--format", "json")
    assert code == 1
    found = json.loads(out)["findings"]
    messages = [f["message"] for f in found if f["rule"].startswith("policy")]
    assert messages == [
        "policy team.declaration-range could not be evaluated on this document: "
        "a list of 5,000 items is too long for its 2 nested comprehensions"
    ]


def _notes_manifest(items: int, metadata: str = "") -> None:
    Path("manifests").mkdir(exist_ok=True)
    Path("manifests/a.yaml").write_text(
        f"apiVersion: customs-batch/v1\nkind: ExportCancellation\nmetadata:\n  name: a\n{metadata}"
        f"spec:\n  declarationId: 7\n  notes: {list(range(items))}\n",
        encoding="utf-8",
    )


def _policy_messages(capsys: pytest.CaptureFixture[str], expression: str) -> list[str]:
    _policy(
        POLICY.replace("spec.declarationId < 1000", expression).replace(
            "kinds: [ExportCancellation]\n", ""
        )
    )
    code, out, _ = _run(capsys, "validate", "--format", "json")
    assert code == 1
    found = json.loads(out)["findings"]
    return [f["message"] for f in found if f["rule"].startswith(("policy", "team"))]


def test_a_list_the_expression_joins_with_plus_counts_as_long_as_its_operands(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # 300 items, joined 12 times on either side: 3,600 x 3,600 steps, refused before it runs
    # (every + of the expression is counted: up to 23 lists joined, 6,900 items).
    _notes_manifest(300)
    joined = "(" + "+".join(["spec.notes"] * 12) + ")"
    messages = _policy_messages(capsys, f"{joined}.all(a, {joined}.all(b, a == b || true))")
    assert messages == [
        "policy team.declaration-range could not be evaluated on this document: a list of up "
        "to 6,900 items (the document's longest has 300; the expression may join 23 with + "
        "or write 3) is too long for its 2 nested comprehensions"
    ]


def test_the_lists_of_metadata_count_when_the_expression_reads_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    depends = "".join(f"    - Movement/m{n}\n" for n in range(1500))
    _notes_manifest(1, metadata=f"  dependsOn:\n{depends}")
    messages = _policy_messages(
        capsys, "metadata.dependsOn.all(a, metadata.dependsOn.all(b, a == b || true))"
    )
    assert messages == [
        "policy team.declaration-range could not be evaluated on this document: "
        "a list of 1,500 items is too long for its 2 nested comprehensions"
    ]


@pytest.mark.parametrize(
    "expression",
    [
        "spec.notes.all(a, spec.notes.all(b, a == b || true))",
        # The stop absorbed by the expression: still reported, never the value it gave.
        "spec.notes.all(a, spec.notes.exists(b, b == 99)) || true",
        "spec.notes.map(a, spec.notes.filter(b, b > a)).size() >= 0",
    ],
)
def test_an_evaluation_stops_after_its_step_budget(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, expression: str
) -> None:
    # What the bound before evaluating lets through is still counted as it runs.
    monkeypatch.setattr(policy_cost, "MAX_STEPS", 1000)
    _notes_manifest(100)
    assert _policy_messages(capsys, expression) == [
        "policy team.declaration-range stopped after 1,000 steps on ExportCancellation/a: "
        "too costly"
    ]
    _, err = capsys.readouterr()
    assert "customs_batch_step" not in err


def _items_manifest(items: int) -> None:
    Path("manifests").mkdir(exist_ok=True)
    rows = "".join(
        f"    - {{description: item {n}, quantity: 1, grossMass: 0.1, netPrice: 1, currency: EUR}}\n"
        for n in range(items)
    )
    Path("manifests/a.yaml").write_text(
        "apiVersion: customs-batch/v1\nkind: ExportCancellation\nmetadata:\n  name: a\n"
        f"spec:\n  declarationId: 7\n  items:\n{rows}",
        encoding="utf-8",
    )


@pytest.mark.parametrize(
    "expression",
    [
        # 40,000 steps, each copying the 300-item list it selects: 12 million copies.
        "spec.items.all(a, spec.items.all(b, size(spec.items) > 0))",
        # 90,000 steps, each copying the list its filter has built so far.
        "spec.items.map(a, spec.items.filter(b, b.quantity == a.quantity))"
        ".all(l, l.all(x, size(l) > 0))",
    ],
)
def test_a_step_is_charged_what_it_copies(
    capsys: pytest.CaptureFixture[str], expression: str
) -> None:
    # Under the bound on list lengths (300 items, two nested comprehensions), and far under
    # 1,000,000 steps counted one an item: the copies are what it costs, and are charged.
    _items_manifest(300)
    assert _policy_messages(capsys, expression) == [
        "policy team.declaration-range stopped after 1,000,000 steps on ExportCancellation/a: "
        "too costly"
    ]


def test_a_map_is_charged_the_values_it_adds_to_its_list(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Each step adds the whole 100-item list (a variable, no selection) to what map builds,
    # and map copies what it has built at each step.
    _items_manifest(100)
    assert _policy_messages(capsys, "true && [spec.items].all(l, l.map(x, l).size() > 0)") == [
        "policy team.declaration-range stopped after 1,000,000 steps on ExportCancellation/a: "
        "too costly"
    ]


def test_steps_that_copy_little_are_charged_little(capsys: pytest.CaptureFixture[str]) -> None:
    # A field of an item is copied at each step, a 150-item list once an outer step.
    _items_manifest(150)
    messages = _policy_messages(
        capsys,
        "spec.items.all(a, a.quantity == 1 && spec.items.exists(b, b.description == a.description))"
        " && spec.items.map(a, a.grossMass).size() == 150 && false",
    )
    assert messages == ["our declarations are numbered below 1000"]


def _note_manifest(characters: int) -> None:
    Path("manifests").mkdir(exist_ok=True)
    Path("manifests/a.yaml").write_text(
        "apiVersion: customs-batch/v1\nkind: ExportCancellation\nmetadata:\n  name: a\n"
        f"spec:\n  declarationId: 7\n  note: {'x' * characters}\n",
        encoding="utf-8",
    )


@pytest.mark.parametrize(
    "expression",
    [
        # 300 texts of 20,000 characters joined one after the other: 900 million copied.
        "true && [spec.note].all(a, size(" + "+".join(["a"] * 300) + ") > 0)",
        # No comprehension: the joins alone.
        "size(" + "+".join(["spec.note"] * 150) + ") > 0",
    ],
)
def test_texts_joined_with_plus_are_charged_what_they_copy(
    capsys: pytest.CaptureFixture[str], expression: str
) -> None:
    # A 2,000-character expression joining a long text hundreds of times copies it again at
    # each +: it is stopped before it runs, never left to take minutes and gigabytes.
    _note_manifest(20_000)
    assert _policy_messages(capsys, expression) == [
        "policy team.declaration-range stopped after 1,000,000 steps on ExportCancellation/a: "
        "too costly"
    ]


def test_a_few_joins_of_a_long_text_are_evaluated(capsys: pytest.CaptureFixture[str]) -> None:
    _note_manifest(20_000)
    messages = _policy_messages(
        capsys, 'spec.note + "-" + spec.note + "-" + spec.note == "" || spec.declarationId > 7'
    )
    assert messages == ["our declarations are numbered below 1000"]


def test_a_policy_example_joining_a_long_text_is_bounded_too(
    capsys: pytest.CaptureFixture[str],
) -> None:
    note = "x" * 20_000
    joined = "+".join(["a"] * 300)
    _policy(
        POLICY.replace(
            "spec.declarationId < 1000", f"true && [spec.note].all(a, size({joined}) > 0)"
        )
        + "examples:\n"
        + f"  good: [{{kind: ExportCancellation, metadata: {{name: a}}, spec: {{note: {note}}}}}]\n"
    )
    code, out, _ = _run(capsys, "policy", "test")
    assert code == 1
    assert out == (
        "FAIL team.declaration-range (policies/team.yaml:1): good example 1: the expression "
        "could not be evaluated: stopped after 1,000,000 steps\n"
    )


def test_each_regular_expression_compile_is_charged(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The CEL library compiles a matches() pattern at every call ((\w{1,30}\s*){30}: about
    # 90 ms each, a minute over 1,000 items): each call is charged what its compile costs.
    monkeypatch.setattr(policy_cost, "regex_steps", lambda pattern: 100_000)
    _notes_manifest(20)
    messages = _policy_messages(capsys, 'spec.notes.all(x, string(x).matches("^[0-9]+$"))')
    assert messages == [
        "policy team.declaration-range stopped after 1,000,000 steps on ExportCancellation/a: "
        "too costly"
    ]


@pytest.mark.parametrize(
    "expression",
    [
        'spec.notes.all(x, string(x).matches("^[0-9]+$")) && false',
        'matches(string(spec.declarationId), "^[0-9]+$") && spec.declarationId > 7',
    ],
)
def test_a_regular_expression_that_compiles_quickly_is_evaluated(
    capsys: pytest.CaptureFixture[str], expression: str
) -> None:
    _notes_manifest(300)
    assert _policy_messages(capsys, expression) == ["our declarations are numbered below 1000"]


def test_a_policy_whose_aliases_stand_for_billions_of_values_is_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # 700 bytes, nine levels of ten aliases: 10^9 values once expanded.
    _manifest("manifests/a.yaml", "a", 7)
    levels = ['      x0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for n in range(1, 9):
        levels.append(f"      x{n}: &a{n} [" + ",".join([f"*a{n - 1}"] * 10) + "]")
    _policy(
        POLICY + "examples:\n  good:\n  - kind: ExportCancellation\n    metadata: {name: a}\n"
        "    spec:\n" + "\n".join(levels) + "\n"
    )
    code, out, _ = _run(capsys, "policy", "test")
    assert code == 1
    assert out.startswith(
        "policies/team.yaml:11: error: the policy holds more than 200,000 YAML values "
        "(every key, value, list and mapping counts, an alias (*name) each time it is used)"
    )
    code, out, _ = _run(capsys, "validate", "--format", "json")
    (finding,) = json.loads(out)["findings"]
    assert (finding["rule"], finding["line"]) == ("policy.invalid", 11)


def test_a_policy_file_of_too_many_values_is_refused_as_it_is_read(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUSTOMS_BATCH_MAX_DOCUMENT_VALUES", "1000")
    _policy(POLICY + "description: [" + ",".join(["1"] * 2000) + "]\n")
    code, out, _ = _run(capsys, "policy", "test")
    assert code == 1
    assert out.startswith("policies/team.yaml:6: error: the policy holds more than 1,000 ")


def test_a_policy_examples_evaluation_is_bounded_too(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(policy_cost, "MAX_STEPS", 1000)
    notes = list(range(100))
    _policy(
        POLICY.replace("spec.declarationId < 1000", "spec.notes.all(a, spec.notes.all(b, true))")
        + "examples:\n"
        + f"  good: [{{kind: ExportCancellation, metadata: {{name: a}}, spec: {{notes: {notes}}}}}]\n"
    )
    code, out, _ = _run(capsys, "policy", "test")
    assert code == 1
    assert out == (
        "FAIL team.declaration-range (policies/team.yaml:1): good example 1: the expression "
        "could not be evaluated: stopped after 1,000 steps\n"
    )


def test_counting_steps_leaves_what_an_expression_gives_as_it_was(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _notes_manifest(5)
    messages = _policy_messages(
        capsys,
        "spec.notes.map(a, a * 2) == [0, 2, 4, 6, 8] && spec.notes.filter(a, a > 2) == [3, 4]"
        " && spec.notes.map(a, a > 2, 'x,(' + string(a)) == ['x,(3', 'x,(4']"
        " && spec.notes.exists_one(a, a == 1) && !spec.notes.exists(a, a > 4) && false",
    )
    # Every part was true: the policy's own message, not an evaluation error.
    assert messages == ["our declarations are numbered below 1000"]


def test_the_environment_commands_accept_suppress_in_the_configuration(
    capsys: pytest.CaptureFixture[str],
) -> None:
    Path("customs-batch.yaml").write_text(
        "suppress:\n  - rule: code.hs-unknown\n    paths: ['manifests/*.yaml']\n    reason: r\n",
        encoding="utf-8",
    )
    code, _, err = _run(capsys, "env", "list")
    assert code == 0, err


@pytest.mark.parametrize("name", ["text", "json", "github", "junit", "sarif", "markdown"])
def test_a_policy_finding_is_in_every_format(capsys: pytest.CaptureFixture[str], name: str) -> None:
    _manifest("manifests/b.yaml", "too-big", 4711)
    _policy(POLICY)
    code, out, _ = _run(capsys, "validate", "--format", name)
    assert code == 1
    assert "team.declaration-range" in out and "numbered below 1000" in out


BAD_SEVERITY = POLICY.replace("severity: error", "severity: fatal")


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("text", "policies/team.yaml:2:11: error[policy.invalid]: severity 'fatal' is not"),
        ("github", "::error file=policies/team.yaml,line=2,col=11,title=policy.invalid::"),
        ("junit", "policies/team.yaml:2:11: error[policy.invalid]: severity 'fatal'"),
        ("markdown", "`policies/team.yaml:2`"),
    ],
)
def test_a_bad_policy_file_is_a_finding_at_its_line_in_every_format(
    capsys: pytest.CaptureFixture[str], name: str, expected: str
) -> None:
    _manifest("manifests/a.yaml", "ok", 7)
    _policy(BAD_SEVERITY)
    code, out, err = _run(capsys, "validate", "--format", name)
    assert code == 1 and "Traceback" not in err
    assert expected in out


def test_a_bad_policy_file_is_a_finding_at_its_line_in_json_and_sarif(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _manifest("manifests/a.yaml", "ok", 7)
    _policy(BAD_SEVERITY)
    code, out, _ = _run(capsys, "validate", "--format", "json")
    assert code == 1
    (finding,) = json.loads(out)["findings"]
    assert (finding["rule"], finding["file"], finding["line"], finding["column"]) == (
        "policy.invalid",
        str(Path("policies", "team.yaml")),
        2,
        11,
    )
    code, out, _ = _run(capsys, "validate", "--format", "sarif")
    assert code == 1
    (result,) = json.loads(out)["runs"][0]["results"]
    assert result["ruleId"] == "policy.invalid" and result["level"] == "error"
    assert result["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "policies/team.yaml"},
        "region": {"startLine": 2, "startColumn": 11},
    }


def test_a_raw_string_ending_in_a_backslash_hides_no_comprehension() -> None:
    # In a raw string a backslash escapes nothing: r'\' is a text of one backslash. Read as
    # an escape, the string would run on to the next quote and hide the comprehension
    # between, which the cost bound would then not count.
    from customs_batch.validation.policy_files import comprehension_depth, spec_fields

    expression = "spec.a != r'\\' && spec.b.all(x, x != 'z')"
    assert comprehension_depth(expression) == 1
    assert spec_fields(expression) == frozenset({"a", "b"})
    assert policy_cost.without_strings(expression) == "spec.a != r  ' && spec.b.all(x, x != ' ')"


@pytest.mark.parametrize(
    ("selection", "says"),
    [
        ("kinds: []", "'kinds' is an empty list, which names no kind"),
        ("paths: []", "'paths' is an empty list, which names no file"),
    ],
)
def test_an_empty_list_of_kinds_or_paths_is_an_error_not_every_document(
    capsys: pytest.CaptureFixture[str], selection: str, says: str
) -> None:
    # Read as no selection, the policy checked every document: the opposite of what an
    # empty list says.
    _manifest("manifests/b.yaml", "too-big", 4711)
    _policy(POLICY.replace("kinds: [ExportCancellation]", selection))
    code, out, _ = _run(capsys, "validate")
    assert code == 1
    assert says in out
    assert "error[team.declaration-range]" not in out


def test_a_policy_file_with_a_line_over_the_line_bound_is_refused_before_yaml_reads_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Found probing: a policy file of one 100 MB comment line was read by YAML for 38
    seconds, then accepted. A line over the manifests' bound (1 MB) is now refused at that
    line, the file not parsed: the broken YAML below it is not reported, the policy above
    it is left out."""
    _manifest("manifests/a.yaml", "a", 7)
    _policy(POLICY + "# " + "x" * (1024 * 1024) + "\nexpression: [unclosed\n")
    code, out, _ = _run(capsys, "validate")
    assert code == 1
    assert out.splitlines()[0] == (
        "policies/team.yaml:6:1: error[policy.invalid]: line 6 is longer than 1.0 MB; the "
        "file is not read further"
    )
    assert "CUSTOMS_BATCH_MAX_LINE_MB=2" in out
    assert "unclosed" not in out and "expected" not in out


def test_a_policy_file_is_parsed_by_libyaml_where_pyyaml_has_it() -> None:
    """PyYAML's own scanner takes about a second a megabyte: a policy file of 100 MB of
    line breaks (no long line) was read for over a minute. libyaml, which reads manifests,
    reads it in a hundredth of that."""
    from yaml import __with_libyaml__

    from customs_batch.validation import policy_files

    if not __with_libyaml__:
        pytest.skip("PyYAML built without libyaml")
    from yaml._yaml import CParser

    loader = policy_files._CountingLoader("id: a\n")
    assert isinstance(loader, CParser)
    assert loader.check_node()
    assert loader.construct_document(loader.get_node()) == {"id": "a"}


def test_reading_a_policy_compiles_it_once_and_looks_at_its_code_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 100,000 policies took 16 s to read: each expression was compiled twice (as written,
    # then counted) and its string literals blanked again for each of some fourteen looks.
    from customs_batch.validation import policy_files
    from customs_batch.validation._cel import cel_core

    core = cel_core()
    compiled: list[str] = []
    real = core.compile

    def counted(text: str) -> Any:
        compiled.append(text)
        return real(text)

    monkeypatch.setattr(core, "compile", counted)
    count = 20
    texts = [
        POLICY.replace("team.declaration-range", f"team.p{n}").replace("1000", str(1000 + n))
        for n in range(count)
    ]
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "many.yaml").write_text("---\n".join(texts), encoding="utf-8")
    policy_files._project_policies.cache_clear()
    policy_cost.without_strings.cache_clear()
    policy_files.comprehension_depth.cache_clear()
    read = policy_files._project_policies(tmp_path)
    assert len(read.policies) == count and not read.findings
    assert len(compiled) == count
    assert policy_cost.without_strings.cache_info().misses == count
    assert policy_files.comprehension_depth.cache_info().misses == count
    policy_files._project_policies.cache_clear()


def test_an_expression_that_does_not_compile_is_shown_at_the_users_columns() -> None:
    from customs_batch.validation.policy_files import compile_expression

    program, problem = compile_expression('spec.items.all(a, a.code.matches("x") &&)')
    assert program is None
    assert problem is not None and problem.startswith("the expression does not compile: column")
