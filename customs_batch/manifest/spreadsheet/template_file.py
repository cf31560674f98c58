"""An empty spreadsheet for a kind, for an analyst to fill, and the manifest that loads it.

Layout (XLSX and CSV alike): row 1 says ``required``, ``optional`` or ``one of Consignor.*``
(at least one of those columns: see :mod:`.columns`) above each column, row 2
holds the headers (the spec fields, see :mod:`.columns`), data goes from row 3. The manifest
reads it with ``forEach: {file: …, header: 2}``. Headers stay the plain field names, so the
manifest's ``row.quantity`` / ``row['Consignor.name']`` match them exactly.
"""

from __future__ import annotations

import csv
import errno
import io
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from customs_batch.errors import UsageError
from customs_batch.escaping import printable
from customs_batch.kinds import Kind
from customs_batch.manifest.spreadsheet.columns import Column, kind_columns
from customs_batch.output_file import cannot_write, check_named_file, write_named_file

HEADER_ROW = 2
NAME_COLUMN = Column(
    header="metadata.name",
    path=("metadata", "name"),
    required=True,
    type="string",
    description=(
        "The row's document name (letters, digits, '.', '_', '-'): its own, kept by the row "
        "for as long as the row exists, such as a reference. A row's place is no name: a "
        "row inserted above would give this row's name to another request."
    ),
)
"""The first column: each row's document name. Named from a cell of its own, a row keeps
its name when rows are inserted, removed or sorted; ``row_number`` would hand it to the next
row, whose request the plan then refuses to send under it."""
_PLAIN_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PLAIN_PATH = re.compile(r"[A-Za-z0-9_.][A-Za-z0-9_./-]*")
"""A file name YAML reads back as written when left unquoted in a flow mapping."""


@dataclass(frozen=True)
class TemplateFiles:
    """What :func:`write_template` wrote."""

    sheet: Path
    manifest: Path
    columns: int


def manifest_path(sheet: Path, folder: Path | None = None) -> Path:
    """``movements.xlsx`` -> ``movements.manifest.yaml`` in ``folder``, else beside it."""
    name = sheet.stem + ".manifest.yaml"
    return sheet.with_name(name) if folder is None else folder / name


def write_template(
    kind: Kind, sheet: Path, *, force: bool = False, manifest_folder: Path | None = None
) -> TemplateFiles:
    """Write the empty spreadsheet ``sheet`` (.xlsx or .csv) in a folder that exists, and
    its manifest in ``manifest_folder`` (reading the sheet by its path from there), else
    beside it; each as ``-o`` writes a file (private, never another user's file nor a
    record of customs-batch: :mod:`customs_batch.output_file`); any file-system error is a
    :class:`CustomsBatchError` naming the file."""
    suffix = sheet.suffix.lower()
    if suffix not in (".xlsx", ".csv"):
        raise UsageError(
            f"{sheet}: cannot write a {suffix or 'suffix-less'} file",
            hint="use -o FILE.xlsx or -o FILE.csv",
        )
    manifest = manifest_path(sheet, manifest_folder)
    what = {sheet: "spreadsheet", manifest: "manifest"}
    # Asked of both before either is written: a manifest name too long for the file system
    # (the sheet's plus ".manifest"), or another user's, leaves no sheet behind.
    for path in (sheet, manifest):
        if _exists(path, what[path]) and not force:
            raise UsageError(
                f"{path} exists already", hint="choose another name, or add --force to overwrite it"
            )
    if not sheet.parent.is_dir():
        # As validate -o and plan -out: the folder is the user's to make, a typo makes none.
        code = errno.ENOTDIR if sheet.parent.exists() else errno.ENOENT
        raise cannot_write(sheet, what[sheet], OSError(code, os.strerror(code), str(sheet)))
    for path in (sheet, manifest):
        # An existing manifest is replaced only with --force, asked above.
        check_named_file(path, what=what[path], project_inputs=False)
    columns = kind_columns(kind)
    headed = [NAME_COLUMN, *columns]
    content = _xlsx(kind, headed) if suffix == ".xlsx" else _csv(headed)
    write_named_file(sheet, content, what=what[sheet], project_inputs=False)
    # forEach.file is read relative to the manifest's folder.
    sheet_file = os.path.relpath(sheet.absolute(), manifest.parent.absolute())
    text = manifest_text(kind, Path(sheet_file).as_posix(), columns)
    write_named_file(manifest, text.encode("utf-8"), what=what[manifest], project_inputs=False)
    return TemplateFiles(sheet, manifest, len(headed))


