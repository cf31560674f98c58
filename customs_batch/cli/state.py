"""``customs-batch state …``, ``import`` and ``force-unlock``: look at and mend the state."""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import click

from customs_batch.cli._choices import CutGroup, Given
from customs_batch.cli._command_line import with_env
from customs_batch.cli._files import format_option, output_option, write_output
from customs_batch.cli._inputs import (
    MRN_CHECK_LEVELS,
    allow_empty_state_option,
    lock_timeout_option,
    mrn_check_digit_option,
)
from customs_batch.cli._paths import CutPath, ManifestPath, parse_address
from customs_batch.cli._service import env_option, set_http_log, verbose_option
from customs_batch.commands.state import (
    Listing,
    StateOptions,
    adopt_object,
    forget_attempt,
    forget_records,
    import_document,
    list_state,
    move_record,
    pull_history,
    push_history_file,
    push_state,
    read_state,
    restore_record,
    show_record,
    unlock,
)
from customs_batch.errors import ExitCode, UsageError
from customs_batch.escaping import printable
from customs_batch.formats import VERSION_KEY, Formats
from customs_batch.kinds import MAX_NAME, NAME_PATTERN, Address, kind_names
from customs_batch.kinds.readback import Comparison
from customs_batch.state.file import pulled_pieces
from customs_batch.state.records import each_record
from customs_batch.state.transfer import read_pushed
from customs_batch.userfiles import (
    MAX_FILE_MB_VARIABLE,
    FileRefused,
    InputKind,
    max_file_bytes,
    megabytes,
    read_user_file,
)

STATE_LIST_JSON_VERSION = 2
"""2: the records under ``resources``, beside ``formatVersion`` (1 was the bare mapping)."""


def _options(
    env_name: str | None, lock_timeout: float = 0.0, *, allow_empty_state: bool = False
) -> StateOptions:
    return StateOptions(env_name, allow_empty_state, lock_timeout)


@click.group(cls=CutGroup)
def state() -> None:
    """Look at and mend the recorded state of an environment.

    \b
    Examples:
      customs-batch state list
      customs-batch state show DepartureDeclaration/dep-ham-0001
      customs-batch state adopt DepartureDeclaration/dep-ham-0001 7003
      customs-batch state forget DepartureDeclaration/dep-ham-0001
      customs-batch state rm TemplateGroup/old-group
      customs-batch state mv Movement/mov-a1 Movement/mov-a1-arrival
      customs-batch state pull > state.json
      customs-batch state push state.json
    """


STATE_LIST_FORMATS: Formats[Callable[[Listing], Iterator[str]]] = Formats(
    "state list", ("text", "json")
)
"""``state list --format``: each yields the output's lines, records parsed one at a time."""


@STATE_LIST_FORMATS.register("json")
def _listed_json(listing: Listing) -> Iterator[str]:
    """``{"formatVersion": 2, "resources": {address: record}}`` as ``json.dumps(...,
    indent=2, sort_keys=True)`` writes it, one record at a time."""
    current = listing.state
    yield f'{{\n  "{VERSION_KEY}": {STATE_LIST_JSON_VERSION},\n  "resources": '
    if not current.resources:
        yield "{}\n}\n"
        return
    separator = "{"
    for address, record in each_record(current.resources):
        text = json.dumps(record.to_json(), indent=2, sort_keys=True).replace("\n", "\n    ")
        yield f"{separator}\n    {json.dumps(address)}: {text}"
        separator = ","
    yield "\n  }\n}\n"


@STATE_LIST_FORMATS.register("text")
def _listed_text(listing: Listing) -> Iterator[str]:
    """One line per record, parsed one at a time and not kept."""
    for address, record in each_record(listing.state.resources):
        shown = listing.outputs(address, record)
        # The service's text (a name another client gave a group) printed as it is, a
        # terminal escape in it as its escape: click would pass it to a terminal, and strip
        # it silently from a pipe.
        outputs = printable(" ".join(f"{k}={v}" for k, v in sorted(shown.items())))
        status = listing.word(address, record)
        yield f"{address}  {status}  {outputs}".rstrip() + "\n"


