"""Identity values a spreadsheet re-typed as numbers.

A spreadsheet program that reads a column of references or codes as numbers writes them
back, on the next export, as it shows them: ``0012`` as ``12`` (leading zeros dropped),
``12`` as ``12.0``, a long reference ``123456789012345678`` as ``1.23457E+17`` (scientific
notation, six digits kept) or ``123456789012346000`` (fifteen digits kept). The row still
stands for the declaration its first export sent; compared as written, its identity is a new
one, and plan would create a second object for it beside the orphaned record of the first.

These functions tell such values apart from others: the planner refuses a new document whose
identity differs from a record the manifests no longer name only in values that are the same
number written another way (:func:`retyped_fields`), and finds those records by
:func:`retyped_key`. Identities are compared by the words :func:`~customs_batch.kinds.model.
identity_of` gives (``field=value``); a value made of several codes (a departure's goods,
``090421/NL,731815/NL``) is compared code by code.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

_NUMBER = re.compile(r"([0-9]+)(?:[.,]([0-9]+))?(?:[eE]([+-]?[0-9]{1,4}))?")
"""A value a spreadsheet may have read, or written, as a number: digits, a decimal point or
comma, an exponent (``1.23457E+17``; a German export writes ``1,23457E+17``)."""

_MAX_TEXT = 64
"""Longer values are compared as written (no reference or code is that long a number)."""

_EXCEL_DIGITS = 15
"""The significant digits a spreadsheet keeps of a number typed in a cell."""


def _number(text: str) -> tuple[Decimal, int | None] | None:
    """``text`` as a number, and how many significant digits it kept when it is the shown
    form of a longer number (scientific notation, or fifteen digits padded with zeros); None
    when ``text`` is no number."""
    if len(text) > _MAX_TEXT:
        return None
    match = _NUMBER.fullmatch(text)
    if match is None:
        return None
    whole, fraction, exponent = match.groups()
    try:
        value = Decimal(f"{whole}.{fraction or '0'}E{exponent or '0'}")
    except InvalidOperation:  # pragma: no cover - the pattern admits none
        return None
    digits = (whole + (fraction or "")).lstrip("0")
    if exponent is not None:
        return value, max(1, len(digits.rstrip("0")) if fraction else len(digits) or 1)
    if (
        fraction is None
        and len(digits) > _EXCEL_DIGITS
        and len(digits.rstrip("0")) <= _EXCEL_DIGITS
    ):
        return value, _EXCEL_DIGITS
    return value, None


def _rounded(value: Decimal, digits: int) -> Decimal | None:
    if not value:
        return value
    try:
        return value.quantize(Decimal(1).scaleb(value.adjusted() - digits + 1), ROUND_HALF_UP)
    except InvalidOperation:
        return None


def retyped_text(new: str, old: str) -> bool:
    """Whether ``new`` and ``old`` are two writings of one number, as a spreadsheet re-types
    a cell it read as a number: ``12`` for ``0012``, ``12.0`` for ``12``, ``1.23457E+17`` or
    ``123456789012346000`` for ``123456789012345678``. Equal texts are not re-typed."""
    if new == old:
        return False
    one, other = _number(new), _number(old)
    if one is None or other is None:
        return False
    if one[0] == other[0]:
        return True
    for (shown, kept), (exact, exact_kept) in ((one, other), (other, one)):
        if kept is not None and exact_kept is None and _rounded(exact, kept) == shown:
            return True
    return False


def _parts(value: str) -> list[list[str]]:
    return [element.split("/") for element in value.split(",")]


def _retyped_value(new: str, old: str) -> bool:
    """:func:`retyped_text` of a whole value, or of the codes of a value made of several
    (``CODE/ORIGIN,CODE/ORIGIN``), at least one of them re-typed and the others equal."""
    if retyped_text(new, old):
        return True
    mine, theirs = _parts(new), _parts(old)
    if len(mine) != len(theirs) or (len(mine) == 1 and len(mine[0]) == 1):
        return False
    left = list(theirs)
    changed = False
    for element in mine:
        for index, candidate in enumerate(left):
            if len(candidate) != len(element):
                continue
            pairs = list(zip(element, candidate, strict=True))
            if all(a == b or retyped_text(a, b) for a, b in pairs):
                changed = changed or any(a != b for a, b in pairs)
                del left[index]
                break
        else:
            return False
    return changed


def retyped_fields(new: Sequence[str], old: Sequence[str]) -> list[tuple[str, str, str]] | None:
    """The fields (with the new and the old value) in which identity ``new`` differs from
    ``old`` only by numbers a spreadsheet re-typed; None when the two differ otherwise, or
    not at all."""
    if len(new) != len(old):
        return None
    fields = []
    for mine, theirs in zip(new, old, strict=True):
        if mine == theirs:
            continue
        head, equals, value = mine.partition("=")
        their_head, _, was = theirs.partition("=")
        if not equals or head != their_head or head == "place":
            return None
        if not _retyped_value(value, was):
            return None
        fields.append((head, value, was))
    return fields or None


def _magnitude(text: str) -> str | None:
    number = _number(text)
    if number is None:
        return None
    return f"#{number[0].adjusted() if number[0] else 0}"


def retyped_key(words: Sequence[str]) -> tuple[str, ...] | None:
    """``words`` with each number in them replaced by its magnitude: two identities that
    :func:`retyped_fields` may take for one have the same key (a long number whose rounding
    carried into the next power of ten aside). None when no value holds a number."""
    key = []
    numbered = False
    for word in words:
        head, equals, value = word.partition("=")
        if not equals or head == "place":
            key.append(word)
            continue
        whole = _magnitude(value)
        if whole is not None:
            key.append(f"{head}={whole}")
            numbered = True
            continue
        elements = []
        for element in _parts(value):
            codes = [_magnitude(code) or code for code in element]
            numbered = numbered or any(code.startswith("#") for code in codes)
            elements.append("/".join(codes))
        key.append(f"{head}={','.join(sorted(elements))}")
    return tuple(key) if numbered else None


def percent_of(new: str, old: str) -> bool:
    """Whether ``new`` is the number ``old`` as a percentage format shows it (``40%`` for
    ``0.4``, ``12.50%`` for ``0.125``): a cell under such a format, which earlier releases
    read as the number alone and sent so."""
    if not new.endswith("%") or len(new) > _MAX_TEXT or len(old) > _MAX_TEXT:
        return False
    try:
        shown, held = Decimal(new[:-1]), Decimal(old)
    except InvalidOperation:
        return False
    if not shown.is_finite() or not held.is_finite():
        return False
    places = max(0, -shown.as_tuple().exponent)  # type: ignore[operator]
    try:
        return (held * 100).quantize(Decimal(1).scaleb(-places), ROUND_HALF_UP) == shown
    except InvalidOperation:
        return False
