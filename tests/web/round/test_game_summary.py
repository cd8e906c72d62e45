"""Issue 21, outside the review: a rated game's end screen data (both players' rating change, from
``GET /api/games/{id}/ratings``) and one numbering of moves on /games and the profile (numbered moves,
a South ply and the North ply after it, not plies).  SQLite and PostgreSQL (the ``db`` fixture)."""

from __future__ import annotations

import time
from typing import Any

from jericho_game.web.accounts.glicko2 import Rating, update
from tests.web.accounts.test_accounts import (  # the accounts tests' server, browsers and helpers
    PW_A,
    PW_B,
    app,  # noqa: F401 - a fixture
    client,  # noqa: F401 - a fixture
    clock,  # noqa: F401 - a fixture
    create,
    join,
    other,
    signup,
)
from tests.web.test_server import WS


def _opening(plies: int) -> list[str]:
    """The first legal move each time, ``plies`` times (a rated game counts after 5 placements each)."""
    from jericho_game.game import Game

    game = Game()
    return [str(game.play(game.legal_moves()[0])) for _ in range(plies)]


RATED_OPENING = _opening(2 * 5)  # 10 plies: numbered moves 1. to 5.


def _play_and_resign(c: Any, g: dict[str, Any], bob: Any, bob_token: str, moves: list[str]) -> None:
    with c.websocket_connect(f"/ws/{g['id']}") as raw_a, bob.websocket_connect(f"/ws/{g['id']}") as raw_b:
        a, b = WS(raw_a), WS(raw_b)
        for ws, token in ((a, g["token"]), (b, bob_token)):
            ws.until("state")
            ws.send(type="hello", token=token)
            ws.until("welcome")
        for i, mv in enumerate(moves):
            ws = a if i % 2 == 0 else b
            ws.send(type="move", move=mv, ply=i)
            ws.until("ack")
        a.send(type="resign")
        a.until("state", lambda m: m["game"]["status"] == "over")


def _ratings(c: Any, game_id: str) -> dict[str, Any]:
    for _ in range(200):
        data: dict[str, Any] = c.get(f"/api/games/{game_id}/ratings").json()
        if data["status"] != "pending":
            return data
        time.sleep(0.05)
    raise AssertionError("the rating update was never applied")


def test_a_rated_games_end_shows_both_players_rating_change(client: Any, app: Any) -> None:  # noqa: F811
    signup(client, "alice", PW_A)
    bob = other(app)
    signup(bob, "bob", PW_B)
    g = create(client, mode="online", side="south", rated=True)
    joined = join(bob, g)
    assert joined.status_code == 200
    _play_and_resign(client, g, bob, joined.json()["token"], RATED_OPENING)
    data = _ratings(bob, g["id"])  # anyone may read it, the opponent too
    lost = update(Rating(), [(Rating(), 0.0)])
    won = update(Rating(), [(Rating(), 1.0)])
    assert data["status"] == "done"
    assert data["players"] == [
        {
            "side": "south",
            "username": "alice",
            "before": 1500,
            "after": round(lost.rating),
            "change": round(lost.rating) - 1500,
        },
        {
            "side": "north",
            "username": "bob",
            "before": 1500,
            "after": round(won.rating),
            "change": round(won.rating) - 1500,
        },
    ]
    assert data["players"][0]["change"] < 0 < data["players"][1]["change"]
    # the profile's recent games count numbered moves (10 plies: moves 1. to 5.)
    assert client.get("/api/players/alice").json()["games"][0]["moves"] == 5
    # an unrated game says so; an unknown game is a 404 with a code
    u = create(client, mode="hotseat")
    assert client.get(f"/api/games/{u['id']}/ratings").json() == {"game": u["id"], "status": "unrated", "players": []}
    r = client.get("/api/games/nosuchgame/ratings")
    assert r.status_code == 404 and r.json()["error"] == "unknown_game"
    # a rated game still being played has no change yet, and is not "pending" forever
    g2 = create(client, mode="online", side="south", rated=True)
    assert join(bob, g2).status_code == 200
    assert client.get(f"/api/games/{g2['id']}/ratings").json()["status"] == "none"


def test_my_games_counts_numbered_moves_not_plies(db: str) -> None:
    from starlette.testclient import TestClient

    from jericho_game.web.server import Limits, create_app
    from tests.web.test_server import connect, seat

    counts = {}
    with TestClient(create_app(db, ai_processes=0, limits=Limits(rate=1000.0, burst=1000))) as c:
        for plies in (0, 1, 2, 3, 47):
            g = create(c, mode="hotseat")
            with connect(c, g["id"]) as raw:
                ws = seat(raw, g["token"], "both")
                for i, mv in enumerate(_moves(plies)):
                    ws.send(type="move", move=mv, ply=i)
                    ws.until("ack")
            counts[g["id"]] = g["token"]
        rows = c.post("/api/mygames", json={"games": counts}).json()["games"]
    assert sorted((r["plies"], r["moves"]) for r in rows) == [(0, 0), (1, 1), (2, 1), (3, 2), (47, 24)]


def _moves(plies: int) -> list[str]:
    """``plies`` legal moves of a seeded random game that is not over by then."""
    import random

    from jericho_game import Game

    for seed in range(100):
        rng, game = random.Random(seed), Game()
        while len(game.history) < plies and not game.is_over():
            game.play(rng.choice(game.legal_moves()))
        if len(game.history) == plies and not game.is_over():
            return [str(m) for m in game.history]
    raise AssertionError(f"no random game lasts {plies} plies")
