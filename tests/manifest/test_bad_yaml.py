"""Bad YAML and bad files become findings, never tracebacks."""

from __future__ import annotations

from pathlib import Path

import pytest

from customs_batch.findings import Severity
from customs_batch.manifest import load_file
from tests.manifest.helpers import ENVELOPE, load_text, movement, only, rules

GOOD = movement("  shipmentId: shp_1\n", name="good")


def test_a_duplicate_key_is_an_error_naming_the_first_line() -> None:
    result = load_text(movement("  hawbId: a\n  hawbId: b\n"))
    finding = only(result, "yaml.duplicate-key")
    assert finding.location.line == 7
    assert "first at line 6" in finding.message
    assert finding.severity is Severity.ERROR
    assert finding.document == "Movement/mov-1"
    assert result.documents == []


def test_a_syntax_error_keeps_the_documents_before_it() -> None:
    result = load_text(GOOD + "---\n" + movement("  a: [1, 2\n"))
    assert [d.name for d in result.documents] == ["good"]
    assert only(result, "yaml.syntax").location.line > 5


def test_tabs_get_a_hint_about_indentation() -> None:
    finding = only(load_text("a:\n\tb: 1\n"), "yaml.syntax")
    assert "tab" in finding.hint
    assert (finding.location.line, finding.location.column) == (2, 1)


def test_an_empty_file_is_a_warning_and_comment_only_documents_are_skipped() -> None:
    assert only(load_text(""), "yaml.empty-file").severity is Severity.WARNING
    assert rules(load_text("# only a comment\n")) == ["yaml.empty-file"]
    result = load_text("---\n# nothing\n---\n" + GOOD)
    assert result.findings == []
    assert len(result.documents) == 1


def test_a_binary_file_is_one_finding(tmp_path: Path) -> None:
    path = tmp_path / "image.yaml"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    result = load_file(path)
    assert rules(result) == ["yaml.encoding"]
    assert result.files == [str(path)]


def test_a_file_that_is_not_utf8_is_one_finding(tmp_path: Path) -> None:
    path = tmp_path / "latin.yaml"
    path.write_bytes("name: Müller\n".encode("latin-1"))
    assert "not UTF-8" in only(load_file(path), "yaml.encoding").message


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be"])
def test_a_utf_16_manifest_is_named_utf_16_not_a_binary_file(tmp_path: Path, encoding: str) -> None:
    # Notepad's "Unicode" was "it holds NUL bytes (a binary file?)".
    path = tmp_path / "notepad.yaml"
    text = "apiVersion: customs-batch/v1\nkind: Movement\n"
    path.write_bytes(
        ("\ufeff" if encoding == "utf-16-be" else "").encode(encoding) + text.encode(encoding)
    )
    finding = only(load_file(path), "yaml.encoding")
    assert "UTF-16" in finding.message and "binary" not in finding.message
    assert "save the file as UTF-8" in finding.hint


def test_a_folder_given_as_a_file_is_unreadable(tmp_path: Path) -> None:
    assert rules(load_file(tmp_path)) == ["file.unreadable"]


def test_a_document_that_is_not_a_mapping_is_refused_but_its_neighbours_load() -> None:
    result = load_text("- a\n- b\n---\n" + GOOD + "---\njust text\n")
    assert rules(result) == ["envelope.not-mapping", "envelope.not-mapping"]
    assert [d.name for d in result.documents] == ["good"]


def test_a_key_that_is_not_a_string_is_a_finding() -> None:
    result = load_text(movement("  ? [a, b]\n  : 1\n"))
    assert only(result, "yaml.key-not-string").location.line == 6


def test_merge_keys_are_refused_clearly() -> None:
    text = movement("  base: &b {x: 1}\n  other:\n    <<: *b\n    y: 2\n")
    assert "template" in only(load_text(text), "yaml.merge-key").hint


def test_aliases_are_expanded() -> None:
    result = load_text(movement("  a: &p {name: Acme}\n  b: *p\n"))
    assert result.documents[0].spec["b"] == {"name": "Acme"}


def test_billion_laughs_is_refused() -> None:
    lines = ['  l0: &l0 "lol"']
    for level in range(1, 10):
        refs = ", ".join([f"*l{level - 1}"] * 10)
        lines.append(f"  l{level}: &l{level} [{refs}]")
    result = load_text(movement("\n".join(lines) + "\n"))
    assert "more than 10000" in only(result, "yaml.alias").message
    assert result.documents == []


def test_a_recursive_alias_is_refused() -> None:
    assert "itself" in only(load_text(movement("  a: &x [1, *x]\n")), "yaml.alias").message


def test_nesting_deeper_than_200_levels_is_a_finding() -> None:
    result = load_text(movement("  deep: " + "[" * 300 + "]" * 300 + "\n"))
    assert only(result, "yaml.too-deep").location.line == 6


def test_extreme_nesting_does_not_crash_the_parser() -> None:
    # libyaml's composer would crash the process past about 20,000 levels.
    result = load_text("a: " + "[" * 6_000 + "]" * 6_000 + "\n")
    assert rules(result) == ["yaml.too-deep"]


