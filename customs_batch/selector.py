"""Label selectors (``-l``), in kubectl's grammar: requirements joined by commas, all of
which must hold.

=====================  ================================================================
``key=value``          the label is ``value`` (``key==value`` too)
``key!=value``         the label is not ``value``, or the document has no such label
``key in (a,b)``       the label is one of the values
``key notin (a,b)``    the label is none of the values, or the document has no such label
``key``                the document has the label, whatever its value
``!key``               the document has no such label
=====================  ================================================================

A selector that does not follow it is a usage error that shows the accepted syntax.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import NoReturn

from customs_batch.errors import UsageError

SYNTAX = (
    "a label selector is requirements joined by commas, all of which must hold: "
    "key=value, key==value, key!=value, 'key in (a,b)', 'key notin (a,b)', key (has the "
    "label), !key (has not); e.g. -l 'lane in (rtm-ham,rtm-ant),team!=road'"
)
"""The accepted syntax, as a malformed selector's hint says it."""


class SelectorError(UsageError):
    """A text that is not a label selector: ``reason`` says why, without where it came
    from (the message names the command line's ``-l``)."""

    def __init__(self, text: str, reason: str) -> None:
        super().__init__(f"-l {text!r} is not a label selector: {reason}", hint=SYNTAX)
        self.text = text
        self.reason = reason


class Operator(StrEnum):
    """How a requirement compares a document's label."""

    EQUALS = "="
    NOT_EQUALS = "!="
    IN = "in"
    NOT_IN = "notin"
    EXISTS = "exists"
    DOES_NOT_EXIST = "!"


@dataclass(frozen=True)
class Requirement:
    """One requirement of a selector: ``key``, an operator and its values."""

    key: str
    operator: Operator
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether a document with ``labels`` meets this requirement."""
        value = labels.get(self.key)
        if self.operator is Operator.EXISTS:
            return value is not None
        if self.operator is Operator.DOES_NOT_EXIST:
            return value is None
        if self.operator in (Operator.EQUALS, Operator.IN):
            return value in self.values
        return value not in self.values  # != and notin: a missing label is not the value


@dataclass(frozen=True)
class LabelSelector:
    """Requirements that must all hold; ``text`` is the selector as written."""

    requirements: tuple[Requirement, ...]
    text: str

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether a document with ``labels`` meets every requirement."""
        return all(requirement.matches(labels) for requirement in self.requirements)

    @classmethod
    def parse_all(cls, selectors: Sequence[str]) -> LabelSelector | None:
        """``-l`` given once or more (each must hold), or None when not given."""
        if not selectors:
            return None
        requirements = tuple(r for text in selectors for r in cls.parse(text).requirements)
        return cls(requirements, ",".join(selectors))

    @classmethod
    def parse(cls, text: str) -> LabelSelector:
        """Parse one ``-l`` value; a malformed one is a usage error naming what is wrong."""
        parser = _Parser(text)
        return cls(parser.requirements(), text)


# Words: anything but blanks and the grammar's own characters. Operators, longest first.
_TOKEN = re.compile(r"\s*(==|!=|=|!|\(|\)|,|<|>|[^\s=!(),<>]+)")


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens: list[str] = []
        position = 0
        while (match := _TOKEN.match(text, position)) is not None:
            self.tokens.append(match.group(1))
            position = match.end()
        if text[position:].strip():  # nothing in the grammar is left over otherwise
            self.fail(f"cannot read {text[position:].strip()!r}")
        self.index = 0

    def fail(self, reason: str) -> NoReturn:
        raise SelectorError(self.text, reason)

    def peek(self) -> str | None:
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def take(self) -> str | None:
        token = self.peek()
        self.index += 1
        return token

    def word(self, what: str) -> str:
        token = self.take()
        if token is None or not _is_word(token):
            found = "the end" if token is None else repr(token)
            self.fail(f"expected {what}, found {found}")
        return token

    def requirements(self) -> tuple[Requirement, ...]:
        if not self.tokens:
            self.fail("it is empty")
        found = [self.requirement()]
        while self.peek() is not None:
            if self.take() != ",":
                self.fail(f"expected a comma before {self.tokens[self.index - 1]!r}")
            found.append(self.requirement())
        return tuple(found)

    def requirement(self) -> Requirement:
        if self.peek() == "!":
            self.take()
            return Requirement(self.word("a label after !"), Operator.DOES_NOT_EXIST)
        key = self.word("a label")
        operator = self.peek()
        if operator is None or operator == ",":
            return Requirement(key, Operator.EXISTS)
        self.take()
        if operator in ("=", "=="):
            return Requirement(key, Operator.EQUALS, frozenset({self.value()}))
        if operator == "!=":
            return Requirement(key, Operator.NOT_EQUALS, frozenset({self.value()}))
        if operator in ("<", ">"):
            self.fail(f"{operator} compares numbers, and labels are text: use in (a,b)")
        if operator in ("in", "notin"):
            kind = Operator.IN if operator == "in" else Operator.NOT_IN
            return Requirement(key, kind, self.value_set(operator))
        self.fail(f"expected =, ==, !=, in or notin after {key!r}, found {operator!r}")

    def value(self) -> str:
        """A value, possibly empty (``key=`` selects the label set to the empty text)."""
        token = self.peek()
        if token is None or token == ",":
            return ""
        return self.word("a value")

    def value_set(self, operator: str) -> frozenset[str]:
        if self.take() != "(":
            self.fail(f"expected ( after {operator}: write {operator} (a,b)")
        values = {self.word(f"a value in {operator} (...)")}
        while (token := self.take()) == ",":
            values.add(self.word(f"a value in {operator} (...)"))
        if token != ")":
            self.fail(f"expected ) to close {operator} (...)")
        return frozenset(values)


def _is_word(token: str) -> bool:
    return token not in ("==", "!=", "=", "!", "(", ")", ",", "<", ">")
