"""``render`` as a function: the documents as they will be sent, templates expanded."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from customs_batch.errors import ExitCode
from customs_batch.manifest import RowRange

if TYPE_CHECKING:
    from customs_batch.validation.batch import ValidationResult


@dataclass(frozen=True)
class RenderOptions:
    """``paths``: manifest files or folders (empty: the ``manifests`` of customs-batch.yaml,
    else the current folder, as ``validate`` reads); ``rows``: expand ``forEach`` documents over
    these spreadsheet rows only (None: every row); ``show_sensitive``: keep sensitive values
    (a guarantee's accessCode) in clear instead of ``(sensitive)``."""

    paths: tuple[Path, ...] = ()
    rows: RowRange | None = None
    show_sensitive: bool = False


@dataclass(frozen=True)
class RenderResult:
    """The findings of the documents' validation, and the documents expanded: envelope
    and spec with the template merged in, Jinja rendered, ``${ref:...}`` left as written,
    sensitive values masked unless asked for."""

    validation: ValidationResult
    documents: tuple[dict[str, Any], ...]

    @property
    def exit_code(self) -> ExitCode:
        """1 when the input has errors (the documents are then not to be printed), else 0."""
        return ExitCode.FINDINGS if self.validation.failed() else ExitCode.OK


def render_documents(options: RenderOptions) -> RenderResult:
    """Load, validate and expand every document under ``options.paths`` (or the project's)."""
    from customs_batch.validation.batch import render_paths

    paths = options.paths
    if not paths:  # the project's settings only when they say where, as validate does
        from customs_batch.environments import load_project

        paths = tuple(load_project().manifest_paths())
    rendered = render_paths(list(paths), rows=options.rows)
    documents = rendered.documents
    if not options.show_sensitive:
        from customs_batch.sensitive import masked_document

        documents = [dict(masked_document(document)) for document in documents]
    return RenderResult(rendered.result, tuple(documents))