def _echo_in_batches(lines: Iterator[str]) -> None:
    # In batches: one echo per record was most of the time of a list of 100,000.
    batch: list[str] = []
    for line in lines:
        batch.append(line)
        if len(batch) == 1000:
            click.echo("".join(batch), nl=False)
            batch.clear()
    click.echo("".join(batch), nl=False)


@state.command("list")
@env_option
@format_option(
    STATE_LIST_FORMATS,
    'text: a line per address; json: {"formatVersion": 2, "resources": {ADDRESS: record}}.',
)
@allow_empty_state_option
def list_(env_name: str | None, format_name: str, allow_empty_state: bool) -> int:
    """List every recorded address with its status and outputs.

    \b
    Example:
      customs-batch state list --env sandbox
    """
    listing = list_state(_options(env_name, allow_empty_state=allow_empty_state))
    _echo_in_batches(STATE_LIST_FORMATS.get(format_name)(listing))
    if format_name == "text" and not listing.state.resources:
        click.echo("The state is empty.", err=True)
    return int(ExitCode.OK)


@state.command()
@click.argument("address")
@env_option
@allow_empty_state_option
def show(address: str, env_name: str | None, allow_empty_state: bool) -> int:
    """Show everything recorded for ADDRESS, as JSON: the shape of ``state list --format
    json``, with that one address.

    \b
    Example:
      customs-batch state show Movement/mov-a1-arrival
    """
    record = show_record(
        _options(env_name, allow_empty_state=allow_empty_state), parse_address(address)
    )
    body = {VERSION_KEY: STATE_LIST_JSON_VERSION, "resources": {str(address): record.to_json()}}
    click.echo(json.dumps(body, indent=2, sort_keys=True))
    return int(ExitCode.OK)


@state.command()
@click.argument("addresses", nargs=-1, required=True)
@click.option(
    "--gone",
    is_flag=True,
    help="The objects no longer exist at the service (cancelled, or never accepted): "
    "remove their records and tombstones for good, so the same declarations may be "
    "submitted again. The service is asked first; one it still holds is refused, and so "
    "is a movement (the API cannot read one back to check).",
)
@env_option
@lock_timeout_option
@allow_empty_state_option
def rm(
    addresses: tuple[str, ...],
    gone: bool,
    env_name: str | None,
    lock_timeout: float,
    allow_empty_state: bool,
) -> int:
    """Forget ADDRESSES: the objects stay at the service, customs-batch stops tracking them.

    For orphaned addresses (removed from the manifests; the API cannot delete them). A
    tombstone keeps what each declared, so that no document, under this name or another,
    submits the same thing again: plan refuses it. `state restore` takes a forget back;
    `--gone` removes the tombstone once the object no longer exists at the service.

    \b
    Examples:
      customs-batch state rm TemplateGroup/old-group
      customs-batch state rm --gone DepartureDeclaration/dep-cancelled
    """
    parsed = [parse_address(a) for a in addresses]
    for done in forget_records(
        _options(env_name, lock_timeout, allow_empty_state=allow_empty_state), parsed, gone=gone
    ):
        if done.tombstone and not done.confirmable:
            click.echo(
                with_env(
                    f"Forgot {done.address}; a tombstone keeps its identity, so no document "
                    "submits it again (for good: the API cannot read it back, so nothing can "
                    f"confirm it gone; `customs-batch state restore {done.address}` tracks it "
                    "again)."
                )
            )
        elif done.tombstone:
            click.echo(
                with_env(
                    f"Forgot {done.address}; a tombstone keeps its identity, so no document "
                    f"submits it again (`customs-batch state rm --gone {done.address}` once it "
                    "no longer exists at the service)."
                )
            )
        else:
            checked = f" ({done.checked})" if done.checked else ""
            click.echo(f"Removed {done.address} from the state{checked}.")
    return int(ExitCode.OK)


