"""A line or a value longer than the bound (1 MB) is one finding, found before YAML reads it."""

from __future__ import annotations

import pytest

from customs_batch.errors import ConfigError
from customs_batch.line_bound import first_long_line, max_line_bytes
from customs_batch.manifest.yaml._long_blocks import long_blocks
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


def test_a_block_over_the_bound_is_emptied_before_yaml_builds_it() -> None:
    # 3 MB over 37,000 short lines: each line passes the line bound, the value does not.
    block = "  hawbId: |\n" + ("    " + "h" * 76 + "\n") * 37_000
    after = movement("  hawbId: a\n  hawbId: b\n", name="after")  # 37,000 lines below
    result = load_text(GOOD + "---\n" + movement(block, name="huge") + "---\n" + after)
    finding = only(result, "yaml.value-too-long")
    assert (finding.location.line, finding.location.column) == (13, 11)
    assert finding.location.path == ("spec", "hawbId")
    assert finding.message == (
        "a value of 2,812,000 bytes or more on lines 14 to 37,013 (over 1.0 MB); "
        "the document is not read further"
    )
    assert finding.document == "Movement/huge"
    assert "CUSTOMS_BATCH_MAX_LINE_MB=3 (megabytes)" in finding.hint  # enough for it
    assert [d.name for d in result.documents] == ["good"]
    twice = only(result, "yaml.duplicate-key")
    assert twice.location.line == 37_021  # the lines after the block keep their numbers


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("a: 1\nkey: |\n  " + "x" * 30 + "\n  yy\nnext: 2\n", [(1, 5)]),
        ("a: 1\nkey: |\n  " + "x" * 10 + "\n  yy\nnext: 2\n", []),  # under the bound
        (
            "- k: >-\n    " + "x" * 30 + "\n\n    z\n  b: 1\n- |\n  " + "y" * 40 + "\n",
            [(0, 5), (5, 2)],
        ),
        ("a:\n  b: !!str &x |+\n    " + "x" * 30 + "\n  c: 1\n", [(1, 14)]),
        ("key: |2\n    " + "x" * 40 + "\nb: 1\n", [(0, 5)]),
        ("key: |\r\n  " + "x" * 40 + "\r\n\r\n  y\r\nb: 1\r\n", [(0, 5)]),
        ("a: 1\n--- |\n" + ("x" * 10 + "\n") * 5 + "---\na: 1\n", [(1, 4)]),
        ("key: |\nnext: " + "x" * 40 + "\n", []),  # an empty block, then a long line
        ("  # c: |\n    " + "x" * 40 + "\n", []),  # a comment
        ("key:|\n  " + "x" * 40 + "\n", []),  # a plain scalar "key:|"
        ("a: 'q |\n  " + "x" * 10 + "\n  x'\n" * 3, []),  # a quoted scalar's line ends in |
    ],
)
def test_blocks_over_the_bound_are_found_by_their_header(
    text: str, found: list[tuple[int, int]]
) -> None:
    blocks = long_blocks(text.encode(), 20)
    assert [(block.line, block.column) for block in blocks] == found


def test_a_big_file_of_small_blocks_loads_whole() -> None:
    note = "  hawbId: |\n" + ("    " + "n" * 60 + "\n") * 8 + "  shipmentId: shp_7Hk2Lm\n"
    text = "---\n".join(movement(note, name=f"m-{n}") for n in range(3_000))
    assert len(text) > 1.5 * MB
    result = load_text(text)
    assert "yaml.value-too-long" not in rules(result)
    assert len(result.documents) == 3_000
    assert result.documents[-1].spec["hawbId"] == ("n" * 60 + "\n") * 8


@pytest.mark.parametrize(
    "text", ["0", "-1", "one", "1.5", "\u0661\u0660", "²", "1" + "0" * 5000]
)  # ² and 5,001 digits were an internal error
def test_a_bound_that_is_not_a_number_of_megabytes_is_a_config_error(text: str) -> None:
    with pytest.raises(ConfigError, match="CUSTOMS_BATCH_MAX_LINE_MB"):
        max_line_bytes({"CUSTOMS_BATCH_MAX_LINE_MB": text})
    assert max_line_bytes({}) == MB


@pytest.mark.parametrize(
    ("opening", "closing", "last"),
    [
        ('"start', '  end"', "37,014"),  # double-quoted
        ("'it''s", "  end'", "37,014"),  # single-quoted, with a quote inside
        ("start", "", "37,013"),  # plain, going on over the lines indented further
    ],
    ids=["double", "single", "plain"],
)
def test_a_quoted_or_plain_value_over_the_bound_is_emptied_before_yaml_builds_it(
    opening: str, closing: str, last: str
) -> None:
    # 200 MB of such a value took 900 MB: libyaml builds it whole, with copies.
    lines = ("    " + "h" * 76 + "\n") * 37_000
    value = (
        f"  hawbId: {opening}\n{lines}{closing}\n" if closing else f"  hawbId: {opening}\n{lines}"
    )
    after = movement("  hawbId: a\n", name="after")
    result = load_text(GOOD + "---\n" + movement(value, name="huge") + "---\n" + after)
    finding = only(result, "yaml.value-too-long")
    assert (finding.location.line, finding.location.column) == (13, 11)
    assert finding.location.path == ("spec", "hawbId")
    assert finding.message.startswith("a value of 2,8")
    assert f"bytes or more on lines 13 to {last} (over 1.0 MB)" in finding.message
    assert finding.document == "Movement/huge"
    assert [d.name for d in result.documents] == ["good", "after"]


def test_a_wide_document_of_short_quoted_and_plain_values_loads_whole() -> None:
    # Over 1 MB between two lines at column 0: searched, and nothing in it is a long value.
    item = (
        "    - description: 'O''Brien''s \"spices\"'\n"
        "      note: it's a plain text going\n        on over a second line\n"
        '      code: "a \\" quote: # not a comment"\n'
        "      text: |\n        said: 'unclosed\n"
    )
    spec = "  DeclarationItems:\n" + item * 8_000 + "  note: 'done'\n"
    assert len(spec) > 1.2 * MB
    result = load_text(f"{movement(spec, name='wide')}")
    assert "yaml.value-too-long" not in rules(result)
    (document,) = result.documents
    items = document.spec["DeclarationItems"]
    assert len(items) == 8_000
    assert items[0]["note"] == "it's a plain text going on over a second line"
    assert document.spec["note"] == "done"


def test_a_stretch_of_line_breaks_is_not_searched_line_by_line_for_a_long_plain_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Found probing: a manifest of 100 MB of line breaks took 15 s, 8 of them a regular
    expression tried at each of its 100 million lines for a plain value over the bound. A
    stretch holding no more than the bound of bytes that are not blanks holds no such value
    (measured without blanks), and is not searched."""
    from customs_batch.manifest.yaml import _long_quoted

    class Unsearched:
        def search(self, *_: object) -> None:
            raise AssertionError("searched")

    data = b"a:\n" + b"\n" * (2 * MB) + b"  " + b"x" * 100 + b"\n"
    monkeypatch.setattr(_long_quoted, "_PLAIN", Unsearched())
    assert list(_long_quoted.long_plain(data, 0, len(data), MB, [])) == []
    monkeypatch.undo()
    long_value = b"a: " + b"x" * 10 + b"\n" + (b"  " + b"y" * 1000 + b"\n") * 1100
    found = list(_long_quoted.long_plain(long_value, 0, len(long_value), MB, []))
    assert [(first, lines) for _, _, first, _, lines in found] == [(3, 1101)]
