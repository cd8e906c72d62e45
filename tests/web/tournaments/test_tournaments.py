"""Tournaments (issue 34, point 2) in one process, on SQLite and PostgreSQL: creation and its
refusals, joining in advance, an arena's pairing, points and streaks written when each game ends,
berserk, a Swiss tournament's rounds with no repeat and its tie-breaks, and two pairing services
on one database (as two processes) never pairing a player twice."""

from __future__ import annotations

import threading
import time
import warnings
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

from argon2 import PasswordHasher
from sqlalchemy import text

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from starlette.testclient import TestClient

from jericho_game.web.accounts.accounts import CSRF_HEADER, AccountService  # noqa: E402
from jericho_game.web.round.rooms import GameService  # noqa: E402
from jericho_game.web.server import create_app  # noqa: E402
from jericho_game.web.storage.database import Storage, resolve_db_url  # noqa: E402
from jericho_game.web.tournaments.tournaments import TournamentPolicy, TournamentService  # noqa: E402
from tests.web.test_server import another  # noqa: E402

CHEAP = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
PW = "correct horse battery staple"
# no background ticks: the tests tick by hand
MANUAL = TournamentPolicy(tick=3600.0, stale=1.0)


def _app(db: str, policy: TournamentPolicy = MANUAL) -> Any:
    return create_app(db, ai_processes=0, password_hasher=CHEAP, tournament_policy=policy)


def _csrf(c: TestClient) -> str:
    token: str = c.get("/api/account").json()["csrf"]
    return token


def _signup(c: TestClient, name: str) -> None:
    r = c.post("/api/account/signup", json={"username": name, "password": PW}, headers={CSRF_HEADER: _csrf(c)})
    assert r.status_code == 201, r.text


def _post(c: TestClient, path: str, body: dict[str, Any] | None = None) -> Any:
    return c.post(path, json=body or {}, headers={CSRF_HEADER: _csrf(c)})


NAMES = ["ada", "bob", "cyd", "dee", "eve", "fay"]


@contextmanager
def _field(app: Any, n: int) -> Iterator[tuple[TestClient, ...]]:
    """``n`` visitors of ``app``, each from an address of its own (a tournament takes at most
    ``tournament.join``'s ``per_pair`` players from one address group)."""
    with TestClient(app) as first, ExitStack() as stack:
        yield (first, *(stack.enter_context(another(first, f"198.51.100.{i}")) for i in range(1, n)))


def _playing(app: Any, tid: str) -> list[Any]:
    with app.state.service.storage.engine.connect() as conn:
        return list(
            conn.execute(
                text("SELECT * FROM tournament_pairings WHERE tournament = :t AND status = 'playing'"), {"t": tid}
            ).all()
        )


def _play_two_plies(client: TestClient, app: Any, game_id: str) -> None:
    """South and North each place a piece (on the app's own event loop, the client's portal): a
    game of fewer than two plies gives no tournament points."""
    svc: GameService = app.state.service
    for side in ("south", "north"):
        move = str(svc.room(game_id).game.legal_moves()[0])
        change = client.portal.call(svc.move, game_id, frozenset({side}), move, None)  # type: ignore[union-attr]
        assert change.error is None, change.error


def _end(app: Any, game_id: str, loser: str, client: TestClient) -> None:
    """The game is played two plies, then ``loser`` resigns."""
    _play_two_plies(client, app, game_id)
    svc: GameService = app.state.service
    svc.resign(game_id, frozenset({loser}))


