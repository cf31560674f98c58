"""The shipped JSON Schemas, compiled once, and their violations in user terms.

Validation uses jsonschema-rs rather than the pure-Python ``jsonschema``: measured on the
movement schema it is about 80x faster for the valid case (1.3 us against 105 us a document),
which is nearly every document of a big batch, and its errors carry typed details (the missing
property, the unexpected keys, the allowed values) from which the messages and hints below are
written. Valid documents take the ``is_valid`` fast path; only invalid ones pay for collecting
errors.
"""

from __future__ import annotations

import difflib
import json
import math
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

import jsonschema_rs

from customs_batch.findings import NOT_SHOWN, JsonPath, a_or_an
from customs_batch.kinds import Kind
from customs_batch.manifest.yaml import number_too_long
from customs_batch.resources import load_pattern_hints, load_schema
from customs_batch.sensitive import SENSITIVE, covers, sensitive_names
from customs_batch.validation.common import strings_at

REFERENCE_HINT = "${ref:Kind/name.field}"


@dataclass(frozen=True)
class Violation:
    """One way an instance breaks its schema, ready to become a finding.

    ``path`` is the JSON path inside the validated instance: the offending value, or for a
    missing field the mapping that lacks it.
    """

    rule: str
    path: JsonPath
    message: str
    hint: str
    sensitive: bool = False
    """About a sensitive value (a guarantee's access code): the message does not quote it."""
    cell_hint: str | None = None
    """The hint instead when the value came from a spreadsheet cell (a template passed it on
    from ``values:``): a decimal comma there is the export's, which ``decimalComma: true``
    reads, not a YAML number to rewrite."""


@dataclass(frozen=True)
class CompiledSchema:
    """A schema document together with its compiled validator."""

    name: str
    schema: Mapping[str, Any]
    validator: Any  # jsonschema_rs validator: the package ships no type information

    def is_valid(self, instance: object) -> bool:
        """Whether ``instance`` satisfies the schema (the fast path)."""
        try:
            return bool(self.validator.is_valid(instance))
        except ValueError:  # a value JSON has no type for, e.g. a date
            return False

    def violations(self, instance: object) -> list[Violation]:
        """Every violation, in the validator's order, then the texts of only spaces where
        the schema wants one of at least a character; empty when the instance is valid."""
        blank = _blank_texts(self.name, self.schema, instance)
        if self.is_valid(instance):
            return blank
        out = _non_json_values(instance, ())
        if out:
            instance = _as_json(instance)
        # The validator reads inf and NaN as null ("must be of type number, got null None"):
        # said once, by _non_json_values, at the value.
        said = {violation.path for violation in out if violation.rule == "schema.not-finite"}
        for error in self.validator.iter_errors(instance):
            out.extend(v for v in _violations_of(self.schema, error) if v.path not in said)
        return out + blank


def _blank_texts(name: str, schema: Mapping[str, Any], instance: object) -> list[Violation]:
    """A text of only spaces (or other whitespace) where the schema asks for at least one
    character (``minLength``): it passes the schema's count, but says nothing, and would be
    sent so (``declarationType: " "``)."""
    if not isinstance(instance, Mapping):
        return []
    found: list[Violation] = []
    for pattern, description in _non_empty_texts(name, schema):
        for path, text in strings_at(instance, pattern):
            if text and not text.strip():
                message = f"{_field_name(path)} holds only spaces"
                hint = _hint("write the value", description)
                found.append(Violation("schema.min-length", path, message, hint))
    return found


_NON_EMPTY: dict[str, tuple[tuple[tuple[str, ...], str], ...]] = {}


def _non_empty_texts(
    name: str, schema: Mapping[str, Any]
) -> tuple[tuple[tuple[str, ...], str], ...]:
    """The places of ``schema`` (``*`` for every item of a list) whose text must have a
    character (``minLength`` of 1 or more), with each one's description; found once per
    schema."""
    known = _NON_EMPTY.get(name)
    if known is None:
        places: list[tuple[tuple[str, ...], str]] = []
        _walk_non_empty(schema, schema, (), places, set())
        known = _NON_EMPTY[name] = tuple(places)
    return known


