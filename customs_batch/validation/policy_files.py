"""The team's own rules: ``policies/**/*.yaml`` of a project, read into typed :class:`Policy`.

Each YAML document of a policy file is one policy::

    id: team.loading-location-required
    severity: error
    kinds: [DepartureDeclaration]
    labels: "lane in (rtm-ham)"
    paths: ["manifests/departures/*.yaml"]
    expression: has(spec.loadingLocation) && spec.loadingLocation != ""
    message: every departure names its place of loading
    examples:
      good: [{kind: DepartureDeclaration, metadata: {name: a}, spec: {loadingLocation: X}}]
      bad: [{kind: DepartureDeclaration, metadata: {name: a}, spec: {}}]

Every problem of a policy file (YAML, an unknown or missing key, an expression that does not
compile or is too big) is a finding at its line, never an exception: a policy with one is
left out. The CEL library is imported only when a project has policy files.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.resolver import Resolver

from customs_batch.findings import Finding, JsonPath, Location, Severity
from customs_batch.kinds import Kind
from customs_batch.line_bound import long_line_refusal
from customs_batch.manifest import MAX_DOCUMENT_VALUES_VARIABLE, dependencies, max_document_values
from customs_batch.selector import LabelSelector, SelectorError
from customs_batch.userfiles import FileRefused, InputKind, note_read, read_user_file
from customs_batch.validation import policy_cost
from customs_batch.validation.team_rules import POLICY_DIR

RULE = "policy.invalid"
KEYS = ("id", "severity", "description", "kinds", "labels", "paths", "expression", "message")
_ALL_KEYS = (*KEYS, "examples")
_REQUIRED = ("id", "severity", "expression", "message")
_SEVERITIES = {"error": Severity.ERROR, "warning": Severity.WARNING}
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
MAX_EXPRESSION = 2000
"""Characters of one expression: CEL has no loops, so its size bounds its work, but for
the comprehensions (``all``, ``exists``, ``map``...), bounded apart."""
MAX_NESTED_COMPREHENSIONS = 2
"""``items.all(a, items.all(b, ...))`` is n² evaluations: a third level would be n³."""
MAX_COMPREHENSION_STEPS = policy_cost.MAX_STEPS
"""A policy with comprehensions is evaluated on a document only when the longest list it
can see or build, raised to their depth, stays under this: a list of 1,000 items under two
nested ones, of 1,000,000 under one; and its evaluation stops after this many steps. Any
other document is a policy.evaluation-error finding (see :mod:`.policy_cost`)."""
# The first spec or metadata field an expression names: where its finding points.
_FIELD = re.compile(r"\b(spec|metadata)((?:\.[A-Za-z_][A-Za-z0-9_]*)+)(\s*\()?")


@dataclass(frozen=True)
class Policy:
    """One rule of the team's own, compiled and ready to evaluate."""

    id: str
    severity: Severity
    expression: str
    message: str
    file: str
    line: int
    program: Any = field(compare=False, repr=False)
    kinds: frozenset[Kind] = frozenset()
    labels: LabelSelector | None = None
    paths: tuple[str, ...] = ()
    description: str = ""
    target: JsonPath = ()
    """The path the expression names first (``("spec", "loadingLocation")``), or ()."""
    comprehensions: int = 0
    """How deep the expression nests comprehensions (0, 1 or 2): see MAX_COMPREHENSION_STEPS."""
    spec_fields: frozenset[str] | None = None
    """The top-level spec fields the expression reads, or None when it reads the spec whole
    (``size(spec)``, ``spec.all(...)``): only these are handed to the CEL library."""
    operands: int = 1
    """How many lists a ``+`` chain of the expression may join: its longest list is at most
    this many times the document's."""
    literal_items: int = 1
    """The most items a list literal of the expression may have."""
    reads_metadata: bool = False
    """Whether the expression names ``metadata``: then its lists count too."""
    widest_literal: int = 1
    """The most items a list or map literal of the expression has (``[a, b]``: 2)."""
    steps: tuple[policy_cost.Comprehension, ...] = ()
    """The expression's comprehensions, as their steps are charged (see :mod:`.policy_cost`)."""
    good: tuple[Any, ...] = ()
    bad: tuple[Any, ...] = ()

    @property
    def where(self) -> str:
        """``policies/x.yaml:3``: where the policy is written."""
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class PolicySet:
    """The policies of one project and the findings about its policy files."""

    policies: tuple[Policy, ...]
    findings: tuple[Finding, ...]
    root: Path
    files: tuple[Path, ...] = ()
    """The policy files read."""


