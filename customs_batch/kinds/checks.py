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

from enum import StrEnum


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
