"""JUnit XML: one test case per document, plus one per file that failed to load."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import defaultdict
from typing import TYPE_CHECKING

from customs_batch.escaping import printable
from customs_batch.findings import Finding
from customs_batch.validation.reporters._base import Reporter, register, summary_line

if TYPE_CHECKING:
    from customs_batch.validation.batch import ValidationResult

# XML 1.0 cannot carry these at all, even escaped; a binary file's bytes can reach a message.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


@register("junit")
class JunitReporter(Reporter):
    """A ``<testsuites>`` document CI systems show as a test report."""

    def render(self, result: ValidationResult) -> str:
        files_of: dict[str, set[str]] = defaultdict(set)
        for entry in result.documents:
            files_of[entry.address].add(entry.file)
        manifests = frozenset(result.files)
        by_document: dict[tuple[str, str], list[Finding]] = defaultdict(list)
        by_file: dict[str, list[Finding]] = defaultdict(list)
        for finding in result.findings:
            if finding.document is not None:
                by_document[_case_of(finding, finding.document, files_of, manifests)].append(
                    finding
                )
            else:
                by_file[finding.location.file].append(finding)

        suite = ET.Element("testsuite", name="customs-batch validate")
        seen: set[tuple[str, str]] = set()
        for entry in result.documents:
            key = (entry.address, entry.file)
            seen.add(key)
            # A document's findings, wherever they point (its template, its manifest).
            found = by_document.get(key, []) + by_document.get((entry.address, ""), [])
            self._case(suite, entry.file, entry.address, found)
        # Findings of a document that never made it into the list (its file could not be
        # loaded): a case of its own, in its own file.
        for (address, file), findings in by_document.items():
            if (address, file) not in seen and (file or address not in files_of):
                self._case(suite, file or findings[0].location.file, address, findings)
        for file, findings in by_file.items():
            self._case(suite, file, f"load {file}", findings)

        cases = suite.findall("testcase")
        failures = sum(1 for case in cases if case.find("failure") is not None)
        suite.set("tests", str(len(cases)))
        suite.set("failures", str(failures))
        suite.set("errors", "0")
        root = ET.Element("testsuites", name="customs-batch", tests=str(len(cases)))
        root.set("failures", str(failures))
        root.append(suite)
        suite.append(_text_element("system-out", summary_line(result)))
        ET.indent(root)
        xml = ET.tostring(root, encoding="unicode")
        return f'<?xml version="1.0" encoding="UTF-8"?>\n{xml}\n'

    def _case(self, suite: ET.Element, file: str, name: str, findings: list[Finding]) -> None:
        case = ET.SubElement(suite, "testcase", classname=_text(file), name=_text(name))
        failing = [finding for finding in findings if self.fails(finding)]
        if not failing:
            return
        first = failing[0]
        message = first.message if len(failing) == 1 else f"{len(failing)} findings"
        failure = ET.SubElement(case, "failure", message=_text(message), type=first.rule)
        failure.text = _clean("\n".join(_describe(finding) for finding in failing))


def _case_of(
    finding: Finding, address: str, files_of: dict[str, set[str]], manifests: frozenset[str]
) -> tuple[str, str]:
    """The case a finding of document ``address`` belongs to, as (address, file); file ""
    for every document of that address, wherever it was loaded from.

    A finding in the file of a loaded document of that address is that document's. One in
    a manifest that loaded no document of that address, while every document of it was
    written in other manifests, is of a document of its own file that could not be loaded
    (its YAML broken after its kind and name): it is not put into another file's document
    of the same address. Any other (a template's line, the manifest of a forEach whose
    documents are its rows) is the document's, wherever it was loaded from."""
    file = finding.location.file
    files = files_of.get(address)
    if not files:
        return address, ""  # one case, at the file of its first finding
    if file in files:
        return address, file
    if file in manifests and files <= manifests:
        return address, file
    return address, ""


def _describe(finding: Finding) -> str:
    loc = finding.location
    where = printable(loc.file)
    if loc.line >= 1:
        where += f":{loc.line}:{loc.column}" if loc.column >= 1 else f":{loc.line}"
    text = f"{where}: {finding.severity.value}[{finding.rule}]: "
    text += printable(finding.message)
    if loc.sheet is not None:
        text += f" ({printable(loc.cell() or '')})"
    used = loc.used_at_text()
    if used is not None:
        text += f" ({printable(used)})"
    if finding.hint:
        text += f"\n  hint: {printable(finding.hint)}"
    return text


def _text_element(tag: str, text: str) -> ET.Element:
    element = ET.Element(tag)
    element.text = _clean(text)
    return element


def _clean(text: str) -> str:
    return _NOT_XML.sub("\N{REPLACEMENT CHARACTER}", text)


def _text(text: str) -> str:
    """An attribute's text from outside (a file name, an address, a message): on one line,
    and without the characters XML cannot carry (a file named with U+FFFF)."""
    return _clean(printable(text))
