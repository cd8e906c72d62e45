"""The timeline of followed players (issue 52, as lichess's timeline), on SQLite and PostgreSQL:
games finished, tournaments won and best puzzle streaks of the players one follows, newest first,
bounded, a block hiding the other player, anonymous refused.  The facts are written straight into
the tables that record them (games, tournaments, puzzle_streaks): the timeline only reads them."""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import insert, text

from jericho_game.web.learn.puzzles import puzzle_streaks
from jericho_game.web.people.people import follows_table
from jericho_game.web.people.timeline import DAYS, LIMIT, MIN_STREAK
from jericho_game.web.storage.database import games_table
from jericho_game.web.tournaments.tournaments import players_table, tournaments_table
from tests.web.people.test_people import _app, _post, _signup
from tests.web.test_server import visitors

DAY = 86400.0


def _ids(app: Any, *names: str) -> list[int]:
    return [int(app.state.accounts.find(n).id) for n in names]


def _game(
    app: Any, gid: str, south: int | None, north: int | None, result: str, at: float, mode: str = "online"
) -> None:
    row = {
        "id": gid,
        "created_at": at - 60,
        "updated_at": at,
        "mode": mode,
        "result": result,
        "reason": "seven",
        "south_account": south,
        "north_account": north,
        "joined": 1,
        "ai_level": "easy" if mode == "ai" else None,
    }
    with app.state.service.storage.engine.begin() as conn:
        conn.execute(insert(games_table).values(**row))


def _tournament(
    app: Any, tid: str, scores: dict[int, float], at: float, kind: str = "arena", status: str = "finished"
) -> None:
    with app.state.service.storage.engine.begin() as conn:
        conn.execute(
            insert(tournaments_table).values(
                id=tid,
                kind=kind,
                name=f"Cup {tid}",
                creator=next(iter(scores)),
                created_at=at - 3600,
                starts_at=at - 3000,
                minutes=30,
                rounds=3,
                round=0,
                clock=3.0,
                rated=1,
                berserk=0,
                featured=0,
                status=status,
                ended_at=at if status == "finished" else None,
            )
        )
        for account, score in scores.items():
            conn.execute(
                insert(players_table).values(
                    tournament=tid, account=account, joined_at=at - 3000, rating=1500.0, score=score, games=3
                )
            )


def _streak(app: Any, account: int, best: int, at: float) -> None:
    with app.state.service.storage.engine.begin() as conn:
        conn.execute(insert(puzzle_streaks).values(player=f"account:{account}", best=best, at=at))


def _timeline(c: Any) -> list[dict[str, Any]]:
    r = c.get("/api/people/timeline")
    assert r.status_code == 200, r.text
    events: list[dict[str, Any]] = r.json()["events"]
    return events


def test_followed_players_events_newest_first(db: str) -> None:
    app = _app(db)
    with visitors(app, 3) as (ada, bob, eve):
        for c, n in ((ada, "ada"), (bob, "bob"), (eve, "eve")):
            _signup(c, n)
        a, b, e = _ids(app, "ada", "bob", "eve")
        assert _timeline(ada) == []  # follows nobody yet
        now = time.time()
        _game(app, "g-old", b, e, "south", now - (DAYS + 1) * DAY)  # too old
        _game(app, "g-bob-won", b, e, "south", now - 300)
        _game(app, "g-ai", None, b, "south", now - 200, mode="ai")  # bob lost to the AI
        _game(app, "g-eve-only", e, a, "draw", now - 100)  # eve is not followed
        _game(app, "g-playing", b, e, "south", now - 50)
        with app.state.service.storage.engine.begin() as conn:  # a game still going has no result
            conn.execute(games_table.update().where(games_table.c.id == "g-playing").values(result=None))
        _tournament(app, "t-bob", {b: 12.0, e: 8.0}, now - 400)  # bob won
        _tournament(app, "t-eve", {e: 12.0, b: 8.0}, now - 150)  # bob second: not news
        _tournament(app, "t-tie", {e: 5.0, b: 5.0}, now - 160)  # tied: eve's higher rating ranks her first
        _tournament(app, "t-tie2", {a: 4.0, b: 4.0}, now - 180)  # tied: ada's lower rating ranks bob first
        with app.state.service.storage.engine.begin() as conn:
            conn.execute(text("UPDATE accounts SET rating = 1800 WHERE id = :e"), {"e": e})
            conn.execute(text("UPDATE accounts SET rating = 1400 WHERE id = :a"), {"a": a})
        _tournament(app, "t-going", {b: 9.0}, now - 170, status="running")
        _streak(app, b, 9, now - 250)
        _streak(app, e, 20, now - 240)  # eve's: not followed
        assert _timeline(ada) == []  # still follows nobody: others' events are not shown
        assert _post(ada, "/api/people/follow", {"username": "bob", "follow": True}).status_code == 200
        events = _timeline(ada)
        assert [(x["type"], x.get("game") or x.get("tournament") or x.get("best")) for x in events] == [
            ("tournament", "t-tie2"),
            ("game", "g-ai"),
            ("streak", 9),
            ("game", "g-bob-won"),
            ("tournament", "t-bob"),
        ]
        won = events[3]
        assert won["players"] == {"south": "bob", "north": "eve"} and won["result"] == "south"
        assert won["link"] == "/g/g-bob-won" and won["followed"] == ["bob"]
        assert events[1]["ai"] == "easy" and events[1]["players"] == {"south": None, "north": "bob"}
        assert events[4]["player"] == "bob" and events[4]["name"] == "Cup t-bob"
        assert events[4]["link"] == "/tournaments/t-bob"
        assert [x["at"] for x in events] == sorted((x["at"] for x in events), reverse=True)
        assert _timeline(bob) == []  # bob follows nobody: ada's follow is not his