def policy_files(root: Path) -> list[Path]:
    """The policy files of the project at ``root``, sorted (the files whose digest the load
    cache keeps: :func:`customs_batch.manifest.dependencies.policy_files`)."""
    return dependencies.policy_files(root / POLICY_DIR)


def project_policies(root: Path) -> PolicySet:
    """The policies under ``root/policies`` (read once per process, and noted as read by
    each run that uses them: no output may replace them)."""
    loaded = _project_policies(root)
    for file in loaded.files:
        note_read(file, InputKind.POLICY)
    return loaded


@lru_cache(maxsize=16)
def _project_policies(root: Path) -> PolicySet:
    policies: list[Policy] = []
    findings: list[Finding] = []
    files = policy_files(root)
    for file in files:
        _read_file(file, root, policies, findings)
    seen: dict[str, Policy] = {}
    for policy in policies:
        earlier = seen.setdefault(policy.id, policy)
        if earlier is not policy:
            message = f"policy id {policy.id!r} is also used at {earlier.where}"
            findings.append(
                _finding(policy.file, policy.line, message, "give each policy its own id")
            )
    return PolicySet(tuple(seen.values()), tuple(findings), root, tuple(files))


def _shown(file: Path, root: Path) -> str:
    try:
        return str(file.relative_to(Path.cwd()))
    except ValueError:
        return str(file)


def _finding(
    file: str, line: int, message: str, hint: str, column: int = 0, rule: str = RULE
) -> Finding:
    return Finding(rule, Severity.ERROR, message, Location(file, line, column), hint)


