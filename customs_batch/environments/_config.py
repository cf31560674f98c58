"""Finding, reading and checking ``customs-batch.yaml``.

Errors name the file, the line and the key path, and never quote a value: a value in the
wrong place may be an API key.
"""

from __future__ import annotations

import math
import os
import re
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import yaml

from customs_batch.client import RateLimit
from customs_batch.environments._config_schema import CONFIG, ENV_VAR_NAME, EXPECTED
from customs_batch.environments._credentials import (
    CredentialKind,
    CredentialSource,
    key_file_source,
)
from customs_batch.environments._environment import (
    LOCAL,
    STATE_DIR,
    Environment,
    LargeChangeGuard,
    NotifyOn,
    NotifySettings,
    StateKind,
    StateSettings,
    Timeouts,
    local_environment,
)
from customs_batch.environments._shared_state import refuse_shared_states
from customs_batch.errors import ConfigError, UsageError
from customs_batch.escaping import quoted_head
from customs_batch.folders import is_file_system_root
from customs_batch.userfiles import MEGABYTE, FileRefused, InputKind, not_utf8, read_user_file
from customs_batch.yaml_bounds import refuse_deep_nesting, refuse_many_values

if TYPE_CHECKING:
    import jsonschema

CONFIG_NAME = "customs-batch.yaml"
MAX_SETTINGS_BYTES = MEGABYTE
"""The largest ``customs-batch.yaml`` read. Its YAML is read by a pure-Python parser, about
a second a megabyte: a file of one 100 MB comment line took two minutes before any error,
where a project's settings hold a few kilobytes (a manifest's line is bounded the same, 1 MB)."""
_SIZE_HINT = (
    f"a {CONFIG_NAME} holds a few kilobytes of settings: check that this is the project's "
    "settings file (not a generated, copied-over or binary file), and shorten it"
)
_BOUND_HINT = (
    "no setting nests more than a few levels: check that this is the right file, and see "
    "docs/environments.md for every setting"
)
_ALIASES_HINT = (
    "write the settings out without aliases standing for many values; see "
    "docs/environments.md for every setting"
)
ENV_VARIABLE = "CUSTOMS_BATCH_ENV"
# Keys that would hold a secret in the file itself.
_SECRET_WORDS = ("key", "token", "secret", "password", "bearer", "credential")
_ALLOWED_KEY_FIELDS = frozenset({"api_key_env", "api_key_file"})
_LOCAL_FIELDS = frozenset(
    {
        "rate_limit",
        "parallelism",
        "timeouts",
        "state_dir",
        "state",
        "large_change_guard",
        "notify",
    }
)
_KEY_HINT = (
    "keys live outside version control (API document, Authentication 5): put the key in an "
    "environment variable and name it with api_key_env, or in a file outside the repository "
    "named by api_key_file"
)
_NOTIFY_HINT = (
    "notification URLs carry the services' tokens: put them in an environment variable "
    "(several separated by spaces or commas) and name the variable with notify.urls_env "
    "(like CUSTOMS_BATCH_NOTIFY_URLS)"
)
_URL_HINT = (
    "a database URL may carry a password: put it in an environment variable and name the "
    "variable with state.url_env (like CUSTOMS_BATCH_STATE_URL)"
)


