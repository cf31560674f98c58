"""CSV rows as real exports come: UTF-8 with or without a BOM, Windows-1252, UTF-16 (Excel's
"Unicode Text"), `;` `,` or tab delimiters, CRLF line ends and quoted fields holding newlines.
Every value is text (or None for an empty field); documents convert it by their schema.

Nothing is dropped without a word: a quote still open at the end of the file (which would
read every line after it into one cell) stops the read at the line it opened on, and a value
right of the header's last column is an error at its row.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import IO

from customs_batch.findings import column_letter
from customs_batch.line_bound import MAX_LINE_MB_VARIABLE, max_line_bytes
from customs_batch.manifest.record_places import record_places
from customs_batch.manifest.spreadsheet.header import (
    beyond_header,
    build_header,
    repeated_header,
    under_no_name,
    unnamed_columns,
)
from customs_batch.manifest.spreadsheet.limits import (
    MAX_COLUMNS,
    TOO_LARGE,
    open_sheet_file,
    too_many_columns,
    too_many_rows,
)
from customs_batch.manifest.spreadsheet.model import (
    MEGABYTE,
    BadCell,
    Cell,
    Header,
    Row,
    RowSource,
    SheetError,
)
from customs_batch.manifest.text_pool import TextPool

SAMPLE_BYTES = 64 * 1024
DELIMITERS = (";", ",", "\t", "|")
_WIDE = frozenset({"utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le", "utf-32-be"})
"""Encodings whose text holds NUL bytes (every ASCII character is one in UTF-16)."""
_BOMS = (
    # UTF-32 first: its little-endian BOM starts with UTF-16's.
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f]")
_EXCEL_SEPARATOR = re.compile(
    '\ufeff?(?P<quote>"?)sep=(?P<sep>[^\r\n"])(?P=quote)(?P<pad>[^\r\n"]*)(?:\r\n|\r|\n)?',
    re.IGNORECASE,
)


def excel_separator(line: str) -> str | None:
    """The delimiter a first line such as ``sep=;`` names, else None. Excel writes that line
    (and many tools do, so that Excel opens the file right): Excel splits the file with it
    and does not show the line, so the header is the next line, and it is row 1.

    Excel reads it in any case (``SEP=;``); a program that wrote the line as a row of its
    own quoted it (``"sep=;"``: it holds the delimiter) or padded it with empty fields to the
    header's width (``sep=;;;;``), and may leave spaces at its end: the same line."""
    found = _EXCEL_SEPARATOR.fullmatch(line)
    if found is None:
        return None
    separator = found.group("sep")
    if found.group("pad").strip(" " + separator):
        return None  # text after it: a header whose first column is named so
    return separator


def read_csv(source: RowSource) -> Iterator[Row]:
    """The data rows, numbered as a spreadsheet program numbers them (the header is row 1)."""
    file = str(source.path)
    with open_sheet_file(source) as raw:
        sample = raw.read(SAMPLE_BYTES)
        encoding = source.encoding or detect_encoding(sample)
        if source.encoding is not None:
            _check_declared(sample, source.encoding, file)
            _check_not_utf8(source.path, sample, source.encoding, file)
        if _is_binary(sample, encoding):
            order = utf16_without_bom(sample)
            hint = (
                "a CSV export is text; for an Excel workbook use a .xlsx file; for a UTF-16 "
                "text export without a BOM say its byte order in forEach: `encoding: "
                "utf-16-le` or `encoding: utf-16-be`"
            )
            if order is not None:
                hint = (
                    f"the file looks like {_ORDER_WORDS[order]} UTF-16 text without a BOM: "
                    f"say so in forEach: `encoding: {order}`"
                )
            if sample.startswith(b"PK\x03\x04") and b"xl/" in sample:
                hint = (
                    "it is an Excel workbook (.xlsx) named .csv: rename it to .xlsx (and "
                    "forEach.file with it)"
                )
            told = _bom_order(sample)
            if told is not None:
                hint = (
                    f"the file starts with the BOM of {_ORDER_WORDS[told]} UTF-16 text: leave "
                    "`encoding` out of forEach (the BOM tells it), or write `encoding: utf-16`"
                )
            raise SheetError(f"{file} is not a text file", file=file, hint=hint)
        if _HTML_START.match(sample):
            raise SheetError(
                f"{file} is an HTML page, not CSV: a web page saved under the export's name "
                "(a login or error page a download returned, or a table some systems export "
                "for Excel)",
                file=file,
                hint="open it to see what it says; download or export the data again as CSV "
                "(or open the table in Excel and save it as .xlsx)",
            )
        raw.seek(0)
        yield from _decoded_rows(raw, source, file, encoding, sample)


_ORDER_WORDS = {"utf-16-le": "little-endian", "utf-16-be": "big-endian"}
_HTML_START = re.compile(
    rb"(?:\xef\xbb\xbf)?\s*<(?:!doctype\s+html|html[\s>]|table[\s>]|head[\s>])", re.I
)
"""The start of an HTML page (a CSV file holds no ``<html>`` as its first text)."""


def _bom_order(sample: bytes) -> str | None:
    """``utf-16-le`` or ``utf-16-be`` when the sample starts with that UTF-16 BOM."""
    if sample.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        return None
    if sample.startswith(codecs.BOM_UTF16_LE):
        return "utf-16-le"
    return "utf-16-be" if sample.startswith(codecs.BOM_UTF16_BE) else None


