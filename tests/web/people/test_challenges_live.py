"""Challenges in real time (issue 52, "People in real time"), on SQLite and PostgreSQL.

Each open page of a logged-in player holds the people feed (the lobby's WebSocket,
``/lobby/ws?feed=people``), on which the server only says "your challenges or relations changed"
(``{"type": "people"}``); the page then reads ``GET /api/challenges``.  A real-time challenge
expires once its challenger has had no page open for ``PeoplePolicy.left_after`` seconds, or once
unanswered for ``PeoplePolicy.realtime_expires_after``; a correspondence one after a day.  Times
are a fake clock's; hints are counted (a ping's pong marks where the server's queue was)."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from jericho_game.web.people.people import PeoplePolicy
from tests.web.people.test_people import _app, _cookie, _post, _signup
from tests.web.test_server import visitors

FEED = "/lobby/ws?feed=people"
NOW = 1_900_000_000.0


def _feed(c: Any) -> Any:
    return c.websocket_connect(FEED, headers=_cookie(c))


def _drain(ws: Any, ref: int) -> list[dict[str, Any]]:
    """The messages before the pong of a ping sent now (what the server had queued for ``ws``)."""
    ws.send_text(json.dumps({"type": "ping", "ref": ref}))
    out: list[dict[str, Any]] = []
    for _ in range(200):
        msg = json.loads(ws.receive_text())
        if msg.get("type") == "pong" and msg.get("ref") == ref:
            return out
        out.append(msg)
    raise AssertionError(f"no pong: {out[-3:]}")


def _hinted(ws: Any, tries: int = 400) -> None:
    """Wait for a ``people`` hint (PostgreSQL's NOTIFY comes back through the listener: counted in
    pings, with a pause between them; the bound only keeps a broken server from hanging the run)."""
    for i in range(tries):
        if any(m.get("type") == "people" for m in _drain(ws, 1000 + i)):
            return
        time.sleep(0.05)
    raise AssertionError("no people hint arrived")


def _gone(app: Any, account: int) -> None:
    """Wait until the server has seen the account's last feed close (its leaving stamped first)."""
    for _ in range(2000):
        if account not in app.state.people_feed.conns:
            return
        time.sleep(0.01)
    raise AssertionError(f"the feed never closed: {app.state.people_feed.conns}")


def _quiet(ws: Any) -> None:
    """Read what is queued now (the hello hint, earlier hints), so that the next hint is a new one."""
    _drain(ws, 1)


def test_a_challenge_and_each_answer_are_pushed_to_both_players_pages(db: str) -> None:
    with visitors(_app(db), 3) as (ada, bob, anyone):
        for c, n in ((ada, "ada"), (bob, "bob")):
            _signup(c, n)
        with _feed(bob) as bob_page, _feed(bob) as bob_tab, _feed(ada) as ada_page:
            for ws in (bob_page, bob_tab, ada_page):
                _quiet(ws)
            ch = _post(ada, "/api/challenges", {"username": "bob", "clock": 3, "increment": 2}).json()
            _hinted(bob_page)  # every open page of the recipient
            _hinted(bob_tab)
            assert [c["id"] for c in bob.get("/api/challenges").json()["incoming"]] == [ch["id"]]
            # declined with a reason: the challenger's page is told, and reads the reason
            _quiet(ada_page)
            r = _post(bob, f"/api/challenges/{ch['id']}/decline", {"reason": "timecontrol"})
            assert r.status_code == 200, r.text
            _hinted(ada_page)
            recent = ada.get("/api/challenges").json()["recent"][0]
            assert (recent["status"], recent["reason"]) == ("declined", "timecontrol")
            # cancelled by the challenger: the recipient's pages are told
            ch2 = _post(ada, "/api/challenges", {"username": "bob"}).json()
            _hinted(bob_page)
            _post(ada, f"/api/challenges/{ch2['id']}/cancel")
            _hinted(bob_page)
            assert bob.get("/api/challenges").json()["incoming"] == []
            # accepted: the challenger's page is told, with the game
            ch3 = _post(ada, "/api/challenges", {"username": "bob"}).json()
            _quiet(ada_page)
            game = _post(bob, f"/api/challenges/{ch3['id']}/accept").json()["game"]
            _hinted(ada_page)
            assert ada.get("/api/challenges").json()["recent"][0]["game"] == game
        # no account, no feed: refused with a code
        with anyone.websocket_connect(FEED) as anon:
            msg = json.loads(anon.receive_text())
            assert (msg["type"], msg.get("code")) == ("error", "not_logged_in"), msg


