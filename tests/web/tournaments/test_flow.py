"""Tournaments as lichess runs them (issue 52, point 1), on SQLite and PostgreSQL: a player in a
tournament is paired whether or not any of their pages is open, a player whose first move does not
come is paused (not paired again and again), a tournament game names its tournament (the game
page's link back and its end screen), and each pairing is pushed to every open page of its players
(``/ws/tournaments``), which go to the game by themselves."""

from __future__ import annotations

import json
import queue
import threading
from typing import Any

from sqlalchemy import text

from jericho_game.web.round import timecontrol
from jericho_game.web.server import create_app
from jericho_game.web.tournaments.tournaments import TournamentPolicy, TournamentService
from tests.web.tournaments.test_tournaments import (
    CHEAP,
    MANUAL,
    _app,
    _Clock,
    _field,
    _move,
    _playing,
    _post,
    _signup,
)


def _received(ws: Any, wait: float = 20.0) -> dict[str, Any]:
    """The next message of a test WebSocket, or a failure after ``wait`` seconds (not a hang)."""
    got: queue.Queue[Any] = queue.Queue()

    def read() -> None:
        try:
            got.put(ws.receive_text())
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            got.put(exc)

    threading.Thread(target=read, daemon=True).start()
    try:
        item = got.get(timeout=wait)
    except queue.Empty:
        raise AssertionError(f"no message in {wait} s") from None
    if isinstance(item, BaseException):
        raise item
    out: dict[str, Any] = json.loads(item)
    return out


def test_a_player_is_paired_while_in_the_tournament_with_no_page_open(db: str) -> None:
    """lichess's arena: a player is in until they pause; the tournament page need not be open."""
    app = _app(db)
    with _field(app, 2) as (ada, bob):
        _signup(ada, "ada")
        _signup(bob, "bob")
        t = _post(ada, "/api/tournaments", {"name": "Night arena", "clock": 3, "minutes": 30}).json()
        for c in (ada, bob):
            _post(c, f"/api/tournaments/{t['id']}/join")
        svc: TournamentService = app.state.tournaments
        with svc.storage.engine.begin() as conn:  # both closed every page an hour ago
            conn.execute(
                text("UPDATE tournament_players SET seen_at = :old WHERE tournament = :t"),
                {"old": svc.now() - 3600, "t": t["id"]},
            )
        svc.tick()
        assert len(_playing(app, t["id"])) == 1


def test_a_player_whose_first_move_does_not_come_is_paused(db: str) -> None:
    """The game is aborted (timecontrol.FIRST_MOVE) and the absent player paused, as lichess pauses a
    player who does not start their game: not paired again until they join again."""
    clock = _Clock()
    app = create_app(db, ai_processes=0, password_hasher=CHEAP, tournament_policy=MANUAL, clock=clock)
    with _field(app, 3) as clients:
        for c, n in zip(clients, ("ada", "bob", "cyd"), strict=True):
            _signup(c, n)
        by_id = {app.state.accounts.find(n).id: c for c, n in zip(clients, ("ada", "bob", "cyd"), strict=True)}
        t = _post(clients[0], "/api/tournaments", {"name": "Bullet", "clock": 1, "minutes": 30}).json()
        for c in clients:
            _post(c, f"/api/tournaments/{t['id']}/join")
        svc: TournamentService = app.state.tournaments
        svc.tick()
        (p,) = _playing(app, t["id"])  # the third player waits
        absent, there = by_id[p.south], by_id[p.north]
        clock.t += timecontrol.FIRST_MOVE + 1  # South never comes
        app.state.service.flag(p.game_id)
        svc.tick()
        assert absent.get(f"/api/tournaments/{t['id']}").json()["me"]["withdrawn"] is True
        assert there.get(f"/api/tournaments/{t['id']}").json()["me"]["withdrawn"] is False
        (q,) = _playing(app, t["id"])  # the two others, the absent one is not paired again
        assert p.south not in (q.south, q.north)
        # the one who moved is not paused when the other's first move does not come
        _move(clients[0], app, q.game_id, "south")
        clock.t += timecontrol.FIRST_MOVE + 1
        app.state.service.flag(q.game_id)
        svc.tick()
        assert by_id[q.south].get(f"/api/tournaments/{t['id']}").json()["me"]["withdrawn"] is False
        assert by_id[q.north].get(f"/api/tournaments/{t['id']}").json()["me"]["withdrawn"] is True
        # a paused player comes back by joining again
        assert _post(absent, f"/api/tournaments/{t['id']}/join").json()["me"]["withdrawn"] is False


