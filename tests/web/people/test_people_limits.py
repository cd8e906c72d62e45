"""Issue 51, findings 2 and 7, on SQLite and PostgreSQL: every challenge mail asks the one budget
policy (100 challenge-cancel cycles mail the victim at most its hourly cap); what one player
*receives* is capped (pending and hourly challenges, follows); who may challenge an account is its
own setting; a block covers seeks and the lobby, and the blocked player's view of the blocker offers
nothing that would fail.  The chat's side of a block is in tests/web/social/test_chat.py."""

from __future__ import annotations

import json
import warnings
from contextlib import ExitStack
from dataclasses import replace
from typing import Any

from sqlalchemy import text

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from starlette.testclient import TestClient

from jericho_game.web.accounts.accounts import CSRF_HEADER, SESSION_COOKIE  # noqa: E402
from jericho_game.web.common.budget import BUDGETS, Budget, declared  # noqa: E402
from jericho_game.web.people.people import people_routes  # noqa: E402
from jericho_game.web.server import create_app  # noqa: E402
from jericho_game.web.social.notify import notify_routes  # noqa: E402
from tests.web.people.test_people import CHEAP, _signup  # noqa: E402
from tests.web.social.test_notify import FAST, PUBLIC, _confirm, smtp  # noqa: E402, F401 - a fixture
from tests.web.test_server import another, visitors  # noqa: E402


def _cap(limit: float | None) -> int:
    assert limit is not None
    return int(limit)


def _open(budgets: dict[str, Budget], *kinds: str) -> dict[str, Budget]:
    """``budgets`` with no limit on ``kinds`` (one test address for many accounts, many cycles)."""
    return {
        **budgets,
        **{
            k: replace(budgets[k], per_group=None, per_account=None, per_recipient=None, per_pair=None, total=None)
            for k in kinds
        },
    }


def _app(db: str, budgets: dict[str, Budget] | None = None, **kw: Any) -> Any:
    table = _open(dict(BUDGETS), "signup") if budgets is None else budgets
    return create_app(db, ai_processes=0, password_hasher=CHEAP, budgets=table, **kw)


class Poster:
    """A visitor's POSTs with its CSRF token, asked once."""

    def __init__(self, c: TestClient) -> None:
        self.c = c
        self.token: str | None = None

    def __call__(self, path: str, body: dict[str, Any] | None = None) -> Any:
        if self.token is None:
            self.token = self.c.get("/api/account").json()["csrf"]
        return self.c.post(path, json=body or {}, headers={CSRF_HEADER: self.token})


def _error(r: Any) -> Any:
    return r.status_code if r.status_code < 300 else r.json()["error"]


def test_a_hundred_challenge_cycles_mail_the_victim_at_most_its_hourly_cap(db: str, smtp: Any) -> None:  # noqa: F811
    """Issue 51, point 4 (finding 2): a victim got 100 challenge mails in 36.5 s from 5 accounts
    (challenge, cancel, repeat): challenge mails skipped every mail quota.  Now each asks the
    ``mail.challenge`` budget: the challenges are made, the mails past the cap are not sent."""
    inbox, port = smtp
    budgets = _open(dict(BUDGETS), "signup", "challenge", "challenge.pending")  # every challenge is made
    app = _app(
        db, budgets, smtp=f"smtp://127.0.0.1:{port}?from=jericho@example.org", mail_policy=FAST, public_url=PUBLIC
    )
    with visitors(app, 6) as (victim, *senders):
        _signup(victim, "victim")
        _confirm(victim, inbox, "victim@example.org")
        posts = []
        for i, c in enumerate(senders):
            _signup(c, f"sender{i}")
            posts.append(Poster(c))
        made = 0
        for n in range(100):
            post = posts[n % 5]
            r = post("/api/challenges", {"username": "victim"})
            assert r.status_code == 201, r.text
            made += 1
            assert post(f"/api/challenges/{r.json()['id']}/cancel").json()["status"] == "cancelled"
        storage = app.state.service.storage
        with storage.engine.connect() as conn:
            mails = conn.execute(
                text("SELECT count(*) FROM mail_outbox WHERE to_addr = 'victim@example.org' AND kind = 'invite'")
            ).scalar_one()
    cap = BUDGETS["mail.challenge"].per_recipient
    assert made == 100 and cap is not None and mails == cap, (made, mails)


