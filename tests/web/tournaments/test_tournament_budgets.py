"""Tournaments against floods and puppets (issue 51, findings 4, 5, 7, 11 and 13), on SQLite and
PostgreSQL: creation and joins ask their budgets (``tournament.create``, ``tournament.join``), the
listing cannot be filled by one creator or one address group, featured tournaments come from
their own query, a game of fewer than two plies gives no points, a block keeps two players apart,
a Swiss round is computed outside the tournament's lock, and every route declares its cost."""

from __future__ import annotations

import warnings
from collections import Counter
from contextlib import ExitStack
from dataclasses import replace
from typing import Any

import pytest
from sqlalchemy import create_engine, text

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from starlette.testclient import TestClient

from jericho_game.web.accounts.accounts import CSRF_HEADER  # noqa: E402
from jericho_game.web.common.budget import BUDGETS, Budget, declared, zeroed  # noqa: E402
from jericho_game.web.server import create_app  # noqa: E402
from jericho_game.web.storage.database import resolve_db_url  # noqa: E402
from jericho_game.web.tournaments import swiss  # noqa: E402
from jericho_game.web.tournaments.tournaments import TournamentPolicy, TournamentService  # noqa: E402
from tests.web.test_server import another  # noqa: E402
from tests.web.tournaments.test_tournaments import CHEAP, MANUAL, PW, _csrf, _play_two_plies, _playing  # noqa: E402


def _app(db: str, budgets: dict[str, Budget] | None = None, policy: TournamentPolicy = MANUAL) -> Any:
    return create_app(db, ai_processes=0, password_hasher=CHEAP, tournament_policy=policy, budgets=budgets)


def _relaxed(*kinds: str) -> dict[str, Budget]:
    """The budgets with ``kinds`` unlimited (to see what the listing does with a flood however made)."""
    out = dict(BUDGETS)
    for k in kinds:
        out[k] = replace(out[k], per_group=None, per_account=None, per_pair=None, per_recipient=None, total=None)
    return out


def _post(c: TestClient, path: str, body: dict[str, Any] | None = None) -> Any:
    return c.post(path, json=body or {}, headers={CSRF_HEADER: _csrf(c)})


class Crowd:
    """Accounts (made by the accounts service) logged in from given addresses, one browser each."""

    def __init__(self, app: Any, first: TestClient, stack: ExitStack) -> None:
        self.app, self.first, self.stack = app, first, stack

    def person(self, name: str, address: str) -> TestClient:
        self.app.state.accounts.create_account(name, PW)
        c = self.stack.enter_context(another(self.first, address))
        r = _post(c, "/api/account/login", {"username": name, "password": PW})
        assert r.status_code == 200, r.text
        return c

    def id(self, name: str) -> int:
        return int(self.app.state.accounts.find(name).id)


def _flood(crowd: Crowd) -> Counter[Any]:
    """Issue 51, finding 4: 40 accounts from 4 addresses each make 3 arenas of 360 minutes."""
    answers: Counter[Any] = Counter()
    for i in range(40):
        c = crowd.person(f"spam{i:02d}", f"203.0.113.{i % 4 + 1}")
        for k in range(3):
            r = _post(c, "/api/tournaments", {"name": f"Spam {i}-{k}", "clock": 3, "minutes": 360})
            answers[r.status_code, r.json().get("error")] += 1
    return answers


def test_a_flood_of_tournaments_is_refused_by_the_creation_budget(db: str) -> None:
    app = _app(db)
    with TestClient(app) as first, ExitStack() as stack:
        answers = _flood(Crowd(app, first, stack))
        per_group = int(BUDGETS["tournament.create"].per_group or 0)
        assert answers[201, None] == 4 * per_group, answers
        assert answers[429, "too_many_tournaments"] == 120 - 4 * per_group, answers


