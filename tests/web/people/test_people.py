"""People (issue 34, point 1), on SQLite and PostgreSQL: follows and followers, the online list,
challenges by name (sent, limited, accepted into a real game through the room service, declined,
cancelled), and blocks (no challenge, no chat, no invitation from the blocked player)."""

from __future__ import annotations

import time
import warnings
from dataclasses import replace
from typing import Any

from argon2 import PasswordHasher
from sqlalchemy import text

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from starlette.testclient import TestClient

from jericho_game.web.accounts.accounts import CSRF_HEADER, SESSION_COOKIE  # noqa: E402
from jericho_game.web.common.budget import BUDGETS, Budget  # noqa: E402
from jericho_game.web.people.people import PeoplePolicy  # noqa: E402
from jericho_game.web.server import create_app  # noqa: E402
from tests.web.social.test_notify import _app as notify_app  # noqa: E402
from tests.web.social.test_notify import _confirm, smtp  # noqa: E402, F401 - a fixture
from tests.web.test_server import visitors  # noqa: E402

CHEAP = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
PW = "correct horse battery staple"


def _app(
    db: str, policy: PeoplePolicy | None = None, clock: Any = None, budgets: dict[str, Budget] | None = None
) -> Any:
    kw: dict[str, Any] = {"clock": clock} if clock else {}
    table = dict(budgets or BUDGETS)
    table["signup"] = replace(table["signup"], per_group=None, total=None)  # every test account from one address
    return create_app(db, ai_processes=0, password_hasher=CHEAP, people_policy=policy, budgets=table, **kw)


def _csrf(c: TestClient) -> str:
    token: str = c.get("/api/account").json()["csrf"]
    return token


def _signup(c: TestClient, name: str) -> None:
    r = c.post("/api/account/signup", json={"username": name, "password": PW}, headers={CSRF_HEADER: _csrf(c)})
    assert r.status_code == 201, r.text


def _post(c: TestClient, path: str, body: dict[str, Any] | None = None) -> Any:
    return c.post(path, json=body or {}, headers={CSRF_HEADER: _csrf(c)})


def test_follow_and_see_followers_and_the_online_list(db: str) -> None:
    with visitors(_app(db), 3) as (ada, bob, eve):
        for c, n in ((ada, "ada"), (bob, "bob"), (eve, "eve")):
            _signup(c, n)
        r = _post(ada, "/api/people/follow", {"username": "bob", "follow": True})
        assert r.status_code == 200 and r.json()["me"]["following"] is True, r.text
        _post(eve, "/api/people/follow", {"username": "bob", "follow": True})
        bob_page = bob.get("/api/people/bob").json()
        assert bob_page["followers"] == ["ada", "eve"] and bob_page["followers_count"] == 2
        assert bob_page["me"] is None  # one's own page
        assert ada.get("/api/people/ada").json()["following"] == ["bob"]
        # bob sees that ada follows him
        assert bob.get("/api/people/ada").json()["me"]["followed_by"] is True
        # online: bob's page asked the server just now (his challenges), eve's never
        _post(ada, "/api/people/follow", {"username": "eve", "follow": True})
        bob.get("/api/challenges")
        online = ada.get("/api/challenges").json()["online"]
        assert online == [{"username": "bob"}]
        # unfollow
        _post(ada, "/api/people/follow", {"username": "bob", "follow": False})
        assert bob.get("/api/people/bob").json()["followers"] == ["eve"]


def test_online_is_read_from_the_database_and_fades(db: str) -> None:
    now = [1000.0]
    app = _app(db, PeoplePolicy(online_ttl=60.0), clock=lambda: now[0])
    with visitors(app, 2) as (ada, bob):
        _signup(ada, "ada")
        _signup(bob, "bob")
        _post(ada, "/api/people/follow", {"username": "bob", "follow": True})
        bob.get("/api/challenges")
        assert ada.get("/api/people/bob").json()["online"] is True
        now[0] += 61
        assert ada.get("/api/people/bob").json()["online"] is False
        assert ada.get("/api/challenges").json()["online"] == []


