"""``${ref:Kind/name.field}`` in spec strings: parsed into References, or syntax problems."""

from __future__ import annotations

import re

from customs_batch.findings import JsonPath
from customs_batch.kinds import Address
from customs_batch.manifest.document import Reference

_OPEN = "${ref:"
_TOKEN = re.compile(r"\$\{ref:([^}]*)\}")
_FIELD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

SYNTAX_HINT = "Write a reference as ${ref:Kind/name.field}, e.g. ${ref:TemplateGroup/eu-road.id}."


def parse_references(path: JsonPath, text: str) -> tuple[list[Reference], list[str]]:
    """Every reference in ``text`` (a whole value or embedded in text), and a message for each
    malformed one."""
    references: list[Reference] = []
    problems: list[str] = []
    for match in _TOKEN.finditer(text):
        body = match.group(1)
        address_text, dot, field = body.rpartition(".")
        address = Address.parse(address_text) if dot else None
        if address is None or not _FIELD.fullmatch(field):
            problems.append(f"{match.group(0)!r} is not a reference of the form Kind/name.field")
            continue
        references.append(Reference(address, field, path, match.group(0)))
    if text.count(_OPEN) > len(_TOKEN.findall(text)):
        problems.append(f"a reference in {text!r} is not closed with '}}'")
    return references, problems