def _check_declared(sample: bytes, encoding: str, file: str) -> None:
    """Raise SheetError when the sample plainly is not in the ``encoding`` forEach names.

    Read in the other byte order, UTF-16 text decodes without an error into characters of
    other scripts, its line ends and delimiters among them: the file was one line, its
    header one garbled column, and the run said only that it had no data rows. Nor does
    text of one byte a character (no NUL byte, where UTF-16 has one in every delimiter and
    line end) read as UTF-16 any better."""
    try:
        name = codecs.lookup(encoding).name
    except LookupError:
        return  # said when the rows are read
    if name not in _WIDE or len(sample) < 2:
        return
    hint_tail = "; read otherwise, every character of it would come out garbled"
    if b"\x00" not in sample:
        found = detect_encoding(sample)
        raise SheetError(
            f"{file} is not {encoding} text: it holds no NUL byte, which every delimiter and "
            f"line end of {encoding} text has",
            file=file,
            hint=f"the file reads as {found}: leave `encoding` out of forEach, or write "
            f"`encoding: {found}`{hint_tail}",
        )
    if name not in _ORDER_WORDS:
        return
    told, how = _bom_order(sample), "its BOM"
    if told is None:
        told, how = utf16_without_bom(sample), "where its NUL bytes are"
    if told is not None and told != name:
        write = "leave `encoding` out (the BOM tells it) or write" if how == "its BOM" else "write"
        raise SheetError(
            f"{file} is {_ORDER_WORDS[told]} UTF-16 text (told by {how}), not {encoding}",
            file=file,
            hint=f"{write} `encoding: {told}` in forEach{hint_tail}",
        )


def _check_not_utf8(path: Path, sample: bytes, encoding: str, file: str) -> None:
    """Raise SheetError when ``encoding`` is one byte a character (``cp1252``, ``cp850``) and
    the file is UTF-8 throughout, its characters beyond ASCII those of European text: a
    manifest written for a "CSV (MS-DOS)" or Windows export, the export since made "CSV
    UTF-8", read every ``Köln`` as ``KÃ¶ln`` and declared it so. A file only partly UTF-8
    (a row pasted from an older export) is read as stated: the user's word is taken."""
    try:
        name = codecs.lookup(encoding).name
    except LookupError:
        return  # said when the rows are read
    if name.startswith("utf") or name in _WIDE:
        return
    try:
        text = codecs.getincrementaldecoder("utf-8")().decode(sample, final=False)
    except UnicodeDecodeError:
        return
    beyond = [character for character in text.removeprefix("\ufeff") if not character.isascii()]
    bom = sample.startswith(codecs.BOM_UTF8)
    if not bom and (not beyond or not all(_european(c) for c in beyond)):
        return  # ASCII, or UTF-8 by chance only (PERÚ” in Windows-1252 is U+0694)
    if _first_undecodable(path, "utf-8") is not None:
        return
    if beyond:
        at = text.index(beyond[0])
        start = at
        while start > 0 and text[start - 1].isalpha():
            start -= 1
        end = at + 1
        while end < len(text) and (text[end].isalpha() or not text[end].isascii()):
            end += 1
        word = text[start:end]
        garbled = word.encode("utf-8").decode(encoding, errors="replace")
        said = f": read as {encoding}, '{word}' would be '{garbled}'"
    else:
        said = " (it starts with the UTF-8 BOM)"
    raise SheetError(
        f"{file} is UTF-8 text, not {encoding}{said}",
        file=file,
        hint="leave `encoding` out of forEach (UTF-8 is read without it), or write "
        "`encoding: utf-8`",
    )


def _european(character: str) -> bool:
    """Whether ``character`` is one European text holds: Latin letters with their accents,
    the signs of Latin-1, typographic quotes, dashes and the euro sign."""
    point = ord(character)
    return 0xA0 <= point <= 0x24F or 0x2010 <= point <= 0x203A or point == 0x20AC


def utf16_without_bom(sample: bytes) -> str | None:
    """``utf-16-le`` or ``utf-16-be`` when the sample looks like UTF-16 text without a BOM,
    told by where its NUL bytes are (each ASCII character has one: second in little-endian,
    first in big-endian); None when they do not tell (UTF-32 has NULs on both sides)."""
    pairs = len(sample) // 2
    first = sample[0 : 2 * pairs : 2].count(0)
    second = sample[1 : 2 * pairs : 2].count(0)
    if pairs == 0 or max(first, second) < pairs // 4:
        return None
    if second > 10 * first:
        return "utf-16-le"
    if first > 10 * second:
        return "utf-16-be"
    return None


_BINARY_STARTS = (b"PK\x03\x04", b"\xd0\xcf\x11\xe0", b"%PDF", b"\x89PNG", b"\x1f\x8b")
"""How a zip (a workbook: .xlsx, .ods), an old .xls, a PDF, a PNG and a gzip file start."""
_CONTROL_BYTES = bytes([*range(0, 9), *range(14, 32)])
"""The control bytes no text file holds but by mistake (tab and line ends are text)."""
_STRAY_NULS = 16
"""The most NUL bytes a text file's first 64 KB may hold, a few in 64 bytes at most: more
are a binary file, or UTF-16 text without a BOM (one NUL in every two bytes)."""


