"""Database fixtures for the web tests: every storage test runs on SQLite and on PostgreSQL.

PostgreSQL is a throwaway cluster started for the test session (Debian's ``postgresql``
package, which ``tasks.py test`` installs when missing) on a Unix socket in a temporary
folder: no TCP port is opened and nothing outside the test run is touched.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest


def _pg_bin(name: str) -> str:
    found = shutil.which(name) or next(iter(sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)), None)
    if not found:
        raise RuntimeError(f"PostgreSQL's {name} is missing: run `python3 tasks.py test`, which installs it")
    return found


def _as_postgres(cmd: list[str]) -> list[str]:
    # PostgreSQL refuses to run as root: drop to the postgres system user when we are root.
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *cmd]
    return cmd


@pytest.fixture(scope="session")
def postgres_socket() -> Iterator[tuple[str, int]]:
    """A running PostgreSQL cluster: (socket folder, port)."""
    folder = Path(tempfile.mkdtemp(prefix="jericho-pg-"))
    data = folder / "data"
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
    port = 50000 + uuid.uuid4().int % 10000
    subprocess.run(
        _as_postgres([_pg_bin("initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync"]),
        check=True,
        capture_output=True,
    )
    options = f"-k {folder} -p {port} -c listen_addresses='' -c fsync=off"
    subprocess.run(
        _as_postgres([_pg_bin("pg_ctl"), "-D", str(data), "-o", options, "-w", "-l", str(folder / "log"), "start"]),
        check=True,
        capture_output=True,
    )
    try:
        yield str(folder), port
    finally:
        subprocess.run(
            _as_postgres([_pg_bin("pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]), capture_output=True
        )
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh, empty game database: a SQLite file path, or a PostgreSQL URL."""
    if request.param == "sqlite":
        return str(tmp_path / "games.sqlite3")
    import psycopg

    folder, port = request.getfixturevalue("postgres_socket")
    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(host=folder, port=port, user="postgres", dbname="postgres", autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return f"postgresql+psycopg://postgres@/{name}?host={folder}&port={port}"
