"""Issue 12 across real server processes on one PostgreSQL: the lobby, names, a draw offer and a
claim made through one process are seen and decided through the other (the database is the
truth: presence too is read from it, not from a process's memory)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import httpx

from tests.helpers import open_ws
from tests.web import test_multiprocess
from tests.web.test_multiprocess import Client, Server, legal, stored

# the same fixtures: a fresh PostgreSQL database, and real `jericho serve` processes
pg = test_multiprocess.pg
servers = test_multiprocess.servers


class LobbyClient:
    """A lobby WebSocket that keeps the last list."""

    def __init__(self, server: Server) -> None:
        self.ws = open_ws(f"ws://127.0.0.1:{server.port}/lobby/ws")
        self.last: dict[str, Any] = {}

    def wait(self, pred: Callable[[dict[str, Any]], bool], timeout: float = 10.0) -> dict[str, Any]:
        end = time.monotonic() + timeout
        while not (self.last and pred(self.last)):
            left = end - time.monotonic()
            assert left > 0, f"timed out; last lobby {self.last}"
            try:
                msg = json.loads(self.ws.recv(timeout=left))
            except TimeoutError:
                continue
            if msg["type"] == "lobby":
                self.last = msg
        return self.last


def test_lobby_names_and_a_draw_offer_cross_processes(pg: str, servers: Callable[..., Server]) -> None:
    s1, s2 = servers(pg), servers(pg)
    lobby2 = LobbyClient(s2)
    lobby2.wait(lambda m: m["seeks"] == [])
    g = s1.post("/api/games", {"mode": "online", "public": True, "name": "Ada <b>", "side": "south"}).json()
    seen = lobby2.wait(lambda m: bool(m["seeks"]))  # created on 1, listed live on 2
    assert seen["seeks"][0]["id"] == g["id"] and seen["seeks"][0]["name"] == "Ada <b>"
    lobby1 = LobbyClient(s1)
    lobby1.wait(lambda m: bool(m["seeks"]))
    j = s2.post(f"/api/games/{g['id']}/join", {"name": "Brice"})  # joined on 2 from its lobby
    assert j.status_code == 200, j.text
    late = s1.post(f"/api/games/{g['id']}/join", {"name": "Chloé"})
    assert late.status_code == 409 and late.json()["error"] == "seat_taken"
    lobby1.wait(lambda m: not m["seeks"] and [p["id"] for p in m["playing"]] == [g["id"]])
    a = Client(s1.ws(g["id"]), g["token"])
    b = Client(s2.ws(g["id"]), j.json()["token"])
    a.wait(lambda st: st["names"] == {"south": "Ada <b>", "north": "Brice"} and st["seats"]["north"]["present"])
    b.wait(lambda st: st["seats"]["south"]["present"])  # presence written by process 1, read on 2
    a.send(type="move", move=legal(a.state), ply=0)
    b.wait(lambda st: st["ply"] == 1)
    a.send(type="offer", what="draw")  # offered on 1 ...
    st = b.wait(lambda st: st["offer"] is not None)  # ... seen on 2
    assert st["offer"]["by"] == "south"
    b.send(type="accept", what="draw")  # accepted on 2
    st = a.wait(lambda st: st["status"] == "over")
    assert st["result"] == "draw" and st["reason"] == "agreed"
    rec = stored(pg, g["id"])
    assert rec.result == "draw" and rec.reason == "agreed" and rec.meta["names"]["south"] == "Ada <b>"
    lobby2.wait(lambda m: m["playing"] == [])
    record = httpx.get(f"{s2.url}/api/games/{g['id']}/record", timeout=10).text
    assert '[South "Ada <b>"]' in record and '[Termination "draw agreed"]' in record


def test_a_claim_reads_presence_written_by_the_other_process(pg: str, servers: Callable[..., Server]) -> None:
    s1, s2 = servers(pg, "--claim-after", "2"), servers(pg, "--claim-after", "2")
    g = s1.post("/api/games", {"mode": "online", "public": True, "name": "Ada"}).json()
    j = s2.post(f"/api/games/{g['id']}/join", {"name": "Brice"}).json()
    a = Client(s1.ws(g["id"]), g["token"])
    b = Client(s2.ws(g["id"]), j["token"])
    a.wait(lambda st: st["seats"]["north"]["present"])
    a.send(type="claim", what="win")
    assert a.answer()["code"] == "opponent_here"  # North is connected to the other process
    b.ws.close()  # North leaves (its process writes conns 0 and the time)
    st = a.wait(lambda st: not st["seats"]["north"]["present"])
    assert st["claim_after"] == 2
    a.send(type="claim", what="win")
    assert a.answer()["code"] == "too_early"
    time.sleep(2.2)
    a.send(type="claim", what="draw")
    st = a.wait(lambda st: st["status"] == "over")
    assert st["result"] == "draw" and st["reason"] == "claim"
    rec = stored(pg, g["id"])
    assert rec.reason == "claim" and rec.meta["claimed_by"] == "south"


def _answer(c: Client, kind: str) -> str:
    """Send ``kind`` for the draw offer; ``ok`` or the error code that answers it."""
    c.send(type=kind, what="draw")
    c.send(type="ping", ref=kind)
    while True:
        msg = c.pump(10)
        assert msg is not None, "no answer"
        if msg["type"] == "error":
            return str(msg["code"])
        if msg["type"] == "pong":
            return "ok"


def test_accept_against_withdraw_on_two_processes_exactly_one_wins(pg: str, servers: Callable[..., Server]) -> None:
    from tests.web.test_multiprocess import _together

    s1, s2 = servers(pg), servers(pg)
    for _ in range(3):
        g = s1.post("/api/games", {"mode": "online", "public": True, "name": "Ada"}).json()
        j = s2.post(f"/api/games/{g['id']}/join", {"name": "Brice"}).json()
        a = Client(s1.ws(g["id"]), g["token"])
        b = Client(s2.ws(g["id"]), j["token"])
        b.send(type="offer", what="draw")
        a.wait(lambda st: st["offer"] is not None)
        b.wait(lambda st: st["offer"] is not None)

        answers = _together([lambda: _answer(a, "accept"), lambda: _answer(b, "decline")])  # noqa: B023
        rec = stored(pg, g["id"])
        if rec.result == "draw":  # the accept won: the withdrawal came too late
            assert answers[0] == "ok" and answers[1] in ("no_offer", "game_over", "moved_on"), answers
        else:  # the withdrawal won: the accept found no offer
            assert answers[1] == "ok" and answers[0] in ("no_offer", "moved_on"), answers
            assert rec.result is None and "offer" not in rec.meta
        a.ws.close()
        b.ws.close()
