"""Loading manifest files into documents and findings; bad input never raises."""

from __future__ import annotations

import dataclasses
import gc
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from yaml.nodes import MappingNode, Node, ScalarNode

from customs_batch.findings import OUT_OF_MEMORY, Finding, Location, Severity
from customs_batch.kinds import Kind
from customs_batch.line_bound import first_long_line, hint, max_line_bytes
from customs_batch.manifest.dependencies import note_manifest
from customs_batch.manifest.discover import discover, find_project_root
from customs_batch.manifest.document import Document, Position
from customs_batch.manifest.documents._assemble import Source, assemble
from customs_batch.manifest.documents._envelope import read_envelope
from customs_batch.manifest.rows._range import RowRange
from customs_batch.manifest.yaml._compose import PLAIN, YamlProblem, compose_each
from customs_batch.manifest.yaml._long_blocks import LongBlock, blank, long_blocks
from customs_batch.manifest.yaml._schema_view import document_view
from customs_batch.manifest.yaml._tree import Walk, long_block_message
from customs_batch.userfiles import FileRefused, InputKind, megabytes, read_user_file


@dataclass(frozen=True)
class LoadResult:
    """What loading gave: documents in batch order, findings, and every file read."""

    documents: list[Document]
    findings: list[Finding]
    files: list[str]


def load_paths(
    paths: Sequence[Path], *, rows: RowRange | None = None, partial: bool = False
) -> LoadResult:
    """Discover the manifest files under ``paths`` and load them all, indexing the documents
    in batch order. A broken file gives findings and never stops the others. ``rows``
    limits every ``forEach`` to those spreadsheet rows (``--rows``); ``partial``: see
    :func:`iter_file`."""
    documents: list[Document] = []
    findings: list[Finding] = []
    files: list[str] = []
    for path in discover(paths):
        result = load_file(path, rows=rows, partial=partial)
        offset = len(documents)
        documents += [
            dataclasses.replace(doc, index=offset + doc.index) if offset else doc
            for doc in result.documents
        ]
        findings += result.findings
        files += result.files
    return LoadResult(documents, findings, files)


def load_file(
    path: Path,
    *,
    project_root: Path | None = None,
    rows: RowRange | None = None,
    partial: bool = False,
) -> LoadResult:
    """Load one manifest file: its documents (indexed from 0 in file order) and findings.

    ``project_root`` is where ``templates/`` is looked up; by default the folder holding
    ``customs-batch.yaml`` above the file. Pure apart from reading files; the result pickles.
    """
    documents: list[Document] = []
    findings: list[Finding] = []
    for item in iter_file(path, project_root=project_root, rows=rows, partial=partial):
        if isinstance(item, Document):
            documents.append(item)
        else:
            findings.append(item)
    return LoadResult(documents, findings, [str(path)])


def iter_file(
    path: Path,
    *,
    project_root: Path | None = None,
    rows: RowRange | None = None,
    partial: bool = False,
) -> Iterator[Document | Finding]:
    """Like :func:`load_file`, one document or finding at a time, so a ``forEach`` over a
    big spreadsheet never holds all its documents at once. Documents come in batch order.

    ``partial``: a spreadsheet row whose spec values could not all be had (a bad cell, a
    missing column) also gives its document without them, marked by ``left_out``, so
    validation reports the row's other findings in the same run; such a document is never
    to be planned. Without it such a row gives only its findings."""
    file = str(path)
    read = _read(path, file)
    if isinstance(read, Finding):
        yield read
        return
    text, long_values = read
    root = project_root if project_root is not None else find_project_root(path)
    gc_was_enabled = gc.isenabled()
    # Loading allocates many objects that all live on: cyclic GC passes over them would
    # cost more than the parse (measured), and nodes and values hold no reference cycles.
    gc.disable()
    try:
        yield from _load_text(text, file, root, rows, long_values, partial)
    except MemoryError:
        # Millions of values on a few lines can need gigabytes as nodes: a finding, and
        # the other files are still checked.
        del text
        yield _out_of_memory(file)
    finally:
        if gc_was_enabled:
            gc.enable()


def _load_text(
    text: str,
    file: str,
    root: Path,
    rows: RowRange | None,
    long_values: dict[int, LongBlock],
    partial: bool = False,
) -> Iterator[Document | Finding]:
    """``long_values``: the blocks over the bound, emptied in ``text``, by line; each is
    reported by the walk that meets it, and those no walk met at the end."""
    track_aliases = "&" in text
    max_value = max_line_bytes()
    seen_any = problem = False
    index = 0
    for item in compose_each(text):
        if isinstance(item, YamlProblem):
            problem = True
            yield from _yaml_findings(item, file)
            continue
        if item.__class__ is ScalarNode and item.tag == PLAIN and not item.value:
            continue  # an empty document, e.g. only comments between two '---'
        seen_any = True
        walk = Walk(file, track_aliases=track_aliases, max_value=max_value, long=long_values)
        for found in _document(item, walk, root, index, rows, partial):
            if isinstance(found, Document) and not found.left_out:
                index += 1
            yield found
    for block in list(long_values.values()):  # in a broken document, or not a value at all
        yield Finding(
            "yaml.value-too-long",
            Severity.ERROR,
            long_block_message(block, max_value),
            Location(file, block.line + 1, block.column + 1),
            hint(max_value, block.end - block.start),
        )
    if not seen_any and not problem and not long_values:
        yield _empty_file(file)


