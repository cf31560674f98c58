"""What a plan starts from: the documents, loaded and validated, and the selection asked for."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from customs_batch.collector import bulk
from customs_batch.errors import UsageError
from customs_batch.escaping import quoted_head
from customs_batch.findings import Finding, Severity
from customs_batch.kinds import MAX_NAME, Address
from customs_batch.load_cache import MAX_CACHED_DOCUMENTS, LoadCache, Versions, each_file_cached
from customs_batch.manifest import Document, discover, iter_file, load_paths
from customs_batch.manifest.document import nothing
from customs_batch.manifest.text_pool import TextPool
from customs_batch.planning.graph import dependencies
from customs_batch.selector import LabelSelector
from customs_batch.validation.batch import (
    DocumentEntry,
    ValidationResult,
    sorted_findings,
)
from customs_batch.validation.checks import validate_documents
from customs_batch.validation.findings_cap import FindingsCap, capped_at_each_file
from customs_batch.validation.project import (
    ProjectPart,
    broken_addresses,
    project_findings,
    project_part,
)
from customs_batch.validation.rules import check_rules
from customs_batch.validation.schema_check import check_envelope_schema, check_spec_schema
from customs_batch.validation.sensitive_cells import SensitiveCells, value_lines, without_lines
from customs_batch.validation.team_rules import check_team_rules, finish


class Inputs:
    """The batch's documents and the validation of them (a plan needs no errors).

    The validation's report (every finding sorted, an entry per document) is made when
    first asked for, by ``report`` (the kept findings and the suppressed ones): a plan that
    goes on asks only whether it ``failed``, and a project of 100,000 documents with 90,000
    warnings spent 0.4 s of each warm plan reading and sorting them.
    """

    __slots__ = ("_report", "_validation", "cache", "documents", "failed", "files", "versions")

    def __init__(
        self,
        documents: list[Document],
        failed: bool,
        report: Callable[[], tuple[list[Finding], list[Finding]]],
        files: Sequence[str],
        cache: LoadCache | None = None,
        versions: Sequence[bytes | None] = (),
    ) -> None:
        self.documents = documents
        self.failed = failed
        self.files = tuple(files)
        self.cache = cache
        """The load cache the documents were taken from and stored in (None: not used)."""
        self.versions = DocumentVersions(versions)
        self._report = report
        self._validation: ValidationResult | None = None

    @property
    def validation(self) -> ValidationResult:
        if self._validation is None:
            kept, suppressed = self._report()
            entries = tuple(DocumentEntry.of(doc) for doc in self.documents)
            self._validation = ValidationResult(
                sorted_findings(kept), entries, self.files, sorted_findings(suppressed)
            )
        return self._validation


def load_inputs(
    paths: Sequence[Path],
    *,
    mrn_check_digit: Severity | None = Severity.ERROR,
    jobs: int | None = None,
    cache: bool = False,
) -> Inputs:
    """Load and validate every document under ``paths`` and keep the documents.

    Each document is checked (schema and rules) as it is loaded, while it still knows where
    each of its values was written, and is kept without those positions (nor the
    spreadsheet row it came from): a plan never reports at a value, and they were over half
    of a loaded document's memory. Big inputs are loaded by a pool of processes, file by
    file (``jobs`` of them; None: see :func:`customs_batch.workers.worker_count`). When the project-wide checks then find an error
    (they report at values too), the manifests are loaded again whole, so that every finding
    points where it would in ``validate``; their warnings (which a plan does not show)
    otherwise point at their document. With ``cache``, each file's checked documents are
    taken from the load cache while nothing they depend on has changed
    (:mod:`customs_batch.load_cache`). The project-wide checks run over each file where it
    is loaded, and again over the files that share something with another file
    (:func:`customs_batch.validation.project.project_findings`).
    """
    documents: list[Document] = []
    findings: list[Finding] = []
    loaded: list[Finding] = []
    files = [str(path) for path in discover(list(paths))]
    texts = TextPool()  # shared across small files (a file's own are shared as it loads)
    settings = _Settings(mrn_check_digit)
    hint = "split the manifests into smaller files, or plan a part with -l or --target"
    numbered = list(enumerate(files))
    stored = LoadCache.for_run("plan", settings, enabled=cache)
    parts: list[ProjectPart] = []
    by_file: list[list[Document]] = []
    versions: Versions = []
    with bulk():
        outcomes = each_file_cached(
            numbered,
            _load_file,
            settings,
            jobs,
            hint=hint,
            cache=stored,
            file_of=_file_of,
            versions=versions,
        )
        for number, outcome in enumerate(outcomes):
            outcome = outcome.numbered(number)
            loaded += outcome.problems
            findings += outcome.findings
            if len(outcome.documents) < _SHARED_ACROSS_FILES:
                for document in outcome.documents:
                    if type(document.spec) is dict:
                        texts.share(document.spec)
            documents += outcome.documents
            parts.append(outcome.project)
            by_file.append(outcome.documents)
        broken = broken_addresses(loaded)
        # Every error of the project-wide checks, and the warnings of the files checked
        # together: whether the batch can be planned. The other files' warnings are read
        # only for a report (the batch failed, or a caller asks).
        project = project_findings(parts, by_file.__getitem__, broken, errors_only=True)
        if any(finding.severity is Severity.ERROR for finding in project):
            del documents, by_file
            return _load_whole(paths, mrn_check_digit)
    kept, _ = finish([*loaded, *findings, *project], documents, files)
    failed = any(finding.severity is Severity.ERROR for finding in kept)

    def report() -> tuple[list[Finding], list[Finding]]:
        every = project_findings(parts, by_file.__getitem__, broken)
        own = [*loaded, *findings]
        return finish([*own, *capped_at_each_file(every, own)], documents, files)

    return Inputs(documents, failed, report, files, stored, versions)


_SHARED_ACROSS_FILES = 10
"""A file of fewer documents has its texts shared with other files' too: its own sharing
(see ``_load_file``) leaves 10,000 manifests of one document each with a copy per
document. A bigger file keeps one copy of each text per file, and a warm run of 100,000
documents in files of 100 skips the 0.3 s of CPU that sharing them again would cost."""


class DocumentVersions:
    """What each document of a batch was loaded from (held apart from the documents)."""

    __slots__ = ("_files",)

    def __init__(self, files: Sequence[bytes | None]) -> None:
        self._files = tuple(files)
        """The version of each file's outcome in the load cache, by the file's place in the
        batch."""

    def __call__(self, document: Document) -> bytes | None:
        """``document``'s version, 24 bytes: its file's outcome's version and its place in
        the file. Two documents with the same version are the same document (see
        :data:`customs_batch.load_cache.Versions`); None when its file's outcome is not in
        the cache."""
        number, place = divmod(document.index, _FILE_STRIDE)
        version = self._files[number] if 0 <= number < len(self._files) else None
        return None if version is None else version + place.to_bytes(8, "little")


@dataclass(frozen=True)
class _Settings:
    """The options of the checks, sent to each loading process."""

    mrn_check_digit: Severity | None


@dataclass(frozen=True, slots=True)  # one a file of the run: no dict of attributes each
class _LoadedFile:
    """One file's documents, checked and without their positions, and its findings."""

    problems: list[Finding]  # what kept a document from loading
    findings: list[Finding]  # the schema's and the rules'
    documents: list[Document]
    number: int  # the file's place in the batch its documents were numbered for
    project: ProjectPart  # the project-wide checks over this file alone

    def numbered(self, number: int) -> _LoadedFile:
        """The same, numbered for the file's place ``number`` in this batch (a cached file
        may have had another place in the batch it was loaded for)."""
        if number == self.number:
            return self
        shift = (number - self.number) * _FILE_STRIDE
        documents = [replace(doc, index=doc.index + shift) for doc in self.documents]
        return _LoadedFile(self.problems, self.findings, documents, number, self.project)