def test_creation_is_checked_and_limited(db: str) -> None:
    with _field(_app(db), 2) as (ada, anon):
        _signup(ada, "ada")
        assert _post(anon, "/api/tournaments", {"name": "Open", "clock": 3}).status_code == 401
        for bad, why in [
            ({"name": "x", "clock": 3}, "name"),
            ({"name": "Open", "clock": 0}, "clock"),
            ({"name": "Open", "clock": 3, "kind": "knockout"}, "kind"),
            ({"name": "Open", "clock": 3, "minutes": 0}, "minutes"),
            ({"name": "Open", "clock": 3, "kind": "swiss", "rounds": 99}, "rounds"),
            ({"name": "Open", "clock": 3, "kind": "swiss", "berserk": True}, "berserk"),
            ({"name": "Open", "clock": 3, "prize": 100}, "prize"),
            ({"name": "Open", "clock": 3, "starts_in": -5}, "starts_in"),
        ]:
            r = _post(ada, "/api/tournaments", bad)
            assert r.status_code == 400 and why in r.json()["message"], (bad, r.text)
        for i in range(3):
            assert _post(ada, "/api/tournaments", {"name": f"Open {i}", "clock": 3, "starts_in": 60}).status_code == 201
        r = _post(ada, "/api/tournaments", {"name": "Open 4", "clock": 3})
        assert r.status_code == 429 and r.json()["error"] == "too_many_tournaments"
        listing = ada.get("/api/tournaments").json()
        assert len(listing["scheduled"]) == 3 and listing["running"] == []
        assert ada.get("/api/tournaments/nope!").status_code == 404


def test_a_scheduled_arena_is_joined_in_advance_then_pairs_free_present_players(db: str) -> None:
    app = _app(db)
    with _field(app, 5) as clients:
        for c, n in zip(clients, NAMES, strict=False):
            _signup(c, n)
        ada = clients[0]
        t = _post(ada, "/api/tournaments", {"name": "Evening arena", "clock": 3, "minutes": 30, "starts_in": 1}).json()
        assert t["status"] == "scheduled" and t["kind"] == "arena"
        for c in clients[:4]:
            r = _post(c, f"/api/tournaments/{t['id']}/join")
            assert r.status_code == 200 and r.json()["me"]["joined"] is True
        svc: TournamentService = app.state.tournaments
        assert svc.tick() == [] and _playing(app, t["id"]) == []  # not started yet
        with svc.storage.engine.begin() as conn:  # the start time comes
            conn.execute(text("UPDATE tournaments SET starts_at = starts_at - 120 WHERE id = :t"), {"t": t["id"]})
        changes = svc.tick()
        playing = _playing(app, t["id"])
        assert len(playing) == 2 and len(changes) == 2
        paired = [p.south for p in playing] + [p.north for p in playing]
        assert len(set(paired)) == 4
        # each game is a real online game of the two accounts, joined, rated by default
        for p in playing:
            rec = app.state.service.storage.load(p.game_id)
            assert (rec.south_account, rec.north_account) == (p.south, p.north) and rec.joined and rec.rated
        # the player's page shows their game
        me = ada.get(f"/api/tournaments/{t['id']}").json()["me"]
        assert me["game"] in {p.game_id for p in playing}
        # another tick pairs nobody twice
        svc.tick()
        assert len(_playing(app, t["id"])) == 2
        # the fifth player joins late; alone free, they wait
        _post(clients[4], f"/api/tournaments/{t['id']}/join")
        svc.tick()
        assert len(_playing(app, t["id"])) == 2


def test_arena_points_streak_and_fire_are_written_when_games_end(db: str) -> None:
    app = _app(db)
    with _field(app, 4) as clients:
        for c, n in zip(clients, NAMES, strict=False):
            _signup(c, n)
        t = _post(clients[0], "/api/tournaments", {"name": "Blitz arena", "clock": 3, "minutes": 30}).json()
        for c in clients:
            _post(c, f"/api/tournaments/{t['id']}/join")
        svc: TournamentService = app.state.tournaments
        ada = app.state.accounts.find("ada").id
        for game_no in range(3):
            for c in clients:
                c.get(f"/api/tournaments/{t['id']}")  # the pages are open: present
            svc.tick()
            playing = _playing(app, t["id"])
            assert len(playing) == 2, game_no
            for p in playing:  # ada wins hers, the other game is won by South
                loser = "north" if p.south == ada else "south" if p.north == ada else "north"
                _end(app, p.game_id, loser, clients[0])
        standings = clients[0].get(f"/api/tournaments/{t['id']}").json()["standings"]
        top = standings[0]
        assert top["username"] == "ada" and top["games"] == 3
        assert top["score"] == 2 + 2 + 4 and top["fire"] is True  # the third win on fire counts double
        # each finished game was counted once: the points in the standings add up to the pairings'
        with svc.storage.engine.connect() as conn:
            total = conn.execute(
                text("SELECT sum(south_points + north_points) FROM tournament_pairings WHERE tournament = :t"),
                {"t": t["id"]},
            ).scalar_one()
        assert total == sum(s["score"] for s in standings)


