"""The sandboxed Jinja environment, with bounds on time and size, and inline expressions.

Templates and document strings are user input, so they run in Jinja's sandbox with strict
undefined variables, and only ``values`` (later ``row``) plus a few harmless helpers in reach.
A template that loops forever or multiplies strings into gigabytes must end with a finding,
not hang or exhaust memory: every loop checks a deadline, and every operation that can build
a long text or list is refused before it builds past a limit (see ``_bounds``). Arithmetic
refuses a spreadsheet cell's text mixed with a number (see ``rows._cell_types``), and errors are
explained in the user's words (see ``_messages``).
"""

from __future__ import annotations

import dataclasses
import math
import re
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, MappingView
from dataclasses import dataclass
from functools import lru_cache
from types import CodeType
from typing import Any

from jinja2 import (
    BaseLoader,
    Environment,
    Template,
    TemplateError,
    TemplateSyntaxError,
    UndefinedError,
    nodes,
    pass_context,
)
from jinja2.compiler import CodeGenerator, Frame, operators
from jinja2.exceptions import SecurityError
from jinja2.filters import do_default
from jinja2.parser import Parser
from jinja2.runtime import Context, Undefined
from jinja2.sandbox import SandboxedEnvironment

from customs_batch.findings import a_or_an
from customs_batch.manifest.document import JSON
from customs_batch.manifest.jinja import _bounds
from customs_batch.manifest.jinja._messages import (
    FriendlyUndefined,
    MissingName,
    explain_missing,
    explain_python,
    source_line,
    suggest_name,
)
from customs_batch.manifest.rows._cell_types import (
    ARITHMETIC,
    EMPTY_CELL_HINT,
    EMPTY_IN_TEXT_HINT,
    CellText,
    CellTypeError,
    EmptyCell,
    EmptyCellValue,
    MixedTypes,
    UnusableCell,
    check_mix,
    emptied_column,
)

RENDER_SECONDS = 5.0
TIMEOUTS_PER_TEMPLATE = 2
"""Renders of one template (a template file, or a string of a ``forEach`` document) that
may run out of time before it is rendered no more: each takes the whole time of a render,
and a sheet of 10,000 rows would take hours to say the same 10,000 times."""
MAX_OUTPUT_CHARS = 10_000_000
MAX_MARKED_CHARS = 50_000_000
"""A template's output as rendered, with the marks that place each piece of it at its
template line (one per expression and per line of text, each holding the template's name):
what a render keeps in memory, bounded apart from the user's own characters."""
_DEADLINE_STRIDE = 1024

_clock = threading.local()
"""``deadline``: when the render in progress on this thread must stop (monotonic seconds)."""


class RenderTimeout(Exception):
    """A render ran past its deadline."""


class OutputTooLarge(Exception):
    """A render produced more text than any manifest needs."""


class MarkedOutputTooLarge(OutputTooLarge):
    """A render whose output, with the marks placing it at template lines, is over
    :data:`MAX_MARKED_CHARS` (the output itself within :data:`MAX_OUTPUT_CHARS`)."""


class NotAValue(TemplateError):
    """An expression whose result is no value a document can hold: a generator (``map``
    without ``| list``), a method not called, the whole row. Printed, it was Python's
    ``<generator object sync_do_map at 0x7f…>``: accepted as text by a free-text field,
    sent as such, and different on every run."""


class NoValueInText(NotAValue):
    """No value (an empty cell) printed inside a text under ``forEach``."""


_VALUES = (str, int, float, bool, type(None), list, tuple, dict, Mapping, Undefined)


def checked_value(value: Any) -> Any:
    """``value`` when it is data (text, a number, a list, a mapping…), else NotAValue."""
    if isinstance(value, _VALUES):
        return value
    if isinstance(value, Iterator | MappingView):
        raise NotAValue(
            "the expression gives a sequence made one item at a time (map, select, reject, "
            "unique, batch, range, items()...), not a value: add `| list`, or `| join(', ')` "
            "for text"
        )
    if callable(value):
        name = getattr(value, "__name__", None)
        called = f"`{name}()`" if isinstance(name, str) and name.isidentifier() else "`()`"
        raise NotAValue(
            f"the expression gives a function or method that is not called, not a value: "
            f"call it with {called}"
        )
    if hasattr(value, "__getitem__") and hasattr(value, "__iter__"):
        raise NotAValue(
            "the expression gives the whole row, not a value: take a cell, row['Header']"
        )
    raise NotAValue(f"the expression gives {a_or_an(type(value).__name__)} object, not a value")


