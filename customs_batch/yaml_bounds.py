"""Bounds on a small YAML file of settings (``customs-batch.yaml``, a sandbox seed), checked
before the file is composed or walked.

PyYAML's composer, and the checks that walk a file's values, recurse once a level: 3,000
levels of ``[`` were "internal error: RecursionError". A few nested aliases (``&a [..]``,
``&b [*a, *a, ..]``) stand for billions of values, and a walk over them ran for ever. Manifests
have bounds of their own (:mod:`customs_batch.manifest`), made for files of any size.
"""

from __future__ import annotations

import yaml

from customs_batch.errors import ConfigError

SAFE_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""PyYAML's safe loader on libyaml where PyYAML has it, as manifests are read: PyYAML's own
scanner takes about a second a megabyte, so a seed of 100 MB of line breaks was read for
minutes (three times: measured, composed, loaded) before any word; libyaml takes a
hundredth of that."""

MAX_NESTING = 100
"""The deepest nesting of lists and mappings a settings file may have (they need a few)."""
MAX_VALUES = 100_000
"""The most values (keys, values, lists, mappings) its aliases may stand for beyond the
values written out, an alias counted each time it is used. The values written out are not
capped here: they are as many as the file is long, and a seed of 20,000 declarations, one a
line, holds hundreds of thousands."""


def refuse_deep_nesting(
    text: str, file: str, what: str, hint: str, *, loader: type[yaml.SafeLoader] = yaml.SafeLoader
) -> None:
    """Refuse ``text`` (the file ``file``, holding ``what``) nesting deeper than
    :data:`MAX_NESTING`, measured on the event stream, which does not recurse. ``loader``
    is the one the file is composed with after (:data:`SAFE_LOADER` for a seed): one
    parser's view of the file throughout."""
    depth = 0
    try:
        for event in yaml.parse(text, Loader=loader):
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_NESTING:
                    mark = event.start_mark
                    raise _too_deep(file, mark.line if mark else None, what, hint)
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.MarkedYAMLError as error:
        # libyaml scans brackets ahead of the events, and stops at its own depth (1,000).
        if "maximum nesting depth" in str(error.problem):
            mark = error.problem_mark
            raise _too_deep(file, mark.line if mark else None, what, hint) from None
        raise


def _too_deep(file: str, line_index: int | None, what: str, hint: str) -> ConfigError:
    line = f":{line_index + 1}" if line_index is not None else ""
    return ConfigError(
        f"{file}{line}: the {what} nest more than {MAX_NESTING} levels deep", hint=hint
    )


def refuse_many_values(node: yaml.Node | None, file: str, what: str, hint: str) -> None:
    """Refuse a composed file whose aliases stand for more than :data:`MAX_VALUES` values
    beyond those written out, an alias counted each time it is used (composing keeps one
    node for an alias: the count walks it again). A file without aliases is never refused:
    its values are bounded by its length, and composing it was linear already."""
    written = _written(node)
    count = 0
    stack = [] if node is None else [node]
    while stack:
        current = stack.pop()
        count += 1
        if count > written + MAX_VALUES:
            raise ConfigError(
                f"{file}:{current.start_mark.line + 1}: the {what} hold more than "
                f"{MAX_VALUES:,} values beyond those written out (an alias, *name, counts "
                "each time it is used)",
                hint=hint,
            )
        stack += _children(current)


def _written(node: yaml.Node | None) -> int:
    """How many values the file writes out: each node once, however often an alias uses it."""
    seen: set[int] = set()
    stack = [] if node is None else [node]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        stack += _children(current)
    return len(seen)


def _children(node: yaml.Node) -> list[yaml.Node]:
    """The keys and values of a mapping, the items of a list; none of a scalar."""
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []
