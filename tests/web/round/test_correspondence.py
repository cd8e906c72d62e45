"""Correspondence games and the "your turn" list (issue 23, point 1), on SQLite and PostgreSQL:
every game waiting for the player's move, from the seats the browser holds and the account's
games, most urgent first."""

from __future__ import annotations

import time
import warnings
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import pytest
from argon2 import PasswordHasher

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from starlette.testclient import TestClient

from jericho_game.web.accounts.accounts import CSRF_HEADER  # noqa: E402
from jericho_game.web.round.endings import expire_seek  # noqa: E402
from jericho_game.web.server import create_app  # noqa: E402
from jericho_game.web.social.notify import MailPolicy  # noqa: E402
from tests.web.round.test_online import stored_presence  # noqa: E402
from tests.web.social import test_notify  # noqa: E402
from tests.web.social.test_notify import Inbox, _confirm  # noqa: E402
from tests.web.test_multiprocess import legal  # noqa: E402
from tests.web.test_server import WS, another, visitors  # noqa: E402

smtp = test_notify.smtp  # a real local SMTP server (aiosmtpd)
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


def test_your_turn_lists_the_games_waiting_for_the_player_most_urgent_first(client: TestClient) -> None:
    with another(client) as other:
        slow, s_south, s_north = _online(client, other, clock=10)
        fast, f_south, f_north = _online(client, other, clock=5)
        untimed, u_south, u_north = _online(client, other)
        waiting = _post(client, "/api/games", {"mode": "online"}).json()  # nobody joined: not a turn
        held = {slow: s_south, fast: f_south, untimed: u_south, waiting["id"]: waiting["token"]}
        # each side's first move: the clocks run from then on (issue 52; until then a timed game's
        # deadline is its first move's 30 s, whatever its clock)
        for game, south, north in ((slow, s_south, s_north), (fast, f_south, f_north)):
            _move(client, game, south)
            _move(other, game, north)
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


def test_your_turn_of_an_account_needs_no_token(client: TestClient) -> None:
    with another(client) as bob:
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
        with another(client) as stranger:
            assert _turns(stranger, {game: north}) == []


# -- time controls: increment and days per move (single process, a clock the test moves) ---------


class Clock:
    """A wall clock the test moves forward."""

    def __init__(self) -> None:
        self.t = 1_900_000_000.0

    def __call__(self) -> float:
        return self.t


def _clocked(db: str, clock: Clock, **kw: Any) -> Any:
    return create_app(db, ai_processes=0, password_hasher=CHEAP, clock=clock, **kw)


def _hello(c: TestClient, game: str, token: str) -> Any:
    ws = c.websocket_connect(f"/ws/{game}")
    raw = ws.__enter__()
    w = WS(raw)
    w.send(type="hello", token=token)
    w.until("state")
    return ws, w


def test_a_fischer_increment_is_added_after_each_move_and_shown(db: str) -> None:
    clock = Clock()
    with TestClient(_clocked(db, clock)) as c:
        r = _post(c, "/api/games", {"mode": "hotseat", "clock": 5, "increment": 3})
        assert r.status_code == 201, r.text
        g = r.json()
        assert g["game"]["increment"] == 3 and g["game"]["clock"]["increment"] == 3
        assert g["game"]["clock"]["south"] == 300.0
        ctx, ws = _hello(c, g["id"], g["token"])
        try:
            # each side's first move: no clock ran, so nothing is spent and nothing given back (issue 52)
            st = ws.state
            for ply in (0, 1):
                clock.t += 10.0
                ws.send(type="move", move=legal(st), ply=st["ply"])
                ws.until("ack")
                st = ws.until("state", lambda m, ply=ply: m["game"]["ply"] >= ply + 1)["game"]
            assert st["clock"]["south"] == st["clock"]["north"] == 300.0 and st["clock"]["running"] == "south"
            clock.t += 10.0
            ws.send(type="move", move=legal(st), ply=st["ply"])
            ws.until("ack")
            st = ws.until("state", lambda m: m["game"]["ply"] >= 3)["game"]
            # South spent 10 s and got 3 back; North's clock runs from the move
            assert st["clock"]["south"] == pytest.approx(293.0) and st["clock"]["running"] == "north"
            assert st["deadline"] == pytest.approx(clock.t + 300.0)
            clock.t += 4.5
            ws.send(type="move", move=legal(st), ply=st["ply"])
            ws.until("ack")
            st = ws.until("state", lambda m: m["game"]["ply"] >= 4)["game"]
            assert st["clock"]["north"] == pytest.approx(298.5)
            assert st["deadline"] == pytest.approx(clock.t + 293.0)  # the side to move's deadline
        finally:
            ctx.__exit__(None, None, None)
        # bad time controls are refused, naming what is wrong, and nothing is created
        for body, why in [
            ({"mode": "ai", "increment": 5}, "increment needs a clock"),
            ({"mode": "ai", "clock": 5, "increment": 600}, "between 1 and 60"),
            ({"mode": "ai", "per_move_days": 3}, "online games only"),
            ({"mode": "online", "per_move_days": 4}, "one of 1, 2, 3, 5, 7, 14"),
            ({"mode": "online", "per_move_days": 3, "clock": 10}, "one or the other"),
        ]:
            r = _post(c, "/api/games", body)
            assert r.status_code == 400 and why in r.json()["message"], (body, r.text)


