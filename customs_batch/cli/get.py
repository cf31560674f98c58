"""``customs-batch get``: read what the service holds, one command per read endpoint."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any, TypeVar

import click

from customs_batch.cli._choices import CutChoice, CutGroup, Given
from customs_batch.cli._files import format_option, output_option
from customs_batch.cli._once import OnceOption
from customs_batch.cli._output import RECORD_FORMATS, Column, Records, show_records
from customs_batch.cli._service import env_option, set_http_log, verbose_option
from customs_batch.client import (
    ARCHIVED_FILTERS,
    DECLARATION_STATUSES,
    DECLARATION_TYPES,
    DELETED_FILTERS,
    MAX_PAGE,
    MAX_PAGE_SIZE,
    SHIPMENT_STATUSES,
    TRANSIT_STATUSES,
    DeclarationFilter,
    ItemFilter,
    Order,
    Page,
    ShipmentFilter,
    TemplateGroupFilter,
    TransitFilter,
)
from customs_batch.commands.get import (
    DEFAULT_LIMIT,
    AllocationQuery,
    HawbQuery,
    ListOptions,
    Paging,
    RecordKind,
    RecordOptions,
    list_records,
    read_record,
)
from customs_batch.errors import CustomsBatchError, ExitCode
from customs_batch.escaping import quoted_head
from customs_batch.kinds.model import service_number
from customs_batch.output_file import check_named_file

F = TypeVar("F", bound=Callable[..., Any])
DATE = click.DateTime(formats=["%Y-%m-%d"])
ORDER = CutChoice([o.value for o in Order])


class ServiceNumber(click.ParamType[int, Any]):
    """A numeric ID of ``what`` (``a declaration``), read as the service reads it and as
    ``import`` and ``state adopt`` read one (``02`` is 2), not as Python's ``int``, which
    takes ``700_2`` for 7002 and digits of other scripts; ``minimum``: the smallest ID."""

    name = "integer"

    def __init__(self, what: str, minimum: int = 1) -> None:
        self.what = what
        self.minimum = minimum

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        try:
            number = service_number(str(value), self.what)
        except CustomsBatchError as error:
            self.fail(error.message, param, ctx)
        if number < self.minimum:
            self.fail(
                f"{number} is not an ID of {self.what}: they start at {self.minimum}", param, ctx
            )
        return number


class ShipmentId(click.ParamType[str, Any]):
    """An RTO shipment's ID in the form a manifest's ``shipmentId`` takes (the movement
    schema's pattern: ``shp_`` then letters and digits, and its ``maxLength``), without the
    spaces around it; any other text is a usage error (exit 64) before a request is sent,
    echoed cut."""

    name = "shipment ID"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        from customs_batch.kinds import Kind
        from customs_batch.resources import kind_schema, load_pattern_hints

        text = str(value).strip()
        field = kind_schema(Kind.MOVEMENT)["properties"]["shipmentId"]
        pattern = str(field["pattern"])
        hint = load_pattern_hints()[pattern]
        if re.fullmatch(pattern, text, re.ASCII) is None:
            self.fail(
                f"{quoted_head(str(value))} is not {hint['is']}: write {hint['form']}, such "
                f"as {hint['example']}",
                param,
                ctx,
            )
        if len(text) > int(field["maxLength"]):
            self.fail(
                f"{quoted_head(text)} is not {hint['is']}: its IDs have at most "
                f"{field['maxLength']} characters",
                param,
                ctx,
            )
        return text


def _cols(*fields: str) -> tuple[Column, ...]:
    return tuple(Column(f, f) for f in fields)


SHIPMENT_COLUMNS = _cols("shipmentId", "referenceNumber", "status", "createdAt")
DECLARATION_COLUMNS = _cols(
    "declarationId", "type", "status", "referenceNumber", "shipmentId", "lrn", "mrn"
)
TRANSIT_COLUMNS = _cols("declarationId", "status", "declarationType", "createdAt")
ITEM_COLUMNS = _cols(
    "id", "declarationId", "description", "commodityCode", "quantity", "grossMass", "value"
)
GROUP_COLUMNS = _cols("id", "name", "code", "isDefault", "companyId")
HAWB_COLUMNS = _cols(
    "hawbId", "houseAirWaybillNumber", "packageCount", "grossWeightKg", "status", "isActive"
)
ALLOCATION_COLUMNS = _cols(
    "allocationId", "hawbId", "source", "customsDeclarationNumber", "packageCount", "isActive"
)


def _common(function: F) -> F:
    function = format_option(
        RECORD_FORMATS, "table for people; json, jsonl, csv and yaml are stable for scripts."
    )(function)
    function = output_option(RECORD_FORMATS, "records")(function)
    return verbose_option(env_option(function))


class _Count(click.IntRange):
    """``click.IntRange``, but a value too long to be one in range is refused cut
    (:func:`quoted_head`): click echoed a page of 100,000 digits whole."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and len(value) > 40:  # what quoted_head shows whole
            digits = value.strip().lstrip("+-")
            try:
                number = int(value)  # (thousands of digits: ValueError, as for text)
            except ValueError:
                if not (digits.isascii() and digits.isdigit()):
                    self.fail(f"{quoted_head(value)} is not a valid integer.", param, ctx)
                number = -1 if value.strip().startswith("-") else 2**64  # past any bound
            if not self.min <= number <= self.max:  # type: ignore[operator]
                self.fail(
                    f"{quoted_head(value)} is not in the range {self._describe_range()}.",
                    param,
                    ctx,
                )
        return super().convert(value, param, ctx)


def _paged(function: F) -> F:
    function = click.option("--all", "every", is_flag=True, help="Follow every page.")(function)
    function = click.option(
        "--limit",
        type=_Count(1, MAX_PAGE_SIZE),
        default=DEFAULT_LIMIT,
        show_default=True,
        help="Records per page.",
    )(function)
    function = click.option(
        "--page",
        type=_Count(1, MAX_PAGE),
        default=None,
        help="Page number [default: 1].",
    )(function)
    return _common(function)


def _day(value: datetime | None) -> date | None:
    return value.date() if value is not None else None


@dataclass(frozen=True)
class Shown:
    """How the records are shown: the ``--format`` and the ``-o`` file, if any."""

    format_name: str
    output: Path | None


def _show_list(options: ListOptions, verbose: bool, shown: Shown, columns: Sequence[Column]) -> int:
    _check_output(shown)
    set_http_log(enabled=verbose)
    result = list_records(options)
    if result.page is None:
        footer = every_page_footer(len(result.records))
    else:
        footer = page_footer(result.page)
    rows = [record.raw for record in result.records]
    show_records(Records(rows, columns, footer=footer), shown.format_name, shown.output)
    return int(ExitCode.OK)


def _check_output(shown: Shown) -> None:
    """Refuse an ``-o`` file the records may not go to (the state, a manifest, a key file,
    another user's file) before anything is asked of the service: the refusal came after
    the reads, every page of them with ``--all``, a usage error that had sent requests."""
    if shown.output is not None:
        check_named_file(shown.output, what="records")


def page_footer(page: Page[Any]) -> str:
    """Under one page's table: which page of how many, how many records of how many, and
    how to see more — ``page 2 of 3: records 21-40 of 57; more with --page 3 or --all``.
    A total the service does not give is left out rather than guessed."""
    count = len(page.records)
    first = (page.page - 1) * page.page_size + 1
    span = f"records {first}-{first + count - 1}" if count else "no records"
    of = page.total_pages
    if of is None and page.total_items is not None and page.page_size > 0:
        of = max(1, -(-page.total_items // page.page_size))  # the pages the total fills
    pages = f"page {page.page} of {of}" if of else f"page {page.page}"
    total = page.total_items
    if total is None and page.total_pages is not None and page.is_last() and count:
        total = first + count - 1
    text = f"{pages}: {span}" + (f" of {total}" if total is not None else "")
    if not page.is_last():
        text += f"; more with --page {page.page + 1} or --all"
    return text


def every_page_footer(count: int) -> str:
    """Under ``--all``'s table: the total."""
    return f"all pages: {count} record{'s' if count != 1 else ''}"


def _show_one(options: RecordOptions, verbose: bool, shown: Shown) -> int:
    _check_output(shown)
    set_http_log(enabled=verbose)
    record = read_record(options).raw
    show_records(Records([record], single=True), shown.format_name, shown.output)
    return int(ExitCode.OK)


@click.group(cls=CutGroup)
def get() -> None:
    """Read shipments, declarations, items, template groups, HAWBs and allocations.

    \b
    Examples:
      customs-batch get shipments --status new
      customs-batch get declarations --type EXPORT --all --format csv
      customs-batch get declaration 501 --format json
      customs-batch get hawbs shp_7Hk2Lm --include-inactive
    """


@get.command()
@click.option("--status", cls=OnceOption, noun="status", type=CutChoice(SHIPMENT_STATUSES))
@click.option("--reference", type=Given("a reference"), help="Shipment reference number.")
@click.option("--created-from", type=DATE, metavar="YYYY-MM-DD", help="Created on or after.")
@click.option("--created-to", type=DATE, metavar="YYYY-MM-DD", help="Created on or before.")
@click.option("--order", type=ORDER, help="By creation date [service default: desc].")
@_paged
def shipments(
    status: str | None,
    reference: str | None,
    created_from: datetime | None,
    created_to: datetime | None,
    order: str | None,
    page: int | None,
    limit: int,
    every: bool,
    format_name: str,
    output: Path | None,
    env_name: str | None,
    verbose: bool,
) -> int:
    """List shipments.

    \b
    Example:
      customs-batch get shipments --status new --created-from 2026-01-01 --format json
    """
    filters = ShipmentFilter(
        status, reference, _day(created_from), _day(created_to), Order(order) if order else None
    )
    options = ListOptions(filters, Paging(page, limit, every), env_name)
    return _show_list(options, verbose, Shown(format_name, output), SHIPMENT_COLUMNS)


@get.command()
@click.option("--status", cls=OnceOption, noun="status", type=CutChoice(DECLARATION_STATUSES))
@click.option("--type", "kind", type=CutChoice(DECLARATION_TYPES, case_sensitive=False))
@click.option(
    "--reference", type=Given("a reference"), help="Shipment reference number (partial match)."
)
@click.option("--created-from", type=DATE, metavar="YYYY-MM-DD", help="Created on or after.")
@click.option("--created-to", type=DATE, metavar="YYYY-MM-DD", help="Created on or before.")
@click.option("--order", type=ORDER, help="By creation date [service default: desc].")
@_paged
def declarations(
    status: str | None,
    kind: str | None,
    reference: str | None,
    created_from: datetime | None,
    created_to: datetime | None,
    order: str | None,
    page: int | None,
    limit: int,
    every: bool,
    format_name: str,
    output: Path | None,
    env_name: str | None,
    verbose: bool,
) -> int:
    """List import and export declarations.

    \b
    Example:
      customs-batch get declarations --type EXPORT --status ready --all --format csv
    """
    filters = DeclarationFilter(
        status,
        reference,
        _day(created_from),
        _day(created_to),
        Order(order) if order else None,
        kind.upper() if kind else None,
    )
    options = ListOptions(filters, Paging(page, limit, every), env_name)
    return _show_list(options, verbose, Shown(format_name, output), DECLARATION_COLUMNS)


@get.command()
@click.argument("declaration_id", type=ServiceNumber("a declaration"), metavar="ID")
@_common
def declaration(
    declaration_id: int, format_name: str, output: Path | None, env_name: str | None, verbose: bool
) -> int:
    """Show one export declaration, with its items and errors.

    \b
    Example:
      customs-batch get declaration 501 --format yaml
    """
    options = RecordOptions(RecordKind.DECLARATION, declaration_id, env_name)
    return _show_one(options, verbose, Shown(format_name, output))


@get.command()
@click.argument(
    "declaration_id", type=ServiceNumber("a transit declaration"), metavar="[ID]", required=False
)
@click.option(
    "--status",
    cls=OnceOption,
    noun="status",
    type=CutChoice(TRANSIT_STATUSES, case_sensitive=False),
    # Click lists case-insensitive choices in lower case: show the words the API documents.
    metavar=f"[{'|'.join(TRANSIT_STATUSES)}]",
    help="Status filter value, in any case (NEW is 'processing', READY_TO_DECLARE is 'ready').",
)
@click.option("--start-date", type=DATE, metavar="YYYY-MM-DD", help="From this date.")
@click.option("--end-date", type=DATE, metavar="YYYY-MM-DD", help="Up to this date.")
@click.option("--order", type=ORDER, help="Sort order [service default: desc].")
@_paged
def transit(
    declaration_id: int | None,
    status: str | None,
    start_date: datetime | None,
    end_date: datetime | None,
    order: str | None,
    page: int | None,
    limit: int,
    every: bool,
    format_name: str,
    output: Path | None,
    env_name: str | None,
    verbose: bool,
) -> int:
    """List transit declarations, or show one with its ID.

    \b
    Examples:
      customs-batch get transit --status READY_TO_DECLARE
      customs-batch get transit 7001 --format json
    """
    if declaration_id is not None:
        one = RecordOptions(RecordKind.TRANSIT, declaration_id, env_name)
        return _show_one(one, verbose, Shown(format_name, output))
    filters = TransitFilter(
        status.upper() if status else None,
        Order(order) if order else None,
        _day(start_date),
        _day(end_date),
    )
    options = ListOptions(filters, Paging(page, limit, every), env_name)
    return _show_list(options, verbose, Shown(format_name, output), TRANSIT_COLUMNS)


@get.command()
@click.option(
    "--search",
    type=Given("the words to search for"),
    help="Matches description, commodity code and similar fields.",
)
@click.option("--deleted", type=CutChoice(DELETED_FILTERS), help="[service default: normal]")
@click.option("--archived", type=CutChoice(ARCHIVED_FILTERS), help="[service default: unarchived]")
@click.option("--sort-by", type=Given("a field name"), help="Field to sort by.")
@click.option("--sort-order", type=ORDER, help="[service default: asc]")
@_paged
def items(
    search: str | None,
    deleted: str | None,
    archived: str | None,
    sort_by: str | None,
    sort_order: str | None,
    page: int | None,
    limit: int,
    every: bool,
    format_name: str,
    output: Path | None,
    env_name: str | None,
    verbose: bool,
) -> int:
    """List declaration items.

    \b
    Example:
      customs-batch get items --search bolts --deleted all --format jsonl
    """
    filters = ItemFilter(
        search, deleted, archived, sort_by, Order(sort_order) if sort_order else None
    )
    options = ListOptions(filters, Paging(page, limit, every), env_name)
    return _show_list(options, verbose, Shown(format_name, output), ITEM_COLUMNS)


@get.command()
@click.argument("item_id", type=ServiceNumber("an item"), metavar="ID")
@_common
def item(
    item_id: int, format_name: str, output: Path | None, env_name: str | None, verbose: bool
) -> int:
    """Show one declaration item.

    \b
    Example:
      customs-batch get item 9001
    """
    options = RecordOptions(RecordKind.ITEM, item_id, env_name)
    return _show_one(options, verbose, Shown(format_name, output))


@get.command("template-groups")
@click.option("--company", type=ServiceNumber("a company"), help="Only groups of this company ID.")
@_paged
def template_groups(
    company: int | None,
    page: int | None,
    limit: int,
    every: bool,
    format_name: str,
    output: Path | None,
    env_name: str | None,
    verbose: bool,
) -> int:
    """List declaration-template groups.

    \b
    Example:
      customs-batch get template-groups --company 1 --format yaml
    """
    filters = TemplateGroupFilter(company)
    options = ListOptions(filters, Paging(page, limit, every), env_name)
    return _show_list(options, verbose, Shown(format_name, output), GROUP_COLUMNS)


@get.command()
@click.argument("shipment_id", metavar="SHP", type=ShipmentId())
@click.option("--include-inactive", is_flag=True, help="Show deactivated HAWBs too.")
@_paged
def hawbs(
    shipment_id: str,
    include_inactive: bool,
    page: int | None,
    limit: int,
    every: bool,
    format_name: str,
    output: Path | None,
    env_name: str | None,
    verbose: bool,
) -> int:
    """List the HAWBs of an RTO shipment (its shp_ ID).

    \b
    Example:
      customs-batch get hawbs shp_7Hk2Lm --include-inactive
    """
    options = ListOptions(
        HawbQuery(shipment_id, include_inactive), Paging(page, limit, every), env_name
    )
    return _show_list(options, verbose, Shown(format_name, output), HAWB_COLUMNS)


@get.command()
@click.argument("shipment_id", metavar="SHP", type=ShipmentId())
@_paged
def allocations(
    shipment_id: str,
    page: int | None,
    limit: int,
    every: bool,
    format_name: str,
    output: Path | None,
    env_name: str | None,
    verbose: bool,
) -> int:
    """List the declaration allocations of an RTO shipment (its shp_ ID).

    \b
    Example:
      customs-batch get allocations shp_7Hk2Lm --format json
    """
    options = ListOptions(AllocationQuery(shipment_id), Paging(page, limit, every), env_name)
    return _show_list(options, verbose, Shown(format_name, output), ALLOCATION_COLUMNS)