def _is_binary(sample: bytes, encoding: str) -> bool:
    """Whether the file holds NUL characters: a workbook or other binary file, never text.

    In UTF-16 and UTF-32 every ASCII character has NUL bytes: there the decoded text is
    looked at (a sample cut inside a character is decoded as far as it goes), and control
    characters other than tab and line ends are binary too (a zip read as UTF-16 is
    mostly valid characters)."""
    try:
        name = codecs.lookup(encoding).name
    except LookupError:
        name = encoding  # reported as an unknown encoding when the rows are read
    if name not in _WIDE:
        nuls = sample.count(0)
        if not nuls:
            return False
        # A few NUL bytes in text (a stray one pasted into a cell, left by the program
        # that wrote the export) are no binary file: read, each is an error at its cell,
        # as one past the sample is. Refused here, the file was "not a text file" with no
        # word of where, and a hint to use a .xlsx file.
        if sample.startswith(_BINARY_STARTS) or nuls > _STRAY_NULS:
            return True
        controls = len(sample) - len(sample.translate(None, _CONTROL_BYTES))
        return controls > 1 and controls * 64 > len(sample)
    try:
        text = codecs.getincrementaldecoder(encoding)().decode(sample, final=False)
    except UnicodeDecodeError:
        return True  # a lone surrogate: no text export writes one
    except UnicodeError:
        return False  # `utf-16` without its BOM: said when the rows are read
    return _CONTROL.search(text) is not None


def _decoded_rows(
    raw: IO[bytes], source: RowSource, file: str, encoding: str, sample: bytes
) -> Iterator[Row]:
    try:
        with io.TextIOWrapper(raw, encoding=encoding, newline="") as text:
            yield from _rows(text, source, file, encoding)
    except UnicodeDecodeError as exc:
        where = _first_undecodable(source.path, encoding)
        if where is None:
            message = f"{file} is not valid {encoding} ({exc.reason})"
        else:
            at, line, found = where
            what = (
                f"the byte {found.hex()} is"
                if len(found) == 1
                else f"the bytes {found.hex(' ')} are"
            )
            message = (
                f"{file}, line {line:,}: {what} not valid {encoding} (byte {at:,} of the file)"
            )
        hint = _other_encoding_hint(encoding)
        if encoding.startswith("utf-8") and source.encoding is None:
            hint = (
                "the file is UTF-8 elsewhere: that line was written in another encoding (a "
                "row pasted from an older export?). Save the file again as UTF-8 with that "
                "line corrected, or, if the whole file is in another encoding, say it in "
                "forEach, e.g. `encoding: cp1252`"
            )
        raise SheetError(message, file=file, hint=hint) from exc
    except UnicodeError as exc:  # a codec's own error (punycode, a BOM missing), no position
        hint = _other_encoding_hint(encoding)
        if "BOM" in str(exc):
            order = utf16_without_bom(sample)
            hint = (
                "the file has no BOM: say its byte order, `encoding: utf-16-le` or "
                "`encoding: utf-16-be` (utf-32-le or utf-32-be for UTF-32)"
            )
            if order is not None and encoding.startswith("utf-16"):
                hint = (
                    f"the file has no BOM and looks {_ORDER_WORDS[order]}: say so, "
                    f"`encoding: {order}`"
                )
        raise SheetError(f"{file} is not valid {encoding} ({exc})", file=file, hint=hint) from exc
    except LookupError as exc:
        raise SheetError(f"unknown encoding {encoding!r} for {file}", file=file) from exc


def _other_encoding_hint(encoding: str) -> str:
    """The hint for a file that is not ``encoding``: an example of another to state (it
    named ``cp1252`` when Windows-1252 was the encoding the file is not)."""
    try:
        windows = codecs.lookup(encoding).name == "cp1252"
    except LookupError:
        windows = False
    if windows:
        return (
            "the file is not Windows-1252: say its encoding in forEach, e.g. `encoding: "
            'cp850` (Excel\'s "CSV (MS-DOS)" export), `encoding: mac_roman` (Excel for '
            'Mac\'s "CSV (Macintosh)") or `encoding: cp1250` (Central European Windows)'
        )
    return "say the file's encoding in forEach, e.g. `encoding: cp1252`"


def detect_encoding(sample: bytes) -> str:
    """UTF-16 or UTF-32 by their BOM (Excel's "Unicode Text" export is UTF-16 with one),
    UTF-8 (BOM or not) when the sample decodes as UTF-8, else Windows-1252; Mac Roman when
    the lines end in a carriage return alone, as Excel for Mac's "CSV (Macintosh)" export
    writes them (read as Windows-1252, its Köln and Müller were sent as Kšln and MŸller)."""
    if sample.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    for bom, encoding in _BOMS:
        if sample.startswith(bom):
            return encoding
    try:
        codecs.getincrementaldecoder("utf-8")().decode(sample, final=False)
    except UnicodeDecodeError:
        # UTF-8 text with a line of another encoding pasted in: read as Windows-1252, every
        # other line's accents would become two characters each (Müller -> MÃ¼ller), with
        # no word said. Read as UTF-8, the file is refused at that line instead.
        if _mostly_utf8(sample):
            return "utf-8"
        return "mac_roman" if b"\r" in sample and b"\n" not in sample else "cp1252"
    return "utf-8"