def test_bad_requests_are_refused_with_a_code_and_change_nothing(db: str) -> None:
    with visitors(_app(db), 2) as (ada, anon):
        _signup(ada, "ada")
        assert anon.get("/api/challenges").status_code == 401
        assert _post(anon, "/api/people/follow", {"username": "ada", "follow": True}).status_code == 401
        # no CSRF token: refused
        assert ada.post("/api/people/follow", json={"username": "x", "follow": True}).status_code == 403
        cases = [
            ("/api/people/follow", {"username": "ada", "follow": True}, 409, "not_yourself"),
            ("/api/people/follow", {"username": "nobody", "follow": True}, 404, "unknown_account"),
            ("/api/people/follow", {"username": ["x"], "follow": True}, 400, "bad_request"),
            ("/api/people/follow", {"username": "ada", "follow": "yes"}, 400, "bad_request"),
            ("/api/challenges", {"username": "nobody"}, 404, "unknown_account"),
            ("/api/challenges", {"username": "ada"}, 409, "not_yourself"),
        ]
        for path, body, status, code in cases:
            r = _post(ada, path, body)
            assert (r.status_code, r.json()["error"]) == (status, code), (path, body, r.text)
        r = ada.post("/api/challenges", content=b"{not json", headers={CSRF_HEADER: _csrf(ada)})
        assert r.status_code == 400 and r.json()["error"] == "bad_json"
        assert ada.get("/api/people/ada").json()["following"] == []
        assert ada.get("/api/challenges").json()["outgoing"] == []


def test_a_challenge_by_name_becomes_a_game_of_the_room_service(db: str) -> None:
    with visitors(_app(db), 3) as (ada, bob, eve):
        for c, n in ((ada, "ada"), (bob, "bob"), (eve, "eve")):
            _signup(c, n)
        for bad, why in [
            ({"username": "bob", "side": "up"}, "side"),
            ({"username": "bob", "clock": 999}, "clock"),
            ({"username": "bob", "per_move_days": 4}, "per_move_days"),
            ({"username": "bob", "rated": "yes"}, "rated"),
            ({"username": "bob", "colour": "red"}, "colour"),
        ]:
            r = _post(ada, "/api/challenges", bad)
            assert r.status_code == 400 and why in r.json()["message"], r.text
        r = _post(
            ada, "/api/challenges", {"username": "bob", "clock": 5, "increment": 3, "rated": True, "side": "north"}
        )
        assert r.status_code == 201, r.text
        ch = r.json()
        assert (ch["from"], ch["to"], ch["status"], ch["clock"], ch["increment"]) == ("ada", "bob", "pending", 5, 3)
        # one pending challenge per pair
        assert _post(ada, "/api/challenges", {"username": "bob"}).json()["error"] == "already_challenged"
        mine = bob.get("/api/challenges").json()
        assert [c["id"] for c in mine["incoming"]] == [ch["id"]] and mine["outgoing"] == []
        assert ada.get("/api/challenges").json()["outgoing"][0]["id"] == ch["id"]
        # only bob may accept; eve cannot even see it
        assert _post(ada, f"/api/challenges/{ch['id']}/accept").json()["error"] == "not_yours"
        assert _post(eve, f"/api/challenges/{ch['id']}/accept").status_code == 404
        r = _post(bob, f"/api/challenges/{ch['id']}/accept")
        assert r.status_code == 200, r.text
        game_id = r.json()["game"]
        assert r.json()["status"] == "accepted" and game_id
        # a real online game: ada north, bob south, rated, 5+3, both seats bound to the accounts
        state = bob.get(f"/api/games/{game_id}").json()
        rec = bob.app.state.service.storage.load(game_id)
        accounts = bob.app.state.accounts
        assert rec.mode == "online" and rec.joined and rec.rated
        assert rec.north_account == accounts.find("ada").id and rec.south_account == accounts.find("bob").id
        assert rec.clock == 300 and rec.increment == 3
        assert state["status"] == "playing"
        # accepting again answers the same game; declining now is refused
        assert _post(bob, f"/api/challenges/{ch['id']}/accept").json()["game"] == game_id
        assert _post(bob, f"/api/challenges/{ch['id']}/decline").json()["error"] == "not_pending"
        # the challenger's page hears of it (the in-page notice reads "recent")
        recent = ada.get("/api/challenges").json()["recent"]
        assert recent[0]["status"] == "accepted" and recent[0]["game"] == game_id
        # the challenger's session opens its seat: a move by ada is refused as not her turn, not as a spectator
        with ada.websocket_connect(f"/ws/{game_id}", headers=_cookie(ada)) as ws:
            _until(ws, "state")
            ws.send_json({"type": "hello"})
            welcome = _until(ws, "welcome")
            assert welcome["role"] == "north", welcome