_NONE_IN_TEXT = (
    "the expression gives no value (an empty cell, or null), which the text "
    "would show as the word 'None': give a default, e.g. `| default('', true)`, or test "
    "it with `is none`"
)


@pass_context
def _finalize(context: Context, value: Any) -> Any:
    """An output's value, checked as data inside lists and mappings too (their text shows
    what they hold), and bounded. Under ``forEach`` no value (None: an empty cell) is
    refused: the text would hold the word ``None``, which no cell held."""
    if value is None and "row_number" in context:
        raise NoValueInText(_NONE_IN_TEXT)
    if value.__class__ is EmptyCellValue:
        raise EmptyCell(value.column)
    checked_value(value)
    if isinstance(value, list | tuple | dict):
        _bounds.bounded_value(value)  # bounds the walk below too
        pending: list[Any] = [value]
        while pending:
            item = pending.pop()
            checked_value(item)
            if isinstance(item, list | tuple):
                pending.extend(item)
            elif isinstance(item, dict):
                pending.extend(item.keys())
                pending.extend(item.values())
        return value
    return _bounds.bounded_value(value)


def start_clock() -> None:
    """Start the deadline of a render (``RENDER_SECONDS`` from now)."""
    _clock.deadline = time.monotonic() + RENDER_SECONDS
    _bounds.reset()


def check_clock() -> None:
    """Raise RenderTimeout once the render in progress is past its deadline."""
    if time.monotonic() > getattr(_clock, "deadline", float("inf")):
        raise RenderTimeout


def _bounded_range(*args: int) -> Iterator[int]:
    """``range`` that stops a render at its deadline (a loop only spins through ranges),
    refused past ``_bounds.MAX_RANGE`` numbers."""
    for count, number in enumerate(_bounds.bounded_range(*args)):
        if count % _DEADLINE_STRIDE == 0:
            check_clock()
        yield number


def _defined(value: Any) -> Any:
    """``value``, or the undefined error when it is undefined: a comparison or an ``in``
    test must not be quietly false (``x in []``) or another error (``x in 'text'``)."""
    if isinstance(value, Undefined):
        value._fail_with_undefined_error()
    return value


def _json_default(value: Any) -> Any:
    """``tojson``'s hook for what JSON cannot hold: an undefined value is its own error."""
    if isinstance(value, Undefined):
        value._fail_with_undefined_error()
    if value.__class__ is EmptyCellValue:
        return None  # JSON's null, as for an empty cell of `row | tojson`
    if _is_row(value):  # `row | tojson`: the row's cells by header, typed as row.x gives them
        return {key: value[key] for key in value}
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _is_row(value: Any) -> bool:
    """Whether ``value`` is a spreadsheet row as Jinja sees it (``rows._plan.RowView``, not
    imported here: the rows package imports this module)."""
    return type(value).__name__ == "RowView" and hasattr(value, "__getitem__")


def _clocked(items: Iterable[Any]) -> Iterator[Any]:
    """The items of a ``{% for %}`` loop, checking the deadline as they go (a loop over a
    long text or list must end at the deadline like one over a range)."""
    for count, item in enumerate(items):
        if count % _DEADLINE_STRIDE == 0:
            check_clock()
        yield item


class _BoundedCodeGenerator(CodeGenerator):
    """Compiles ``~`` to a join that checks the size of its result first, every
    ``{% for %}`` to a loop that checks the deadline, and every comparison to one whose
    operands are checked for being undefined first."""

    def visit_Compare(self, node: nodes.Compare, frame: Frame) -> None:
        self.write("(")
        self._defined_operand(node.expr, frame)
        for operand in node.ops:
            self.write(f" {operators[operand.op]} ")
            self._defined_operand(operand.expr, frame)
        self.write(")")

    def _defined_operand(self, expr: nodes.Expr, frame: Frame) -> None:
        # Written as a plain call: through the sandbox's call checks it would cost as
        # much as the comparison. A literal is never undefined.
        if isinstance(expr, nodes.Literal):
            self.visit(expr, frame)
            return
        self.write("environment.defined(")
        self.visit(expr, frame)
        self.write(")")

    def visit_For(self, node: nodes.For, frame: Frame) -> None:
        if not node.recursive and not getattr(node, "clocked", False):
            node.iter = nodes.Call(
                nodes.EnvironmentAttribute("clocked"), [node.iter], [], None, None
            )
            node.clocked = True  # type: ignore[attr-defined]
        super().visit_For(node, frame)

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        self.write("environment.join_parts((")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")


