"""Bounds on what one render may build, checked before the building.

A check of the final output comes too late: ``'a'|center(1500000000)`` or a string doubled
in a macro allocates gigabytes before any output exists. So every operation of the sandbox
that can make a long text or list (``*``, ``+``, ``%``, ``~``, the filters with a size
argument, string methods, macro results, ``{% set %}`` blocks, ``range``) first works out
how long its result would be and refuses past :data:`MAX_VALUE`; and everything built is
counted against a per-render allowance (:data:`MAX_BUILT`), so many values just under the limit
cannot add up to gigabytes either. A refusal raises :class:`TooLarge`, which names the
operation and the limit and becomes a ``template.too-large`` finding at the template line.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from jinja2.filters import make_attrgetter
from jinja2.utils import _PassArg

MAX_VALUE = 10_000_000
"""Characters (or items) one value may have: the size of the largest output."""
MAX_BUILT = 50_000_000
"""Characters (or items) one render may build in all."""
MAX_INT_BITS = 100_000
"""Bits an integer result may have (a 30,000-digit number)."""
MAX_RANGE = 1_000_000
_built = threading.local()
_FORMAT_WIDTHS = re.compile(r"\d+")


class TooLarge(Exception):
    """An operation would build more than a render may."""

    def __init__(self, what: str, size: int, limit: int) -> None:
        super().__init__(what)
        self.what, self.size, self.limit = what, size, limit

    def __str__(self) -> str:
        return (
            f"{self.what} would build {self.size:,} characters or items; the limit is "
            f"{self.limit:,}"
        )


def reset() -> None:
    """Start counting for a new render."""
    _built.count = 0


def refuse_over(what: str, size: int, limit: int = MAX_VALUE) -> None:
    """Raise TooLarge when ``size`` is past ``limit``."""
    if size > limit:
        raise TooLarge(what, size, limit)


_SIZED = (str, list, tuple, dict)
_CONTAINERS = (list, tuple, set, frozenset, dict)
_SMALL = 64
"""Values shorter than this are not counted against the allowance (the deadline bounds how
many a render can make)."""


def account(what: str, value: Any) -> Any:
    """Count ``value`` (a text or a container just built) against the render's allowance."""
    if value.__class__ in _SIZED or isinstance(value, _SIZED):
        size = len(value)
        if size < _SMALL:
            return value
        refuse_over(what, size)
        count = getattr(_built, "count", 0) + size
        _built.count = count
        if count > MAX_BUILT:
            raise TooLarge(f"{what} (with all built before it)", count, MAX_BUILT)
    return value


def text_size(value: Any, limit: int = MAX_VALUE) -> int:
    """About how long ``str(value)`` is, counted no further than just past ``limit``.

    A container met again (a list holding the same big list a million times) is counted
    from memory, not walked again.
    """
    return _text_size(value, limit, {})


def _text_size(value: Any, limit: int, seen: dict[int, int]) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value.bit_length() // 3 + 1
    if not isinstance(value, _CONTAINERS):
        return 8
    known = seen.get(id(value))
    if known is not None:
        return known
    size = 2 + 3 * len(value)  # at least a character and a separator per item
    if size <= limit:
        size = 2
        items: Iterable[Any] = value.items() if isinstance(value, dict) else value
        for item in items:
            size += 2 + _text_size(item, limit - size, seen)
            if size > limit:
                break
    seen[id(value)] = size
    return size


def check_args(what: str, args: Iterable[Any]) -> None:
    """Refuse arguments whose text would already be too long to make."""
    for arg in args:
        if isinstance(arg, _CONTAINERS):
            refuse_over(what, text_size(arg))


def check_format(what: str, template: str, args: Any) -> None:
    """Refuse a ``%`` or ``format`` whose widths or arguments would make a long text."""
    if "*" in template:
        raise TooLarge(f"{what} with a '*' width", MAX_VALUE + 1, MAX_VALUE)
    widths = sum(int(n) for n in _FORMAT_WIDTHS.findall(template) if len(n) < 12)
    widths += sum(10**12 for n in _FORMAT_WIDTHS.findall(template) if len(n) >= 12)
    values = args.values() if isinstance(args, Mapping) else args
    if not isinstance(values, list | tuple) and not isinstance(args, Mapping):
        values = (args,)
    size = len(template) + widths + sum(text_size(v) for v in values)
    refuse_over(what, size)