def _mostly_utf8(sample: bytes) -> bool:
    """Whether more of the sample's characters beyond ASCII are UTF-8 than not: UTF-8 text
    with a line of Windows-1252 pasted in. Windows-1252 text holds a valid UTF-8 sequence
    only by chance (an accented capital followed by a curly quote: `PERÚ”`), beside many
    bytes that are not (every accented small letter before a plain one)."""
    sequences = _UTF8_SEQUENCE.findall(sample)
    if not sequences:
        return False
    high = len(sample) - len(sample.translate(None, _HIGH_BYTES))
    in_sequences = sum(len(found) for found in sequences)
    return len(sequences) > high - in_sequences


_HIGH_BYTES = bytes(range(0x80, 0x100))


_UTF8_SEQUENCE = re.compile(
    rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}"
)
"""A character of more than one byte in UTF-8."""


def _first_undecodable(path: Path, encoding: str) -> tuple[int, int, bytes] | None:
    """Where the file first stops being ``encoding``: the byte offset, the line (1-based)
    and the bytes there; None when it decodes, or cannot be read again."""
    try:
        with path.open("rb") as raw:
            decoder = codecs.getincrementaldecoder(encoding)()
            done = lines = 0
            while chunk := raw.read(SAMPLE_BYTES):
                try:
                    decoder.decode(chunk, final=False)
                except UnicodeDecodeError as exc:
                    # The decoder held back the start of a character cut by the last chunk.
                    held = len(exc.object) - len(chunk)
                    at = done - held + exc.start
                    before = exc.object[: exc.start]
                    return at, lines + before.count(b"\n") + 1, exc.object[exc.start : exc.end]
                lines += chunk.count(b"\n")
                done += len(chunk)
    except (OSError, LookupError):
        return None
    return None


def detect_delimiter(header_line: str) -> str:
    """The delimiter that splits the header line the most (outside quotes)."""
    counts = dict.fromkeys(DELIMITERS, 0)
    quoted = False
    for char in header_line:
        if char == '"':
            quoted = not quoted
        elif not quoted and char in counts:
            counts[char] += 1
    best = max(DELIMITERS, key=lambda d: counts[d])
    return best if counts[best] else ","


def _header_text(text: IO[str], header_row: int, limit: int) -> str:
    """The text of record ``header_row`` (``forEach.header``), read line by line (each
    within ``limit``), a line break inside quotes continuing the record: a title line above
    the column names must not choose the delimiter."""
    record, quoted = 1, False
    parts: list[str] = []
    while line := text.readline(limit + 1):
        if record == header_row:
            parts.append(line)
        quoted ^= line.count('"') % 2 == 1
        if len(line) > limit and not line.endswith(("\n", "\r")):
            break  # the reading proper says the line is too long
        if not quoted:
            if record == header_row:
                break
            record += 1
    return "".join(parts).removeprefix("\ufeff")


def guess_delimiter(lines: list[str]) -> str:
    """The delimiter of a CSV file by its first ``lines``, where the header row is not
    known: the one that splits the most lines into the same number of values (a title line
    above the header, ``Export, week 12``, does not choose it); else as
    :func:`detect_delimiter` guesses from the first line."""
    first = detect_delimiter(lines[0] if lines else "")
    scores: dict[str, tuple[int, int]] = {}
    for delimiter in DELIMITERS:
        counts: dict[int, int] = {}
        for line in lines:
            count = _count_outside_quotes(line, delimiter)
            if count:
                counts[count] = counts.get(count, 0) + 1
        # As many lines split alike by two delimiters (a title line `Export, week 12`
        # above a tab-separated sheet whose notes hold two commas each): the one that
        # splits them into more values, as the reader's delimiter splits the header most.
        scores[delimiter] = max(((n, count) for count, n in counts.items()), default=(0, 0))
    return max(DELIMITERS, key=lambda d: (scores[d], d == first))


def _count_outside_quotes(line: str, delimiter: str) -> int:
    if '"' not in line:
        return line.count(delimiter)
    return sum(part.count(delimiter) for part in line.split('"')[::2])


class _End:
    """Whether the CSV reader asked for a line after the last one while reading a record:
    it then ends that record at the end of the file, inside a quoted cell. And the blank
    lines between records, after the header, that never reached the CSV reader."""

    reached = False
    header_read = False
    """Set once the header row is read: a blank line after it is a blank row, left out."""
    blanks = 0
    """The blank lines passed over so far: each a row of the sheet, and a line."""