TOO_DEEP = (
    "{what} nests too deeply: Python, which runs templates, allows 20 {{% for %}} loops one"
    " inside another and about 100 levels of blocks in all, and reads only a few dozen"
    " levels of brackets; move the inner part into a {{% macro %}} and call it, or nest less"
)
"""Why a template or expression that nests past what Python compiles is refused."""

_DEBUG_INFO = re.compile(r"^debug_info = '([0-9=&]*)'$", re.MULTILINE)


def _template_line_of_code(code: str, code_line: int | None) -> int | None:
    """The template line that the generated Python ``code_line`` comes from, by the
    ``debug_info`` table Jinja writes at the end of the code (``template=code&...``)."""
    found = _DEBUG_INFO.search(code)
    if code_line is None or found is None or not found.group(1):
        return None
    line = None
    for pair in found.group(1).split("&"):
        template_line, _, at = pair.partition("=")
        if int(at) > code_line:
            break
        line = int(template_line)
    return line


class NotATemplateName(TemplateError):
    """``{% include %}``, ``{% import %}`` or ``{% extends %}`` of something that is not a
    template's name (a mapping, a number, none): Jinja's own words were ``KeyError: -1`` or
    ``unhashable type: 'dict'``."""


def _check_template_name(name: Any) -> None:
    """Refuse a template name that is not text (a template, or undefined, goes on: Jinja
    takes the one and reports the other)."""
    if isinstance(name, str | Template | Undefined):
        return
    if name is None:
        what = "none"
    elif isinstance(name, Mapping):
        what = "a mapping"
    elif isinstance(name, bool | int | float):
        what = f"the number {name!r}"
    elif isinstance(name, list | tuple):
        what = "a list inside the list"
    else:
        what = a_or_an(type(name).__name__)
    raise NotATemplateName(
        "include, import and extends take a template's name as text, such as "
        f"'road/t1.yaml.j2' (or a list of such names), not {what}"
    )