@state.command()
@click.argument("address")
@env_option
@lock_timeout_option
@allow_empty_state_option
def restore(
    address: str, env_name: str | None, lock_timeout: float, allow_empty_state: bool
) -> int:
    """Track ADDRESS again after `state rm` forgot it (its tombstone becomes its record).

    Refused while another environment's state of the same service records its object.

    \b
    Example:
      customs-batch state restore DepartureDeclaration/dep-ham-0001
    """
    parsed = parse_address(address)
    record = restore_record(
        _options(env_name, lock_timeout, allow_empty_state=allow_empty_state), parsed
    )
    click.echo(f"Restored {parsed} ({record.status.value}).")
    return int(ExitCode.OK)


@state.command()
@click.argument("source")
@click.argument("destination")
@env_option
@lock_timeout_option
@allow_empty_state_option
def mv(
    source: str,
    destination: str,
    env_name: str | None,
    lock_timeout: float,
    allow_empty_state: bool,
) -> int:
    """Move the record of SOURCE to DESTINATION: the document was renamed.

    Nothing is sent. The next plan compares the renamed document with what SOURCE
    recorded, as Terraform's `moved` block does: unchanged, or an update, or a refusal for
    a change the API cannot make. Plan moves a renamed document by itself when its request
    is the same; `state mv` is for a rename together with a change.

    A tombstone moved is tracked again under DESTINATION: refused, as `state restore` is,
    while another environment's state of the same service records its object.

    \b
    Example:
      customs-batch state mv DepartureDeclaration/dep-old DepartureDeclaration/dep-new
    """
    old, new = parse_address(source), parse_address(destination)
    if not re.fullmatch(NAME_PATTERN, new.name) or len(new.name) > MAX_NAME:
        # Moved there, the record would be orphaned: no manifest can name it.
        raise UsageError(
            f"{destination!r} cannot be the address of a document: a name is letters, digits, "
            f"'.', '_' and '-', starting with a letter or a digit, at most {MAX_NAME} long",
            hint="write the name of the renamed document, as its metadata.name says",
        )
    move_record(_options(env_name, lock_timeout, allow_empty_state=allow_empty_state), old, new)
    click.echo(f"Moved {old} to {new}.")
    return int(ExitCode.OK)


@state.command()
@click.argument("address")
@env_option
@lock_timeout_option
@allow_empty_state_option
def forget(address: str, env_name: str | None, lock_timeout: float, allow_empty_state: bool) -> int:
    """Forget an attempt whose outcome is unknown, so the next apply sends it again.

    Only after checking that the service did not create it: for a departure declaration,
    look with `customs-batch get transit`. A movement keeps its Idempotency-Key while the
    service honours it (24 hours): the next apply sends the unchanged document under it,
    and the service answers with the movement the attempt made, if it made one, rather
    than making a second. A departure apply held unsent, for declarations the service
    made in the last day that could be it (a run whose records were lost),
    is held no more for those: the next apply looks only at what the service makes from
    now on, and submits it when none of that could be it.

    \b
    Example:
      customs-batch state forget DepartureDeclaration/dep-ham-0001
    """
    parsed = parse_address(address)
    until = forget_attempt(
        _options(env_name, lock_timeout, allow_empty_state=allow_empty_state), parsed
    )
    if until is None:
        click.echo(f"Forgot the attempt of {parsed}; the next apply sends it again.")
    else:
        click.echo(
            f"Forgot the attempt of {parsed}; the next apply sends it again under its "
            f"Idempotency-Key, kept until {until:%Y-%m-%dT%H:%M:%SZ} (while the document is "
            "unchanged): if the attempt did make it, the service answers with that one "
            "instead of making a second."
        )
    return int(ExitCode.OK)


