"""The tests' throwaway PostgreSQL server starts even when its port is taken first."""

from __future__ import annotations

import socket

import psycopg

from tests.postgres import PostgresCluster


def test_a_port_taken_before_the_server_binds_it_gives_the_server_another() -> None:
    cluster = PostgresCluster()
    taken = cluster.port
    try:
        with socket.socket() as squatter:
            # Someone else binds the port between its choice and the server's start.
            squatter.bind(("127.0.0.1", taken))
            squatter.listen()
            cluster.start()
        assert cluster.port != taken
        with psycopg.connect(cluster.url()) as connection:
            assert connection.execute("SELECT 1").fetchone() == (1,)
    finally:
        cluster.remove()