def test_a_correspondence_game_gives_each_move_its_days_and_keeps_its_seek_listed(db: str) -> None:
    clock = Clock()
    app = _clocked(db, clock)
    with visitors(app, 2) as (ada, bob):
        r = _post(
            ada, "/api/games", {"mode": "online", "side": "south", "per_move_days": 3, "public": True, "name": "Ada"}
        )
        assert r.status_code == 201, r.text
        g = r.json()
        assert g["game"]["per_move_days"] == 3 and g["game"]["deadline"] is None  # nobody to move yet
        seeks = ada.get("/api/lobby").json()["seeks"]
        assert seeks[0]["per_move_days"] == 3 and seeks[0]["clock"] is None
        quick = _post(ada, "/api/games", {"mode": "online", "clock": 5, "public": True, "name": "Ada"}).json()
        # Ada leaves for three hours: a real-time seek expires, a correspondence seek stays listed
        clock.t += 3 * 3600
        assert expire_seek(app.state.service, quick["id"]) is not None
        assert expire_seek(app.state.service, g["id"]) is None
        assert [s["id"] for s in ada.get("/api/lobby").json()["seeks"]] == [g["id"]]
        clock.t += 8 * 86400  # ... for a week
        assert expire_seek(app.state.service, g["id"]) is not None
        g = _post(
            ada, "/api/games", {"mode": "online", "side": "south", "per_move_days": 3, "public": True, "name": "Ada"}
        ).json()
        j = _post(bob, f"/api/games/{g['id']}/join", {"name": "Bob"})
        assert j.status_code == 200, j.text
        st = ada.get(f"/api/games/{g['id']}").json()
        # the first move has the days per move too; missing them aborts the game (issue 52)
        assert st["deadline"] == pytest.approx(clock.t + 3 * 86400) and st["clock"]["running"] is None
        assert st["first_move"] == {"side": "south", "left": 3 * 86400, "limit": 3 * 86400}
        ctx, ws = _hello(ada, g["id"], g["token"])
        try:
            clock.t += 2 * 86400  # Ada thinks two days
            ws.send(type="move", move=legal(ws.state), ply=0)
            ws.until("ack")
            st = ws.until("state", lambda m: m["game"]["ply"] >= 1)["game"]
        finally:
            ctx.__exit__(None, None, None)
        # Bob has three days from now; Ada's clock is full again for her next move
        assert st["deadline"] == pytest.approx(clock.t + 3 * 86400)
        assert st["clock"]["south"] == pytest.approx(3 * 86400) and st["clock"]["running"] is None
        assert st["first_move"]["side"] == "north"
        rows = _turns(bob, {g["id"]: j.json()["token"]})
        assert rows[0]["per_move_days"] == 3 and rows[0]["deadline"] == pytest.approx(st["deadline"])


def test_the_correspondence_quota(db: str) -> None:
    from jericho_game.web.common.limits import Limits

    app = create_app(db, ai_processes=0, password_hasher=CHEAP, limits=Limits(correspondence_per_client=2))
    with TestClient(app) as c:
        for _ in range(2):
            assert _post(c, "/api/games", {"mode": "online", "per_move_days": 7}).status_code == 201
        r = _post(c, "/api/games", {"mode": "online", "per_move_days": 7})
        assert r.status_code == 429 and r.json()["error"] == "correspondence_quota", r.text
        assert "2" in r.json()["message"]
        assert _post(c, "/api/games", {"mode": "online", "clock": 5}).status_code == 201  # real time: no quota