def _bounded_lines(
    text: IO[str], file: str, limit: int, end: _End, taken: list[str], skipped: int = 0
) -> Iterator[str]:
    """The lines of ``text``, none read whole when longer than ``limit`` characters: a 500 MB
    line (a field, or a header of millions of columns) would cost gigabytes before the CSV
    reader's own field limit (128 KB) saw it. A BOM the encoding leaves (``utf-16-le``) is
    not part of the first column's name. Each line is also put in ``taken``, which the
    reader of the records empties after each: the lines of the record just read.
    ``skipped``: the lines before ``text``'s position (an Excel ``sep=`` line)."""
    number = skipped
    streak = 0  # blank lines in a row
    while line := text.readline(limit + 1):
        number += 1
        if len(line) > limit and not line.endswith(("\n", "\r")):
            raised = max(2 * limit // MEGABYTE, 2)
            raise SheetError(
                f"{file}: line {number:,} is longer than {limit / MEGABYTE:.1f} MB; the file "
                "is not read further",
                file=file,
                rule=TOO_LARGE,
                hint="check that this is the right file; to read it anyway, raise the bound "
                f"with {MAX_LINE_MB_VARIABLE}={raised} (megabytes)",
            )
        if number == 1:
            line = line.removeprefix("\ufeff")
        elif not taken and end.header_read and line in _BLANK_LINES:
            # A blank row between records (never inside a quoted cell, whose record has
            # lines taken): counted, without the CSV reader's and the row loop's work for
            # each of them (a 100 MB file of blank lines took 72 s).
            end.blanks += 1
            streak += 1
            if streak >= _BLANK_STREAK:  # a long run: the rest of it in blocks
                blanks = _blank_run(text)
                end.blanks += blanks
                number += blanks
                streak = 0
            continue
        streak = 0
        taken.append(line)
        yield line
    end.reached = True


_BLANK_STREAK = 64
"""Blank lines in a row read one by one before the rest of the run is read in blocks (a
blank line between rows costs no block read)."""


_BLANK_LINES = frozenset({"\n", "\r\n", "\r"})


def _blank_run(text: IO[str]) -> int:
    """Pass over the blank lines ahead of ``text``'s position (a line's start), read in
    blocks; their count. ``text`` is left where the run ends. A ``\r`` ending a block may
    be the first half of a ``\r\n``: the next block reads it."""
    count = 0
    while True:
        at = text.tell()
        block = text.read(max(_BLANK_BLOCK, 2))  # one \r at least past a \r kept
        if not block:
            return count
        rest = block.lstrip("\r\n")
        run = block[: len(block) - len(rest)]
        goes_on = not rest and len(block) == max(_BLANK_BLOCK, 2)
        if goes_on and run.endswith("\r"):
            run = run[:-1]
        count += run.count("\n") + run.count("\r") - run.count("\r\n")
        if len(run) < len(block):
            text.seek(at)
            text.read(len(run))
        if not goes_on:
            return count


_BLANK_BLOCK = 1 << 20
"""The characters :func:`_blank_run` reads at a time."""


def _rows(text: IO[str], source: RowSource, file: str, encoding: str) -> Iterator[Row]:
    limit = max_line_bytes()
    separator = excel_separator(text.readline(limit + 1))
    start, skipped = (text.tell(), 1) if separator is not None else (0, 0)
    text.seek(start)
    delimiter = source.delimiter or separator
    if delimiter is None:
        delimiter = detect_delimiter(_header_text(text, source.header_row, limit))
        text.seek(start)
    end = _End()
    taken: list[str] = []  # the physical lines of the record just read
    lines = _bounded_lines(text, file, limit, end, taken, skipped)
    reader = csv.reader(lines, delimiter=delimiter, quotechar='"', strict=False)
    header = None
    unnamed: tuple[int, ...] = ()
    number = rows_read = 0
    line = 1 + skipped  # the line the next record starts on
    pool = TextPool()
    blanks = 0  # the blank lines passed over before the CSV reader saw them, counted
    guessed_windows = source.encoding is None and encoding == "cp1252"
    try:
        for record in reader:
            if end.blanks != blanks:  # blank rows before this one: each a row and a line
                number += end.blanks - blanks
                line += end.blanks - blanks
                blanks = end.blanks
            number += 1
            if end.reached:
                raise _unclosed_quote(
                    file, number, line, record, reader.line_num + skipped + blanks
                )
            first, line = line, reader.line_num + skipped + blanks + 1
            read = taken.copy()
            taken.clear()
            if guessed_windows:
                _refuse_dos_text(read, first, file)
            if len(record) > MAX_COLUMNS:
                raise too_many_columns(file, number, len(record))
            written = record
            if len(read) > 1:  # a quoted cell holds a line break: written as \n
                record = [_one_line_end(value) for value in record]
            values = [value if value.strip() else None for value in record]
            if header is None:
                if number < source.header_row:
                    continue
                header = replace(build_header(values, file=file, row=number), delimiter=delimiter)
                unnamed = unnamed_columns(header)
                end.header_read = True
                continue
            if not source.wants(number) or all(v is None for v in values):
                continue
            rows_read += 1
            if rows_read > source.limits.rows:
                raise too_many_rows(file, source.limits, number)
            places = record_places(first, read, written, delimiter)
            cells = {
                name: values[column - 1] if column <= len(values) else None
                for name, column in zip(header.names, header.columns, strict=True)
            }
            if any('="' in text for text in read):
                _formula_texts(cells)
            if any('\\"' in text for text in read):
                _mark_backslash_quotes(cells, header, number)
            if any("#" in text or "Err:" in text for text in read):
                _mark_error_texts(cells, header, number)
            _mark_date_texts(cells, header, number)
            yield Row(
                number,
                pool.share(cells),
                header,
                problem=beyond_header(values, header, number, delimiter=delimiter)
                if len(values) > header.columns[-1]
                else (under_no_name(values, header, number, unnamed) if unnamed else None)
                or repeated_header(values, header, number),
                places=places,
            )
    except csv.Error as exc:
        number += end.blanks - blanks
        line += end.blanks - blanks
        # The reader's own words for a cell over its limit are Python's ("field larger
        # than field limit (131072)"): said as what it is.
        limit = csv.field_size_limit()
        what = (
            f"a cell holds more than {limit:,} characters, where a spreadsheet cell holds at "
            "most 32,767"
            if "field larger than field limit" in str(exc)
            else str(exc)
        )
        raise SheetError(
            f"{file}, row {number + 1} (from line {line:,}): {what}",
            file=file,
            row=number + 1,
            hint=f"a cell this long is most often a quote that is never closed: check the "
            f"quotes from line {line:,} on",
        ) from exc
    if header is None and number == 0:
        raise SheetError(
            f"{file} is empty: it holds no text",
            file=file,
            hint="check that this is the right file, and export the sheet again (a copy or a "
            "download may have been cut short)",
        )
    if header is None:
        raise SheetError(
            f"{file} has no row {source.header_row} to take the header from",
            file=file,
            hint="check `header:` in forEach, or that the file is not empty",
        )


def _mark_error_texts(cells: dict[str, Cell], header: Header, row: int) -> None:
    """Replace in ``cells`` each text a spreadsheet program exports for a cell that shows
    an error (``#N/A``, ``#REF!``; LibreOffice's ``Err:502``) by a :class:`BadCell`: a
    formula that failed has no value to give, and its error's text was read as the value
    (``shippingMarks: '#N/A'`` sent), as an XLSX error cell is not."""
    for name, column in zip(header.names, header.columns, strict=True):
        value = cells[name]
        if value.__class__ is not str or value[:1] not in "#E":
            continue
        shown = value.strip()
        if shown not in EXPORTED_ERRORS and not _LIBREOFFICE_ERROR.fullmatch(shown):
            continue
        cells[name] = BadCell(
            column,
            f"cell {column_letter(column)}{row} holds {shown}, the text a spreadsheet program "
            "exports for a cell that shows an error (a formula that failed), not a value",
            "fix the formula in the workbook (or the cells it reads) and export the CSV "
            f"again; if {shown} is the text meant, declare the column text in forEach "
            f"(columns: {{{_yaml_key(name)}: text}})",
            shown=shown,
            text=value,
        )


_TEXT_FORMULA = re.compile(r'\s*="((?:[^"]|"")*)"\s*')
"""A cell written ``="05067"``: the formula of a text, which ERP exports write so that
Excel keeps a code's leading zeros (and shows ``05067``)."""


def _formula_texts(cells: dict[str, Cell]) -> None:
    """Replace in ``cells`` each ``="05067"`` by the text it shows, ``05067``, as Excel
    opening the file does (and the XLSX it saves holds): it was sent as ``="05067"``."""
    for name, value in cells.items():
        if value.__class__ is str and "=" in value:
            found = _TEXT_FORMULA.fullmatch(value)
            if found is not None:
                text = found.group(1).replace('""', '"')
                cells[name] = text if text.strip() else None


def _mark_backslash_quotes(cells: dict[str, Cell], header: Header, row: int) -> None:
    """Replace in ``cells`` each text read from a quoted cell whose quotes were escaped with
    a backslash (``"Müller \\"Stahl\\" GmbH"``, as database and some ERP exports write
    them) by a :class:`BadCell`: CSV doubles a quote inside a quoted cell, so the first
    escaped quote closed the cell and the rest was read into it garbled (``Müller
    \\Stahl\\" GmbH"``), sent as such."""
    for name, column in zip(header.names, header.columns, strict=True):
        value = cells[name]
        if value.__class__ is not str or (
            '\\"' not in value and not ("\\" in value and value.endswith('"'))
        ):
            continue
        cells[name] = BadCell(
            column,
            f"cell {column_letter(column)}{row} holds '{value}': the file escapes a quote "
            'inside a quoted cell with a backslash (\\"), where CSV doubles it (""), so the '
            "cell does not read as written",
            'export the file again with quotes doubled inside quoted cells (""), as '
            "spreadsheet programs write CSV, or correct the cell",
            rule="row.cell-type",
            shown=value,
        )


_DOS_LETTERS = (
    "\u201e\u2026\u2020\u2021\u02c6\u2030\u2039\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u203a"
)
"""What Windows-1252 makes of the bytes 0x84-0x89, 0x8B and 0x93-0x9B that code page 850
(Excel's "CSV (MS-DOS)" export) uses for ä à å ç ê ë ï ô ö ò û ù ÿ Ö ø: typographic quotes,
dashes and signs. The single quotes (0x91, 0x92) are left out: a curly apostrophe inside
a word (O'Brien typed in Word) is Windows-1252 text as typed."""
_DOS_SIGNS = re.compile(f"[{_DOS_LETTERS}]+")
"""A run of such signs. Between two letters (``K”ln``), Windows-1252 text holds one only by
mistake, where code page 850 reads ``Köln``; so is ™ starting a word (``™sterreich``, code
page 850's ``Österreich``)."""


def _refuse_dos_text(lines: list[str], first: int, file: str) -> None:
    """Raise SheetError when a line of a file read as Windows-1252 (the encoding guessed,
    none given) holds a typographic quote or dash inside a word: the file is far likelier
    code page 850, Excel's "CSV (MS-DOS)" export, in which every byte but 0x81, 0x8D,
    0x8F, 0x90 and 0x9D is also Windows-1252. Read as Windows-1252, its ``Köln`` was
    declared as ``K”ln`` without a word said. Which of the two it is, only the user can
    tell: the error shows the word both ways and names the key that says it. A word that
    code page 850 would not read as letters either (Müller, an en dash, Smith: ü is a
    Windows-1252 letter and code page 850's ³) is Windows-1252 text as written."""
    for offset, text in enumerate(lines):
        if text.isascii():
            continue
        for found in _DOS_SIGNS.finditer(text):  # the signs only: a few, in a few lines
            start, end = found.start(), found.end()
            after = text[end : end + 1]
            if not after.isalpha():
                continue
            if not text[start - 1 : start].isalpha() and not (
                text[start] == "\u2122" and after.islower()
            ):
                continue
            word, dos = _dos_word(text, start, end)
            if dos.isalpha():
                raise _dos_text(file, first + offset, word, dos)


def _dos_word(text: str, start: int, end: int) -> tuple[str, str]:
    """The word of ``text`` around ``start:end``, as read and as code page 850 reads it."""
    while start > 0 and (text[start - 1].isalpha() or text[start - 1] in _DOS_LETTERS):
        start -= 1
    while end < len(text) and (text[end].isalpha() or text[end] in _DOS_LETTERS):
        end += 1
    word = text[start:end]
    return word, word.encode("cp1252").decode("cp850")


def _dos_text(file: str, line: int, word: str, dos: str) -> SheetError:
    return SheetError(
        f"{file}, line {line:,}: '{word}', as Windows-1252 (the encoding guessed) reads it, "
        "has a typographic quote, dash or sign in the word; in code page 850, the encoding "
        f"of Excel's \"CSV (MS-DOS)\" export, it reads '{dos}'",
        file=file,
        hint=f"say the file's encoding in forEach: `encoding: cp850` if '{dos}' is "
        f"right, `encoding: cp1252` if '{word}' is (or export the sheet again as "
        '"CSV UTF-8")',
    )


def _one_line_end(value: str) -> str:
    """``value`` with each line break inside it written ``\n``, as a workbook cell holds it
    (and a YAML text): a quoted cell's CRLF (a file whose line ends git or an editor made
    CRLF on Windows, inside cells too) or CR (Excel for Mac's CSV) was sent as written, so
    the same export gave another text, and another request, on another computer."""
    return value.replace("\r\n", "\n").replace("\r", "\n") if "\r" in value else value


def _mark_date_texts(cells: dict[str, Cell], header: Header, row: int) -> None:
    """Replace in ``cells`` each text that is a date as a spreadsheet program writes it in
    a CSV export, in its locale's format (``3/4/2026``, ``04.03.2026``, ``4-3-2026``,
    ``2026-03-04 00:00:00``), by a :class:`BadCell`: the same date is ``2026-03-04`` in
    the XLSX export, and another locale's export writes it otherwise (``3/4/2026`` is 3
    April or March 4), so the documents would differ by the computer that saved the file;
    most often text typed into the sheet (``3-4``, a date written 2026-03-04) that Excel
    turned into a date and exported in its own format. An ISO 8601 date stays text.

    So is each whole number written as a spreadsheet's CSV export writes one too long for
    its column (``2.6E+17``, ``1E+20``): the digits after the first few are lost (an MRN
    or a reference typed as a number), as the XLSX cell of 16 digits or more is an error."""
    for name, column in zip(header.names, header.columns, strict=True):
        value = cells[name]
        if value.__class__ is not str or not 4 <= len(value) <= 32 or not value[:1].isdigit():
            continue
        if "E+" in value or "e+" in value:
            _mark_scientific(cells, name, column, row)
            continue
        if len(value) > 15 and _ZEROED.fullmatch(value):
            _mark_zeroed(cells, name, column, row)
            continue
        meant = _locale_date(value.strip())
        if meant is None:
            continue
        at = f"{column_letter(column)}{row}"
        cells[name] = BadCell(
            column,
            f"cell {at} holds {value.strip()!r}, a date as a spreadsheet program writes it in a "
            f"CSV export in its locale's format ({meant[0]}), not as the XLSX export gives it",
            f"write dates as YYYY-MM-DD ({meant[1]}): in the spreadsheet, format the column "
            "as yyyy-mm-dd (or as Text, and type the values again, if they were not meant as "
            "dates) and export again; if this text is meant as written, declare the column "
            f"text in forEach (columns: {{{_yaml_key(name)}: text}})",
            rule="row.cell-type",
            shown=value.strip(),
            text=value,
        )


_SCIENTIFIC = re.compile(r"[0-9](?:[.,][0-9]{1,14})?[Ee]\+(?P<exponent>[0-9]{2,3})")
"""A number as Excel's General format writes one of 12 digits or more in a CSV export."""


_ZEROED = re.compile(r"[1-9][0-9]{14}0+")
"""A whole number of 16 digits or more whose digits after the 15th are zeros: as a
spreadsheet, which keeps 15 digits of a number, exports a longer one typed into a cell."""


def _mark_zeroed(cells: dict[str, Cell], name: str, column: int, row: int) -> None:
    value = cells[name]
    assert isinstance(value, str)
    at = f"{column_letter(column)}{row}"
    cells[name] = BadCell(
        column,
        f"cell {at} holds {value!r}, a whole number of {len(value)} digits whose digits after "
        "the 15th are zeros, as a spreadsheet program exports a longer number typed into a "
        "cell: it keeps 15 digits of a number (a reference, an MRN or a code typed as a "
        "number lost its last digits)",
        "in the spreadsheet, format the column as Text and type the values again (or put an "
        "apostrophe before each), then export again; if this number is meant as written, "
        f"declare the column text in forEach (columns: {{{_yaml_key(name)}: text}})",
        rule="row.cell-type",
        shown=value,
        text=value,
    )


def _mark_scientific(cells: dict[str, Cell], name: str, column: int, row: int) -> None:
    value = cells[name]
    assert isinstance(value, str)
    found = _SCIENTIFIC.fullmatch(value.strip())
    if found is None or int(found["exponent"]) < 11:
        return  # fewer than 12 digits: Excel writes them out
    at = f"{column_letter(column)}{row}"
    cells[name] = BadCell(
        column,
        f"cell {at} holds {value.strip()!r}, a number as a spreadsheet program writes one of "
        f"{int(found['exponent']) + 1} digits in a CSV export: only its first digits are kept "
        "(a reference, an MRN or a code typed as a number)",
        "in the spreadsheet, format the column as Text and type the values again (or put an "
        "apostrophe before each), then export again; if this text is meant as written, "
        f"declare the column text in forEach (columns: {{{_yaml_key(name)}: text}})",
        rule="row.cell-type",
        shown=value.strip(),
        text=value,
    )


_DAY_FIRST_OR_MONTH_FIRST = re.compile(
    r"(?P<a>[0-9]{1,2})(?P<sep>[./-])(?P<b>[0-9]{1,2})(?P=sep)(?P<year>[0-9]{4}|[0-9]{2})"
    r"(?P<time>[ T][0-9]{1,2}:[0-9]{2}(?::[0-9]{2}(?:[.,][0-9]+)?)?(?: ?[AaPp][Mm])?)?"
)
_YEAR_FIRST = re.compile(
    r"(?P<year>[0-9]{4})(?P<sep>[./-])(?P<a>[0-9]{1,2})(?P=sep)(?P<b>[0-9]{1,2})"
    r"(?P<time> [0-9]{1,2}:[0-9]{2}(?::[0-9]{2}(?:[.,][0-9]+)?)?)?"
)
_MONTHS = (
    *("January", "February", "March", "April", "May", "June", "July", "August"),
    *("September", "October", "November", "December"),
)


def _locale_date(text: str) -> tuple[str, str] | None:
    """The date(s) ``text`` names as a locale's export writes one (``4 March 2026``, or
    ``3 April 2026 or March 4, 2026`` when the locale decides), and its ISO 8601 form(s);
    None when it is no such date (an ISO 8601 date, a code)."""
    found = _YEAR_FIRST.fullmatch(text)
    if found is not None:
        if found["sep"] == "-" and found["time"] is None:
            return None  # ISO 8601: as the XLSX export gives a date
        year, readings = int(found["year"]), [(int(found["b"]), int(found["a"]))]
    else:
        found = _DAY_FIRST_OR_MONTH_FIRST.fullmatch(text)
        if found is None:
            return None
        digits = found["year"]
        if len(digits) == 2 and found["sep"] == "-":
            return None  # 12-05-26: a code as often as a date
        year = (
            int(digits) if len(digits) == 4 else int(digits) + (2000 if int(digits) < 30 else 1900)
        )
        a, b = int(found["a"]), int(found["b"])
        # A point or a dash: day first (German, Dutch); a slash: either (US, UK).
        readings = [(a, b)] if found["sep"] != "/" else [(a, b), (b, a)]
    valid = []
    for day, month in readings:
        if 1 <= month <= 12 and 1 <= day <= 31 and (day, month) not in valid:
            valid.append((day, month))
    if not valid:
        return None
    words = [f"{day} {_MONTHS[month - 1]} {year}" for day, month in valid]
    iso = [f"{year:04d}-{month:02d}-{day:02d}" for day, month in valid]
    if len(valid) == 2:
        day, month = valid[1]
        words[1] = f"{_MONTHS[month - 1]} {day}, {year}"
        return f"{words[0]} or {words[1]}, as the locale read it", " or ".join(iso)
    if found["time"] is not None:
        return (
            f"{words[0]}, {found['time'].strip()}",
            f"{iso[0]}, or {iso[0]}T{found['time'].strip()} with its time",
        )
    return words[0], iso[0]


EXPORTED_ERRORS = frozenset(
    {
        *("#N/A", "#DIV/0!", "#NAME?", "#NULL!", "#NUM!", "#REF!", "#VALUE!"),
        *("#GETTING_DATA", "#SPILL!", "#CALC!", "#FIELD!", "#BLOCKED!", "#CONNECT!"),
        *("#BUSY!", "#UNKNOWN!", "#PYTHON!", "#EXTERNAL!", "#ERROR!"),
    }
)
"""What Excel, LibreOffice and Google Sheets write in a CSV export for a cell showing an
error (Google Sheets' ``#ERROR!`` too), as they write it."""
_LIBREOFFICE_ERROR = re.compile(r"Err:[0-9]{3}")


def _yaml_key(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_ ]*", name) else repr(name)


def _unclosed_quote(file: str, row: int, line: int, record: list[str], last: int) -> SheetError:
    """The error for a record the file ended in: its last cell opened a quote that never
    closed, and every line after it was read into that cell (``line``: the record's first
    line; ``last``: the file's last line)."""
    opened = line + sum(_line_breaks(value) for value in record[:-1])
    after = last - opened
    rest = (
        f": the {after:,} more line{'s' if after != 1 else ''} after it would be read into that cell"
        if after
        else ""
    )
    start = (record[-1].splitlines() or [""])[0][:40]
    return SheetError(
        f"{file}, line {opened:,}: the quote that opens column {column_letter(len(record))} "
        f"of row {row} is never closed{rest}",
        file=file,
        row=row,
        hint=f'end the cell with a closing quote ("{start}"); if the quote is part of the '
        f'text, double it inside a quoted cell ("""{start}")',
    )


def _line_breaks(value: str) -> int:
    return value.count("\n") + value.count("\r") - value.count("\r\n")
