"""``forEach``: one document per data row of a spreadsheet, streamed.

The document's Jinja strings are compiled once (see ``_plan``); each row then only fills
them in. Findings of the manifest itself (a bad expression, a missing column) go to the walk,
once; findings of one row name the spreadsheet file, sheet, row and, for a value taken from
one cell, the column.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from jinja2 import TemplateSyntaxError, UndefinedError

from customs_batch.findings import (
    NOT_SHOWN,
    OUT_OF_MEMORY,
    CsvReading,
    Finding,
    JsonPath,
    Location,
    Severity,
    at_sensitive_value,
    column_letter,
)
from customs_batch.manifest.document import Document, Position, Reference
from customs_batch.manifest.documents._assemble import (
    Source,
    is_rendered_metadata,
    merge,
    name_problem,
)
from customs_batch.manifest.documents._envelope import Envelope
from customs_batch.manifest.documents._references import SYNTAX_HINT, parse_references
from customs_batch.manifest.jinja._engine import (
    FIX_TEMPLATE,
    RENDER_SECONDS,
    TIMEOUTS_PER_TEMPLATE,
    NoValueInText,
    RenderTimeout,
    TemplateInString,
    problem_of,
)
from customs_batch.manifest.jinja._messages import quoted_expression
from customs_batch.manifest.rows._cell_types import (
    EMPTY_CELL_HINT,
    EMPTY_IN_TEXT_HINT,
    CellTypeError,
    EmptyCell,
    MixedTypes,
    UnusableCell,
    ValuesOfRow,
    emptied_column,
)
from customs_batch.manifest.rows._cells import CellProblem, convert
from customs_batch.manifest.rows._options import ForEach
from customs_batch.manifest.rows._plan import (
    DROP,
    RowView,
    Slot,
    fill,
    make_slot,
    slot_tree,
    view_at,
)
from customs_batch.manifest.rows._range import NO_ROW_IN_RANGE, RowRange
from customs_batch.manifest.rows.positions import RowPositions, TracedRowPositions
from customs_batch.manifest.spreadsheet import Header, Row, RowSource, SheetError, read_rows
from customs_batch.manifest.spreadsheet.model import DateText
from customs_batch.manifest.spreadsheet.xlsx import TOTALS_ROW
from customs_batch.manifest.templates import _render
from customs_batch.manifest.templates._output import (
    COMMENT_IN_VALUE,
    TemplateOutput,
    parse_output,
)
from customs_batch.manifest.templates._values_trace import (
    CellTrace,
    copied_from,
    template_text,
)
from customs_batch.manifest.templates.catalog import shadow_warning
from customs_batch.manifest.yaml._schema_view import spec_view
from customs_batch.manifest.yaml._tree import Walk
from customs_batch.sensitive import has_sensitive, sensitive_paths, touches, values_at

_ROW_HINT = "Fix the cell in the spreadsheet, or the expression in the manifest."
_NAME_HINT = (
    "Name each row from columns of its own that tell it from the others, e.g. "
    'name: "dep-{{ row.Reference }}" (a name counting rows, {{ row_number }}, moves to '
    "another row's declaration when a row is inserted or removed above it)."
)
_EMPTY_NAME = (
    "Fill the cell with the row's own name (letters, digits, '.', '_', '-'), one that stays "
    "with the row, such as its reference; or leave the row out with rows: or delete it."
)


def expand(
    data: dict[str, Any],
    envelope: Envelope,
    walk: Walk,
    source: Source,
    rows: RowRange | None,
    *,
    partial: bool = False,
) -> Iterator[Document | Finding]:
    """The documents of every row (and the findings of rows); manifest findings go to
    ``walk.findings``. ``rows`` (from ``--rows``) overrides ``forEach.rows``.

    A spec value that cannot be had for a row (a bad cell, a column the sheet lacks, an
    expression that fails) is reported and left out; with ``partial`` the row still gives
    its document, marked with what was left out (:attr:`Document.left_out`), so that its
    other findings come in the same run."""
    assert envelope.for_each is not None
    expander = _Expander(data, envelope, walk, source, partial=partial)
    if expander.ready:
        yield from expander.run(rows or envelope.for_each.rows)


class _Expander:
    def __init__(
        self,
        data: dict[str, Any],
        envelope: Envelope,
        walk: Walk,
        source: Source,
        *,
        partial: bool = False,
    ):
        assert envelope.for_each is not None
        self.partial = partial
        self.for_each: ForEach = envelope.for_each
        self.envelope, self.walk, self.source = envelope, walk, source
        self.file = os.path.normpath(self.for_each.file)
        # A CSV file's one sheet is named after the file, as spreadsheet programs show it.
        self.stem = Path(self.file).stem
        self.kind_name = envelope.kind.value  # read per row; an enum's .value is slow
        stated = CsvReading(self.for_each.encoding, self.for_each.delimiter)
        self.reading = None if stated == (None, None) else stated
        """The encoding and delimiter ``forEach`` states, for the copies of the file: one
        for every row's position (None: detected)."""
        self.values: dict[str, Any] = data.get("values") or {}
        self.spec: dict[str, Any] = data.get("spec") or {}
        self.value_slots: list[Slot] = []
        self.name_slot: Slot | None = None
        self.label_slots: list[Slot] = []
        self.spec_slots: list[Slot] = []
        self.ready = self._compile() and self._check_name()
        self.tree = slot_tree([slot.path for slot in self.spec_slots])
        secret = has_sensitive(envelope.kind)
        self.secret_paths = frozenset(
            slot.path for slot in self.spec_slots if secret and touches(slot.path[1:])
        )
        """The spec slots that give a sensitive value (a guarantee's access code): the
        columns they read are left empty in the annotated copies, however composed."""
        self.trace_values = secret and bool(self.value_slots)
        """Whether to note the columns each value of ``values`` reads (it may become one)."""
        jinja_paths = {slot.path for slot in self.spec_slots}
        static = [(path, text) for path, text in walk.refs if path not in jinja_paths]
        self.references = self._static_references(static)
        self.template = self._find_template() if envelope.template is not None else None
        self.ready = self.ready and (envelope.template is None or self.template is not None)
        self.names: dict[str, int] = {}
        self.produced = 0
        self.reported: set[tuple[str, ...]] = set()
        self.timeouts: dict[JsonPath, int] = {}
        """The rows whose value of each slot ran out of time to render (a slot is
        rendered no more after :data:`TIMEOUTS_PER_TEMPLATE`)."""
        self.cells: dict[JsonPath, tuple[int, str]] = {}
        self.header: Header | None = None
        self.value_cells = False
        """Whether a value of ``values`` is taken from one cell (a template may copy it)."""
        self.missing: set[JsonPath] = set()
        """Spec and label slots that read a column the sheet does not have."""
        self.below: tuple[Header | None] | None = None
        """The header the first data row would be (:meth:`_header_below`); None: not read."""
        self.withheld = False
        """Whether the manifest has an error that leaves the rows whole (a type declared
        for a column the sheet lacks): rows then give documents only when ``partial``."""
        self.decimal_comma: bool | None = bool(self.for_each.decimal_comma)
        """How the row's text reads numbers (:meth:`_decimal_comma`)."""

    # -- once per document ---------------------------------------------------------------

    def _compile(self) -> bool:
        view = spec_view(self.envelope.kind)
        ok = True
        for path, text, as_text in self.walk.jinja:
            if path[0] not in ("values", "metadata", "spec") or (
                path[0] == "metadata" and not is_rendered_metadata(path)
            ):
                continue
            target = view_at(view, path[1:]) if path[0] == "spec" else None
            try:
                slot = make_slot(path, text, as_text or path[0] == "metadata", target)
            except TemplateSyntaxError as error:
                problem = problem_of(error, None)
                hint = problem.hint if problem.hint != FIX_TEMPLATE else _ROW_HINT
                self.walk.report_at(
                    problem.rule, f"in {quoted_expression(text)}: {problem.message}", hint, path
                )
                ok = False
                continue
            if path[0] == "values":
                self.value_slots.append(slot)
            elif path == ("metadata", "name"):
                self.name_slot = slot
            elif path[0] == "metadata":
                self.label_slots.append(slot)
            else:
                self.spec_slots.append(slot)
        return ok

    def _check_name(self) -> bool:
        if self.name_slot is not None:
            return True
        self.walk.report_at(
            "envelope.for-each",
            "with forEach, metadata.name must give each row its own name",
            _NAME_HINT,
            ("metadata", "name"),
        )
        return False

    def _static_references(self, found: list[tuple[JsonPath, str]]) -> list[Reference]:
        references: list[Reference] = []
        for path, text in found:
            if path[:1] == ("spec",):
                parsed, problems = parse_references(path, text)
                references += parsed
                for message in problems:
                    self.walk.report_at("reference.syntax", message, SYNTAX_HINT, path)
        return references

    def _find_template(self) -> _render.TemplateSource | None:
        name = self.envelope.template or ""
        found = _render.find_template(self.source.project_root, name)
        if isinstance(found, _render.TemplateSource):
            shadow = shadow_warning(self.source.project_root.resolve(), name)
            if shadow is not None:
                self.walk.report_at(
                    "template.shadows-built-in", *shadow, ("template",), Severity.WARNING
                )
            return found
        if found.file is not None:
            self.walk.report_in(found.file, found.line, found.rule, found.message, found.hint)
        else:
            hint = _render.not_found_hint(name)
            self.walk.report_at(found.rule, found.message, hint, ("template",))
        return None

    # -- per row -------------------------------------------------------------------------

    def run(self, rows: RowRange | None) -> Iterator[Document | Finding]:
        linked_out = self._linked_out_of_project()
        if linked_out is not None:
            yield from self._sheet_error(linked_out)
            return
        read = RowSource(
            Path(self.file),
            self.for_each.sheet,
            self.for_each.header,
            self.for_each.encoding,
            self.for_each.delimiter,
            rows.first if rows else None,
            rows.last if rows else None,
            self.for_each.limits,
        )
        count = 0
        hidden = _Hidden()
        iterator = read_rows_safely(read)
        for row in iterator:
            if isinstance(row, SheetError):
                yield from self._sheet_error(row)
                return
            if count == 0 and not self._columns_exist(row):
                return
            count += 1
            hidden.note(row)
            yield from self._row(row)
        for message, hint in hidden.said(self.file):
            self.walk.report_at("sheet.hidden", message, hint, ("forEach",), Severity.WARNING)
        if count == 0:
            self.walk.report_at(
                "envelope.for-each",
                f"{self.file} has no data rows" + (" in the rows asked for" if rows else ""),
                "Check the file, the sheet and the rows range.",
                ("forEach",),
                Severity.WARNING,
                signal=NO_ROW_IN_RANGE if rows else None,
            )

    def _linked_out_of_project(self) -> SheetError | None:
        """The error for a spreadsheet named inside the project that a symbolic link takes
        out of it (None: not so). Read, it would bring any text file of the machine (a
        ``.env`` of keys) into the findings and the requests, as a template linked out of
        the template folders would: a manifest in a pull request could print a runner's
        file in the CI log. A path written to go outside is the manifest's own word, seen in
        review, and is read. A path named through a link to the project folder (the
        manifest given as /tmp/link/m.yaml, /tmp/link -> the project) is inside it too."""
        root = os.path.realpath(self.source.project_root)
        written = os.path.abspath(self.file)
        if not _within(written, root) and not _named_under(written, root):
            return None
        real = os.path.realpath(written)
        if _within(real, root):
            return None
        return SheetError(
            f"{self.file} resolves to {real}, outside the project ({root}): a spreadsheet "
            "linked out of the project is not read",
            file=self.file,
            hint="copy the export into the project instead of linking to it, or name its "
            "own path in forEach.file",
        )

    def _columns_exist(self, row: Row) -> bool:
        header = row.header or Header(tuple(row.values), tuple(range(1, len(row.values) + 1)))
        self.header = header
        ok = True
        for name in self.for_each.columns:
            if header.locate(name) is None:  # a type for no column: the rows do not need it
                self.withheld = True
                close = difflib.get_close_matches(name, header.names, n=1)
                hint = f"Did you mean {close[0]!r}? " if close else ""
                hint += "The columns are: " + ", ".join(map(repr, header.names)) + "."
                message = f"forEach.columns names {name!r}, a column {self.file} does not have"
                self.walk.report_key(
                    "envelope.for-each", message, hint, ("forEach", "columns", name)
                )
        for slot in (
            *self.value_slots,
            *([self.name_slot] if self.name_slot else []),
            *self.label_slots,
            *self.spec_slots,
        ):
            for name in slot.headers():
                where = header.locate(name)
                if where is None:
                    if slot.path[0] in ("spec", "metadata") and slot is not self.name_slot:
                        self.missing.add(slot.path)  # left out of every row
                    else:  # the name or a value: every row needs it
                        ok = False
                    self._no_column(slot, name, header, row)
                elif slot.header is not None:
                    self.cells[slot.path] = (where[0], slot.header)
                    self.value_cells = self.value_cells or slot.path[0] == "values"
        return ok

    def _no_column(self, slot: Slot, name: str, header: Header, row: Row) -> None:
        close = difflib.get_close_matches(name, header.names, n=1)
        hint = f"Did you mean row[{close[0]!r}]? " if close else ""
        hint += "The columns are: " + ", ".join(map(repr, header.names)) + "."
        below = self._header_below(row)
        if below is not None and below.locate(name) is not None:
            hint = (
                f"Row {row.number} names the column {name!r}: if the header is that row "
                f"(a title above it), say so in forEach: `header: {row.number}`. " + hint
            )
        message = f"no column {name!r} in {self.file} ({self._sheet(row)})"
        self.walk.report_at("envelope.for-each", message, hint, slot.path)

    def _header_below(self, row: Row) -> Header | None:
        """The header ``row`` (the first data row) would be, read as the header: a title
        row above the header, read as the header with ``header:`` left at 1, made every
        column the manifest reads "missing", and the row holding them a row of values beyond
        the header. Read again once, only when a column is missing."""
        if self.below is None:
            self.below = (None,)
            if row.number > self.for_each.header:
                source = RowSource(
                    Path(self.file),
                    self.for_each.sheet,
                    row.number,
                    self.for_each.encoding,
                    self.for_each.delimiter,
                    limits=self.for_each.limits,
                )
                first = next(iter(read_rows_safely(source)), None)
                if isinstance(first, Row) and first.header is not None:
                    self.below = (first.header,)
        return self.below[0]

    def _decimal_comma(self, row: Row) -> bool | None:
        """How this sheet's text reads numbers: as ``decimalComma`` says; where it says
        nothing, a point is the decimal point in a CSV file separated by ','. In a CSV
        separated by ';', tabs or '|' (the exports of a locale that writes a decimal comma
        and groups thousands with points: Excel's "CSV" there is ';'-separated, its
        "Unicode Text" tab-separated) and in a workbook's text cells (numbers stored as
        text, which a workbook holds whatever its user's locale, and which that locale's
        CSV export writes as they are), a ``1.250`` reads two ways and is an error at its
        cell (None)."""
        stated = self.for_each.decimal_comma
        if stated is None:
            csv = row.header is not None and row.header.delimiter is not None
            points = csv and row.header is not None and row.header.delimiter == ","
            self.decimal_comma = False if points else None
        else:
            self.decimal_comma = stated
        return self.decimal_comma

    def _sheet(self, row: Row) -> str:
        return f"sheet {row.sheet!r}" if row.sheet else "CSV"

    def _row(self, row: Row) -> Iterator[Document | Finding]:
        sheet = row.sheet or self.stem
        if row.problem is not None:  # its values cannot be trusted: the row gives nothing
            at = Position(
                self.file, row.number, 0, sheet, places=row.places, reading=self.reading
            ).cell(row.problem.column, None)
            yield Finding(
                row.problem.rule,
                Severity.ERROR,
                row.problem.message,
                at.location(()),
                row.problem.hint,
            )
            return
        total = self._total_row(row, sheet)
        if total is not None:
            yield total
            return
        state = _RowState(
            Position(
                self.file,
                row.number,
                0,
                sheet,
                places=row.places,
                header=self.for_each.header,
                reading=self.reading,
            ),
            sheet,
        )
        values = copy.deepcopy(self.values) if self.value_slots else self.values
        view = RowView(row.values, self.for_each.columns, self._decimal_comma(row))
        context: dict[str, Any] = {"values": values, "row": view, "row_number": row.number}
        emptied = False
        value_reads: list[tuple[Any, set[str]]] = []
        for slot in self.value_slots:
            if self.trace_values:
                view.read = set()
            value = self._render(slot, context, state)
            if view.read is not None:
                value_reads.append((value, view.read))
                view.read = None
            if value is None and slot.header is not None and not state.failed:
                # An empty cell leaves its value out: what needs it meets it undefined.
                values = _leave_out(values, slot.path[1:], slot.header)
                context["values"] = values
                emptied = True
            else:
                _set(values, slot.path[1:], value)
        assert self.name_slot is not None
        name = self._render(self.name_slot, context, state)
        labels = self.envelope.labels
        if self.label_slots:
            labels = dict(labels)
            for slot in self.label_slots:
                if slot.path in self.missing:
                    state.leave_out(slot.path, None)
                    labels.pop(str(slot.path[2]), None)
                else:
                    self._label(labels, slot, self._render(slot, context, state, soft=True))
        secret_reads: set[str] = set()
        if self.secret_paths:
            rendered = []
            for slot in self.spec_slots:
                view.read = secret_reads if slot.path in self.secret_paths else None
                rendered.append(self._spec_value(slot, context, state))
            view.read = None
        else:
            rendered = [self._spec_value(slot, context, state) for slot in self.spec_slots]
        address = f"{self.kind_name}/{name}"
        if state.failed:
            for problem in state.problems:
                yield _with_document(problem, address)
            return
        if name is None and self.name_slot.header is not None:
            # The name is one cell's value, and this row's cell is empty.
            at = self._column(self.name_slot.header, state)
            message = (
                f"the cell is empty, and the document's name is taken from it "
                f"({quoted_expression(self.name_slot.text)})"
            )
            yield self._finding("row.empty-cell", message, at, self.name_slot.path, _EMPTY_NAME)
            return
        rules = "A name starts with a letter or digit and holds letters, digits, '.', '_', '-'."
        name_wrong = name_problem(name, rules)
        if name_wrong is not None:
            header = self.name_slot.header  # the name is one cell's value: point at it
            at = state.row if header is None else self._column(header, state)
            yield self._finding("row.name", name_wrong[0], at, (), name_wrong[1])
            return
        first = self.names.setdefault(name, row.number)
        if first != row.number:
            message = f"rows {first} and {row.number} both give the name {address}"
            finding = self._finding("row.duplicate-name", message, state.row, (), _NAME_HINT)
            yield _with_document(finding, address)
            return
        spec = fill(self.spec, self.tree, rendered)
        if spec is DROP:  # every field of the spec was left out: the row gives an empty spec
            spec = {}
        references = list(self.references)
        for slot, value in zip(self.spec_slots, rendered, strict=True):
            if isinstance(value, str) and "${ref:" in value:
                parsed, messages = parse_references(slot.path, value)
                references += parsed
                for message in messages:
                    at = self._cell(slot, state)
                    state.fail(
                        self._finding("reference.syntax", message, at, slot.path, SYNTAX_HINT)
                    )
        if state.failed or ((state.left_out or self.withheld) and not self.partial):
            # like any document with an error, the row gives none
            for problem in state.problems:
                yield _with_document(problem, address)
            return
        positions = RowPositions(state.row, sheet, self.cells)
        if self.template is not None:
            output = self._template_output(
                self.template, values, context, state, remember=not emptied
            )
            if output is None:
                for problem in state.problems:  # a cell the template could not use
                    yield _with_document(problem, address)
                return
            spec = merge(output.spec, spec)
            references += _surviving(output, spec)
            text = template_text(self.template) if self.value_cells else None
            if text is not None:
                dated = self._dates_sent(output, text, values, spec, row, state)
                if dated:
                    for problem in (*state.problems, *dated):
                        yield _with_document(problem, address)
                    return
                trace = CellTrace(output, text, values, spec, self.cells, state.row, sheet)
                positions = TracedRowPositions(state.row, sheet, self.cells, trace)
        for problem in state.problems:  # values left out: the document is only checked
            yield _with_document(problem, address)
        yield Document(
            kind=self.envelope.kind,
            name=name,
            spec=spec,
            source=state.row,
            index=self.source.index + self.produced,
            depends_on=self.envelope.depends_on,
            labels=labels,
            annotations=self.envelope.annotations,
            template=self.envelope.template,
            values=_plain(values) if emptied else values,
            references=tuple(references),
            positions=positions,
            row=row.values,
            left_out=tuple(state.left_out),
            sensitive_columns=(
                self._sensitive_columns(row, spec, secret_reads, value_reads)
                if secret_reads or value_reads
                else ()
            ),
        )
        if not state.left_out:
            self.produced += 1

    def _dates_sent(
        self,
        output: TemplateOutput,
        text: str,
        values: Mapping[str, Any],
        spec: Mapping[str, Any],
        row: Row,
        state: _RowState,
    ) -> list[Finding]:
        """The findings of the date cells a value of ``values`` takes (``values: {marks:
        "{{ row.Marks }}"}``) and the template puts in a field as they are: as a date cell
        a field takes in the manifest, not its ISO text sent in the field's place."""
        dated = {
            slot.path: row.values[slot.header]
            for slot in self.value_slots
            if slot.header is not None
            and row.values.get(slot.header).__class__ is DateText
            and slot.path in self.cells
        }
        if not dated:
            return []
        shown = set(dated.values())
        found = []
        for path in output.marks:
            if not path or path[0] != "spec" or _at_path(output.spec, path[1:]) not in shown:
                continue
            source = copied_from(output, text, values, spec, path, dated.keys())
            if source is None:
                continue
            column, header = self.cells[source]
            at = state.row.cell(column, header)
            problem = _date_problem(dated[source], at)
            found.append(
                self._finding(
                    "row.cell-type",
                    problem.message,
                    at,
                    path,
                    problem.hint,
                    unquoted=problem.unquoted,
                )
            )
        return found

    def _sensitive_columns(
        self,
        row: Row,
        spec: Mapping[str, Any],
        read: set[str],
        value_reads: list[tuple[Any, set[str]]],
    ) -> tuple[tuple[int, str], ...]:
        """The columns (number, header) that gave the row's document a sensitive value:
        those its sensitive fields read, and those of each value of ``values`` whose text
        is a sensitive value of the spec, a part of one of four characters or more (a
        template may compose the code further: ``"X{{ values.code }}"``), or holds one of
        four characters or more (a template may take part of it: ``values.acc[:4]``)."""
        names = set(read)
        if value_reads:
            secrets = [
                text
                for path in sensitive_paths(self.envelope.kind)
                for _, value in values_at(spec, path)
                if value is not None and not isinstance(value, dict | list)
                if (text := str(value).strip())
            ]
            for value, reads in value_reads:
                if not reads or value is None or isinstance(value, dict | list):
                    continue
                text = str(value).strip()
                if text and any(
                    text == secret
                    or (len(text) >= 4 and text in secret)
                    or (len(secret) >= 4 and secret in text)  # a template takes part of it
                    for secret in secrets
                ):
                    names |= reads
        found = []
        for name in sorted(names):
            where = row.header.locate(name) if row.header is not None else None
            if where is not None:
                found.append((where[0], name))
        return tuple(found)

    def _label(self, labels: dict[str, str], slot: Slot, value: Any) -> None:
        """A label's value for this row as text; an empty cell leaves the label out."""
        key = str(slot.path[2])
        if value is None:
            labels.pop(key, None)
        else:
            text = convert(value, slot.types, decimal_comma=self.decimal_comma)
            labels[key] = text if isinstance(text, str) else str(value)

    def _template_output(
        self,
        template: _render.TemplateSource,
        values: Any,
        context: dict[str, Any],
        state: _RowState,
        *,
        remember: bool = True,
    ) -> TemplateOutput | None:
        """``remember``: whether the render may be remembered by the values' text (not
        when an empty cell left a value out: the same text without it is another case)."""
        if _render.uses_row(template):
            result = _render.render(template, context, remember=False)
        else:
            result = _render.render(template, {"values": values}, remember=remember)
        if not isinstance(result, _render.Rendered) and result.cell_column is not None:
            # This row's cell is at fault (text where the template computes): at the cell.
            at = self._column(result.cell_column, state)
            where = result.file or template.file
            message = f"in the template {where}, line {result.line}: {result.message}"
            state.fail(self._finding(result.rule, message, at, ("template",), result.hint))
            return None
        if not isinstance(result, _render.Rendered):
            key = ("template", result.rule, result.message, str(result.line))
            if key not in self.reported:
                self.reported.add(key)
                # Named like a template of one document: with the manifest that uses it.
                used = self.walk.locate(("template",))
                message = f"{result.message} (template used at {used.file}:{used.line})"
                self.walk.report_in(
                    result.file or template.file,
                    result.line,
                    result.rule,
                    message,
                    result.hint,
                    result.column,
                )
            return None
        output = parse_output(result, self.envelope.kind)
        cut_short = False
        for finding in output.findings:
            if finding.rule == COMMENT_IN_VALUE:
                # What this row's values printed: at the row, so that it can be found.
                place = f"in the template {finding.location.file}, line {finding.location.line}"
                row_at = state.row.location(finding.location.path)
                state.fail(
                    dataclasses.replace(
                        finding, message=f"{place}: {finding.message}", location=row_at
                    )
                )
                cut_short = True
                continue
            key = ("output", finding.rule, finding.message, str(finding.location.line))
            if key not in self.reported:
                self.reported.add(key)
                # Reported once for the manifest; the output is a row's, which may be the
                # only one to give it (a cell printed unquoted): name the row.
                row = state.row.location(())
                first = f" (first given by row {row.row} of {row.file})"
                self.walk.findings.append(
                    dataclasses.replace(finding, message=finding.message + first)
                )
        return None if output.failed or cut_short else output

    def _spec_value(self, slot: Slot, context: dict[str, Any], state: _RowState) -> Any:
        if self.missing and slot.path in self.missing:
            state.leave_out(slot.path, None)
            return DROP
        left_out = len(state.left_out)
        value = self._render(slot, context, state, soft=True)
        if value.__class__ is str and slot.string_only:
            return value  # the common case, without the conversion's calls
        if len(state.left_out) > left_out:
            return DROP
        if value is None and slot.header is not None:
            return DROP  # an empty cell: the field is not given
        converted = convert(value, slot.types, decimal_comma=self.decimal_comma)
        if value.__class__ is DateText:  # in a number field too: 3.4 typed in a German Excel
            converted = _date_problem(value, self._cell(slot, state))
        if not isinstance(converted, CellProblem):
            return converted
        at = self._cell(slot, state)
        finding = self._finding(
            "row.cell-type",
            converted.message,
            at,
            slot.path,
            converted.hint,
            unquoted=converted.unquoted,
        )
        state.leave_out(slot.path, finding)
        return DROP

    def _total_row(self, row: Row, sheet: str) -> Finding | None:
        """The finding for a row that looks like a total row (None: it does not): its
        first cell with a value a word such as ``Total`` or ``Summe`` (in the first column,
        or left of the sums), another of its cells empty, and no other cell holding a word,
        as a sum under a sheet's columns is written (an export of a sheet whose total row
        was typed below the data, not an Excel table's Total Row, which the reader leaves
        out). Read as data, it gave findings about its empty cells (``row.empty-cell``),
        or worse a document; it gives none, and the finding says how to leave it out."""
        if row.header is None or len(row.header.names) < 2:
            return None
        names, values = row.header.names, row.values
        index = next((at for at, name in enumerate(names) if values.get(name) is not None), -1)
        if index < 0:
            return None
        first_name = names[index]
        first = values[first_name]
        if not isinstance(first, str) or first.strip().rstrip(":").strip().lower() not in (
            TOTAL_WORDS
        ):
            return None
        empty = [name for name in names if values.get(name) is None]
        if not empty:
            return None
        if any(
            isinstance(value, str) and any(char.isalpha() for char in value)
            for name, value in values.items()
            if name != first_name
        ):
            # A word beside it (a HAWB, a reference, a party): data whose first cell is a
            # name such as "TOTAL" (a consignee), with an optional cell left empty.
            return None
        column = row.header.columns[index]
        which = "first cell" if index == 0 else "first cell with a value"
        at = Position(
            self.file, row.number, 0, sheet, places=row.places, reading=self.reading
        ).cell(column, first_name)
        above = self.for_each.header + 1
        shown = ", ".join(repr(name) for name in empty[:3]) + (", …" if len(empty) > 3 else "")
        message = (
            f"row {row.number} looks like a total row, not data: its {which} "
            f"({column_letter(column)}{row.number}, {first_name!r}) says {first.strip()!r} "
            f"and {shown} {'is' if len(empty) == 1 else 'are'} empty; it gives no document"
        )
        if row.number > above:
            rows = f"{above}-{row.number - 1}" if row.number - 1 > above else f"{above}"
            leave = f"Leave it out with 'rows' in forEach ('rows: {rows}' reads the rows above it)"
        else:
            leave = "No data row is above it: check forEach.header"
        hint = (
            f"{leave}; or delete it from the export. If it is data, write the first cell otherwise."
        )
        return Finding(TOTALS_ROW, Severity.ERROR, message, at.location(()), hint)

    def _cell(self, slot: Slot, state: _RowState) -> Position:
        """The cell a slot's value came from, else the row."""
        column = self.cells.get(slot.path)
        if column is None:
            return state.row
        return state.row.cell(column[0], column[1])

    def _column(self, name: str, state: _RowState) -> Position:
        """The cell of column ``name`` in the row being read."""
        where = self.header.locate(name) if self.header is not None else None
        if where is None:
            return state.row
        return state.row.cell(where[0], name)

    def _render(
        self, slot: Slot, context: dict[str, Any], state: _RowState, *, soft: bool = False
    ) -> Any:
        """The slot's value for this row; on a problem None, and the row fails (``soft``:
        the value is left out of the row's document instead)."""
        fail = (lambda f: state.leave_out(slot.path, f)) if soft else state.fail
        if self.timeouts.get(slot.path, 0) >= TIMEOUTS_PER_TEMPLATE:
            message = (
                f"in {quoted_expression(slot.text)}: not rendered: it took longer than "
                f"{RENDER_SECONDS:g} seconds for {self.timeouts[slot.path]} rows before this "
                "one (an endless loop?)"
            )
            fail(self._finding("row.jinja", message, state.row, slot.path, _ROW_HINT))
            return None
        try:
            return slot.render(context)
        except UndefinedError as error:
            column = emptied_column(getattr(error, "owner", None), getattr(error, "name", ""))
            if column is not None:  # a value this row's empty cell left out
                at = self._column(column, state)
                message = (
                    f"the cell is empty, and {quoted_expression(slot.text)} needs the "
                    f"value taken from it"
                )
                fail(self._finding("row.empty-cell", message, at, slot.path, EMPTY_CELL_HINT))
                return None
            # The expression's fault, not the row's: reported once, at the manifest.
            problem = problem_of(error, None, slot.text)
            message = f"in {quoted_expression(slot.text)}: {problem.message}"
            key = ("undefined", str(slot.path), message)
            if key not in self.reported:
                self.reported.add(key)
                hint = problem.hint + (
                    " Use a column of the spreadsheet (row['Header']), row_number or values."
                    if problem.hint == "Fix the template."
                    else ""
                )
                self.walk.report_at("template.undefined", message, hint.strip(), slot.path)
            fail(None)
        except EmptyCell as error:
            at = self._column(error.column, state)
            message = f"the cell is empty, and {quoted_expression(slot.text)} needs it"
            fail(self._finding("row.empty-cell", message, at, slot.path, EMPTY_IN_TEXT_HINT))
        except (MixedTypes, CellTypeError) as error:
            at = self._column(error.column, state)
            if isinstance(error, MixedTypes):
                message = f"in {quoted_expression(slot.text)}: {error}"
                fail(self._finding("row.mixed-types", message, at, slot.path, error.hint))
            elif isinstance(error, UnusableCell):
                # Once per cell, however many of the row's strings read it.
                message = str(error)
                said = any(problem.message == message for problem in state.problems)
                fail(
                    None if said else self._finding(error.rule, message, at, slot.path, error.hint)
                )
            else:
                fail(
                    self._finding(
                        "row.cell-type",
                        str(error),
                        at,
                        slot.path,
                        error.hint,
                        unquoted=error.unquoted(),
                    )
                )
        except TemplateInString as error:  # the manifest's fault: once, at the manifest
            problem = problem_of(error, None)
            message = f"in {quoted_expression(slot.text)}: {problem.message}"
            key = ("include", str(slot.path), message)
            if key not in self.reported:
                self.reported.add(key)
                self.walk.report_at(problem.rule, message, problem.hint, slot.path)
            fail(None)
        except NoValueInText as error:
            if state.failed:  # a value this row could not give, reported already
                fail(None)
            else:
                message = f"in {quoted_expression(slot.text)}: {error}"
                fail(self._finding("row.jinja", message, state.row, slot.path, EMPTY_IN_TEXT_HINT))
        except Exception as error:  # user expressions over user data: any error is a finding
            problem = problem_of(error, None)
            message = f"in {quoted_expression(slot.text)}: {problem.message}"
            if isinstance(error, RenderTimeout):
                self.timeouts[slot.path] = self.timeouts.get(slot.path, 0) + 1
            fail(self._finding("row.jinja", message, state.row, slot.path, _ROW_HINT))
        return None

    def _finding(
        self,
        rule: str,
        message: str,
        at: Position,
        path: JsonPath,
        hint: str = _ROW_HINT,
        *,
        unquoted: str | None = None,
    ) -> Finding:
        """``unquoted``: the message without the cell's value, for a sensitive field (a
        guarantee's access code); without it the finding says only which check failed."""
        if unquoted is not None and at_sensitive_value(path):
            message = f"{unquoted}; {NOT_SHOWN}"
            return Finding(rule, Severity.ERROR, message, at.location(path), hint, sensitive=True)
        return Finding(rule, Severity.ERROR, message, at.location(path), hint)

    def _sheet_error(self, error: SheetError) -> Iterator[Finding]:
        if error.row:
            sheet = error.sheet or self.for_each.sheet or self.stem
            location = Location(error.file, error.row, 0, (), sheet, error.row)
            yield Finding(error.rule, Severity.ERROR, error.message, location, error.hint or "")
        else:
            self.walk.report_at(
                error.rule,
                error.message,
                error.hint or f"Check forEach.{error.key}.",
                ("forEach", error.key),
            )


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _named_under(path: str, folder: str) -> bool:
    """Whether one of the folders ``path`` (absolute, normalized) is written under is
    ``folder`` (a real path) under another name: a symbolic link to it."""
    above = os.path.dirname(path)
    while True:
        if os.path.realpath(above) == folder:
            return True
        parent = os.path.dirname(above)
        if parent == above:
            return False
        above = parent


