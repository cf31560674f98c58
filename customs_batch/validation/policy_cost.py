"""What a policy may cost on one document, bounded twice.

Before evaluating: the longest list or map the expression can see (the spec part it
is handed and, when it names ``metadata``, the document's labels, annotations and
dependsOn), times the lists a ``+`` chain can join, raised to the depth of its nested
comprehensions, must stay under :data:`MAX_STEPS`; a list literal is as long as its items,
a ``map()`` or ``filter()`` result as its source, so neither raises the bound.

While evaluating: every comprehension step (each item an ``all``, ``exists``,
``exists_one``, ``map`` or ``filter`` looks at) is charged what it costs, and the evaluation
stops past :data:`MAX_STEPS`. The CEL library copies the value a field selection
(``x.name``) gives, and a ``map`` or ``filter`` copies the list it has built so far at each
item, so a step costs one, plus the size (values, items and fields counted) of what each
selection in its per-item arguments may give (the largest value under that name anywhere
in the document), plus, for ``map`` and ``filter``, the size of the list built so far (each
item counted at the size of what it added: a ``filter``'s item, handed to ``STEP``, a
``map``'s value, written twice to be handed to it). The CEL library has no budget of its
own, so the expression is compiled with each comprehension's per-item arguments wrapped in
``(STEP(K) ? (ARG) : null)``: ``STEP`` is a Python function that charges the step of
comprehension ``K`` and, past the budget, raises, which ends the evaluation (a ternary
passes the error on; only its value of true is ever used). What the user wrote is compiled
first, so a compile error points at the user's own columns.

A ``+`` joins texts too, and the CEL library copies both sides at each: ``K`` texts of ``T``
characters joined one after the other copy about ``T * K * (K + 1) / 2`` characters (each
``+`` of the expression counted, ``T`` the longest text it can see or write, times the
operands again for each ``map`` or ``filter`` that may have built longer ones). That is
charged once before evaluating, a step (one) for every 64 characters, and again at every
comprehension step, since a join in its per-item arguments is made anew at each.
"""

from __future__ import annotations

import contextlib
import logging
import re
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

MAX_STEPS = 1_000_000
"""What one policy may cost on one document, in steps (each comprehension step is one, plus
what it copies: see the module's docstring): a list of 1,000 items under two nested
comprehensions, of 1,000,000 under one, when the steps copy little."""
STEP_FUNCTION = "customs_batch_step"
REGEX_FUNCTION = "customs_batch_regex"
SECONDS_A_STEP = 3e-6
"""What a step stands for in time (1,000,000 of them: about three seconds), for what is
charged by the time it takes: compiling a regular expression."""

# A CEL string literal: raw or not, bytes, triple-quoted (a raw one has no escapes).
_STRING = re.compile(
    r"""(?P<raw>[rR][bB]?|[bB][rR])(?:'''.*?'''|\"\"\".*?\"\"\"|'[^'\n]*'|"[^"\n]*")"""
    r"""|[bB]?(?:'''(?:\\.|.)*?'''|\"\"\"(?:\\.|.)*?\"\"\"|'(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*")""",
    re.DOTALL,
)
_TOKEN = re.compile(
    r"(?P<macro>\.\s*(?P<name>all|exists_one|exists|map|filter)\s*\()|(?P<open>[(\[{])"
    r"|(?P<close>[)\]}])|(?P<comma>,)|(?P<plus>\+)"
)
# A field selection (``.name`` not followed by ``(``: not a method or a macro).
_SELECT = re.compile(r"\.\s*([A-Za-z_]\w*)(?!\w)(?!\s*\()")


@dataclass(frozen=True)
class Comprehension:
    """One comprehension of an expression, as its steps are charged."""

    builds: bool
    """``map`` or ``filter``: it copies the list built so far at each step."""
    parent: int | None
    """The comprehension whose per-item arguments hold it (its list is built anew at each
    step of that one), or None."""
    selects: tuple[str, ...]
    """The field names selected in its per-item arguments (outside nested ones')."""


class TooCostly(Exception):
    """Raised by the step function past the budget: the evaluation stops."""


class _Steps(threading.local):
    taken = 0
    text = 0  # what the + joins of texts copy, charged before evaluating and at each step
    widen = 1
    charges: tuple[int, ...] = ()  # per comprehension: what its step's selections copy
    builds: tuple[bool, ...] = ()
    items: tuple[int, ...] = ()  # per comprehension: what a nested one's list may add
    children: tuple[tuple[int, ...], ...] = ()
    built: list[int] = []  # noqa: RUF012  (per thread, set by start_counting)
    measured_for: Any = None  # the values measured last (kept alive: compared by identity)
    measured: _Measured | None = None


