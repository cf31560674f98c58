"""The templates ``template: NAME`` can name in a project: the project's and the built-in ones.

A project template with a built-in's name hides the built-in (the project's ``templates/``
is searched first); the catalog says so, and documents using that name get a warning.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from customs_batch.errors import ManifestError
from customs_batch.manifest.templates._render import SUFFIX, search_path
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


@dataclass(frozen=True)
class TemplateText:
    """A template and its text, as ``template: NAME`` would use it."""

    info: TemplateInfo
    text: str


class TemplateNotFound(ManifestError):
    """No template of that name in the project or among the built-in ones."""


def list_templates(project_root: Path) -> list[TemplateInfo]:
    """Every template of the project and every built-in one, by name; the one that
    ``template: NAME`` uses comes first."""
    project_dir, builtin_dir = search_path(project_root)
    project = _files(project_dir)
    builtin = _files(builtin_dir)
    infos: list[TemplateInfo] = []
    for name in sorted(project.keys() | builtin.keys()):
        own, shipped = project.get(name), builtin.get(name)
        if own is not None:
            infos.append(TemplateInfo(name, PROJECT, own, _summary(own), hides=shipped))
        if shipped is not None:
            infos.append(TemplateInfo(name, BUILT_IN, shipped, _summary(shipped), hidden_by=own))
    return infos


def show_template(project_root: Path, name: str) -> TemplateText:
    """The template ``template: NAME`` uses in the project, with its text."""
    infos = list_templates(project_root)
    for info in infos:
        if info.name == name:
            return TemplateText(info, info.path.read_text(encoding="utf-8"))
    names = sorted({info.name for info in infos})
    close = difflib.get_close_matches(name, names, n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    hint += "'customs-batch templates list' lists them: " + ", ".join(names)
    raise TemplateNotFound(f"no template named {name!r}", hint=hint)


@lru_cache(maxsize=256)
def shadowed_builtin(project_root: Path, name: str) -> Path | None:
    """The built-in template a project template named ``name`` hides, if it does."""
    own = search_path(project_root)[0] / f"{name}{SUFFIX}"
    shipped = builtin_templates_dir() / f"{name}{SUFFIX}"
    return shipped if own.is_file() and shipped.is_file() else None


def _files(folder: Path) -> dict[str, Path]:
    if not folder.is_dir():
        return {}
    return {
        path.relative_to(folder).as_posix().removesuffix(SUFFIX): path
        for path in sorted(folder.rglob(f"*{SUFFIX}"))
        if path.is_file()
    }


def _summary(path: Path) -> str:
    """The first line of the template's leading comment (empty when it has none)."""
    try:
        with path.open(encoding="utf-8") as file:
            first = file.readline()
    except (OSError, UnicodeDecodeError):
        return ""
    match = _COMMENT.match(first)
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