# A document's index only orders the batch (files in the order given, documents in file
# order). A loading process does not know how many documents the files before its own hold,
# so a file's documents are numbered from its place in the batch times this.
_FILE_STRIDE = 1 << 40


def _load_file(numbered: tuple[int, str], settings: _Settings) -> _LoadedFile:
    """Load and check one file; runs in a loading process or in this one."""
    number, file = numbered
    first = number * _FILE_STRIDE
    problems: list[Finding] = []
    findings: list[Finding] = []
    documents: list[Document] = []
    # The findings of the checks, up to the most a file reports. Those of loading are all
    # kept: they name the documents left out, which the project-wide checks need, and the
    # documents they come from are held whole here anyway.
    cap = FindingsCap()
    # What the file's documents repeat (shipment, party, action): one string each, shared
    # here, where the file is loaded, so that it stays shared in the load cache and on the
    # way back from a loading process (pickle keeps one copy of a shared object) and a
    # warm run pays nothing for it.
    texts = TextPool()
    cells = SensitiveCells()
    quoted: set[tuple[str, int]] = set()
    with bulk():
        for item in iter_file(Path(file)):
            if not isinstance(item, Document):
                problems.append(item)
                continue
            cells.note(item)
            quoted |= value_lines(item)
            if type(item.spec) is dict:
                texts.share(item.spec)
            findings += cap.admitted(check_envelope_schema(item))
            findings += cap.admitted(check_spec_schema(item))
            findings += cap.admitted(check_rules(item, check_digits=settings.mrn_check_digit))
            findings += cap.admitted(check_team_rules(item))
            documents.append(replace(item, index=first + item.index, positions=nothing(), row=None))
        findings += cap.left_out()
        keys = len(documents) <= MAX_CACHED_DOCUMENTS  # else only if the run has other files
        project = project_part(documents, broken_addresses(problems), keys=keys)
    told = without_lines(cells.withheld([*problems, *findings]), quoted)
    problems, findings = told[: len(problems)], told[len(problems) :]
    return _LoadedFile(problems, findings, documents, number, project)


