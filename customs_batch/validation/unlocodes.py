"""UN/LOCODEs checked against the UNECE code list that ``pyunlocode`` ships, offline.

``pyunlocode`` carries the UNECE release files as published (``2023-1 UNLOCODE
CodeListPart1.csv`` to ``Part3``, about 115,800 locations); the edition is read from their
names. Its own API is not used: it opens a SQLite file inside the installed package for
writing, and that database differs from the release files (it lacks Cairo, EGCAI, among
others). A code whose layout is right but which is not in the list is a warning, not an
error: the code may be newer than the data, and ``--unlocodes off`` turns the check off.

Speed: parsing all 116,000 lines costs about 0.1 s of CPU, more than the rest of validating a
small file. The release lists a country's locations together, after a header line
``,"NL",,".NETHERLANDS"``, so only the block of each country a batch names is parsed, when
first needed: 6 ms for the Netherlands, 30 ms for the United States, after 2-8 ms to read
the files. A country's first 16 codes are not even parsed for: they are searched for in its
block (well under 1 ms each), so a small batch never builds a country's set. Without that header the whole list is scanned for the
country, slower but still right.
"""

from __future__ import annotations

import csv
import io
import re
from collections import Counter
from dataclasses import dataclass
from functools import cache
from importlib.util import find_spec
from pathlib import Path

from customs_batch.errors import CustomsBatchError
from customs_batch.findings import Finding, Severity
from customs_batch.kinds import Kind
from customs_batch.kinds.checks import CodeSort
from customs_batch.kinds.registry import KINDS
from customs_batch.manifest.document import Document
from customs_batch.validation.codes import unlocode_problem
from customs_batch.validation.common import spec_finding, strings_at

_PACKAGE = "pyunlocode"
_PART = re.compile(r"(\d{4}-\d) UNLOCODE CodeListPart\d+\.csv")
_ENCODING = "latin-1"  # the encoding of UNECE's CSV release
# Every field that holds a UN/LOCODE, as the layout check knows them.
_FIELDS: dict[Kind, tuple[tuple[str, ...], ...]] = {
    kind: tuple(pattern for pattern, sort in model.code_fields if sort is CodeSort.UNLOCODE)
    for kind, model in KINDS.items()
}
_SHOWN = 5  # similar codes listed in a hint


@dataclass(frozen=True)
class CodeList:
    """The shipped release: its edition (``2023-1``) and its lines, each starting with b"\\n"."""

    edition: str
    text: bytes | bytearray  # a bytearray when read from the package (one copy less)


@cache
def code_list() -> CodeList:
    """The release files of the installed ``pyunlocode``, read once per process."""
    folder = _data_folder()
    parts: dict[str, list[Path]] = {}
    for path in sorted(folder.glob("*.csv")) if folder is not None else ():
        match = _PART.fullmatch(path.name)
        if match is not None:
            parts.setdefault(match.group(1), []).append(path)
    if not parts:
        raise _unreadable(f"no release files in {folder or _PACKAGE}")
    edition = max(parts)  # a package that kept an older release too: the newest one
    try:
        text = _read_joined(parts[edition])
    except OSError as error:
        raise _unreadable(str(error)) from None
    return CodeList(edition, text)


def _read_joined(paths: list[Path]) -> bytearray:
    """The files' bytes, each after a newline, read straight into one buffer.

    Joining ``read_bytes()`` copies the 9.4 MB twice: 16-20 ms of a one-file ``validate``
    against 2-8 ms for this.
    """
    sizes = [path.stat().st_size for path in paths]
    text = bytearray(sum(sizes) + len(paths))
    end = 0
    with memoryview(text) as view:
        for path, size in zip(paths, sizes, strict=True):
            view[end] = 0x0A  # b"\n"
            end += 1
            with path.open("rb", buffering=0) as file:
                while size and (count := file.readinto(view[end : end + size])):
                    end += count
                    size -= count
    del text[end:]  # a file that shrank since its size was taken
    return text


def _unreadable(why: str) -> CustomsBatchError:
    return CustomsBatchError(
        f"the UN/LOCODE code list cannot be read: {why}",
        hint=f"reinstall customs-batch (it needs the {_PACKAGE} package), "
        "or turn the check off with --unlocodes off",
    )