@dataclass(frozen=True)
class ProjectConfig:
    """A project's environments; ``path`` None when there is no ``customs-batch.yaml``.
    ``manifests`` are the files and folders of its ``manifests:`` list (absolute; empty
    when the file has none)."""

    path: Path | None
    root: Path
    default_environment: str | None
    environments: Mapping[str, Environment]
    manifests: tuple[Path, ...] = ()

    def manifest_paths(self, cwd: Path | None = None) -> list[Path]:
        """What PATHS default to: the ``manifests:`` list (relative to ``cwd`` when inside
        it), else the current folder. ConfigError for an entry that does not exist."""
        if not self.manifests:
            return [Path(".")]
        cwd = (cwd or Path.cwd()).resolve()
        paths = []
        for path in self.manifests:
            if not path.exists():
                entry = path.relative_to(self.root) if path.is_relative_to(self.root) else path
                raise ConfigError(
                    f"{self.path}: manifests names {entry}, which does not exist",
                    hint="create it, or correct the list under manifests: in customs-batch.yaml",
                )
            paths.append(path.relative_to(cwd) if path.is_relative_to(cwd) else path)
        return paths

    def environment(self, name: str) -> Environment:
        """The environment ``name``; ConfigError listing the known ones otherwise."""
        try:
            return self.environments[name]
        except KeyError:
            known = ", ".join(sorted(self.environments))
            where = f" in {self.path}" if self.path else ""
            raise ConfigError(
                f"no environment named {quoted_head(name)}{where}",
                hint=f"known environments: {known}",
            ) from None

    def select(self, option: str | None, environ: Mapping[str, str] | None = None) -> Environment:
        """The environment to use: ``--env``, then $CUSTOMS_BATCH_ENV, the default, ``local``.
        An unknown name given on the command line (``option``) is a UsageError (exit 64, as
        any wrong option); one from the variable or the file a ConfigError."""
        environ = os.environ if environ is None else environ
        if option == "":
            # `--env "$DEPLOY_ENV"` with the variable unset or empty: taking the default in
            # its place would run against another environment than the one meant.
            known = ", ".join(sorted(self.environments))
            raise UsageError(
                "the environment named on the command line is empty: it names none",
                hint=f'known environments: {known}; if a variable gave it (--env "$NAME"), '
                "that variable is empty or not set",
            )
        if option is not None:
            try:
                return self.environment(option)
            except ConfigError as error:
                raise UsageError(error.message, hint=error.hint) from None
        variable = environ.get(ENV_VARIABLE)
        if variable == "":
            # `CUSTOMS_BATCH_ENV: ${{ vars.TARGET }}` with the variable missing: taking the
            # default in its place would run against another environment than the one meant.
            known = ", ".join(sorted(self.environments))
            raise ConfigError(
                f"${ENV_VARIABLE} is set but empty: it names no environment",
                hint=f"known environments: {known}; set ${ENV_VARIABLE} to one of them, or "
                f"unset it (`unset {ENV_VARIABLE}`) for the default, or name one with --env",
            )
        if variable and variable not in self.environments:
            # Not typed on this command line: name where it came from (a variable left set
            # from another project or shell), as a wrong default_environment is named.
            known = ", ".join(sorted(self.environments))
            where = f"in {self.path}" if self.path else "here (no customs-batch.yaml)"
            raise ConfigError(
                f"${ENV_VARIABLE} names environment {variable!r}, which is not defined {where}",
                hint=f"known environments: {known}; set ${ENV_VARIABLE} to one of them, "
                f"or unset it (`unset {ENV_VARIABLE}`), or name one with --env",
            )
        name = variable or self.default_environment or LOCAL
        return self.environment(name)


def env_words(name: str, environ: Mapping[str, str] | None = None) -> list[str]:
    """``["--env", name]`` for a command printed to go on in environment ``name``, unless
    the same command without it picks that environment anyway (``name`` is the project's
    default and ``$CUSTOMS_BATCH_ENV`` is not set), so that it runs as printed."""
    environ = os.environ if environ is None else environ
    project = load_project()
    if name == (project.default_environment or LOCAL) and not environ.get(ENV_VARIABLE):
        return []
    return ["--env", name]


def find_config(start: Path) -> Path | None:
    """The nearest ``customs-batch.yaml`` in ``start`` or a parent directory."""
    for directory in (start, *start.parents):
        candidate = directory / CONFIG_NAME
        # Anything of that name counts, so a pipe, a link to a device or a folder named like
        # the config is refused when read rather than silently passed over for a parent
        # folder's settings (whose environments would then be sent to).
        if os.path.lexists(candidate):
            return candidate
    return None


