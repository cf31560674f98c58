"""Jinja errors in the user's words: which name is missing, what was meant, where.

Jinja says ``'dict object' has no attribute 'dest_ofice'``; a user needs "values has no key
'dest_ofice'", the closest key (did you mean 'dest_office'?), the keys there are, and the
line and column of the expression. Python's own errors (``1/0``) become what went wrong
"in the expression at line N".
"""

from __future__ import annotations

import difflib
import linecache
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from jinja2 import StrictUndefined, UndefinedError
from jinja2.utils import missing

from customs_batch.findings import a_or_an

_SHOWN_KEYS = 20
_CONTEXT_NAMES = ("values", "row", "row_number")


class MissingName(UndefinedError):
    """An undefined name, with what it was looked up in."""

    def __init__(self, undefined: StrictUndefined, message: str | None = None) -> None:
        super().__init__(message)
        self.name = str(undefined._undefined_name)
        self.owner = undefined._undefined_obj
        self.given_hint = undefined._undefined_hint


class FriendlyUndefined(StrictUndefined):
    """Strict undefined whose error knows the name and the object it was looked up in."""

    __slots__ = ()
    # Every use of the value is an error naming it, these too (StrictUndefined leaves them
    # to Python, whose TypeError does not say which name was missing): the abs and round
    # filters, int-like uses, and a format specification.
    __abs__ = __round__ = __index__ = __trunc__ = __floor__ = __ceil__ = __format__ = (
        StrictUndefined._fail_with_undefined_error
    )

    def __init__(
        self,
        hint: str | None = None,
        obj: Any = missing,
        name: str | None = None,
        exc: type[UndefinedError] = UndefinedError,
    ) -> None:
        super().__init__(hint, obj, name, exc)
        if exc is UndefinedError and hint is None:  # not the sandbox's refusals
            self._undefined_exception = self._error  # type: ignore[assignment]

    def _error(self, message: str | None = None) -> MissingName:
        return MissingName(self, message)


@dataclass(frozen=True)
class Explained:
    """A message, a hint and the 1-based column of the expression (0: not known)."""

    message: str
    hint: str
    column: int = 0


QUOTED_CHARS = 120
"""How much of an expression a message quotes: the finding points at the string, and a
message per spreadsheet row that quoted a long expression whole took memory and report space
in proportion to rows times its length (100 KB over 5,000 rows: 500 MB of JSON, 1.6 GB)."""


def quoted_expression(text: str) -> str:
    """``text`` quoted for a message, shortened to its start and length when long."""
    if len(text) <= QUOTED_CHARS:
        return repr(text)
    return f"{text[:QUOTED_CHARS]!r}… ({len(text):,} characters)"


def explain_missing(error: MissingName, source_line: str) -> Explained:
    """What ``error`` means, with the expression found in ``source_line``."""
    name = error.name
    owner = error.owner
    if owner is missing:
        column = _find(rf"(?<![\w.]){re.escape(name)}\b", source_line)
        close = difflib.get_close_matches(name, _CONTEXT_NAMES, n=1)
        hint = f"Did you mean {close[0]!r}? " if close else ""
        hint += "A template sees 'values' (and under forEach 'row' and 'row_number')."
        return Explained(f"unknown variable {name!r}", hint, column)
    access = rf"(?:\.\s*{re.escape(name)}\b|\[\s*['\"]?{re.escape(name)}['\"]?\s*\])"
    match = re.search(rf"([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*|\[[^\]]*\])*?)\s*{access}", source_line)
    written = match.group(1) if match else None
    column = match.start() + 1 if match else 0
    if isinstance(owner, list | tuple) and name.lstrip("-").isdigit():
        where = written or "the list"
        return Explained(
            f"{where} has no item {name} (it has {len(owner)})",
            "Items are numbered from 0; check the list's length with '| length'.",
            column,
        )
    keys = _keys(owner)
    if keys is None:
        where = written or "the value"
        kind = type(owner).__name__
        message = f"{where} ({a_or_an(_kind_name(kind))}) has no attribute {name!r}"
        return Explained(message, "Check the name, or the value it is looked up in.", column)
    column_kind = owner.__class__.__name__ == "RowView"
    thing = "column" if column_kind else "key"
    where = "the row" if column_kind else written or "the mapping"
    close = difflib.get_close_matches(name, keys, n=1)
    hint = f"Did you mean {close[0]!r}? " if close else ""
    shown = ", ".join(map(repr, keys[:_SHOWN_KEYS]))
    more = f", … ({len(keys)} in all)" if len(keys) > _SHOWN_KEYS else ""
    things = "columns" if column_kind else "keys"
    hint += f"The {things} of {where} are: {shown}{more}." if keys else f"{where} is empty."
    return Explained(f"{where} has no {thing} {name!r}", hint, column)


def _keys(owner: Any) -> list[str] | None:
    if isinstance(owner, Mapping):
        return [str(key) for key in owner]
    if owner.__class__.__name__ == "RowView":
        return [str(key) for key in owner]
    return None


def _kind_name(type_name: str) -> str:
    return {"str": "text", "int": "number", "float": "number", "list": "list"}.get(
        type_name, type_name
    )


def _find(pattern: str, line: str) -> int:
    match = re.search(pattern, line)
    return match.start() + 1 if match else 0


_PYTHON_ERRORS = {
    ZeroDivisionError: "division by zero",
    OverflowError: "a number too large",
}


def explain_python(error: BaseException, line: int) -> str:
    """A Python error raised by an expression, in the user's words."""
    where = f"in the expression at line {line}" if line else "in the expression"
    for kind, words in _PYTHON_ERRORS.items():
        if isinstance(error, kind):
            return f"{words} {where}"
    if isinstance(error, TypeError):
        return f"a value of the wrong type {where}: {error}"
    if isinstance(error, ValueError):
        return f"a wrong value {where}: {error}"
    return f"{type(error).__name__} {where}: {error}"


_NO_FILTER = re.compile(r"No (filter|test) named '([^']+)'")


def suggest_name(message: str, known: Iterable[str]) -> str | None:
    """For Jinja's "No filter named 'x'" (or test): the hint naming the closest one."""
    match = _NO_FILTER.search(message)
    if match is None:
        return None
    close = difflib.get_close_matches(match.group(2), list(known), n=1)
    said = f"Did you mean {close[0]!r}? " if close else ""
    return said + f"Only Jinja's built-in {match.group(1)}s are available."


def source_line(filename: str | None, line: int) -> str:
    """The text of a template file's line (empty when not known)."""
    if not filename or line <= 0:
        return ""
    return linecache.getline(filename, line)
