"""Text from outside printed safely: no line of its own, nothing the output cannot encode."""

from __future__ import annotations

import json
import os

import pytest

from customs_batch.escaping import (
    csv_text,
    json_document,
    markdown_text,
    printable,
    printable_lines,
)

NON_UTF8 = os.fsdecode(b"bad\xff.yaml")  # how Python holds a file name that is not UTF-8


def test_printable_escapes_what_could_start_a_line_or_drive_a_terminal() -> None:
    assert printable("x\nerror[fake]: injected") == "x\\nerror[fake]: injected"
    assert printable("a\rb\x1b[31mc\x00") == "a\\rb\\x1b[31mc\\x00"
    assert printable(NON_UTF8) == "bad\\xff.yaml"
    assert printable("evil\u202eyaml.exe\u2028") == "evil\\u202eyaml.exe\\u2028"
    assert printable("tab\tkept, Zürich, 東京") == "tab\tkept, Zürich, 東京"


def test_printable_with_lines_leaves_newlines_to_the_format() -> None:
    assert printable("a\nb\r\x1b", lines=True) == "a\nb\r\\x1b"


def test_printable_lines_indents_every_line_after_the_first() -> None:
    text = "cannot read x\nerror[fake]: injected\n  hint: look"
    assert printable_lines(text) == "cannot read x\n  error[fake]: injected\n  hint: look"


def test_a_json_document_is_valid_utf_8_and_gives_back_the_same_name() -> None:
    text = json_document(json.dumps({"file": NON_UTF8}, ensure_ascii=False))
    assert text == '{"file": "bad\\udcff.yaml"}'
    assert json.loads(text.encode("utf-8").decode("utf-8"))["file"] == NON_UTF8


# What printable() escapes, as its docstring and module say: control characters but the tab,
# the Arabic letter mark, left-to-right and right-to-left marks, line and paragraph
# separators, bidirectional embeddings, overrides and isolates, and lone surrogates.
ESCAPED = {
    *range(0x00, 0x09),
    *range(0x0A, 0x20),
    *range(0x7F, 0xA0),
    0x061C,
    0x200E,
    0x200F,
    *range(0x2028, 0x202F),
    *range(0x2066, 0x206A),
    *range(0xD800, 0xE000),
}


def _escape(code: int) -> str:
    if code in (0x0A, 0x0D):
        return "\\n" if code == 0x0A else "\\r"
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def test_printable_escapes_exactly_these_code_points_and_keeps_every_other() -> None:
    # Every code point, alone and amid plain text, in both modes: however printable() finds
    # what to escape, it escapes exactly these, each the same way.
    wrong = []
    for code in range(0x110000):
        char = chr(code)
        escaped = code in ESCAPED
        expected = _escape(code) if escaped else char
        kept_for_lines = char if code in (0x0A, 0x0D) else expected
        if (
            printable(char) != expected
            or printable(f"ok {char} ok") != f"ok {expected} ok"
            or printable(f"ok {char}", lines=True) != f"ok {kept_for_lines}"
        ):
            wrong.append(hex(code))
    assert wrong == []


def test_printable_escapes_every_unsafe_character_of_a_long_mixed_text() -> None:
    text = "Zürich\t東京 " * 50 + "\x1b[2J\u2028\r\n" + NON_UTF8 + "\u202e" + "x" * 200
    expected = "Zürich\t東京 " * 50 + "\\x1b[2J\\u2028\\r\\n" + "bad\\xff.yaml\\u202e" + "x" * 200
    assert printable(text) == expected
    assert printable("") == ""


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("DepartureDeclaration/dep-1", "DepartureDeclaration/dep-1"),
        ("=1+2", "'=1+2"),
        ("+49 30", "'+49 30"),
        ("-1", "'-1"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tx", "'\tx"),
        ("a\nb", "a\nb"),  # the CSV quoting keeps a newline inside its field
        ("a\x1b[31m", "a\\x1b[31m"),
        ("\r=1", "'\r=1"),
    ],
)
def test_csv_text_is_never_a_formula_nor_a_terminal_escape(text: str, field: str) -> None:
    assert csv_text(text) == field


def test_markdown_text_is_read_back_as_the_same_text() -> None:
    from markdown_it import MarkdownIt

    text = "<b>x</b> [l](javascript:y) `c` *e* _u_ ~~s~~ a|b \\ @team #12 &amp; \u202e"
    rendered = MarkdownIt("commonmark").enable("strikethrough").render(markdown_text(text))
    assert rendered == (
        "<p>&lt;b&gt;x&lt;/b&gt; [l](javascript:y) `c` *e* _u_ ~~s~~ a|b \\ "
        "@<!-- -->team #<!-- -->12 &amp;amp; \\u202e</p>\n"
    )


def test_a_json_document_escapes_what_would_reorder_or_drive_a_terminal_and_reads_back() -> None:
    # Found by a probe: `get declaration 501 --format json` printed a consignee's
    # right-to-left override, a C1 terminal escape (U+009B, CSI) and a line separator as is.
    value = {"name": "a\u202eb\x9b2J\u2028c\u200fd", "plain": "Köln\tTab", "n": 1}
    text = json_document(json.dumps(value, indent=2, ensure_ascii=False))
    assert "\\u202e" in text and "\\u009b" in text and "\\u2028" in text and "\\u200f" in text
    for raw in ("\u202e", "\x9b", "\u2028", "\u200f"):
        assert raw not in text
    assert "Köln\\tTab" in text and text.count("\n") == 4  # its layout kept
    assert json.loads(text) == value