def test_berserk_halves_the_clock_before_the_first_move_only(db: str) -> None:
    app = _app(db)
    with _field(app, 2) as (ada, bob):
        _signup(ada, "ada")
        _signup(bob, "bob")
        t = _post(ada, "/api/tournaments", {"name": "Berserk", "clock": 4, "minutes": 30, "berserk": True}).json()
        for c in (ada, bob):
            _post(c, f"/api/tournaments/{t['id']}/join")
        app.state.tournaments.tick()
        (p,) = _playing(app, t["id"])
        north = ada if p.north == app.state.accounts.find("ada").id else bob
        r = _post(north, f"/api/tournaments/{t['id']}/berserk", {"game": p.game_id})
        assert r.status_code == 200, r.text
        rec = app.state.service.storage.load(p.game_id)
        assert rec.north_time == 120 and rec.south_time <= 240
        r = _post(north, f"/api/tournaments/{t['id']}/berserk", {"game": "zzz"})
        assert r.status_code == 403
        games = north.get(f"/api/tournaments/{t['id']}").json()["games"]
        assert games[0]["berserk"] == {"south": False, "north": True}


class _Clock:
    """A wall clock the test moves by hand (the game clocks, the first move's time, the tournaments)."""

    def __init__(self) -> None:
        self.t = 1_900_000_000.0

    def __call__(self) -> float:
        return self.t


def _move(client: TestClient, app: Any, game_id: str, side: str) -> None:
    svc: GameService = app.state.service
    move = str(svc.room(game_id).game.legal_moves()[0])
    change = client.portal.call(svc.move, game_id, frozenset({side}), move, None)  # type: ignore[union-attr]
    assert change.error is None, change.error


def test_arena_clocks_berserked_or_not_wait_for_each_sides_first_move(db: str) -> None:
    """Issue 52: the pairing starts the game, not the clocks; a berserk halves a clock that still
    waits, and does not move the first move's countdown."""
    clock = _Clock()
    app = create_app(db, ai_processes=0, password_hasher=CHEAP, tournament_policy=MANUAL, clock=clock)
    with _field(app, 2) as (ada, bob):
        _signup(ada, "ada")
        _signup(bob, "bob")
        t = _post(ada, "/api/tournaments", {"name": "Bullet", "clock": 1, "minutes": 30, "berserk": True}).json()
        for c in (ada, bob):
            _post(c, f"/api/tournaments/{t['id']}/join")
        app.state.tournaments.tick()
        (p,) = _playing(app, t["id"])
        north = ada if p.north == app.state.accounts.find("ada").id else bob
        clock.t += 5  # the players reach the board
        st = ada.get(f"/api/games/{p.game_id}").json()
        assert st["clock"]["south"] == 60 and st["clock"]["north"] == 60 and st["clock"]["running"] is None
        assert st["first_move"]["side"] == "south" and st["first_move"]["left"] == 25
        assert _post(north, f"/api/tournaments/{t['id']}/berserk", {"game": p.game_id}).status_code == 200
        clock.t += 10
        _move(ada, app, p.game_id, "south")
        clock.t += 12
        st = ada.get(f"/api/games/{p.game_id}").json()
        # North's halved clock has not run while North had not moved
        assert st["clock"]["south"] == 60 and st["clock"]["north"] == 30 and st["clock"]["running"] is None
        assert st["first_move"] == {"side": "north", "left": 18, "limit": 30}
        _move(ada, app, p.game_id, "north")
        clock.t += 4
        st = ada.get(f"/api/games/{p.game_id}").json()
        assert st["clock"]["running"] == "south" and st["clock"]["south"] == 56 and st["clock"]["north"] == 30


