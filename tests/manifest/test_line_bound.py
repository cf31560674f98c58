"""A line or a value longer than the bound (1 MB) is one finding, found before YAML reads it."""

from __future__ import annotations

import pytest

from customs_batch.errors import ConfigError
from customs_batch.manifest._line_bound import first_long_line, max_line_bytes
from tests.manifest.helpers import load_text, movement, only, rules

MB = 1024 * 1024
GOOD = movement("  shipmentId: shp_7Hk2Lm\n", name="good")


@pytest.mark.parametrize(
    ("data", "limit", "line"),
    [
        (b"", 4, None),
        (b"abcd", 4, None),
        (b"abcde", 4, 1),
        (b"abcd\nabcd\nabcd", 4, None),
        (b"abcd\nabcd\nabcde", 4, 3),
        (b"a\nb\nabcde\nc", 4, 3),
        (b"ab\nabcd\n\n\nabcdef\n", 4, 5),
        (b"abcd\r\nab", 4, 1),  # the carriage return counts as a byte of the line
        (b"\n" * 50 + b"x" * 9, 8, 51),
        (b"abcdefgh\n" * 1000, 8, None),
    ],
)
def test_the_first_long_line_is_found(data: bytes, limit: int, line: int | None) -> None:
    assert first_long_line(data, limit) == line


def test_a_long_line_is_one_finding_at_its_line_and_the_file_is_not_parsed() -> None:
    text = GOOD + "---\n" + movement("  hawbId: " + "h" * (MB + 1) + "\n  bogus: [\n")
    result = load_text(text)
    finding = only(result, "yaml.line-too-long")
    assert rules(result) == ["yaml.line-too-long"]
    assert (finding.location.line, finding.location.column) == (13, 1)
    assert "line 13 is longer than 1.0 MB" in finding.message
    assert "CUSTOMS_BATCH_MAX_LINE_MB=2" in finding.hint
    assert result.documents == []


def test_the_bound_is_raised_by_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUSTOMS_BATCH_MAX_LINE_MB", "2")
    result = load_text(movement("  hawbId: " + "h" * (MB + 1) + "\n"))
    assert "yaml.line-too-long" not in rules(result)
    assert len(result.documents) == 1


def test_a_value_over_the_bound_written_on_many_lines_abandons_its_document_only() -> None:
    block = "  hawbId: |\n" + ("    " + "h" * 99 + "\n") * (MB // 100 + 10)
    result = load_text(GOOD + "---\n" + movement(block, name="huge"))
    finding = only(result, "yaml.value-too-long")
    assert rules(result) == ["yaml.value-too-long"]  # not also "not a mapping"
    assert (finding.location.line, finding.location.column) == (13, 11)
    assert finding.location.path == ("spec", "hawbId")
    assert "a value of 1,049,500 characters (over 1.0 MB)" in finding.message
    assert finding.document == "Movement/huge"
    assert [d.name for d in result.documents] == ["good"]


@pytest.mark.parametrize("text", ["0", "-1", "one", "1.5"])
def test_a_bound_that_is_not_a_number_of_megabytes_is_a_config_error(text: str) -> None:
    with pytest.raises(ConfigError, match="CUSTOMS_BATCH_MAX_LINE_MB"):
        max_line_bytes({"CUSTOMS_BATCH_MAX_LINE_MB": text})
    assert max_line_bytes({}) == MB
