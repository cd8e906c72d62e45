"""``jericho backup`` / ``jericho restore`` on a quiet database (issue 54, point 2), on SQLite and
PostgreSQL: the copy holds every row of every table, restore refuses a database that holds
anything unless ``--force`` (and then replaces all of it), and bad input changes nothing.

The backup taken while games are being played is tests/web/test_backup_multiprocess.py.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
from sqlalchemy import create_engine, inspect, text  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from jericho_game.cli import main  # noqa: E402
from jericho_game.web.server import create_app  # noqa: E402
from jericho_game.web.storage.backup import PG_DUMP_FLAGS  # noqa: E402
from jericho_game.web.storage.database import resolve_db_url  # noqa: E402
from tests.web.accounts.test_accounts import create, signup  # noqa: E402
from tests.web.test_server import connect, seat  # noqa: E402


def fresh_like(db: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """Another empty database of the same kind as ``db``."""
    if "://" not in db:
        return str(tmp_path / f"other-{uuid.uuid4().hex[:6]}.sqlite3")
    import psycopg

    folder, port = request.getfixturevalue("postgres_socket")
    name = f"r_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(host=folder, port=port, user="postgres", dbname="postgres", autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return f"postgresql+psycopg://postgres@/{name}?host={folder}&port={port}"


def every_row(db: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every table's rows, sorted: two databases with the same content compare equal."""
    engine = create_engine(resolve_db_url(db))
    try:
        with engine.connect() as conn:
            return {
                t: sorted((tuple(r) for r in conn.execute(text(f'SELECT * FROM "{t}"'))), key=repr)
                for t in inspect(conn).get_table_names()
            }
    finally:
        engine.dispose()


def populate(db: str, name: str = "backed") -> str:
    """An account, a hot-seat game with three moves: the game's id."""
    with TestClient(create_app(db, ai_processes=0)) as c:
        signup(c, name, "a long enough password")
        g = create(c, mode="hotseat")
        with connect(c, g["id"]) as raw:
            ws = seat(raw, g["token"], "both")
            for mv in ("5R@d2", "1G@d3", "2Y@d3"):
                ws.send(type="move", move=mv)
                ws.until("ack")
    return str(g["id"])


def jericho(*argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_a_backup_restores_every_row_of_every_table(
    db: str, tmp_path: Path, request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str]
) -> None:
    populate(db)
    before = every_row(db)
    assert before["moves"] and before["accounts"]
    out = tmp_path / "site.backup"
    rc, said, err = jericho("backup", "--db", db, str(out), capsys=capsys)
    assert rc == 0, err
    assert "backup written to" in said and "1 games, 1 accounts" in said or "PostgreSQL" in said
    assert not list(tmp_path.glob("*.part")), "the unfinished copy is renamed or removed"
    target = fresh_like(db, tmp_path, request)
    rc, said, err = jericho("restore", "--db", target, str(out), capsys=capsys)
    assert rc == 0, err
    assert "1 games, 1 accounts" in said
    assert every_row(target) == before
    # a server opens the restored database and goes on with the game
    with TestClient(create_app(target, ai_processes=0)) as c:
        game_id = before["games"][0][0]
        assert c.get(f"/api/games/{game_id}").json()["moves"] == ["5R@d2", "1G@d3", "2Y@d3"]


def test_restore_refuses_a_database_that_holds_anything_unless_forced(
    db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = populate(db)
    out = tmp_path / "site.backup"
    assert jericho("backup", "--db", db, str(out), capsys=capsys)[0] == 0
    later = populate(db, "later")  # played after the backup
    held = every_row(db)
    rc, said, err = jericho("restore", "--db", db, str(out), capsys=capsys)
    assert rc == 2 and said == ""
    assert "is not empty (" in err and "games: 2" in err and "--force" in err and "nothing was changed" in err
    assert every_row(db) == held
    rc, said, err = jericho("restore", "--db", db, str(out), "--force", capsys=capsys)
    assert rc == 0, err
    ids = [row[0] for row in every_row(db)["games"]]
    assert ids == [first] and later not in ids


def test_bad_backups_and_targets_are_refused_with_the_reason_and_change_nothing(
    db: str, tmp_path: Path, request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str]
) -> None:
    target = fresh_like(db, tmp_path, request)
    junk = tmp_path / "notes.txt"
    junk.write_text("not a backup\n")
    rc, _, err = jericho("restore", "--db", target, str(junk), capsys=capsys)
    assert rc == 2 and "is not a backup made by `jericho backup`" in err
    rc, _, err = jericho("restore", "--db", target, str(tmp_path / "missing.backup"), capsys=capsys)
    assert rc == 2 and "there is no backup file" in err
    # a backup of the other kind of database
    other_kind = tmp_path / "other-kind.backup"
    if "://" in db:
        populate(str(tmp_path / "lite.sqlite3"))
        assert jericho("backup", "--db", str(tmp_path / "lite.sqlite3"), str(other_kind), capsys=capsys)[0] == 0
    else:
        other_kind.write_bytes(b"PGDMP\x01\x0e\x00" + bytes(64))
    rc, _, err = jericho("restore", "--db", target, str(other_kind), capsys=capsys)
    assert rc == 2 and "moving between the two is not supported" in err
    # a SQLite file that is no game database
    if "://" not in db:
        import sqlite3

        stranger = tmp_path / "stranger.sqlite3"
        with sqlite3.connect(stranger) as conn:
            conn.execute("CREATE TABLE t (x)")
        conn.close()
        rc, _, err = jericho("restore", "--db", target, str(stranger), capsys=capsys)
        assert rc == 2 and "not a game database" in err
        rc, _, err = jericho("backup", "--db", str(tmp_path / "nothing.sqlite3"), str(tmp_path / "b"), capsys=capsys)
        assert rc == 2 and "there is no database file" in err and not (tmp_path / "nothing.sqlite3").exists()
    rc, _, err = jericho("backup", "--db", db, str(tmp_path / "no-such-folder" / "b"), capsys=capsys)
    assert rc == 2 and "does not exist" in err
    assert not Path(target).exists() if "://" not in db else every_row(target) == {}


def test_pg_dump_takes_a_snapshot_without_owners_or_grants() -> None:
    """The flags docs/operations.md explains: a custom archive that names no role."""
    assert "--format=custom" in PG_DUMP_FLAGS and "--no-owner" in PG_DUMP_FLAGS and "--no-privileges" in PG_DUMP_FLAGS