def test_an_arena_game_whose_first_move_never_comes_is_aborted_for_no_points(db: str) -> None:
    clock = _Clock()
    app = create_app(db, ai_processes=0, password_hasher=CHEAP, tournament_policy=MANUAL, clock=clock)
    with _field(app, 2) as (ada, bob):
        _signup(ada, "ada")
        _signup(bob, "bob")
        t = _post(ada, "/api/tournaments", {"name": "Bullet", "clock": 1, "minutes": 30}).json()
        for c in (ada, bob):
            _post(c, f"/api/tournaments/{t['id']}/join")
        svc: TournamentService = app.state.tournaments
        svc.tick()
        (p,) = _playing(app, t["id"])
        with svc.storage.engine.begin() as conn:  # North comes with a streak of two wins
            conn.execute(
                text("UPDATE tournament_players SET streak = 2 WHERE tournament = :t AND account = :a"),
                {"t": t["id"], "a": p.north},
            )
        clock.t += 31  # South never moves: the sweep (or this flag: once either way) aborts the game
        app.state.service.flag(p.game_id)
        st = ada.get(f"/api/games/{p.game_id}").json()
        assert st["status"] == "over" and st["result"] is None and st["reason"] == "aborted"
        assert st["no_start"] == "south"
        svc.tick()
        page = ada.get(f"/api/tournaments/{t['id']}").json()
        assert page["games"][0]["status"] == "done" and page["games"][0]["result"] is None
        assert page["games"][0]["south_points"] == 0 and page["games"][0]["north_points"] == 0
        assert sum(s["score"] for s in page["standings"]) == 0
        with svc.storage.engine.connect() as conn:
            streaks: dict[int, int] = dict(
                conn.execute(
                    text("SELECT account, streak FROM tournament_players WHERE tournament = :t"), {"t": t["id"]}
                ).all()
            )
        assert streaks == {p.north: 2, p.south: 0}  # the one who was there keeps theirs


def test_a_swiss_tournament_plays_its_rounds_without_repeats_and_ranks_by_tie_breaks(db: str) -> None:
    app = _app(db)
    with _field(app, 5) as clients:
        for c, n in zip(clients, NAMES, strict=False):
            _signup(c, n)
        t = _post(clients[0], "/api/tournaments", {"name": "Swiss", "clock": 3, "kind": "swiss", "rounds": 3}).json()
        for c in clients:
            _post(c, f"/api/tournaments/{t['id']}/join")
        svc: TournamentService = app.state.tournaments
        met: set[tuple[int, int]] = set()
        for rnd in range(1, 4):
            svc.tick()
            playing = _playing(app, t["id"])
            assert len(playing) == 2, rnd  # five players: two games and a bye
            assert svc.show(t["id"])["round"] == rnd
            svc.tick()  # the round is not over: nothing new
            assert len(_playing(app, t["id"])) == 2
            for p in playing:
                pair = (min(p.south, p.north), max(p.south, p.north))
                assert pair not in met
                met.add(pair)
                _end(app, p.game_id, "north", clients[0])
        svc.tick()
        page = clients[0].get(f"/api/tournaments/{t['id']}").json()
        assert page["status"] == "finished" and page["tie_breaks"] == ["buchholz", "sonneborn_berger"]
        st = page["standings"]
        assert sum(s["score"] for s in st) == 3 * 3  # two games and one bye a round
        keys = [(s["score"], s["buchholz"], s["sonneborn_berger"]) for s in st]
        assert keys == sorted(keys, reverse=True)
        with svc.storage.engine.connect() as conn:
            byes = conn.execute(
                text("SELECT south FROM tournament_pairings WHERE tournament = :t AND north IS NULL"), {"t": t["id"]}
            ).all()
        assert len(byes) == 3 and len({b[0] for b in byes}) == 3  # nobody gets two byes


