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
        by_document: dict[str, list[Finding]] = defaultdict(list)
        by_file: dict[str, list[Finding]] = defaultdict(list)
        for finding in result.findings:
            if finding.document is not None:
                by_document[finding.document].append(finding)
            else:
                by_file[finding.location.file].append(finding)

        suite = ET.Element("testsuite", name="customs-batch validate")
        seen: set[str] = set()
        for entry in result.documents:
            seen.add(entry.address)
            self._case(suite, entry.file, entry.address, by_document.get(entry.address, []))
        # Findings of a document that never made it into the list (its file failed later).
        for address, findings in by_document.items():
            if address not in seen:
                self._case(suite, findings[0].location.file, address, findings)
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
        case = ET.SubElement(suite, "testcase", classname=printable(file), name=printable(name))
        failing = [finding for finding in findings if self.fails(finding)]
        if not failing:
            return
        first = failing[0]
        message = first.message if len(failing) == 1 else f"{len(failing)} findings"
        failure = ET.SubElement(case, "failure", message=printable(message), type=first.rule)
        failure.text = _clean("\n".join(_describe(finding) for finding in failing))


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
