"""Issue 24's defects on the server side, over HTTP and WebSocket, on SQLite and PostgreSQL (the
browser side is tests/web/site/test_defects_ui.py): overlong usernames refused, never cut; a logged-in
player's games listed from any browser; an account holder plays under the account's name; the
answer to an offer in the state."""

from __future__ import annotations

from typing import Any

from jericho_game.web.accounts.accounts import CSRF_HEADER
from tests.web.accounts.test_accounts import PW_A, PW_B, app, client, clock, create, csrf, login, signup
from tests.web.test_server import WS, another

__all__ = ["app", "client", "clock"]  # the fixtures, imported for pytest


def test_a_30_character_username_is_refused_with_the_reason_never_cut(client: Any) -> None:
    name = "a_thirty_character_username_xy"
    r = client.post(
        "/api/account/signup", json={"username": name, "password": PW_A}, headers={CSRF_HEADER: csrf(client)}
    )
    assert r.status_code == 400 and r.json()["error"] == "bad_username"
    assert "at most 24 characters: this one has 30" in r.json()["message"]
    for probe in (name, name[:24]):  # nothing was created, cut or not
        assert client.get(f"/api/players/{probe}").status_code == 404
        assert login(client, probe, PW_A).status_code in (400, 401)


def test_my_games_lists_the_accounts_games_from_a_browser_without_tokens(app: Any, client: Any) -> None:
    signup(client, "alice", PW_A)
    hotseat = create(client, mode="hotseat")
    online = create(client, mode="online", side="north")
    with another(client, "10.0.0.2") as fresh:
        assert fresh.post("/api/mygames", json={"games": {}}).json()["games"] == []  # anonymous: nothing
        assert login(fresh, "alice", PW_A).status_code == 200
        rows = {g["id"]: g for g in fresh.post("/api/mygames", json={"games": {}}).json()["games"]}
        assert set(rows) == {hotseat["id"], online["id"]}
        assert rows[hotseat["id"]]["side"] == "both" and rows[online["id"]]["side"] == "north"
        text = fresh.post("/api/mygames/record", json={"games": {}}).text
        assert f'[GameId "{hotseat["id"]}"]' in text and f'[GameId "{online["id"]}"]' in text
    with another(client, "10.0.0.3") as bob:  # another account sees none of them
        signup(bob, "bob", PW_B)
        assert bob.post("/api/mygames", json={"games": {}}).json()["games"] == []


def test_an_account_holder_plays_under_the_accounts_name(app: Any, client: Any) -> None:
    signup(client, "alice", PW_A)
    g = create(client, mode="online", public=True, name="Alice")  # a display name sent as well
    with another(client, "10.0.0.2") as bob:
        signup(bob, "bob", PW_B)
        r = bob.post(f"/api/games/{g['id']}/join", json={"name": "Bobby"}, headers={CSRF_HEADER: csrf(bob)})
        assert r.status_code == 200, r.text
    state = client.get(f"/api/games/{g['id']}").json()
    assert state["names"] == {"south": "alice", "north": "bob"}
    record = client.get(f"/api/games/{g['id']}/record").text
    assert '[South "alice"]' in record and '[North "bob"]' in record


def test_the_answer_to_an_offer_is_in_the_state(app: Any, client: Any) -> None:
    g = create(client, mode="online", side="south")
    with another(client, "10.0.0.2") as bob:
        j = bob.post(f"/api/games/{g['id']}/join", json={"invite": g["invite"]}, headers={CSRF_HEADER: csrf(bob)})
        assert j.status_code == 200, j.text
        with client.websocket_connect(f"/ws/{g['id']}") as a_ws, bob.websocket_connect(f"/ws/{g['id']}") as b_ws:
            a, b = WS(a_ws), WS(b_ws)
            a.send(type="hello", token=g["token"])
            a.until("welcome")
            b.send(type="hello", token=j.json()["token"])
            b.until("welcome")
            for ws, move in ((a, "1R@a1"), (b, "1R@b3"), (a, "2R@a2")):
                ws.send(type="move", move=move)
                ws.until("ack")
            a.send(type="offer", what="draw")
            b.until("state", lambda m: m["game"]["offer"] is not None)
            b.send(type="decline", what="draw")
            st = a.until("state", lambda m: m["game"]["answer"] is not None)["game"]
            assert st["offer"] is None
            assert st["answer"] == {"what": "draw", "ply": 3, "to": "south", "by": "north", "accepted": False}
            a.send(type="offer", what="takeback")
            b.until("state", lambda m: m["game"]["offer"] is not None)
            b.send(type="accept", what="takeback")
            st = a.until("state", lambda m: (m["game"]["answer"] or {}).get("what") == "takeback")["game"]
            assert st["offer"] is None
            assert st["ply"] == 2
            assert st["answer"] == {"what": "takeback", "ply": 3, "to": "south", "by": "north", "accepted": True}
