"""The envelope of a document (apiVersion, kind, metadata, template, values, forEach, spec),
checked and read into a typed :class:`Envelope`, every problem a finding at its place."""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from customs_batch.findings import JsonPath
from customs_batch.kinds import API_VERSION, Address, Kind
from customs_batch.manifest.document import nothing
from customs_batch.manifest.yaml._tree import Walk

if TYPE_CHECKING:  # read only for a document with forEach (see read_envelope)
    from customs_batch.manifest.rows._options import ForEach

TOP_LEVEL_KEYS = ("apiVersion", "kind", "metadata", "template", "values", "forEach", "spec")
METADATA_KEYS = ("name", "dependsOn", "labels", "annotations", "previousNames")
_KIND_NAMES = ", ".join(kind.value for kind in Kind)


@dataclass(frozen=True)
class Envelope:
    """A document's envelope whose shape is right (values may still hold Jinja)."""

    kind: Kind
    name: str
    depends_on: tuple[Address, ...]
    labels: Mapping[str, str]
    template: str | None
    values: dict[str, Any]
    spec: dict[str, Any]
    for_each: ForEach | None = None
    previous_names: tuple[str, ...] = ()
    annotations: Mapping[str, str] = dataclasses.field(default_factory=nothing)


def read_envelope(data: Any, walk: Walk) -> Envelope | None:
    """The envelope of a walked document, or None after recording why in ``walk.findings``."""
    check = _Checker(walk)
    if not isinstance(data, dict):
        check.error("envelope.not-mapping", "a document must be a mapping", (), _NOT_MAPPING)
        return None
    misspelt = check.unknown_keys(data, TOP_LEVEL_KEYS, ())
    check.api_version(data)
    kind = check.kind(data)
    metadata = check.mapping(data, "metadata", ("metadata",), required=True)
    name = check.name(metadata)
    if metadata is not None:
        check.unknown_keys(metadata, METADATA_KEYS, ("metadata",))
    depends_on = check.depends_on(metadata)
    previous_names = check.previous_names(metadata, name, for_each="forEach" in data)
    labels = check.labels(metadata)
    annotations = check.annotations(metadata)
    template = check.template(data)
    values = check.mapping(data, "values", ("values",), required=False)
    # A misspelt key is the likelier story than a missing spec: report it alone.
    spec = check.mapping(data, "spec", ("spec",), required=template is None and not misspelt)
    for_each = None
    if "forEach" in data:
        # The spreadsheet options' checks are imported only by a document that has some.
        from customs_batch.manifest.rows._options import read_for_each

        for_each = read_for_each(data["forEach"], walk)
        check.failed = check.failed or for_each is None
    if check.failed or kind is None or name is None:
        return None
    return Envelope(
        kind,
        name,
        depends_on,
        labels,
        template,
        values or {},
        spec or {},
        for_each,
        previous_names,
        annotations,
    )


_NOT_MAPPING = "Start the document with 'apiVersion: customs-batch/v1', 'kind:' and 'metadata:'."


