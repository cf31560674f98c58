"""The reporter base class and the registry of formats by name."""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from customs_batch.findings import Finding, Severity
from customs_batch.formats import Formats

if TYPE_CHECKING:
    from customs_batch.validation.batch import ValidationResult


@dataclass(frozen=True)
class ReportOptions:
    """How a report is written: ``strict`` counts warnings as failures."""

    strict: bool = False


class Reporter(ABC):
    """Turns a validation result into the text of one report format."""

    name: str = ""
    draws_graph: bool = False
    """Whether the report draws the documents' dependencies (``ValidationResult.edges``)."""

    def __init__(self, options: ReportOptions | None = None) -> None:
        self.options = options or ReportOptions()

    @abstractmethod
    def render(self, result: ValidationResult) -> str:
        """The whole report, ending with a newline."""

    def pieces(self, result: ValidationResult) -> Iterator[str]:
        """The report in pieces that join into :meth:`render`'s text, to be written as they
        come (by default one piece: the whole report)."""
        yield self.render(result)

    def fails(self, finding: Finding) -> bool:
        """Whether ``finding`` makes the run fail (errors; warnings too with --strict)."""
        if finding.severity is Severity.ERROR:
            return True
        return self.options.strict and finding.severity is Severity.WARNING


FINDINGS_FORMATS: Formats[type[Reporter]] = Formats("findings", ("text",))
"""``validate --format``: text first, then alphabetical."""
R = TypeVar("R", bound=type[Reporter])


def register(name: str) -> Callable[[R], R]:
    """Class decorator: make a reporter available as ``--format name``."""

    def add(cls: R) -> R:
        cls.name = name
        FINDINGS_FORMATS.register(name)(cls)
        return cls

    return add


reporter_names = FINDINGS_FORMATS.names


def make_reporter(name: str, options: ReportOptions | None = None) -> Reporter:
    """The reporter for format ``name``; a UsageError names the formats that exist."""
    return FINDINGS_FORMATS.get(name)(options)


def summary_line(result: ValidationResult) -> str:
    """``3 errors, 1 warning, 2 suppressed in 12 documents (4 files)``."""
    counts = result.counts()
    parts = [
        _plural(counts[Severity.ERROR], "error"),
        _plural(counts[Severity.WARNING], "warning"),
    ]
    if counts[Severity.INFO]:
        parts.append(_plural(counts[Severity.INFO], "note"))
    if result.suppressed:
        parts.append(f"{len(result.suppressed)} suppressed")
    return (
        f"{', '.join(parts)} in {_plural(result.document_count, 'document')} "
        f"({_plural(len(result.files), 'file')})"
    )


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def from_workspace(file: str) -> str:
    """``file`` from the top of the repository (``GITHUB_WORKSPACE``), where the Actions
    runner places an annotation's relative file and code scanning a SARIF result's relative
    URI: findings name files from the working folder, which a step's ``working-directory``
    puts below it. A file outside the workspace, or without one, is named as the finding
    names it."""
    workspace = os.environ.get("GITHUB_WORKSPACE", "").strip()
    if not workspace:
        return file
    top, path = os.path.abspath(workspace), os.path.abspath(file)
    try:
        inside = os.path.commonpath([top, path]) == top
    except ValueError:  # another drive
        return file
    return os.path.relpath(path, top).replace(os.sep, "/") if inside else file
