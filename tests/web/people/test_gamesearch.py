"""A player's games searched, paged and exported, and their statistics (issue 34, point 3), on SQLite and
PostgreSQL (the ``db`` fixture): every filter, the keyset pages, the position search and its bound, the
visibility of private games, the 400s naming the bad parameter, the ``.jgn`` export read back by the
records reader, and the statistics page's figures.  Issue 51, finding 3: the position index answers as
the replay does, its indexer's rounds, and one search per client at a time on the budget's own threads
(their load on a real server: test_gamesearch_load.py)."""

from __future__ import annotations

import calendar
import random
import threading
import time
import warnings
from typing import Any

import pytest
from argon2 import PasswordHasher
from sqlalchemy import text
from starlette.routing import Route

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from starlette.testclient import TestClient

from jericho_game.ai.analysis import accuracy, decisive, judge  # noqa: E402
from jericho_game.game import Game  # noqa: E402
from jericho_game.record import read_records  # noqa: E402
from jericho_game.web.accounts.accounts import CSRF_HEADER, AccountService  # noqa: E402
from jericho_game.web.common.budget import declared, zeroed  # noqa: E402
from jericho_game.web.learn.review import ReviewStore  # noqa: E402
from jericho_game.web.people import gamesearch, positionindex  # noqa: E402
from jericho_game.web.people.gamesearch import Filters, GameSearch, passes_through  # noqa: E402
from jericho_game.web.people.playerstats import PlayerStats  # noqa: E402
from jericho_game.web.people.positionindex import PositionIndexer  # noqa: E402
from jericho_game.web.round.gameroom import ClientError  # noqa: E402
from jericho_game.web.server import create_app  # noqa: E402
from jericho_game.web.storage.database import GameRecord, Storage, resolve_db_url  # noqa: E402

CHEAP = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
PW = "correct horse battery staple"


def day(text_: str, hour: int = 12) -> float:
    return float(calendar.timegm(time.strptime(text_, "%Y-%m-%d")) + hour * 3600)


def line(n: int, pick: int = 0, every: bool = False) -> list[str]:
    """``n`` legal moves from the start: the first legal move each time, ``pick`` at the first ply
    (``every``: at every ply)."""
    g = Game()
    out = []
    for i in range(n):
        legal = g.legal_moves()
        move = str(legal[pick if i == 0 or every else 0])
        g.play(move)
        out.append(move)
    return out


def put(storage: Storage, gid: str, **kw: Any) -> None:
    kw.setdefault("created_at", day("2026-01-01"))
    kw.setdefault("updated_at", kw["created_at"])
    storage.create(GameRecord(id=gid, **kw))


def seed(storage: Storage, accounts: AccountService) -> dict[str, int]:
    """Six games: five of ada's of every kind, one between bob and cy."""
    ids = {n: accounts.create_account(n, PW).id for n in ("ada", "bob", "cyd")}
    ada, bob, cy = ids["ada"], ids["bob"], ids["cyd"]
    online = {"mode": "online", "joined": True, "south_token": "s", "north_token": "n"}
    put(storage, "g1", **online, south_account=ada, north_account=bob, result="south", reason="seven", rated=True,
        public=True, clock=180.0, increment=2.0, created_at=day("2026-01-10"), moves=line(6))  # fmt: skip
    put(storage, "g2", **online, south_account=bob, north_account=ada, result="south", reason="resign",
        created_at=day("2026-01-11"), moves=line(4, pick=1))  # fmt: skip
    put(storage, "g3", mode="ai", ai_side="north", ai_level="easy", south_token="s", south_account=ada,
        result="draw", reason="exhaustion", clock=60.0, created_at=day("2026-01-12"), moves=line(2))  # fmt: skip
    put(storage, "g4", **online, south_account=ada, north_account=cy, per_move_days=3, clock=3 * 86400.0,
        created_at=day("2026-01-13"))  # fmt: skip
    put(storage, "g5", mode="hotseat", south_token="s", north_token="n", south_account=ada, north_account=ada,
        created_at=day("2026-01-14"))  # fmt: skip
    put(storage, "g6", **online, south_account=bob, north_account=cy, result="north", reason="time",
        rated=True, public=True, created_at=day("2026-01-15"))  # fmt: skip
    return ids