def test_a_correspondence_turn_is_mailed_to_an_absent_player_once(db: str, smtp: tuple[Inbox, int]) -> None:
    inbox, port = smtp
    app = create_app(
        db,
        ai_processes=0,
        password_hasher=CHEAP,
        smtp=f"smtp://127.0.0.1:{port}",
        mail_policy=MailPolicy(poll=0.2),
        public_url="https://jericho.example.org",
    )
    with visitors(app, 2) as (ada, bob):
        _signup(ada, "ada")
        _signup(bob, "bob")
        _confirm(bob, inbox, "bob@example.org")
        game, south, _north = _online(ada, bob, per_move_days=2)
        n = len(inbox.mails)
        _move(ada, game, south)  # Bob is not on the game's page: a mail
        msg = inbox.wait(n + 1)[n]
        assert msg["To"] == "bob@example.org" and msg["Subject"] == "Jericho: your move against ada"
        assert f"/g/{game}" in msg.get_content() and "kind=turn" in msg["List-Unsubscribe"]
        # Bob opens the game and plays; Ada (no address) gets nothing; Bob, on the page, gets no mail
        with bob.websocket_connect(f"/ws/{game}") as raw:
            b = WS(raw)
            b.send(type="hello")
            st = b.until("state", lambda m: m["game"]["ply"] == 1)["game"]
            b.send(type="move", move=legal(st), ply=1)
            b.until("ack")
            # the move's mail hook reads presence from the database, which a thread writes after
            # Bob's hello: on a loaded machine Ada's move once came first (a mail to Bob, on the page)
            stored_presence(bob, game, "north", True)
            _move(ada, game, south)
            b.until("state", lambda m: m["game"]["ply"] >= 3)
            time.sleep(1.0)
        assert len(inbox.mails) == n + 1, [(m["To"], m["Subject"]) for m in inbox.mails]
        # a real-time game sends no turn mail
        quick, q_south, _ = _online(ada, bob, clock=10)
        _move(ada, quick, q_south)
        time.sleep(1.0)
        assert len(inbox.mails) == n + 1


def test_correspondence_seeks_from_many_addresses_cannot_fill_the_lobby_for_a_week(db: str) -> None:
    """Issue 33, item 9: 55 addresses x 1 correspondence seek filled the lobby for up to 7 days.  Now
    the list holds Limits.correspondence_seeks, anonymous seeks are refused past it and last a day,
    and an account's seek still gets in, crowding out the oldest anonymous one."""
    from jericho_game.web.common.limits import Limits
    from jericho_game.web.round.correspondence import ANONYMOUS_SEEK_MAX_AGE, SEEK_MAX_AGE

    cap = Limits().correspondence_seeks
    clock = Clock()
    app = _clocked(db, clock)
    seek = {"mode": "online", "side": "south", "per_move_days": 7, "public": True, "name": "Anon"}
    with TestClient(app) as c:
        made, refused = [], []
        for i in range(55):
            r = TestClient(app, client=(f"10.9.{i}.1", 1000)).post("/api/games", json=seek)
            (made if r.status_code == 201 else refused).append(r)
            clock.t += 1
        assert len(made) == cap and len(refused) == 55 - cap
        assert all(r.status_code == 429 and r.json()["error"] == "lobby_full" for r in refused)
        assert str(cap) in refused[0].json()["message"] and "nothing was created" in refused[0].json()["message"]
        assert len(c.get("/api/lobby").json()["seeks"]) == cap
        # an account's seek gets in; the sweep then expires the oldest anonymous one (accounts first)
        _signup(c, "ada")
        mine = _post(c, "/api/games", {**seek, "name": None})
        assert mine.status_code == 201, mine.text
        lobby = app.state.transport.lobby
        due = lobby._due()
        oldest = made[0].json()["id"]
        assert due == [(oldest, True)]
        svc = app.state.service
        assert expire_seek(svc, oldest, True) is not None
        assert expire_seek(svc, made[1].json()["id"], True) is None  # checked again under the lock: it fits
        listed = [s["id"] for s in c.get("/api/lobby").json()["seeks"]]
        assert len(listed) == cap and mine.json()["id"] in listed and oldest not in listed
        # a day later the anonymous seeks have expired, the account's stays its week
        clock.t += ANONYMOUS_SEEK_MAX_AGE
        for gid, crowded in lobby._due():
            expire_seek(svc, gid, crowded)
        assert [s["id"] for s in c.get("/api/lobby").json()["seeks"]] == [mine.json()["id"]]
        clock.t += SEEK_MAX_AGE - ANONYMOUS_SEEK_MAX_AGE
        assert [gid for gid, _ in lobby._due()] == [mine.json()["id"]]