def test_a_flood_hides_no_other_tournament_and_the_featured_one_shows(db: str) -> None:
    """Even where the creation budget lets a flood through (an operator's larger budget, or many
    address groups), the listing shows at most a few of one creator's and of one address group's,
    most players first: a real arena made afterwards is listed, and the featured cup shows."""
    app = _app(db, _relaxed("tournament.create"))
    policy = app.state.tournaments.policy
    with TestClient(app) as first, ExitStack() as stack:
        crowd = Crowd(app, first, stack)
        assert _flood(crowd)[201, None] == 120
        root = crowd.person("root", "198.51.100.1")
        app.state.accounts.set_admin("root", True)
        cup = _post(root, "/api/tournaments", {"name": "Sunday cup", "clock": 5, "starts_in": 360}).json()
        assert _post(root, f"/api/tournaments/{cup['id']}/feature", {"featured": True}).status_code == 200
        ada = crowd.person("ada", "198.51.100.2")
        real = _post(ada, "/api/tournaments", {"name": "Real arena", "clock": 3, "minutes": 60}).json()
        bob = crowd.person("bob", "198.51.100.3")
        assert _post(bob, f"/api/tournaments/{real['id']}/join").status_code == 200
        listing = first.get("/api/tournaments").json()
        assert [t["name"] for t in listing["featured"]] == ["Sunday cup"]
        # none has been started by a look yet: all scheduled, the featured first, then the most players
        assert [t["name"] for t in listing["scheduled"][:2]] == ["Sunday cup", "Real arena"]
        spam = [t for t in listing["scheduled"] if t["name"].startswith("Spam")]
        by_creator = Counter(t["creator"] for t in spam)
        assert max(by_creator.values()) <= policy.list_per_creator
        by_group = Counter(int(t["creator"][4:]) % 4 for t in spam)
        assert len(spam) <= 4 * policy.list_per_group and max(by_group.values()) <= policy.list_per_group


def test_one_address_group_cannot_fill_a_tournament_and_the_creator_keeps_a_seat(db: str) -> None:
    """Issue 51, finding 5: 200 puppets joined one tournament in 20.8 s; its creator got
    ``tournament_full``."""
    app = _app(db, policy=replace(MANUAL, max_players=8))
    with TestClient(app) as first, ExitStack() as stack:
        crowd = Crowd(app, first, stack)
        boss = crowd.person("boss", "203.0.113.9")
        t = _post(boss, "/api/tournaments", {"name": "Puppet show", "clock": 3}).json()
        per_pair = int(BUDGETS["tournament.join"].per_pair or 0)
        codes = []
        puppets = [crowd.person(f"puppet{i}", "203.0.113.9") for i in range(10)]
        for c in puppets:
            r = _post(c, f"/api/tournaments/{t['id']}/join")
            codes.append((r.status_code, r.json().get("error")))
        assert codes[:per_pair] == [(200, None)] * per_pair
        assert set(codes[per_pair:]) == {(429, "tournament_join_quota")}
        # a withdrawal and a return take no new seat: no budget asked
        assert _post(puppets[0], f"/api/tournaments/{t['id']}/withdraw").status_code == 200
        assert _post(puppets[0], f"/api/tournaments/{t['id']}/join").status_code == 200
        # others, each from their own address, fill every seat but the creator's
        others = [crowd.person(f"other{i}", f"198.51.100.{i + 10}") for i in range(8)]
        for c in others[: 8 - 1 - per_pair]:
            assert _post(c, f"/api/tournaments/{t['id']}/join").status_code == 200
        r = _post(others[-1], f"/api/tournaments/{t['id']}/join")
        assert r.status_code == 409 and r.json()["error"] == "tournament_full"
        # the creator, from the puppets' own address, still joins: their seat was kept
        r = _post(boss, f"/api/tournaments/{t['id']}/join")
        assert r.status_code == 200 and r.json()["players"] == 8


def test_a_game_of_fewer_than_two_plies_gives_no_points_and_frees_its_players(db: str) -> None:
    """Issue 51, finding 11: 64 points from 17 games resigned at ply 0 in 40 s."""
    app = _app(db)
    svc: TournamentService = app.state.tournaments
    with TestClient(app) as first, ExitStack() as stack:
        crowd = Crowd(app, first, stack)
        ada, bob = crowd.person("ada", "198.51.100.2"), crowd.person("bob", "198.51.100.3")
        t = _post(ada, "/api/tournaments", {"name": "Quick", "clock": 3, "minutes": 30}).json()
        for c in (ada, bob):
            _post(c, f"/api/tournaments/{t['id']}/join")
        svc.tick()
        (p,) = _playing(app, t["id"])
        app.state.service.resign(p.game_id, frozenset({"north"}))  # at ply 0
        page = ada.get(f"/api/tournaments/{t['id']}").json()
        assert [s["score"] for s in page["standings"]] == [0, 0]
        assert page["games"][0]["result"] == "south" and page["games"][0]["south_points"] == 0
        with svc.storage.engine.connect() as conn:
            busy = conn.execute(text("SELECT count(*) FROM tournament_slots WHERE slot = 'busy'")).scalar_one()
        assert busy == 0 and page["me"]["game"] is None
        # both are free: a third player is paired with one of them at the next look
        cyd = crowd.person("cyd", "198.51.100.4")
        _post(cyd, f"/api/tournaments/{t['id']}/join")
        for c in (ada, bob):
            c.get(f"/api/tournaments/{t['id']}")
        svc.tick()
        (q,) = _playing(app, t["id"])
        assert crowd.id("cyd") in (q.south, q.north)
        # a game of two plies counts
        _play_two_plies(first, app, q.game_id)
        app.state.service.resign(q.game_id, frozenset({"north"}))
        winner = q.south
        standings = ada.get(f"/api/tournaments/{t['id']}").json()["standings"]
        names = {crowd.id(n): n for n in ("ada", "bob", "cyd")}
        assert standings[0]["username"] == names[winner] and standings[0]["score"] == 2