def _walk_non_empty(
    root: Mapping[str, Any],
    node: Any,
    path: tuple[str, ...],
    places: list[tuple[tuple[str, ...], str]],
    through: set[str],
) -> None:
    if not isinstance(node, Mapping):
        return
    reference = node.get("$ref")
    if isinstance(reference, str) and reference.startswith("#/") and reference not in through:
        target: Any = root
        for part in reference[2:].split("/"):
            target = target.get(part, {}) if isinstance(target, Mapping) else {}
        _walk_non_empty(root, target, path, places, through | {reference})
    minimum = node.get("minLength")
    if isinstance(minimum, int) and minimum >= 1:
        places.append((path, str(node.get("description", ""))))
    for key, child in (node.get("properties") or {}).items():
        _walk_non_empty(root, child, (*path, str(key)), places, through)
    items = node.get("items")
    if isinstance(items, Mapping):
        _walk_non_empty(root, items, (*path, "*"), places, through)
    for combined in ("anyOf", "oneOf", "allOf"):
        for branch in node.get(combined) or ():
            _walk_non_empty(root, branch, path, places, through)


@cache
def compiled(name: str) -> CompiledSchema:
    """The schema ``schemas/<name>.schema.json`` compiled for draft 2020-12 (cached)."""
    schema = load_schema(name)
    return CompiledSchema(name, schema, jsonschema_rs.Draft202012Validator(schema))


def spec_schema(kind: Kind) -> CompiledSchema:
    """The compiled schema of a kind's ``spec``."""
    return compiled(kind.schema_name)


def envelope_schema() -> CompiledSchema:
    """The compiled schema of the document envelope."""
    return compiled("envelope")


def _violations_of(schema: Mapping[str, Any], error: Any) -> list[Violation]:
    path: JsonPath = tuple(error.instance_path)
    found = _violations_at(schema, error, path)
    if covers(path):
        return [_without_value(violation, error.instance) for violation in found]
    return found


_SAID = {
    "schema.enum": "is not an allowed value",
    "schema.const": "is not the value it must be",
    "schema.pattern": "does not have the form it needs",
    "schema.minimum": "is below the least allowed",
    "schema.maximum": "is above the most allowed",
}


def _without_value(violation: Violation, value: object) -> Violation:
    """``violation`` of a sensitive value (a guarantee's access code) told without the value:
    the reports and the load cache must never hold it."""
    field = _field_name(violation.path)
    if violation.rule == "schema.type":
        said = f"is of the wrong type ({_json_type(value)})"
    else:
        said = _SAID.get(violation.rule, f"fails the check {violation.rule}")
    message = f"{field} {said}; {NOT_SHOWN}"
    return Violation(violation.rule, violation.path, message, violation.hint, sensitive=True)


def _violations_at(schema: Mapping[str, Any], error: Any, path: JsonPath) -> list[Violation]:
    schema_path: list[str | int] = list(error.schema_path)
    keyword = str(schema_path[-1]) if schema_path else ""
    owner = _subschema(schema, schema_path[:-1])
    details: dict[str, Any] = error.kind.as_dict()
    value = error.instance
    field = _field_name(path)
    if keyword == "required":
        return [_required(owner, path, str(details["property"]))]
    if keyword == "additionalProperties":
        return [_unexpected(owner, path, str(key)) for key in details.get("unexpected", [])]
    description = str(owner.get("description", ""))
    if keyword == "enum":
        allowed = ", ".join(str(option) for option in owner.get("enum", []))
        return [
            Violation(
                "schema.enum",
                path,
                f"{field}: {_show(value)} is not an allowed value",
                f"use one of: {allowed}",
            )
        ]
    if keyword == "const":
        expected = details.get("expected_value")
        message = f"{field} must be {_show(expected)}, got {_show(value)}"
        return [Violation("schema.const", path, message, f"write {_show(expected)}")]
    if keyword == "type":
        wanted = " or ".join(str(t) for t in details.get("types", [])) or str(owner.get("type"))
        if "number" in wanted or "integer" in wanted:
            too_long = _number_too_long(path, value, description)
            if too_long is not None:
                return [too_long]
        if value is None:
            # `city: ~`, `city: null` or `city:`: once sent as the text "~", "null" or "".
            message = f"{field} is empty (YAML's null), and it must be of type {wanted}"
            hint = (
                f"write {a_or_an(wanted)}, quoted if it is a word YAML reads otherwise "
                '("null"); to leave the field out, delete its line: ~, null and nothing '
                "after the colon are no value in YAML"
            )
            return [Violation("schema.type", path, message, _hint(hint, description))]
        message = f"{field} must be of type {wanted}, got {_json_type(value)} {_show(value)}"
        action = f"write {a_or_an(wanted)}"
        cell_hint = None
        if isinstance(value, str) and ("number" in wanted or "integer" in wanted):
            action = _number_text_hint(value.strip()) or action
            if _COMMA_DECIMAL.fullmatch(value.strip()):
                cell_hint = _hint(_CELL_DECIMAL_COMMA, description)
        hint = _hint(action, description)
        return [Violation("schema.type", path, message, hint, cell_hint=cell_hint)]
    if keyword == "anyOf":
        return [_integer_or_reference(owner, path, value)]
    if keyword == "pattern":
        return [_pattern(str(owner.get("pattern", "")), path, value, description)]
    if keyword == "maxLength" and isinstance(value, str):
        return [_too_long(owner, path, value, description)]
    if keyword in ("minimum", "maximum"):
        found = _out_of_bounds(owner, path, value, description)
        if found is not None:
            return [found]
    rule = "schema." + re.sub(r"(?<!^)(?=[A-Z])", "-", keyword).lower()
    hint = _hint("correct the value", description)
    # The library's message quotes the value: a list of guarantees, say, with their codes.
    return [Violation(rule, path, f"{field}: {_scrubbed(error.message, value)}", hint)]