def binop_size(operator: str, left: Any, right: Any) -> None:
    """Refuse ``left operator right`` when the result would be too large."""
    if operator == "+" and isinstance(left, str | list | tuple) and isinstance(right, type(left)):
        refuse_over("'+'", len(left) + len(right))
    elif operator == "*":
        if isinstance(left, int) and not isinstance(right, int):
            left, right = right, left
        if isinstance(left, str | list | tuple) and isinstance(right, int):
            refuse_over("'*'", len(left) * right)
        elif _is_int(left) and _is_int(right):
            refuse_over("'*' on integers", left.bit_length() + right.bit_length(), MAX_INT_BITS)
    elif operator == "**" and _is_int(left) and _is_int(right) and abs(left) > 1:
        refuse_over("'**'", left.bit_length() * abs(right), MAX_INT_BITS)
    elif operator == "%" and isinstance(left, str):
        check_format("'%' formatting", left, right)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def bounded_join(parts: Iterable[Any]) -> str:
    """``~``: the parts as text, joined, when the result is not too large."""
    texts = []
    for part in parts:
        if part.__class__ is not str:
            if isinstance(part, _CONTAINERS):
                refuse_over("'~'", text_size(part))
            part = str(part)
        texts.append(part)
    refuse_over("'~'", sum(map(len, texts)))
    return str(account("'~'", "".join(texts)))


def bounded_concat(parts: Iterable[str]) -> str:
    """A block's output joined (a macro's result, a ``{% set %}`` block, a render)."""
    texts = list(parts)
    refuse_over("a block's output", sum(map(len, texts)))
    return str(account("a block's output", "".join(texts)))


# -- filters and methods ------------------------------------------------------------------


def _width(what: str, width: Any) -> None:
    if isinstance(width, int):
        refuse_over(what, width)


def _check_center(s: Any, width: Any = 80, *_: Any, **__: Any) -> None:
    _width("center", width)


def _check_indent(s: Any, width: Any = 4, *_: Any, **__: Any) -> None:
    text = str(s)
    pad = width if isinstance(width, int) else len(str(width))
    refuse_over("indent", len(text) + (text.count("\n") + 1) * max(pad, 0))


