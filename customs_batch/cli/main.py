"""The ``customs-batch`` command group and the one error handler around it."""

from __future__ import annotations

import codecs
import importlib
import io
import os
import stat
import sys
import traceback
from typing import Any

import click

from customs_batch import __version__
from customs_batch.cli._choices import CutGroup
from customs_batch.cli._command_line import forget_env, with_env
from customs_batch.cli._once import take_once
from customs_batch.errors import CustomsBatchError, ExitCode
from customs_batch.escaping import printable_lines
from customs_batch.userfiles import forget_files_read

# Subcommands are imported only when used, so `validate` never pays for the emulator's imports.
# name -> "module:attribute"
COMMANDS: dict[str, str] = {
    "validate": "customs_batch.cli.validate:validate",
    "render": "customs_batch.cli.render:render",
    "schema": "customs_batch.cli.schema:schema",
    "init": "customs_batch.cli.init:init",
    "sandbox": "customs_batch.cli.sandbox:sandbox",
    "env": "customs_batch.cli.env:env",
    "get": "customs_batch.cli.get:get",
    "plan": "customs_batch.cli.plan:plan",
    "apply": "customs_batch.cli.apply:apply",
    "state": "customs_batch.cli.state:state",
    "import": "customs_batch.cli.state:import_",
    "refresh": "customs_batch.cli.refresh:refresh",
    "status": "customs_batch.cli.refresh:status",
    "results": "customs_batch.cli.results:results",
    "force-unlock": "customs_batch.cli.state:force_unlock",
    "sheet": "customs_batch.cli.sheet:sheet",
    "templates": "customs_batch.cli.templates:templates",
    "history": "customs_batch.cli.history:history",
    "policy": "customs_batch.cli.policy:policy",
}

# The first sentence of each command's help, for the list in `customs-batch --help`, which
# would otherwise import every command module (plan and apply bring httpx and the emulator:
# 0.8 s of CPU for a help text). tests/cli/test_main.py holds them to the commands' own help.
SUMMARIES: dict[str, str] = {
    "apply": "Apply the manifests (or a saved plan) to an environment.",
    "env": "List, show and check the environments of customs-batch.yaml.",
    "force-unlock": "Remove the state lock LOCK_ID of a run that has ended.",
    "history": "Show what apply sent to an environment, or prove its history unbroken (`verify`).",
    "get": "Read shipments, declarations, items, template groups, HAWBs and allocations.",
    "import": "Take over an object that exists at the service as the document ADDRESS.",
    "init": "Create a customs-batch project in DIRECTORY (default: the current folder).",
    "policy": "The team's own rules: CEL policies in the project's policies/ folder.",
    "plan": "Compare the manifests with the recorded state and show what apply would do.",
    "refresh": "Poll what the state knows and record what changed at the service.",
    "results": (
        "Show where every spreadsheet row stands after apply, or write it into the workbook."
    ),
    "render": (
        "Print the fully expanded documents: envelope and spec with the template merged in."
    ),
    "sandbox": "The sandbox emulator of the Customs Declaration Service.",
    "schema": "Work with the JSON Schemas manifests are checked against.",
    "sheet": "Spreadsheets that manifests expand over with forEach.",
    "state": "Look at and mend the recorded state of an environment.",
    "templates": "The templates a document can name with `template: NAME`.",
    "status": "Show the declarations, party updates and cancellations of the state, last known status (no network).",
    "validate": "Validate manifests offline: YAML, envelope, templates, schemas, customs rules.",
}


class LazyGroup(CutGroup):
    """A group whose subcommands live in their own modules and load on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), *COMMANDS])

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return super().get_command(ctx, cmd_name)
        module_name, _, attribute = target.partition(":")
        command = getattr(importlib.import_module(module_name), attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{target} is not a click command")
        return take_once(command)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list of ``--help``, from ``SUMMARIES`` where they have one."""
        commands = [(name, self._listed(ctx, name)) for name in self.list_commands(ctx)]
        shown = [(name, command) for name, command in commands if command and not command.hidden]
        if not shown:
            return
        limit = formatter.width - 6 - max(len(name) for name, _ in shown)
        with formatter.section("Commands"):
            formatter.write_dl([(name, cmd.get_short_help_str(limit)) for name, cmd in shown])

    def _listed(self, ctx: click.Context, name: str) -> click.Command | None:
        """A stand-in that click shortens as it would the real command, or the command."""
        summary = SUMMARIES.get(name)
        if summary is None:
            return self.get_command(ctx, name)
        return click.Command(name, help=summary)


CONTEXT_SETTINGS: dict[str, Any] = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


@click.group(cls=LazyGroup, context_settings=CONTEXT_SETTINGS)
@click.version_option(__version__, "--version", prog_name="customs-batch")
def main() -> None:
    """Declarative batch submitter for the Customs Declaration Service.

    Keep departure declarations, template groups and RTO movements as YAML manifests in
    git; validate them offline, then plan and apply them against an environment.

    \b
    Examples:
      customs-batch validate manifests/
      customs-batch render manifests/departures.yaml --format json
      customs-batch sandbox serve --port 8080
    """


def run(argv: list[str] | None = None) -> None:
    """Entry point: run the CLI and turn every error into a message and an exit code."""
    _every_character_writable()
    _drop_output_once_reader_leaves()
    sys.exit(invoke(argv))