def load_project(start: Path | None = None) -> ProjectConfig:
    """The project around ``start`` (the current directory by default)."""
    start = (start or Path.cwd()).resolve()
    path = find_config(start)
    if path is None:
        if is_file_system_root(start):
            # The built-in environment would keep its state in /.customs-batch, and every
            # file of the machine would be inside the project.
            raise ConfigError(
                f"the project would be {start}, the root of the file system: it is the "
                f"current folder and holds no {CONFIG_NAME}",
                hint="run customs-batch from the project's own folder (cd into it), or put a "
                f"{CONFIG_NAME} in that folder (`customs-batch init DIRECTORY` makes one)",
            )
        return ProjectConfig(None, start, None, MappingProxyType({LOCAL: local_environment(start)}))
    return load_config(path)


def load_config(path: Path) -> ProjectConfig:
    """Read, check and interpret one ``customs-batch.yaml``."""
    try:
        data_bytes = read_user_file(
            path, limit=MAX_SETTINGS_BYTES, raise_hint=_SIZE_HINT, kind=InputKind.SETTINGS
        )
        text = data_bytes.decode("utf-8")
    except FileRefused as exc:
        raise ConfigError(exc.message, hint=exc.hint) from None
    except IsADirectoryError:
        raise ConfigError(
            f"{path} is a folder, where the project's settings file of that name belongs",
            hint=f"rename or remove the folder (a {CONFIG_NAME} above it is not read instead)",
        ) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(not_utf8(path, data_bytes, exc), hint="save the file as UTF-8") from None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    try:
        refuse_deep_nesting(text, str(path), "settings", _BOUND_HINT)
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        refuse_many_values(node, str(path), "settings", _ALIASES_HINT)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise ConfigError(f"{path}{line}: {problem}", hint="fix the YAML syntax") from None
    data = {} if data is None else data
    _refuse_duplicate_keys(node, path)
    _unquoted_on(data)
    _refuse_secrets(data, path, node)
    _check_schema(data, path, node)
    _check_values(data, path, node)
    return _interpret(data, path)


def _refuse_duplicate_keys(node: yaml.Node | None, path: Path) -> None:
    """A ConfigError for a key given twice in one mapping: YAML keeps the last silently, so
    a second ``base_url`` of an environment, or a second ``environments:`` block, would
    decide unseen where requests go (manifests refuse it too: ``yaml.duplicate-key``)."""
    pending = [] if node is None else [node]
    visited: set[int] = set()
    while pending:
        current = pending.pop()
        if id(current) in visited:
            continue
        visited.add(id(current))
        if isinstance(current, yaml.MappingNode):
            first: dict[str, int] = {}
            for key, value in current.value:
                if isinstance(key, yaml.ScalarNode):
                    line = key.start_mark.line + 1
                    if key.value in first:
                        raise ConfigError(
                            f"{path}:{line}: the key {key.value!r} is given twice in one "
                            f"mapping (first at line {first[key.value]}): YAML would keep "
                            "only the last, silently",
                            hint="keep one of them, with the value meant",
                        )
                    first[key.value] = line
                pending.append(value)
        elif isinstance(current, yaml.SequenceNode):
            pending.extend(current.value)


def _check_values(data: Any, path: Path, node: yaml.Node | None) -> None:
    """What the schema cannot say: no setting holds a NUL character (no path, variable
    name or address can), and each ``base_url`` is an address the client can send to."""
    _refuse_nul(data, (), path, node)
    _refuse_non_finite(data, (), path, node)
    _refuse_root_state_dirs(data, path, node)
    _refuse_root_manifests(data, path, node)
    environments = data.get("environments") if isinstance(data, dict) else None
    for name, settings in (environments or {}).items():
        _refuse_long_timeouts(settings, name, path, node)
        _check_rate_limit(settings, name, path, node)
        url = settings.get("base_url") if isinstance(settings, dict) else None
        if isinstance(url, str):
            problem = _address_problem(url.rstrip("/"))
            if problem is not None:
                where = _where(path, node, ("environments", name, "base_url"))
                raise ConfigError(
                    f"{where}: {problem}",
                    hint="give the service's address, like https://sandbox.customs.example "
                    "or http://[::1]:8080 (an IPv6 host in brackets, a port from 1 to 65535)",
                )