def _data_folder() -> Path | None:
    # find_spec locates the package without importing it (its __init__ imports sqlite3).
    spec = find_spec(_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "csv"


def edition() -> str:
    """The UN/LOCODE release shipped, e.g. ``UN/LOCODE 2023-1``."""
    return f"UN/LOCODE {code_list().edition}"


@cache
def locations(country: str) -> frozenset[str]:
    """The three-character location codes the list has for ``country``."""
    found: set[str] = set()
    for rest in _country_lines(country):
        if rest[5:6] == b'"' and rest[9:10] == b'"':  # not the header nor a "=" reference
            found.add(rest[6:9].decode(_ENCODING))
    return frozenset(found)


def _listed(country: str, location: str) -> bool:
    """Whether the list has ``country`` + ``location``, found in the country's block.

    The first codes of a country are searched for, the rest looked up in ``locations``:
    building that set costs 5-10 ms a country (Germany, 10,000 places), more than a one-file
    ``validate`` spends on anything else, and a search well under 1 ms.
    """
    if _searched[country] >= _SEARCHED_CODES:
        return location in locations(country)
    _searched[country] += 1
    text = _block(country)
    needle = b',"' + country.encode("ascii") + b'","' + location.encode("ascii") + b'"'
    found = text.find(needle)
    while found >= 0:
        # Listed if this comma is its line's first (the field after it is the country).
        if text.find(b",", text.rfind(b"\n", 0, found) + 1, found) < 0:
            return True
        found = text.find(needle, found + 1)
    return False


_SEARCHED_CODES = 16  # codes of one country searched for before its set is built
_searched: Counter[str] = Counter()


@cache
def _block(country: str) -> bytes | bytearray:
    block = _country_block(country)
    return code_list().text if block is None else block


def _country_lines(country: str) -> list[bytes | bytearray]:
    """Each line of ``country``'s block, from its first field on: ``"NL","RTM",...``."""
    block = _country_block(country)
    lines = (block if block is not None else code_list().text).split(b"\n")
    key = country.encode("ascii")
    # A remark may hold a line break: the rest of it is no line of this country.
    rests = (line.partition(b",")[2] for line in lines)
    return [rest for rest in rests if rest[1:3] == key and rest[3:5] == b'",']


def _country_block(country: str) -> bytes | bytearray | None:
    """The lines of ``country``, from its header to the next country's; None without one."""
    text = code_list().text
    start = text.find(b'\n,"' + country.encode("ascii") + b'",,".')
    if start < 0:
        return None
    # The block ends where the next country's header starts: ',"OM",,".OMAN'.
    following = text.find(b'",,".', start + 10)
    if following < 0:
        return text[start:]
    end = text.rfind(b"\n", start, following)
    return text[start:end] if following == end + 5 else None


@cache
def _names(country: str) -> dict[str, str]:
    """Location code to place name for ``country``; for hints only, so parsed in full."""
    block = _country_block(country)
    if block is None:
        block = b"\n".join(b"," + rest for rest in _country_lines(country))
    rows = csv.reader(io.StringIO(block.decode(_ENCODING)))
    return {row[2]: row[3] for row in rows if len(row) > 3 and row[2]}


def unlocode_unknown(code: str) -> tuple[str, str] | None:
    """Message and hint when a well-formed UN/LOCODE is not in the shipped code list."""
    if unlocode_problem(code) is not None:
        return None  # a layout or country problem is code.unlocode's finding
    country, location = code[:2], code[2:]
    if _listed(country, location) or location in locations(country):
        return None
    message = f"{code!r} is not in the UN/LOCODE code list ({edition()})"
    # Two letters swapped first (BEARN for BEANR), then one letter off, the last letter first.
    similar = sorted(
        (known for known in locations(country) if _closeness(known, location) is not None),
        key=lambda known: (_closeness(known, location), known),
    )
    if similar:
        names = _names(country)
        shown = [f"{country}{known} ({names.get(known, '?')})" for known in similar[:_SHOWN]]
        listed = ", ".join(shown) + (", ..." if len(similar) > _SHOWN else "")
        hint = f"check the code for a typing error; close to it: {listed}"
    else:
        hint = f"check the code for a typing error; the list has no {country} code close to it"
    return message, hint + "; `customs-batch validate --unlocodes off` leaves this check out"


def _closeness(known: str, typed: str) -> int | None:
    """0 for two neighbours swapped, 1-3 for one character off (3: the first), else None."""
    different = [i for i, (a, b) in enumerate(zip(known, typed, strict=True)) if a != b]
    if len(different) == 1:
        return len(typed) - different[0]
    if len(different) == 2 and different[1] == different[0] + 1:
        first, second = different
        return 0 if known[first] == typed[second] and known[second] == typed[first] else None
    return None


def check_unlocodes(document: Document, severity: Severity | None) -> list[Finding]:
    """A finding per UN/LOCODE of the document that the shipped code list does not have."""
    if severity is None:
        return []
    findings = []
    for pattern in _FIELDS.get(document.kind, ()):
        for path, code in strings_at(document.spec, pattern):
            problem = unlocode_unknown(code)
            if problem is not None:
                message, hint = problem
                findings.append(
                    spec_finding(document, "code.unlocode-unknown", path, message, hint, severity)
                )
    return findings
