"""The test servers' ports: ``tests.helpers.reserve_port`` holds a port for a server that another
process starts, which the subprocess-based tests (``jericho serve``, the mail server) rely on."""

from __future__ import annotations

import socket

import pytest

from tests.helpers import reserve_port


def test_a_reserved_port_refuses_other_binds_and_connections_until_a_server_listens() -> None:
    with reserve_port() as hold:
        port = hold.getsockname()[1]
        with socket.socket() as intruder, pytest.raises(OSError):  # a plain bind: taken
            intruder.bind(("127.0.0.1", port))
        with pytest.raises(ConnectionRefusedError):  # nobody listens yet
            socket.create_connection(("127.0.0.1", port), timeout=2).close()
        # a server binding with SO_REUSEADDR, as uvicorn, asyncio and aiosmtpd do, still gets it
        with socket.socket() as server:
            server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            server.bind(("127.0.0.1", port))
            server.listen()
            with socket.create_connection(("127.0.0.1", port), timeout=2) as client:
                accepted, _ = server.accept()
                client.sendall(b"ping")
                assert accepted.recv(4) == b"ping"
                accepted.close()
            with socket.socket() as second, pytest.raises(OSError):  # one listener at a time
                second.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                second.bind(("127.0.0.1", port))
    assert hold.fileno() == -1  # closed with the block