def test_a_tournament_game_names_its_tournament(db: str) -> None:
    """The game's state says which tournament it belongs to: the game page links back to it, and its
    end screen offers "Back to the tournament"."""
    app = _app(db)
    with _field(app, 2) as (ada, bob):
        _signup(ada, "ada")
        _signup(bob, "bob")
        t = _post(ada, "/api/tournaments", {"name": "Friday arena", "clock": 3, "minutes": 30}).json()
        for c in (ada, bob):
            _post(c, f"/api/tournaments/{t['id']}/join")
        app.state.tournaments.tick()
        (p,) = _playing(app, t["id"])
        st = ada.get(f"/api/games/{p.game_id}").json()
        assert st["tournament"] == {"id": t["id"], "name": "Friday arena", "berserk": False, "kind": "arena"}
        rec = app.state.service.storage.load(p.game_id)
        assert rec.joined and rec.north_account == p.north  # still a joined game of the two accounts
        # an ordinary game names none
        g = _post(ada, "/api/games", {"mode": "online", "clock": 3}).json()
        assert ada.get(f"/api/games/{g['id']}").json()["tournament"] is None


def test_the_next_pairing_is_pushed_to_every_open_page_of_its_players(db: str) -> None:
    app = _app(db)
    with _field(app, 3) as (ada, bob, cyd):
        for c, n in ((ada, "ada"), (bob, "bob"), (cyd, "cyd")):
            _signup(c, n)
        t = _post(ada, "/api/tournaments", {"name": "Push arena", "clock": 3, "minutes": 30}).json()
        for c in (ada, bob):
            _post(c, f"/api/tournaments/{t['id']}/join")
        # a player in no tournament is told so, and the socket closes (nothing to push)
        with cyd.websocket_connect("/ws/tournaments") as idle:
            assert _received(idle)["type"] == "idle"
        # an anonymous visitor is refused
        with ada.websocket_connect("/ws/tournaments") as one, ada.websocket_connect("/ws/tournaments") as two:
            with bob.websocket_connect("/ws/tournaments") as bobs:
                for ws in (one, two, bobs):
                    assert _received(ws)["type"] == "ready"
                app.state.tournaments.tick()
                (p,) = _playing(app, t["id"])
                for ws in (one, two, bobs):  # every open page of both players, whatever page it is
                    msg = _received(ws)
                    assert msg == {
                        "type": "game",
                        "game": p.game_id,
                        "tournament": t["id"],
                        "name": "Push arena",
                    }
        # a page opened just after the pairing (the player was between two pages) is sent it at once
        with bob.websocket_connect("/ws/tournaments") as late:
            assert _received(late)["type"] == "ready"
            assert _received(late)["game"] == p.game_id


def test_the_push_sockets_are_refused_past_their_caps_and_to_anonymous_visitors(db: str) -> None:
    policy = TournamentPolicy(tick=3600.0, stale=1.0, push_per_account=2)
    app = create_app(db, ai_processes=0, password_hasher=CHEAP, tournament_policy=policy)
    with _field(app, 2) as (ada, anon):
        _signup(ada, "ada")
        t = _post(ada, "/api/tournaments", {"name": "Capped", "clock": 3, "minutes": 30}).json()
        _post(ada, f"/api/tournaments/{t['id']}/join")
        with anon.websocket_connect("/ws/tournaments") as ws:
            assert _received(ws)["code"] == "not_logged_in"
        with ada.websocket_connect("/ws/tournaments") as a, ada.websocket_connect("/ws/tournaments") as b:
            assert _received(a)["type"] == _received(b)["type"] == "ready"
            with ada.websocket_connect("/ws/tournaments") as c:
                assert _received(c)["code"] == "too_many_connections"
        with ada.websocket_connect("/ws/tournaments") as again:  # given back when closed
            assert _received(again)["type"] == "ready"