def _check_rate_limit(settings: Any, name: str, path: Path, node: yaml.Node | None) -> None:
    """A ``rate_limit`` the schema's pattern lets through but that is no limit (``0/second``,
    a number too large to hold) is an error at its line, as the schema's errors are."""
    if not isinstance(settings, dict) or "rate_limit" not in settings:
        return
    try:
        RateLimit.parse(_rate_text(settings["rate_limit"]))
    except ConfigError as exc:
        where = _where(path, node, ("environments", name, "rate_limit"))
        raise ConfigError(f"{where}: {exc.message}", hint=exc.hint) from None


MAX_TIMEOUT = 86400
"""The longest timeout, in seconds: a day is longer than any answer is worth waiting for, and
far below what a wait can be (a read timeout of 1e23 s passed the check, then was "internal
error: OverflowError" once a command connected)."""


def _refuse_long_timeouts(settings: Any, name: str, path: Path, node: yaml.Node | None) -> None:
    timeouts = settings.get("timeouts") if isinstance(settings, dict) else None
    for key, value in (timeouts or {}).items() if isinstance(timeouts, dict) else ():
        if isinstance(value, int | float) and value > MAX_TIMEOUT:
            where = _where(path, node, ("environments", name, "timeouts", key))
            raise ConfigError(
                f"{where}: is more than {MAX_TIMEOUT} seconds (a day), the longest a timeout "
                "can be",
                hint="write the seconds to wait, like 30 (the default read timeout)",
            )


def _refuse_root_manifests(data: Any, path: Path, node: yaml.Node | None) -> None:
    """No ``manifests:`` entry is the root of the file system: validate, plan and apply
    given no paths walked every folder of the machine (a minute and more, reading any YAML
    file found as a manifest) before anything was said."""
    entries = data.get("manifests") if isinstance(data, dict) else None
    root = path.parent.resolve()
    for index, entry in enumerate(entries if isinstance(entries, list) else ()):
        if isinstance(entry, str) and is_file_system_root(root / entry):
            raise ConfigError(
                f"{_where(path, node, ('manifests', index))}: is {(root / entry).resolve()}, "
                "the root of the file system: every YAML file of the machine would be read as "
                "a manifest",
                hint="name the project's manifest folders (relative to customs-batch.yaml, "
                "like manifests)",
            )


def _names_a_file(place: Path) -> bool:
    """Whether ``place`` (through links) is something that exists and is not a folder."""
    try:
        return place.exists() and not place.is_dir()
    except OSError:  # a name too long, a folder that cannot be searched: said when used
        return False


def _refuse_root_state_dirs(data: Any, path: Path, node: yaml.Node | None) -> None:
    """No ``state_dir`` is the root of the file system: the states (and, for the top-level
    one, each environment's folder) would be written straight into it."""
    if not isinstance(data, dict):
        return
    root = path.parent.resolve()
    places: list[tuple[Any, tuple[str, ...]]] = [(data.get("state_dir"), ("state_dir",))]
    for name, settings in (data.get("environments") or {}).items():
        if isinstance(settings, dict):
            places.append((settings.get("state_dir"), ("environments", name, "state_dir")))
    for value, at in places:
        if isinstance(value, str) and _names_a_file(root / value):
            # It was "cannot read (Not a directory, ENOTDIR)" with a hint to check the disk.
            raise ConfigError(
                f"{_where(path, node, at)}: names {(root / value).resolve()}, a file, where "
                "the state folder is to be",
                hint="name a folder (one that does not exist yet is made), like "
                ".customs-batch; see docs/state.md",
            )
        if isinstance(value, str) and is_file_system_root(root / value):
            raise ConfigError(
                f"{_where(path, node, at)}: is {(root / value).resolve()}, the root of the "
                "file system, which no state folder can be",
                hint="name a folder of its own (relative to the project, like "
                ".customs-batch, or absolute, like /var/lib/customs-batch); see docs/state.md",
            )


