"""Text from outside (file names, values, sheet names, messages quoting them) made safe to
print: it can neither start a line of its own nor carry bytes the output cannot encode.

A manifest named ``x\\nerror[fake]: injected.yaml`` would otherwise print a second line that
reads like a finding, a terminal escape in a value would drive the terminal, and a file name
with a byte that is not UTF-8 (Python keeps it as a lone surrogate) would make ``--format
json`` invalid UTF-8 or end in an encoding error.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from typing import Any

# Control characters but the tab, lone surrogates (a byte that was not UTF-8), the line and
# paragraph separators, and the marks that reorder text on screen (bidirectional controls).
_UNSAFE = re.compile(
    "[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]"
)
# The same, keeping newlines and carriage returns, for a format that escapes those itself.
_UNSAFE_BUT_LINES = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]"
)
_NAMED = {"\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # the byte a non-UTF-8 file name had (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}"


def printable(text: str, *, lines: bool = False) -> str:
    """``text`` on one line with its unsafe characters written as escapes: a newline as
    ``\\n``, a byte of a non-UTF-8 file name as ``\\xff``, others as ``\\x1b`` or ``\\u202e``.
    With ``lines``, newlines and carriage returns are left for the format to escape."""
    # Every character escaped is one str.isprintable() refuses (a control, format, surrogate
    # or separator character; tests/test_escaping.py checks each code point), so text it
    # accepts is already safe: checking that in C first is 2.5 times faster for ordinary
    # text, and a report of 90,000 findings calls this half a million times.
    if text.isprintable():
        return text
    return (_UNSAFE_BUT_LINES if lines else _UNSAFE).sub(_escape, text)


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""What makes a spreadsheet program take a CSV field for a formula (OWASP's list)."""


def csv_text(text: str) -> str:
    """``text`` as a CSV field a spreadsheet program opens as text: :func:`printable` with
    its newlines left for the CSV quoting, and a field beginning with ``=``, ``+``, ``-``,
    ``@``, a tab or a carriage return after a ``'`` (shown by the program, never run as a
    formula: ``=HYPERLINK(...)`` becomes ``'=HYPERLINK(...)``)."""
    text = printable(text, lines=True)
    return "'" + text if text.startswith(_FORMULA_START) else text


# What GitHub-flavoured markdown reads in running text: a backslash, a code span, emphasis,
# strikethrough, a link or an image, a table cell's end. Each is written after a backslash,
# which CommonMark shows as the character itself.
_MARKDOWN_SPECIAL = re.compile(r"[\\`*_~\[\]|]")
# A mention (@team) or an issue reference (#12), which GitHub links (and notifies) in a comment
# whatever backslashes come before: an empty HTML comment after the sign splits the text GitHub
# searches, and shows nothing.
_GITHUB_REFERENCE = re.compile(r"([@#])(?=\w)")


def markdown_text(text: str, *, lines: bool = False) -> str:
    """``text`` as running text of a markdown comment or job summary (a table cell, a list
    item), shown as itself: :func:`printable`, its HTML escaped, every character markdown
    would read (a link ``[x](url)``, a code span, emphasis, a table's ``|``) after a
    backslash, and a mention or an issue reference (``@team``, ``#12``) that GitHub would
    link broken by an empty HTML comment. With ``lines``, newlines are left to the caller."""
    text = html.escape(printable(text, lines=lines), quote=False)
    text = _MARKDOWN_SPECIAL.sub(r"\\\g<0>", text)
    return _GITHUB_REFERENCE.sub(r"\1<!-- -->", text)


def _json_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def json_document(text: str) -> str:
    """A document ``json.dumps(..., ensure_ascii=False)`` wrote, valid UTF-8 and safe to
    show: a lone surrogate (a byte of a non-UTF-8 file name) becomes its JSON escape,
    ``\\udcff``, and so does every other character :func:`printable` escapes (a
    right-to-left override ``\\u202e``, a C1 terminal escape ``\\u009b``, a line
    separator ``\\u2028``). Such characters occur only inside the document's strings (the
    newlines between its lines are its layout, and a string's own are already ``\\n``),
    so a reader decodes them back to the same value."""
    return _UNSAFE_BUT_LINES.sub(_json_escape, text)


# The marks that reorder text on screen: YAML counts them printable and writes them as they
# are, where its emitter escapes the other characters printable() escapes (\e, \N, \L).
_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def yaml_documents(documents: Iterable[Any], **options: Any) -> str:
    """``documents`` as YAML (``yaml.dump_all`` with the safe dumper and ``options``), safe
    to show: a text holding a mark that reorders text on screen (a right-to-left override)
    is written double-quoted with the mark as its escape, ``"abc\\u202edcba"``, which a
    reader decodes back to the same text."""
    import yaml

    base = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

    class Dumper(base):  # type: ignore[valid-type,misc]
        pass

    def represent(dumper: Any, text: str) -> Any:
        style = '"' if _BIDI.search(text) else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)

    Dumper.add_representer(str, represent)
    text: str = yaml.dump_all(documents, Dumper=Dumper, **options)
    # Each such mark is inside a double-quoted text, where an escape stands for it.
    return _BIDI.sub(_json_escape, text)


def printable_lines(text: str) -> str:
    """``text`` that may run over several lines of its own (an error listing problems), each
    line :func:`printable`, and each line after the first indented: a newline a file name
    brings in cannot put a line at the start of the screen."""
    first, *rest = [printable(line) for line in text.split("\n")]
    return "\n".join([first, *(line if line[:1].isspace() else "  " + line for line in rest)])


def quoted_head(text: str) -> str:
    """A value from outside quoted for a message (a cell's text, an argument); a long one by
    its first characters and its length (a message per row that quoted a 100 KB cell whole
    held 100 KB per row; an error echoing a 100 KB argument, 100 KB on the terminal)."""
    return repr(text) if len(text) <= 40 else f"{text[:40]!r}... ({len(text):,} characters)"
