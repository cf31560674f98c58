"""Node tree to JSON-like values, typed by the schema, with marks, in one lean walk.

This walk is the hot loop of loading (tens of thousands of documents per second is the
target), so it allocates only what the result needs: the value, the path tuple that keys
the marks, and nothing per node otherwise. Strings holding Jinja or ``${ref:`` are noted on
the way so nothing has to walk the values a second time.
"""

from __future__ import annotations

import re
import sys
from typing import Any

from yaml.nodes import MappingNode, Node, ScalarNode

from customs_batch.findings import Finding, JsonPath, Location, Severity
from customs_batch.line_bound import hint
from customs_batch.manifest.document import JSON
from customs_batch.manifest.yaml._compose import MAP, PLAIN, SEQ, STR
from customs_batch.manifest.yaml._long_blocks import LongBlock
from customs_batch.manifest.yaml._scalars import NULLS as _NULLS
from customs_batch.manifest.yaml._scalars import resolve_plain, resolve_tagged
from customs_batch.manifest.yaml._schema_view import SchemaView
from customs_batch.userfiles import megabytes

MAX_DEPTH = 200
MAX_ALIAS_EXPANSIONS = 10_000
_CORE_TAG_PREFIX = "tag:yaml.org,2002:"
_LEADING_ZERO = re.compile(r"[-+]?0[0-9]+")
"""A whole number written with a leading zero: a code, as a spreadsheet cell's ``0150``."""


_SCALAR_TAGS = frozenset({"str", "int", "float", "bool", "null"})
_UNDERSTOOD = "only !!str, !!int, !!float, !!bool and !!null are understood"


def _shown_tag(tag: str) -> str:
    """``tag`` as it is written in YAML: ``!!int`` for a core tag, ``!local`` for a local
    one, ``!<uri>`` for any other."""
    if tag.startswith(_CORE_TAG_PREFIX):
        return "!!" + tag[len(_CORE_TAG_PREFIX) :]
    if tag.startswith("!"):
        return tag
    return f"!<{tag}>"


class _Stop(Exception):
    """Abandon the document: a limit was hit and the finding is already recorded."""


