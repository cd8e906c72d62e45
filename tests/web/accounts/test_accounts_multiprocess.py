"""Accounts and ratings with real ``jericho serve`` processes on one PostgreSQL database: a session
made on one process works on the other, and a rated game played across them updates both ratings
exactly once although every process runs the rating queue."""

from __future__ import annotations

import time
from collections.abc import Callable

import httpx
import pytest
from sqlalchemy import text
from websockets.sync.client import connect as ws_connect

from jericho_game.web.storage.database import Storage
from tests.helpers import open_ws
from tests.web.test_multiprocess import Client, Server, legal, pg, servers  # noqa: F401 - fixtures

__all__ = ["pg", "servers"]


def account(server: Server, name: str, password: str) -> httpx.Client:
    """A browser of ``name`` on ``server``, signed up and logged in."""
    c = httpx.Client(base_url=server.url, timeout=20)
    token = c.get("/api/account").json()["csrf"]
    r = c.post("/api/account/signup", json={"username": name, "password": password}, headers={"X-CSRF-Token": token})
    assert r.status_code == 201, r.text
    return c


def test_a_rated_game_across_two_processes_is_rated_once(
    pg: str,
    servers: Callable[..., Server],  # noqa: F811
    request: pytest.FixtureRequest,
) -> None:
    a, b = servers(pg), servers(pg)
    alice = account(a, "alice", "alice's long password")
    bob = account(b, "bob", "bob's long password")
    # alice's session, made on process A, is known to process B
    on_b = httpx.Client(base_url=b.url, cookies=alice.cookies, timeout=20)
    for client in (alice, bob, on_b):  # their sockets closed, not left to the garbage collector
        request.addfinalizer(client.close)
    assert on_b.get("/api/account").json()["account"]["username"] == "alice"
    csrf = alice.get("/api/account").json()["csrf"]
    g = alice.post(
        "/api/games", json={"mode": "online", "side": "south", "rated": True}, headers={"X-CSRF-Token": csrf}
    )
    assert g.status_code == 201, g.text
    game = g.json()
    csrf_b = bob.get("/api/account").json()["csrf"]
    j = bob.post(f"/api/games/{game['id']}/join", json={"invite": game["invite"]}, headers={"X-CSRF-Token": csrf_b})
    assert j.status_code == 200, j.text
    # bob plays from process B by his session alone (no seat token), alice resigns on A
    cookie = "; ".join(f"{k}={v}" for k, v in bob.cookies.items())
    with ws_connect(f"ws://127.0.0.1:{b.port}/ws/{game['id']}", additional_headers={"Cookie": cookie}) as raw:
        north = Client(raw)
        north.send(type="hello")
        while (msg := north.pump(5)) is not None and msg["type"] != "welcome":
            pass
        assert north.role == "north"
        assert north.wait(lambda st: st["status"] == "playing")["accounts"] == {"south": "alice", "north": "bob"}
        stolen = Client(a.ws(game["id"]), game["token"])  # alice's seat token without her session
        while (msg := stolen.pump(5)) is not None and msg["type"] != "error":
            pass
        assert stolen.errors[-1]["code"] == "not_your_seat"
        stolen.ws.close()
        alice_cookie = "; ".join(f"{k}={v}" for k, v in alice.cookies.items())
        south = Client(
            open_ws(f"ws://127.0.0.1:{a.port}/ws/{game['id']}", additional_headers={"Cookie": alice_cookie}),
            game["token"],
        )
        # five placements each (less play is not rated: issue 33), then alice resigns
        south.wait(lambda st: st["status"] == "playing", 10)
        for ply in range(10):
            mover = south if ply % 2 == 0 else north
            st = mover.wait(lambda st, ply=ply: st["ply"] == ply, 10)
            mover.send(type="move", move=legal(st), ply=ply)
        south.wait(lambda st: st["ply"] == 10, 10)
        south.send(type="resign")
        north.wait(lambda st: st["status"] == "over" and st["result"] == "north", 5)
        south.ws.close()
    for _ in range(100):
        pa, pb = a.get("/api/players/alice"), b.get("/api/players/bob")
        if pa["rated_games"] and pb["rated_games"]:
            break
        time.sleep(0.1)
    assert pa["rating"] < 1500 < pb["rating"], (pa, pb)
    time.sleep(1.5)  # both processes' rating loops have looked again meanwhile
    store = Storage(pg)
    try:
        with store.engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM rating_history")).scalar_one() == 2
            assert conn.execute(text("SELECT count(*) FROM rating_jobs")).scalar_one() == 0
            games = dict(conn.execute(text("SELECT username, rated_games FROM accounts")).all())
    finally:
        store.close()
    assert games == {"alice": 1, "bob": 1}
    assert a.get("/api/leaderboard")["players"] == []  # one game each: provisional, not ranked (issue 33)