def ids(search: GameSearch, query: dict[str, str], viewer: int | None) -> list[str]:
    return [g["id"] for g in search.page("ada", query, viewer)["games"]]


def test_every_filter_chooses_the_games_it_names(db: str) -> None:
    storage = Storage(resolve_db_url(db))
    try:
        accounts = AccountService(storage, hasher=CHEAP)
        who = seed(storage, accounts)
        s = GameSearch(storage, accounts)
        me = who["ada"]
        assert ids(s, {}, me) == ["g5", "g4", "g3", "g2", "g1"]  # newest first, bob and cy's game left out
        expect = {
            "result=won": ["g1"],
            "result=lost": ["g2"],
            "result=draw": ["g3"],
            "result=ongoing": ["g5", "g4"],
            "side=north": ["g2"],
            "side=south": ["g4", "g3", "g1"],  # hot-seat games have no side of their own
            "rated=yes": ["g1"],
            "rated=no": ["g5", "g4", "g3", "g2"],
            "speed=blitz": ["g1"],  # 180 s + 40 x 2 s = 260 s
            "speed=bullet": ["g3"],
            "speed=correspondence": ["g4"],
            "speed=none": ["g5", "g2"],
            "speed=rapid": [],
            "opponent=bob": ["g2", "g1"],
            "opponent=BOB&result=won": ["g1"],
            "opponent=nobody": [],
            "mode=ai": ["g3"],
            "level=easy": ["g3"],
            "level=hard": [],
            "from=2026-01-11&to=2026-01-12": ["g3", "g2"],
            "from=2026-01-13": ["g5", "g4"],
            "to=2026-01-10": ["g1"],
        }
        for query, games in expect.items():
            q = dict(part.split("=") for part in query.split("&"))
            assert ids(s, q, me) == games, query
        # a stranger (and bob) sees only the public and rated games, as on the profile
        assert ids(s, {}, None) == ["g1"]
        assert ids(s, {}, who["bob"]) == ["g1"]
        page = s.page("ada", {"result": "won"}, me)
        g1 = page["games"][0]
        assert g1["opponent"] == {"kind": "human", "name": "bob"} and g1["result"] == "won" and g1["rated"]
        assert g1["speed"] == "blitz" and g1["moves"] == 3 and g1["side"] == "south"
        assert page["next"] is None and page["all_games"] is True
    finally:
        storage.close()


