"""One walked document to a :class:`Document`: inline Jinja, the template merged under
``spec``, references and positions. Every problem is a finding; a document with an error
finding is not built, so later stages never see half a document.

Jinja and the template machinery are imported by the first document that has a Jinja string
or a template: a run over plain manifests never pays for them (see docs/benchmarks.md, "CLI
start-up")."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from customs_batch.findings import JsonPath, Severity
from customs_batch.kinds import MAX_NAME, NAME_PATTERN
from customs_batch.manifest.document import JSON, Document, Position, Reference, nothing
from customs_batch.manifest.documents._envelope import Envelope
from customs_batch.manifest.documents._references import SYNTAX_HINT, parse_references
from customs_batch.manifest.yaml._source_map import SourceMap
from customs_batch.manifest.yaml._tree import Walk

if TYPE_CHECKING:
    from customs_batch.manifest.jinja._engine import JinjaProblem
    from customs_batch.manifest.templates._output import TemplateOutput

_NAME = re.compile(rf"[A-Za-z0-9][A-Za-z0-9._-]{{0,{MAX_NAME - 1}}}")
_NAME_CHARACTERS = re.compile(NAME_PATTERN)
_NAME_CHARACTER = re.compile(r"[A-Za-z0-9._-]")


def name_problem(name: Any, rules: str) -> tuple[str, str] | None:
    """Why ``name`` cannot be a document's name, and what to do (None: it can). A name of
    the right characters but too long says so: "is not a document name" with a hint of
    rules the name keeps left the user to count to 200."""
    if isinstance(name, str) and _NAME.fullmatch(name):
        return None
    if isinstance(name, str) and _NAME_CHARACTERS.fullmatch(name):
        return (
            f"the name is {len(name)} characters long, more than the {MAX_NAME} a name may have",
            f"Shorten the name to {MAX_NAME} characters at most (metadata.name, or the cells "
            "it is made from).",
        )
    if isinstance(name, str) and name != name.strip() and _NAME.fullmatch(name.strip()):
        # A cell's or a quoted value's space, invisible in the sheet and the editor.
        ends = [e for e, s in (("start", name.lstrip()), ("end", name.rstrip())) if s != name]
        return (
            f"{name!r} is not a document name",
            f"Remove the space at its {' and '.join(ends)} (in metadata.name, or the cell it "
            "is taken from): a name holds no spaces.",
        )
    wrong = None
    if isinstance(name, str):
        wrong = next((c for c in name if not _NAME_CHARACTER.fullmatch(c)), None)
    if wrong is not None:
        # "holds letters" told a name 'dép-1' nothing: é is a letter, to its writer.
        if wrong == " ":
            said = "a space is not one of them: write '-' instead"
        elif wrong.isspace():
            # U+00A0 from a web page or a word processor, pasted into a cell: it shows as a
            # space, or as nothing at the end of a cell, so "a space" sent the user looking
            # for one that is not there.
            said = (
                f"{_space_name(wrong)} (U+{ord(wrong):04X}, which shows as a space or as "
                "nothing) is not one of them: remove it, or write '-' instead"
            )
        elif wrong.isalpha():
            said = f"{wrong!r} is not one of them: letters A-Z and a-z only, without accents"
        else:
            said = f"{wrong!r} is not one of them"
        return f"{name!r} is not a document name", f"{rules.rstrip('.')}; {said}."
    return f"{name!r} is not a document name", rules


def _space_name(character: str) -> str:
    """``a non-breaking space``, ``a tab``: a space other than U+0020, as a person names it."""
    named = {
        "\u00a0": "a non-breaking space",
        "\t": "a tab",
        "\u202f": "a narrow non-breaking space",
    }
    return named.get(character, f"the space character {unicodedata.name(character, '')}".strip())


_RENDER_ORDER = {"values": 0, "metadata": 1, "spec": 2}
_JINJA_HINT = "Fix the Jinja expression; the document's values are available as 'values'."


@dataclass(frozen=True)
class Source:
    """Where the document was written and where its project is."""

    position: Position
    project_root: Path
    index: int


def assemble(
    data: dict[str, Any], envelope: Envelope, walk: Walk, source: Source
) -> Document | None:
    """The document, or None when ``walk.findings`` holds an error (from here or before)."""
    name = _render_jinja(data, envelope, walk)
    spec: dict[str, Any] = data.get("spec") or {}
    references = _references(walk, walk.refs)
    positions = SourceMap((walk.file, walk.marks))
    if envelope.template is not None:
        from customs_batch.manifest.templates._values_trace import ValuesTrace

        found = _template_output(envelope, walk, source.project_root)
        if found is not None:
            output, text = found
            spec = merge(output.spec, spec)
            references += _surviving(output, spec, walk)
            trace = (
                ValuesTrace(walk.file, walk.marks, envelope.values, spec, output, text)
                if text is not None and envelope.values
                else None
            )
            positions = SourceMap((walk.file, walk.marks), (output.file, output.marks), trace=trace)
    if name is None or any(f.severity is Severity.ERROR for f in walk.findings):
        return None
    return Document(
        kind=envelope.kind,
        name=name,
        spec=spec,
        source=source.position,
        index=source.index,
        depends_on=envelope.depends_on,
        previous_names=envelope.previous_names,
        labels=_rendered_labels(data, envelope),
        annotations=envelope.annotations,
        template=envelope.template,
        values=data.get("values") or nothing(),
        references=tuple(references),
        positions=positions,
    )


def _render_jinja(data: dict[str, Any], envelope: Envelope, walk: Walk) -> str | None:
    """Render the Jinja strings of values, metadata.name and spec, in that order, in place;
    the document's name afterwards (None when it is not a valid name)."""
    values: dict[str, Any] = data.get("values") or {}
    context = {"values": values}
    pending = [p for p in walk.jinja if p[0][0] in _RENDER_ORDER]
    if pending:
        _render_each(pending, data, context, walk)
    return _checked_name(data["metadata"].get("name"), envelope, walk)