def test_two_pairing_services_on_one_database_never_pair_a_player_twice(db: str) -> None:
    """Two services on their own engines (as two processes) tick the same arena at the same moments."""
    app = _app(db)
    with _field(app, 6) as clients:
        for c, n in zip(clients, NAMES, strict=False):
            _signup(c, n)
        t = _post(clients[0], "/api/tournaments", {"name": "Race", "clock": 3, "minutes": 30}).json()
        for c in clients:
            _post(c, f"/api/tournaments/{t['id']}/join")
        url = resolve_db_url(db)
        others = []
        for _ in range(2):
            storage = Storage(url)
            accounts = AccountService(storage, hasher=CHEAP)
            service = GameService(storage)
            service.account_name = accounts.name_of
            others.append(TournamentService(storage, accounts, service, policy=MANUAL))
        for rnd in range(4):
            go = threading.Barrier(2)
            errors: list[BaseException] = []

            def tick(s: TournamentService, go: threading.Barrier = go, errors: list[BaseException] = errors) -> None:
                go.wait()
                try:
                    s.tick()
                except BaseException as exc:  # noqa: BLE001 - reported below
                    errors.append(exc)

            threads = [threading.Thread(target=tick, args=(s,)) for s in others]
            for th in threads:
                th.start()
            for th in threads:
                th.join(60)
            assert not errors
            playing = _playing(app, t["id"])
            seated = [p.south for p in playing] + [p.north for p in playing]
            assert len(seated) == len(set(seated)) >= 4, rnd  # two who just met may wait for others
            for p in playing:
                _end(app, p.game_id, "south", clients[0])
            for c in clients:
                c.get(f"/api/tournaments/{t['id']}")
        for s in others:
            s.service.close()
            s.storage.close()
        time.sleep(0)


def test_a_pairing_left_without_its_game_by_a_killed_process_gets_it_from_the_next_look(db: str) -> None:
    app = _app(db)
    with _field(app, 4) as clients:
        for c, n in zip(clients, NAMES, strict=False):
            _signup(c, n)
        t = _post(clients[0], "/api/tournaments", {"name": "Crash", "clock": 3, "kind": "swiss", "rounds": 2}).json()
        for c in clients:
            _post(c, f"/api/tournaments/{t['id']}/join")
        svc: TournamentService = app.state.tournaments
        made = svc._pair(t["id"])  # the pairing committed, then the process died before making the games
        assert len(made) == 2 and _playing(app, t["id"]) == []
        svc.tick()  # too soon: the pairing may still be in the hands of a live process
        assert _playing(app, t["id"]) == []
        time.sleep(svc.policy.stale + 0.1)
        svc.tick()
        playing = _playing(app, t["id"])
        assert {(p.south, p.north) for p in playing} == {(m[1], m[2]) for m in made}  # the same round-1 pairs
        for p in playing:
            assert app.state.service.storage.load(p.game_id).joined
        assert svc.show(t["id"])["round"] == 1


def test_an_admin_features_a_tournament_on_the_home_page(db: str) -> None:
    app = _app(db)
    with _field(app, 2) as (ada, root):
        _signup(ada, "ada")
        _signup(root, "root")
        app.state.accounts.set_admin("root", True)
        t = _post(ada, "/api/tournaments", {"name": "Sunday arena", "clock": 3, "starts_in": 30}).json()
        r = _post(ada, f"/api/tournaments/{t['id']}/feature", {"featured": True})
        assert r.status_code == 403 and r.json()["error"] == "not_admin"
        assert _post(root, f"/api/tournaments/{t['id']}/feature", {"featured": "yes"}).status_code == 400
        assert _post(root, f"/api/tournaments/{t['id']}/feature", {"featured": True}).json()["featured"] is True
        listing = ada.get("/api/tournaments").json()
        assert [x["name"] for x in listing["featured"]] == ["Sunday arena"]
        # the home page lists the lobby's tournaments (static/lobby-tournaments.js)
        assert 'id="lobby-tournaments"' in ada.get("/").text