def test_forty_fresh_accounts_cannot_all_challenge_or_follow_one_victim(db: str) -> None:
    """Finding 7: 40 fresh accounts made 40 pending challenges and 40 followers on one victim.  Now
    what one player receives is capped: pending challenges at once, challenges and follows an hour."""
    pending_cap = _cap(BUDGETS["challenge.pending"].per_recipient)
    hourly_cap = _cap(BUDGETS["challenge"].per_recipient)
    follow_cap = _cap(BUDGETS["follow"].per_recipient)
    with visitors(_app(db), 1) as (victim,), ExitStack() as stack:
        _signup(victim, "victim")
        posts = []
        for i in range(40):
            c = stack.enter_context(another(victim, f"10.51.{i}.1"))  # 40 addresses: no per-address limit
            _signup(c, f"fresh{i}")
            posts.append(Poster(c))
        sent = [_error(p("/api/challenges", {"username": "victim"})) for p in posts]
        follows = [_error(p("/api/people/follow", {"username": "victim", "follow": True})) for p in posts]
        assert sent == [201] * pending_cap + ["too_many_challenges"] * (40 - pending_cap), sent
        assert follows == [200] * follow_cap + ["rate_limited"] * (40 - follow_cap), follows
        assert len(victim.get("/api/challenges").json()["incoming"]) == pending_cap
        assert victim.get("/api/people/victim").json()["followers_count"] == follow_cap
        # each challenge cancelled at once: the victim still receives at most its hourly number
        made = pending_cap
        for ch in victim.get("/api/challenges").json()["incoming"]:
            posts[int(ch["from"][5:])](f"/api/challenges/{ch['id']}/cancel")
        answers = []
        for p in posts[pending_cap:]:
            r = p("/api/challenges", {"username": "victim"})
            answers.append(_error(r))
            if r.status_code == 201:
                made += 1
                p(f"/api/challenges/{r.json()['id']}/cancel")
        assert made == hourly_cap and answers[-1] == "rate_limited", answers
        r = posts[-1]("/api/challenges", {"username": "victim"})
        assert "to this player" in r.json()["message"], r.text


def test_who_may_challenge_me_is_each_accounts_setting(db: str) -> None:
    """Finding 7: a "who may challenge me" setting per account (all, people I follow, nobody),
    stored in the database; a refused challenge says why (`challenges_closed`)."""
    with visitors(_app(db), 4) as (ada, bob, eve, anon):
        for c, n in ((ada, "ada"), (bob, "bob"), (eve, "eve")):
            _signup(c, n)
        post_a, post_b, post_e = Poster(ada), Poster(bob), Poster(eve)
        assert ada.get("/api/challenges/settings").json() == {"challenges": "all"}
        assert anon.get("/api/challenges/settings").status_code == 401
        for bad in ({"challenges": "friends"}, {"challenges": None}, {"who": "all"}):
            r = post_a("/api/challenges/settings", bad)
            assert r.status_code == 400 and r.json()["error"] == "bad_request", r.text
        assert ada.post("/api/challenges/settings", json={"challenges": "nobody"}).status_code == 403  # no CSRF token
        assert ada.get("/api/challenges/settings").json() == {"challenges": "all"}
        assert post_a("/api/challenges/settings", {"challenges": "nobody"}).json() == {"challenges": "nobody"}
        r = post_b("/api/challenges", {"username": "ada"})
        assert r.status_code == 403 and r.json()["error"] == "challenges_closed" and "ada" in r.json()["message"]
        me = bob.get("/api/people/ada").json()["me"]
        assert (me["can_challenge"], me["can_follow"]) == (False, True)
        # people I follow: bob may, eve may not
        post_a("/api/challenges/settings", {"challenges": "follows"})
        post_a("/api/people/follow", {"username": "bob", "follow": True})
        assert bob.get("/api/people/ada").json()["me"]["can_challenge"] is True
        assert eve.get("/api/people/ada").json()["me"]["can_challenge"] is False
        assert post_b("/api/challenges", {"username": "ada"}).status_code == 201
        r = post_e("/api/challenges", {"username": "ada"})
        assert r.status_code == 403 and r.json()["error"] == "challenges_closed"
        # stored in the database: another server on it reads the same
        storage = ada.app.state.service.storage  # type: ignore[attr-defined]
        with storage.engine.connect() as conn:
            row = conn.execute(text("SELECT challenges FROM people_prefs")).all()
        assert [r[0] for r in row] == ["follows"]