def _read_file(file: Path, root: Path, policies: list[Policy], findings: list[Finding]) -> None:
    shown = _shown(file, root)
    try:
        data = read_user_file(file, kind=InputKind.POLICY)
        long_line = long_line_refusal(data, "a policy file")
        if long_line is not None:
            findings.append(_finding(shown, *long_line, column=1))
            return
        text = data.decode("utf-8")
        loader = _CountingLoader(text)
        try:
            while loader.check_node():
                node = loader.get_node()
                assert node is not None  # check_node said there is one
                too_large = _too_many_values(node)
                if too_large is not None:
                    findings.append(_finding(shown, *too_large))
                    continue
                data = loader.construct_document(node)
                policy = _read_policy(data, node, shown, findings)
                if policy is not None:
                    policies.append(policy)
        finally:
            loader.dispose()
    except FileRefused as exc:
        findings.append(_finding(shown, 0, exc.reason, exc.hint or "check it", rule=exc.rule))
    except UnicodeDecodeError as exc:
        findings.append(
            _finding(
                shown,
                0,
                f"the policy file is not UTF-8 text (byte {exc.start} cannot be read)",
                "save it as UTF-8",
            )
        )
    except OSError as exc:
        reason = exc.strerror or str(exc)
        if isinstance(exc, FileNotFoundError) and file.is_symlink():
            reason = "it is a symbolic link to nothing"
        findings.append(
            _finding(shown, 0, f"cannot read the policy file: {reason}", "fix it or remove it")
        )
    except _TooManyValues as exc:
        findings.append(_finding(shown, *_too_large(exc.line, exc.column, max_document_values())))
    except RecursionError:
        findings.append(_finding(shown, 0, "the policy file nests too deep to read", "flatten it"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 0
        problem = getattr(exc, "problem", None) or str(exc)
        findings.append(_finding(shown, line, f"the policy file is not YAML: {problem}", "fix it"))


class _TooManyValues(Exception):
    def __init__(self, line: int, column: int) -> None:
        super().__init__("too many values")
        self.line, self.column = line, column


try:
    from yaml._yaml import CParser as _Parser
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml.parser import Parser
    from yaml.reader import Reader
    from yaml.scanner import Scanner

    class _Parser(Reader, Scanner, Parser):  # type: ignore[no-redef]
        def __init__(self, stream: str) -> None:
            Reader.__init__(self, stream)
            Scanner.__init__(self)
            Parser.__init__(self)


class _CountingLoader(Composer, _Parser, SafeConstructor, Resolver):
    """PyYAML's safe loader counting the values of each document as it composes them: a
    short file of flow lists (``[1,1,1,...]``) takes hundreds of times its size as nodes.

    The text is parsed by libyaml where PyYAML has it, as manifests are: PyYAML's own
    scanner takes about a second a megabyte (a policy file of 100 MB of line breaks: over a
    minute before any word), libyaml a hundredth of that."""

    def __init__(self, stream: str) -> None:
        _Parser.__init__(self, stream)
        Composer.__init__(self)
        SafeConstructor.__init__(self)
        Resolver.__init__(self)
        self.limit = max_document_values()
        self.values = 0

    def compose_document(self) -> yaml.Node | None:
        self.values = 0
        return super().compose_document()

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        if not self.check_event(yaml.AliasEvent):
            self.values += 1
            if self.values > self.limit:
                event = self.peek_event()
                mark = event.start_mark if event is not None else None
                raise _TooManyValues(mark.line if mark else 0, mark.column if mark else 0)
        return super().compose_node(parent, index)


def _too_many_values(node: yaml.Node) -> tuple[int, str, str, int] | None:
    """The line, message, hint and column of a policy holding more values than a manifest's
    document may (``yaml.too-large``), each alias counted as often as it is used (a few
    nested aliases in an example stand for billions of values), or None."""
    limit = max_document_values()
    count = 0
    stack = [node]
    while stack:
        current = stack.pop()
        count += 1
        if count > limit:
            return _too_large(current.start_mark.line, current.start_mark.column, limit)
        if isinstance(current, yaml.MappingNode):
            for key, value in current.value:
                stack.append(key)
                stack.append(value)
        elif isinstance(current, yaml.SequenceNode):
            stack.extend(current.value)
    return None


def _too_large(line: int, column: int, limit: int) -> tuple[int, str, str, int]:
    """The finding's line, message, hint and column (``line`` and ``column`` 0-based)."""
    message = (
        f"the policy holds more than {limit:,} YAML values (every key, value, list and "
        "mapping counts, an alias (*name) each time it is used); it is not read"
    )
    hint = (
        "write the examples out, without aliases standing for many values; to read it "
        f"anyway, raise the bound with {MAX_DOCUMENT_VALUES_VARIABLE}={2 * limit}"
    )
    return line + 1, message, hint, column + 1


def _places(node: yaml.Node) -> dict[str, tuple[int, int, int, int]]:
    """The line and column (1-based) of each top-level key of a mapping node, and of its
    value."""
    if not isinstance(node, yaml.MappingNode):
        return {}
    return {
        str(key.value): (
            key.start_mark.line + 1,
            key.start_mark.column + 1,
            value.start_mark.line + 1,
            value.start_mark.column + 1,
        )
        for key, value in node.value
    }


def _read_policy(data: Any, node: yaml.Node, file: str, findings: list[Finding]) -> Policy | None:
    """One policy, or None after a finding for each of its problems (all of them at once)."""
    start = node.start_mark.line + 1
    if data is None:
        return None
    if not isinstance(data, dict):
        findings.append(_finding(file, start, "a policy must be a mapping", _KEYS_HINT))
        return None
    places = _places(node)
    problems = len(findings)

    def fail(key: str, message: str, hint: str) -> None:
        # At the value that is wrong; a key that is missing at the policy's first line.
        _, _, line, column = places.get(key, (0, 0, start, node.start_mark.column + 1))
        findings.append(_finding(file, line, message, hint, column))

    def fail_key(key: str, message: str, hint: str) -> None:
        line, column, _, _ = places[key]
        findings.append(_finding(file, line, message, hint, column))

    _unknown_keys(data, fail_key)
    text = _required_texts(data, fail)
    if text.get("id") is not None and not _ID.match(text["id"]):
        fail("id", f"policy id {text['id']!r} is not a word", "use letters, digits, '.', '-', '_'")
    severity = _SEVERITIES.get(text.get("severity") or "error")
    if severity is None:
        fail("severity", f"severity {text['severity']!r} is not error or warning", _KEYS_HINT)
    kinds = _kinds(data.get("kinds"), lambda m, h: fail("kinds", m, h))
    labels = _labels(data.get("labels"), lambda m, h: fail("labels", m, h))
    paths = _texts(data.get("paths"), "paths", lambda m, h: fail("paths", m, h))
    description = data.get("description", "")
    if not isinstance(description, str):
        fail("description", "'description' must be a text", _KEYS_HINT)
    good, bad = _examples(data.get("examples"), lambda m, h: fail("examples", m, h))
    expression, program = text.get("expression"), None
    if expression is not None:
        problem = expression_problem(expression)
        if problem is None:
            program, problem = compile_expression(expression)
        if problem is not None:
            fail("expression", f"policy {text.get('id')}: {problem}", _EXPRESSION_HINT)
    if len(findings) > problems:
        return None
    assert severity is not None and expression is not None
    return Policy(
        id=text["id"],
        severity=severity,
        expression=expression,
        message=text["message"].strip(),
        file=file,
        line=places["id"][0] if "id" in places else start,
        program=program,
        kinds=kinds,
        labels=labels,
        paths=paths,
        description=description,
        target=expression_target(expression),
        comprehensions=comprehension_depth(expression),
        spec_fields=spec_fields(expression),
        operands=policy_cost.joined_operands(expression),
        literal_items=policy_cost.literal_items(expression),
        reads_metadata=policy_cost.reads_metadata(expression),
        widest_literal=policy_cost.widest_literal(expression),
        steps=policy_cost.comprehensions(expression),
        good=good,
        bad=bad,
    )


def _unknown_keys(data: dict[Any, Any], fail: Any) -> None:
    for key in data:
        if key not in _ALL_KEYS:
            close = difflib.get_close_matches(str(key), _ALL_KEYS, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            fail(str(key), f"unknown key {key!r} in a policy", hint + _KEYS_HINT)


def _required_texts(data: dict[Any, Any], fail: Any) -> dict[str, str]:
    """The required keys that are texts; a finding for each that is missing or is not."""
    found: dict[str, str] = {}
    for key in _REQUIRED:
        if key not in data:
            fail(key, f"the policy has no {key!r}", _KEYS_HINT)
        elif not isinstance(data[key], str) or not data[key].strip():
            fail(key, f"{key!r} must be a text", _KEYS_HINT)
        else:
            found[key] = data[key]
    return found


_KEYS_HINT = (
    "a policy has id, severity (error or warning), expression (CEL) and message, and may have "
    "description, kinds, labels, paths and examples: see docs/validation.md"
)
_EXPRESSION_HINT = (
    "write a CEL expression over spec, metadata and kind that is true for a good document, "
    "e.g. has(spec.loadingLocation)"
)


def _kinds(value: Any, fail: Any) -> frozenset[Kind]:
    if value is None:
        return frozenset()
    names = [value] if isinstance(value, str) else value
    known = {kind.value: kind for kind in Kind}
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        fail("'kinds' must be a list of kinds", "e.g. kinds: [DepartureDeclaration]")
        return frozenset()
    if not names:
        # Read as no selection, it would have checked every kind: the opposite of what an
        # empty list says.
        fail(
            "'kinds' is an empty list, which names no kind",
            "leave 'kinds' out for a policy of every kind, or name the kinds it checks, e.g. "
            "kinds: [DepartureDeclaration]",
        )
        return frozenset()
    unknown = [n for n in names if n not in known]
    if unknown:
        fail(f"unknown kind {unknown[0]!r}", "kinds are: " + ", ".join(known))
    return frozenset(known[n] for n in names if n in known)


_LABELS_HINT = (
    "labels is a label selector: requirements joined by commas, all of which must hold: "
    "key=value, key!=value, 'key in (a,b)', 'key notin (a,b)', key (has the label), !key "
    "(has not); e.g. labels: 'lane in (rtm-ham,rtm-ant),team!=road'"
)


def _labels(value: Any, fail: Any) -> LabelSelector | None:
    if value is None:
        return None
    if not isinstance(value, str):
        fail("'labels' must be a label selector (a text)", "e.g. labels: 'lane in (rtm-ham)'")
        return None
    try:
        return LabelSelector.parse(value)
    except SelectorError as exc:
        fail(f"the policy's labels {value!r} is not a label selector: {exc.reason}", _LABELS_HINT)
        return None


def _texts(value: Any, key: str, fail: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(v, str) and v for v in items):
        fail(f"{key!r} must be a list of globs", f"e.g. {key}: ['manifests/ham/*.yaml']")
        return ()
    if not items:
        fail(
            f"{key!r} is an empty list, which names no file",
            f"leave {key!r} out for a policy of every file, or name the files it checks, e.g. "
            f"{key}: ['manifests/ham/*.yaml']",
        )
    return tuple(items)


def _examples(value: Any, fail: Any) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    if value is None:
        return (), ()
    hint = "write examples: {good: [document, ...], bad: [document, ...]}"
    if not isinstance(value, dict) or set(value) - {"good", "bad"}:
        fail("'examples' must be a mapping with good and bad", hint)
        return (), ()
    out: list[tuple[Any, ...]] = []
    for key in ("good", "bad"):
        items = value.get(key) or []
        if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
            fail(f"examples {key!r} must be a list of documents", hint)
            items = []
        out.append(tuple(items))
    return out[0], out[1]


def expression_problem(expression: str) -> str | None:
    """Why ``expression`` is refused before it is compiled (too long), or None."""
    if len(expression) > MAX_EXPRESSION:
        return f"the expression is {len(expression)} characters, more than {MAX_EXPRESSION}"
    return None


def compile_expression(expression: str) -> tuple[Any, str | None]:
    """The compiled program of ``expression`` with its comprehension steps counted (see
    :mod:`customs_batch.validation.policy_cost`), or None and why it does not compile."""
    problem = _nesting_problem(expression)
    if problem is not None:
        return None, problem
    from customs_batch.validation._cel import cel_core  # only a project with policies

    try:
        # The counted text only: compiling the user's own too took a tenth of reading
        # 100,000 policies (measured); it is compiled when the counted one fails, to say
        # what is wrong at the user's columns.
        return cel_core().compile(policy_cost.instrumented(expression)), None
    except (ValueError, RuntimeError):
        pass
    try:
        cel_core().compile(expression)
    except (ValueError, RuntimeError) as exc:
        return None, f"the expression does not compile: {_first_error(str(exc))}"
    return None, "the expression's comprehensions cannot be counted: write them plainer"


def _first_error(text: str) -> str:
    # "Failed to parse expression '...': ERROR: <input>:1:6: Syntax error: ..." then a picture
    for line in text.splitlines():
        if "ERROR: <input>:" in line:
            where, _, reason = line.partition("ERROR: <input>:")[2].partition(": ")
            return f"column {where.split(':')[-1]}: {reason}"
    return text.splitlines()[0] if text else "unknown error"


def _nesting_problem(expression: str) -> str | None:
    depth = comprehension_depth(expression)
    if depth > MAX_NESTED_COMPREHENSIONS:
        return (
            f"the expression nests {depth} comprehensions (all, exists, map, filter), "
            f"more than {MAX_NESTED_COMPREHENSIONS}"
        )
    return None


# A comprehension macro's opening, and parentheses (string literals are blanked first).
_TOKEN = re.compile(
    r"(?P<macro>\.\s*(?:all|exists_one|exists|map|filter)\s*\()|(?P<open>\()|(?P<close>\))"
)


@lru_cache(maxsize=64)  # asked twice a policy read: before compiling it, then for the policy
def comprehension_depth(expression: str) -> int:
    """The deepest nesting of comprehension macros (``.all(``, ``.exists(``, ``.map(``...)
    in ``expression``; the text of string literals is not looked at."""
    stack: list[bool] = []  # one entry per open parenthesis: whether it opened a macro
    deepest = 0
    for match in _TOKEN.finditer(policy_cost.without_strings(expression)):
        if match.lastgroup == "macro":
            stack.append(True)
            deepest = max(deepest, stack.count(True))
        elif match.lastgroup == "open":
            stack.append(False)
        elif match.lastgroup == "close" and stack:
            stack.pop()
    return deepest


_SPEC = re.compile(r"(?<![\w.])spec\b(?:\s*\.\s*([A-Za-z_]\w*)(\s*\()?)?")
_WHOLE = frozenset({"all", "exists", "exists_one", "map", "filter"})


def spec_fields(expression: str) -> frozenset[str] | None:
    """The top-level fields ``spec.NAME`` the expression reads; None when it uses ``spec``
    any other way (whole, indexed, a macro or a method on it), so nothing it reads is left
    out of what it is given."""
    code = policy_cost.without_strings(expression)
    fields: set[str] = set()
    for match in _SPEC.finditer(code):
        name, call = match.group(1), match.group(2)
        if name is None or call or name in _WHOLE:
            return None
        fields.add(name)
    return frozenset(fields)


def expression_target(expression: str) -> JsonPath:
    """The first field the expression names, as a path (a method call's name left out)."""
    match = _FIELD.search(expression)
    if match is None:
        return ()
    parts = match.group(2).split(".")[1:]
    if match.group(3):  # spec.x.startsWith( : the last name is a method
        parts = parts[:-1]
    return (match.group(1), *parts)