class _Hidden:
    """The rows and columns read that the workbook's sheet hides: read as any other (as the
    sheet's CSV export writes them), a row hidden by hand or by a filter gives a document,
    which its user may not have looked at; said once for the sheet."""

    _SHOWN = 5

    def __init__(self) -> None:
        self.rows = 0
        self.first: list[int] = []
        self.sheet: str | None = None
        self.header: Header | None = None

    def note(self, row: Row) -> None:
        if self.header is None:
            self.header, self.sheet = row.header, row.sheet
        if row.hidden:
            self.rows += 1
            if len(self.first) < self._SHOWN:
                self.first.append(row.number)

    def said(self, file: str) -> Iterator[tuple[str, str]]:
        sheet = f"sheet {self.sheet!r}" if self.sheet else "its sheet"
        if self.rows:
            more = ", …" if self.rows > len(self.first) else ""
            numbers = ", ".join(map(str, self.first)) + more
            plural = "s" if self.rows > 1 else ""
            yield (
                f"{file}: {sheet} hides {self.rows:,} of the rows read (row{plural} "
                f"{numbers}); each is read as any other and gives a document",
                "Unhide the rows (a filter hides rows too) to see what is sent; leave out "
                "the ones not meant to be sent with `rows:` in forEach, or delete them.",
            )
        header = self.header
        if header is not None and header.hidden:
            shown = [
                f"{column_letter(c)} {name!r}"
                for name, c in zip(header.names, header.columns, strict=True)
                if c in header.hidden
            ]
            plural = "s" if len(shown) > 1 else ""
            yield (
                f"{file}: {sheet} hides column{plural} {', '.join(shown)}; read as any other",
                "Unhide the columns to see the values that are sent.",
            )


