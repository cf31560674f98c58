"""Where an environment's API key comes from: a variable, a file, or the built-in sandbox.

The key itself is read only when a client is built, and never kept anywhere else: the
descriptions below say where the key is and whether it is there, never what it is.
"""

from __future__ import annotations

import os
import shlex
import stat
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from customs_batch.errors import ConfigError
from customs_batch.escaping import printable
from customs_batch.userfiles import FileRefused, InputKind, read_user_file

SANDBOX_KEY = "sandbox-key"  # the built-in sandbox seed's key (docs/sandbox.md)


class CredentialKind(Enum):
    """The places a key may live."""

    ENV_VAR = "api_key_env"
    FILE = "api_key_file"
    BUILTIN = "builtin"


@dataclass(frozen=True)
class CredentialSource:
    """Where to read the key: ``ref`` is the variable's name or the file's path."""

    kind: CredentialKind
    ref: str = ""

    def describe(self, environ: Mapping[str, str] | None = None) -> str:
        """Where the key comes from and whether it is there, e.g. ``$SANDBOX_KEY (set)``."""
        environ = os.environ if environ is None else environ
        if self.kind is CredentialKind.ENV_VAR:
            value = environ.get(self.ref)
            state = "not set" if value is None else "set" if value.strip() else "empty"
            return f"${self.ref} ({state})"
        if self.kind is CredentialKind.FILE:
            path = Path(self.ref)
            state = "readable" if os.access(path, os.R_OK) and path.is_file() else "missing"
            return f"file {self.ref} ({state})"
        return "the built-in sandbox key"

    def resolve(self, environ: Mapping[str, str] | None = None) -> str:
        """The key; ConfigError naming the variable or file when it is not there."""
        environ = os.environ if environ is None else environ
        if self.kind is CredentialKind.BUILTIN:
            return SANDBOX_KEY
        if self.kind is CredentialKind.ENV_VAR:
            value = environ.get(self.ref)
            key = (value or "").strip()
            if not key:
                said = "is not set" if value is None else "is set but empty (or blank)"
                raise ConfigError(
                    f"the environment variable {self.ref} that holds the API key {said}",
                    hint=f"export {self.ref}=<your key> (keys are delivered by the operator); "
                    "in CI, check that the secret it is set from exists and is not empty",
                )
            return _checked(key, f"the environment variable {self.ref}")
        return _checked(_read_key_file(Path(self.ref)), f"the API key file {self.ref}")


def _checked(key: str, where: str) -> str:
    """``key`` if it can travel in an HTTP header; the error names where it came from,
    and the position of the first bad character, never the key or the character."""
    for position, character in enumerate(key, start=1):
        if not " " < character < "\x7f":
            what = "a space or a control character" if character.isascii() else "not ASCII"
            raise ConfigError(
                f"the API key in {where} is malformed: its character {position} of "
                f"{len(key)} is {what}",
                hint="an API key is ASCII letters, digits and punctuation only; copy it again "
                "from the operator's message (pasting can add typographic quotes, a "
                "non-breaking space or an invisible mark)",
            )
    return key


_ONE_LINE = "write only the key into the file"


def _read_key_file(path: Path) -> str:
    try:
        # A key is a line of text: 64 KB is plenty, and /dev/zero is not a key file.
        key = (
            read_user_file(path, limit=64 * 1024, raise_hint=_ONE_LINE, kind=InputKind.KEY)
            .decode("utf-8")
            .strip()
        )
    except FileRefused as exc:
        raise ConfigError(exc.message, hint=exc.hint) from None
    except UnicodeDecodeError:
        raise ConfigError(
            f"the API key file {path} is not UTF-8 text",
            hint="write only the key into the file",
        ) from None
    except OSError as exc:
        raise ConfigError(
            f"cannot read the API key file {path}: {exc.strerror or exc}",
            hint="create the file with the key on one line, readable by you only",
        ) from None
    if not key or "\n" in key:
        raise ConfigError(
            f"the API key file {path} must hold the key on one line",
            hint="write only the key into the file",
        )
    _warn_if_others_can_read(path)
    return key


_warned: set[str] = set()
"""The key files warned about in this process: a key read again (after a 401) is not."""


def _warn_if_others_can_read(path: Path) -> None:
    """A warning on stderr when the group or others may read the key file at ``path``, as
    kubectl warns of a group-readable configuration: anyone who can read it can send as
    the key's owner. Not an error: the file is the user's, and a shared CI runner's
    permissions are not always theirs to choose. Names the file and its mode, never the key."""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return
    readers = [
        who for who, bit in (("group", stat.S_IRGRP), ("others", stat.S_IROTH)) if mode & bit
    ]
    if not readers or str(path) in _warned:
        return
    _warned.add(str(path))
    shown = printable(str(path))
    sys.stderr.write(
        f"warning: the API key file {shown} can be read by {' and '.join(readers)} "
        f"(mode {mode:04o}): anyone who can read it can send requests with your key. "
        f"Make it readable by you only: chmod 600 {printable(shlex.quote(str(path)))}\n"
    )


def key_file_source(text: str, *, base: Path, repository: Path | None) -> CredentialSource:
    """The source for ``api_key_file: text``; refused when the file is inside the repository.

    Keys are stored outside version control (API document, Authentication 5): a key file in
    the repository would be one ``git add .`` away from being committed.
    """
    path = Path(os.path.expanduser(text))
    if not path.is_absolute():
        path = base / path
    path = path.resolve()
    if repository is not None and path.is_relative_to(repository.resolve()):
        raise ConfigError(
            f"api_key_file {text} is inside the repository {repository}",
            hint="keys must live outside version control: move the file to "
            "~/.config/customs-batch/ and point api_key_file there",
        )
    return CredentialSource(CredentialKind.FILE, str(path))