@state.command("adopt")
@click.argument("address")
@click.argument("remote_id")
@env_option
@verbose_option
@lock_timeout_option
@allow_empty_state_option
def adopt_(
    address: str,
    remote_id: str,
    env_name: str | None,
    verbose: bool,
    lock_timeout: float,
    allow_empty_state: bool,
) -> int:
    """Record that an attempt whose outcome was unknown did create REMOTE_ID.

    The object is read and compared with what the attempt sent first: one that differs
    where it cannot change (a departure's weight or offices), or a template group of another
    code than the attempt sent (another group), is refused with exit 1 and nothing is
    recorded; a changeable field that differs is recorded as the service holds it, so the
    next plan changes it back. An ID another record holds is refused (exit 3), and so
    is one a record of the state of another environment of the same service holds. An
    attempt that was an update (a template group's or a departure's parties' PATCH) created
    nothing: refused with exit 1 (the next apply reads the object and repeats it).

    Also, for a party update apply held as not verified (recorded by an older version, its
    declaration not among those the bounded list of declarations made since showed): once
    you checked that REMOTE_ID, the number it records, is the declaration it was written
    to, records it as its own; the next apply sends the update.

    \b
    Example:
      customs-batch state adopt DepartureDeclaration/dep-ham-0001 7003
    """
    parsed = parse_address(address)
    set_http_log(enabled=verbose)
    record, comparison = adopt_object(
        _options(env_name, lock_timeout, allow_empty_state=allow_empty_state), parsed, remote_id
    )
    outputs = printable(" ".join(f"{k}={v}" for k, v in sorted(record.outputs.items())))
    click.echo(f"Adopted {parsed}: {outputs}")
    _echo_comparison(comparison)
    return int(ExitCode.OK)


def _echo_comparison(comparison: Comparison) -> None:
    for line in comparison.lines():
        click.echo(f"  {printable(line)}")  # the service's text: its escapes escaped


_HISTORY_HELP = (
    "The environment's history (every request apply sent, hash-chained) instead of its "
    "state: one entry a line."
)


@state.command()
@env_option
@allow_empty_state_option
@click.option("--history", "history_", is_flag=True, help=_HISTORY_HELP)
@output_option(
    None,
    "state",
    help="Write it to FILE, readable by you only, instead of stdout (`-`: stdout); a shell "
    "redirect (`> FILE`) makes a file your umask lets others read.",
)
def pull(env_name: str | None, allow_empty_state: bool, history_: bool, output: Path | None) -> int:
    """Print the whole state as JSON (the state file's format), wherever it is kept; with
    --history, the environment's history, one entry a line. It holds customs data: with
    -o FILE the copy is readable by you only.

    With `state push`, moves a state and its history from one backend to another
    (docs/state.md).

    \b
    Examples:
      customs-batch state pull --env production -o production-state.json
      customs-batch state pull --history --env production -o production-history.jsonl
    """
    options = _options(env_name, allow_empty_state=allow_empty_state)
    pieces: Iterator[bytes]
    if history_:
        pieces = _batched(pull_history(options))
    else:
        pieces = iter(pulled_pieces(read_state(options)))
    if output is not None:
        write_output(output, (piece.decode() for piece in pieces), what="state")
        return int(ExitCode.OK)
    for piece in pieces:
        click.echo(piece, nl=False)
    return int(ExitCode.OK)


def _batched(lines: Iterable[bytes]) -> Iterator[bytes]:
    """``lines`` joined 1,000 at a time: written a line at a time, a long history took a
    write per entry."""
    batch: list[bytes] = []
    for line in lines:
        batch.append(line)
        if len(batch) == 1000:
            yield b"".join(batch)
            batch.clear()
    if batch:
        yield b"".join(batch)