def read_rows_safely(source: RowSource) -> Iterator[Row | SheetError]:
    """The rows of ``source``; a read that fails ends with its error instead of raising."""
    try:
        yield from read_rows(source)
    except SheetError as error:
        yield error
    except MemoryError:
        yield SheetError(
            f"the run ran out of memory reading {source.path}",
            file=str(source.path),
            rule=OUT_OF_MEMORY,
            hint=(
                "run again with more memory (a larger machine or CI runner, a higher "
                "`ulimit -v` or container limit); if the spreadsheet is this large, split it"
            ),
        )


class _RowState:
    """What rendering one row found."""

    __slots__ = ("failed", "left_out", "problems", "row", "sheet")

    def __init__(self, row: Position, sheet: str) -> None:
        self.row = row
        self.sheet = sheet
        self.failed = False
        self.problems: list[Finding] = []
        self.left_out: list[JsonPath] = []

    def fail(self, finding: Finding | None) -> None:
        """The row gives no document; ``finding`` says why (None: reported elsewhere)."""
        self.failed = True
        if finding is not None:
            self.problems.append(finding)

    def leave_out(self, path: JsonPath, finding: Finding | None) -> None:
        """The value at ``path`` is left out of the row's document; ``finding`` says why
        (None: reported elsewhere, once for every row)."""
        self.left_out.append(path)
        if finding is not None:
            self.problems.append(finding)