def _refuse_nul(value: Any, at: tuple[str | int, ...], path: Path, node: yaml.Node | None) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and "\0" in key:
                where = _where(path, node, at)
                raise ConfigError(f"{where}: a key holds a NUL character (\\0)")
            _refuse_nul(item, (*at, str(key)), path, node)
    elif isinstance(value, list):
        for number, item in enumerate(value):
            _refuse_nul(item, (*at, number), path, node)
    elif isinstance(value, str) and "\0" in value:
        where = _where(path, node, at)
        raise ConfigError(
            f"{where}: holds a NUL character (\\0), which no setting can hold",
            hint='remove it (a "\\0" in a double-quoted YAML string is one)',
        )


def _refuse_non_finite(
    value: Any, at: tuple[str | int, ...], path: Path, node: yaml.Node | None
) -> None:
    """No setting is ``.nan`` or ``.inf``: the schema's bounds let them through (a NaN is
    neither above nor below a minimum), and a timeout of NaN was "internal error: ValueError"
    once a command connected."""
    if isinstance(value, dict):
        for key, item in value.items():
            _refuse_non_finite(item, (*at, str(key)), path, node)
    elif isinstance(value, list):
        for number, item in enumerate(value):
            _refuse_non_finite(item, (*at, number), path, node)
    elif isinstance(value, float) and not math.isfinite(value):
        where = _where(path, node, at)
        raise ConfigError(
            f"{where}: is {value}, not a number a setting can be",
            hint="write a number, like 30 (see docs/environments.md for every setting)",
        )


def _address_problem(url: str) -> str | None:
    """Why the client could not send to ``url`` (None: it can). The value is not quoted.
    Read with the standard library: a plan, which sends nothing, does not load the network
    library."""
    try:
        parsed = urllib.parse.urlsplit(url)
        port = parsed.port  # its words for a bracket left open, a port not a number
    except ValueError as exc:
        return f"is not an address the client can send to ({exc})"
    if not parsed.hostname:
        return "names no host"
    if port is not None and not 0 < port < 65536:
        return f"names port {port}, not one from 1 to 65535"
    if any(ord(character) < 33 for character in url):
        return "holds a space or a control character, which no address can"
    if "?" in url or "#" in url:
        # Every request's path is put after the base URL: after a query it became part of
        # the query, and each request went to the base path (`env check` then reported a
        # 404 as "check the ID").
        return (
            "holds a query or a fragment (? or #), which the path of every request would "
            "be put after: give the address alone, with the service's path prefix if any"
        )
    return None


def _where(path: Path, node: yaml.Node | None, keys: tuple[str | int, ...]) -> str:
    line = _line_of(node, keys)
    dotted = ".".join(str(k) for k in keys) or "(top level)"
    return f"{path}:{line}: {dotted}" if line else f"{path}: {dotted}"


def _line_of(node: yaml.Node | None, keys: tuple[str | int, ...]) -> int | None:
    """The 1-based line of the value at ``keys`` in the composed YAML (its parent if absent)."""
    if node is None:
        return None
    for key in keys:
        child: yaml.Node | None = None
        if isinstance(node, yaml.MappingNode):
            child = next((v for k, v in node.value if k.value == key), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int):
            child = node.value[key] if key < len(node.value) else None
        if child is None:
            break
        node = child
    return int(node.start_mark.line) + 1


def _refuse_secrets(data: Any, path: Path, node: yaml.Node | None) -> None:
    if not isinstance(data, dict):
        return
    _refuse_secret_fields(data, (), path, node)
    environments = data.get("environments")
    if not isinstance(environments, dict):
        return
    for name, settings in environments.items():
        if not isinstance(settings, dict):
            continue
        _refuse_secret_fields(settings, ("environments", name), path, node)
        variable = settings.get("api_key_env")
        if isinstance(variable, str) and not re.fullmatch(ENV_VAR_NAME, variable):
            where = _where(path, node, ("environments", name, "api_key_env"))
            raise ConfigError(
                f"{where}: this must be the NAME of an environment variable, in capitals "
                "(like CUSTOMS_SANDBOX_KEY); the value looks like something else, maybe a key",
                hint=_KEY_HINT,
            )
        _refuse_state_url(settings.get("state"), ("environments", name, "state"), path, node)
        _refuse_notify_urls(settings.get("notify"), ("environments", name, "notify"), path, node)