def _render_each(
    pending: list[tuple[JsonPath, str, bool]],
    data: dict[str, Any],
    context: dict[str, Any],
    walk: Walk,
) -> None:
    from customs_batch.manifest.jinja._engine import FIX_TEMPLATE, problem_of, render_inline
    from customs_batch.manifest.jinja._messages import quoted_expression

    pending.sort(key=lambda p: _RENDER_ORDER[str(p[0][0])])
    for path, text, as_text in pending:
        if path[0] == "metadata" and not is_rendered_metadata(path):
            continue
        try:
            value = render_inline(text, context, as_text=as_text or path[0] == "metadata")
        except Exception as error:  # user expressions: whatever they raise is a finding
            problem = problem_of(error, None, text)
            hint = problem.hint if problem.hint != FIX_TEMPLATE else _JINJA_HINT
            walk.report_at(
                problem.rule, f"in {quoted_expression(text)}: {problem.message}", hint, path
            )
            continue
        _set(data, path, value)
        # References are read from the rendered text, not from the expression.
        walk.refs[:] = [ref for ref in walk.refs if ref[0] != path]
        if path[0] == "spec" and isinstance(value, str) and "${ref:" in value:
            walk.refs.append((path, value))


def is_rendered_metadata(path: JsonPath) -> bool:
    """Whether a Jinja string at ``path`` under ``metadata`` is rendered: the name and
    the labels' values (other metadata is read as written)."""
    return path == ("metadata", "name") or (len(path) == 3 and path[1] == "labels")


def _rendered_labels(data: dict[str, Any], envelope: Envelope) -> Mapping[str, str]:
    """The labels with their Jinja rendered (in place in ``data``), when any had some."""
    if not envelope.labels:
        return envelope.labels
    written = data["metadata"]["labels"]
    return {key: written[key] for key in envelope.labels}


