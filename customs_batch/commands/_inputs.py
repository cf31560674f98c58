"""What plan and apply start from: the environment, its state backend and the documents."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from customs_batch.backends import backend_for
from customs_batch.environments import Environment, load_project
from customs_batch.errors import CustomsBatchError, ExitCode
from customs_batch.findings import Severity
from customs_batch.load_cache import LoadCache
from customs_batch.manifest import Document
from customs_batch.planning.inputs import DocumentVersions, Selection, load_inputs
from customs_batch.planning.unchanged import Unchanged
from customs_batch.state import StateBackend
from customs_batch.validation.batch import ValidationResult


class InvalidManifests(CustomsBatchError):
    """The manifests have errors, so nothing can be planned; ``validation`` holds the
    findings, which the CLI prints before the message (exit 1)."""

    exit_code = ExitCode.FINDINGS

    def __init__(self, validation: ValidationResult) -> None:
        super().__init__(
            "the manifests have errors: fix them before planning",
            hint=(
                "`customs-batch validate` lists these findings, and for a spreadsheet row "
                "with a bad cell or a missing column its other findings too"
            ),
        )
        self.validation = validation

    def details(self) -> str:
        """The findings, as ``customs-batch validate`` prints them."""
        from customs_batch.validation.reporters import make_reporter

        return make_reporter("text").render(self.validation)


@dataclass(frozen=True)
class Loaded:
    """The documents a plan starts from, with the load cache they were taken from (None:
    not used) and what each was loaded from."""

    documents: list[Document]
    cache: LoadCache | None = None
    versions: DocumentVersions | None = None
    whole: bool = True
    """Every document of the manifests (no -l, --target or --exclude)."""
    spreadsheets: frozenset[str] = frozenset()
    """The spreadsheet files every document of the manifests (selected or not) was read
    from: those ``apply --annotate-results`` copies."""

    def unchanged(self, environment: Environment) -> Unchanged | None:
        """What earlier plans of ``environment`` found unchanged among the documents (see
        :mod:`customs_batch.planning.unchanged`); None without the load cache."""
        if self.cache is None or self.versions is None:
            return None
        return Unchanged(self.cache, environment.name, self.versions, whole=self.whole)


@dataclass(frozen=True)
class Inputs:
    """Where a command looks: the manifests, the selection, the environment and its state.

    ``paths`` default to the ``manifests:`` list of customs-batch.yaml, else the current
    folder; ``labels`` (label selectors, kubectl's
    grammar: see :mod:`customs_batch.selector`) and ``targets`` (``Kind/name``)
    select a part of the batch with what it depends on, and ``excluded`` (``Kind/name``)
    leaves documents out with what depends on them; ``environment`` is a name from
    customs-batch.yaml (None: ``$CUSTOMS_BATCH_ENV``, then the configured default).
    ``allow_empty_state`` lets a local state start empty although an earlier one left its
    traces. ``cache``: take unchanged files' checked documents from the load cache (see
    :mod:`customs_batch.load_cache`). ``mrn_check_digit``: the severity of a wrong MRN or
    GRN check character (None: not checked), as ``validate --mrn-check-digit`` sets it.
    """

    paths: tuple[Path, ...] = ()
    labels: tuple[str, ...] = ()
    targets: tuple[str, ...] = ()
    environment: str | None = None
    allow_empty_state: bool = False
    excluded: tuple[str, ...] = ()
    cache: bool = False
    mrn_check_digit: Severity | None = Severity.ERROR

    def selection(self) -> Selection:
        """The parsed ``labels``, ``targets`` and ``excluded`` (a usage error when
        malformed)."""
        return Selection.parse(self.labels, self.targets, self.excluded)

    def documents(self) -> list[Document]:
        """The selected documents, valid; :class:`InvalidManifests` when any has an error."""
        return self.loaded().documents

    def manifest_paths(self) -> list[Path]:
        """The paths read: those given, else the ``manifests:`` list of customs-batch.yaml
        (else the current folder)."""
        return list(self.paths) or load_project().manifest_paths()

    def loaded(self) -> Loaded:
        """The selected documents, valid (:class:`InvalidManifests` when any has an error),
        and what the load cache knows of them."""
        selection = self.selection()
        inputs = load_inputs(
            self.manifest_paths(), mrn_check_digit=self.mrn_check_digit, cache=self.cache
        )
        if inputs.failed:
            raise InvalidManifests(inputs.validation)
        spreadsheets = frozenset(
            doc.source.file for doc in inputs.documents if doc.source.sheet is not None
        )
        documents = selection.apply(inputs.documents)
        return Loaded(documents, inputs.cache, inputs.versions, selection.everything, spreadsheets)

    def chosen_environment(self) -> Environment:
        """The environment these inputs name, from the project around the working folder."""
        return load_project().select(self.environment)

    def backend(self, environment: Environment) -> StateBackend:
        """Where ``environment``'s state lives (its ``state:`` settings)."""
        return backend_for(environment, allow_empty_state=self.allow_empty_state)