def _yaml_findings(problem: YamlProblem, file: str) -> Iterator[Finding]:
    """The findings of a YAML problem, naming the broken document when its kind and name
    were read before the problem: it is then known to be in the batch, only broken."""
    head = dict(problem.head)
    kind, name = head.get("kind"), head.get("metadata.name")
    address = f"{kind}/{name}" if kind and name else None
    for part in (problem.opened, problem):
        if part is not None:
            location = Location(file, part.line, part.column)
            yield Finding(
                part.rule, Severity.ERROR, part.message, location, part.hint, document=address
            )


def _document(
    node: Node, walk: Walk, root: Path, index: int, rows: RowRange | None, partial: bool
) -> Iterator[Document | Finding]:
    data = walk.value(node, document_view(_kind_of(node)))
    # A walk abandoned at a limit has said why; the missing value is not a second problem.
    envelope = None if walk.abandoned else read_envelope(data, walk)
    if envelope is not None and isinstance(data, dict):
        mark = node.start_mark
        source = Source(Position(walk.file, mark.line + 1, mark.column + 1), root, index)
        if envelope.for_each is not None:
            # Jinja and the spreadsheet readers come with the first forEach.
            from customs_batch.manifest.rows._for_each import expand

            yield from expand(data, envelope, walk, source, rows, partial=partial)
        else:
            document = assemble(data, envelope, walk, source)
            if document is not None:
                yield document
    address = _address_of(data) if not walk.abandoned else _address_of_node(node)
    for finding in walk.findings:
        yield finding if address is None else dataclasses.replace(finding, document=address)


def _address_of(data: object) -> str | None:
    """``Kind/name`` as written, for findings of a document that may not have been built."""
    if not isinstance(data, dict) or not isinstance(data.get("metadata"), dict):
        return None
    kind, name = data.get("kind"), data["metadata"].get("name")
    return f"{kind}/{name}" if isinstance(kind, str) and isinstance(name, str) else None


def _address_of_node(node: Node) -> str | None:
    """``Kind/name`` read from the nodes, for a document whose walk was abandoned."""
    if node.__class__ is not MappingNode:
        return None
    top = {key.value: value for key, value in node.value if key.__class__ is ScalarNode}
    kind, metadata = top.get("kind"), top.get("metadata")
    if not isinstance(kind, ScalarNode) or not isinstance(metadata, MappingNode):
        return None
    name = next(
        (v.value for k, v in metadata.value if k.value == "name" and v.__class__ is ScalarNode),
        None,
    )
    return f"{kind.value}/{name}" if name else None


def _kind_of(node: Node) -> Kind | None:
    """The document's kind, read before the walk so ``spec`` is typed by its schema."""
    if node.__class__ is not MappingNode:
        return None
    for key, value in node.value:
        if key.__class__ is ScalarNode and key.value == "kind" and value.__class__ is ScalarNode:
            return Kind.parse(value.value)
    return None


def _read(path: Path, file: str) -> tuple[str, dict[int, LongBlock]] | Finding:
    try:
        data = read_user_file(path, kind=InputKind.MANIFEST)
    except FileRefused as refused:
        return Finding(
            refused.rule, Severity.ERROR, refused.reason, Location(file), refused.hint or ""
        )
    except OSError as error:
        unlisted = _unlisted_folder(path)
        if unlisted is not None:
            return Finding(
                "file.unreadable",
                Severity.ERROR,
                f"cannot read the folder: {unlisted}; the manifests in it are not checked",
                Location(file),
                "Make the folder readable and searchable for you (chmod u+rx), or move it "
                "out of the folders searched.",
            )
        return Finding(
            "file.unreadable",
            Severity.ERROR,
            f"cannot read the file: {error.strerror or error}",
            Location(file),
            "Check that the path is a readable file.",
        )
    note_manifest(file, data)
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        # Notepad's "Unicode": its NUL bytes made it "a binary file?"
        return _not_text(file, 'it is UTF-16 text (saved as "Unicode"), not UTF-8')
    if b"\x00" in data:
        return _not_text(file, "it holds NUL bytes (a binary file?)")
    limit = max_line_bytes()
    long_line = first_long_line(data, limit)
    if long_line is not None:
        return Finding(
            "yaml.line-too-long",
            Severity.ERROR,
            f"line {long_line} is longer than {megabytes(limit)}; the file is not read further",
            Location(file, long_line, 1),
            hint(limit),
        )
    if _ONLY_BLANK.fullmatch(data):
        # Blank lines only: no document, said without the passes below and the parser's
        # (a 100 MB file of them took 5 s).
        return _empty_file(file)
    # A value of hundreds of megabytes over many lines is measured in the bytes, and
    # emptied, before libyaml builds it (see _long_blocks).
    blocks = long_blocks(data, limit)
    if blocks:
        data = blank(data, blocks)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        start = data.rfind(b"\n", 0, error.start) + 1
        column = len(data[start : error.start].decode("utf-8", "replace")) + 1
        why = f"it is not UTF-8 (byte 0x{data[error.start]:02x} on line {line})"
        finding = _not_text(file, why)
        try:
            data.decode("cp1252")
        except UnicodeDecodeError:
            return dataclasses.replace(finding, location=Location(file, line, column))
        ansi = (
            "Manifests are UTF-8 text files; this one looks saved as Windows-1252 (an "
            "editor's 'ANSI'): save it as UTF-8."
        )
        return dataclasses.replace(finding, location=Location(file, line, column), hint=ansi)
    if b"\xc2\x85" in data or b"\xe2\x80\xa8" in data or b"\xe2\x80\xa9" in data:
        return _line_separator(file, text)
    if "\ufeff" in text:  # the one a file starts with is gone: decoded as utf-8-sig
        return _byte_order_mark(file, text)
    return text, {block.line: block for block in blocks}


