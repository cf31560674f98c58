"""SARIF 2.1.0, the format code-scanning services read."""

from __future__ import annotations

import json
import os
import re
from pathlib import PurePath
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from customs_batch import __version__
from customs_batch.escaping import json_document
from customs_batch.findings import Finding, Location, Severity
from customs_batch.validation.reporters._base import Reporter, from_workspace, register

if TYPE_CHECKING:
    from customs_batch.validation.batch import ValidationResult

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
# What SARIF's message strings read as an embedded link, "[text](target)", and its escape
# (SARIF 2.1.0, 3.11.6): a value quoted in a message could otherwise be a link in a viewer.
_LINK_CHARACTERS = re.compile(r"[\\\[\]]")
# What they read as a placeholder, "{0}", and how a brace is written outside one (3.11.5:
# "{{" and "}}"): a template expression quoted in a message, "{{ row.weight }}", would
# otherwise be shown with half its braces, or as an argument the result does not have.
_BRACES = str.maketrans({"{": "{{", "}": "}}"})


@register("sarif")
class SarifReporter(Reporter):
    """One run, the rules seen in it, and one result per finding."""

    def render(self, result: ValidationResult) -> str:
        every = (*result.findings, *result.suppressed)
        rule_ids = sorted({finding.rule for finding in every})
        index = {rule: number for number, rule in enumerate(rule_ids)}
        driver = {
            "name": "customs-batch",
            "version": __version__,
            "rules": [_rule(rule, every) for rule in rule_ids],
        }
        log = {
            "$schema": SARIF_SCHEMA,
            "version": "2.1.0",
            "runs": [
                {
                    "tool": {"driver": driver},
                    "columnKind": "unicodeCodePoints",
                    "results": [_result(finding, index) for finding in every],
                }
            ],
        }
        return json_document(json.dumps(log, indent=2, ensure_ascii=False)) + "\n"


def _rule(rule: str, findings: tuple[Finding, ...]) -> dict[str, Any]:
    example = next(finding for finding in findings if finding.rule == rule)
    descriptor: dict[str, Any] = {
        "id": rule,
        "shortDescription": {"text": rule},
        "defaultConfiguration": {"level": _LEVELS[example.severity]},
    }
    if example.hint:
        descriptor["help"] = {"text": message_text(example.hint)}
    return descriptor


def _result(finding: Finding, index: dict[str, int]) -> dict[str, Any]:
    loc = finding.location
    physical: dict[str, Any] = {"artifactLocation": {"uri": artifact_uri(loc.file)}}
    if loc.line >= 1:
        region = {"startLine": loc.line}
        if loc.column >= 1:
            region["startColumn"] = loc.column
        physical["region"] = region
    text = finding.message
    if loc.sheet is not None:
        text += f" ({loc.cell()})"
    used = loc.used_at_text()
    if used is not None:
        text += f" ({used})"
    if finding.hint:
        text += f" Hint: {finding.hint}"
    out: dict[str, Any] = {
        "ruleId": finding.rule,
        "ruleIndex": index[finding.rule],
        "level": _LEVELS[finding.severity],
        "message": {"text": message_text(text)},
        "locations": [{"physicalLocation": physical}],
    }
    if finding.suppression is not None:
        # SARIF's own way: the result stays, marked suppressed, with the reason given.
        kind = "inSource" if finding.suppression.in_source else "external"
        justification = f"{finding.suppression.reason} ({finding.suppression.where})"
        out["suppressions"] = [{"kind": kind, "justification": justification}]
    if loc.path:
        logical = {"fullyQualifiedName": loc.json_path(), "kind": "member"}
        out["locations"][0]["logicalLocations"] = [logical]
    related = []
    if loc.used_at is not None:
        related.append((loc.used_at, "used by the template"))
    if finding.rule_at is not None:
        related.append((finding.rule_at, "the policy that made this finding"))
    if related:
        out["relatedLocations"] = [
            _related(number, place, text) for number, (place, text) in enumerate(related)
        ]
    return out


def _related(number: int, place: Location, text: str) -> dict[str, Any]:
    """A place related to a finding: the template place that used a value copied from
    ``values``, or where the policy behind a team finding is written."""
    physical: dict[str, Any] = {"artifactLocation": {"uri": artifact_uri(place.file)}}
    if place.line >= 1:
        region = {"startLine": place.line}
        if place.column >= 1:
            region["startColumn"] = place.column
        physical["region"] = region
    return {"id": number, "physicalLocation": physical, "message": {"text": text}}


def message_text(text: str) -> str:
    """``text`` as a SARIF plain-text message that a viewer shows as written: each ``[``,
    ``]`` and ``\\`` after a backslash, so that ``[x](https://example.com)`` quoted from a
    value is not an embedded link, and each ``{`` and ``}`` doubled, so that ``{0}`` is not
    a placeholder."""
    return _LINK_CHARACTERS.sub(r"\\\g<0>", text).translate(_BRACES)


def artifact_uri(file: str) -> str:
    """A file name as a SARIF URI reference, from the top of the repository in a GitHub
    Actions job (:func:`from_workspace`): forward slashes, percent-encoded (a byte that is
    not UTF-8 as itself, ``%FF``)."""
    return quote(os.fsencode(PurePath(from_workspace(file)).as_posix()))
