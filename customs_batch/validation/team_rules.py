"""Where validation meets the team's own rules and the suppressions: light to import, so
that a project without ``policies/`` never loads the CEL library."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path

from customs_batch.findings import Finding
from customs_batch.manifest.discover import find_project_root
from customs_batch.manifest.document import Document
from customs_batch.validation.suppressions import annotation_findings, apply_suppressions

POLICY_DIR = "policies"


def project_root(file: str) -> Path:
    """The project root of a manifest (the folder of its ``customs-batch.yaml``)."""
    # Asked for every document: cached with the current folder, since a relative name
    # means another file once the folder changes (getcwd costs a fifth of abspath).
    return _root(file, os.getcwd())


@lru_cache(maxsize=4096)
def _root(file: str, cwd: str) -> Path:
    return find_project_root(Path(cwd, file))


@lru_cache(maxsize=64)
def has_policies(root: Path) -> bool:
    """Whether the project at ``root`` has policy files."""
    folder = root / POLICY_DIR
    return folder.is_dir() and any(
        p.suffix in (".yaml", ".yml") and p.is_file() for p in folder.iterdir()
    )


def check_team_rules(document: Document) -> list[Finding]:
    """The findings of the project's policies on ``document``, and of its suppress annotation."""
    findings = annotation_findings(document) if document.annotations else []
    root = project_root(document.source.file)
    if has_policies(root):
        from customs_batch.validation.policies import check_document
        from customs_batch.validation.policy_files import project_policies

        findings.extend(check_document(project_policies(root).policies, document, root))
    return findings


def roots_of(files: Iterable[str]) -> list[Path]:
    """The project roots of ``files``, each once, in order."""
    return list(dict.fromkeys(project_root(file) for file in files))


def policy_file_findings(files: Sequence[str]) -> list[Finding]:
    """The problems of the policy files of the projects ``files`` belong to."""
    findings: list[Finding] = []
    for root in roots_of(files):
        if has_policies(root):
            from customs_batch.validation.policy_files import project_policies

            findings.extend(project_policies(root).findings)
    return findings


def finish(
    findings: Iterable[Finding], documents: Iterable[Document], files: Sequence[str]
) -> tuple[list[Finding], list[Finding]]:
    """Add the policy files' problems, then split the findings into kept and suppressed."""
    every = [*findings, *policy_file_findings(files)]
    return apply_suppressions(every, documents, roots_of(files))
