"""A throwaway PostgreSQL cluster for the tests: initdb into a temporary folder, a server
that listens on a Unix socket in that folder only (no TCP port: nothing to choose, nothing
another process can take first), stopped and removed at the end.

PostgreSQL refuses to run as root; as root (CI), the server runs as the ``postgres`` system
user that Debian's ``postgresql`` package creates (``make test`` installs the package when
the machine has no server). The folder is made with ``tempfile`` directly under ``/tmp``
rather than under pytest's own temporary folder, which is private to the user running the
tests and whose paths are too long for a socket (at most 107 bytes).
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path
from urllib.parse import quote

import psycopg

PASSWORD_ROLE = "secretive"
"""A role that must give its password (scram), for the tests that the password never shows."""
PASSWORD = "pw-Zq81-NeverShown"


def _bin_dir() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    if found:
        return Path(found[-1]).parent
    which = shutil.which("pg_ctl")
    if which:
        return Path(which).resolve().parent
    raise RuntimeError(
        "no PostgreSQL server on this machine: `make test` installs it "
        "(apt-get install postgresql), or install it yourself"
    )


SOCKET_PORT = 5432
"""Names the socket file (``.s.PGSQL.5432``); the server opens no TCP port."""


class PostgresCluster:
    """One PostgreSQL server of the test session (or of one test that restarts it)."""

    def __init__(self) -> None:
        self.bin = _bin_dir()
        self.folder = Path(tempfile.mkdtemp(prefix="cb-pg-", dir="/tmp"))
        self.data = self.folder / "data"
        self.log = self.folder / "server.log"
        self.port = SOCKET_PORT
        self.socket = self.folder / f".s.PGSQL.{self.port}"
        self._as_postgres = os.geteuid() == 0
        if self._as_postgres:
            os.chmod(self.folder, 0o755)
            shutil.chown(self.folder, "postgres", "postgres")

    def _run(self, *argv: str) -> None:
        command = [str(self.bin / argv[0]), *argv[1:]]
        if self._as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
            cwd=self.folder,  # a folder the server's user may enter
        )
        if done.returncode != 0:
            log = self.log.read_text() if self.log.exists() else ""
            raise RuntimeError(f"{' '.join(argv[:2])} failed: {done.stdout}{done.stderr}{log}")

    def start(self) -> None:
        """initdb (the first time) and start the server; returns once it accepts connections."""
        if not self.data.exists():
            self._run(
                "initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8"
            )
            hba = self.data / "pg_hba.conf"
            # Local (Unix socket) connections only; the password role must give its password.
            hba.write_text(f"local all {PASSWORD_ROLE} scram-sha-256\nlocal all all trust\n")
        options = f"-p {self.port} -k {self.folder} -c listen_addresses='' -c fsync=on"
        self._run("pg_ctl", "start", "-w", "-D", str(self.data), "-l", str(self.log), "-o", options)

    def stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            self._run("pg_ctl", "stop", "-w", "-m", "fast", "-D", str(self.data))

    def restart(self) -> None:
        """Stop (closing every client's connection) and start again on the same data."""
        self.stop()
        self.start()

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)

    def url(self, database: str = "postgres", *, user: str = "postgres", password: str = "") -> str:
        """The URL of ``database`` through the socket: its folder as the host, percent-encoded
        (libpq takes a host starting with ``/`` as a socket folder)."""
        login = f"{user}:{password}" if password else user
        return f"postgresql://{login}@{quote(str(self.folder), safe='')}:{self.port}/{database}"

    def new_database(self) -> str:
        """A new, empty database; its URL."""
        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True) as admin:
            exists = admin.execute(
                "SELECT 1 FROM pg_roles WHERE rolname = %s", (PASSWORD_ROLE,)
            ).fetchone()
            if not exists:
                admin.execute(f"CREATE ROLE {PASSWORD_ROLE} LOGIN PASSWORD '{PASSWORD}'")
            # Owned by the password role, so that it may create the tables too.
            admin.execute(f'CREATE DATABASE "{name}" OWNER {PASSWORD_ROLE}')
        return self.url(name)
