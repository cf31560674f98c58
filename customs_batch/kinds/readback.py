"""An object read back by ID (``import``, ``state adopt``), compared with its document.

Each kind's ``read_back`` says what the service holds of the object, under the document's
own field names, and which of the document's fields the service does not give back at all.
:func:`compare` then tells, field by field, where the two agree, what the state must record
so that the next plan shows what the manifests would change, and what cannot be changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from customs_batch.errors import CustomsBatchError, ExitCode
from customs_batch.jsontypes import JSON

if TYPE_CHECKING:
    from customs_batch.state.model import Scalar


@dataclass(frozen=True)
class Found:
    """What the service says of one object given by ID."""

    outputs: Mapping[str, Scalar]
    remote_spec: Mapping[str, JSON] = field(default_factory=dict)
    """The document's fields as the service holds them: only those the service gives back."""
    unread: str = ""
    """Why the document's other fields cannot be compared (what the API does not return)."""
    service_state: str | None = None
    errors: tuple[JSON, ...] = ()
    not_done: str = ""
    """Set when the object shows that what the document asks for has not happened at all
    (a HAWB still active): then nothing is recorded, and this says why."""


@dataclass(frozen=True)
class Difference:
    """One field the manifest and the service disagree on."""

    field: str
    manifest: JSON
    service: JSON
    mutable: bool

    def describe(self, *, refused: bool = False) -> str:
        """One line for the user (``refused``: of an object not recorded, which no apply
        changes)."""
        if refused:
            tail = "changeable in place" if self.mutable else "it cannot be changed"
        else:
            tail = "the next apply changes it" if self.mutable else "it cannot be changed"
        return (
            f"{self.field}: the manifest says {_shown(self.manifest)}, the service holds "
            f"{_shown(self.service)} ({tail})"
        )


@dataclass(frozen=True)
class Comparison:
    """A document against the object it is said to be."""

    found: Found
    differences: tuple[Difference, ...]
    checked: tuple[str, ...]
    """The document's fields the service gave back (compared)."""
    resent: tuple[str, ...]
    """Fields the service does not give back that the next plan sends (changeable in place)."""
    trusted: tuple[str, ...]
    """Fields the service does not give back that are taken as the document writes them."""
    spec: Mapping[str, JSON]
    """The spec to record: what the service holds where it differs, without ``resent``."""
    sent: bool = False
    """Whether the document's spec is what this tool's own request carried (adopt)."""
    unsent: str = ""
    """What the next apply does with ``resent`` instead of sending them to the object
    imported, and why (it is in a state nothing is sent to: a departure customs cancelled,
    or one customs rejected, which the document replaces); empty: it sends them to it."""

    @property
    def fixed(self) -> tuple[Difference, ...]:
        """The differences no call of the API can make go away."""
        return tuple(d for d in self.differences if not d.mutable)

    def lines(self, *, unread: bool = True, refused: bool = False) -> list[str]:
        """What the comparison found, for the user, one line each (``unread``: with the
        fields the service does not give back; ``refused``: of an object not recorded)."""
        lines = []
        if self.checked:
            same = "" if self.differences else ": the same"
            lines.append(f"compared with the service: {', '.join(self.checked)}{same}")
        lines += [d.describe(refused=refused) for d in self.differences]
        if unread and (self.resent or self.trusted):
            lines.append(f"not given back by the service ({self.found.unread}):")
        if unread and self.resent and self.unsent:
            lines.append(f"  {self.unsent}: {', '.join(self.resent)}")
        elif unread and self.resent:
            lines.append(f"  sent by the next apply: {', '.join(self.resent)}")
        if unread and self.trusted:
            taken = "as the request sent them" if self.sent else "as the manifest writes them"
            lines.append(f"  taken {taken}: {', '.join(self.trusted)}")
        return lines


def compare(
    found: Found, spec: Mapping[str, JSON], mutable: frozenset[str], *, sent: bool
) -> Comparison:
    """Compare the document ``spec`` with what the service holds.

    ``sent``: ``spec`` is what this tool's own request carried (``state adopt`` after an
    unknown outcome), so what the service does not give back was set by that request.
    Otherwise (``import``: made elsewhere) a changeable field the service does not give
    back is left out of the recorded spec, so the next plan sends it.
    """
    recorded = dict(spec)
    differences: list[Difference] = []
    checked: list[str] = []
    resent: list[str] = []
    trusted: list[str] = []
    for name, value in spec.items():
        if name in found.remote_spec:
            checked.append(name)
            held = found.remote_spec[name]
            if held != value:
                differences.append(Difference(name, value, held, name in mutable))
                recorded[name] = held
        elif name in mutable and not sent:
            resent.append(name)
            del recorded[name]
        else:
            trusted.append(name)
    return Comparison(
        found, tuple(differences), tuple(checked), tuple(resent), tuple(trusted), recorded, sent
    )


class DiffersAtService(CustomsBatchError):
    """The object at the service is not what the document declares, where no call can
    change it: nothing is recorded."""

    exit_code = ExitCode.FINDINGS

    def __init__(self, message: str, comparison: Comparison, *, hint: str) -> None:
        super().__init__(message, hint=hint)
        self.comparison = comparison

    def details(self) -> str | None:
        lines = self.comparison.lines(unread=False, refused=True)
        return "".join(f"  {line}\n" for line in lines)


def _shown(value: JSON) -> str:
    if isinstance(value, (dict, list)):
        text = repr(value)
        return text if len(text) <= 60 else text[:57] + "..."
    return repr(value)
