"""``customs-batch sandbox``: serve the emulator, print its built-in seed."""

from __future__ import annotations

import math
import stat
from pathlib import Path

import click

from customs_batch.cli._choices import CutChoice, CutGroup, Given
from customs_batch.cli._once import OnceOption
from customs_batch.cli._paths import CutPath
from customs_batch.commands.sandbox import builtin_seed, serve_sandbox
from customs_batch.errors import ExitCode
from customs_batch.sandbox import parse_faults, parse_rate_limit
from customs_batch.sandbox.server import ServeOptions


@click.group(cls=CutGroup)
def sandbox() -> None:
    """The sandbox emulator of the Customs Declaration Service.

    \b
    Examples:
      customs-batch sandbox serve --port 8080
      customs-batch sandbox serve --db sandbox.db --rate-limit off
      customs-batch sandbox serve --port 0 --clock manual --processing-seconds 2
      customs-batch sandbox serve --faults '5xx=0.1,drop=0.05' --fault-seed 7
      customs-batch sandbox seed-example > seed.yaml
    """


@sandbox.command("serve")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    # Empty, it listened on every interface (0.0.0.0): `--host "$HOST"` unset exposed it.
    type=Given("an address, such as 127.0.0.1"),
    help="Address to listen on.",
)
@click.option(
    "--port",
    default=8080,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port (0: any free port).",
)
@click.option(
    "--seed",
    "seed_path",
    cls=OnceOption,
    noun="file",
    type=CutPath(path_type=Path, exists=True, dir_okay=False),
    help="Seed YAML file (default: the built-in seed).",
)
@click.option(
    "--db",
    "db_path",
    cls=OnceOption,
    noun="file",
    type=CutPath(path_type=Path, dir_okay=False),
    callback=lambda _ctx, _param, value: _data_file(value),
    help="SQLite file that keeps the data across restarts.",
)
@click.option(
    "--rate-limit",
    default="100/minute",
    show_default=True,
    help="N/second, N/minute, N/hour or off; per API key.",
)
@click.option(
    "--processing-seconds",
    default=2.0,
    show_default=True,
    type=click.FloatRange(min=0),
    callback=lambda _ctx, _param, value: _finite_seconds(value),
    help="Time until submissions are processed and cancellations decided (customs' clock).",
)
@click.option(
    "--clock",
    "clock",
    default="real",
    show_default=True,
    type=CutChoice(["real", "manual"]),
    help="Customs' clock. manual: it stands still until POST /_sandbox/clock "
    '{"advanceSeconds": N} moves it, so tests decide when processing ends; the rate limit '
    "keeps the real clock. See docs/sandbox.md.",
)
@click.option(
    "--faults",
    default="",
    help="Fault spec: NAME=PROBABILITY,... with 5xx and drop (refused or cut before the "
    "request has any effect), 5xx-after and drop-after (the same after it took effect: the "
    "client never learns the outcome), 429, and slow=P:Ss. E.g. "
    "'5xx=0.1,drop=0.05,drop-after=0.05,slow=0.2:1.5s,429=0.05'. See docs/sandbox.md.",
)
@click.option("--fault-seed", type=int, help="Seed of the fault draws, for reproducible runs.")
def serve_command(
    host: str,
    port: int,
    seed_path: Path | None,
    db_path: Path | None,
    rate_limit: str,
    processing_seconds: float,
    clock: str,
    faults: str,
    fault_seed: int | None,
) -> int:
    """Serve every endpoint of the API over HTTP until SIGTERM or Ctrl-C."""
    options = ServeOptions(
        host=host,
        port=port,
        seed_path=seed_path,
        db_path=db_path,
        rate_limit=parse_rate_limit(rate_limit),
        processing_seconds=processing_seconds,
        manual_clock=clock == "manual",
        faults=parse_faults(faults),
        fault_seed=fault_seed,
    )
    serve_sandbox(options, announce=lambda line: click.echo(line))
    return int(ExitCode.OK)


@sandbox.command("seed-example")
def seed_example() -> int:
    """Print the documented built-in seed (a starting point for --seed)."""
    click.echo(builtin_seed(), nl=False)
    return int(ExitCode.OK)


def _finite_seconds(seconds: float) -> float:
    """``--processing-seconds``: a number of seconds. ``nan`` passes ``x>=0`` (no comparison
    with it is true) and would never let anything be processed; ``inf`` neither would."""
    if not math.isfinite(seconds):
        raise click.BadParameter(f"{seconds} is not a number of seconds; give one, e.g. 2")
    return seconds


def _data_file(path: Path | None) -> Path | None:
    """``--db``: never one of customs-batch's records (the state, its journal, the
    history...), which SQLite would turn into a database; the emulator's own data file
    (``sandbox.sqlite3``, which ``local`` keeps in its state folder) is its to use."""
    from customs_batch.protected_files import record_protection

    found = None if path is None else record_protection(path)
    if path is not None and found is not None and not path.name.startswith("sandbox.sqlite3"):
        raise click.BadParameter(f"{path}: {found.what}; name a file of its own for the data")
    if path is not None:
        # A device or a named pipe is no database: SQLite took /dev/null for an empty one,
        # and the emulator made it private (0600, breaking every other user's /dev/null)
        # and wrote /dev/null-journal beside it.
        try:
            mode = path.stat().st_mode
        except OSError:
            mode = None  # a new file, or one whose error opening it names
        if mode is not None and not stat.S_ISREG(mode):
            raise click.BadParameter(
                f"{path}: not a regular file (a device, a named pipe or a socket); name a "
                "file of its own for the data (it is created if missing)"
            )
    return path
