"""Control characters in the texts a document sends: customs free text cannot carry them.

A double-quoted YAML string can write any character by its escape (``"\\e"``, ``"\\x07"``,
``"\\x7f"``, ``"\\x85"``), and a spreadsheet cell holds whatever was pasted into it: the
schemas' patterns cover code fields only, so such a character in a name, an address or a
description passed validation and was sent. Every text of every document's spec is looked
at, whatever its kind: a C0 control other than tab, line feed and carriage return
(U+0000-U+0008, U+000B, U+000C, U+000E-U+001F), DEL (U+007F) or a C1 control
(U+0080-U+009F) is a ``text.control-character`` error at that value.

A character that prints as nothing (a zero-width space, a soft hyphen, a byte-order mark left
in a cell, a mark of writing direction: :data:`~customs_batch.kinds.model.INVISIBLE`) is a
``text.invisible-character`` warning there: it is sent as part of the text, so the text the
service holds differs from the one everybody reads, and the plan compares identities without
it (docs/state.md), but nothing in a report shows it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from typing import Any

from customs_batch.findings import Finding, JsonPath, Severity
from customs_batch.kinds.model import INVISIBLE
from customs_batch.manifest.document import Document
from customs_batch.validation.common import spec_finding

RULE = "text.control-character"
INVISIBLE_RULE = "text.invisible-character"

CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
"""The characters refused: C0 controls but tab, line feed and carriage return; DEL; C1."""

_NAMES = {
    0x00: "null",
    0x07: "bell",
    0x08: "backspace",
    0x0B: "vertical tab",
    0x0C: "form feed",
    0x1B: "escape",
    0x7F: "delete",
    0x85: "next line",
}
"""The names of the ones most often met (the others are named by their code point only)."""

HINT = (
    "remove the character: customs free text cannot carry control characters. In YAML it is "
    'often an escape in a double-quoted string ("\\e", "\\x07", "\\x7f"); in a spreadsheet, '
    "one pasted into the cell. Tabs and line breaks may stay."
)


INVISIBLE_HINT = (
    "remove the character before the document is first applied: it is sent with the text, "
    "which then differs from the one every reader sees. It is most often pasted with the text "
    "from a web page, a PDF or a chat message. Once applied, keep the text as sent: plan takes "
    "the text without it for the same declaration, and another text is a change."
)

_EITHER = re.compile(f"{CONTROL.pattern}|{INVISIBLE.pattern}")


def check_control_characters(document: Document) -> list[Finding]:
    """A finding at each text of the document's spec holding a control character (an
    error), or a character that prints as nothing (a warning)."""
    texts: list[str] = []
    _texts(document.spec, texts)
    if _EITHER.search("\n".join(texts)) is None:  # (a line feed is no control refused)
        return []  # most documents: one search, no path made for each value
    found: list[tuple[JsonPath, str]] = []
    _collect(document.spec, (), found)
    findings = []
    for path, text in found:
        if CONTROL.search(text):
            findings.append(spec_finding(document, RULE, path, _message(path, text), HINT))
        if INVISIBLE.search(text):
            findings.append(
                spec_finding(
                    document,
                    INVISIBLE_RULE,
                    path,
                    _invisible_message(path, text),
                    INVISIBLE_HINT,
                    Severity.WARNING,
                )
            )
    return findings


def _texts(node: Any, texts: list[str]) -> None:
    """Every text in ``node``, in ``texts`` (plain dicts and lists told by their type
    first: an ``isinstance`` of an abstract class for each value was most of the time)."""
    kind = type(node)
    if kind is dict:
        values: Any = node.values()
    elif kind is list:
        values = node
    elif isinstance(node, str):
        texts.append(node)
        return
    elif isinstance(node, Mapping):
        values = node.values()
    elif isinstance(node, tuple):
        values = node
    else:
        return
    for value in values:
        kind = type(value)
        if kind is str:
            texts.append(value)
        elif kind not in _SCALARS:  # a dict, a list, or another container
            _texts(value, texts)


_SCALARS = frozenset({int, float, bool, type(None)})


def _collect(node: Any, path: JsonPath, found: list[tuple[JsonPath, str]]) -> None:
    if isinstance(node, str):
        if _EITHER.search(node):
            found.append((path, node))
    elif isinstance(node, dict | Mapping):
        for key, value in node.items():
            _collect(value, (*path, key), found)
    elif isinstance(node, list | tuple):
        for index, value in enumerate(node):
            _collect(value, (*path, index), found)


def _message(path: JsonPath, text: str) -> str:
    """Which character, where in the text, and how many more; never the text itself (it
    may be sensitive, and would carry the character into every report)."""
    matches = list(CONTROL.finditer(text))
    first = matches[0]
    code = ord(first.group())
    name = f" ({_NAMES[code]})" if code in _NAMES else ""
    more = len(matches) - 1
    others = f", and {more} more after it" if more else ""
    # A C1 control in a sheet is most often a Windows-1252 character (€ is 0x80, … 0x85, „
    # 0x84) of a file read as Latin-1, which has none of them.
    c1 = (
        "; in a spreadsheet's text, a character of U+0080-U+009F is most often one of "
        "Windows-1252's (€, „, …) in a file read as Latin-1: say `encoding: cp1252` in forEach"
        if 0x80 <= code <= 0x9F
        else ""
    )
    return (
        f"{_field_name(path)} holds the control character U+{code:04X}{name} at character "
        f"{first.start() + 1} of its text{others}{c1}"
    )


def _invisible_message(path: JsonPath, text: str) -> str:
    """As :func:`_message`, for a character that prints as nothing."""
    matches = list(INVISIBLE.finditer(text))
    first = matches[0]
    code = ord(first.group())
    name = _INVISIBLE_NAMES.get(code) or unicodedata.name(first.group(), "").lower()
    more = len(matches) - 1
    others = f", and {more} more after it" if more else ""
    return (
        f"{_field_name(path)} holds U+{code:04X} ({name}), which prints as nothing, at "
        f"character {first.start() + 1} of its text{others}"
    )


_INVISIBLE_NAMES = {0xFEFF: "a byte-order mark", 0x00AD: "a soft hyphen"}


def _field_name(path: JsonPath) -> str:
    """A readable name for the value at ``path``: ``Consignee.name``, ``Items[0].text``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "spec"
