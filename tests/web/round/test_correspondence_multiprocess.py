"""Correspondence games across two real server processes on one PostgreSQL (issue 23, point 1):
a missed deadline is claimed through the ordinary flag fall exactly once, whichever process
sweeps first, and a rated game's ratings change exactly once."""

from __future__ import annotations

import time
from collections.abc import Callable

import httpx
import psycopg
import pytest
from websockets.sync.client import ClientConnection

from tests.helpers import open_ws
from tests.web import test_multiprocess
from tests.web.test_multiprocess import Client, Server, legal, stored

pg = test_multiprocess.pg
servers = test_multiprocess.servers

PW = "correct horse battery staple"


def _account(server: Server, name: str) -> httpx.Client:
    c = httpx.Client(base_url=server.url, timeout=30)
    csrf = c.get("/api/account").json()["csrf"]
    r = c.post("/api/account/signup", json={"username": name, "password": PW}, headers={"X-CSRF-Token": csrf})
    assert r.status_code == 201, r.text
    c.headers["X-CSRF-Token"] = r.json()["csrf"]
    return c


def _ws(server: Server, game: str, who: httpx.Client) -> ClientConnection:
    """The game's WebSocket with the account's session cookie (its seats open only with it)."""
    cookie = who.cookies.get("jericho_session")
    return open_ws(
        f"ws://127.0.0.1:{server.port}/ws/{game}", additional_headers={"Cookie": f"jericho_session={cookie}"}
    )


def _sql(url: str, sql: str, **params: object) -> list[tuple[object, ...]]:
    dsn = url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(dsn, autocommit=True) as conn:
        cur = conn.execute(sql, params)
        return list(cur.fetchall()) if cur.description else []


def test_a_missed_deadline_is_claimed_exactly_once_across_processes(pg: str, servers: Callable[..., Server]) -> None:
    s1, s2 = servers(pg), servers(pg)
    ada, bob = _account(s1, "ada"), _account(s2, "bob")
    g = ada.post("/api/games", json={"mode": "online", "side": "south", "per_move_days": 1, "rated": True}).json()
    assert g["game"]["per_move_days"] == 1, g
    j = bob.post(f"/api/games/{g['id']}/join", json={"invite": g["invite"]})
    assert j.status_code == 200, j.text
    south = Client(_ws(s1, g["id"], ada), g["token"])
    north = Client(_ws(s2, g["id"], bob), j.json()["token"])
    south.wait(lambda st: st["status"] == "playing")
    for ply in range(10):  # five placements each: a rated game with less play is not rated (issue 33)
        mover = south if ply % 2 == 0 else north
        st = mover.wait(lambda st, ply=ply: st["ply"] >= ply)
        mover.send(type="move", move=legal(st), ply=ply)
    south.wait(lambda st: st["ply"] >= 10)
    deadline = south.state["deadline"]
    assert deadline == pytest.approx(time.time() + 86400, abs=60)
    # South lets a day and more pass: moved back in the database (the truth), as a new version,
    # so that both processes reload it and both sweepers see the deadline past
    # (the version as this update left it: a sweeper may flag the game at once after it)
    before = _sql(
        pg,
        "UPDATE games SET turn_started = turn_started - 90000, deadline = deadline - 90000, "
        "version = version + 1 WHERE id = %(id)s RETURNING version",
        id=g["id"],
    )[0][0]
    for c in (south, north):
        st = c.wait(lambda st: st["status"] == "over", timeout=30)
        assert st["result"] == "north" and st["reason"] == "time"
    time.sleep(2.0)  # several sweeps of both processes later: still one flag fall
    rec = stored(pg, g["id"])
    assert rec.version == before + 1 and rec.result == "north" and rec.reason == "time"
    # the rated game's update ran once: one history row per player
    end = time.monotonic() + 30
    while len(_sql(pg, "SELECT account_id FROM rating_history WHERE game_id = %(id)s", id=g["id"])) < 2:
        assert time.monotonic() < end, "no rating update"
        time.sleep(0.2)
    time.sleep(1.0)
    rows = _sql(pg, "SELECT account_id, score FROM rating_history WHERE game_id = %(id)s ORDER BY score", id=g["id"])
    assert len(rows) == 2 and [r[1] for r in rows] == [0.0, 1.0]
    for c in (ada, bob):
        c.close()


def test_an_increment_is_kept_by_the_database_and_the_flag_falls_once(pg: str, servers: Callable[..., Server]) -> None:
    """A 6-second clock with 2 seconds per move, moves through two processes: the time each side
    gets back is the stored one, seen the same on both, and the flag falls once at the deadline
    that the increments moved.  What a side spent is read from the stored turn starts (the clock's
    own figures), not from the test's wall clock: a loaded machine takes longer, and the stored
    time still is 6 s less exactly that, plus 2.  Each side's first move is free and earns nothing
    (issue 52: a side's clock starts at its own first move)."""
    s1, s2 = servers(pg, "--min-clock", "0.05"), servers(pg, "--min-clock", "0.05")
    g = s1.post("/api/games", {"mode": "online", "side": "south", "clock": 0.1, "increment": 2}).json()
    assert g["game"]["increment"] == 2 and g["game"]["clock"]["initial"] == 6.0, g
    j = s2.post(f"/api/games/{g['id']}/join", {"invite": g["invite"]}).json()
    south, north = Client(s1.ws(g["id"]), g["token"]), Client(s2.ws(g["id"]), j["token"])
    st = south.wait(lambda st: st["status"] == "playing")
    south.send(type="move", move=legal(st), ply=0)
    seen = north.wait(lambda st: st["ply"] >= 1)
    north.send(type="move", move=legal(seen), ply=1)
    st = south.wait(lambda st: st["ply"] >= 2)
    rec = stored(pg, g["id"])
    assert rec.south_time == rec.north_time == 6.0  # two first moves: no clock ran, nothing given
    assert st["clock"]["running"] == "south"
    started = rec.turn_started  # South's clock runs from North's first move
    south.send(type="move", move=legal(st), ply=2)
    seen = north.wait(lambda st: st["ply"] >= 3)
    rec = stored(pg, g["id"])
    # South's stored time: 6 s, less what it spent (to the move, when North's turn started), plus 2;
    # the other process shows exactly that
    spent = rec.turn_started - started
    assert 0 < spent < 6.0 and rec.south_time == pytest.approx(6.0 - spent + 2.0, abs=1e-6)
    assert seen["clock"]["south"] == pytest.approx(rec.south_time)
    north.send(type="move", move=legal(seen), ply=3)
    st = south.wait(lambda st: st["ply"] >= 4)
    before, rec = rec, stored(pg, g["id"])
    spent = rec.turn_started - before.turn_started
    assert 0 < spent < 6.0 and rec.north_time == pytest.approx(6.0 - spent + 2.0, abs=1e-6)
    assert rec.south_time == before.south_time and rec.deadline == pytest.approx(rec.turn_started + rec.south_time)
    assert st["deadline"] == pytest.approx(rec.deadline)
    version, deadline = rec.version, rec.deadline
    # South does not move: the flag falls at the stored deadline, once, whichever process sweeps
    for c in (south, north):
        st = c.wait(lambda st: st["status"] == "over", timeout=30)
        assert st["result"] == "north" and st["reason"] == "time"
    time.sleep(1.5)
    rec = stored(pg, g["id"])
    assert rec.version == version + 1 and rec.south_time == 0.0
    assert rec.updated_at >= deadline  # not before the deadline the increment moved
