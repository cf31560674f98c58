"""What a policy may cost on one document, bounded twice.

Before evaluating: the longest list or map the expression can see (the spec part it
is handed and, when it names ``metadata``, the document's labels, annotations and
dependsOn), times the lists a ``+`` chain can join, raised to the depth of its nested
comprehensions, must stay under :data:`MAX_STEPS`; a list literal is as long as its items,
a ``map()`` or ``filter()`` result as its source, so neither raises the bound.

While evaluating: every comprehension step (each item an ``all``, ``exists``,
``exists_one``, ``map`` or ``filter`` looks at) is counted, and the evaluation stops at
:data:`MAX_STEPS`. The CEL library has no budget of its own, so the expression is compiled
with each comprehension's per-item arguments wrapped in ``(STEP() ? (ARG) : null)``:
``STEP`` is a Python function that counts and, past the budget, raises, which ends the
evaluation (a ternary passes the error on; only its value of true is ever used). What the
user wrote is compiled first, so a compile error points at the user's own columns.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Mapping
from typing import Any

MAX_STEPS = 1_000_000
"""Comprehension steps of one policy on one document: a list of 1,000 items under two
nested comprehensions, of 1,000,000 under one."""
STEP_FUNCTION = "customs_batch_step"

# A CEL string literal: raw or not, bytes, triple-quoted (a raw one has no escapes).
_STRING = re.compile(
    r"""(?P<raw>[rR][bB]?|[bB][rR])(?:'''.*?'''|\"\"\".*?\"\"\"|'[^'\n]*'|"[^"\n]*")"""
    r"""|[bB]?(?:'''(?:\\.|.)*?'''|\"\"\"(?:\\.|.)*?\"\"\"|'(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*")""",
    re.DOTALL,
)
_TOKEN = re.compile(
    r"(?P<macro>\.\s*(?:all|exists_one|exists|map|filter)\s*\()|(?P<open>[(\[{])"
    r"|(?P<close>[)\]}])|(?P<comma>,)|(?P<plus>\+)"
)


class TooCostly(Exception):
    """Raised by the step function past the budget: the evaluation stops."""


class _Steps(threading.local):
    taken = 0


_STEPS = _Steps()


def step() -> bool:
    """Count one comprehension step; past :data:`MAX_STEPS`, stop the evaluation."""
    _STEPS.taken += 1
    if _STEPS.taken > MAX_STEPS:
        raise TooCostly(f"more than {MAX_STEPS:,} steps")
    return True


def start_counting() -> None:
    """Start the count of one evaluation."""
    _STEPS.taken = 0


def steps_taken() -> int:
    """The steps of the evaluation started last (over :data:`MAX_STEPS`: it was stopped)."""
    return _STEPS.taken


class _QuietStop(logging.Filter):
    """The CEL library logs a warning for each error of a Python function, even one the
    expression absorbs (``... || true``); a stopped evaluation is reported as a finding."""

    def filter(self, record: logging.LogRecord) -> bool:
        return STEP_FUNCTION not in record.getMessage()


logging.getLogger("cel").addFilter(_QuietStop())


def without_strings(expression: str) -> str:
    """``expression`` with each string literal's text blanked (same length, same places):
    what is code in it, for every look at an expression's text."""

    def blank(match: re.Match[str]) -> str:
        text = match.group(0)
        return text[0] + " " * (len(text) - 2) + text[-1] if len(text) >= 2 else text

    return _STRING.sub(blank, expression)


def instrumented(expression: str) -> str:
    """``expression`` with a counted step in front of every per-item argument of every
    comprehension (see the module's docstring)."""
    code = without_strings(expression)
    frames: list[list[int] | None] = []  # per open bracket: a macro's argument starts, or None
    inserts: list[tuple[int, int, str]] = []  # (position, order, text)
    for match in _TOKEN.finditer(code):
        kind = match.lastgroup
        if kind == "macro":
            frames.append([])
        elif kind == "open":
            frames.append(None)
        elif kind == "comma" and frames and frames[-1] is not None:
            frames[-1].append(match.end())
        elif kind == "close" and frames:
            commas = frames.pop()
            for index, start in enumerate(commas or ()):
                end = commas[index + 1] - 1 if commas and index + 1 < len(commas) else match.start()
                inserts.append((start, 1, f"({STEP_FUNCTION}() ? ("))
                inserts.append((end, 0, ") : null)"))
    out = expression
    for position, _, text in sorted(inserts, reverse=True):
        out = out[:position] + text + out[position:]
    return out


def joined_operands(expression: str) -> int:
    """How many lists a ``+`` chain of the expression may join at most: every ``+`` counted
    (outside string literals), plus one."""
    return without_strings(expression).count("+") + 1


def literal_items(expression: str) -> int:
    """The most items a list or map literal of the expression may have: its commas, plus
    one."""
    return without_strings(expression).count(",") + 1


def reads_metadata(expression: str) -> bool:
    """Whether the expression can see ``metadata`` (named outside string literals)."""
    return re.search(r"(?<![\w.])metadata\b", without_strings(expression)) is not None


def longest(value: Any) -> int:
    """The length of the longest list or map anywhere in ``value`` (walked without
    recursion): a comprehension runs over a list's items or a map's keys."""
    most = 0
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            most = max(most, len(node))
            stack.extend(node.values())
        elif isinstance(node, list | tuple):
            most = max(most, len(node))
            stack.extend(node)
    return most
