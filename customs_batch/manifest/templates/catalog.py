"""The templates ``template: NAME`` can name in a project: the project's and the built-in ones.

A project template with a built-in's name hides the built-in (the project's ``templates/``
is searched first); the catalog says so, and documents using that name get a warning.
Templates are read as a render reads them (:func:`read_template_file`): one the loader
refuses (a link out of the template folders, not UTF-8, too large) is listed with why, and
its text is never shown.
"""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from customs_batch.errors import ManifestError, UsageError
from customs_batch.escaping import quoted_head
from customs_batch.manifest.templates._render import (
    SUFFIX,
    TemplateRefused,
    name_problem,
    read_template_file,
    search_path,
)
from customs_batch.resources import builtin_templates_dir

PROJECT = "project"
BUILT_IN = "built-in"
_COMMENT = re.compile(r"^\s*(?:\{#-?|#)\s?(.*?)\s*(?:-?#\})?\s*$")


@dataclass(frozen=True)
class TemplateInfo:
    """One template file: its name, where it comes from and what its first comment says."""

    name: str
    origin: str
    """:data:`PROJECT` or :data:`BUILT_IN`."""
    path: Path
    summary: str
    hidden_by: Path | None = None
    """For a built-in: the project template of the same name that is used instead."""
    hides: Path | None = None
    """For a project template: the built-in of the same name it is used instead of."""
    refused: str | None = None
    """Why ``template: NAME`` cannot read it (the loader's message), if it cannot."""


@dataclass(frozen=True)
class TemplateText:
    """A template and its text, as ``template: NAME`` would use it."""

    info: TemplateInfo
    text: str


class TemplateNotFound(ManifestError, UsageError):
    """No template of that name in the project or among the built-in ones: the name given
    on the command line (``templates show NAME``) is a usage mistake, exit 64."""


class TemplateNotReadable(ManifestError):
    """The template of that name is one the loader refuses to read."""


def list_templates(project_root: Path) -> list[TemplateInfo]:
    """Every template of the project and every built-in one, by name; the one that
    ``template: NAME`` uses comes first."""
    return [info for info, _ in _read_all(project_root)]


def show_template(project_root: Path, name: str) -> TemplateText:
    """The template ``template: NAME`` uses in the project, with its text (a
    :class:`TemplateNotReadable` with the loader's message when it would be refused)."""
    found = _read_all(project_root)
    for info, text in found:
        if info.name == name:
            if isinstance(text, TemplateRefused):
                raise TemplateNotReadable(text.reason, hint=text.hint)
            return TemplateText(info, text)
    names = sorted({info.name for info, _ in found})
    close = difflib.get_close_matches(name, names, n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    hint += "'customs-batch templates list' lists them: " + ", ".join(names)
    raise TemplateNotFound(f"no template named {quoted_head(name)}", hint=hint)


def _read_all(project_root: Path) -> list[tuple[TemplateInfo, str | TemplateRefused]]:
    """Each template's info and its text, or why the loader refuses it, in the order of
    :func:`list_templates`."""
    folders = search_path(project_root)
    project_dir, builtin_dir = folders
    project = _files(project_dir)
    builtin = _files(builtin_dir)
    found: list[tuple[TemplateInfo, str | TemplateRefused]] = []
    for name in sorted(project.keys() | builtin.keys()):
        own, shipped = project.get(name), builtin.get(name)
        if own is not None:
            found.append(_read(TemplateInfo(name, PROJECT, own, "", hides=shipped), folders))
        if shipped is not None:
            info = TemplateInfo(name, BUILT_IN, shipped, "", hidden_by=own)
            found.append(_read(info, folders))
    return found


def _read(info: TemplateInfo, folders: list[Path]) -> tuple[TemplateInfo, str | TemplateRefused]:
    unusable = name_problem(info.name)
    if unusable is not None:  # listed, but no document could use it
        fit = re.sub(r"[^A-Za-z0-9_./-]+", "-", info.name).strip("-") or "my-template"
        refused = TemplateRefused(
            f"{info.path.name}: {unusable}, so no document's template: can name it",
            f"rename the file, e.g. to {fit}{SUFFIX}",
        )
        return replace(info, refused=str(refused)), refused
    try:
        text = read_template_file(info.path, folders)
    except TemplateRefused as refused:
        return replace(info, refused=str(refused)), refused
    return replace(info, summary=_summary(text)), text


@lru_cache(maxsize=256)
def shadowed_builtin(project_root: Path, name: str) -> Path | None:
    """The built-in template a project template named ``name`` hides, if it does."""
    own = search_path(project_root)[0] / f"{name}{SUFFIX}"
    shipped = builtin_templates_dir() / f"{name}{SUFFIX}"
    # The loader takes the project's file whenever the path exists (a link too).
    return shipped if os.path.lexists(own) and shipped.is_file() else None


def _files(folder: Path) -> dict[str, Path]:
    """The template files of ``folder`` by name: every path the loader would try to read
    (links included, whatever they point at), not the folders named like one."""
    if not folder.is_dir():
        return {}
    return {
        path.relative_to(folder).as_posix().removesuffix(SUFFIX): path
        for path in sorted(folder.rglob(f"*{SUFFIX}"))
        if path.is_symlink() or not path.is_dir()
    }


def _summary(text: str) -> str:
    """The first line of the template's leading comment (empty when it has none)."""
    match = _COMMENT.match(text.split("\n", 1)[0])
    return match.group(1).rstrip(".,;:") if match else ""


def shadow_warning(project_root: Path, name: str) -> tuple[str, str] | None:
    """The message and hint of the warning for a document whose ``template: NAME`` uses a
    project template hiding a built-in one (None when it does not)."""
    shipped = shadowed_builtin(project_root, name)
    if shipped is None:
        return None
    message = (
        f"templates/{name}{SUFFIX} of the project is used instead of the built-in template "
        f"{name!r} of the same name"
    )
    hint = (
        "Rename the project template if the built-in one is meant; "
        f"'customs-batch templates show {name}' shows which one is used."
    )
    return message, hint
