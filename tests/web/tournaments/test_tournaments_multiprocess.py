"""Tournaments on several real ``jericho serve`` processes sharing one PostgreSQL, one of them killed
with ``kill -9`` mid-tournament: every process pairs (each one looks every second), yet no player
is ever in two games at once, every finished game is counted exactly once, and the tournament
goes on and ends on the surviving processes."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
from sqlalchemy import text

from jericho_game.web.storage.database import Storage
from tests.web.test_multiprocess import Server, pg, servers  # noqa: F401 - fixtures

PW = "correct horse battery staple"
NAMES = ["ada", "bob", "cyd", "dee", "eve", "fay", "gus"]


class Player:
    """A logged-in browser that may talk to any of the servers (sessions are in the database), from
    a loopback address of its own (a tournament takes at most ``tournament.join``'s ``per_pair``
    players from one address group)."""

    def __init__(self, name: str, server: Server) -> None:
        self.name = name
        address = f"127.0.0.{NAMES.index(name) + 2}"
        self.http = httpx.Client(timeout=10, transport=httpx.HTTPTransport(local_address=address))
        self.server = server
        r = self.post("/api/account/signup", {"username": name, "password": PW})
        assert r.status_code == 201, r.text

    def csrf(self) -> str:
        token: str = self.http.get(self.server.url + "/api/account").json()["csrf"]
        return token

    def post(self, path: str, body: dict[str, Any] | None = None) -> httpx.Response:
        return self.http.post(self.server.url + path, json=body or {}, headers={"X-CSRF-Token": self.csrf()})

    def get(self, path: str) -> dict[str, Any]:
        data: dict[str, Any] = self.http.get(self.server.url + path).json()
        return data


def _check(pg_url: str, tid: str) -> dict[str, Any]:
    """The invariants, read from the database; some counts for the test."""
    s = Storage(pg_url)
    try:
        with s.engine.connect() as conn:
            pairings = conn.execute(
                text("SELECT * FROM tournament_pairings WHERE tournament = :t ORDER BY id"), {"t": tid}
            ).all()
            players = conn.execute(text("SELECT * FROM tournament_players WHERE tournament = :t"), {"t": tid}).all()
            slots = conn.execute(text("SELECT count(*) FROM tournament_slots WHERE slot = 'busy'")).scalar_one()
            status = conn.execute(text("SELECT status FROM tournaments WHERE id = :t"), {"t": tid}).scalar_one()
        done = [p for p in pairings if p.status == "done"]
        assert all(p.status == "done" for p in pairings), [p.status for p in pairings]
        assert slots == 0 and status == "finished"
        # one game at a time per player: each of their games starts after the previous one ended
        for pl in players:
            mine = [p for p in done if pl.account in (p.south, p.north)]
            for prev, nxt in zip(mine, mine[1:], strict=False):
                assert nxt.created_at >= prev.done_at, (pl.account, prev.id, nxt.id)
            points = sum(p.south_points if p.south == pl.account else p.north_points for p in mine)
            assert pl.score == points and pl.games == len(mine), pl
        # every counted game ended with the result counted, and no game was counted twice
        games = [p.game_id for p in done]
        assert len(games) == len(set(games))
        for p in done:
            rec = s.load(p.game_id)
            assert rec is not None and rec.result == p.result, (p.id, rec and rec.result, p.result)
        return {"done": done}
    finally:
        s.close()


def _sql(pg_url: str, query: str, **params: Any) -> Any:
    """Run one statement in its own transaction; its single value when it returns rows."""
    s = Storage(pg_url)
    try:
        with s.engine.begin() as conn:
            result = conn.execute(text(query), params)
            return result.scalar_one() if result.returns_rows else None
    finally:
        s.close()


def _paired_after(pg_url: str, tid: str, since: float) -> bool:
    """Whether a game of the tournament was paired after ``since`` (a time.time())."""
    q = "SELECT count(*) FROM tournament_pairings WHERE tournament = :t AND created_at > :s"
    return bool(_sql(pg_url, q, t=tid, s=since))


def _end_in(pg_url: str, tid: str, seconds: float) -> None:
    """Move an arena's start back so that it ends ``seconds`` from now."""
    q = "UPDATE tournaments SET starts_at = :now + :s - 60 * minutes WHERE id = :t"
    _sql(pg_url, q, t=tid, now=time.time(), s=seconds)