def _set(data: Any, path: JsonPath, value: Any) -> None:
    for part in path[:-1]:
        data = data[part]
    data[path[-1]] = value


def _leave_out(values: dict[str, Any], path: JsonPath, column: str) -> dict[str, Any]:
    """``values`` without the entry at ``path`` (an empty cell's), the mapping that held it
    remembering the cell's column; a list entry stays None (its place is its meaning)."""
    *parents, key = path
    chain: list[Any] = [values]
    for part in parents:
        chain.append(chain[-1][part])
    holder = chain[-1]
    if not isinstance(holder, dict) or not isinstance(key, str):
        holder[key] = None
        return values
    if holder.__class__ is not ValuesOfRow:
        holder = ValuesOfRow(holder)
        if parents:
            chain[-2][parents[-1]] = holder
        else:
            values = holder
    holder.pop(key, None)
    holder.emptied[key] = column
    return values


def _plain(value: Any) -> Any:
    """``value`` with every mapping a plain dict (a document's values are kept and pickled)."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def _with_document(finding: Finding, address: str) -> Finding:
    return dataclasses.replace(finding, document=address)


def _surviving(output: TemplateOutput, spec: Mapping[str, Any]) -> list[Reference]:
    """References the template wrote that the row's document did not override."""
    references: list[Reference] = []
    for path, text in output.refs:
        value: Any = {"spec": spec}
        for part in path:
            value = value.get(part) if isinstance(value, dict) else None
        if value is text:
            references += parse_references(path, text)[0]
    return references