def _exists(path: Path, what: str) -> bool:
    """Whether ``path`` names anything, a link to nothing too (it leads somewhere a write
    would create a file)."""
    try:
        os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as exc:  # a name too long, a folder that cannot be searched
        raise cannot_write(path, what, exc) from None
    return True


def _xlsx(kind: Kind, columns: list[Column]) -> bytes:
    import xlsxwriter  # only this command writes workbooks

    content = io.BytesIO()
    book = xlsxwriter.Workbook(content, {"in_memory": True})
    sheet = book.add_worksheet(kind.value)
    note = book.add_format({"italic": True, "font_color": "#666666"})
    required = book.add_format({"bold": True, "bg_color": "#FCE4D6", "bottom": 1})
    optional = book.add_format({"bold": True, "bottom": 1})
    text = book.add_format({"num_format": "@"})  # codes keep their leading zeros
    for index, column in enumerate(columns):
        sheet.write_string(0, index, column.note, note)
        shaded = column.required or column.one_of is not None
        sheet.write_string(1, index, column.header, required if shaded else optional)
        if column.description:
            sheet.write_comment(1, index, column.description)
        width = max(12, min(40, len(column.header) + 2))
        sheet.set_column(index, index, width, text if column.type == "string" else None)
    sheet.freeze_panes(HEADER_ROW, 0)
    book.close()
    return content.getvalue()


def _csv(columns: list[Column]) -> bytes:
    out = io.StringIO(newline="")
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow([c.note for c in columns])
    writer.writerow([c.header for c in columns])
    return out.getvalue().encode("utf-8-sig")  # a BOM, so that Excel opens it as UTF-8


def manifest_text(kind: Kind, sheet_file: str, columns: list[Column]) -> str:
    """The forEach manifest over the template: the name from :data:`NAME_COLUMN`, every
    other column into its spec field."""
    spec: dict[str | int, Any] = {}
    for column in columns:
        node: Any = spec
        for part, following in zip(column.path, (*column.path[1:], None), strict=True):
            if following is None:
                node[part] = _reference(column.header)
            else:
                node = node.setdefault(part, {})
    sheet = f", sheet: {kind.value}" if sheet_file.lower().endswith(".xlsx") else ""
    lines = [
        f"# Expands over the rows of {printable(sheet_file)}: one {kind.value} per row from row 3.",
        "# An empty cell leaves its field out; delete the lines of columns you do not use.",
        f"# Each row's name is its {NAME_COLUMN.header} cell, kept by the row whatever rows are",
        "# inserted or sorted around it (a name counting rows would move to another row).",
        "apiVersion: customs-batch/v1",
        f"kind: {kind.value}",
        f"forEach: {{file: {_yaml_path(sheet_file)}{sheet}, header: {HEADER_ROW}}}",
        "metadata:",
        f"  name: {_reference(NAME_COLUMN.header)}",
        "spec:",
    ]
    lines += _yaml(spec, 1)
    return "\n".join(lines) + "\n"


def _yaml_path(sheet_file: str) -> str:
    """``sheet_file`` as a YAML value that reads back as the same name: plain when it is
    letters, digits and ``._/-`` only, else double-quoted. Written plain, a comma, ``#``,
    ``: ``, a leading ``%`` or ``@`` or a newline in the name made a manifest that did not
    parse, or that named another file (``rows, 2026.csv`` read as ``rows``)."""
    if _PLAIN_PATH.fullmatch(sheet_file):
        return sheet_file
    return json.dumps(sheet_file, ensure_ascii=False)  # a JSON string is a YAML one


def _reference(header: str) -> str:
    expression = f"row.{header}" if _PLAIN_WORD.fullmatch(header) else f"row['{header}']"
    return f'"{{{{ {expression} }}}}"'


def _yaml(node: dict[str | int, Any], depth: int) -> list[str]:
    pad = "  " * depth
    out: list[str] = []
    for key, value in node.items():
        if isinstance(value, str):
            out.append(f"{pad}{key}: {value}")
            continue
        element = value.get(0)
        if isinstance(element, dict) and len(value) == 1:
            out.append(f"{pad}{key}:")
            inner = _yaml(element, depth + 2)
            out += [f"{pad}  - {inner[0].lstrip()}", *inner[1:]]
        else:
            out.append(f"{pad}{key}:")
            out += _yaml(value, depth + 1)
    return out
