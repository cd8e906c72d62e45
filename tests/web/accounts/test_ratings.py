"""Rating farming with sock puppets, round two (issue 33, item 8; web/accounts/ratings.py): with one
placement per side, 5 puppets took a new account from 1500 to 2001 in 11 s (15 of 20 games rated).
Now a rated game needs real play (5 placements each), a new account counts 5 rated games a day,
and provisional ratings are kept off the leaderboard."""

from __future__ import annotations

from typing import Any

from argon2 import PasswordHasher
from sqlalchemy import text

from jericho_game.web.accounts.accounts import AccountService
from jericho_game.web.accounts.glicko2 import Rating, update
from jericho_game.web.accounts.ratings import RatingPolicy, Ratings, placements
from jericho_game.web.round.rooms import GameService
from jericho_game.web.storage.database import Storage, resolve_db_url
from tests.web.accounts.test_accounts import both_move

CHEAP = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
POLICY = RatingPolicy()


def test_placements_count_each_sides_own_moves_not_forced_passes() -> None:
    assert placements([]) == (0, 0)
    assert placements(["5R@d2", "1G@d3", "4Y@c2"]) == (2, 1)
    assert placements(["5R@d2", "pass", "4Y@c2", "pass"]) == (2, 0)


def test_five_puppets_can_no_longer_take_a_new_account_to_2000_in_seconds(db: str) -> None:
    storage = Storage(resolve_db_url(db))
    try:
        accounts = AccountService(storage, hasher=CHEAP)
        svc = GameService(storage, creates_per_minute=10**6)
        ratings = Ratings(storage, accounts)
        svc.on_finish.append(ratings.queue)
        svc.account_name = accounts.name_of
        farmer = accounts.create_account("farmer", "the farmer's password")
        puppets = [accounts.create_account(f"puppet{i}", "a puppet's password") for i in range(5)]

        def play(puppet: Any, each: int) -> str:
            room, reply = svc.create({"mode": "online", "rated": True, "side": "south"}, account=farmer.id)
            svc.join(room.rec.id, reply["invite"], account=puppet.id)
            if each:
                both_move(svc, room.rec.id, each=each)
            assert svc.resign(room.rec.id, frozenset({"north"})).committed
            return room.rec.id

        # the audit's attack: games with one placement each, resigned at once: none is rated
        for k in range(10):
            play(puppets[k % 5], 1)
        ratings.process_all()
        prof = ratings.profile("farmer")
        assert prof["rating"] == 1500 and prof["rated_games"] == 0
        assert all(g["rated"] is False for g in prof["games"])
        assert {g["unrated"] for g in prof["games"]} == {
            f"too little play: a rated game counts once each side made {POLICY.min_placements} placements "
            "(South made 1, North 1)"
        }
        # real play, as fast as a script plays it: 10 more games, and a new account counts 5 a day
        for k in range(10):
            play(puppets[k % 5], POLICY.min_placements)
        ratings.process_all()
        prof = ratings.profile("farmer")
        assert prof["rated_games"] == POLICY.new_account_games_per_day == 5
        expect, theirs = Rating(), [Rating()] * 5
        for i in range(5):
            expect, theirs[i] = update(expect, [(theirs[i], 1.0)]), update(theirs[i], [(expect, 0.0)])
        assert prof["rating"] == round(expect.rating) < 1900 < 2000
        assert prof["provisional"] is True
        skipped = [g["unrated"] for g in prof["games"] if "unrated" in g and "new account" in g["unrated"]]
        assert skipped and all("farmer is a new account (under 7 days old)" in w for w in skipped)
        # provisional players are not on the leaderboard, however high their rating
        assert ratings.leaderboard() == []
        # an established account (a deviation of at most 110) is
        with storage.engine.begin() as conn:
            conn.execute(text("UPDATE accounts SET rd = 90 WHERE username = 'puppet0'"))
        assert [p["username"] for p in ratings.leaderboard()] == ["puppet0"]
    finally:
        storage.close()