def _checked_name(name: Any, envelope: Envelope, walk: Walk) -> str | None:
    rules = "A name starts with a letter or digit and holds letters, digits, '.', '_' and '-'."
    problem = name_problem(name, rules)
    if problem is None:
        return str(name)
    message, hint = problem
    walk.report_at("envelope.name", message, hint, ("metadata", "name"))
    return None


def _set(data: Any, path: JsonPath, value: JSON) -> None:
    for part in path[:-1]:
        data = data[part]
    data[path[-1]] = value


def _references(walk: Walk, found: list[tuple[JsonPath, str]]) -> list[Reference]:
    references: list[Reference] = []
    for path, text in found:
        if not path or path[0] != "spec":
            continue
        parsed, problems = parse_references(path, text)
        references += parsed
        for message in problems:
            walk.report_at("reference.syntax", message, SYNTAX_HINT, path)
    return references


def _template_output(
    envelope: Envelope, walk: Walk, project_root: Path
) -> tuple[TemplateOutput, str | None] | None:
    """The template's output and the template's text (None: not readable again)."""
    from customs_batch.manifest.templates import _render
    from customs_batch.manifest.templates._output import parse_output
    from customs_batch.manifest.templates._values_trace import template_text
    from customs_batch.manifest.templates.catalog import shadow_warning

    name = envelope.template or ""
    found = _render.find_template(project_root, name)
    if not isinstance(found, _render.TemplateSource) and found.file is not None:
        _report_in_template(walk, found.file, found)
        return None
    if not isinstance(found, _render.TemplateSource):
        hint = (
            _render.not_found_hint(name)
            if found.rule == "template.not-found"
            else "Fix the template."
        )
        walk.report_at(found.rule, found.message, hint, ("template",))
        return None
    shadow = shadow_warning(project_root.resolve(), name)
    if shadow is not None:
        walk.report_at("template.shadows-built-in", *shadow, ("template",), Severity.WARNING)
    rendered = _render.render(found, {"values": envelope.values})
    if not isinstance(rendered, _render.Rendered):
        _report_in_template(walk, rendered.file or found.file, rendered)
        return None
    output = parse_output(rendered, envelope.kind)
    walk.findings.extend(output.findings)
    return None if output.failed else (output, template_text(found))


def _report_in_template(walk: Walk, file: str, problem: JinjaProblem) -> None:
    where = walk.locate(("template",))
    message = f"{problem.message} (template used at {where.file}:{where.line})"
    walk.report_in(file, problem.line, problem.rule, message, problem.hint, problem.column)


def _surviving(output: TemplateOutput, spec: Mapping[str, Any], walk: Walk) -> list[Reference]:
    """References the template wrote that the document did not override."""
    kept: list[tuple[JsonPath, str]] = []
    for path, text in output.refs:
        value: Any = {"spec": spec}
        for part in path:
            value = _child(value, part)
        if value is text:
            kept.append((path, text))
    return _references(walk, kept)


def _child(container: Any, part: str | int) -> Any:
    if isinstance(container, dict):
        return container.get(part)
    if isinstance(container, list) and isinstance(part, int) and part < len(container):
        return container[part]
    return None


def merge(defaults: Mapping[str, Any], own: Mapping[str, Any]) -> dict[str, Any]:
    """``own`` deep-merged over ``defaults``: mappings merge recursively, ``own`` wins, lists
    are replaced. The result shares nothing mutable with ``defaults`` (it may be cached)."""
    out: dict[str, Any] = {}
    for key, base in defaults.items():
        if key not in own:
            out[key] = _copy(base)
            continue
        value = own[key]
        out[key] = (
            merge(base, value) if isinstance(value, dict) and isinstance(base, dict) else value
        )
    for key, value in own.items():
        if key not in defaults:
            out[key] = value
    return out


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _copy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copy(item) for item in value]
    return value
