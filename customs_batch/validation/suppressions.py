"""Suppressions: a finding silenced with a reason, for one document or for files.

Per document, an annotation (one ``rule-id: reason`` a line)::

    metadata:
      annotations:
        customs-batch/suppress: "team.guarantee-ceiling: approved by customs, ticket 4711"

Per path, in ``customs-batch.yaml``::

    suppress:
      - rule: hs.unknown-subheading
        paths: ["manifests/legacy/*.yaml"]
        reason: codes of the 2017 edition, replaced in March

A suppressed finding is reported apart (SARIF ``suppressions``, the summary's count), never
dropped. A suppression without a reason is itself an error and silences nothing.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path, PurePath
from typing import Any

import yaml

from customs_batch.findings import Finding, Location, Severity, Suppression
from customs_batch.manifest.discover import CONFIG_FILE
from customs_batch.manifest.document import Document
from customs_batch.userfiles import InputKind, note_read

ANNOTATION = "customs-batch/suppress"
RULE = "suppress.without-reason"
_HINT_DOCUMENT = (
    f"write '{ANNOTATION}: \"rule-id: why this finding does not apply\"', one rule a line"
)
_HINT_CONFIG = "write suppress: [{rule: rule-id, paths: ['manifests/x/*.yaml'], reason: why}]"


@dataclass(frozen=True)
class PathSuppression:
    """One ``suppress:`` entry of ``customs-batch.yaml``."""

    rule: str
    paths: tuple[str, ...]
    reason: str
    where: str


def document_suppressions(document: Document) -> dict[str, str]:
    """The rules ``document``'s annotation silences, each with its reason (lines without
    a reason are left out: :func:`annotation_findings` reports them)."""
    text = document.annotations.get(ANNOTATION)
    if not text:
        return {}
    found: dict[str, str] = {}
    for rule, reason in _entries(text):
        if rule and reason:
            found[rule] = reason
    return found


def annotation_findings(document: Document) -> list[Finding]:
    """An error for each line of the suppress annotation that gives no rule or no reason."""
    text = document.annotations.get(ANNOTATION)
    if text is None:
        return []
    findings = []
    location = document.locate(("metadata", "annotations", ANNOTATION))
    entries = list(_entries(text)) or [("", "")]
    for rule, reason in entries:
        if rule and reason:
            continue
        what = f"the suppression of {rule}" if rule else "a suppression"
        message = f"{what} gives no reason: nothing is suppressed"
        findings.append(
            Finding(RULE, Severity.ERROR, message, location, _HINT_DOCUMENT, str(document.address))
        )
    return findings


def _entries(text: str) -> Iterable[tuple[str, str]]:
    for line in text.splitlines():
        if not line.strip():
            continue
        rule, _, reason = line.partition(":")
        yield rule.strip(), reason.strip()


@lru_cache(maxsize=16)
def path_suppressions(root: Path) -> tuple[tuple[PathSuppression, ...], tuple[Finding, ...]]:
    """The ``suppress:`` entries of the project's ``customs-batch.yaml``, and an error at
    the line of each entry that is malformed or gives no reason."""
    config = root / CONFIG_FILE
    try:
        text = config.read_text(encoding="utf-8")
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return (), ()  # the commands that read the configuration report it
    note_read(config, InputKind.SETTINGS)
    entries = _suppress_node(node)
    shown = _shown(config)
    suppressions: list[PathSuppression] = []
    findings: list[Finding] = []
    for entry in entries:
        line = entry.start_mark.line + 1
        data = yaml.safe_load(yaml.serialize(entry)) if isinstance(entry, yaml.Node) else None
        problem = _entry_problem(data)
        if problem is not None:
            location = Location(shown, line, entry.start_mark.column + 1)
            findings.append(Finding(RULE, Severity.ERROR, problem, location, _HINT_CONFIG))
            continue
        assert isinstance(data, dict)
        paths = (data["paths"],) if isinstance(data["paths"], str) else tuple(data["paths"])
        where = f"{shown}:{line}"
        suppressions.append(PathSuppression(data["rule"], paths, data["reason"].strip(), where))
    return tuple(suppressions), tuple(findings)


def _suppress_node(node: yaml.Node | None) -> list[yaml.Node]:
    if not isinstance(node, yaml.MappingNode):
        return []
    for key, value in node.value:
        if key.value == "suppress" and isinstance(value, yaml.SequenceNode):
            return list(value.value)
    return []


def _entry_problem(data: Any) -> str | None:
    if not isinstance(data, dict) or not isinstance(data.get("rule"), str):
        return "a suppress entry needs a rule, paths and a reason"
    if not isinstance(data.get("reason"), str) or not data["reason"].strip():
        return f"the suppression of {data['rule']} gives no reason: nothing is suppressed"
    paths = data.get("paths")
    if isinstance(paths, str):
        paths = [paths]
    if not isinstance(paths, list) or not paths or not all(isinstance(p, str) for p in paths):
        return f"the suppression of {data['rule']} names no paths (a list of globs)"
    return None


def apply_suppressions(
    findings: Iterable[Finding],
    documents: Iterable[Document],
    roots: Iterable[Path],
) -> tuple[list[Finding], list[Finding]]:
    """``findings`` split into those kept and those suppressed (each with its reason);
    the kept ones include an error for each suppression without a reason."""
    by_document: dict[str, tuple[dict[str, str], str]] = {}
    for document in documents:
        rules = document_suppressions(document)
        if rules:
            location = document.locate(("metadata", "annotations", ANNOTATION))
            by_document[str(document.address)] = (rules, f"{location.file}:{location.line}")
    by_path: list[tuple[Path, PathSuppression]] = []
    kept: list[Finding] = []
    for root in roots:
        entries, problems = path_suppressions(root)
        by_path.extend((root, entry) for entry in entries)
        kept.extend(problems)
    suppressed: list[Finding] = []
    for finding in findings:
        suppression = _suppression(finding, by_document, by_path)
        if suppression is None or finding.rule == RULE:
            kept.append(finding)
        else:
            suppressed.append(replace(finding, suppression=suppression))
    return kept, suppressed


def _suppression(
    finding: Finding,
    by_document: Mapping[str, tuple[dict[str, str], str]],
    by_path: list[tuple[Path, PathSuppression]],
) -> Suppression | None:
    if finding.document is not None and finding.document in by_document:
        rules, where = by_document[finding.document]
        reason = rules.get(finding.rule)
        if reason is not None:
            return Suppression(reason, where, in_source=True)
    for root, entry in by_path:
        if entry.rule != finding.rule:
            continue
        path = _relative(finding.location.file, root)
        if path is not None and any(fnmatch.fnmatchcase(path, glob) for glob in entry.paths):
            return Suppression(entry.reason, entry.where, in_source=False)
    return None


def _relative(file: str, root: Path) -> str | None:
    try:
        return PurePath(Path(file).resolve().relative_to(root)).as_posix()
    except (ValueError, OSError):
        return None


def _shown(file: Path) -> str:
    try:
        return str(file.relative_to(Path.cwd()))
    except ValueError:
        return str(file)