class BoundedSandbox(SandboxedEnvironment):
    """The sandbox with every operation that can build a long text or list bounded (see
    ``_bounds``), arithmetic that refuses a cell's text mixed with a number, and a bounded
    ``range`` as the only looping helper.

    A template that nests deeper than Python can parse or compile (21 ``{% for %}`` loops one
    inside another, about 100 levels of blocks, a few dozen levels of brackets) is a syntax
    error at its line, not Python's ``SyntaxError`` about the generated code, whose line
    numbers are not the template's."""

    def _parse(self, source: str, name: str | None, filename: str | None) -> nodes.Template:
        parser = Parser(self, source, name, filename)
        try:
            return parser.parse()
        except RecursionError:
            line = parser.stream.current.lineno
            message = TOO_DEEP.format(what="the template" if filename else "the expression")
            raise TemplateSyntaxError(message, line, name, filename) from None

    def _generate(
        self,
        source: nodes.Template,
        name: str | None,
        filename: str | None,
        defer_init: bool = False,
    ) -> str:
        try:
            return super()._generate(source, name, filename, defer_init)
        except RecursionError:
            message = TOO_DEEP.format(what="the template" if filename else "the expression")
            raise TemplateSyntaxError(message, 1, name, filename) from None

    def _compile(self, source: str, filename: str) -> CodeType:
        try:
            return super()._compile(source, filename)
        except (SyntaxError, RecursionError) as error:
            code_line = error.lineno if isinstance(error, SyntaxError) else None
            line = _template_line_of_code(source, code_line) or 1
            shown = None if filename == "<template>" else filename
            message = TOO_DEEP.format(what="the template" if shown else "the expression")
            raise TemplateSyntaxError(message, line, None, shown) from None

    def wrap_str_format(self, value: Any) -> Any:
        # The sandbox makes format's result of the text's own type: for a cell's text,
        # CellText(...) without its column ended the render with "CellText.__new__() missing
        # 1 required positional argument". The result is plain text, as any str method's.
        owner = getattr(value, "__self__", None)
        if isinstance(owner, CellText) and getattr(value, "__name__", "") in (
            "format",
            "format_map",
        ):
            value = getattr(str(owner), value.__name__)
        return super().wrap_str_format(value)

    def compile_expression(self, source: str, undefined_to_none: bool = True) -> Any:
        try:
            return super().compile_expression(source, undefined_to_none)
        except RecursionError:
            message = TOO_DEEP.format(what="the expression")
            raise TemplateSyntaxError(message, 1) from None

    def get_template(self, name: Any, parent: Any = None, globals: Any = None) -> Any:
        _check_template_name(name)
        return super().get_template(name, parent, globals)

    def select_template(self, names: Any, parent: Any = None, globals: Any = None) -> Any:
        if not isinstance(names, Undefined):
            if not isinstance(names, list | tuple):
                _check_template_name(names)  # not a name either: refused, said as a name
            for name in names:
                _check_template_name(name)
        return super().select_template(names, parent, globals)

    intercepted_binops = ARITHMETIC
    code_generator_class = _BoundedCodeGenerator
    concat = staticmethod(_bounds.bounded_concat)
    join_parts = staticmethod(_bounds.bounded_join)
    clocked = staticmethod(_clocked)
    defined = staticmethod(_defined)

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        check_clock()
        check_mix(operator, left, right)
        if operator == "**" and isinstance(right, int) and abs(right) > 64:
            raise SecurityError("exponent too large")
        _bounds.binop_size(operator, left, right)
        return _bounds.account(repr(operator), super().call_binop(context, operator, left, right))

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        check_clock()
        args = _bounds.check_method(__obj, args, kwargs)
        result = super().call(__context, __obj, *args, **kwargs)
        return _bounds.account("a call", result)


def _default(value: Any, default_value: Any = "", boolean: bool = False) -> Any:
    """Jinja's ``default``, which replaces an empty cell as it does an undefined value: an
    empty cell is no value."""
    if value.__class__ is EmptyCellValue:
        # `default(none)` asks for no value: the empty cell stays one (never `NONE` after
        # `| upper`, which None would give).
        return value if default_value is None else default_value
    return do_default(value, default_value, boolean)


def _is_none(value: Any) -> bool:
    """Jinja's ``none`` test, which an empty cell passes too."""
    return value is None or value.__class__ is EmptyCellValue


def make_environment(**options: Any) -> BoundedSandbox:
    """A sandboxed environment with strict undefined and only harmless globals."""
    env = BoundedSandbox(
        undefined=FriendlyUndefined, autoescape=False, finalize=_finalize, **options
    )
    env.filters["default"] = env.filters["d"] = _default
    env.tests["none"] = _is_none
    env.filters = {name: _bounds.bounded_filter(name, f) for name, f in env.filters.items()}
    env.policies["json.dumps_kwargs"] = {"sort_keys": True, "default": _json_default}
    env.globals.clear()
    env.globals.update(range=_bounded_range, dict=dict)
    return env


FIX_TEMPLATE = "Fix the template."
"""The hint of a problem that has no better one."""


@dataclass(frozen=True)
class JinjaProblem:
    """Why a render failed: rule id, message, the 1-based line in the template (0: unknown)
    and, for an error found while compiling a template file, that file."""

    rule: str
    message: str
    line: int = 0
    file: str | None = None
    hint: str = "Fix the template."  # FIX_TEMPLATE
    column: int = 0
    cell_column: str | None = None
    """For a problem of one spreadsheet cell: its column's header."""


_TOO_LARGE = "A manifest value needs far less; build smaller texts and lists in the template."
_MARKED_TOO_LARGE = (
    "Print fewer, larger values (one {{ … }} for a whole list, e.g. {{ items | tojson }}, "
    "rather than one per item), or give the template a shorter name."
)
_TOO_MANY_DIGITS = "integer string conversion"
"""In Python's error for an integer too long to convert to or from text."""