@state.command()
@click.argument("file", type=CutPath(dir_okay=False, allow_dash=True, path_type=Path))
@env_option
@lock_timeout_option
@click.option(
    "--force",
    is_flag=True,
    help="Replace even a state of another lineage, or a newer one (what it records is lost).",
)
@allow_empty_state_option
@click.option(
    "--history",
    "history_",
    is_flag=True,
    help="FILE is a history (as `state pull --history` prints it): add its entries to this "
    "environment's history, which must be empty or hold its first entries.",
)
def push(
    file: Path,
    env_name: str | None,
    lock_timeout: float,
    force: bool,
    allow_empty_state: bool,
    history_: bool,
) -> int:
    """Replace the state by FILE (as `state pull` prints it; - for standard input).

    A state of another lineage, or an older copy of this one (a lower serial), is refused
    unless --force. A record it brings that holds an object another environment's state of
    the same service records is refused, --force or not; so is one given an object
    another record of FILE holds (one object, one record). With --history, FILE is the history `state pull --history` printed
    (a file, not -): its chain must be whole, and its entries go to this environment's
    history, empty or holding its first entries, with the same hashes.

    \b
    Examples:
      customs-batch state push production-state.json --env production
      customs-batch state push --history production-history.jsonl --env production
    """
    options = _options(env_name, lock_timeout, allow_empty_state=allow_empty_state)
    if history_:
        if str(file) == "-":
            raise UsageError(
                "state push --history reads a file twice (its chain is checked first): "
                "give a file, not -"
            )
        if force:
            raise UsageError("--force replaces a state; a history is only ever added to")
        if not os.path.lexists(file):
            raise UsageError(f"cannot read {file}: no such file")
        try:
            pushed = push_history_file(options, file)
        except FileRefused as refused:  # as `state push FILE` says it
            raise UsageError(refused.message, hint=refused.hint) from None
        last = (
            f", the last {pushed.last_seq} with hash {pushed.last_hash}" if pushed.last_seq else ""
        )
        click.echo(
            f"Pushed the history {file}: {pushed.added} entries added, {pushed.kept} already "
            f"there{last}."
        )
        return int(ExitCode.OK)
    source = Path("<stdin>") if str(file) == "-" else file
    incoming = read_pushed(_read_bytes(file), source=source, address_error=_not_an_address)
    replacement = push_state(
        options, incoming, force=force, warn=lambda text: click.echo(f"warning: {text}", err=True)
    )
    click.echo(
        f"Pushed {source}: lineage {replacement.lineage}, serial {replacement.serial}, "
        f"{len(replacement.resources)} record(s)."
    )
    return int(ExitCode.OK)


def _not_an_address(address: str) -> str | None:
    """What makes a pushed record's key no address a command can name (``state show``,
    ``state rm`` take only ``Kind/name`` of a known kind and a name of at most
    ``MAX_NAME``): pushed, such a record could be neither shown nor removed."""
    parsed = Address.parse(address)
    if parsed is not None and len(parsed.name) <= MAX_NAME:
        return None
    return (
        f"its address is not Kind/name: one of the kinds {', '.join(kind_names())}, '/', "
        f"and the document's name, at most {MAX_NAME} characters"
    )


def _read_bytes(file: Path) -> bytes:
    """What ``state push`` reads, bounded as every file the tool reads: a named pipe waited
    for a writer for ever, and ``/dev/zero`` (or ``- < /dev/zero``) was read until memory
    ran out."""
    limit = max_file_bytes()
    if str(file) == "-":
        data = sys.stdin.buffer.read(limit + 1)
        if len(data) > limit:
            raise UsageError(
                f"standard input is larger than {megabytes(limit)}: not a state as "
                "`customs-batch state pull` prints it",
                hint=f"raise the limit with {MAX_FILE_MB_VARIABLE}=MEGABYTES for a larger state",
            )
        return data
    try:
        return read_user_file(file, limit=limit, kind=InputKind.STATE)
    except FileRefused as refused:
        raise UsageError(refused.message, hint=refused.hint) from None
    except OSError as exc:
        raise UsageError(f"cannot read {file}: {exc.strerror}") from None


