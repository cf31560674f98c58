"""Build Documents for tests the way the loader would, with a position for every value.

Each document is laid out like a YAML file: ``apiVersion`` on the first line, ``kind`` and
``metadata`` after, then ``spec`` and one line per key or list item in document order.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from customs_batch.findings import JsonPath
from customs_batch.kinds import Address, Kind
from customs_batch.manifest.document import Document, Position, Reference

FILE = "manifests/batch.yaml"
_REFERENCE = re.compile(r"\$\{ref:([A-Za-z]+/[A-Za-z0-9._-]+)\.([A-Za-z]+)\}")


def make_document(
    kind: Kind,
    spec: Mapping[str, Any],
    *,
    name: str = "doc",
    file: str = FILE,
    line: int = 1,
    index: int = 0,
    depends_on: Sequence[str] = (),
) -> Document:
    """A Document whose positions number its lines from ``line`` in ``file``."""
    positions: dict[JsonPath, Position] = {(): Position(file, line, 1)}
    lines = iter(range(line + 1, line + 100_000))
    next(lines)  # kind
    positions[("metadata",)] = Position(file, next(lines), 1)
    positions[("metadata", "name")] = Position(file, next(lines), 3)
    if depends_on:
        positions[("metadata", "dependsOn")] = Position(file, next(lines), 3)
        for i in range(len(depends_on)):
            positions[("metadata", "dependsOn", i)] = Position(file, next(lines), 5)
    positions[("spec",)] = Position(file, next(lines), 1)
    references: list[Reference] = []
    _walk(spec, ("spec",), 3, positions, lines, references, file)
    targets = tuple(_address(text) for text in depends_on)
    return Document(
        kind=kind,
        name=name,
        spec=spec,
        source=Position(file, line, 1),
        index=index,
        depends_on=targets,
        references=tuple(references),
        positions=positions,
    )


def line_of(document: Document, *path: str | int) -> int:
    """The line the value at ``path`` (inside the whole document) was written on."""
    return document.positions[tuple(path)].line


def _address(text: str) -> Address:
    address = Address.parse(text)
    assert address is not None, text
    return address


def _walk(
    value: Any,
    path: JsonPath,
    column: int,
    positions: dict[JsonPath, Position],
    lines: Any,
    references: list[Reference],
    file: str,
) -> None:
    children: list[tuple[str | int, Any]] = []
    if isinstance(value, Mapping):
        children = list(value.items())
    elif isinstance(value, list):
        children = list(enumerate(value))
    elif isinstance(value, str):
        for match in _REFERENCE.finditer(value):
            target = _address(match.group(1))
            references.append(Reference(target, match.group(2), path, match.group(0)))
    for key, child in children:
        child_path = (*path, key)
        positions[child_path] = Position(file, next(lines), column)
        _walk(child, child_path, column + 2, positions, lines, references, file)