def problem_of(
    error: BaseException, filename: str | None, expression: str | None = None
) -> JinjaProblem:
    """The finding-ready description of an error raised while compiling or rendering a
    template file (``filename``) or a document string (``expression``). An error raised in
    a template that ``filename`` includes or imports is placed in that template (``file``),
    at its line, not at the line of ``filename`` that reached it."""
    inner = None if filename is None else _inner_template(error, filename)
    if inner is None:
        return _problem_of(error, filename, expression)
    return dataclasses.replace(_problem_of(error, inner, expression), file=inner)


def _inner_template(error: BaseException, filename: str) -> str | None:
    """The template file other than ``filename`` whose code ran last before ``error``: Jinja
    rewrites the traceback so that each frame of template code is a frame of its own whose
    globals hold the error (``__jinja_exception__``) and whose code has the template's file
    name. A syntax error carries its own file and line already."""
    if isinstance(error, TemplateSyntaxError):
        return None
    inner = None
    tb = error.__traceback__
    while tb is not None:
        if "__jinja_exception__" in tb.tb_frame.f_globals:
            inner = tb.tb_frame.f_code.co_filename
        tb = tb.tb_next
    return inner if inner not in (None, filename, "<template>", "<unknown>") else None


def _problem_of(
    error: BaseException, filename: str | None, expression: str | None = None
) -> JinjaProblem:
    if isinstance(error, TemplateSyntaxError):
        message = f"syntax error: {error.message}"
        known = [*_INLINE.filters, *_INLINE.tests]
        hint = suggest_name(error.message or "", known) or FIX_TEMPLATE
        return JinjaProblem("template.error", message, error.lineno, error.filename, hint)
    line = _template_line(error, filename)
    if isinstance(error, MixedTypes):
        return JinjaProblem(
            "row.mixed-types", str(error), line, hint=error.hint, cell_column=error.column
        )
    if isinstance(error, EmptyCell):  # a template's expression made an empty cell text
        message = "the cell is empty, and the template's expression needs it"
        return JinjaProblem(
            "row.empty-cell", message, line, hint=EMPTY_IN_TEXT_HINT, cell_column=error.column
        )
    if isinstance(error, UnusableCell):
        return JinjaProblem(error.rule, str(error), line, hint=error.hint, cell_column=error.column)
    if isinstance(error, CellTypeError):
        return JinjaProblem(
            "row.cell-type", str(error), line, hint=error.hint, cell_column=error.column
        )
    if isinstance(error, MissingName):
        emptied = emptied_column(error.owner, error.name)
        if emptied is not None:
            message = f"the cell is empty, and values.{error.name} (taken from it) is needed"
            return JinjaProblem(
                "row.empty-cell", message, line, hint=EMPTY_CELL_HINT, cell_column=emptied
            )
        text = expression if expression is not None else source_line(filename, line)
        said = explain_missing(error, text)
        column = said.column if expression is None else 0
        return JinjaProblem("template.undefined", said.message, line, hint=said.hint, column=column)
    if isinstance(error, UndefinedError):
        return JinjaProblem("template.undefined", f"undefined: {error.message}", line)
    if isinstance(error, RenderTimeout):
        message = f"rendering took longer than {RENDER_SECONDS:g} seconds (an endless loop?)"
        return JinjaProblem("template.timeout", message, line)
    if isinstance(error, _bounds.TooLarge):
        return JinjaProblem("template.too-large", f"refused: {error}", line, hint=_TOO_LARGE)
    if isinstance(error, ValueError) and _TOO_MANY_DIGITS in str(error):
        # Python's own words told the user to call sys.set_int_max_str_digits().
        message = (
            f"refused: a number of more than {sys.get_int_max_str_digits():,} digits cannot "
            "be written as text"
        )
        return JinjaProblem("template.too-large", message, line, hint=_TOO_LARGE)
    if isinstance(error, MarkedOutputTooLarge):
        message = (
            f"the rendered output, with the marks that place each of its values and lines at "
            f"its template line (one per expression and per line of text, each holding the "
            f"template's name), is longer than {MAX_MARKED_CHARS:,} characters"
        )
        return JinjaProblem("template.too-large", message, line, hint=_MARKED_TOO_LARGE)
    if isinstance(error, OutputTooLarge | MemoryError):
        message = f"the rendered output is longer than {MAX_OUTPUT_CHARS:,} characters"
        return JinjaProblem("template.too-large", message, line, hint=_TOO_LARGE)
    if isinstance(error, RecursionError):
        message = (
            "endless recursion (a macro that calls itself, or a template that includes itself?)"
        )
        return JinjaProblem("template.error", message, line)
    if isinstance(error, TemplateInString):
        return JinjaProblem("template.error", str(error), line, hint=_TEMPLATE_IN_STRING_HINT)
    if isinstance(error, SecurityError):
        return JinjaProblem("template.error", f"not allowed in a template: {error}", line)
    if isinstance(error, TemplateError):
        return JinjaProblem("template.error", error.message or str(error), line)
    message = explain_python(error, line if filename else 0)
    return JinjaProblem("template.error", message, line)


