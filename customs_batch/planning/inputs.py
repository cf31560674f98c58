"""What a plan starts from: the documents, loaded and validated, and the selection asked for."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from customs_batch.collector import bulk
from customs_batch.errors import UsageError
from customs_batch.findings import Severity
from customs_batch.kinds import Address
from customs_batch.manifest import Document, load_paths
from customs_batch.planning.graph import dependencies
from customs_batch.validation import validate_documents
from customs_batch.validation.batch import (
    DocumentEntry,
    ValidationResult,
    sorted_findings,
)
from customs_batch.validation.project import broken_addresses


@dataclass(frozen=True)
class Inputs:
    """The batch's documents and the validation of them (a plan needs no errors)."""

    documents: list[Document]
    validation: ValidationResult

    @property
    def failed(self) -> bool:
        return self.validation.failed()


def load_inputs(
    paths: Sequence[Path], *, mrn_check_digit: Severity | None = Severity.ERROR
) -> Inputs:
    """Load and validate every document under ``paths`` and keep the documents."""
    with bulk():
        loaded = load_paths(list(paths))
        findings = [
            *loaded.findings,
            *validate_documents(
                loaded.documents,
                mrn_check_digit=mrn_check_digit,
                broken=broken_addresses(loaded.findings),
            ),
        ]
    entries = tuple(
        DocumentEntry(str(doc.address), doc.source.file, doc.source.line)
        for doc in loaded.documents
    )
    result = ValidationResult(sorted_findings(findings), entries, tuple(loaded.files))
    return Inputs(loaded.documents, result)


@dataclass(frozen=True)
class Selection:
    """``-l LABEL=VALUE`` and ``--target ADDR``: a part of the batch, with what it needs."""

    labels: tuple[tuple[str, str], ...] = ()
    targets: tuple[Address, ...] = ()

    @property
    def everything(self) -> bool:
        return not self.labels and not self.targets

    @classmethod
    def parse(cls, labels: Sequence[str], targets: Sequence[str]) -> Selection:
        """Parse the option values; a malformed one is a usage error."""
        pairs = []
        for text in labels:
            key, sep, value = text.partition("=")
            if not sep or not key:
                raise UsageError(f"-l {text!r} is not LABEL=VALUE", hint="e.g. -l lane=ham-rtm")
            pairs.append((key, value))
        addresses = []
        for text in targets:
            address = Address.parse(text)
            if address is None:
                raise UsageError(
                    f"--target {text!r} is not an address", hint="e.g. --target Movement/mov-1"
                )
            addresses.append(address)
        return cls(tuple(pairs), tuple(addresses))

    def apply(self, documents: Sequence[Document]) -> list[Document]:
        """The selected documents and, transitively, every document they depend on."""
        if self.everything:
            return list(documents)
        present = {doc.address for doc in documents}
        missing = [str(t) for t in self.targets if t not in present]
        if missing:
            raise UsageError(
                f"--target {', '.join(missing)}: no such document in the manifests",
                hint="`customs-batch render` lists the documents and their names",
            )
        chosen = {
            doc.address
            for doc in documents
            if doc.address in self.targets
            or (self.labels and all(doc.labels.get(k) == v for k, v in self.labels))
        }
        deps = dependencies(documents)
        pending = list(chosen)
        while pending:
            for dep in deps.get(pending.pop(), ()):
                if dep not in chosen:
                    chosen.add(dep)
                    pending.append(dep)
        return [doc for doc in documents if doc.address in chosen]