def test_a_block_covers_seeks_and_the_lobby_either_way(db: str) -> None:
    """Finding 7: the blocked player joined the blocker's public seek.  Now neither of two players,
    one of whom blocked the other, can join the other's seek, and the lobby does not offer it."""
    with visitors(_app(db), 4) as (ada, bob, cyd, anon):
        for c, n in ((ada, "ada"), (bob, "bob"), (cyd, "cyd")):
            _signup(c, n)
        post_a, post_b, post_c = Poster(ada), Poster(bob), Poster(cyd)
        post_a("/api/people/block", {"username": "bob", "block": True})
        seeks = {}
        for name, post in (("ada", post_a), ("bob", post_b)):
            r = post("/api/games", {"mode": "online", "public": True, "name": name, "side": "south"})
            assert r.status_code == 201, r.text
            seeks[name] = r.json()["id"]

        def listed(c: TestClient) -> set[str]:
            return {s["id"] for s in c.get("/api/lobby").json()["seeks"]}

        assert listed(cyd) == set(seeks.values())
        assert listed(bob) == {seeks["bob"]} and listed(ada) == {seeks["ada"]}
        assert listed(anon) == set(seeks.values())  # anonymous: everything
        for post, other in ((post_b, "ada"), (post_a, "bob")):
            r = post(f"/api/games/{seeks[other]}/join", {"name": "x"})
            assert r.status_code == 403 and r.json()["error"] == "blocked", r.text
        # the lobby's socket too, per viewer
        cookie = {"cookie": f"{SESSION_COOKIE}={bob.cookies[SESSION_COOKIE]}"}
        with bob.websocket_connect("/lobby/ws", headers=cookie) as ws:
            first = json.loads(ws.receive_text())
            assert first["type"] == "lobby" and {s["id"] for s in first["seeks"]} == {seeks["bob"]}
        # others still join: the seek was never spoiled
        assert post_c(f"/api/games/{seeks['ada']}/join", {"name": "cyd"}).status_code == 200


def test_the_blocked_players_view_of_the_blocker_offers_nothing_that_would_fail(db: str) -> None:
    with visitors(_app(db), 3) as (ada, bob, cyd):
        for c, n in ((ada, "ada"), (bob, "bob"), (cyd, "cyd")):
            _signup(c, n)
        Poster(ada)("/api/people/block", {"username": "bob", "block": True})
        theirs = bob.get("/api/people/ada").json()["me"]
        assert (theirs["can_follow"], theirs["can_challenge"], theirs["blocking"]) == (False, False, False)
        mine = ada.get("/api/people/bob").json()["me"]
        assert (mine["can_follow"], mine["can_challenge"], mine["blocking"]) == (False, False, True)
        other = cyd.get("/api/people/ada").json()["me"]
        assert (other["can_follow"], other["can_challenge"]) == (True, True)


def test_every_people_and_mail_route_declares_what_it_costs(db: str) -> None:
    with visitors(_app(db), 1) as (c,):  # run and shut down: its storage is closed
        state = c.app.state  # type: ignore[attr-defined]
        routes = [*people_routes(state.people, lambda change: None), *notify_routes(state.notifier)]
        routes += state.chat.routes(state.accounts)
    for route in routes:
        found = declared(route.endpoint)
        assert found is not None, route.path
        for method in route.methods - {"HEAD"}:
            assert method in found.kinds, (route.path, method)
            assert found.kinds[method] or found.why[method], (route.path, method)


def test_the_blocker_cannot_invite_the_blocked_player_by_mail_either(db: str) -> None:
    """Finding 7: a block covers mails both ways; the blocked player's invitation is dropped unseen
    (tests/web/people/test_people.py), the blocker's is refused as its challenge is (`blocking`)."""
    with visitors(_app(db), 2) as (ada, bob):
        _signup(ada, "ada")
        _signup(bob, "bob")
        post_a = Poster(ada)
        post_a("/api/people/block", {"username": "bob", "block": True})
        g = post_a("/api/games", {"mode": "online"}).json()
        r = post_a("/api/notify/invite", {"game": g["id"], "username": "bob"})
        assert r.status_code == 409 and r.json()["error"] == "blocking", r.text
        storage = ada.app.state.service.storage  # type: ignore[attr-defined]
        with storage.engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM budget_spend WHERE kind LIKE 'mail%'")).scalar_one() == 0
