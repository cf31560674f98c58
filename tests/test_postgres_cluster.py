"""The tests' throwaway PostgreSQL server listens on a Unix socket in its own folder only:
no TCP port is chosen, so none can be taken by someone else before the server binds it."""

from __future__ import annotations

import psycopg

from tests.postgres import PostgresCluster


def test_the_server_listens_on_its_own_socket_and_no_tcp_port() -> None:
    cluster = PostgresCluster()
    try:
        cluster.start()
        assert cluster.socket.is_socket()
        assert len(str(cluster.socket).encode()) <= 107, "too long for a Unix socket"
        with psycopg.connect(cluster.url()) as connection:
            assert connection.execute("SHOW listen_addresses").fetchone() == ("",)
            folders = connection.execute("SHOW unix_socket_directories").fetchone()
            assert folders == (str(cluster.folder),)
        cluster.restart()  # the same URL after a restart
        with psycopg.connect(cluster.url()) as connection:
            assert connection.execute("SELECT 1").fetchone() == (1,)
    finally:
        cluster.remove()
    assert not cluster.folder.exists()