_STEPS = _Steps()


def step(index: int = -1, item: Any = None) -> bool:
    """Charge one step of comprehension ``index`` (``item``: the item a ``map`` or
    ``filter`` looks at); past :data:`MAX_STEPS`, stop the evaluation."""
    steps = _STEPS
    cost = 1 + steps.text
    if 0 <= index < len(steps.charges):
        cost += steps.charges[index]
        if steps.builds[index]:
            # It copies the list built so far; what it adds is at most the item, widened
            # (a literal, a + join), the values it selected, and a nested one's list.
            steps.built[index] += (
                _measure(item).total * steps.widen + steps.charges[index] + steps.items[index]
            )
            cost += steps.built[index]
        for child in steps.children[index]:
            steps.built[child] = 0  # its list is built anew at this step
    steps.taken += cost
    if steps.taken > MAX_STEPS:
        raise TooCostly(f"more than {MAX_STEPS:,} steps")
    return True


def start_counting(
    comprehensions: Sequence[Comprehension] = (),
    seen: Any = None,
    widen: int = 1,
    *,
    expression: str = "",
) -> None:
    """Start the count of one evaluation of ``expression`` with ``comprehensions`` on the
    values ``seen`` (what the expression is handed); ``widen``: how many times longer than
    the document's a list the expression builds may be (``+`` joins, literals). What its
    ``+`` joins of texts copy is charged at once: past :data:`MAX_STEPS`, do not evaluate."""
    steps = _STEPS
    steps.taken = 0
    steps.text = 0
    steps.widen = max(widen, 1)
    operands = joined_operands(expression)
    if not comprehensions and operands == 1:
        steps.charges, steps.builds, steps.items, steps.children, steps.built = (), (), (), (), []
        return
    if steps.measured_for is not seen or steps.measured is None:  # once for every policy
        steps.measured_for, steps.measured = seen, _measure(seen)
    measured = steps.measured
    if operands > 1:
        builders = sum(1 for c in comprehensions if c.builds)
        longest_text = max(measured.longest_text, longest_literal_text(expression))
        copied = longest_text * operands**builders * operands * (operands + 1) // 2
        steps.text = copied // 64
        steps.taken = steps.text
    if not comprehensions:
        steps.charges, steps.builds, steps.items, steps.children, steps.built = (), (), (), (), []
        return
    known = [
        measured.by_name[n] for c in comprehensions for n in c.selects if n in measured.by_name
    ]
    largest_select = max(known, default=1)
    steps.charges = tuple(
        sum(measured.by_name.get(name, largest_select) for name in c.selects)
        for c in comprehensions
    )
    steps.builds = tuple(c.builds for c in comprehensions)
    steps.children = tuple(
        tuple(j for j, other in enumerate(comprehensions) if other.parent == i)
        for i in range(len(comprehensions))
    )
    # A nested comprehension's list: as long as the longest, of the largest items.
    nested = max(measured.largest_item, largest_select) * max(measured.longest, 1) * steps.widen
    steps.items = tuple(nested if steps.children[i] else 0 for i in range(len(comprehensions)))
    steps.built = [0] * len(comprehensions)


def regex(pattern: Any) -> Any:
    """Charge what compiling ``pattern`` costs (the CEL library compiles a ``matches()``
    pattern anew at each call: ``(\\w{1,30}\\s*){30}`` takes about 90 ms) and hand it on;
    past :data:`MAX_STEPS`, stop the evaluation."""
    steps = _STEPS
    if isinstance(pattern, str):
        steps.taken += regex_steps(pattern)
        if steps.taken > MAX_STEPS:
            raise TooCostly(f"more than {MAX_STEPS:,} steps")
    return pattern


@lru_cache(maxsize=256)
def regex_steps(pattern: str) -> int:
    """The steps a compile of ``pattern`` by the CEL library costs, measured once."""
    from customs_batch.validation._cel import cel_core

    core = cel_core()
    start = time.perf_counter()
    # An invalid pattern still costs its compile (one too large: the whole of it).
    with contextlib.suppress(Exception):
        core.evaluate('"".matches(p)', core.Context({"p": pattern}))
    return 1 + int((time.perf_counter() - start) / SECONDS_A_STEP)


def steps_taken() -> int:
    """The steps of the evaluation started last (over :data:`MAX_STEPS`: it was stopped)."""
    return _STEPS.taken