def _every_character_writable() -> None:
    """Standard output and error that can write every character: in UTF-8 where the locale
    says ASCII (``LC_ALL=C`` with Python's UTF-8 mode and locale coercion off,
    ``PYTHONIOENCODING=ascii``), as click already writes what it echoes there; in another
    encoding (``PYTHONIOENCODING=latin-1``, an ISO 8859 locale), a character it lacks as
    its escape (``\\u6771``). Either had ended a command on a non-ASCII name in an
    "internal error: UnicodeEncodeError" (the tables rich draws, the JSON written to the
    stream itself, and in another encoding every line)."""
    for stream in (sys.stdout, sys.stderr):
        if not isinstance(stream, io.TextIOWrapper):
            continue
        try:
            name = codecs.lookup(stream.encoding).name
        except LookupError:
            continue
        if name == "ascii":
            stream.reconfigure(encoding="utf-8", errors=stream.errors)
        elif not name.startswith("utf-") and stream.errors == "strict":
            stream.reconfigure(errors="backslashreplace")


class _UntilReaderLeaves(io.RawIOBase):
    """Standard output's bytes, written to the pipe until its reader closes it (``| head``),
    then dropped: the command goes on to its end and its own exit code, where the write
    that failed would have ended it with 1 ("findings", "refused") and nothing said."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd
        self._gone = False

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return False  # a pipe

    def write(self, data: Any) -> int:
        size = len(memoryview(data))
        if self._gone:
            return size
        try:
            return os.write(self._fd, data)
        except BrokenPipeError:
            self._gone = True
            return size


def _drop_output_once_reader_leaves() -> None:
    """When standard output is a pipe, write it through :class:`_UntilReaderLeaves`."""
    out = sys.stdout
    try:
        fd = out.fileno()
        piped = stat.S_ISFIFO(os.fstat(fd).st_mode) or stat.S_ISSOCK(os.fstat(fd).st_mode)
    except (AttributeError, OSError, ValueError):
        return  # closed, or not a file (a test's capture)
    if not piped or not isinstance(out, io.TextIOWrapper):
        return
    out.flush()
    sys.stdout = io.TextIOWrapper(
        io.BufferedWriter(_UntilReaderLeaves(fd)),
        encoding=out.encoding,
        errors=out.errors,
        line_buffering=out.line_buffering,
    )


def invoke(argv: list[str] | None = None) -> int:
    """Run the CLI with ``argv`` and return the exit code instead of exiting."""
    forget_files_read()  # what an output may not replace is what this command reads
    forget_env()
    try:
        result = main.main(args=argv, prog_name="customs-batch", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.Abort:
        click.echo("Aborted.", err=True)
        return int(ExitCode.INTERRUPTED)
    except click.UsageError as exc:
        exc.show()
        return int(ExitCode.USAGE)
    except click.ClickException as exc:
        exc.show()
        return int(ExitCode.ERROR)
    except CustomsBatchError as exc:
        details = exc.details()
        if details:
            click.echo(details, err=True, nl=not details.endswith("\n"))
        click.echo(f"error: {printable_lines(with_env(str(exc)))}", err=True)
        return int(exc.exit_code)
    except KeyboardInterrupt:
        click.echo("Interrupted.", err=True)
        return int(ExitCode.INTERRUPTED)
    except BrokenPipeError:
        # The reader of a file other than standard output went away (standard output's
        # goes on into nothing, see run): nothing more to say there.
        sys.stderr.close()
        return int(ExitCode.OK)
    except MemoryError:
        # Not a bug to report: the memory the run may use (ulimit -v, a CI runner's limit)
        # ran out outside the places that name the file being read (file.out-of-memory).
        click.echo(
            "error: the run ran out of memory and stopped (what it had recorded is kept)\n"
            "  hint: run it where it may use more memory (ulimit -v, the CI "
            "runner's size), or split the input: fewer documents per run (-l/--target), or "
            "a forEach's rows in parts (rows:)",
            err=True,
        )
        return int(ExitCode.ERROR)
    except UnicodeEncodeError as exc:
        encoding = codecs.lookup(sys.getfilesystemencoding()).name
        if encoding == "utf-8":
            return _internal_error(exc)
        # Python's file names are in the locale's encoding only where UTF-8 mode and locale
        # coercion are both turned off (LC_ALL=C with PYTHONUTF8=0 PYTHONCOERCECLOCALE=0):
        # a file named in a manifest or the configuration as `zölle.xlsx` cannot be opened.
        held = exc.object[exc.start : exc.end] if isinstance(exc.object, str) else ""
        character = " ".join(f"{c!r} (U+{ord(c):04X})" for c in held[:1]) or "a character"
        click.echo(
            f"error: a name holds {character}, which file names cannot hold here: this "
            f"process reads and writes them in {encoding} (its locale, with Python's UTF-8 "
            "mode off); nothing more was done (what the run had recorded is kept)\n"
            "  hint: run it in a UTF-8 locale (LANG=C.UTF-8), or with PYTHONUTF8=1",
            err=True,
        )
        return int(ExitCode.ERROR)
    except Exception as exc:  # the last line of defence: no traceback reaches a user
        return _internal_error(exc)
    if isinstance(result, int):
        return result
    return int(ExitCode.OK)


def _internal_error(exc: Exception) -> int:
    """Say that ``exc`` is a bug, without a traceback unless asked for one."""
    if os.environ.get("CUSTOMS_BATCH_DEBUG"):
        traceback.print_exc()
    click.echo(
        f"internal error: {type(exc).__name__}: {printable_lines(str(exc))}\n"
        "  hint: this is a bug in customs-batch; run again with CUSTOMS_BATCH_DEBUG=1 "
        "for the traceback and report it.",
        err=True,
    )
    return int(ExitCode.ERROR)