class Walk:
    """The result of walking one document's node tree; see :meth:`value`."""

    __slots__ = (
        "_active",
        "_deep_reported",
        "_expansions",
        "_long",
        "_max_value",
        "_seen",
        "_track_aliases",
        "abandoned",
        "file",
        "findings",
        "jinja",
        "marks",
        "refs",
        "root",
    )

    def __init__(
        self,
        file: str,
        *,
        track_aliases: bool,
        max_value: int = sys.maxsize,
        long: dict[int, LongBlock] | None = None,
    ) -> None:
        self.file = file
        self._max_value = max_value
        self._long = long
        """Blocks over ``max_value`` emptied before composing, by line; taken when met."""
        self.abandoned = False
        """Whether a limit stopped the walk (its finding is recorded)."""
        """The longest scalar read (see :mod:`customs_batch.line_bound`); a longer one abandons the document."""
        self.marks: dict[JsonPath, Any] = {}
        self.findings: list[Finding] = []
        self.jinja: list[tuple[JsonPath, str, bool]] = []
        """Strings with Jinja to render later: (path, text, string-only place)."""
        self.refs: list[tuple[JsonPath, str]] = []
        """Strings holding ``${ref:``: (path, text)."""
        # Aliases can only occur when the text has an anchor; then repeated nodes are counted.
        self._track_aliases = track_aliases
        self._seen: set[int] = set()
        self._active: set[int] = set()
        self._expansions = 0
        self._deep_reported = False
        self.root: Node | None = None

    def value(self, node: Node, view: SchemaView | None, path: JsonPath = ()) -> JSON:
        """The value of ``node`` read against ``view``; problems go to :attr:`findings`."""
        self.root = node
        try:
            return self._value(node, view, path, 0)
        except _Stop:
            self.abandoned = True
            return None

    def _value(self, node: Node, view: SchemaView | None, path: JsonPath, depth: int) -> JSON:
        self.marks[path] = node.start_mark
        if self._track_aliases and self._is_repeat(node, path):
            return None
        cls = node.__class__
        if cls is ScalarNode:
            return self._scalar(node, view, path)
        if depth >= MAX_DEPTH:
            self._too_deep(node, path)
            return None
        if node.tag != (MAP if cls is MappingNode else SEQ):
            self._container_tag(node, cls is MappingNode, path)
        if self._track_aliases:
            self._active.add(id(node))
        try:
            if cls is MappingNode:
                return self._mapping(node, view, path, depth + 1)
            items = view.items if view is not None else None
            return [
                self._value(child, items, (*path, index), depth + 1)
                for index, child in enumerate(node.value)
            ]
        finally:
            if self._track_aliases:
                self._active.discard(id(node))

    def _scalar(self, node: Node, view: SchemaView | None, path: JsonPath) -> JSON:
        tag = node.tag
        text: str = node.value
        if len(text) > self._max_value:
            self._too_long(node, path)
        if not text and self._long and node.start_mark.line in self._long:
            self._emptied(self._long.pop(node.start_mark.line), node, path)
        value: JSON
        if tag == PLAIN:
            string_only = view is not None and view.string_only
            if string_only and text not in _NULLS:
                value = text
            elif text[:1] in "0+-" and path[:1] == ("values",) and _LEADING_ZERO.fullmatch(text):
                # A code in values (a postcode 01067, a reference 0012): no schema says it is
                # a number, and read as one it lost its zero on the way into a text field.
                value = text
            else:
                value = resolve_plain(text)
        elif tag == STR:
            value = text
        else:
            value = self._tagged(node, tag, text, path)
        if value.__class__ is str and "{" in value:
            if "{{" in value or "{%" in value:
                self.jinja.append((path, value, view is not None and view.string_only))
            if "${ref:" in value:
                self.refs.append((path, value))
        return value

    def _tagged(self, node: Node, tag: str, text: str, path: JsonPath) -> JSON:
        if tag[len(_CORE_TAG_PREFIX) :] not in _SCALAR_TAGS or not tag.startswith(_CORE_TAG_PREFIX):
            self.report(
                "yaml.tag",
                f"the tag {_shown_tag(tag)} is not supported; {_UNDERSTOOD}",
                "Remove the tag, or quote the value to make it a string.",
                node,
                path,
            )
            return text  # reported: the value as written, not a second finding of its absence
        value = resolve_tagged(tag[len(_CORE_TAG_PREFIX) :], text)
        if isinstance(value, ValueError):
            self.report(
                "yaml.tag",
                f"{value}; {_UNDERSTOOD}",
                "Remove the tag, or quote the value to make it a string.",
                node,
                path,
            )
            return None
        return value

    def _container_tag(self, node: Node, mapping: bool, path: JsonPath) -> None:
        """A mapping or a list with an explicit tag (``!!omap``, ``!!set``, ``!Custom``,
        ``!!python/object:...``): reported, and its content read as if it had none."""
        what = "a mapping" if mapping else "a list"
        self.report(
            "yaml.tag",
            f"the tag {_shown_tag(node.tag)} on {what} is not supported: a mapping or a "
            "list takes no tag",
            "Remove the tag.",
            node,
            path,
        )

    def _mapping(self, node: Node, view: SchemaView | None, path: JsonPath, depth: int) -> JSON:
        out: dict[str, JSON] = {}
        props = view.props if view is not None else None
        additional = view.additional if view is not None else None
        for key_node, value_node in node.value:
            if key_node.__class__ is not ScalarNode or (
                key_node.tag == PLAIN and key_node.value == ""
            ):
                self._bad_key(key_node, path)
                continue
            # One string per field name, shared by every document: 10,000 documents
            # that repeat the same dozen keys kept 10,000 copies of each (measured).
            key: str = sys.intern(key_node.value)
            if key in out:
                self._duplicate(node, key_node, key, path)
                continue
            if key == "<<" and key_node.tag == PLAIN:
                self._merge_key(key_node, path)
                continue
            child = props.get(key, additional) if props is not None else None
            child_path = (*path, key)
            if value_node.__class__ is ScalarNode and not self._track_aliases:
                # The common case, inlined: a call less per value is measurably faster.
                self.marks[child_path] = value_node.start_mark
                out[key] = self._scalar(value_node, child, child_path)
            else:
                out[key] = self._value(value_node, child, child_path, depth)
                if value_node.__class__ is not ScalarNode:
                    # A mapping or list is placed at its key: that is where a finding about
                    # its content (a field it lacks, a field it must not have) is acted on.
                    self.marks[child_path] = key_node.start_mark
        return out

    def _is_repeat(self, node: Node, path: JsonPath) -> bool:
        ident = id(node)
        if ident in self._active:
            self.report(
                "yaml.alias",
                "an alias refers to a value that contains the alias itself",
                "Remove the recursive alias (*name inside the value anchored &name).",
                node,
                path,
            )
            return True
        if ident in self._seen:
            self._expansions += 1
            if self._expansions > MAX_ALIAS_EXPANSIONS:
                self.report(
                    "yaml.alias",
                    f"aliases expand to more than {MAX_ALIAS_EXPANSIONS} values",
                    "Write the values out, or move shared defaults into a template.",
                    node,
                    path,
                )
                raise _Stop
        else:
            self._seen.add(ident)
        return False

    def _too_long(self, node: Node, path: JsonPath) -> None:
        self.report(
            "yaml.value-too-long",
            f"a value of {len(node.value):,} characters (over {megabytes(self._max_value)}); "
            "the document is not read further",
            hint(self._max_value),
            node,
            path,
        )
        node.value = ""  # let the text go now, not when the document's tree does
        raise _Stop

    def _emptied(self, block: LongBlock, node: Node, path: JsonPath) -> None:
        message = long_block_message(block, self._max_value)
        advice = hint(self._max_value, block.end - block.start)
        self.report("yaml.value-too-long", message, advice, node, path)
        raise _Stop

    def _too_deep(self, node: Node, path: JsonPath) -> None:
        if not self._deep_reported:
            self._deep_reported = True
            self.report(
                "yaml.too-deep",
                f"the values nest more than {MAX_DEPTH} levels deep",
                "Flatten the structure; no API field nests this deep.",
                node,
                path,
            )

    def _bad_key(self, key_node: Node, path: JsonPath) -> None:
        self.report(
            "yaml.key-not-string",
            "a mapping key must be a non-empty text",
            "Write the key as a plain word (a list or mapping cannot be a key).",
            key_node,
            path,
        )

    def _merge_key(self, key_node: Node, path: JsonPath) -> None:
        self.report(
            "yaml.merge-key",
            "merge keys (<<) are not supported",
            "Write the keys out, or put shared defaults in a template (template: NAME).",
            key_node,
            path,
        )

    def _duplicate(self, node: Node, key_node: Node, key: str, path: JsonPath) -> None:
        first = next(k for k, _ in node.value if k.__class__ is ScalarNode and k.value == key)
        self.report(
            "yaml.duplicate-key",
            f"duplicate key {key!r} (first at line {first.start_mark.line + 1})",
            "Remove one of the two keys; YAML keeps only one of them.",
            key_node,
            (*path, key),
        )

    def report(
        self,
        rule: str,
        message: str,
        hint: str,
        node: Node,
        path: JsonPath,
        severity: Severity = Severity.ERROR,
    ) -> None:
        """Record a finding at ``node``."""
        mark = node.start_mark
        location = Location(self.file, mark.line + 1, mark.column + 1, path)
        self.findings.append(Finding(rule, severity, message, location, hint))

    def locate(self, path: JsonPath) -> Location:
        """The location of the value at ``path``, else of its nearest parent that was written."""
        probe = path
        while True:
            mark = self.marks.get(probe)
            if mark is not None:
                return Location(self.file, mark.line + 1, mark.column + 1, path)
            if not probe:
                return Location(self.file, 1, 1, path)
            probe = probe[:-1]

    def report_at(
        self,
        rule: str,
        message: str,
        hint: str,
        path: JsonPath,
        severity: Severity = Severity.ERROR,
        *,
        signal: str | None = None,
    ) -> None:
        """Record a finding at the value at ``path`` (or its nearest written parent), with
        ``signal`` (see :attr:`Finding.signal`)."""
        location = self.locate(path)
        self.findings.append(Finding(rule, severity, message, location, hint, signal=signal))

    def report_in(
        self, file: str, line: int, rule: str, message: str, hint: str, column: int = 0
    ) -> None:
        """Record an error finding in another file (a template), at a line (0: unknown) and
        column (0: the line's start)."""
        location = Location(file, line, (column or 1) if line else 0, ("template",))
        self.findings.append(Finding(rule, Severity.ERROR, message, location, hint))

    def report_key(self, rule: str, message: str, hint: str, path: JsonPath) -> None:
        """Record an error finding at the key that ends ``path`` (not at its value)."""
        node, key_node = self.root, None
        for part in path:
            pairs = node.value if node is not None and node.__class__ is MappingNode else []
            pair = next(
                (p for p in pairs if p[0].__class__ is ScalarNode and p[0].value == part), None
            )
            if pair is None:
                key_node = None
                break
            key_node, node = pair
        if key_node is None:
            self.report_at(rule, message, hint, path)
        else:
            self.report(rule, message, hint, key_node, path)


def long_block_message(block: LongBlock, limit: int) -> str:
    """What a block over the bound, emptied before composing, is."""
    # A block's value starts on the line after its header; a quoted one on its own line.
    first = block.line + (1 if block.replacement else 2)
    last = block.line + 1 + block.lines
    return (
        f"a value of {block.size:,} bytes or more on lines {first:,} to {last:,} (over "
        f"{megabytes(limit)}); the document is not read further"
    )