def _unquoted_on(data: Any) -> None:
    """``notify: {on: [...]}`` unquoted is the key true to a YAML 1.1 reader: read it as
    ``on``, as written."""
    environments = data.get("environments") if isinstance(data, dict) else None
    if not isinstance(environments, dict):
        return
    for settings in environments.values():
        notify = settings.get("notify") if isinstance(settings, dict) else None
        if isinstance(notify, dict) and True in notify and "on" not in notify:
            notify["on"] = notify.pop(True)


def _refuse_notify_urls(
    notify: Any, at: tuple[str, ...], path: Path, node: yaml.Node | None
) -> None:
    """Notification URLs are never written in the file, only the name of their variable."""
    if not isinstance(notify, dict):
        return
    for field in notify:
        if str(field).lower() in ("url", "urls"):
            where = _where(path, node, (*at, str(field)))
            raise ConfigError(
                f"{where}: notification URLs may not be written here", hint=_NOTIFY_HINT
            )
    variable = notify.get("urls_env")
    if isinstance(variable, str) and not re.fullmatch(ENV_VAR_NAME, variable):
        where = _where(path, node, (*at, "urls_env"))
        raise ConfigError(
            f"{where}: this must be the NAME of an environment variable, in capitals "
            "(like CUSTOMS_BATCH_NOTIFY_URLS); the value looks like something else, maybe a URL",
            hint=_NOTIFY_HINT,
        )


def _refuse_state_url(state: Any, at: tuple[str, ...], path: Path, node: yaml.Node | None) -> None:
    """The database URL is never written in the file, only the name of its variable."""
    if not isinstance(state, dict):
        return
    for field in state:
        if str(field).lower() in ("url", "dsn", "conninfo", "connection"):
            where = _where(path, node, (*at, str(field)))
            raise ConfigError(f"{where}: the database URL may not be written here", hint=_URL_HINT)
    variable = state.get("url_env")
    if isinstance(variable, str) and not re.fullmatch(ENV_VAR_NAME, variable):
        where = _where(path, node, (*at, "url_env"))
        raise ConfigError(
            f"{where}: this must be the NAME of an environment variable, in capitals "
            "(like CUSTOMS_BATCH_STATE_URL); the value looks like something else, maybe a URL",
            hint=_URL_HINT,
        )


def _refuse_secret_fields(
    mapping: Mapping[Any, Any], at: tuple[str, ...], path: Path, node: yaml.Node | None
) -> None:
    for field in mapping:
        lowered = str(field).lower()
        if lowered not in _ALLOWED_KEY_FIELDS and any(w in lowered for w in _SECRET_WORDS):
            where = _where(path, node, (*at, str(field)))
            raise ConfigError(f"{where}: an API key may not be written here", hint=_KEY_HINT)


def _check_schema(data: Any, path: Path, node: yaml.Node | None) -> None:
    if _valid(data):
        return
    # The messages, for a configuration with errors: jsonschema says which rule failed and
    # where, which the explanations below are written for.
    import jsonschema

    validator = jsonschema.Draft202012Validator(CONFIG)
    errors = sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))
    if not errors:
        return
    lines = [f"{_where(path, node, tuple(e.absolute_path))}: {_explain(e)}" for e in errors]
    raise ConfigError(
        f"{path} is not a valid configuration:\n  " + "\n  ".join(lines),
        hint="see docs/environments.md for every setting",
    )


def _valid(data: Any) -> bool:
    """Whether ``data`` is a valid configuration, checked by jsonschema-rs, which the
    manifests' checks have loaded already (jsonschema itself takes a tenth of a second to
    import, on every command)."""
    import jsonschema_rs

    try:
        return bool(jsonschema_rs.Draft202012Validator(CONFIG).is_valid(data))
    except (ValueError, TypeError):  # a value JSON has no type for: said by the full check
        return False


