"""The document kinds and their addresses (``Kind/name``)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from customs_batch.picklable import quick_pickle

API_VERSION = "customs-batch/v1"


class Kind(StrEnum):
    """The kinds of document a manifest may hold."""

    TEMPLATE_GROUP = "TemplateGroup"
    DEPARTURE_DECLARATION = "DepartureDeclaration"
    TRANSIT_PARTY_UPDATE = "TransitPartyUpdate"
    MOVEMENT = "Movement"
    HAWB_DEACTIVATION = "HawbDeactivation"
    EXPORT_CANCELLATION = "ExportCancellation"

    @property
    def schema_name(self) -> str:
        """File stem of this kind's spec schema under ``schemas/``, e.g. ``movement``: as
        the kind's module names it (``KindModel.schema``)."""
        name = _SCHEMA_NAMES.get(self)
        if name is None:  # asked once a document: the registry's answers are kept
            from customs_batch.kinds.registry import KINDS

            _SCHEMA_NAMES.update({kind: model.schema for kind, model in KINDS.items()})
            name = _SCHEMA_NAMES[self]
        return name

    @classmethod
    def parse(cls, text: str) -> Kind | None:
        """The kind spelled exactly ``text``, or None."""
        try:
            return cls(text)
        except ValueError:
            return None


_SCHEMA_NAMES: dict[Kind, str] = {}
"""Each kind's schema name as its model gives it (``KindModel.schema``), once asked for."""


@quick_pickle
@dataclass(frozen=True, order=True, slots=True)
class Address:
    """Where a document lives in the batch and in the state: ``Kind/name``."""

    kind: Kind
    name: str

    def __str__(self) -> str:
        # ``_value_``, not ``value``: the enum's property cost a plan of 100,000 documents
        # 0.3 s over the half million addresses it prints (measured).
        return f"{self.kind._value_}/{self.name}"

    def __hash__(self) -> int:
        # The hash the dataclass would make, without calling the enum's own ``__hash__`` (a
        # Python function): a plan of 100,000 hashes addresses nearly 3 million times.
        return hash((self.kind._name_, self.name))

    @classmethod
    def parse(cls, text: str) -> Address | None:
        """Parse ``Kind/name``; None when the text is not an address."""
        kind_text, sep, name = text.partition("/")
        kind = Kind.parse(kind_text)
        if not sep or kind is None or not name:
            return None
        return cls(kind, name)


NAME_PATTERN = "[A-Za-z0-9][A-Za-z0-9._-]*"
"""A document's name, without the kind (``dep-rtm-ham-0001``)."""
MAX_NAME = 200
"""The longest name a document may have (``manifest/documents/_assemble.py``)."""


def kind_names() -> tuple[str, ...]:
    """Every kind's name, in the registry's order: the one list of kinds the schemas, the
    patterns and every message that lists kinds are made from."""
    return tuple(kind.value for kind in Kind)


def address_pattern() -> str:
    """The pattern of an address ``Kind/name`` of any kind (a ``dependsOn`` entry)."""
    return f"^({'|'.join(kind_names())})/{NAME_PATTERN}$"


def reference_pattern() -> str:
    """The pattern of a reference ``${ref:Kind/name.field}`` to any kind's outcome."""
    return f"^\\$\\{{ref:({'|'.join(kind_names())})/{NAME_PATTERN}\\.[A-Za-z]+\\}}$"