def test_a_real_time_challenge_expires_when_its_challenger_leaves(db: str) -> None:
    now = [NOW]
    app = _app(db, PeoplePolicy(left_after=20.0), clock=lambda: now[0])
    with visitors(app, 2) as (ada, bob):
        _signup(ada, "ada")
        _signup(bob, "bob")
        people = app.state.people
        with _feed(bob) as bob_page:
            with _feed(ada) as ada_page:
                _quiet(ada_page)
                real = _post(ada, "/api/challenges", {"username": "bob", "clock": 1}).json()
                slow = _post(ada, "/api/challenges", {"username": "bob", "per_move_days": 3})
                assert slow.status_code == 409  # one pending per pair: the correspondence one comes later
                now[0] += 60  # ada's page is open: a minute later it still stands
                ada.portal.call(app.state.people_feed.tick)  # what every process does every few seconds
                assert bob.get("/api/challenges").json()["incoming"][0]["id"] == real["id"]
                _quiet(bob_page)
            # ada's last page closed: 19 s later it stands, 21 s later it is expired and bob told
            _gone(app, app.state.accounts.find("ada").id)
            ada.portal.call(app.state.people_feed.tick)
            now[0] += 19
            people.sweep()
            assert bob.get("/api/challenges").json()["incoming"][0]["id"] == real["id"]
            now[0] += 2
            people.sweep()
            _hinted(bob_page)
            seen = bob.get("/api/challenges").json()
            assert seen["incoming"] == [] and (seen["recent"][0]["status"], seen["recent"][0]["reason"]) == (
                "expired",
                "left",
            )
            assert _post(bob, f"/api/challenges/{real['id']}/accept").json()["error"] == "not_pending"
            # a correspondence challenge does not need its challenger there
            corr = _post(ada, "/api/challenges", {"username": "bob", "per_move_days": 3}).json()
            now[0] += 3600
            people.sweep()
            assert bob.get("/api/challenges").json()["incoming"][0]["id"] == corr["id"]


def test_an_accept_after_the_challenger_left_makes_no_game(db: str) -> None:
    """One accepted after the challenger left, before any sweep ran, is refused as expired: no game."""
    now = [NOW]
    app = _app(db, PeoplePolicy(left_after=20.0), clock=lambda: now[0])
    with visitors(app, 2) as (ada, bob):
        _signup(ada, "ada")
        _signup(bob, "bob")
        ch = _post(ada, "/api/challenges", {"username": "bob", "clock": 1}).json()
        now[0] += 25  # ada sent it from the API, holds no page, asked nothing since
        assert bob.get("/api/challenges").json()["incoming"] == []
        r = _post(bob, f"/api/challenges/{ch['id']}/accept")
        assert r.status_code == 409 and r.json()["error"] == "challenge_expired", r.text
        assert ada.get("/api/challenges").json()["recent"][0]["reason"] == "left"
        with app.state.service.storage.reader.connect() as conn:
            from sqlalchemy import text

            assert conn.execute(text("SELECT count(*) FROM games")).scalar_one() == 0


def test_a_real_time_challenge_expires_unanswered_after_minutes(db: str) -> None:
    now = [NOW]
    policy = PeoplePolicy()
    assert policy.realtime_expires_after == 300.0 and policy.left_after == 20.0  # docs/web.md, "People"
    app = _app(db, policy, clock=lambda: now[0])
    with visitors(app, 2) as (ada, bob):
        _signup(ada, "ada")
        _signup(bob, "bob")
        with _feed(ada) as ada_page, _feed(bob) as bob_page:
            ch = _post(ada, "/api/challenges", {"username": "bob", "clock": 5}).json()
            assert ch["expires_at"] == NOW + 300
            now[0] += 290
            ada.portal.call(app.state.people_feed.tick)
            assert bob.get("/api/challenges").json()["incoming"][0]["id"] == ch["id"]
            _quiet(ada_page)
            _quiet(bob_page)
            now[0] += 11
            ada.portal.call(app.state.people_feed.tick)
            _hinted(ada_page)  # the challenger is told it expired
            _hinted(bob_page)
            recent = ada.get("/api/challenges").json()["recent"][0]
            assert (recent["status"], recent["reason"]) == ("expired", "unanswered")


def test_a_block_is_pushed_and_the_blocked_view_offers_nothing_that_would_fail(db: str) -> None:
    with visitors(_app(db), 2) as (ada, bob):
        _signup(ada, "ada")
        _signup(bob, "bob")
        _post(bob, "/api/people/follow", {"username": "ada", "follow": True})
        ch = _post(bob, "/api/challenges", {"username": "ada"}).json()
        with _feed(bob) as bob_page:
            _quiet(bob_page)
            _post(ada, "/api/people/block", {"username": "bob", "block": True})
            _hinted(bob_page)  # his open view of her page drops Follow and Challenge at once
        view = bob.get("/api/people/ada").json()["me"]
        assert (view["can_follow"], view["can_challenge"], view["following"]) == (False, False, False)
        assert bob.get("/api/challenges").json()["outgoing"] == []
        assert _post(bob, f"/api/challenges/{ch['id']}/cancel").json()["error"] == "not_pending"
        # the API's answers say which side blocked
        r = _post(bob, "/api/people/follow", {"username": "ada", "follow": True})
        assert (r.status_code, r.json()["error"]) == (403, "blocked")
        r = _post(ada, "/api/people/follow", {"username": "bob", "follow": True})
        assert (r.status_code, r.json()["error"]) == (409, "blocking"), r.text


@pytest.mark.parametrize("db", ["postgresql"], indirect=True)
def test_a_hint_crosses_server_processes(db: str) -> None:
    """Two apps on one PostgreSQL database (two server processes): a challenge made on one is
    pushed to the recipient's page held by the other (NOTIFY, in the challenge's transaction)."""
    with visitors(_app(db), 1) as (ada,), visitors(_app(db), 1) as (bob,):
        _signup(ada, "ada")
        _signup(bob, "bob")
        with _feed(bob) as bob_page:
            _quiet(bob_page)
            _post(ada, "/api/challenges", {"username": "bob"})
            _hinted(bob_page)