def test_an_arena_on_three_processes_survives_a_kill_9(pg: str, servers: Callable[..., Server]) -> None:  # noqa: F811
    procs = [servers(pg, "--min-clock", "0.01") for _ in range(3)]
    players = [Player(n, procs[i % 3]) for i, n in enumerate(NAMES[:6])]
    # an arena of one minute with 3-second games: nobody moves, South's clock runs out
    t = players[0].post("/api/tournaments", {"name": "Flash", "clock": 0.05, "minutes": 1, "rated": True})
    assert t.status_code == 201, t.text
    tid = t.json()["id"]
    for p in players:
        assert p.post(f"/api/tournaments/{tid}/join").status_code == 200
    alive = list(procs)
    stop = threading.Event()

    def keep_joining() -> None:  # nobody moves, so each South is paused (issue 52): they join again
        k = 0
        while not stop.is_set():
            for p in players:
                p.server = alive[k % len(alive)]
                k += 1
                try:
                    if p.get(f"/api/tournaments/{tid}")["me"]["withdrawn"]:
                        p.post(f"/api/tournaments/{tid}/join")
                except httpx.HTTPError:
                    pass
            stop.wait(0.5)

    poller = threading.Thread(target=keep_joining, daemon=True)
    poller.start()
    try:
        time.sleep(0)
        deadline = time.monotonic() + 30
        while len(players[0].get(f"/api/tournaments/{tid}")["games"]) < 6:  # a few games under way
            assert time.monotonic() < deadline, "no pairing happened"
            time.sleep(0.2)
        victim = procs[0]
        alive.remove(victim)
        for p in players:
            p.server = alive[0]
        victim.stop(signal.SIGKILL)
        killed_at = time.time()
        # once a game has been paired after the kill, the minute's arena is cut short (its start moved
        # back in the database, as if time had passed): the rest of the minute would test nothing more
        deadline = time.monotonic() + 60
        while not _paired_after(pg, tid, killed_at):
            assert time.monotonic() < deadline, "no game was paired after the kill"
            time.sleep(0.2)
        _end_in(pg, tid, 2.0)
        deadline = time.monotonic() + 120
        while players[0].get(f"/api/tournaments/{tid}")["status"] != "finished":
            assert time.monotonic() < deadline, "the tournament never finished"
            time.sleep(0.5)
        found = _check(pg, tid)
        after = [p for p in found["done"] if p.created_at > killed_at]
        assert after, "no game was paired after the kill"
        page = players[0].get(f"/api/tournaments/{tid}")
        assert sum(s["games"] for s in page["standings"]) == 2 * len(found["done"])
    finally:
        stop.set()
        poller.join(10)
        for p in players:
            p.http.close()


def test_a_swiss_tournament_on_two_processes_survives_a_kill_9_mid_round(
    pg: str,  # noqa: F811
    servers: Callable[..., Server],  # noqa: F811
) -> None:
    procs = [servers(pg, "--min-clock", "0.01") for _ in range(2)]
    players = [Player(n, procs[i % 2]) for i, n in enumerate(NAMES[:5])]
    try:
        t = players[0].post(
            "/api/tournaments", {"name": "Swiss flash", "kind": "swiss", "rounds": 3, "clock": 0.05, "starts_in": 0.2}
        )
        assert t.status_code == 201, t.text
        tid = t.json()["id"]
        for p in players:
            assert p.post(f"/api/tournaments/{tid}/join").status_code == 200
        deadline = time.monotonic() + 60
        while players[0].get(f"/api/tournaments/{tid}")["round"] < 2:
            assert time.monotonic() < deadline, "round 2 never came"
            time.sleep(0.2)
        procs[0].stop(signal.SIGKILL)  # round 2's games are being played
        for p in players:
            p.server = procs[1]
        deadline = time.monotonic() + 90
        while (page := players[0].get(f"/api/tournaments/{tid}"))["status"] != "finished":
            assert time.monotonic() < deadline, "the tournament never finished"
            time.sleep(0.5)
        assert page["round"] == 3
        s = Storage(pg)
        try:
            with s.engine.connect() as conn:
                rows = conn.execute(
                    text("SELECT * FROM tournament_pairings WHERE tournament = :t AND status != 'void'"), {"t": tid}
                ).all()
        finally:
            s.close()
        assert all(r.status == "done" for r in rows)
        # nobody moves: each game's South never comes and is paused (issue 52, as lichess marks a
        # Swiss player absent), so each round seats those of the round before but its Souths, each
        # once (a game or the bye)
        expected = 5
        for rnd in (1, 2, 3):
            seated = [a for r in rows if r.round == rnd for a in (r.south, r.north) if a is not None]
            assert sorted(seated) == sorted(set(seated)) and len(seated) == expected, (rnd, seated)
            expected -= sum(1 for r in rows if r.round == rnd and r.north is not None)
        met = [tuple(sorted((r.south, r.north))) for r in rows if r.north is not None]
        assert len(met) == len(set(met)) == 4  # no repeat: 2 games, then 1, then 1
        # every game is aborted for no first move and gives no points, so the points are the byes'
        assert sum(x["score"] for x in page["standings"]) == sum(1 for r in rows if r.north is None)
    finally:
        for p in players:
            p.http.close()