def _template_line(error: BaseException, filename: str | None) -> int:
    """The template line of the innermost traceback frame that ran the template's code.

    Jinja rewrites tracebacks so that frames of template code carry the template's file name
    and line numbers.
    """
    line = 0
    tb = error.__traceback__
    while tb is not None:
        code_file = tb.tb_frame.f_code.co_filename
        if code_file == filename or (filename is None and code_file == "<template>"):
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


class TemplateInString(TemplateError):
    """``{% include %}``, ``{% import %}`` or ``{% extends %}`` in a manifest's own string:
    only a template file reads other templates."""


_TEMPLATE_IN_STRING_HINT = (
    "Put the text in templates/NAME.yaml.j2 and name it in the document with "
    "`template: NAME`: its output is merged under spec (docs/templates.md)."
)


class _NoTemplates(BaseLoader):
    """The loader of a manifest's strings: they read no template (Jinja's own words were
    'no loader for this environment specified')."""

    def get_source(self, environment: Environment, template: str) -> Any:
        raise TemplateInString(
            f"a manifest's string cannot include, import or extend a template ({template!r}): "
            "only a template file can"
        )


_INLINE = make_environment(loader=_NoTemplates())
_SINGLE_EXPRESSION = re.compile(r"\{\{((?:(?!\}\}|\{\{|\{%|%\}).)*)\}\}", re.DOTALL)


@lru_cache(maxsize=4096)
def _compiled_text(text: str) -> Any:
    return _INLINE.from_string(text)


@lru_cache(maxsize=4096)
def _compiled_expression(source: str) -> Any:
    return _INLINE.compile_expression(source, undefined_to_none=False)


def render_inline(text: str, context: Mapping[str, Any], *, as_text: bool) -> JSON:
    """Render a document string holding ``{{ … }}`` or ``{% … %}``.

    A string that is exactly one ``{{ expr }}`` takes the type of the value, unless ``as_text``
    (the schema allows only a string there). Raises what Jinja raises; see :func:`problem_of`.
    """
    start_clock()
    whole = _SINGLE_EXPRESSION.fullmatch(text)
    if whole is not None and not as_text:
        value = _compiled_expression(whole.group(1))(**context)
        if isinstance(value, Undefined):
            value._fail_with_undefined_error()
        return to_json(value)
    rendered = _compiled_text(text).render(**context)
    if len(rendered) > MAX_OUTPUT_CHARS:
        raise OutputTooLarge
    return rendered


def to_json(value: Any) -> JSON:
    """A Jinja result as a JSON-like value: containers copied, anything else as text.
    Raises ``_bounds.TooLarge`` for a value too large to copy."""
    _bounds.bounded_value(value)
    return _copied(value)


def _copied(value: Any) -> JSON:
    if value.__class__ is EmptyCellValue:
        return None  # an empty cell: no value, as a lone {{ row.x }} gives
    checked_value(value)
    if isinstance(value, float) and not math.isfinite(value):
        # JSON has none: it became null on the way, "must be of type number, got null"
        raise NotAValue(
            f"the expression gives {value}, not a number JSON can hold (a result too large, "
            "or of an undefined operation such as inf - inf)"
        )
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str):
        return str(value)  # a cell's text (a str subclass) as plain text
    if isinstance(value, Mapping):
        return {str(k): _copied(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_copied(v) for v in value]
    return str(value)