def _block(app: Any, blocker: int, blocked: int) -> None:
    with app.state.service.storage.engine.begin() as conn:
        conn.execute(text("INSERT INTO blocks (blocker, blocked, at) VALUES (:a, :b, 0)"), {"a": blocker, "b": blocked})


def test_an_arena_never_pairs_two_players_when_one_blocked_the_other(db: str) -> None:
    app = _app(db)
    svc: TournamentService = app.state.tournaments
    with TestClient(app) as first, ExitStack() as stack:
        crowd = Crowd(app, first, stack)
        ada, bob = crowd.person("ada", "198.51.100.2"), crowd.person("bob", "198.51.100.3")
        _block(app, crowd.id("bob"), crowd.id("ada"))
        t = _post(ada, "/api/tournaments", {"name": "Apart", "clock": 3, "minutes": 30}).json()
        for c in (ada, bob):
            _post(c, f"/api/tournaments/{t['id']}/join")
        svc.tick()
        assert _playing(app, t["id"]) == []  # the only two free players: they wait
        cyd = crowd.person("cyd", "198.51.100.4")
        _post(cyd, f"/api/tournaments/{t['id']}/join")
        svc.tick()
        (p,) = _playing(app, t["id"])
        assert crowd.id("cyd") in (p.south, p.north)


def test_a_swiss_round_pairs_a_blocked_pair_only_when_it_must(db: str) -> None:
    app = _app(db)
    svc: TournamentService = app.state.tournaments
    with TestClient(app) as first, ExitStack() as stack:
        crowd = Crowd(app, first, stack)
        names = ["ada", "bob", "cyd", "dee"]
        clients = [crowd.person(n, f"198.51.100.{i + 2}") for i, n in enumerate(names)]
        ids = [crowd.id(n) for n in names]  # equal ratings: ranked by account
        _block(app, ids[0], ids[2])  # round 1 would pair 1-3 and 2-4
        t = _post(clients[0], "/api/tournaments", {"name": "Swiss", "clock": 3, "kind": "swiss", "rounds": 3}).json()
        for c in clients:
            _post(c, f"/api/tournaments/{t['id']}/join")
        svc.tick()
        pairs = {frozenset((p.south, p.north)) for p in _playing(app, t["id"])}
        assert pairs == {frozenset((ids[0], ids[3])), frozenset((ids[1], ids[2]))}