class _QuietStop(logging.Filter):
    """The CEL library logs a warning for each error of a Python function, even one the
    expression absorbs (``... || true``); a stopped evaluation is reported as a finding."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return STEP_FUNCTION not in message and REGEX_FUNCTION not in message


logging.getLogger("cel").addFilter(_QuietStop())


def longest_literal_text(expression: str) -> int:
    """The length of the longest string literal of ``expression`` (quotes counted)."""
    return max((len(m.group(0)) for m in _STRING.finditer(expression)), default=0)


# Kept for the last few expressions: reading one policy looks at its code some fourteen
# times (depth, fields, joins, comprehensions...), which took a fifth of reading 100,000
# policies (measured).
@lru_cache(maxsize=64)
def without_strings(expression: str) -> str:
    """``expression`` with each string literal's text blanked (same length, same places):
    what is code in it, for every look at an expression's text."""

    def blank(match: re.Match[str]) -> str:
        text = match.group(0)
        return text[0] + " " * (len(text) - 2) + text[-1] if len(text) >= 2 else text

    return _STRING.sub(blank, expression)


def instrumented(expression: str) -> str:
    """``expression`` with a charged step in front of every per-item argument of every
    comprehension (see the module's docstring), and every ``matches()`` pattern handed to
    :func:`regex` first, which charges its compile."""
    return _charged_patterns(_parse(expression)[0])


_MATCHES = re.compile(r"(?P<dot>\.\s*)matches\s*\(|(?<![\w.])matches\s*\(")


def _charged_patterns(expression: str) -> str:
    """``expression`` with the pattern of each ``X.matches(P)`` or ``matches(X, P)`` call
    written ``customs_batch_regex(P)``."""
    code = without_strings(expression)
    inserts: list[tuple[int, str]] = []
    for match in _MATCHES.finditer(code):
        depth, end = 0, None
        start: int | None = match.end()
        if match.group("dot") is None:
            start = None  # the pattern is the second argument
        for position in range(match.end(), len(code)):
            char = code[position]
            if char in "([{":
                depth += 1
            elif char in ")]}":
                if depth == 0:
                    end = position
                    break
                depth -= 1
            elif char == "," and depth == 0 and start is None:
                start = position + 1
        if start is not None and end is not None:
            inserts += [(start, f"{REGEX_FUNCTION}("), (end, ")")]
    out, position = [], 0
    for at, text in sorted(inserts, key=lambda insert: insert[0]):
        out += [expression[position:at], text]
        position = at
    out.append(expression[position:])
    return "".join(out)


def comprehensions(expression: str) -> tuple[Comprehension, ...]:
    """The comprehensions of ``expression``, in the order they are written."""
    return _parse(expression)[1]


@dataclass
class _Frame:
    macro: int | None  # the comprehension it opens, or None: another bracket
    commas: list[int]
    start: int  # just after the bracket
    name: str  # the comprehension's (all, map...), or ""


@lru_cache(maxsize=64)  # asked twice a policy read: instrumented, then comprehensions
def _parse(expression: str) -> tuple[str, tuple[Comprehension, ...]]:
    code = without_strings(expression)
    frames: list[_Frame] = []
    wraps: list[tuple[int, int, int, str | None]] = []  # argument start, end, macro, item
    builds: list[bool] = []
    parents: list[int | None] = []
    spans: list[tuple[int, int]] = []  # per comprehension: its per-item arguments
    for match in _TOKEN.finditer(code):
        kind = match.lastgroup
        if kind == "macro":
            enclosing = next((f.macro for f in reversed(frames) if f.macro is not None), None)
            frames.append(_Frame(len(builds), [], match.end(), match.group("name")))
            builds.append(match.group("name") in ("map", "filter"))
            parents.append(enclosing)
            spans.append((match.end(), match.end()))
        elif kind == "open":
            frames.append(_Frame(None, [], match.end(), ""))
        elif kind == "comma" and frames and frames[-1].macro is not None:
            frames[-1].commas.append(match.end())
        elif kind == "close" and frames:
            frame = frames.pop()
            commas = frame.commas
            if frame.macro is None:
                continue
            spans[frame.macro] = (commas[0] if commas else match.start(), match.start())
            variable = code[frame.start : commas[0] - 1].strip() if commas else ""
            for index, start in enumerate(commas):
                last = index + 1 == len(commas)
                end = match.start() if last else commas[index + 1] - 1
                item = None
                if frame.name == "map" and last:
                    item = ""  # what it adds to its list: the value of this argument
                elif frame.name == "filter" and re.fullmatch(r"[A-Za-z_]\w*", variable):
                    item = variable  # what it adds: the item itself
                wraps.append((start, end, frame.macro, item))
    selects: list[list[str]] = [[] for _ in builds]
    for match in _SELECT.finditer(code):
        holders = [i for i, (start, end) in enumerate(spans) if start <= match.start() < end]
        if holders:
            selects[max(holders, key=lambda i: spans[i][0])].append(match.group(1))
    out = _wrapped(expression, 0, len(expression), sorted(wraps))
    found = tuple(
        Comprehension(builds[i], parents[i], tuple(selects[i])) for i in range(len(builds))
    )
    return out, found


