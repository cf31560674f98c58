"""``init`` as a function: a new project that validates clean (the files of
:mod:`customs_batch.commands.scaffold`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from customs_batch.commands.scaffold import files
from customs_batch.errors import CustomsBatchError, UsageError
from customs_batch.folders import is_file_system_root
from customs_batch.output_file import check_project_file, write_project_file


@dataclass(frozen=True)
class InitOptions:
    """``directory``: where the project goes; ``force``: write into a folder that is not
    empty (its files of the same names are overwritten)."""

    directory: Path = Path(".")
    force: bool = False


@dataclass(frozen=True)
class InitResult:
    """The project's folder and every file written, in order."""

    directory: Path
    files: tuple[Path, ...]


def init_project(
    options: InitOptions, created: Callable[[Path], None] = lambda path: None
) -> InitResult:
    """Write the project's files, telling ``created`` of each as it is written (so that
    what was written before a failure is known). A folder that is not empty is refused
    without ``force``; a file that cannot be written stops the command."""
    directory = options.directory
    if is_file_system_root(directory):
        raise UsageError(
            f"{directory.resolve()} is the root of the file system, which no project can be: every "
            "file of the machine would be inside it",
            hint="name a folder of its own for the project, like `customs-batch init customs`",
        )
    try:
        if directory.exists() and not directory.is_dir():
            raise UsageError(
                f"{directory} is not a folder",
                hint="name a new folder (it is created) or an empty one",
            )
        if directory.exists() and any(directory.iterdir()) and not options.force:
            raise UsageError(
                f"{directory} is not empty",
                hint="choose a new or empty folder, or pass --force to write into it anyway",
            )
    except OSError as exc:
        raise CustomsBatchError(
            f"cannot use {directory}: {exc.strerror}", hint="choose a folder you can write to"
        ) from exc
    for relative in files():
        check_project_file(directory / relative, what="project file")  # before any is written
    written: list[Path] = []
    for relative, text in files().items():
        target = directory / relative
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            write_project_file(target, text, what="project file")
        except OSError as exc:
            raise CustomsBatchError(
                f"cannot write {target}: {exc.strerror}", hint="choose a folder you can write to"
            ) from exc
        written.append(target)
        created(target)
    return InitResult(directory, tuple(written))