def test_a_swiss_round_is_computed_outside_the_tournaments_lock_and_checked_before_it_is_written(
    db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 51, finding 13: each pairing took 0.7-3 s inside the tournament's row lock (on SQLite,
    the database's one writer).  While the round is computed another writer changes the
    tournament at once (a player withdraws); the round then computed is not written: it is
    computed again from the new standings."""
    app = _app(db)
    svc: TournamentService = app.state.tournaments
    url = resolve_db_url(db)
    calls: list[int] = []
    original = swiss.pair_round

    def meanwhile(players: Any, round_no: int, *args: Any, **kwargs: Any) -> Any:
        calls.append(len(players))
        if len(calls) == 1:  # another process writes while this one computes: no lock in its way
            other = create_engine(url, connect_args={"timeout": 1} if url.startswith("sqlite") else {})
            try:
                with other.begin() as conn:
                    if not url.startswith("sqlite"):
                        conn.execute(text("SET LOCAL lock_timeout = '1s'"))
                    conn.execute(text("UPDATE tournaments SET name = name WHERE id = :t"), {"t": tid})
                    conn.execute(
                        text("UPDATE tournament_players SET withdrawn = 1 WHERE tournament = :t AND account = :a"),
                        {"t": tid, "a": ids[3]},
                    )
            finally:
                other.dispose()
        return original(players, round_no, *args, **kwargs)

    with TestClient(app) as first, ExitStack() as stack:
        crowd = Crowd(app, first, stack)
        names = ["ada", "bob", "cyd", "dee"]
        clients = [crowd.person(n, f"198.51.100.{i + 2}") for i, n in enumerate(names)]
        ids = [crowd.id(n) for n in names]
        t = _post(clients[0], "/api/tournaments", {"name": "Swiss", "clock": 3, "kind": "swiss", "rounds": 3}).json()
        tid = t["id"]
        for c in clients:
            _post(c, f"/api/tournaments/{tid}/join")
        monkeypatch.setattr(swiss, "pair_round", meanwhile)
        svc._pair(tid)
        assert calls == [4, 3]  # computed again after the withdrawal
        with svc.storage.engine.connect() as conn:
            rows = conn.execute(
                text("SELECT south, north FROM tournament_pairings WHERE tournament = :t"), {"t": tid}
            ).all()
        seated = {a for r in rows for a in r if a is not None}
        assert len(rows) == 2 and ids[3] not in seated  # one game and a bye, without dee


ROUTES = {
    ("/api/tournaments", "GET"): (),
    ("/api/tournaments", "POST"): ("tournament.create",),
    ("/api/tournaments/{id}", "GET"): (),
    ("/api/tournaments/{id}/join", "POST"): ("tournament.join",),
    ("/api/tournaments/{id}/withdraw", "POST"): (),
    ("/api/tournaments/{id}/feature", "POST"): (),
    ("/api/tournaments/{id}/berserk", "POST"): (),
    # the tournament's chat (issue 52): the game chat's budgets
    ("/api/tournaments/{id}/chat", "GET"): (),
    ("/api/tournaments/{id}/chat", "POST"): ("chat.message",),
    ("/api/tournaments/{id}/chat/report", "POST"): ("chat.report",),
}


def test_every_tournament_route_declares_what_it_costs(db: str) -> None:
    app = _app(db)
    with TestClient(app):  # its lifespan closes the database it opened
        routes = list(app.routes)
    found = {}
    for route in routes:
        path = getattr(route, "path", "")
        if not path.startswith("/api/tournaments"):
            continue
        d = declared(route.endpoint)
        assert d is not None, path
        for method in route.methods - {"HEAD"}:
            assert method in d.kinds, (path, method)
            found[path, method] = d.kinds[method]
            if not d.kinds[method]:
                assert d.why[method], (path, method)
    assert {k: v for k, v in found.items() if k in ROUTES} == ROUTES
    assert set(found) - set(ROUTES) <= {("/api/tournaments/{id}/{what}", "POST")}


def test_with_its_budgets_at_zero_creation_and_joining_are_refused_and_change_nothing(db: str) -> None:
    none = zeroed()
    app = _app(db, {**BUDGETS, "tournament.join": none["tournament.join"]})
    with TestClient(app) as first, ExitStack() as stack:
        crowd = Crowd(app, first, stack)
        ada, bob = crowd.person("ada", "198.51.100.2"), crowd.person("bob", "198.51.100.3")
        t = _post(ada, "/api/tournaments", {"name": "Closed", "clock": 3}).json()
        r = _post(bob, f"/api/tournaments/{t['id']}/join")
        assert r.status_code == 429 and r.json()["error"] == "tournament_join_quota"
        assert _post(ada, f"/api/tournaments/{t['id']}/join").status_code == 200  # the creator's seat
        assert ada.get(f"/api/tournaments/{t['id']}").json()["players"] == 1
    app = _app(db, {**BUDGETS, "tournament.create": none["tournament.create"]})
    with TestClient(app) as first, ExitStack() as stack:
        cyd = Crowd(app, first, stack).person("cyd", "198.51.100.4")
        r = _post(cyd, "/api/tournaments", {"name": "Never", "clock": 3})
        assert r.status_code == 429 and r.json()["error"] == "too_many_tournaments"
        listing = cyd.get("/api/tournaments").json()
        assert "Never" not in [t["name"] for k in ("running", "scheduled") for t in listing[k]]


def test_a_database_of_an_older_version_gets_the_creators_group_column(db: str) -> None:
    app = _app(db)
    with TestClient(app) as first, ExitStack() as stack:
        storage = app.state.service.storage
        with storage.engine.begin() as conn:  # as written before issue 51
            conn.execute(text("ALTER TABLE tournaments DROP COLUMN creator_group"))
        svc = TournamentService(storage, app.state.accounts, app.state.service, policy=MANUAL)
        svc.service.on_finish.remove(svc.on_finish)  # the app's own service keeps its one hook
        ada = Crowd(app, first, stack).person("ada", "198.51.100.2")
        t = _post(ada, "/api/tournaments", {"name": "After the upgrade", "clock": 3}).json()
        with storage.engine.connect() as conn:
            group = conn.execute(text("SELECT creator_group FROM tournaments WHERE id = :t"), {"t": t["id"]})
            assert group.scalar_one() == "198.51.100.2"