def test_an_accepted_challenges_clocks_wait_for_the_first_moves(db: str) -> None:
    """Issue 52: accepting makes the game, and no clock runs before its side's first move; a first
    move that does not come within 30 s aborts it (no result)."""
    now = [1_900_000_000.0]
    app = _app(db, clock=lambda: now[0])
    with visitors(app, 2) as (ada, bob):
        _signup(ada, "ada")
        _signup(bob, "bob")
        ch = _post(ada, "/api/challenges", {"username": "bob", "clock": 1, "side": "south"}).json()
        game_id = _post(bob, f"/api/challenges/{ch['id']}/accept").json()["game"]
        now[0] += 8
        st = ada.get(f"/api/games/{game_id}").json()
        assert st["clock"]["south"] == 60 and st["clock"]["north"] == 60 and st["clock"]["running"] is None
        assert st["first_move"] == {"side": "south", "left": 22, "limit": 30}
        now[0] += 23
        app.state.service.flag(game_id)  # what every process's sweep does
        st = ada.get(f"/api/games/{game_id}").json()
        assert st["status"] == "over" and st["result"] is None and st["reason"] == "aborted"


def test_decline_cancel_and_a_correspondence_challenge(db: str) -> None:
    with visitors(_app(db), 2) as (ada, bob):
        _signup(ada, "ada")
        _signup(bob, "bob")
        ch = _post(ada, "/api/challenges", {"username": "bob", "per_move_days": 3, "side": "random"}).json()
        assert _post(bob, f"/api/challenges/{ch['id']}/decline", {"reason": "nonsense"}).status_code == 400
        r = _post(bob, f"/api/challenges/{ch['id']}/decline", {"reason": "later"})
        assert r.json()["status"] == "declined" and r.json()["reason"] == "later"
        assert ada.get("/api/challenges").json()["recent"][0]["status"] == "declined"
        # declined: the pair may challenge again, and the challenger may cancel
        ch2 = _post(ada, "/api/challenges", {"username": "bob", "per_move_days": 3}).json()
        assert _post(bob, f"/api/challenges/{ch2['id']}/cancel").json()["error"] == "not_yours"
        assert _post(ada, f"/api/challenges/{ch2['id']}/cancel").json()["status"] == "cancelled"
        assert _post(bob, f"/api/challenges/{ch2['id']}/accept").json()["error"] == "not_pending"
        ch3 = _post(ada, "/api/challenges", {"username": "bob", "per_move_days": 3}).json()
        game = _post(bob, f"/api/challenges/{ch3['id']}/accept").json()["game"]
        rec = bob.app.state.service.storage.load(game)
        assert rec.per_move_days == 3 and not rec.rated


def test_challenge_limits_are_counted_in_the_database(db: str) -> None:
    table = {
        **BUDGETS,
        "challenge.pending": replace(BUDGETS["challenge.pending"], per_account=2),
        "challenge": replace(BUDGETS["challenge"], per_account=3),
    }
    with visitors(_app(db, budgets=table), 5) as (ada, b, c, d, e):
        _signup(ada, "ada")
        for cl, n in ((b, "bob"), (c, "cyd"), (d, "dee"), (e, "eve")):
            _signup(cl, n)
        assert _post(ada, "/api/challenges", {"username": "bob"}).status_code == 201
        assert _post(ada, "/api/challenges", {"username": "cyd"}).status_code == 201
        r = _post(ada, "/api/challenges", {"username": "dee"})
        assert r.status_code == 429 and r.json()["error"] == "too_many_challenges"
        first = ada.get("/api/challenges").json()["outgoing"][-1]
        _post(ada, f"/api/challenges/{first['id']}/cancel")
        assert _post(ada, "/api/challenges", {"username": "dee"}).status_code == 201
        pend = ada.get("/api/challenges").json()["outgoing"][0]
        _post(ada, f"/api/challenges/{pend['id']}/cancel")
        # three sent this hour: the hourly limit, whatever is pending
        r = _post(ada, "/api/challenges", {"username": "eve"})
        assert r.status_code == 429 and r.json()["error"] == "rate_limited"
        storage = ada.app.state.service.storage
        with storage.engine.connect() as conn:
            n = conn.execute(text("SELECT count(*) FROM challenges")).scalar_one()
        assert n == 3


def test_a_block_stops_challenges_follows_and_cancels_pending_ones(db: str) -> None:
    with visitors(_app(db), 2) as (ada, bob):
        _signup(ada, "ada")
        _signup(bob, "bob")
        _post(bob, "/api/people/follow", {"username": "ada", "follow": True})
        ch = _post(bob, "/api/challenges", {"username": "ada"}).json()
        r = _post(ada, "/api/people/block", {"username": "bob", "block": True})
        assert r.json()["me"]["blocking"] is True
        assert ada.get("/api/people/ada").json()["followers"] == []
        assert ada.get("/api/challenges").json()["incoming"] == []
        assert _post(ada, f"/api/challenges/{ch['id']}/accept").json()["error"] == "blocked"
        r = _post(bob, "/api/challenges", {"username": "ada"})
        assert r.status_code == 403 and r.json()["error"] == "blocked"
        assert _post(bob, "/api/people/follow", {"username": "ada", "follow": True}).json()["error"] == "blocked"
        assert _post(ada, "/api/challenges", {"username": "bob"}).json()["error"] == "blocking"
        # unblocked: challenges again
        _post(ada, "/api/people/block", {"username": "bob", "block": False})
        assert _post(bob, "/api/challenges", {"username": "ada"}).status_code == 201