def _pattern(pattern: str, path: JsonPath, value: object, description: str) -> Violation:
    """A value that does not have the shape of its pattern, told in words with an example."""
    field = _field_name(path)
    known = load_pattern_hints().get(pattern)
    if known is None:  # a test keeps every shipped pattern in the table
        message = f"{field}: {_show(value)} does not match the pattern {pattern}"
        return Violation("schema.pattern", path, message, _hint(f"match {pattern}", description))
    message = f"{field}: {_show(value)} is not {known['is']} ({known['form']})"
    hint = f"write it like {known['example']}"
    if isinstance(value, str) and value != value.strip() and re.search(pattern, value.strip()):
        # A cell's space (a non-breaking one pasted from a web page too), which the sheet
        # does not show: "write it like hawb_a1" named nothing to change.
        ends = [e for e, s in (("start", value.lstrip()), ("end", value.rstrip())) if s != value]
        edges = set(value[: len(value) - len(value.lstrip())] + value[len(value.rstrip()) :])
        what = {frozenset(" "): "a space", frozenset("\u00a0"): "a non-breaking space"}.get(
            frozenset(edges), "the spaces"
        )
        hint = (
            f"remove {what} at its {' and '.join(ends)} (in the cell or the manifest, where "
            "it does not show)"
        )
    return Violation("schema.pattern", path, message, hint)


def _too_long(owner: Mapping[str, Any], path: JsonPath, value: str, description: str) -> Violation:
    """A text longer than its field's ``maxLength``, quoted by its head and told by its
    length (the library's message quoted a 100 KB value whole)."""
    field = _field_name(path)
    bound = owner.get("maxLength")
    known = load_pattern_hints().get(str(owner.get("pattern", "")))
    what = f"{known['is']} has" if known is not None else "the field takes"
    message = f"{field}: {_show(value)} is {len(value):,} characters long; {what} at most {bound}"
    return Violation(
        "schema.max-length", path, message, _hint("write a shorter value", description)
    )


def _integer_or_reference(owner: Mapping[str, Any], path: JsonPath, value: object) -> Violation:
    """A value that is neither the number nor a reference: out of bounds, a reference
    misspelled, or of another type."""
    field = _field_name(path)
    number: Mapping[str, Any] = next(
        (b for b in owner.get("anyOf", []) if b.get("type") == "integer"), {}
    )
    out_of_bounds = _out_of_bounds(number, path, value, str(owner.get("description", "")))
    if out_of_bounds is not None:
        return out_of_bounds
    if isinstance(value, str) and "${ref:" in value:
        return _pattern(_reference_pattern(), path, value, "")
    too_long = _number_too_long(path, value, str(owner.get("description", "")))
    if too_long is not None:
        return too_long
    message = f"{field} must be an integer or a reference, got {_show(value)}"
    hint = f"write the number, or a reference such as {REFERENCE_HINT}"
    return Violation("schema.type", path, message, hint)