def test_accounts_from_a_few_addresses_cannot_hold_the_correspondence_list(db: str) -> None:
    """Issue 51, finding 8 (the audit): 14 accounts x 3 seeks filled the lobby's 40 correspondence
    places for 7 days, and a logged-in player then got `lobby_full` telling it to log in.  Now a
    logged-in player's seek crowds out the oldest seek of the address group holding the most places
    (when that group holds more than the player's would); when no group holds more, the refusal
    says the list is full and to invite by link, never to log in."""
    from jericho_game.web.common.limits import Limits

    cap = Limits().correspondence_seeks
    clock = Clock()
    app = _clocked(db, clock)
    seek = {"mode": "online", "side": "south", "per_move_days": 7, "public": True}

    stack = ExitStack()

    def account(name: str, address: str) -> TestClient:
        c = stack.enter_context(another(first, address))
        _signup(c, name)
        return c

    with TestClient(app) as first, stack:
        made: dict[str, list[str]] = {}
        for i in range(14):
            c = account(f"holder{i}", f"10.8.{i}.1")
            for _ in range(3):
                r = _post(c, "/api/games", seek)
                if r.status_code == 201:
                    made.setdefault(f"10.8.{i}.1", []).append(r.json()["id"])
                clock.t += 1
        assert sum(len(v) for v in made.values()) >= cap
        # a logged-in player from elsewhere: its seek gets in, and the sweep expires the oldest seek of
        # a group holding 3 places
        late = account("late", "10.7.0.1")
        mine = _post(late, "/api/games", seek)
        assert mine.status_code == 201, mine.text  # lobby_full ("log in ...") before
        lobby = app.state.transport.lobby
        svc = app.state.service
        for gid, crowded in lobby._due():
            expire_seek(svc, gid, crowded)
        listed = [s["id"] for s in first.get("/api/lobby").json()["seeks"]]
        assert len(listed) == cap and mine.json()["id"] in listed
        assert made["10.8.0.1"][0] not in listed  # the oldest seek of a group holding the most places
        assert max(sum(gid in listed for gid in ids) for ids in made.values()) <= 3


def test_a_full_correspondence_list_shared_fairly_refuses_a_logged_in_player_without_asking_to_log_in(
    db: str,
) -> None:
    """Issue 51, finding 8: 40 players from 40 addresses hold one place each; a 41st logged-in player
    crowds out nobody (no group holds more than its own would) and is refused with `lobby_full`,
    which says the list is full and to invite by link, not to log in (in French too)."""
    from jericho_game.web.common.limits import Limits

    cap = Limits().correspondence_seeks
    clock = Clock()
    app = _clocked(db, clock)
    seek = {"mode": "online", "side": "south", "per_move_days": 7, "public": True}

    stack = ExitStack()

    def account(name: str, address: str) -> TestClient:
        c = stack.enter_context(another(first, address))
        _signup(c, name)
        return c

    with TestClient(app) as first, stack:
        for i in range(cap):
            assert _post(account(f"one{i}", f"10.6.{i}.1"), "/api/games", seek).status_code == 201
            clock.t += 1
        late = account("one-more", "10.5.0.1")
        refused = _post(late, "/api/games", seek)
        assert refused.status_code == 429 and refused.json()["error"] == "lobby_full", refused.text
        said = refused.json()["message"]
        assert "log in" not in said and "link" in said and "nothing was created" in said, said
        fr = late.post("/api/games?lang=fr", json=seek, headers={CSRF_HEADER: _csrf(late)})
        assert fr.status_code == 429 and "connect" not in fr.json()["message"].lower(), fr.text
        assert len(app.state.transport.lobby._due()) == 0  # nobody crowded out