TOTAL_WORDS = frozenset(
    {
        *("total", "totals", "grand total", "subtotal", "sub-total", "sum", "sums"),
        *("summe", "gesamt", "gesamtsumme", "zwischensumme", "totaal", "subtotaal"),
        *("totale", "somme", "suma", "totaal generaal", "eindtotaal"),
    }
)
"""The first cell of a total row below a sheet's data (in English, German, Dutch, French,
Italian and Spanish exports), compared without case and a colon after it."""


def _date_problem(value: DateText, at: Position) -> CellProblem:
    """A date (or a time) a cell gives a field: no field takes one. Most often the text
    typed into the cell (``1-2``, ``3/4``, ``12:30``) that the spreadsheet turned into a
    date, which keeps none of what was typed: an error at the cell, as a long number that
    lost its last digits is, never the date's text sent instead."""
    cell = f"cell {column_letter(at.column)}{at.line}" if at.column else "the cell"
    return CellProblem(
        f"{cell} ({value})",
        f"holds {value.kind}, but no field takes one: a spreadsheet program such as Excel "
        "turns text typed into a cell (1-2, 3/4, 12:30) into a date, and keeps nothing of "
        "what was typed",
        "Format the column as Text and type the values again (or put an apostrophe before "
        "each), so that the spreadsheet keeps them as typed.",
    )


def _at_path(tree: Any, path: Sequence[str | int]) -> Any:
    """The value at ``path`` in ``tree`` (None when there is none)."""
    for key in path:
        try:
            tree = tree[key]
        except (KeyError, IndexError, TypeError):
            return None
    return tree if isinstance(tree, str) else None
