"""Evaluate the team's own rules (see :mod:`customs_batch.validation.policy_files`) on
rendered documents, and run each policy's own good and bad examples."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any

from customs_batch.findings import Finding, Location
from customs_batch.kinds import Address, Kind
from customs_batch.manifest.document import Document
from customs_batch.sensitive import has_sensitive, sensitive_paths, values_at
from customs_batch.validation import policy_cost
from customs_batch.validation._cel import cel_core
from customs_batch.validation.policy_files import MAX_COMPREHENSION_STEPS, Policy

if TYPE_CHECKING:
    from customs_batch.manifest.documents.standalone import Envelope

EVALUATION_RULE = "policy.evaluation-error"
_STOPPED = "stopped after"
_GAVE = "the expression gave"
_COSTLY_HINT = (
    "a comprehension (all, exists, map, filter) looks at every item of its list, nested ones "
    "at every pair, and copies what it selects at each; a + copies the texts it joins; "
    "matches() compiles its pattern at each call: make the lists, texts or patterns shorter or "
    "the expression simpler"
)


@dataclass(frozen=True)
class Outcome:
    """What a policy made of one document: ``held``, or why it could not tell (``error``);
    ``costly``: it was not evaluated, or stopped, as too much work."""

    held: bool
    error: str | None = None
    costly: bool = False


def applies(policy: Policy, kind: str, labels: Mapping[str, str], path: str | None) -> bool:
    """Whether ``policy`` selects a document of ``kind`` with ``labels`` from file ``path``
    (relative to the project root, with /; None: not from a file, paths are not asked)."""
    if policy.kinds and kind not in {k.value for k in policy.kinds}:
        return False
    if policy.labels is not None and not policy.labels.matches(labels):
        return False
    if policy.paths and path is not None:
        return any(fnmatch.fnmatchcase(path, glob) for glob in policy.paths)
    return True


def activation(kind: str, metadata: Mapping[str, Any], spec: Any) -> Any:
    """What an expression sees of one document: ``kind``, ``metadata`` and ``spec``, made
    once a document for all the policies that apply to it."""
    variables = {"kind": kind, "metadata": _plain(metadata), "spec": _plain(spec)}
    functions = {
        policy_cost.STEP_FUNCTION: policy_cost.step,
        policy_cost.REGEX_FUNCTION: policy_cost.regex,
    }
    return cel_core().Context(variables, functions)


def evaluate(policy: Policy, context: Any, seen: Mapping[str, Any]) -> Outcome:
    """Evaluate ``policy`` on one document's :func:`activation` of the values ``seen``
    (``spec`` and ``metadata``), stopped past
    :data:`~customs_batch.validation.policy_cost.MAX_STEPS` steps."""
    policy_cost.start_counting(
        policy.steps,
        seen,
        max(policy.operands, policy.widest_literal),
        expression=policy.expression,
    )
    if policy_cost.steps_taken() > policy_cost.MAX_STEPS:  # its + joins of texts alone
        return Outcome(False, f"{_STOPPED} {policy_cost.MAX_STEPS:,} steps", costly=True)
    try:
        result = policy.program.execute(context)
    except KeyError as exc:  # a field the document lacks
        result = exc
    except Exception as exc:  # the library's own errors, of several types: each a finding
        result = exc
    # Also when the expression absorbed the stop (`... || true`) and gave a value.
    if policy_cost.steps_taken() > policy_cost.MAX_STEPS:
        return Outcome(False, f"{_STOPPED} {policy_cost.MAX_STEPS:,} steps", costly=True)
    return _outcome(result)


def _outcome(result: Any) -> Outcome:
    if isinstance(result, KeyError):  # a field the document lacks
        exc = result
        return Outcome(False, f"no field {exc.args[0]!r}" if exc.args else "a field is missing")
    if isinstance(result, Exception):
        return Outcome(False, f"{type(result).__name__}: {_reason(result)}")
    if not isinstance(result, bool):
        return Outcome(False, f"{_GAVE} {type(result).__name__}, not true or false")
    return Outcome(result)


def check_document(policies: Sequence[Policy], document: Document, root: Path) -> list[Finding]:
    """The findings of ``policies`` on ``document``, at the field each names, else the document."""
    path = _relative(document.source.file, root)
    kind = document.kind.value
    chosen = [policy for policy in policies if applies(policy, kind, document.labels, path)]
    if not chosen:
        return []
    part = _read_part(chosen, document.spec)
    metadata = document_metadata(document)
    context = activation(kind, metadata, part)
    counted = [p for p in chosen if p.comprehensions]
    in_spec = policy_cost.longest(part) if counted else 0
    in_metadata = policy_cost.longest(metadata) if any(p.reads_metadata for p in counted) else 0
    findings: list[Finding] = []
    for policy in chosen:
        seen = max(in_spec, in_metadata) if policy.reads_metadata else in_spec
        visible = {"spec": part, "metadata": metadata} if policy.reads_metadata else part
        outcome = _bounded(policy, seen) or evaluate(policy, context, visible)
        if outcome.held:
            continue
        location = document.locate(policy.target) if policy.target else document.locate(())
        findings.append(_finding(policy, document, location, outcome))
    return findings


def _bounded(policy: Policy, seen: int) -> Outcome | None:
    """Why ``policy`` is not evaluated on a document whose longest list or map (of what the
    policy sees) has ``seen`` items (too much work), or None. A list the expression builds
    is counted too: one joined by ``+`` is as long as its operands together, a literal as
    its items."""
    if not policy.comprehensions:
        return None
    longest = max(seen * policy.operands, policy.literal_items)
    if longest**policy.comprehensions <= MAX_COMPREHENSION_STEPS:
        return None
    what = f"a list of {seen:,} items"
    if longest > seen:
        what = (
            f"a list of up to {longest:,} items (the document's longest has {seen:,}; the "
            f"expression may join {policy.operands} with + or write {policy.literal_items})"
        )
    return Outcome(
        False,
        f"{what} is too long for its {policy.comprehensions} nested comprehensions",
        costly=True,
    )


def _read_part(policies: Sequence[Policy], spec: Mapping[str, Any]) -> Mapping[str, Any]:
    """The part of ``spec`` the policies read: handing a departure's 100 values to the CEL
    library costs 0.2 ms, most of the time a policy takes."""
    fields: set[str] = set()
    for policy in policies:
        if policy.spec_fields is None:
            return spec
        fields |= policy.spec_fields
    return {name: spec[name] for name in fields if name in spec}


def document_metadata(document: Document) -> dict[str, Any]:
    """``metadata`` as a policy sees it: name, labels, annotations and dependsOn."""
    return _metadata(document.name, document.labels, document.annotations, document.depends_on)


def _metadata(
    name: str,
    labels: Mapping[str, str],
    annotations: Mapping[str, str],
    depends_on: Sequence[Address],
) -> dict[str, Any]:
    return {
        "name": name,
        "labels": dict(labels),
        "annotations": dict(annotations),
        "dependsOn": [str(address) for address in depends_on],
    }


def _finding(policy: Policy, document: Document, location: Location, outcome: Outcome) -> Finding:
    where = f"policy {policy.id} at {policy.where}"
    if outcome.error is None:
        hint = f"{policy.description} ({where})" if policy.description else where
        rule, message = policy.id, policy.message
    else:
        rule = EVALUATION_RULE
        error = _without_sensitive_values(outcome.error, document, policy.expression)
        message = f"policy {policy.id} could not be evaluated on this document: {error}"
        hint = f"guard optional fields with has(spec.field) ({where})"
        if outcome.costly:
            hint = f"{_COSTLY_HINT} ({where})"
        if outcome.error.startswith(_STOPPED):
            message = f"policy {policy.id} {outcome.error} on {document.address}: too costly"
    return Finding(
        rule,
        policy.severity,
        message,
        location,
        hint,
        document=str(document.address),
        rule_at=Location(policy.file, policy.line),
    )


def _without_sensitive_values(text: str, document: Document, expression: str) -> str:
    """``text`` (the evaluation library's error) for a finding about ``document``: when the
    document holds a sensitive value (a guarantee's access code), nothing of the library's
    words that may come from the document (a value it quotes, escaped as CEL writes it, or
    one computed from it), only what names the expression's own fields or types."""
    return safe_reason(text, document.kind, document.spec, expression)


def safe_reason(text: str, kind: Kind, spec: Any, expression: str) -> str:
    """See :func:`_without_sensitive_values`."""
    if not has_sensitive(kind):
        return text
    values = {
        str(value)
        for path in sensitive_paths(kind)
        for _, value in values_at(spec, path)
        if value not in (None, "")
    }
    if not values:
        return text
    if text.startswith((_STOPPED, _GAVE)):  # a count or a type: no value of the document
        return text
    field = re.fullmatch(r"no field '([A-Za-z_]\w*)'", text)
    code = policy_cost.without_strings(expression)
    if (
        field is not None
        and field[1] not in values
        and re.search(rf"(?<![\w]){field[1]}(?!\w)", code)
    ):
        return text  # a field the expression names
    kind_of_error = text.partition(":")[0]
    what = kind_of_error + ": " if re.fullmatch(r"[A-Za-z]\w*", kind_of_error) else ""
    return (
        f"{what}the expression failed on a value of this document, not shown: the document "
        "holds a sensitive value"
    )


@dataclass(frozen=True)
class ExampleFailure:
    """A good example the policy refuses, or a bad one it lets through."""

    policy: Policy
    which: str  # "good" or "bad"
    number: int  # 1-based
    reason: str


def run_examples(policy: Policy) -> list[ExampleFailure]:
    """Run ``policy`` on its own examples: each good one must hold, each bad one must not."""
    failures: list[ExampleFailure] = []
    for which, examples in (("good", policy.good), ("bad", policy.bad)):
        for number, example in enumerate(examples, 1):
            reason = _example_failure(policy, which, example)
            if reason is not None:
                failures.append(ExampleFailure(policy, which, number, reason))
    return failures


def _example_failure(policy: Policy, which: str, example: Mapping[str, Any]) -> str | None:
    envelope = _example_envelope(example)
    if isinstance(envelope, str):
        return envelope
    kind = envelope.kind.value
    selected = applies(policy, kind, envelope.labels, None)
    outcome = None
    if selected:
        metadata = _metadata(
            envelope.name, envelope.labels, envelope.annotations, envelope.depends_on
        )
        context = activation(kind, metadata, envelope.spec)
        visible = {"spec": envelope.spec, "metadata": metadata}
        outcome = evaluate(policy, context, visible)
    if outcome is None:  # a good example must be selected too, or it shows nothing
        return "the policy does not apply to it (kinds or labels)"
    if which == "good":
        if outcome.error is not None:
            error = safe_reason(outcome.error, envelope.kind, envelope.spec, policy.expression)
            return f"the expression could not be evaluated: {error}"
        if not outcome.held:
            return "the policy refuses it"
        return None
    if outcome.held:
        return "the policy lets it through"
    return None


def _example_envelope(example: Mapping[str, Any]) -> Envelope | str:
    """The example read as a manifest's document is (its kind, metadata and spec), or what
    is wrong with it and where: a policy is tried only on documents a manifest could hold."""
    from customs_batch.manifest.documents.standalone import read_standalone

    rendered_only = [key for key in ("template", "values", "forEach") if key in example]
    if rendered_only:
        return (
            f"an example is a rendered document, it cannot have {rendered_only[0]!r}. "
            "Write the spec the document renders to."
        )
    read = read_standalone(_plain(example), "example")
    if isinstance(read, Finding):
        return f"{read.message} (at {read.location.json_path()}). {read.hint}"
    return read


def _reason(error: Exception) -> str:
    text = str(error.args[0]) if error.args else str(error)
    return text.splitlines()[0] if text else type(error).__name__


def _relative(file: str, root: Path) -> str:
    path = Path(file)
    try:
        return PurePath(path.resolve().relative_to(root)).as_posix()
    except (ValueError, OSError):
        return PurePath(path).as_posix()


_JSON_SCALARS = (str, bool, int, float, type(None))


def _plain(value: Any) -> Any:
    """Plain JSON for the CEL library: mappings and sequences of any type as dicts and
    lists, and any other value (a YAML date, say) as its text, as the service receives it."""
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return value  # most values: checked by type first, an ABC check costs far more
    if kind is dict or isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if kind is list or isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if isinstance(value, _JSON_SCALARS):
        return value
    return value.isoformat() if hasattr(value, "isoformat") else str(value)