@pytest.mark.parametrize("levels", [999, 1_000, 1_001, 1_500, 4_999])
def test_nesting_past_libyamls_own_limit_is_too_deep_at_its_line(levels: int) -> None:
    # libyaml 0.2.6 (PyYAML 6.0.3 on) refuses flow and block nesting past 1,000 levels with
    # a syntax error of its own; whichever check stops first, it is the same finding at the
    # line where the nesting goes too deep, and the document before it still loads.
    flow = movement("  deep: " + "[" * levels + "]" * levels + "\n", name="flow")
    block = "deep:\n" + "".join("  " * i + "- \n" for i in range(levels))
    both = GOOD + "---\n" + flow
    for text, line in (
        (both, both[: both.index("deep:")].count("\n") + 1),
        ("a: 1\n" + block, None),
    ):
        result = load_text(text)
        finding = only(result, "yaml.too-deep")
        if line is not None:
            assert finding.location.line == line
            assert [d.name for d in result.documents] == ["good"]
        else:
            assert finding.location.line >= 2


def test_a_very_large_document_still_loads_under_a_raised_line_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CUSTOMS_BATCH_MAX_LINE_MB", "64")
    big = "x" * 50_000_000
    result = load_text(movement(f"  note: {big}\n"))
    assert result.findings == []
    assert len(result.documents[0].spec["note"]) == 50_000_000


def test_control_characters_are_a_finding() -> None:
    finding = only(load_text(f"{ENVELOPE}kind: Movement\x07\n"), "yaml.syntax")
    assert "U+0007" in finding.message
    assert finding.location.line == 2


@pytest.mark.parametrize(
    ("character", "named"),
    [("\u2028", "U+2028 (LINE SEPARATOR)"), ("\x85", "U+0085"), ("\u2029", "U+2029")],
)
def test_a_character_yaml_reads_as_a_line_break_is_refused_where_it_is(
    character: str, named: str
) -> None:
    # Pasted into a comment, it moved every finding below it one line down: the quantity of
    # line 6 was reported at line 7 (showing the next line); in a value's line it was a
    # syntax error at another line.
    text = "# from the warehouse note:" + character + "# more\n" + movement("  quantity: seven\n")
    result = load_text(text)
    finding = only(result, "yaml.encoding")
    assert (finding.location.line, finding.location.column) == (1, 27)
    assert named in finding.message and "line break" in finding.message
    assert result.documents == []


def test_a_byte_order_mark_inside_the_file_is_refused_where_it_is() -> None:
    # Found by an outside probe: two manifests saved with a BOM and joined (cat a b > c)
    # gave "kind is missing", "metadata is missing", "spec is missing" and a syntax error
    # at the line below, where the line shown looked right: the BOM is invisible.
    first = "\ufeff" + movement("  quantity: 1\n", name="one")
    result = load_text(first + "---\n\ufeff" + movement("  quantity: 2\n", name="two"))
    finding = only(result, "yaml.encoding")
    line = first.count("\n") + 2
    assert (finding.location.line, finding.location.column) == (line, 1)
    assert "U+FEFF (BYTE ORDER MARK)" in finding.message
    assert rules(result) == ["yaml.encoding"]
    # the one a file starts with is read as ever
    assert [d.name for d in load_text(first).documents] == ["one"]


def test_an_alias_of_an_anchor_in_another_document_says_anchors_stay_in_their_document() -> None:
    # "found undefined alias", with the hint to fix indentation, a ':' or a quote.
    text = (
        f"{ENVELOPE}kind: Movement\nmetadata: {{name: a}}\nspec: &base\n  quantity: 1\n"
        f"---\n{ENVELOPE}kind: Movement\nmetadata: {{name: b}}\nspec: *base\n"
    )
    finding = only(load_text(text), "yaml.anchor")
    assert finding.message == "the alias *base names no anchor &base above it in this document"
    assert (finding.location.line, finding.location.column) == (10, 7)
    assert "'---'" in finding.hint


def test_a_manifest_saved_as_windows_1252_is_refused_at_the_line_and_told_so() -> None:
    # The finding stood at line 1, column 1, whatever line held the byte.
    text = movement("  partyId: rpty_p1\n") + "# Müller\n"
    Path("m.yaml").write_bytes(text.encode("cp1252"))
    finding = only(load_file(Path("m.yaml")), "yaml.encoding")
    line = text.splitlines().index("# Müller") + 1
    assert (finding.location.line, finding.location.column) == (line, 4)
    assert "Windows-1252" in finding.hint


@pytest.mark.parametrize("text", ["\n" * 100_000, " \r\n  \n\r\r", "   ", "\r\n" * 1000 + " "])
def test_a_file_of_blank_lines_is_an_empty_file_without_the_passes_over_its_text(
    monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    """A 100 MB manifest of blank lines took 5.4 s to say it holds no documents: the scans
    for long values and the YAML parser went over every line. The same one warning, at
    line 1, without them."""
    from customs_batch.manifest import _load

    def not_wanted(*_args: object) -> object:
        raise AssertionError("scanned a file of blank lines")

    monkeypatch.setattr(_load, "long_blocks", not_wanted)
    monkeypatch.setattr(_load, "compose_each", not_wanted)
    result = load_text(text)
    assert rules(result) == ["yaml.empty-file"]
    assert only(result, "yaml.empty-file").location.line == 1


def test_a_blank_file_with_a_line_over_the_bound_still_says_so() -> None:
    result = load_text("\n\n" + " " * (1024 * 1024 + 1) + "\n")
    assert rules(result) == ["yaml.line-too-long"]
    assert only(result, "yaml.line-too-long").location.line == 3
