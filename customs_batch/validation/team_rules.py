"""Where validation meets the team's own rules and the suppressions: light to import, so
that a project without ``policies/`` never loads the CEL library."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path

from customs_batch.errors import ConfigError
from customs_batch.findings import Finding
from customs_batch.manifest.dependencies import ABSENT, POLICIES, digest, note_taken
from customs_batch.manifest.discover import find_project_root
from customs_batch.manifest.document import Document
from customs_batch.validation.suppressions import annotation_findings, apply_suppressions

POLICY_DIR = "policies"


def project_root(file: str) -> Path:
    """The project root of a manifest (the folder of its ``customs-batch.yaml``)."""
    # Asked for every document and twice for every file: cached by the file's folder (the
    # root is the folder's; keyed by file, a run of more files than the cache holds looked
    # each one up again) with the current folder, since a relative name means another
    # folder once the current one changes (getcwd costs a fifth of abspath).
    folder, name = os.path.split(file)
    return _root(folder, os.getcwd(), name)


def _root(folder: str, cwd: str, name: str) -> Path:
    root = _folder_root(folder, cwd)
    # None: the root of the file system, an error naming the file (never cached).
    return root if root is not None else find_project_root(Path(cwd, folder, name))


@lru_cache(maxsize=4096)
def _folder_root(folder: str, cwd: str) -> Path | None:
    try:
        return find_project_root(Path(cwd, folder, "-"))
    except ConfigError:
        return None


@lru_cache(maxsize=64)
def _policies_seen(root: Path) -> tuple[str, bytes]:
    """The project's ``policies/`` folder (absolute) and a digest of its policy files,
    taken once a process, before they are read (:mod:`customs_batch.manifest.dependencies`:
    ABSENT when there are none)."""
    folder = str((root / POLICY_DIR).absolute())
    return folder, digest(POLICIES, folder)


def has_policies(root: Path) -> bool:
    """Whether the project at ``root`` has policy files."""
    return _policies_seen(root)[1] != ABSENT


def forget_policies() -> None:
    """Forget the policies read so far (each run is a process of its own; tests are not)."""
    _policies_seen.cache_clear()
    from customs_batch.validation.policy_files import _project_policies

    _project_policies.cache_clear()


def check_team_rules(document: Document) -> list[Finding]:
    """The findings of the project's policies on ``document``, and of its suppress annotation.

    The project's policy files are noted as read, with or without any (the load cache
    keeps a file's findings only while its project's policies are the ones checked)."""
    findings = annotation_findings(document) if document.annotations else []
    root = project_root(document.source.file)
    folder, seen = _policies_seen(root)
    note_taken(POLICIES, folder, seen)
    if seen != ABSENT:
        from customs_batch.validation.policies import check_document
        from customs_batch.validation.policy_files import project_policies

        findings.extend(check_document(project_policies(root).policies, document, root))
    return findings


def roots_of(files: Iterable[str]) -> list[Path]:
    """The project roots of ``files``, each once, in order."""
    # Looked up once a folder: 20,000 folders are more than the cache keeps, and each file
    # was a lookup of its own (all of them missed, twice a run: 37 of 56 s, measured).
    first_of: dict[str, str] = {}
    for file in files:
        first_of.setdefault(os.path.dirname(file), file)
    return list(dict.fromkeys(project_root(file) for file in first_of.values()))


def policy_file_findings(files: Sequence[str]) -> list[Finding]:
    """The problems of the policy files of the projects ``files`` belong to."""
    return _policy_file_findings(roots_of(files))


def _policy_file_findings(roots: Iterable[Path]) -> list[Finding]:
    findings: list[Finding] = []
    for root in roots:
        if has_policies(root):
            from customs_batch.validation.policy_files import project_policies

            findings.extend(project_policies(root).findings)
    return findings


def finish(
    findings: Iterable[Finding], documents: Iterable[Document], files: Sequence[str]
) -> tuple[list[Finding], list[Finding]]:
    """Add the policy files' problems, then split the findings into kept and suppressed."""
    roots = roots_of(files)
    every = [*findings, *_policy_file_findings(roots)]
    return apply_suppressions(every, documents, roots)
