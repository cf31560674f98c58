"""Text from outside printed safely: no line of its own, nothing the output cannot encode."""

from __future__ import annotations

import json
import os

from customs_batch.escaping import json_document, printable, printable_lines

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