def _wrapped(
    expression: str, low: int, high: int, wraps: list[tuple[int, int, int, str | None]]
) -> str:
    """``expression[low:high]`` with each comprehension argument in it wrapped in a step;
    a ``map``'s value is written twice, once handed to the step to be measured."""
    out: list[str] = []
    position = low
    for start, end, macro, item in wraps:
        if start < position or end > high or (start, end) == (low, high):
            continue  # inside an argument already wrapped, outside this part, or this one
        inner = _wrapped(expression, start, end, wraps)
        out.append(expression[position:start])
        arguments = str(macro)
        if item == "":
            arguments = f"{macro}, ({inner})"
        elif item is not None:
            arguments = f"{macro}, {item}"
        out.append(f"({STEP_FUNCTION}({arguments}) ? ({inner}) : null)")
        position = end
    out.append(expression[position:high])
    return "".join(out)


def joined_operands(expression: str) -> int:
    """How many lists a ``+`` chain of the expression may join at most: every ``+`` counted
    (outside string literals), plus one."""
    return without_strings(expression).count("+") + 1


def literal_items(expression: str) -> int:
    """The most items a list or map literal of the expression may have: its commas, plus
    one."""
    return without_strings(expression).count(",") + 1


def widest_literal(expression: str) -> int:
    """The most items a list or map literal (``[a, b]``, ``{"k": a}``) of the expression
    has: the commas directly inside its brackets, plus one; 1 without one."""
    frames: list[list[int]] = []  # per open bracket: [whether a literal, its commas]
    widest = 1
    for match in _TOKEN.finditer(without_strings(expression)):
        kind = match.lastgroup
        if kind == "open":
            frames.append([match.group(0) in "[{", 0])
        elif kind == "macro":
            frames.append([False, 0])
        elif kind == "comma" and frames:
            frames[-1][1] += 1
        elif kind == "close" and frames:
            literal, commas = frames.pop()
            if literal:
                widest = max(widest, commas + 1)
    return widest


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


@dataclass(frozen=True)
class _Measured:
    total: int
    longest: int
    largest_item: int
    """The size of the largest item of any list."""
    longest_text: int
    """The length of the longest text anywhere (a mapping's keys too), in characters."""
    by_name: dict[str, int]
    """Per field name: the size of the largest value under it anywhere."""


def size_of_text(text: str) -> int:
    """What copying a text costs, in values."""
    return 1 + len(text) // 64


def _measure(value: Any) -> _Measured:
    """Sizes (values, items and fields counted, walked without recursion) of ``value``."""
    sizes: dict[int, int] = {}
    by_name: dict[str, int] = {}
    longest = largest_item = longest_text = 0
    stack: list[tuple[Any, bool]] = [(value, False)]
    keep: list[Any] = []  # the nodes measured, alive while their ids are keys
    while stack:
        node, done = stack.pop()
        if isinstance(node, Mapping):
            children = list(node.values())
        elif isinstance(node, list | tuple):
            children = list(node)
        else:
            sizes[id(node)] = size_of_text(node) if isinstance(node, str) else 1
            if isinstance(node, str | bytes):
                longest_text = max(longest_text, len(node))
            keep.append(node)
            continue
        if not done:
            stack.append((node, True))
            stack.extend((child, False) for child in children)
            continue
        longest = max(longest, len(children))
        total = 1 + len(children)
        for child in children:
            total += sizes[id(child)]
        if not isinstance(node, Mapping):  # a comprehension over a map sees its keys
            largest_item = max([largest_item, *(sizes[id(child)] for child in children)])
        else:
            for key, child in node.items():
                name = str(key)
                longest_text = max(longest_text, len(name))
                by_name[name] = max(by_name.get(name, 0), sizes[id(child)])
        sizes[id(node)] = total
        keep.append(node)
    return _Measured(sizes[id(value)], longest, largest_item, longest_text, by_name)