def _number_too_long(path: JsonPath, value: object, description: str) -> Violation | None:
    """A whole number the loader keeps as its text (:func:`number_too_long`), which was
    reported as "must be of type number, got string '1111…'": one of more digits than
    Python reads (4,300), or past the largest double, which JSON readers make infinite."""
    if not isinstance(value, str) or not number_too_long(value):
        return None
    limit = sys.get_int_max_str_digits()
    digits = value.lstrip("+-")
    field = _field_name(path)
    if digits.isdigit() and len(digits) > limit:
        message = (
            f"{field} is a number of {len(digits):,} digits, too long to read (at most {limit:,})"
        )
        return Violation("schema.type", path, message, _hint("write a shorter number", description))
    size = f" of {len(digits):,} digits" if digits.isdigit() else ""
    message = (
        f"{field} is a number{size}, beyond the largest number JSON readers hold (about 1.8e308)"
    )
    return Violation("schema.not-finite", path, message, "write a finite number")


def _out_of_bounds(
    schema: Mapping[str, Any], path: JsonPath, value: object, description: str
) -> Violation | None:
    """A number below the schema's ``minimum`` or above its ``maximum``, naming the bound."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    low, high = schema.get("minimum"), schema.get("maximum")
    field = _field_name(path)
    if low is not None and high is not None:
        wanted = f"write a number from {low} to {high}"
    else:
        wanted = f"write a number of at least {low}" if low is not None else "write a number"
    wanted = _hint(wanted, description)
    if low is not None and value < low:
        message = f"{field} must be at least {low}, got {_show(value)}"
        return Violation("schema.minimum", path, message, wanted)
    if high is not None and value > high:
        message = f"{field} must be at most {high}, got {_show(value)}"
        return Violation("schema.maximum", path, message, wanted)
    return None


def _reference_pattern() -> str:
    """The pattern of a ``${ref:...}`` (the same in every schema)."""
    return str(load_schema("envelope")["$defs"]["reference"]["pattern"])


_QUOTED_NUMBER = re.compile(r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
_COMMA_DECIMAL = re.compile(r"[-+]?(?:[1-9][0-9]{0,2}(?:\.[0-9]{3})+|[0-9]+),[0-9]+")
_COMMA_THOUSANDS = re.compile(r"[-+]?[1-9][0-9]{0,2}(?:,[0-9]{3})+(?:\.[0-9]+)?")


_CELL_DECIMAL_COMMA = (
    "this export writes decimal commas, as a decimal-comma locale does: set "
    "'decimalComma: true' in forEach to read 12,5 and 1.234,5 as numbers"
)


def _number_text_hint(text: str) -> str | None:
    """What to write for a number written as text, as people write one (never quoting it:
    the field may be sensitive)."""
    if _QUOTED_NUMBER.fullmatch(text):
        return "write the number without quotes: quoted, YAML reads it as text"
    if _COMMA_DECIMAL.fullmatch(text):
        return (
            "write the number with a decimal point and no thousands separator, e.g. 1234.5: "
            "YAML reads a decimal comma (12,5) as text"
        )
    if _COMMA_THOUSANDS.fullmatch(text):
        return "write the number without the commas that group thousands, e.g. 1234.5"
    return None


def _hint(action: str, description: str) -> str:
    """What to do, and what the field is (its schema description)."""
    return f"{action} ({field_text})" if (field_text := description.rstrip(".")) else action


def _non_json_values(value: object, path: JsonPath) -> list[Violation]:
    """Violations for values JSON cannot hold (dates, bytes, non-string keys)."""
    if isinstance(value, dict):
        out: list[Violation] = []
        for key, child in value.items():
            if not isinstance(key, str):
                message = f"{_field_name(path)}: key {key!r} is not a string"
                out.append(Violation("schema.type", path, message, "quote the key"))
            out.extend(_non_json_values(child, (*path, str(key))))
        return out
    if isinstance(value, list | tuple):
        return [v for i, item in enumerate(value) for v in _non_json_values(item, (*path, i))]
    if isinstance(value, float) and not math.isfinite(value):
        message = f"{_field_name(path)} is {value}, which is not a number JSON can hold"
        return [Violation("schema.not-finite", path, message, "write a finite number")]
    if value is None or isinstance(value, str | int | float | bool):
        return []
    hint = "quote it to write it as a string"
    if covers(path):
        message = (
            f"{_field_name(path)} holds {a_or_an(type(value).__name__)}, which is not a JSON value"
        )
        return [Violation("schema.type", path, f"{message}; {NOT_SHOWN}", hint, sensitive=True)]
    message = f"{_field_name(path)} holds {a_or_an(type(value).__name__)} ({value}), which is not a JSON value"
    return [Violation("schema.type", path, message, hint)]


def _as_json(value: object) -> object:
    """A copy with every value JSON cannot hold replaced by its text, to validate the rest."""
    if isinstance(value, dict):
        return {str(key): _as_json(child) for key, child in value.items()}
    if isinstance(value, list | tuple):
        return [_as_json(item) for item in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def _required(owner: Mapping[str, Any], path: JsonPath, name: str) -> Violation:
    prop = owner.get("properties", {}).get(name, {})
    where = f" in {_field_name(path)}" if path else ""
    hint = f'add "{name}"'
    if prop.get("description"):
        hint += f": {prop['description']}"
    return Violation("schema.required", path, f'missing required field "{name}"{where}', hint)


def _unexpected(owner: Mapping[str, Any], path: JsonPath, key: str) -> Violation:
    allowed = sorted(owner.get("properties", {}))
    close = difflib.get_close_matches(key, allowed, n=1)
    hint = f'did you mean "{close[0]}"? ' if close else ""
    hint += "allowed fields: " + ", ".join(allowed) if allowed else "remove it"
    where = f" in {_field_name(path)}" if path else ""
    return Violation(
        "schema.additional-property", (*path, key), f'unknown field "{key}"{where}', hint
    )


def _subschema(schema: Mapping[str, Any], schema_path: list[str | int]) -> Mapping[str, Any]:
    """The schema object at ``schema_path`` (jsonschema-rs gives paths with $refs resolved)."""
    node: Any = schema
    for part in schema_path:
        in_mapping = isinstance(node, Mapping) and part in node
        in_list = isinstance(node, list) and isinstance(part, int) and part < len(node)
        if not (in_mapping or in_list):
            return {}
        node = node[part]
    return node if isinstance(node, Mapping) else {}


def _field_name(path: JsonPath) -> str:
    """A readable name for the value at ``path``: ``DeclarationItems[0].grossMass``."""
    if not path:
        return "spec"
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _show(value: object) -> str:
    text = repr(_redacted(value))
    return text if len(text) <= 60 else text[:57] + "..."


def _redacted(value: object) -> object:
    """``value`` with what any sensitive field inside it holds shown as ``(sensitive)``: a
    guarantee written where a list of them belongs is quoted without its access code."""
    if isinstance(value, dict):
        names = sensitive_names()
        return {
            key: SENSITIVE if key in names and child is not None else _redacted(child)
            for key, child in value.items()
        }
    if isinstance(value, list | tuple):
        return [_redacted(item) for item in value]
    return value


def _secrets_in(value: object) -> list[str]:
    """The texts of the values of sensitive fields inside ``value``."""
    if isinstance(value, dict):
        names = sensitive_names()
        found: list[str] = []
        for key, child in value.items():
            if key in names and child is not None:
                found.append(child if isinstance(child, str) else repr(child))
                found.append(_json_text(child))
            else:
                found.extend(_secrets_in(child))
        return found
    if isinstance(value, list | tuple):
        return [text for item in value for text in _secrets_in(item)]
    return []


def _json_text(value: object) -> str:
    """``value`` as JSON text, as the schema library quotes it."""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def _scrubbed(message: str, value: object) -> str:
    """``message`` with each sensitive value inside ``value`` it quotes shown as
    ``(sensitive)`` (longest first, so a code's JSON text goes before its bare digits)."""
    for secret in sorted(set(_secrets_in(value)), key=len, reverse=True):
        if secret:
            message = message.replace(secret, SENSITIVE)
    return message
