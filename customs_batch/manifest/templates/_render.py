"""Default templates: ``template: NAME`` -> ``templates/NAME.yaml.j2``, rendered to YAML text.

The user's ``<project_root>/templates/`` is searched first, then the built-in templates.
Compiled templates are cached per (project root, name); a render is bounded in time (a
deadline checked by loops, and a real-time timer when on the main thread) and in size.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import signal
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from types import FrameType
from typing import Any

from jinja2 import Environment, FileSystemLoader, Template, TemplateError, TemplateNotFound
from jinja2.loaders import split_template_path
from jinja2.meta import find_referenced_templates, find_undeclared_variables

from customs_batch.line_bound import long_line_refusal
from customs_batch.manifest.dependencies import TEMPLATES, note
from customs_batch.manifest.jinja import _engine
from customs_batch.manifest.jinja._engine import (
    MAX_MARKED_CHARS,
    MAX_OUTPUT_CHARS,
    JinjaProblem,
    MarkedOutputTooLarge,
    OutputTooLarge,
    RenderTimeout,
    check_clock,
    make_environment,
    problem_of,
    start_clock,
)
from customs_batch.manifest.templates._lines import (
    SAME_PLACES,
    LineMarks,
    Places,
    mark_chars,
    strip_marks,
)
from customs_batch.resources import builtin_templates_dir
from customs_batch.userfiles import MEGABYTE, FileRefused, InputKind, note_read, read_user_file

SUFFIX = ".yaml.j2"
_NAME = re.compile(r"[A-Za-z0-9_-]+(?:[./][A-Za-z0-9_-]+)*")


@dataclass(frozen=True)
class TemplateSource:
    """A template found and compiled: its display file name and the compiled form."""

    file: str
    template: Template


@dataclass(frozen=True)
class Rendered:
    """The YAML text a template produced, and the template's display file name."""

    file: str
    text: str
    places: Places = SAME_PLACES
    """The template line and column of each piece of ``text`` (empty: the same places)."""


def search_path(project_root: Path) -> list[Path]:
    """Where ``template: NAME`` is looked for, in order."""
    return [project_root / "templates", builtin_templates_dir()]


def name_problem(name: str) -> str | None:
    """Why ``template: NAME`` cannot name ``name``, or None when it can."""
    if _NAME.fullmatch(name):
        return None
    return f"{name!r} is not a template name (letters, digits, '-', '_', '.', '/')"


_PATH_LIKE = re.compile(r"^[/\\~]|\\|(?:^|/)\.\.?(?:/|$)|//|^[A-Za-z]:")
"""A ``template:`` name written as a path: absolute, with ``..`` or ``.``, a backslash, a
drive, ``//``."""


def not_found_hint(name: str) -> str:
    """What to do when ``template: NAME`` finds no template: create it, unless ``name`` is
    no name a template can have (a path such as ``../x`` or ``/etc/passwd``: creating that
    file would not help)."""
    listed = "see 'customs-batch templates list'"
    if name_problem(name) is not None and not _PATH_LIKE.search(name):
        # ``rotterdam export``, ``Straße``: a name with a character no name takes, no path.
        return (
            "A template's name is written in letters A-Z and a-z, digits, '-', '_' and '.', its "
            f"folders under templates/ separated by '/' (templates/road/t1{SUFFIX} is "
            f"`template: road/t1`); or name a built-in template ({listed})."
        )
    if name_problem(name) is not None:
        return (
            "Write the name of a template, not a path: its file under templates/ without "
            f"{SUFFIX} (templates/road/t1{SUFFIX} is `template: road/t1`), or a built-in "
            f"template ({listed})."
        )
    if name.endswith(SUFFIX):
        return f"Write the name without {SUFFIX}: `template: {name[: -len(SUFFIX)]}`."
    return (
        f"Create templates/{name}{SUFFIX} in the project, or name a built-in template ({listed})."
    )


def find_template(project_root: Path, name: str) -> TemplateSource | JinjaProblem:
    """The compiled template ``name`` for a project, or why there is none."""
    problem = name_problem(name)
    if problem is not None:
        return JinjaProblem("template.not-found", problem)
    # Before the per-process cache: each file that uses a template depends on the folder.
    note(TEMPLATES, project_root / "templates")
    found = _find_cached(project_root.resolve(), name)
    if isinstance(found, TemplateSource) and found.template.filename:
        # Read once per process, used by each document: an input of every run all the same.
        note_read(found.template.filename, InputKind.TEMPLATE)
    return found