def _check_wordwrap(
    s: Any, width: Any = 79, break_long_words: Any = True, wrapstring: Any = None, **_: Any
) -> None:
    text = str(s)
    wrapstring = wrapstring if isinstance(wrapstring, str) else "\n"
    step = max(width, 1) if isinstance(width, int) else 1
    refuse_over("wordwrap", len(text) + (len(text) // step + 1) * len(wrapstring))


def _check_replace(s: Any, old: Any = "", new: Any = "", count: Any = None, **_: Any) -> None:
    text, old, new = str(s), str(old), str(new)
    found = text.count(old) if old else len(text) + 1
    if isinstance(count, int) and count >= 0:
        found = min(found, count)
    refuse_over("replace", len(text) + found * max(len(new) - len(old), 0))


def listed(what: str, value: Any) -> Any:
    """``value`` as a list when it is an iterator (``map``, ``select``, a generator), so that
    its size is known before it is joined: unsized, it was joined unchecked (a million
    items joined by 999 commas built a gigabyte). Refused past :data:`MAX_VALUE` items."""
    if isinstance(value, str | list | tuple | dict | set | frozenset):
        return value
    try:
        items = iter(value)
    except TypeError:
        return value  # not iterable: the caller's own error says so
    listed = list(itertools.islice(items, MAX_VALUE + 1))
    refuse_over(what, len(listed))
    return listed


def _check_join(value: Any, d: Any = "", *_: Any, **__: Any) -> None:
    if isinstance(value, list | tuple):
        refuse_over("join", text_size(value) + len(str(d)) * len(value))


def _check_format(value: Any, *args: Any, **kwargs: Any) -> None:
    check_format("format", str(value), kwargs or args)


def _check_batch(value: Any, linecount: Any = 1, *_: Any, **__: Any) -> None:
    _width("batch", linecount)


def _check_slice(value: Any, slices: Any = 1, *_: Any, **__: Any) -> None:
    _width("slice", slices)


def _check_tojson(value: Any, indent: Any = None, **_: Any) -> None:
    if isinstance(indent, int):
        refuse_over("tojson's indent", indent, 64)


def _check_truncate(
    s: Any, length: Any = 255, killwords: Any = False, end: Any = "...", **_: Any
) -> None:
    refuse_over("truncate", len(str(s)) + len(str(end)))


_FILTER_CHECKS: dict[str, Callable[..., None]] = {
    "center": _check_center,
    "indent": _check_indent,
    "wordwrap": _check_wordwrap,
    "replace": _check_replace,
    "join": _check_join,
    "format": _check_format,
    "batch": _check_batch,
    "slice": _check_slice,
    "tojson": _check_tojson,
    "truncate": _check_truncate,
}


def bounded_filter(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` (a filter) with its arguments and its result checked."""
    check = _FILTER_CHECKS.get(name)
    skip = 1 if _PassArg.from_obj(function) is not None else 0
    what = f"the filter {name}"

    @functools.wraps(function)
    def bounded(*args: Any, **kwargs: Any) -> Any:
        if name == "join" and len(args) > skip:
            args = (*args[:skip], listed(what, args[skip]), *args[skip + 1 :])
        check_args(what, args)
        if kwargs:
            check_args(what, kwargs.values())
        if check is not None:
            with contextlib.suppress(TypeError):  # wrong arguments: the filter says so
                check(*args[skip:], **kwargs)
        if name == "sum":
            return _bounded_sum(args[0] if skip else None, *args[skip:], **kwargs)
        return account(what, function(*args, **kwargs))

    return bounded


def _bounded_sum(
    environment: Any, iterable: Iterable[Any], attribute: Any = None, start: Any = 0
) -> Any:
    """Jinja's ``sum``, each addition checked before it is made, as ``+`` is.

    ``attribute`` picks a field of each item (``items|sum(attribute='gross')``) the way
    Jinja's own filter does, through the sandbox's attribute lookup; what is added is then
    bounded like any other item.
    """
    if attribute is not None:
        iterable = map(make_attrgetter(environment, attribute), iterable)
    total = start
    if isinstance(start, list):
        # Lists are extended in place: each item is copied once, and the size is checked
        # before it is (adding list to list again and again would copy quadratically).
        total = list(start)
        for item in iterable:
            if not isinstance(item, list):
                total = total + item  # the same TypeError as Jinja's own sum
            binop_size("+", total, item)
            total.extend(item)
        return account("the filter sum", total)
    for item in iterable:
        binop_size("+", total, item)
        total = total + item
    return account("the filter sum", total)


_WIDTH_METHODS = frozenset({"center", "ljust", "rjust", "zfill"})


def check_method(
    function: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any]
) -> tuple[Any, ...]:
    """Refuse a call of a text method that would build too long a text; the arguments to
    call it with (an iterator given to ``join`` as a list, its size known)."""
    function = getattr(function, "__wrapped__", function)  # the sandbox wraps str.format
    owner = getattr(function, "__self__", None)
    name = getattr(function, "__name__", "")
    if isinstance(owner, str) and name == "join" and args:
        args = (listed("the method join", args[0]), *args[1:])
    check_args(f"the call {name}()", (*args, *kwargs.values()))
    if not isinstance(owner, str):
        return args
    what = f"the method {name}"
    if name in _WIDTH_METHODS and args:
        _width(what, args[0])
    elif name == "expandtabs":
        size = args[0] if args and isinstance(args[0], int) else 8
        refuse_over(what, len(owner) + owner.count("\t") * size)
    elif name == "replace" and len(args) >= 2:
        _check_replace(owner, *args, **kwargs)
    elif name == "join" and args:
        _check_join(list(args[0]) if isinstance(args[0], list | tuple) else [], owner)
    elif name in ("format", "format_map"):
        check_format(what, owner, args[0] if name == "format_map" and args else (args or kwargs))
    return args


def bounded_value(value: Any) -> Any:
    """``value`` when its text is not too long to make (an output, an expression's result)."""
    if isinstance(value, _CONTAINERS):
        refuse_over("the value", text_size(value))
    return value


def bounded_range(*args: int) -> range:
    """``range``, refused past :data:`MAX_RANGE` items."""
    numbers = range(*args)
    refuse_over("range", len(numbers), MAX_RANGE)
    return numbers