def test_a_short_streak_is_not_news_and_the_list_is_bounded(db: str) -> None:
    app = _app(db)
    with visitors(app, 2) as (ada, bob):
        _signup(ada, "ada")
        _signup(bob, "bob")
        a, b = _ids(app, "ada", "bob")
        _post(ada, "/api/people/follow", {"username": "bob", "follow": True})
        now = time.time()
        _streak(app, b, MIN_STREAK - 1, now - 10)
        assert _timeline(ada) == []
        for i in range(LIMIT + 10):
            _game(app, f"g{i:03d}", b, a, "north", now - 1000 + i)
        events = _timeline(ada)
        assert len(events) == LIMIT
        assert [x["game"] for x in events] == [f"g{i:03d}" for i in range(LIMIT + 9, 9, -1)]
        assert ada.get("/api/people/timeline").json()["limit"] == LIMIT


def test_a_block_hides_the_other_player(db: str) -> None:
    app = _app(db)
    with visitors(app, 4) as (ada, bob, eve, mal):
        for c, n in ((ada, "ada"), (bob, "bob"), (eve, "eve"), (mal, "mal")):
            _signup(c, n)
        a, b, e, m = _ids(app, "ada", "bob", "eve", "mal")
        now = time.time()
        _game(app, "g-bob-mal", b, m, "south", now - 30)
        _game(app, "g-bob-eve", b, e, "north", now - 20)
        _streak(app, e, 7, now - 10)
        _tournament(app, "t-mal", {m: 10.0}, now - 40)
        for name in ("bob", "eve", "mal"):
            _post(ada, "/api/people/follow", {"username": name, "follow": True})
        ids = [x.get("game") or x.get("tournament") or x.get("best") for x in _timeline(ada)]
        assert ids == [7, "g-bob-eve", "g-bob-mal", "t-mal"]
        # ada blocks mal: mal's tournament and bob's game against mal go
        assert _post(ada, "/api/people/block", {"username": "mal", "block": True}).status_code == 200
        assert [x.get("game") or x.get("best") for x in _timeline(ada)] == [7, "g-bob-eve"]
        # eve blocks ada: eve's events and bob's game against eve go too
        assert _post(eve, "/api/people/block", {"username": "ada", "block": True}).status_code == 200
        assert [x.get("game") for x in _timeline(ada)] == []
        # a follow row left beside a block (written straight into the table) still shows nothing of theirs
        with app.state.service.storage.engine.begin() as conn:
            conn.execute(insert(follows_table).values(follower=a, followed=e, at=now))
            conn.execute(insert(follows_table).values(follower=a, followed=m, at=now))
        assert _timeline(ada) == []
        assert [x.get("game") for x in _timeline(bob)] == []  # bob follows nobody


def test_anonymous_is_refused(db: str) -> None:
    with visitors(_app(db), 1) as (anon,):
        r = anon.get("/api/people/timeline")
        assert r.status_code == 401, r.text
        assert r.json() == {
            "error": "not_logged_in",
            "message": "log in first: the timeline shows the players you follow",
        }
        r = anon.get("/api/people/timeline", headers={"Accept-Language": "fr"})
        assert r.status_code == 401 and r.json()["message"] == (
            "Connectez-vous d'abord : le fil montre les joueurs que vous suivez"
        )