@lru_cache(maxsize=256)
def _find_cached(project_root: Path, name: str) -> TemplateSource | JinjaProblem:
    env = _environment(project_root)
    try:
        template = env.get_template(name + SUFFIX)
    except TemplateNotFound:
        where = " and ".join(str(p) for p in search_path(project_root))
        return JinjaProblem("template.not-found", f"no template {name}{SUFFIX} in {where}")
    except Exception as error:  # any compile error must become a finding, never a traceback
        problem = problem_of(error, None)
        file = _display(problem.file) if problem.file else None
        return dataclasses.replace(problem, file=file)
    return TemplateSource(_display(template.filename or name + SUFFIX), template)


def _display(filename: str) -> str:
    """The template's path relative to the current folder when it is below it."""
    path = Path(filename)
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return filename


class TemplateRefused(TemplateError):
    """A template file that is not read: linked out of the template folders, not a regular
    file, too large, or not UTF-8 text. ``reason`` says what, ``hint`` what to do."""

    def __init__(self, reason: str, hint: str | None = None) -> None:
        super().__init__(f"{reason}; {hint}" if hint else reason)
        self.reason = reason
        self.hint = hint


MAX_TEMPLATE_BYTES = 10 * MEGABYTE
MAX_TEMPLATE_LINES = 200_000
"""The largest template file read, and the most lines: checked in its bytes before Jinja
reads it. Compiling marks every line of a template's text with its place (:mod:`._lines`),
some 300 bytes of memory a line: a template of 100 MB of line breaks ran out of 24 GB
before any word. A template renders one document, at most 10,000,000 characters."""
_TOO_BIG_HINT = (
    "a template holds the text of one document, a few hundred lines: check that this is "
    "the template you meant (not a generated or copied-over file), and shorten it"
)


def read_template_file(path: Path, folders: Sequence[str | Path]) -> str:
    """The text of the template file ``path``, read as every render reads it: only when it
    resolves inside one of ``folders`` (the search path), only a regular file within the
    size limit (:func:`read_user_file`), only UTF-8 text. Raises :class:`TemplateRefused`.

    ``templates list`` and ``templates show`` read through here too, so what they show is
    exactly what ``template: NAME`` may read, and nothing else.
    """
    real = os.path.realpath(path)
    if not any(_within(real, str(root)) for root in folders):
        # A link out of the template folders could read any file of the machine (its
        # environment, the API key in it, /etc/passwd) into a finding or a request.
        raise TemplateRefused(
            f"{path}: the template resolves to {real}, outside the template folders; "
            "templates are read only from them",
            "copy the template into templates/ instead of linking to it",
        )
    try:
        data = read_user_file(
            path, limit=MAX_TEMPLATE_BYTES, raise_hint=_TOO_BIG_HINT, kind=InputKind.TEMPLATE
        )
        # Measured before Jinja reads it: a template of one 100 MB line took 12 s and 0.8 GB
        # to be compiled and rendered, and only then was its output refused.
        long_line = long_line_refusal(data, "a template")
        if long_line is not None:
            line, message, hint = long_line
            raise TemplateRefused(f"{path}:{line}: {message}", hint)
        # Jinja's own line ends: \r\n, \r or \n.
        lines = data.count(b"\n") + data.count(b"\r") - data.count(b"\r\n")
        if lines > MAX_TEMPLATE_LINES:
            raise TemplateRefused(
                f"{path}: the template has more than {MAX_TEMPLATE_LINES:,} lines; it is not read",
                _TOO_BIG_HINT,
            )
        return data.decode("utf-8")
    except FileRefused as refused:
        raise TemplateRefused(refused.message, refused.hint) from None
    except UnicodeDecodeError as error:
        reason = f"{path}: cannot read the template ({error})"
        raise TemplateRefused(reason, "save the template as UTF-8 text") from None
    except OSError as error:
        raise TemplateRefused(f"{path}: cannot read the template ({error})") from None


class _UserFileLoader(FileSystemLoader):
    """A FileSystemLoader that reads through :func:`read_template_file`: a link out of the
    template folders, a named pipe, a device or a link loop under ``templates/`` is an
    error naming it, never a leak, a hang or a huge read."""

    def get_source(
        self, environment: Environment, template: str
    ) -> tuple[str, str, Callable[[], bool]]:
        try:
            pieces = split_template_path(template)
        except TemplateNotFound:  # a name with '..': Jinja's message is the name alone
            where = ", ".join(repr(folder) for folder in self.searchpath)
            message = (
                f"{template!r} not found: templates are read only from the template folders "
                f"({where}), by a name inside them; a name with '..' is never found"
            )
            raise TemplateNotFound(template, message) from None
        for folder in self.searchpath:
            path = Path(folder, *pieces)
            if os.path.lexists(path):
                break
        else:
            return super().get_source(environment, template)  # raises TemplateNotFound
        text = read_template_file(path, self.searchpath)
        return text, os.path.normpath(path), lambda: True


def _within(real: str, folder: str) -> bool:
    root = os.path.realpath(folder)
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