def _explain(error: jsonschema.ValidationError) -> str:
    """What is wrong and what to write, in words, without quoting the value (it might be a
    key): never a regular expression or a JSON Schema keyword. A rule whose words depend on
    the setting (a ``pattern``, an ``anyOf``) has them in the schema, under ``x-expected``."""
    schema = error.schema if isinstance(error.schema, dict) else {}
    expected = schema.get(EXPECTED)
    match error.validator:
        case "type":
            return f"must be of type {schema.get('type')}"
        case "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum":
            return f"must be {_BOUND_WORDS[error.validator]} {error.validator_value}"
        case "minLength" | "maxLength" | "minItems" | "maxItems":
            words = f"; it takes {expected}" if expected else ""
            return _size_words(error.validator, error.validator_value) + words
        case "uniqueItems":
            words = f"; it takes {expected}" if expected else ""
            return f"names the same entry more than once: write each once{words}"
        case "additionalProperties" | "required":
            return str(error.message)
        case "enum":
            return "must be one of " + ", ".join(map(str, schema.get("enum", ())))
        case _ if "propertyNames" in error.schema_path:  # the rule of a mapping's keys
            return f"each key must be {expected or 'a name'}"
        case _ if expected and _other_digits(error.instance):
            return f"is written with digits of another script than 0-9: write {expected}"
        case _ if expected:
            return f"is not what this setting takes: write {expected}"
        case _:
            return "is not what this setting takes: see docs/environments.md"


_BOUND_WORDS = {
    "minimum": "at least",
    "maximum": "at most",
    "exclusiveMinimum": "more than",
    "exclusiveMaximum": "less than",
}


def _size_words(keyword: str, bound: Any) -> str:
    """What a text's length or a list's entries must be, in words."""
    if keyword == "minLength" and bound == 1:
        return "must not be empty: write a value"
    least = "at least" if keyword.startswith("min") else "at most"
    if keyword.endswith("Length"):
        return f"must be {least} {bound} characters long"
    if bound == 1:
        return f"must list {least} one entry"
    return f"must list {least} {bound} entries"


def _other_digits(value: Any) -> bool:
    """Whether ``value`` is text holding a digit other than 0-9 (Arabic-Indic, Devanagari,
    a superscript): numbers in this file are written in ASCII digits, as IDs are."""
    return isinstance(value, str) and any(c.isdigit() and not c.isascii() for c in value)


def _interpret(data: Mapping[str, Any], path: Path) -> ProjectConfig:
    root = path.parent.resolve()
    if is_file_system_root(root):
        raise ConfigError(
            f"{path}: a project at {root}, the root of the file system, would hold every "
            "file of the machine (and keep its state in it)",
            hint=f"move {CONFIG_NAME} into the project's own folder, beside its manifests",
        )
    state_root = str(data.get("state_dir", STATE_DIR))
    environments: dict[str, Environment] = {LOCAL: local_environment(root, state_dir=state_root)}
    repository = _repository_root(root)
    for name, settings in (data.get("environments") or {}).items():
        if name == LOCAL:
            environments[LOCAL] = _local(settings, root, state_root, path)
        else:
            environments[name] = _remote(name, settings, root, state_root, repository, path)
    refuse_shared_states(environments, path)
    default = data.get("default_environment")
    if default is not None and default not in environments:
        known = ", ".join(sorted(environments))
        raise ConfigError(
            f"{path}: default_environment names {default!r}, which is not defined",
            hint=f"known environments: {known}",
        )
    manifests = tuple(root / entry for entry in data.get("manifests") or ())
    return ProjectConfig(path, root, default, MappingProxyType(environments), manifests)


def _rate_text(value: Any) -> str:
    """``off`` whether written quoted or not (unquoted, YAML 1.1 reads it as false)."""
    return "off" if value is False else str(value)


