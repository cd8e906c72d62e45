"""The tournament page's data (issue 52, points 2 and 3), on SQLite and PostgreSQL: the countdowns
to the start and to the end, the podium of a finished tournament, and standings with the players'
ratings as they are now, each game's points with its berserk and double (on fire) marks."""

from __future__ import annotations

from sqlalchemy import text

from jericho_game.web.tournaments.tournaments import TournamentService
from tests.web.tournaments.test_tournaments import _app, _end, _field, _playing, _post, _signup


def test_the_countdowns_to_the_start_and_to_the_end(db: str) -> None:
    app = _app(db)
    with _field(app, 1) as (ada,):
        _signup(ada, "ada")
        t = _post(ada, "/api/tournaments", {"name": "Later", "clock": 3, "minutes": 45, "starts_in": 10}).json()
        page = ada.get(f"/api/tournaments/{t['id']}").json()
        assert 599 <= page["starts_in"] <= 600
        assert 45 * 60 + 599 <= page["ends_in"] <= 45 * 60 + 600  # counted from now, as starts_in
        swiss = _post(ada, "/api/tournaments", {"name": "Rounds", "clock": 3, "kind": "swiss"}).json()
        assert ada.get(f"/api/tournaments/{swiss['id']}").json()["ends_in"] is None  # a Swiss ends with its rounds


def test_standings_show_live_ratings_and_each_games_points_and_marks(db: str) -> None:
    app = _app(db)
    with _field(app, 2) as (ada, bob):
        _signup(ada, "ada")
        _signup(bob, "bob")
        t = _post(ada, "/api/tournaments", {"name": "Marks", "clock": 3, "minutes": 30, "berserk": True}).json()
        for c in (ada, bob):
            _post(c, f"/api/tournaments/{t['id']}/join")
        svc: TournamentService = app.state.tournaments
        svc.tick()
        (p,) = _playing(app, t["id"])
        ada_id = app.state.accounts.find("ada").id
        # the game page offers berserk (the game names its tournament, which allows it)
        assert ada.get(f"/api/games/{p.game_id}").json()["tournament"]["berserk"] is True
        assert _post(ada, f"/api/tournaments/{t['id']}/berserk", {"game": p.game_id}).status_code == 200
        _end(app, p.game_id, "north" if p.south == ada_id else "south", ada)  # ada wins
        with svc.storage.engine.begin() as conn:  # ada's rating moved since she joined (another game)
            conn.execute(text("UPDATE accounts SET rating = 1806 WHERE id = :a"), {"a": ada_id})
        st = {s["username"]: s for s in ada.get(f"/api/tournaments/{t['id']}").json()["standings"]}
        assert st["ada"]["rating"] == 1806 and st["bob"]["rating"] == 1500
        # a win of two plies: 2 points, berserked (its extra point needs 7 plies), not on fire
        assert st["ada"]["sheet"] == [{"points": 2, "result": "win", "berserk": True, "double": False}]
        assert st["bob"]["sheet"] == [{"points": 0, "result": "loss", "berserk": False, "double": False}]
        assert st["ada"]["streak"] == 1 and st["bob"]["streak"] == 0


def test_a_finished_tournament_has_its_podium(db: str) -> None:
    app = _app(db)
    with _field(app, 3) as (ada, bob, cyd):
        for c, n in ((ada, "ada"), (bob, "bob"), (cyd, "cyd")):
            _signup(c, n)
        t = _post(ada, "/api/tournaments", {"name": "Podium", "clock": 3, "minutes": 30}).json()
        for c in (ada, bob, cyd):
            _post(c, f"/api/tournaments/{t['id']}/join")
        svc: TournamentService = app.state.tournaments
        svc.tick()
        (p,) = _playing(app, t["id"])
        ada_id = app.state.accounts.find("ada").id
        winner_side = "south" if p.south == ada_id else "north"
        loser = "north" if winner_side == "south" else "south"
        _end(app, p.game_id, loser, ada)
        assert ada.get(f"/api/tournaments/{t['id']}").json()["podium"] == []  # not before the end
        with svc.storage.engine.begin() as conn:  # its half hour has passed
            conn.execute(text("UPDATE tournaments SET starts_at = starts_at - 3600 WHERE id = :t"), {"t": t["id"]})
        svc.tick()
        for q in _playing(app, t["id"]):  # a game paired meanwhile ends; then the arena does
            _end(app, q.game_id, "north", ada)
        svc.tick()
        page = ada.get(f"/api/tournaments/{t['id']}").json()
        assert page["status"] == "finished"
        podium = page["podium"]
        assert [x["rank"] for x in podium] == [1, 2, 3]
        assert podium[0]["username"] == page["standings"][0]["username"]
        assert [x["score"] for x in podium] == [s["score"] for s in page["standings"][:3]]
        assert set(podium[0]) >= {"rank", "username", "score", "games", "wins", "rating"}
