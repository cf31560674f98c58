"""What ``validate`` checks of a kind beyond its JSON Schema, as the kind's module declares it.

A kind's ``KindModel`` names its code-valued fields (``code_fields``: where each sort of code
is, by path in the spec, ``*`` for every item of a list) and the customs rule sets that apply
to it (``rules``). Validation asks the model and never which kind it holds: it holds one
check per sort of code (``validation/code_fields.py``) and one function per rule set
(``validation/rules.py``); a test holds both tables to these words.

The words live here, below validation, so that a kind's module can use them without
importing validation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from customs_batch.kinds import Kind


class CodeSort(StrEnum):
    """A sort of code a field holds. Its check, and the rule id of that check's findings,
    are validation's (``validation/code_fields.py``): two sorts may share a rule id (a
    transport mode of customs, and one of a transport means, which also takes the older
    two-digit codes, are both ``code.transport-mode``)."""

    COUNTRY = "country"
    CURRENCY = "currency"
    EORI = "eori"
    OFFICE = "customs-office"
    UNLOCODE = "unlocode"
    COMMODITY = "commodity"
    PACKAGE_KIND = "package-kind"
    INCOTERM = "incoterm"
    SECURITY = "security"
    TRANSPORT_MODE = "transport-mode"
    TRANSPORT_MEANS_MODE = "transport-means-mode"
    GUARANTEE_TYPE = "guarantee-type"


# The sorts by their short names, so that a kind's table reads as a table.
COUNTRY = CodeSort.COUNTRY
CURRENCY = CodeSort.CURRENCY
EORI = CodeSort.EORI
OFFICE = CodeSort.OFFICE
UNLOCODE = CodeSort.UNLOCODE
COMMODITY = CodeSort.COMMODITY
PACKAGE_KIND = CodeSort.PACKAGE_KIND
INCOTERM = CodeSort.INCOTERM
SECURITY = CodeSort.SECURITY
TRANSPORT_MODE = CodeSort.TRANSPORT_MODE
TRANSPORT_MEANS_MODE = CodeSort.TRANSPORT_MEANS_MODE
GUARANTEE_TYPE = CodeSort.GUARANTEE_TYPE

CodeFields = tuple[tuple[tuple[str, ...], CodeSort], ...]
"""Which field of a kind's spec holds which sort of code: ``(("departureOffice",), OFFICE)``."""


class RuleSet(StrEnum):
    """A set of customs rules JSON Schema cannot express, checked by one function of
    ``validation/rules.py``."""

    DEPARTURE = "departure"
    """A transit departure: UN/LOCODEs against their countries, item and total masses,
    guarantee reference numbers (``validation/transit_rules.py``)."""
    PARTY_UPDATE = "party-update"
    """A transit party update: at least one party (``validation/transit_rules.py``)."""
    MOVEMENT = "movement"
    """A movement: the customs-declaration rules of its action, the party rule, the MRN of
    an external declaration (``validation/movement_rules.py``)."""


PARTY_CODE_FIELDS: CodeFields = tuple(
    item
    for party in ("Principal", "Consignor", "Consignee")
    for item in (((party, "eoriNo"), EORI), ((party, "countryCode"), COUNTRY))
)
"""The parties' EORI and country, where a transit declaration or its update names them."""


# -- what validate's project-wide checks learn from a kind -----------------------------------


class IdSort(StrEnum):
    """What an ID one document takes from another's outcome is the ID of, in the words of
    ``validate``'s findings (``project.wrong-declaration``)."""

    TRANSIT_DEPARTURE = "the transit departure declaration"
    TRANSIT_ARRIVAL = "a transit arrival declaration"
    EXPORT = "an export declaration"
    TEMPLATE_GROUP = "a template group, not a declaration"


@dataclass(frozen=True)
class OutputId:
    """What one output of a kind is the ID of (``KindModel.output_ids``)."""

    sort: IdSort | None = None
    """The sort of object the output always names (a departure's ``declarationId``)."""
    repeats: str | None = None
    """The spec field whose ID the output gives back (a party update's ``declarationId``:
    the declaration it updates); a reference there is followed to what it names."""
    otherwise: Callable[[Mapping[str, Any]], IdSort | None] | None = None
    """When ``repeats`` holds no reference: the sort the document's spec tells, if any (a
    party update with ``variant: arrival`` updates an arrival declaration)."""


@dataclass(frozen=True)
class VariantRule:
    """A ``variant`` of a document that refuses some sorts of ID (``TakesId.variants``)."""

    value: str
    refuses: frozenset[IdSort]
    rule: str
    says: str
    """What the variant does, after ``variant <value>`` in the finding."""
    hint: str


@dataclass(frozen=True)
class TakesId:
    """A spec field that must hold the ID of certain sorts of object: a reference there to
    an output of another sort is refused (``project.wrong-declaration``)."""

    field: str
    accepts: frozenset[IdSort]
    purpose: str
    """What the kind does with the ID, after "but" in the finding (``an ExportCancellation
    cancels an export declaration (DELETE /v1/declarations/{id})``)."""
    hint: str
    variants: tuple[VariantRule, ...] = ()


@dataclass(frozen=True)
class Parties:
    """The party fields of a transit declaration (``Principal``, ``Consignor``,
    ``Consignee``) a kind writes: one owner each (``project.two-owners``)."""

    updates: str | None = None
    """The spec field naming the declaration whose parties the document updates (a party
    update's ``declarationId``); None: the document's own declaration, whose party fields it
    owns (a departure)."""
    id_output: str = "declarationId"
    """The output that is the ID of the declaration the document makes (an owner's)."""


@dataclass(frozen=True)
class UniqueField:
    """A spec field the service keeps unique within another (a template group's ``code``
    within its ``companyId``): two documents sharing it are refused
    (``project.duplicate-template-code``)."""

    field: str
    within: str
    what: str
    """The field in the finding's words (``template-group code``)."""
    within_word: str
    """The other field in the finding's words (``company``)."""
    hint: str


@dataclass(frozen=True)
class LaneEnd:
    """Documents of a kind that end the lane of another kind's documents with the same
    values of ``fields`` (a HAWB deactivation: a deactivated HAWB is not moved), so the
    order of the two in one batch matters: a warning at the ending document's last field.

    ``message`` is formatted with the values of ``fields`` (``{0}``, ``{1}``…), ``first``
    (the address of the first document of the lane) and ``more`` (``more``, formatted with
    ``count``, when there are more)."""

    of: Kind
    fields: tuple[str, ...]
    rule: str
    message: str
    more: str
    hint: str
