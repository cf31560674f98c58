"""``templates`` as functions: the templates ``template: NAME`` can name, the project's
first, then the built-in ones."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from customs_batch.manifest.templates.catalog import TemplateInfo, TemplateText


@dataclass(frozen=True)
class TemplatesOptions:
    """``project``: a folder of the project (its ``templates/`` is searched); the folder
    of its customs-batch.yaml is found from there, as validate finds it."""

    project: Path = Path(".")


@dataclass(frozen=True)
class TemplateOptions(TemplatesOptions):
    """``name``: the template, as ``template: NAME`` names it."""

    name: str = ""


def list_templates(options: TemplatesOptions) -> tuple[TemplateInfo, ...]:
    """The project's and the built-in templates, each with where it is, the first line of
    its comment, and what it hides or is hidden by."""
    from customs_batch.manifest.discover import folder_project_root
    from customs_batch.manifest.templates import catalog

    return tuple(catalog.list_templates(folder_project_root(options.project)))


def show_template(options: TemplateOptions) -> TemplateText:
    """The template ``options.name`` names, its text and where it is (a
    :class:`customs_batch.manifest.templates.catalog.TemplateNotFound` when none has it)."""
    from customs_batch.manifest.discover import folder_project_root
    from customs_batch.manifest.templates import catalog

    root = folder_project_root(options.project)
    return catalog.show_template(root, options.name)