def test_a_blocked_player_cannot_write_to_the_blocker_in_a_game(db: str) -> None:
    with visitors(_app(db), 2) as (ada, bob):
        _signup(ada, "ada")
        _signup(bob, "bob")
        ch = _post(ada, "/api/challenges", {"username": "bob", "side": "south"}).json()
        game = _post(bob, f"/api/challenges/{ch['id']}/accept").json()["game"]
        _post(ada, "/api/people/block", {"username": "bob", "block": True})
        with bob.websocket_connect(f"/ws/{game}", headers=_cookie(bob)) as ws:
            ws.send_json({"type": "hello"})
            _until(ws, "state")
            ws.send_json({"type": "chat", "text": "hello", "ref": 1})
            err = _until(ws, "error")
            assert err["code"] == "blocked", err
        with ada.websocket_connect(f"/ws/{game}", headers=_cookie(ada)) as ws:  # the blocker may still write
            ws.send_json({"type": "hello"})
            _until(ws, "state")
            ws.send_json({"type": "chat", "text": "bye", "ref": 1})
            assert _until(ws, "chat_sent")["ref"] == 1


def _cookie(c: TestClient) -> dict[str, str]:
    """The session cookie for a WebSocket (the test client's WebSockets do not send its cookies)."""
    return {"cookie": f"{SESSION_COOKIE}={c.cookies[SESSION_COOKIE]}"}


def _until(ws: Any, kind: str, limit: int = 50) -> dict[str, Any]:
    for _ in range(limit):
        msg = ws.receive_json()
        if msg.get("type") == kind:
            return dict(msg)
    raise AssertionError(f"no {kind} message")


def test_two_accepts_at_once_make_one_game(db: str) -> None:
    """Two accepts racing (two tabs, two processes): one game; the loser's game is aborted."""
    import threading

    with visitors(_app(db), 2) as (ada, bob):
        _signup(ada, "ada")
        _signup(bob, "bob")
        ch = _post(ada, "/api/challenges", {"username": "bob"}).json()
        people = bob.app.state.people
        bob_id = bob.app.state.accounts.find("bob").id
        out: list[Any] = []

        def go() -> None:
            out.append(people.accept(bob_id, ch["id"])[0]["game"])

        threads = [threading.Thread(target=go) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert len(out) == 2 and out[0] == out[1]
        storage = bob.app.state.service.storage
        with storage.engine.connect() as conn:
            rows = conn.execute(text("SELECT id, reason FROM games")).all()
        live = [r for r in rows if r.reason is None]
        assert [r.id for r in live] == [out[0]], rows
        time.sleep(0)


def test_a_challenge_is_mailed_and_a_blocked_players_invitation_is_not(db: str, smtp: Any) -> None:  # noqa: F811
    """The challenged player takes invitations by mail: the challenge comes as one; once they block
    the challenger, the challenger's invitation by mail is not sent (and the sender is not told)."""
    inbox, port = smtp
    app = notify_app(db, port)
    with visitors(app, 2) as (ada, bob):
        _signup(ada, "ada")
        _signup(bob, "bob")
        _confirm(bob, inbox, "bob@example.org")
        ch = _post(ada, "/api/challenges", {"username": "bob", "clock": 5})
        assert ch.status_code == 201
        mail = inbox.wait(2)[1]
        assert mail["To"] == "bob@example.org" and "ada" in mail["Subject"] and "challenges" in mail["Subject"]
        assert f"/challenges#{ch.json()['id']}" in mail.get_content()
        _post(bob, "/api/people/block", {"username": "ada", "block": True})
        g = _post(ada, "/api/games", {"mode": "online"}).json()
        r = _post(ada, "/api/notify/invite", {"game": g["id"], "username": "bob"})
        assert r.status_code == 200  # the same answer as a sent invitation
        with app.state.service.storage.engine.connect() as conn:
            invites = conn.execute(text("SELECT count(*) FROM mail_outbox WHERE kind = 'invite'")).scalar_one()
        assert invites == 1  # the challenge's mail only