@lru_cache(maxsize=64)
def _environment(project_root: Path) -> Any:
    loader = _UserFileLoader([str(p) for p in search_path(project_root)], encoding="utf-8")
    # Manifests are read once per run; checking template files for changes would only cost.
    return make_environment(
        loader=loader, auto_reload=False, keep_trailing_newline=True, extensions=[LineMarks]
    )


_RENDERED: dict[tuple[str, str], Rendered | JinjaProblem] = {}
_RENDERED_ENTRIES = 1024


def render(
    source: TemplateSource, context: Mapping[str, Any], *, remember: bool = True
) -> Rendered | JinjaProblem:
    """Render a template; any error becomes a problem naming the template line.

    Documents of a batch often give a template the same values, so renders are remembered by
    the values' JSON text (cheaper than a render by two orders of magnitude). A context that
    differs every time (a spreadsheet row) is rendered with ``remember=False``.
    """
    if not remember:
        return _render(source, context)
    try:
        values_text = json.dumps(context, sort_keys=True, default=str)
    except (TypeError, ValueError):  # not JSON after all: render without remembering
        return _render(source, context)
    key = (source.template.filename or source.file, values_text)
    known = _RENDERED.get(key)
    if known is None:
        if len(_RENDERED) >= _RENDERED_ENTRIES:
            _RENDERED.clear()
        known = _RENDERED[key] = _render(source, context)
    return known


@lru_cache(maxsize=256)
def uses_row(source: TemplateSource) -> bool:
    """Whether the template may read ``row`` or ``row_number`` (one that includes or
    imports another template is assumed to)."""
    env = source.template.environment
    loader = env.loader
    if loader is None or source.template.name is None:
        return True
    try:
        text = loader.get_source(env, source.template.name)[0]
        parsed = env.parse(text)
    except Exception:  # unreadable now: assume the worst, the render will report it
        return True
    if any(True for _ in find_referenced_templates(parsed)):
        return True
    return bool(find_undeclared_variables(parsed) & {"row", "row_number"})


_TIMED_OUT: dict[str, list[int]] = {}
"""The renders of each template file that ran out of time in this process, and the line of
the last (rendered no more after ``_engine.TIMEOUTS_PER_TEMPLATE``)."""


def _render(source: TemplateSource, context: Mapping[str, Any]) -> Rendered | JinjaProblem:
    name = source.template.filename or source.file
    timed_out = _TIMED_OUT.get(name)
    if timed_out is not None and timed_out[0] >= _engine.TIMEOUTS_PER_TEMPLATE:
        return JinjaProblem(
            "template.timeout",
            f"not rendered: rendering this template took longer than "
            f"{_engine.RENDER_SECONDS:g} seconds for {timed_out[0]} documents before it "
            "(an endless loop?)",
            timed_out[1],
        )
    try:
        with _time_limit():
            text = _bounded_output(source.template.generate(**context))
    except Exception as error:  # a template is user code: anything it raises is a finding
        problem = problem_of(error, source.template.filename)
        if problem.file is not None:  # in a template this one includes or imports
            problem = dataclasses.replace(problem, file=_display(problem.file))
        if problem.rule == "template.timeout":
            counted = _TIMED_OUT.setdefault(name, [0, 0])
            counted[0] += 1
            counted[1] = problem.line
        return problem
    clean, places = strip_marks(text, source.template.name or "")
    return Rendered(source.file, clean, places)


_COUNTED_CHUNKS = 4096


def _bounded_output(chunks: Iterator[str]) -> str:
    """The marked output of a render. The user's characters are bounded by
    ``MAX_OUTPUT_CHARS``; the marks placing them (many more for a template printing one
    short value per expression) are not theirs, but kept in memory: the marked text is
    bounded by ``MAX_MARKED_CHARS``."""
    parts: list[str] = []
    size = 0  # the user's characters
    marked = 0  # the characters kept, marks included
    # A loop yields the same pieces of the template's text (and their marks) each time.
    counted: dict[str, int] = {}
    for chunk in chunks:
        marked += len(chunk)
        marks = counted.get(chunk)
        if marks is None:
            marks = mark_chars(chunk)
            if marks and len(counted) < _COUNTED_CHUNKS:
                counted[chunk] = marks
        size += len(chunk) - marks
        if size > MAX_OUTPUT_CHARS:
            raise OutputTooLarge
        if marked > MAX_MARKED_CHARS:
            raise MarkedOutputTooLarge
        check_clock()
        parts.append(chunk)
    return "".join(parts)


@contextmanager
def _time_limit() -> Iterator[None]:
    """Bound the render: the deadline for loops, plus a timer interrupt on the main thread
    (signals can only be handled there) for code that never reaches a deadline check."""
    start_clock()
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_alarm(signum: int, frame: FrameType | None) -> None:
        raise RenderTimeout

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, _engine.RENDER_SECONDS + 1.0)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL if previous is None else previous)