def test_pages_by_key_cover_every_game_once_even_with_equal_dates(db: str) -> None:
    storage = Storage(resolve_db_url(db))
    try:
        accounts = AccountService(storage, hasher=CHEAP)
        ada = accounts.create_account("ada", PW).id
        for i in range(7):  # three games share one date: the id breaks the tie
            put(storage, f"p{i}", mode="hotseat", south_account=ada, north_account=ada,
                created_at=day("2026-02-01") + (i // 3) * 0.25)  # fmt: skip
        s = GameSearch(storage, accounts)
        seen: list[str] = []
        query: dict[str, str] = {"limit": "3"}
        sizes = []
        while True:
            page = s.page("ada", query, ada)
            sizes.append(len(page["games"]))
            seen += [g["id"] for g in page["games"]]
            if page["next"] is None:
                break
            query = {"limit": "3", "before": page["next"]}
        assert sizes == [3, 3, 1]
        assert seen == ["p6", "p5", "p4", "p3", "p2", "p1", "p0"]
        # a game that starts after the first page was read does not shift the pages after it
        first = s.page("ada", {"limit": "3"}, ada)
        put(storage, "p9", mode="hotseat", south_account=ada, north_account=ada, created_at=day("2026-03-01"))
        assert ids(s, {"limit": "3", "before": first["next"]}, ada) == ["p3", "p2", "p1"]
    finally:
        storage.close()


def test_the_position_search_finds_the_games_that_passed_through_it(db: str, monkeypatch: Any) -> None:
    storage = Storage(resolve_db_url(db))
    try:
        accounts = AccountService(storage, hasher=CHEAP)
        ada = accounts.create_account("ada", PW).id
        a, b = line(8), line(8, pick=-1, every=True)
        seen_b = {Game.from_moves(b[:k]).position().split()[0] for k in range(9)}
        assert Game.from_moves(a[:4]).position().split()[0] not in seen_b  # b never has a's board after 4
        put(storage, "a", mode="hotseat", south_account=ada, moves=a, created_at=day("2026-01-01"))
        put(storage, "b", mode="hotseat", south_account=ada, moves=b, created_at=day("2026-01-02"))
        put(storage, "a2", mode="hotseat", south_account=ada, moves=a[:3], created_at=day("2026-01-03"))
        s = GameSearch(storage, accounts)
        after4 = Game.from_moves(a[:4]).position()
        after2 = Game.from_moves(a[:2]).position()
        assert ids(s, {"position": after4}, ada) == ["a"]  # a2 stopped one move short of it
        assert ids(s, {"position": after2}, ada) == ["a2", "a"]
        assert ids(s, {"position": Game().position()}, ada) == ["a2", "b", "a"]  # every game starts there
        assert ids(s, {"position": after4, "mode": "online"}, ada) == []
        assert passes_through(None, a, Game.from_moves(a).position())
        assert not passes_through(None, b, after4)
        # the bound on replays: with two games per request the scan goes on page after page
        monkeypatch.setattr(gamesearch, "MAX_SCAN", 2)
        page = s.page("ada", {"position": after4}, ada)
        assert page["games"] == [] and page["scan_limited"] and page["scanned"] == 2 and page["next"]
        page = s.page("ada", {"position": after4, "before": page["next"]}, ada)
        assert [g["id"] for g in page["games"]] == ["a"] and page["next"] is None
    finally:
        storage.close()


@pytest.mark.parametrize(
    ("query", "param"),
    [
        ({"result": "maybe"}, "result"),
        ({"side": "east"}, "side"),
        ({"rated": "1"}, "rated"),
        ({"speed": "hyper"}, "speed"),
        ({"mode": "solo"}, "mode"),
        ({"level": "x y"}, "level"),
        ({"limit": "0"}, "limit"),
        ({"limit": str(gamesearch.MAX_PAGE + 1)}, "limit"),
        ({"limit": "ten"}, "limit"),
        ({"from": "2026-13-01"}, "from"),
        ({"to": "yesterday"}, "to"),
        ({"from": "2026-02-02", "to": "2026-02-01"}, "from"),
        ({"position": "not a position"}, "position"),
        ({"position": "x" * 401}, "position"),
        ({"before": "soon~g1"}, "before"),
        ({"before": "1.5~bad id!"}, "before"),
    ],
)
def test_a_bad_filter_is_refused_naming_its_parameter(query: dict[str, str], param: str) -> None:
    with pytest.raises(ClientError) as err:
        Filters.parse(query)
    assert err.value.code == "bad_filter" and err.value.status == 400
    assert err.value.message.startswith(f"{param}: ")


def _csrf(c: TestClient) -> str:
    token: str = c.get("/api/account").json()["csrf"]
    return token


def test_the_http_routes_search_export_and_refuse(db: str, monkeypatch: Any) -> None:
    app = create_app(db, ai_processes=0, password_hasher=CHEAP)
    with TestClient(app) as c:
        storage = app.state.service.storage
        who = seed(storage, app.state.accounts)
        r = c.get("/api/players/ada/games", params={"result": "lost"})
        assert r.status_code == 200 and r.json()["games"] == []  # anonymous: g2 is private
        r = c.get("/api/players/ada/games.jgn")
        assert r.headers["x-games"] == "1" and len(read_records(r.text)) == 1  # g1 only, the public one
        r = c.post("/api/account/login", json={"username": "ada", "password": PW}, headers={CSRF_HEADER: _csrf(c)})
        assert r.status_code == 200, r.text
        r = c.get("/api/players/ada/games", params={"result": "lost"})
        assert [g["id"] for g in r.json()["games"]] == ["g2"]
        assert r.headers["cache-control"] == "private, no-store"
        r = c.get("/api/players/ada/games", params={"side": "east"})
        assert r.status_code == 400 and r.json()["error"] == "bad_filter" and "side" in r.json()["message"]
        assert c.get("/api/players/nobody/games").status_code == 404
        # the export: the same filters, oldest first, read back by the records reader
        r = c.get("/api/players/ada/games.jgn", params={"opponent": "bob"})
        assert r.status_code == 200 and r.headers["x-games"] == "2"
        assert 'filename="jericho-ada-games.jgn"' in r.headers["content-disposition"]
        records = read_records(r.text)
        assert [len(rec.moves) for rec in records] == [6, 4]  # g1 then g2
        assert [rec.result for rec in records] == ["1-0", "1-0"]
        assert c.get("/api/players/ada/games.jgn", params={"result": "nope"}).status_code == 400
        r = c.get("/api/players/ada/games.jgn", params={"mode": "online", "result": "won"})
        assert len(read_records(r.text)) == 1
        # the cap: the newest games the filters choose, still written oldest first
        monkeypatch.setattr(gamesearch, "MAX_EXPORT", 3)
        r = c.get("/api/players/ada/games.jgn")
        assert r.headers["x-games"] == "3"
        assert [len(rec.moves) for rec in read_records(r.text)] == [2, 0, 0]  # g3, g4, g5
        assert who["ada"] != who["bob"]


def test_the_statistics_count_results_ratings_openings_and_accuracy(db: str) -> None:
    storage = Storage(resolve_db_url(db))
    try:
        from jericho_game.web.accounts.ratings import Ratings

        accounts = AccountService(storage, hasher=CHEAP)
        Ratings(storage, accounts)  # its tables
        reviews = ReviewStore(storage)
        who = seed(storage, accounts)
        ada, bob = who["ada"], who["bob"]
        # a rated game between ada and bob in the history (as Ratings.process writes it)
        with storage.engine.begin() as conn:
            for at, before, after in ((day("2026-01-10"), 1500.0, 1562.5), (day("2026-01-20"), 1562.5, 1540.0)):
                conn.execute(
                    text(
                        "INSERT INTO rating_history (game_id, account_id, at, opponent_id, score, rating_before, "
                        "rating, rd, volatility) VALUES (:g, :a, :at, :o, 1, :b, :r, 200, 0.06)"
                    ),
                    {"g": f"h{int(at)}", "a": ada, "at": at, "o": bob, "b": before, "r": after},
                )
            # g1 reviewed: South's chances after each of its 6 moves
            moves = line(6)
            chances = [0.5, 0.55, 0.4, 0.45, 0.3, 0.8, 0.9]
            conn.execute(
                text(
                    "INSERT INTO reviews (game_id, status, sims, seconds, start_position, moves, total, next_ply, "
                    "attempts, error, created_at, updated_at) VALUES ('g1', 'done', 10, NULL, NULL, :m, 7, 7, 0, "
                    "NULL, 0, 0)"
                ),
                {"m": " ".join(moves)},
            )
            game = Game()
            for ply, chance in enumerate(chances):
                conn.execute(
                    text(
                        "INSERT INTO review_positions (game_id, ply, south, turn, best, exact, sims) "
                        "VALUES ('g1', :p, :s, :t, NULL, 0, 10)"
                    ),
                    {"p": ply, "s": chance, "t": game.turn.value},
                )
                if ply < len(moves):
                    game.play(moves[ply])
        stats = PlayerStats(storage, accounts, reviews)
        mine = stats.stats("ada", ada)
        assert mine["counted"] == 3  # finished, not hot-seat: g1, g2, g3
        assert mine["by_side"]["south"] == {"games": 2, "won": 1, "lost": 0, "draw": 1}
        assert mine["by_side"]["north"] == {"games": 1, "won": 0, "lost": 1, "draw": 0}
        assert mine["by_speed"] == {
            "blitz": {"games": 1, "won": 1, "lost": 0, "draw": 0},
            "bullet": {"games": 1, "won": 0, "lost": 0, "draw": 1},
            "none": {"games": 1, "won": 0, "lost": 1, "draw": 0},
        }
        assert mine["by_opponent"] == [
            {"kind": "human", "name": "bob", "games": 2, "won": 1, "lost": 1, "draw": 0},
            {"kind": "ai", "name": "easy", "games": 1, "won": 0, "lost": 0, "draw": 1},
        ]
        # first moves: South's and North's; g1 and g3 open alike (line(6)[:2] == line(2))
        assert mine["openings"][0] == {"moves": line(2), "games": 2, "won": 1, "lost": 0, "draw": 1}
        assert mine["openings"][1]["moves"] == line(4, pick=1)[:2]
        assert [p["rating"] for p in mine["rating"]] == [1562.5, 1540.0]
        rec = reviews.load("g1")
        assert rec is not None
        judged = judge(rec.moves, rec.positions)
        moment = decisive(rec.positions, len(rec.moves))
        expected = accuracy(judged, rec.positions, moment.ply if moment else None)["south"]
        assert expected is not None
        assert mine["accuracy"] == [{"game": "g1", "at": day("2026-01-10"), "accuracy": expected}]
        # a stranger's view counts the public and rated games only
        assert stats.stats("ada", None)["counted"] == 1
        with pytest.raises(ClientError):
            stats.stats("nobody")
    finally:
        storage.close()


# -- issue 51, finding 3: the position index, and searches held in their budgets ---------------------------


def _random_games(storage: Storage, me: int, n: int, seed_: int) -> list[str]:
    """``n`` games of ``me`` for the index's tests: random lengths (0-50 plies), a fifth from a start
    position of their own, about a third still playing, others over (won, lost, drawn, aborted), some
    private, three at a time on one date (the id breaks the tie); the positions they passed through."""
    rng = random.Random(seed_)
    seen: list[str] = []
    for i in range(n):
        start = None
        g = Game()
        if rng.random() < 0.2:
            for _ in range(rng.randrange(1, 12)):
                g.play(rng.choice(g.legal_moves()))
            start = g.position()
        moves: list[str] = []
        for _ in range(rng.randrange(0, 51)):
            if g.is_over():
                break
            moves.append(str(rng.choice(g.legal_moves())))
            g.play(moves[-1])
            if rng.random() < 0.1:
                seen.append(g.position())
        over = rng.random()
        result, reason = (
            (None, None)
            if over < 0.35
            else (None, "aborted")
            if over < 0.4
            else (rng.choice(("south", "north", "draw")), "resign")
        )
        mode = rng.choice(("online", "hotseat", "ai"))
        put(storage, f"r{i:03d}", mode=mode, start_position=start, south_account=me,
            north_account=me if mode == "hotseat" else None, result=result, reason=reason,
            public=rng.random() < 0.7, created_at=day("2026-03-01") + (i // 3) * 60.0, moves=moves)  # fmt: skip
    return seen


def _all_pages(s: GameSearch, query: dict[str, str], viewer: int | None) -> tuple[list[list[str]], int]:
    """Every page of a search (ids page by page, the last page's ``next`` None), and the replays."""
    pages, replayed, q = [], 0, dict(query)
    while True:
        page = s.page("ada", q, viewer)
        pages.append([g["id"] for g in page["games"]])
        replayed += page["scanned"]
        if page["next"] is None:
            return pages, replayed
        q = {**query, "before": page["next"]}


def _index_everything(storage: Storage) -> PositionIndexer:
    indexer = PositionIndexer(storage)
    while indexer.round():
        pass
    return indexer


def test_the_position_index_answers_as_the_replay_does(db: str, monkeypatch: Any) -> None:
    """Issue 51, point 2: the index's answer is the replay's, page by page, on 240 generated games (about
    a third still playing: those are still replayed), for positions the games passed through, the start,
    a position no game reached, with filters and as a stranger; the index replays only the games
    still playing."""
    monkeypatch.setattr(gamesearch, "MAX_SCAN", 10**6)  # the replay's answer, whole
    storage = Storage(resolve_db_url(db))
    try:
        accounts = AccountService(storage, hasher=CHEAP)
        ada = accounts.create_account("ada", PW).id
        seen = _random_games(storage, ada, 240, seed_=51)
        rng = random.Random(3)
        nowhere = Game.from_moves(line(28, pick=-1, every=True)).position()
        positions = [*rng.sample(seen, 14), Game().position(), nowhere]
        queries = [{"limit": "7"}, {"limit": "4", "result": "won"}, {"limit": "20", "mode": "online"}]
        s = GameSearch(storage, accounts)
        cases = [(p, q, v) for p in positions for q in queries for v in (ada, None)][::2]
        replay = {i: _all_pages(s, {**q, "position": p}, v) for i, (p, q, v) in enumerate(cases)}
        with storage.reader.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM positions_indexed")).scalar_one() == 0
        indexer = _index_everything(storage)
        with storage.reader.connect() as conn:
            over = conn.execute(text("SELECT count(*) FROM games WHERE result IS NOT NULL OR reason IS NOT NULL"))
            assert indexer.indexed == over.scalar_one() > 100
        playing = {g: 0 for g in ("ada", "stranger")}
        for i, (p, q, v) in enumerate(cases):
            pages, replayed = _all_pages(s, {**q, "position": p}, v)
            assert pages == replay[i][0], (p, q, v)
            assert replayed < replay[i][1] or replay[i][1] == 0, (p, q, v)  # the games over are not replayed
            playing["ada" if v else "stranger"] += replayed
        assert sum(len(page) for i in replay for page in replay[i][0]) > 200  # the cases found games
        assert 0 < playing["ada"]  # the games still playing were replayed, nothing else
    finally:
        storage.close()


def test_the_indexer_walks_in_bounded_rounds_catches_up_and_never_doubles(db: str, monkeypatch: Any) -> None:
    """The backfill goes :data:`positionindex.WALK` games a round; a game that ends later is indexed by
    the next round; two indexers (two processes) indexing the same games write each row once; a game
    still playing is never indexed."""
    monkeypatch.setattr(positionindex, "WALK", 4)
    storage = Storage(resolve_db_url(db))
    try:
        accounts = AccountService(storage, hasher=CHEAP)
        ada = accounts.create_account("ada", PW).id
        for i in range(9):
            put(storage, f"w{i}", mode="hotseat", south_account=ada, moves=line(6, pick=i),
                result="draw" if i != 4 else None, reason="agreed" if i != 4 else None,
                created_at=day("2026-01-01") + i, updated_at=day("2026-01-01") + i)  # fmt: skip
        one, two = PositionIndexer(storage), PositionIndexer(storage)
        assert [one.round(), one.round(), one.round()] == [True, True, False]  # 4 + 4 + 1 games walked
        assert one.indexed == 8 and one.caught_up
        # a second process's backfill finds everything indexed and writes nothing twice
        assert positionindex.index_games(storage, [f"w{i}" for i in range(9)]) == 0
        while two.round():
            pass
        assert two.indexed == 0

        def rows(game_id: str) -> int:
            with storage.reader.connect() as conn:
                return int(
                    conn.execute(
                        text("SELECT count(*) FROM game_positions WHERE game_id = :g"), {"g": game_id}
                    ).scalar_one()
                )

        assert rows("w0") == len(positionindex.positions_of(None, line(6))) == 7 and rows("w4") == 0
        with storage.engine.begin() as conn:  # w4 ends now
            conn.execute(text("UPDATE games SET result = 'south', reason = 'resign', updated_at = :t WHERE id = 'w4'"),
                         {"t": time.time()})  # fmt: skip
        assert one.round() is False and one.indexed == 9 and rows("w4") == 7
        if storage.postgres:  # one server process at a time indexes: another's turn is waited out
            put(storage, "w9", mode="hotseat", south_account=ada, moves=line(2), result="draw", reason="agreed",
                created_at=time.time())  # fmt: skip
            with storage.engine.connect() as conn:
                conn.execute(text("SELECT pg_advisory_lock(hashtext('jericho-position-index'))"))
                assert one.round() is False and rows("w9") == 0
                conn.execute(text("SELECT pg_advisory_unlock(hashtext('jericho-position-index'))"))
                conn.commit()
            assert one.round() is False and rows("w9") == 3
        s = GameSearch(storage, accounts)
        page = s.page("ada", {"position": Game.from_moves(line(6, pick=4)[:3]).position()}, ada)
        assert (
            [g["id"] for g in page["games"]] == ["w4"] and page["scanned"] == 0 and page["games"][0]["moves"] == 3
        )  # its plies from the index
    finally:
        storage.close()


def test_one_search_per_client_at_a_time_on_its_own_threads(tmp_path: Any, monkeypatch: Any) -> None:
    """Issue 51, point 2: a client's second search while its first runs is refused at once (429
    ``search_busy``), another client's is not, an export is its own budget; every search runs on the
    ``search`` budget's threads, never the shared pool; once done, the client may search again."""
    app = create_app(str(tmp_path / "g.sqlite3"), ai_processes=0, password_hasher=CHEAP)
    started, gate = threading.Event(), threading.Event()
    threads: list[str] = []
    real = GameSearch.page

    def slow(self: GameSearch, *args: Any) -> Any:
        threads.append(threading.current_thread().name)
        if not started.is_set():
            started.set()
            assert gate.wait(30)
        return real(self, *args)

    monkeypatch.setattr(GameSearch, "page", slow)
    first: dict[str, Any] = {}
    with TestClient(app, client=("10.0.0.1", 1000)) as a:
        seed(app.state.service.storage, app.state.accounts)
        t = threading.Thread(target=lambda: first.update(r=a.get("/api/players/ada/games")))
        t.start()
        try:
            assert started.wait(30)
            r = a.get("/api/players/ada/games", params={"result": "won"})
            assert r.status_code == 429 and r.json()["error"] == "search_busy", r.text
            assert a.get("/api/players/ada/stats").status_code == 429  # the statistics count as a search
            assert a.get("/api/players/ada/games.jgn").status_code == 200  # an export is its own budget
            b = TestClient(app, client=("10.0.0.2", 1000))
            assert b.get("/api/players/ada/games").status_code == 200  # another client: not refused
            assert not first  # the first search was still running all along
        finally:
            gate.set()
            t.join(30)
        assert first["r"].status_code == 200 and [g["id"] for g in first["r"].json()["games"]] == ["g1"]
        assert a.get("/api/players/ada/games").status_code == 200  # done: the client may search again
        assert threads and all(name.startswith("budget-search") for name in threads), threads
        assert app.state.budget.refused["search"] == 2


def test_the_routes_declare_their_budgets_and_are_refused_when_they_are_spent(tmp_path: Any) -> None:
    """Each route of games_routes declares what it costs, per method; with every budget at zero each is
    refused before anything is read (not even the player is looked up: no 404)."""
    app = create_app(str(tmp_path / "g.sqlite3"), ai_processes=0, password_hasher=CHEAP, budgets=zeroed())
    want = {"/api/players/{name}/games": "search", "/api/players/{name}/games.jgn": "export",
            "/api/players/{name}/stats": "search"}  # fmt: skip
    routes = {r.path: r for r in app.routes if isinstance(r, Route) and r.path in want}
    for path, kind in want.items():
        said = declared(routes[path].endpoint)
        assert said is not None and said.kinds["GET"] == said.kinds["HEAD"] == (kind,), path
    with TestClient(app) as c:
        for path in ("/api/players/nobody/games", "/api/players/nobody/games.jgn", "/api/players/nobody/stats"):
            r = c.get(path, params={"position": Game().position()})
            assert r.status_code == 429 and r.json()["error"] == "search_busy", (path, r.text)
