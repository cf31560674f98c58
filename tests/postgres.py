"""A throwaway PostgreSQL cluster for the tests: initdb into a temporary folder, a free port
on 127.0.0.1 (another one when that was taken before the server bound it), stopped and
removed at the end.

PostgreSQL refuses to run as root; as root (CI), the server runs as the ``postgres`` system
user that Debian's ``postgresql`` package creates (``make test`` installs the package when
the machine has no server). The folder is made with ``tempfile`` rather than under pytest's
own temporary folder, which is private to the user running the tests.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path

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


_START_ATTEMPTS = 5
_BIND_FAILED = re.compile(r"could not bind|could not create any TCP/IP sockets")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class PostgresCluster:
    """One PostgreSQL server of the test session (or of one test that restarts it)."""

    def __init__(self) -> None:
        self.bin = _bin_dir()
        self.folder = Path(tempfile.mkdtemp(prefix="customs-batch-pg-"))
        self.data = self.folder / "data"
        self.log = self.folder / "server.log"
        self.port = _free_port()
        self._as_postgres = os.geteuid() == 0
        self._started_once = False
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
            rules = (
                f"host all {PASSWORD_ROLE} 127.0.0.1/32 scram-sha-256\n"
                "local all all trust\nhost all all 127.0.0.1/32 trust\n"
            )
            hba.write_text(rules)
        # PostgreSQL cannot listen on port 0 and say which port it got: the port is chosen
        # free here, and someone else may take it before the server binds it. Then the
        # server fails to start, and starts again on another free port. A restart keeps
        # its port (the tests' URLs name it).
        for attempt in range(_START_ATTEMPTS):
            logged = self.log.stat().st_size if self.log.exists() else 0
            try:
                self._start_server()
                return
            except RuntimeError:
                if self._started_once or attempt + 1 == _START_ATTEMPTS:
                    raise
                if not _BIND_FAILED.search(self.log.read_text()[logged:]):
                    raise
                self.port = _free_port()

    def _start_server(self) -> None:
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=on"
        self._run("pg_ctl", "start", "-w", "-D", str(self.data), "-l", str(self.log), "-o", options)
        self._started_once = True

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
        login = f"{user}:{password}" if password else user
        return f"postgresql://{login}@127.0.0.1:{self.port}/{database}"

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
