"""Correspondence games and the "your turn" list (issue 23, point 1), on SQLite and PostgreSQL:
every game waiting for the player's move, from the seats the browser holds and the account's
games, most urgent first."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import pytest
from argon2 import PasswordHasher

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from starlette.testclient import TestClient

from jericho_game.web.accounts import CSRF_HEADER  # noqa: E402
from jericho_game.web.server import create_app  # noqa: E402
from tests.web.test_multiprocess import legal  # noqa: E402
from tests.web.test_server import WS  # noqa: E402

CHEAP = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
PW = "correct horse battery staple"


@pytest.fixture()
def app(db: str) -> Any:
    return create_app(db, ai_processes=0, password_hasher=CHEAP)


@pytest.fixture()
def client(app: Any) -> Iterator[TestClient]:
    with TestClient(app) as c:
        yield c


def _csrf(c: TestClient) -> str:
    token: str = c.get("/api/account").json()["csrf"]
    return token


def _post(c: TestClient, path: str, body: dict[str, Any]) -> Any:
    return c.post(path, json=body, headers={CSRF_HEADER: _csrf(c)})


def _signup(c: TestClient, name: str) -> None:
    assert _post(c, "/api/account/signup", {"username": name, "password": PW}).status_code == 201


def _online(c: TestClient, other: TestClient, **spec: Any) -> tuple[str, str, str]:
    """An online game created by ``c`` (South) and joined by ``other``: (id, south token, north token)."""
    g = _post(c, "/api/games", {"mode": "online", "side": "south", **spec})
    assert g.status_code == 201, g.text
    data = g.json()
    j = _post(other, f"/api/games/{data['id']}/join", {"invite": data["invite"]})
    assert j.status_code == 200, j.text
    return data["id"], data["token"], j.json()["token"]


def _move(c: TestClient, game: str, token: str) -> None:
    with c.websocket_connect(f"/ws/{game}") as raw:
        ws = WS(raw)
        ws.send(type="hello", token=token)
        st = ws.until("state")["game"]
        ws.send(type="move", move=legal(st), ply=st["ply"])
        ws.until("ack")


def _turns(c: TestClient, held: dict[str, str]) -> list[dict[str, Any]]:
    r = c.post("/api/yourturn", json={"games": held})
    assert r.status_code == 200, r.text
    rows: list[dict[str, Any]] = r.json()["games"]
    return rows


def test_your_turn_lists_the_games_waiting_for_the_player_most_urgent_first(app: Any, client: TestClient) -> None:
    with TestClient(app) as other:
        slow, s_south, s_north = _online(client, other, clock=10)
        fast, f_south, f_north = _online(client, other, clock=5)
        untimed, u_south, u_north = _online(client, other)
        waiting = _post(client, "/api/games", {"mode": "online"}).json()  # nobody joined: not a turn
        held = {slow: s_south, fast: f_south, untimed: u_south, waiting["id"]: waiting["token"]}
        rows = _turns(client, held)
        # South to move everywhere: the 5-minute game's deadline first, the untimed game last
        assert [r["id"] for r in rows] == [fast, slow, untimed]
        assert rows[0]["deadline"] < rows[1]["deadline"] and rows[2]["deadline"] is None
        assert rows[0]["side"] == "south" and rows[0]["clock"] == 5.0 and rows[0]["per_move_days"] is None
        # North holds none of them: not its turn
        assert _turns(other, {slow: s_north, fast: f_north, untimed: u_north}) == []
        _move(client, fast, f_south)
        assert [r["id"] for r in _turns(client, held)] == [slow, untimed]
        assert [r["id"] for r in _turns(other, {fast: f_north})] == [fast]
        # a wrong token shows nothing; bad input is refused with a clear message
        assert _turns(other, {fast: "x" * 40}) == []
        r = client.post("/api/yourturn", json={"games": ["nope"]})
        assert r.status_code == 400 and "GAME_ID" in r.json()["message"]


def test_your_turn_of_an_account_needs_no_token(app: Any, client: TestClient) -> None:
    with TestClient(app) as bob:
        _signup(client, "ada")
        _signup(bob, "bob")
        game, south, north = _online(client, bob)
        assert [r["id"] for r in _turns(client, {})] == [game]  # the account's seat, no token sent
        assert _turns(bob, {}) == []
        _move(client, game, south)
        rows = _turns(bob, {})
        assert [r["id"] for r in rows] == [game] and rows[0]["opponent"] == "ada" and rows[0]["side"] == "north"
        assert _turns(client, {}) == []
        # a browser holding a seat bound to another account does not get it listed
        with TestClient(app) as stranger:
            assert _turns(stranger, {game: north}) == []