_ONLY_BLANK = re.compile(rb"[ \r\n]*")
"""A file of spaces and line breaks only, which holds no document."""

_LINE_SEPARATORS = {
    "\x85": "U+0085 (NEXT LINE: often a Windows-1252 '…' read as Latin-1)",
    "\u2028": "U+2028 (LINE SEPARATOR)",
    "\u2029": "U+2029 (PARAGRAPH SEPARATOR)",
}


def _line_separator(file: str, text: str) -> Finding:
    """The first character of ``text`` that YAML reads as a line break where an editor, git
    and the reports show none: every line after it would be named one line too far (and a
    line holding it is split in two, often a syntax error at another line), so the file is
    refused at that character rather than read with wrong places."""
    at = min(index for index in map(text.find, _LINE_SEPARATORS) if index >= 0)
    line = text.count("\n", 0, at) + 1
    column = at - text.rfind("\n", 0, at)
    return Finding(
        "yaml.encoding",
        Severity.ERROR,
        f"line {line}, column {column} holds the invisible character "
        f"{_LINE_SEPARATORS[text[at]]}, which YAML reads as a line break: the lines after "
        "it would be numbered wrong, and a value holding it changed",
        Location(file, line, column),
        "Delete it or replace it with a space (it comes with text pasted from a PDF or a "
        "word processor); editors find it by its code, e.g. the regular expression "
        "[\\x85\\x{2028}\\x{2029}].",
    )


def _byte_order_mark(file: str, text: str) -> Finding:
    """A byte order mark after the file's start (files saved with one and joined): YAML
    reads it as part of the key or value it stands before, so the document was reported
    as missing its kind, metadata and spec at a line that looks right. Refused where it is."""
    at = text.index("\ufeff")
    line = text.count("\n", 0, at) + 1
    column = at - text.rfind("\n", 0, at)
    return Finding(
        "yaml.encoding",
        Severity.ERROR,
        f"line {line}, column {column} holds the invisible character U+FEFF (BYTE ORDER "
        "MARK), which only the start of a file may hold: YAML would read it as part of "
        "the text after it",
        Location(file, line, column),
        "Delete it: it comes with files saved 'UTF-8 with BOM' and joined into one "
        "(cat a.yaml b.yaml); editors find it by its code, e.g. the regular expression "
        "\\x{FEFF}.",
    )


def _unlisted_folder(path: Path) -> str | None:
    """Why the folder ``path`` cannot be listed (a folder search reports it so, see
    :func:`discover`); None when it is no folder, or can be listed."""
    if not path.is_dir():
        return None
    try:
        with os.scandir(path):
            return None
    except OSError as error:
        return error.strerror or str(error)


def _not_text(file: str, why: str) -> Finding:
    return Finding(
        "yaml.encoding",
        Severity.ERROR,
        f"not a YAML text: {why}",
        Location(file, 1, 1),
        "Manifests are UTF-8 text files; save the file as UTF-8 or leave it out.",
    )


def _out_of_memory(file: str) -> Finding:
    return Finding(
        OUT_OF_MEMORY,
        Severity.ERROR,
        "the run ran out of memory loading this file (the memory it may use is less than "
        "its values need)",
        Location(file),
        "Run again with more memory (a larger machine or CI runner, a higher `ulimit -v` or "
        "container limit); if the file is this large, split it into smaller manifests.",
    )


def _empty_file(file: str) -> Finding:
    return Finding(
        "yaml.empty-file",
        Severity.WARNING,
        "the file holds no documents",
        Location(file, 1, 1),
        "Add documents or delete the file.",
    )


__all__ = ["LoadResult", "RowRange", "discover", "iter_file", "load_file", "load_paths"]