def _file_of(numbered: tuple[int, str]) -> str:
    return numbered[1]


def _load_whole(paths: Sequence[Path], mrn_check_digit: Severity | None) -> Inputs:
    """Every document with the position of every value, and all the findings."""
    with bulk():
        loaded = load_paths(list(paths))
        checked = validate_documents(
            loaded.documents,
            mrn_check_digit=mrn_check_digit,
            broken=broken_addresses(loaded.findings),
        )
        findings = [*loaded.findings, *capped_at_each_file(checked, loaded.findings)]
    kept, suppressed = finish(findings, loaded.documents, loaded.files)
    failed = any(finding.severity is Severity.ERROR for finding in kept)
    return Inputs(loaded.documents, failed, lambda: (kept, suppressed), loaded.files)


@dataclass(frozen=True)
class Selection:
    """``-l SELECTOR``, ``--target ADDR`` and ``--exclude ADDR``: a part of the batch, with
    what it needs.

    A document is chosen when it is a target or meets the label selector (every document
    when neither is given), then everything a chosen document depends on is added. An
    excluded document is left out, and so is every document that depends on it, since it
    could not be sent without it.
    """

    labels: LabelSelector | None = None
    targets: tuple[Address, ...] = ()
    excluded: tuple[Address, ...] = ()

    @property
    def everything(self) -> bool:
        return self.labels is None and not self.targets and not self.excluded

    @classmethod
    def parse(
        cls, labels: Sequence[str], targets: Sequence[str], excluded: Sequence[str] = ()
    ) -> Selection:
        """Parse the option values; a malformed one is a usage error."""
        return cls(
            LabelSelector.parse_all(labels),
            _addresses("--target", targets),
            _addresses("--exclude", excluded),
        )

    def apply(self, documents: Sequence[Document]) -> list[Document]:
        """The selected documents and, transitively, every document they depend on, less
        the excluded ones and what depends on them."""
        if self.everything:
            return list(documents)
        present = {doc.address for doc in documents}
        for option, addresses in (("--target", self.targets), ("--exclude", self.excluded)):
            # As written; one too long to be a document's name (a 100 KB argument) cut.
            missing = [_shown(str(a)) for a in addresses if a not in present]
            if missing:
                raise UsageError(
                    f"{option} {', '.join(missing)}: no such document in the manifests",
                    hint="`customs-batch render` lists the documents and their names",
                )
        labelled = set()
        if self.labels is not None:
            labelled = {doc.address for doc in documents if self.labels.matches(doc.labels)}
            if not labelled:
                raise _matches_nothing(self.labels, documents)
        deps = dependencies(documents)
        left_out = _closure(set(self.excluded), _dependents(deps))
        if self.labels is None and not self.targets:
            chosen = present - left_out
        else:
            chosen = (labelled | set(self.targets)) - left_out
        chosen = _closure(chosen, deps)
        return [doc for doc in documents if doc.address in chosen]


def _shown(address: str) -> str:
    return address if len(address) <= MAX_NAME else quoted_head(address)


def _addresses(option: str, texts: Sequence[str]) -> tuple[Address, ...]:
    addresses = []
    for text in texts:
        address = Address.parse(text)
        if address is None:
            raise UsageError(
                f"{option} {quoted_head(text)} is not an address",
                hint=f"e.g. {option} Movement/mov-1",
            )
        addresses.append(address)
    return tuple(addresses)


def _closure(start: set[Address], edges: Mapping[Address, Iterable[Address]]) -> set[Address]:
    """``start`` and every address reached from it along ``edges``."""
    reached = set(start)
    pending = list(start)
    while pending:
        for other in edges.get(pending.pop(), ()):
            if other not in reached:
                reached.add(other)
                pending.append(other)
    return reached


def _dependents(deps: Mapping[Address, Iterable[Address]]) -> dict[Address, list[Address]]:
    """For each address, the documents that depend on it directly."""
    dependents: dict[Address, list[Address]] = {}
    for address, needed in deps.items():
        for dep in needed:
            dependents.setdefault(dep, []).append(address)
    return dependents


_VALUES_SHOWN = 5


def _matches_nothing(selector: LabelSelector, documents: Sequence[Document]) -> UsageError:
    """The error for a selector no document meets, naming the labels there are."""
    values: dict[str, set[str]] = {}
    for doc in documents:
        for key, value in doc.labels.items():
            values.setdefault(key, set()).add(value)
    if not values:
        present = "no document in the manifests has labels (metadata.labels)"
    else:
        described = []
        for key in sorted(values):
            shown = sorted(values[key])
            more = len(shown) - _VALUES_SHOWN
            listed = ", ".join(shown[:_VALUES_SHOWN]) + (f", {more} more" if more > 0 else "")
            described.append(f"{key} ({listed})")
        present = "labels in the manifests: " + "; ".join(described)
    return UsageError(f"-l {quoted_head(selector.text)} matches no document", hint=present)