class _Checker:
    def __init__(self, walk: Walk) -> None:
        self.walk = walk
        self.failed = False

    def error(self, rule: str, message: str, path: JsonPath, hint: str) -> None:
        self.failed = True
        self.walk.report_at(rule, message, hint, path)

    def unknown_keys(self, data: Mapping[str, Any], known: tuple[str, ...], at: JsonPath) -> bool:
        """Report keys not in ``known``; whether there were any."""
        found = False
        for key in data:
            if key not in known:
                close = _closest(key, known)
                hint = f"Did you mean {close!r}? " if close else ""
                if not at and key in METADATA_KEYS:  # `dependsOn:` beside `metadata:`
                    hint = f"{key!r} belongs under 'metadata:' (metadata.{key}). "
                where = f"under {at[-1]!r}" if at else "at the top of a document"
                message = f"unknown key {key!r} {where}"
                self.failed = found = True
                hint += _allowed(known)
                self.walk.report_key("envelope.unknown-key", message, hint, (*at, key))
        return found

    def api_version(self, data: Mapping[str, Any]) -> None:
        value = data.get("apiVersion")
        if value != API_VERSION:
            said = "is missing" if value is None else f"is {value!r}"
            hint = f"Write 'apiVersion: {API_VERSION}'."
            if value is None:  # perhaps no manifest at all, found by a folder search
                hint += (
                    " If the file is not a manifest (a workflow, a docker-compose.yml), list"
                    " the folders that hold the manifests under 'manifests:' in"
                    " customs-batch.yaml, or name them on the command line."
                )
            self.error("envelope.api-version", f"apiVersion {said}", ("apiVersion",), hint)

    def kind(self, data: Mapping[str, Any]) -> Kind | None:
        value = data.get("kind")
        kind = Kind.parse(value) if isinstance(value, str) else None
        if kind is None:
            said = "is missing" if value is None else f"{value!r} is not a kind"
            close = _closest(str(value), tuple(k.value for k in Kind))
            hint = (f"Did you mean {close!r}? " if close else "") + f"Kinds: {_KIND_NAMES}."
            self.error("envelope.kind", f"kind {said}", ("kind",), hint)
        return kind

    def mapping(
        self, data: Mapping[str, Any], key: str, path: JsonPath, *, required: bool
    ) -> dict[str, Any] | None:
        value = data.get(key)
        if isinstance(value, dict):
            return value
        if value is None and key not in data and not required:
            return None
        said = "is missing" if key not in data else "must be a mapping (key: value lines)"
        hint = f"Give the document a '{key}:' mapping."
        self.error(f"envelope.{key.lower()}", f"{key} {said}", path, hint)
        return None

    def name(self, metadata: Mapping[str, Any] | None) -> str | None:
        if metadata is None:
            return None
        value = metadata.get("name")
        if isinstance(value, str) and value.strip():
            return value
        said = "is missing" if value is None else "must be a non-empty text"
        hint = "Give the document a name unique within its kind: 'metadata: {name: dep-0001}'."
        self.error("envelope.name", f"metadata.name {said}", ("metadata", "name"), hint)
        return None

    def previous_names(
        self, metadata: Mapping[str, Any] | None, name: str | None, *, for_each: bool
    ) -> tuple[str, ...]:
        """``metadata.previousNames``: the names the document had before (a declared
        rename, like Terraform's ``moved`` block)."""
        if metadata is None or "previousNames" not in metadata:
            return ()
        value = metadata["previousNames"]
        path: JsonPath = ("metadata", "previousNames")
        if for_each:
            hint = "Rename each row's record with `customs-batch state mv OLD NEW` instead."
            self.error(
                "envelope.previous-names", "previousNames cannot be used with forEach", path, hint
            )
            return ()
        if not isinstance(value, list):
            hint = "Write a list of the document's earlier names: 'previousNames: [dep-old]'."
            self.error("envelope.previous-names", "previousNames must be a list", path, hint)
            return ()
        names: list[str] = []
        for index, entry in enumerate(value):
            if not isinstance(entry, str) or not entry.strip() or "/" in entry:
                message = f"{entry!r} is not a document name"
                hint = "Write the earlier name alone, without the kind: 'previousNames: [dep-old]'."
                self.error("envelope.previous-names", message, (*path, index), hint)
            elif entry == name:
                message = f"{entry!r} is the document's own name"
                hint = "List only the names it had before."
                self.error("envelope.previous-names", message, (*path, index), hint)
            else:
                names.append(entry)
        return tuple(names)

    def depends_on(self, metadata: Mapping[str, Any] | None) -> tuple[Address, ...]:
        value = metadata.get("dependsOn", []) if metadata is not None else []
        path: JsonPath = ("metadata", "dependsOn")
        if not isinstance(value, list):
            hint = "Write a list: 'dependsOn: [TemplateGroup/eu-road]'."
            self.error("envelope.depends-on", "dependsOn must be a list", path, hint)
            return ()
        addresses: list[Address] = []
        for index, entry in enumerate(value):
            address = Address.parse(entry) if isinstance(entry, str) else None
            if address is None:
                message = f"{entry!r} is not an address Kind/name"
                hint = f"Write Kind/name with a kind of: {_KIND_NAMES}."
                self.error("envelope.depends-on", message, (*path, index), hint)
            else:
                addresses.append(address)
        return tuple(addresses)

    def labels(self, metadata: Mapping[str, Any] | None) -> Mapping[str, str]:
        value = metadata.get("labels", {}) if metadata is not None else {}
        path: JsonPath = ("metadata", "labels")
        if not isinstance(value, dict):
            hint = "Write 'labels: {lane: ham-rtm}'."
            self.error("envelope.labels", "labels must be a mapping", path, hint)
            return {}
        labels: dict[str, str] = {}
        for key, label in value.items():
            if isinstance(label, str):
                labels[key] = label
            else:
                hint = "Quote the label's value."
                self.error("envelope.labels", f"label {key!r} must be a text", (*path, key), hint)
        return labels or nothing()  # no empty dict per document of a bulk load

    def annotations(self, metadata: Mapping[str, Any] | None) -> Mapping[str, str]:
        value = metadata.get("annotations", {}) if metadata is not None else {}
        path: JsonPath = ("metadata", "annotations")
        if not isinstance(value, dict):
            hint = "Write 'annotations: {customs-batch/suppress: \"rule-id: reason\"}'."
            self.error("envelope.annotations", "annotations must be a mapping", path, hint)
            return {}
        annotations: dict[str, str] = {}
        for key, text in value.items():
            if isinstance(text, str):
                annotations[str(key)] = text
            else:
                hint = "Quote the annotation's value."
                message = f"annotation {key!r} must be a text"
                self.error("envelope.annotations", message, (*path, key), hint)
        return annotations or nothing()

    def template(self, data: Mapping[str, Any]) -> str | None:
        value = data.get("template")
        if value is None or isinstance(value, str):
            return value
        hint = "Name a template: 'template: t1-road' for templates/t1-road.yaml.j2."
        self.error("envelope.template", "template must be a template name", ("template",), hint)
        return None


def _allowed(known: tuple[str, ...]) -> str:
    return "Allowed here: " + ", ".join(known) + "."


def _closest(word: str, choices: tuple[str, ...]) -> str | None:
    """The choice ``word`` was most likely meant to be: a close spelling or a shared start."""
    close = difflib.get_close_matches(word, choices, n=1)
    if close:
        return close[0]
    lowered = word.lower()
    return next((c for c in choices if lowered.startswith(c.lower()) and len(c) >= 3), None)