def test_an_account_a_week_old_is_not_new(db: str) -> None:
    storage = Storage(resolve_db_url(db))
    try:
        accounts = AccountService(storage, hasher=CHEAP)
        svc = GameService(storage, creates_per_minute=10**6)
        ratings = Ratings(storage, accounts, policy=RatingPolicy(pair_games_per_day=100))
        svc.on_finish.append(ratings.queue)
        a = accounts.create_account("alice", "correct horse battery A")
        b = accounts.create_account("bob", "tr0ub4dor & 3 for B")
        with storage.engine.begin() as conn:
            conn.execute(text("UPDATE accounts SET created_at = created_at - :d"), {"d": 8 * 86400.0})
        for _ in range(POLICY.new_account_games_per_day + 2):
            room, reply = svc.create({"mode": "online", "rated": True, "side": "south"}, account=a.id)
            svc.join(room.rec.id, reply["invite"], account=b.id)
            both_move(svc, room.rec.id)
            assert svc.resign(room.rec.id, frozenset({"north"})).committed
        ratings.process_all()
        assert ratings.profile("alice")["rated_games"] == POLICY.new_account_games_per_day + 2
    finally:
        storage.close()


def test_an_established_account_counts_few_games_a_day_against_new_accounts(db: str) -> None:
    """Issue 51, finding 9 (the audit): an established account played 24 rated games against fresh
    puppets (3 each, the pair's daily limit) and every one counted: 1500 -> 2133.  Now an established
    account counts at most RatingPolicy.new_opponent_games_per_day rated games against new accounts
    in 24 hours; past them a game counts for the new account only, and the profile says why."""
    storage = Storage(resolve_db_url(db))
    try:
        accounts = AccountService(storage, hasher=CHEAP)
        svc = GameService(storage, creates_per_minute=10**6)
        ratings = Ratings(storage, accounts)
        svc.on_finish.append(ratings.queue)
        svc.account_name = accounts.name_of
        farmer = accounts.create_account("farmer", "the farmer's password")
        with storage.engine.begin() as conn:  # a month old, 40 games, an established rating
            conn.execute(
                text("UPDATE accounts SET created_at = created_at - :d, rated_games = 40, rd = 60 WHERE id = :a"),
                {"d": 30 * 86400.0, "a": farmer.id},
            )
        puppets = [accounts.create_account(f"puppet{i}", "a puppet's password") for i in range(8)]
        for puppet in puppets:
            for _ in range(POLICY.pair_games_per_day):
                room, reply = svc.create({"mode": "online", "rated": True, "side": "south"}, account=farmer.id)
                svc.join(room.rec.id, reply["invite"], account=puppet.id)
                both_move(svc, room.rec.id)
                assert svc.resign(room.rec.id, frozenset({"north"})).committed
        ratings.process_all()
        prof = ratings.profile("farmer")
        allowed = POLICY.new_opponent_games_per_day
        assert len(prof["history"]) == prof["rated_games"] - 40 == allowed == 3  # 24 before
        expect, puppet0 = Rating(1500, 60, 0.06), Rating()  # its first three games: against puppet0
        for _ in range(allowed):
            expect, puppet0 = update(expect, [(puppet0, 1.0)]), update(puppet0, [(expect, 0.0)])
        assert prof["rating"] == round(expect.rating) < 1600  # 2133 before
        # the puppets' games counted for them: each lost its three
        for puppet in puppets:
            assert ratings.profile(puppet.username)["rated_games"] == POLICY.pair_games_per_day
        said = [g["unrated"] for g in prof["games"]]  # the 20 latest: all past the day's three
        assert len(said) == 20 and all(
            w.startswith("counted for puppet")
            and w.endswith(f" only: farmer counts {allowed} rated games against new accounts in 24 hours")
            for w in said
        ), said
        # a day later it counts again
        with storage.engine.begin() as conn:
            conn.execute(text("UPDATE rating_history SET at = at - 86401"))
            conn.execute(text("UPDATE games SET updated_at = updated_at - 86401"))
        room, reply = svc.create({"mode": "online", "rated": True, "side": "south"}, account=farmer.id)
        svc.join(room.rec.id, reply["invite"], account=puppets[0].id)
        both_move(svc, room.rec.id)
        assert svc.resign(room.rec.id, frozenset({"north"})).committed
        ratings.process_all()
        assert ratings.profile("farmer")["rated_games"] == 40 + allowed + 1
    finally:
        storage.close()