@click.command("import")
@click.argument("address")
@click.argument("remote_id")
@click.argument("paths", nargs=-1, type=ManifestPath())
@env_option
@verbose_option
@lock_timeout_option
@mrn_check_digit_option
@allow_empty_state_option
def import_(
    address: str,
    remote_id: str,
    paths: tuple[Path, ...],
    env_name: str | None,
    verbose: bool,
    lock_timeout: float,
    mrn_check_digit: str,
    allow_empty_state: bool,
) -> int:
    """Take over an object that exists at the service as the document ADDRESS.

    The document must be in the manifests (PATHS, default: the manifests list of
    customs-batch.yaml, else the current folder). The object is read and compared with the
    document first (all but a movement, which the API cannot read back: its ID is recorded
    as given, and the next plan takes it as sent, so check it), and the differences are
    shown: where a field that cannot change differs
    (a departure's weight or offices), nothing is recorded and the exit code is 1; so is a
    template group of another code than the document's (another group) unless the state
    says ADDRESS stood for REMOTE_ID (the newest answer its history keeps gave it that
    ID, as after `state rm --gone`). Otherwise it is recorded as the service holds it, so the next
    plan shows what the manifests would change; what the service does not give back (a
    group's templates, a declaration's parties) is sent by the next apply, unless the
    service holds the object in a state nothing is sent to (a departure customs cancelled;
    one it rejected, which the next apply replaces by a new one carrying them: the output
    says so). An ID another
    record holds (a tombstone too) is refused (exit 3): one object, one record; so is one
    a record of the state of another environment of the same service holds (the other
    environments of customs-batch.yaml with the same base_url, however written, and a PostgreSQL
    database's other states of that service); and so is any ID for a document that
    declares what another record of the state (a tombstone too), or a record of such a
    state, declares, as plan compares them (a renamed document, which plan moves): one
    declaration, one record.
    ADDRESS may not be in the state already, unless its record is a creation the service
    refused.

    \b
    Example:
      customs-batch import TemplateGroup/eu-road 12 manifests/
    """
    parsed = parse_address(address)
    set_http_log(enabled=verbose)
    record, comparison = import_document(
        _options(env_name, lock_timeout, allow_empty_state=allow_empty_state),
        parsed,
        remote_id,
        paths,
        mrn_check_digit=MRN_CHECK_LEVELS[mrn_check_digit],
    )
    outputs = printable(" ".join(f"{k}={v}" for k, v in sorted(record.outputs.items())))
    click.echo(f"Imported {parsed}: {outputs}")
    _echo_comparison(comparison)
    return int(ExitCode.OK)


@click.command("force-unlock")
@click.argument("lock_id", type=Given("the lock id the message naming the holder gives"))
@env_option
@click.option(
    "--force",
    is_flag=True,
    help="Break a lock taken on another machine, once you checked that its run has ended; "
    "with a PostgreSQL state, end the database session of a holder that is still alive.",
)
def force_unlock(lock_id: str, env_name: str | None, force: bool) -> int:
    """Remove the state lock LOCK_ID of a run that has ended.

    The id is in the message that names the holder. The lock of a run that died is released
    by the system on its own; this removes its note. A run that is still alive on this
    machine is never unlocked: stop it instead (Ctrl-C, or kill its process). A lock taken
    on another machine needs --force, because this machine cannot tell whether that run
    still goes on: two runs at once would send the same documents twice. A run whose lock
    was broken stops before its next write. With a PostgreSQL state, a holder whose database
    session is alive is refused unless --force, which ends that session: the holder's next
    record fails and it stops.

    \b
    Examples:
      customs-batch force-unlock 3f2c9a1e-7d1b-4c55-9f0e-2b8d6c1a4e77
      customs-batch force-unlock 3f2c9a1e-7d1b-4c55-9f0e-2b8d6c1a4e77 --force
    """
    done = unlock(_options(env_name), lock_id, force=force)
    click.echo(f"Unlocked: {done.info.describe()}")
    click.echo(done.how)
    return int(ExitCode.OK)