def _common(settings: Mapping[str, Any], name: str, root: Path, state_root: str) -> dict[str, Any]:
    raw_timeouts = settings.get("timeouts") or {}
    return {
        "rate_limit": RateLimit.parse(_rate_text(settings.get("rate_limit", "off"))),
        "parallelism": int(settings.get("parallelism", 4)),
        "timeouts": Timeouts(**raw_timeouts),
        "state_dir": root / settings.get("state_dir", f"{state_root}/{name}"),
        "state": _state_settings(settings.get("state") or {}, name),
        "large_change_guard": _guard(settings.get("large_change_guard") or {}),
        "notify": _notify(settings.get("notify")),
    }


def _notify(block: Mapping[str, Any] | None) -> NotifySettings | None:
    """The schema checked the block; ``on`` left out is rejections and needs-decisions."""
    if block is None:
        return None
    on = block.get("on")
    if on is None:
        return NotifySettings(str(block["urls_env"]))
    return NotifySettings(str(block["urls_env"]), frozenset(NotifyOn(word) for word in on))


def _guard(block: Mapping[str, Any]) -> LargeChangeGuard:
    """The schema checked the block; what it leaves out keeps the default."""
    default = LargeChangeGuard()
    return LargeChangeGuard(
        min_records=int(block.get("min_records", default.min_records)),
        max_create_share=float(block.get("max_create_share", default.max_create_share)),
    )


def _state_settings(block: Mapping[str, Any], name: str) -> StateSettings:
    """The schema checked the block; url_env is there for postgres."""
    kind = StateKind(block.get("backend", StateKind.LOCAL.value))
    if kind is StateKind.LOCAL:
        return StateSettings()
    return StateSettings(kind, str(block["url_env"]), str(block.get("name", name)))


def _local(settings: Mapping[str, Any], root: Path, state_root: str, path: Path) -> Environment:
    extra = sorted(set(settings) - _LOCAL_FIELDS)
    if extra:
        raise ConfigError(
            f"{path}: environments.local cannot set {', '.join(extra)}",
            hint="local is the built-in emulator; it accepts only "
            + ", ".join(sorted(_LOCAL_FIELDS))
            + ". Define another environment for a real service.",
        )
    common = _common(settings, LOCAL, root, state_root)
    return Environment(
        name=LOCAL,
        base_url=None,
        credential=CredentialSource(CredentialKind.BUILTIN),
        **common,
    )


def _remote(
    name: str,
    settings: Mapping[str, Any],
    root: Path,
    state_root: str,
    repository: Path | None,
    path: Path,
) -> Environment:
    if "base_url" not in settings:
        raise ConfigError(
            f"{path}: environment {name!r} has no base_url",
            hint="give the service's address, like https://sandbox.customs.example",
        )
    has_env, has_file = "api_key_env" in settings, "api_key_file" in settings
    if has_env == has_file:
        raise ConfigError(
            f"{path}: environment {name!r} needs exactly one of api_key_env and api_key_file",
            hint=_KEY_HINT,
        )
    try:
        credential = (
            CredentialSource(CredentialKind.ENV_VAR, settings["api_key_env"])
            if has_env
            else key_file_source(settings["api_key_file"], base=root, repository=repository)
        )
    except ConfigError as exc:  # which file and environment, as the errors above say
        raise ConfigError(f"{path}: environment {name!r}: {exc.message}", hint=exc.hint) from None
    overrides = MappingProxyType(dict(settings.get("endpoints") or {}))
    environment = Environment(
        name=name,
        base_url=str(settings["base_url"]).rstrip("/"),
        credential=credential,
        endpoint_overrides=overrides,
        **_common(settings, name, root, state_root),
    )
    try:
        environment.endpoints  # noqa: B018 - check the overrides now, not at the first request
    except ConfigError as exc:
        where = f"{path}: environments.{name}.endpoints"
        raise ConfigError(f"{where}: {exc.message}", hint=exc.hint) from None
    return environment


def _repository_root(start: Path) -> Path:
    """The enclosing git work tree, or the project directory when there is none."""
    for directory in (start, *start.parents):
        if (directory / ".git").exists():
            return directory
    return start
