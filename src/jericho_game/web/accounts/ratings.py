"""Ratings: rated games update both accounts' Glicko-2 ratings, exactly once; leaderboard, profiles.

A game is rated when its creator asked for it (online games only, creator logged in) and both
seats are bound to two different accounts.  When such a game ends (any way: seven monoliths,
both passed, resignation, time, or any ending another module adds), the change that ends it
queues a *rating job* in its own transaction (:meth:`Ratings.queue`, a :class:`GameService`
finish hook): the job exists if and only if the result was committed.  Any process then applies
it (:meth:`Ratings.process`): one transaction that takes the job (``FOR UPDATE SKIP LOCKED`` on
PostgreSQL, SQLite's write lock otherwise), locks both accounts in id order, updates their
ratings with :func:`jericho_game.web.accounts.glicko2.update` (the game is one rating period for both,
each against the other's rating *before* the game), writes one ``rating_history`` row per
player (primary key: game and account) and deletes the job.  So a rating changes exactly once
per rated game, however many processes race for the job, and a process killed in the middle
leaves the job for the next one.

Farming (issue 22: five sock puppets resigning at once took a farmer from 1500 to 2035 in 17 s;
issue 33: with one placement each, 1500 to 2001 in 11 s) is bounded five ways:

- *real play*: a game counts only when each side made at least
  :attr:`RatingPolicy.min_placements` placements (forced passes do not count), about a fifth of
  a side's reserve: a game resigned after a move or two changes no rating (lichess aborts, and
  leaves unrated, games without real play);
- *pairs*: at most :attr:`RatingPolicy.pair_games_per_day` rated games between the same two
  accounts count in any 24 hours;
- *new accounts*: an account younger than :attr:`RatingPolicy.new_account_days` days counts at
  most :attr:`RatingPolicy.new_account_games_per_day` rated games in any 24 hours (fresh sock
  puppets are new accounts, and so is the account they feed);
- *new opponents* (issue 51: an established account played 24 rated games against 8 fresh
  puppets, 3 each, and all counted: 1500 -> 2133): an established account counts at most
  :attr:`RatingPolicy.new_opponent_games_per_day` rated games against new accounts (younger than
  ``new_account_days``, or with fewer than :attr:`RatingPolicy.established_games` rated games
  counted) in any 24 hours; past them such a game counts for the new account only;
- *provisional ratings*: a rating whose deviation is above :attr:`RatingPolicy.provisional_rd`
  is shown with a "?" (API field ``provisional``) and kept off the leaderboard, as lichess keeps
  provisional players off its rankings.

A rated game that changed no rating, or only the new account's, says why (table
``rating_skipped``; ``unrated`` on the profile's game list); it is played as usual.  Every count is
read from the database in the transaction that applies the game, under both accounts' row locks.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Column, Float, Index, Integer, MetaData, String, Table, text
from sqlalchemy.engine import Connection
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from jericho_game.web.accounts.accounts import AccountService
from jericho_game.web.accounts.glicko2 import DEFAULT_TAU, Rating, update
from jericho_game.web.common.budget import free
from jericho_game.web.round.mygames import moves_of
from jericho_game.web.round.rooms import ClientError
from jericho_game.web.storage.database import GameRecord, Storage, Tx

__all__ = ["RatingPolicy", "Ratings", "both_moved", "placements", "rating_routes", "ratings_metadata"]

log = logging.getLogger("jericho_game.web")

ratings_metadata = MetaData()

rating_jobs = Table(
    "rating_jobs",
    ratings_metadata,
    Column("game_id", String(32), primary_key=True),  # one update per game, ever
    Column("created_at", Float, nullable=False),
)

rating_history = Table(
    "rating_history",
    ratings_metadata,
    Column("game_id", String(32), primary_key=True),
    Column("account_id", Integer, primary_key=True),
    Column("at", Float, nullable=False),
    Column("opponent_id", Integer, nullable=False),
    Column("score", Float, nullable=False),  # 1, 0.5 or 0 for this account
    Column("rating_before", Float, nullable=False),
    Column("rating", Float, nullable=False),
    Column("rd", Float, nullable=False),
    Column("volatility", Float, nullable=False),
)
Index("rating_history_account", rating_history.c.account_id, rating_history.c.at)

rating_skipped = Table(
    "rating_skipped",
    ratings_metadata,
    Column("game_id", String(32), primary_key=True),  # a rated game that changed no rating
    Column("why", String(200), nullable=False),
    Column("at", Float, nullable=False),
)


@dataclass(frozen=True)
class RatingPolicy:
    """What a rated game must be to count, and when a rating is provisional (docs/web.md,
    "Limits and quotas")."""

    pair_games_per_day: int = 3  # rated games between two accounts that count in 24 hours
    provisional_rd: float = 110.0  # a rating with a deviation above this is provisional (lichess: 110)
    min_placements: int = 5  # placements each side must make for a rated game to count
    new_account_days: float = 7.0  # an account younger than this is new ...
    new_account_games_per_day: int = 5  # ... and counts at most this many rated games in 24 hours
    # issue 51: an established account (not new, and this many rated games counted) counts at most
    # new_opponent_games_per_day rated games in 24 hours against new accounts (younger than
    # new_account_days or with fewer games counted); past them, a game counts for the new one only
    established_games: int = 10
    new_opponent_games_per_day: int = 3


def placements(moves: list[str]) -> tuple[int, int]:
    """The placements (not forced passes) South and North made (rated games start from the
    standard position, South first, and sides alternate: a forced pass is recorded as ``pass``)."""
    return sum(m != "pass" for m in moves[0::2]), sum(m != "pass" for m in moves[1::2])


def both_moved(moves: list[str], at_least: int = 1) -> bool:
    """Whether each side made at least ``at_least`` placements."""
    return min(placements(moves)) >= at_least


class Ratings:
    """The rating job queue, the Glicko-2 update, and the leaderboard and profile queries."""

    def __init__(
        self,
        storage: Storage,
        accounts: AccountService,
        *,
        tau: float = DEFAULT_TAU,
        policy: RatingPolicy | None = None,
    ) -> None:
        self.storage = storage
        self.accounts = accounts
        self.tau = tau
        self.policy = policy or RatingPolicy()
        storage.create_tables(ratings_metadata)

    def provisional(self, rd: float) -> bool:
        """Whether a rating with deviation ``rd`` is provisional (too few games to trust it)."""
        return rd > self.policy.provisional_rd

    # -- the finish hook (inside the game's transaction) -------------------------------------------
    def queue(self, tx: Tx, rec: GameRecord) -> None:
        """``rec`` has just ended in ``tx``: queue its rating update if it is a rated game of two accounts."""
        if not rec.rated or rec.result not in ("south", "north", "draw"):
            return
        if rec.south_account is None or rec.north_account is None or rec.south_account == rec.north_account:
            return
        tx.wrote = True
        need = self.policy.min_placements
        if rec.start_position is None and not both_moved(rec.moves, need):
            south, north = placements(rec.moves)
            why = (
                "a side never made a move"
                if not min(south, north)
                else f"too little play: a rated game counts once each side made {need} placements "
                f"(South made {south}, North {north})"
            )
            tx.conn.execute(rating_skipped.insert().values(game_id=rec.id, why=why, at=time.time()))
            return
        tx.conn.execute(
            text("INSERT INTO rating_jobs (game_id, created_at) VALUES (:g, :t)"), {"g": rec.id, "t": time.time()}
        )

    # -- applying jobs -------------------------------------------------------------------------------
    def pending(self) -> list[str]:
        """Games whose rating update waits (oldest first)."""
        with self.storage.reader.connect() as conn:
            return [r[0] for r in conn.execute(text("SELECT game_id FROM rating_jobs ORDER BY created_at, game_id"))]

    def process(self, game_id: str) -> bool:
        """Apply the rating job of ``game_id`` if it is still queued and nobody else holds it; whether
        this call applied it."""
        lock = " FOR UPDATE SKIP LOCKED" if self.storage.postgres else ""
        with self.storage.engine.begin() as conn:
            job = conn.execute(
                text("SELECT game_id FROM rating_jobs WHERE game_id = :g" + lock), {"g": game_id}
            ).first()
            if job is None:
                return False
            done = conn.execute(
                text("SELECT count(*) FROM rating_history WHERE game_id = :g"), {"g": game_id}
            ).scalar_one()
            if not done:
                self._apply(conn, game_id)
            conn.execute(text("DELETE FROM rating_jobs WHERE game_id = :g"), {"g": game_id})
        return not done

    def process_all(self) -> int:
        """Apply every queued job; how many this call applied."""
        return sum(1 for gid in self.pending() if self.process(gid))

    def _apply(self, conn: Connection, game_id: str) -> None:
        game = conn.execute(
            text("SELECT south_account, north_account, result, updated_at FROM games WHERE id = :g"), {"g": game_id}
        ).first()
        if game is None or game[0] is None or game[1] is None or game[2] not in ("south", "north", "draw"):
            return
        south, north, result, at = int(game[0]), int(game[1]), game[2], float(game[3])
        lock = " FOR UPDATE" if self.storage.postgres else ""
        rows = conn.execute(
            text(
                "SELECT id, rating, rd, volatility, created_at, username, rated_games FROM accounts "
                f"WHERE id IN (:a, :b) ORDER BY id{lock}"
            ),
            {"a": south, "b": north},
        ).all()
        before = {int(r[0]): Rating(float(r[1]), float(r[2]), float(r[3])) for r in rows}
        if len(before) != 2:
            return
        # a new account counts a few rated games a day (issue 33: sock puppets are new accounts)
        for r in rows:
            if float(r[4]) <= at - self.policy.new_account_days * 86400.0:
                continue
            limit = self.policy.new_account_games_per_day
            had = conn.execute(
                text("SELECT count(*) FROM rating_history WHERE account_id = :a AND at > :since AND at <= :at"),
                {"a": int(r[0]), "since": at - 86400.0, "at": at},
            ).scalar_one()
            if had >= limit:
                why = (
                    f"{r[5]} is a new account (under {self.policy.new_account_days:g} days old), which counts "
                    f"{limit} rated games in 24 hours"
                )
                conn.execute(rating_skipped.insert().values(game_id=game_id, why=why, at=time.time()))
                return
        # both accounts are locked: the pair's count cannot change under us in another process (a
        # game that counted for one of them only counts for the pair too)
        n = self.policy.pair_games_per_day
        counted = conn.execute(
            text(
                "SELECT count(DISTINCT game_id) FROM rating_history WHERE ((account_id = :a AND opponent_id = :b) "
                "OR (account_id = :b AND opponent_id = :a)) AND at > :since AND at <= :at"
            ),
            {"a": south, "b": north, "since": at - 86400.0, "at": at},
        ).scalar_one()
        if counted >= n:
            why = f"{n} rated games between the same two players already counted in 24 hours"
            conn.execute(rating_skipped.insert().values(game_id=game_id, why=why, at=time.time()))
            return
        frozen = self._against_new(conn, game_id, rows, at)
        score = {"south": 1.0, "north": 0.0, "draw": 0.5}[result]
        for me, them, s in ((south, north, score), (north, south, 1.0 - score)):
            if me == frozen:
                continue
            after = update(before[me], [(before[them], s)], tau=self.tau)
            conn.execute(
                text(
                    "UPDATE accounts SET rating = :r, rd = :rd, volatility = :v, rated_games = rated_games + 1 "
                    "WHERE id = :id"
                ),
                {"r": after.rating, "rd": after.rd, "v": after.volatility, "id": me},
            )
            conn.execute(
                rating_history.insert().values(
                    game_id=game_id,
                    account_id=me,
                    at=at,
                    opponent_id=them,
                    score=s,
                    rating_before=before[me].rating,
                    rating=after.rating,
                    rd=after.rd,
                    volatility=after.volatility,
                )
            )

    def _new(self, created_at: float, games: int, at: float) -> bool:
        """Whether an account is new at ``at`` for the rule of new opponents (issue 51)."""
        return created_at > at - self.policy.new_account_days * 86400.0 or games < self.policy.established_games

    def _against_new(self, conn: Connection, game_id: str, rows: Any, at: float) -> int | None:
        """The established account of a game against a new one that already counted
        :attr:`RatingPolicy.new_opponent_games_per_day` such games in the 24 hours before ``at``: the
        game counts for the new account only, and says so (``rating_skipped``).  None: it counts for both."""
        new = {int(r[0]): self._new(float(r[4]), int(r[6]), at) for r in rows}
        if sum(new.values()) != 1:
            return None
        established = next(a for a, is_new in new.items() if not is_new)
        days = self.policy.new_account_days * 86400.0
        had = conn.execute(
            text(
                "SELECT count(*) FROM rating_history h JOIN accounts o ON o.id = h.opponent_id "
                "WHERE h.account_id = :a AND h.at > :since AND h.at <= :at AND (o.created_at > h.at - :days "
                "OR (SELECT count(*) FROM rating_history p WHERE p.account_id = h.opponent_id AND p.at < h.at) < :n)"
            ),
            {"a": established, "since": at - 86400.0, "at": at, "days": days, "n": self.policy.established_games},
        ).scalar_one()
        limit = self.policy.new_opponent_games_per_day
        if had < limit:
            return None
        names = {int(r[0]): r[5] for r in rows}
        newcomer = next(a for a, is_new in new.items() if is_new)
        why = (
            f"counted for {names[newcomer]} only: {names[established]} counts {limit} rated games against new "
            "accounts in 24 hours"
        )
        conn.execute(rating_skipped.insert().values(game_id=game_id, why=why, at=time.time()))
        return established

    async def run(self, every: float = 0.5) -> None:
        """Apply queued jobs as they come (every process does; each job is applied once)."""
        loop = asyncio.get_running_loop()
        while True:
            job = loop.run_in_executor(None, self.process_all)
            try:
                await asyncio.shield(job)
            except asyncio.CancelledError:
                # A thread cannot be stopped: its round ends first, so that its connection is back
                # in the pool before the storage closes (else the garbage collector closed it later,
                # a ResourceWarning blamed on some other code).
                await asyncio.wait([job])
                raise
            except Exception:  # noqa: BLE001 - the database is away: next round
                log.exception("could not apply rating updates")
            await asyncio.sleep(every)

    # -- reading ---------------------------------------------------------------------------------------
    def game_change(self, game_id: str) -> dict[str, Any]:
        """What a game did to its players' ratings (the end screen shows it): ``status`` "unrated",
        "pending" (the update is not applied yet: ask again), "none" (a rated game that ended without
        a result, or is not over) or "done" with, per player in side order, the username, the rating
        before and after (rounded, as shown) and the change."""
        with self.storage.reader.connect() as conn:
            game = conn.execute(
                text("SELECT rated, south_account, north_account, result FROM games WHERE id = :g"), {"g": game_id}
            ).first()
            if game is None:
                raise ClientError("unknown_game", f"no game has the id {game_id[:40]!r}", 404)
            rows = conn.execute(
                text(
                    "SELECT h.account_id, a.username, h.rating_before, h.rating FROM rating_history h "
                    "JOIN accounts a ON a.id = h.account_id WHERE h.game_id = :g"
                ),
                {"g": game_id},
            ).all()
        if not game[0]:
            return {"game": game_id, "status": "unrated", "players": []}
        if not rows:
            status = "pending" if game[3] in ("south", "north", "draw") else "none"
            return {"game": game_id, "status": status, "players": []}
        players = []
        for side, account in (("south", game[1]), ("north", game[2])):
            for acc, name, before, after in rows:
                if acc == account:
                    b, a = round(before), round(after)
                    players.append({"side": side, "username": name, "before": b, "after": a, "change": a - b})
        return {"game": game_id, "status": "done", "players": players}

    def leaderboard(self, limit: int = 100) -> list[dict[str, Any]]:
        """Accounts with an established rating (rated games, and a deviation of at most
        :attr:`RatingPolicy.provisional_rd`: provisional ratings are not ranked), best rating first."""
        with self.storage.reader.connect() as conn:
            rows = conn.execute(
                text(
                    "SELECT username, rating, rd, rated_games FROM accounts WHERE rated_games > 0 AND disabled = 0 "
                    "AND rd <= :rd ORDER BY rating DESC, username_key LIMIT :n"
                ),
                {"n": limit, "rd": self.policy.provisional_rd},
            ).all()
        return [
            {
                "rank": i + 1,
                "username": r[0],
                "rating": round(r[1]),
                "rd": round(r[2]),
                "provisional": self.provisional(float(r[2])),
                "games": int(r[3]),
            }
            for i, r in enumerate(rows)
        ]

    def profile(self, username: str, viewer: int | None = None) -> dict[str, Any]:
        """An account's page: rating, rating history, recent games.

        ``viewer`` is the account looking (None: anonymous).  Only the owner sees all their games;
        anybody else sees the public (lobby) and rated ones, never an invite-only, AI or hot-seat
        game, whose id alone would let a stranger watch it and download its record."""
        acc = self.accounts.find(username)
        if acc is None:
            raise ClientError("unknown_account", f"no player is named {username[:24]!r}", 404)
        with self.storage.reader.connect() as conn:
            history = conn.execute(
                text(
                    "SELECT h.game_id, h.at, h.rating_before, h.rating, h.rd, h.score, a.username "
                    "FROM rating_history h JOIN accounts a ON a.id = h.opponent_id "
                    "WHERE h.account_id = :id ORDER BY h.at, h.game_id"
                ),
                {"id": acc.id},
            ).all()
            owner = viewer is not None and viewer == acc.id
            shown = "" if owner else " AND (g.public = 1 OR g.rated = 1)"
            games = conn.execute(
                text(
                    "SELECT g.id, g.created_at, g.mode, g.south_account, g.north_account, g.result, g.reason, "
                    "g.rated, k.why, g.start_position, "
                    "(SELECT count(*) FROM moves m WHERE m.game_id = g.id) "
                    "FROM games g LEFT JOIN rating_skipped k ON k.game_id = g.id "
                    f"WHERE (g.south_account = :id OR g.north_account = :id){shown} "
                    "ORDER BY g.created_at DESC LIMIT 20"
                ),
                {"id": acc.id},
            ).all()
        recent = []
        for g in games:
            side = "south" if g[3] == acc.id else "north"
            other = g[4] if side == "south" else g[3]
            if g[2] == "hotseat":
                other = None
            result = g[5]
            outcome = None if result is None else "draw" if result == "draw" else "won" if result == side else "lost"
            recent.append(
                {
                    "id": g[0],
                    "date": g[1],
                    "mode": g[2],
                    "side": side if g[2] != "hotseat" else "both",
                    "opponent": self.accounts.name_of(int(other)) if other is not None else None,
                    "result": outcome,
                    "reason": g[6],
                    "rated": bool(g[7]) and g[8] is None,
                    "moves": moves_of(g[9], int(g[10])),  # numbered moves, as the record counts them
                }
            )
            if g[8] is not None:
                recent[-1]["unrated"] = g[8]  # a rated game that changed no rating, and why
        return {
            **acc.public(),
            "provisional": self.provisional(acc.rd),
            "history": [
                {
                    "game": h[0],
                    "at": h[1],
                    "before": round(h[2], 1),
                    "rating": round(h[3], 1),
                    "rd": round(h[4], 1),
                    "score": h[5],
                    "opponent": h[6],
                }
                for h in history
            ],
            "games": recent,
            "all_games": owner,  # False: only the public and rated games are listed
        }


def rating_routes(ratings: Ratings, static: Path) -> list[Route]:
    """``/api/leaderboard`` and ``/api/players/{name}`` (their pages: :mod:`jericho_game.web.site.pages`);
    ``/api/games/{id}/ratings``: what a rated game did to both players' ratings (:meth:`Ratings.game_change`)."""

    async def blocking(fn: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(None, fn, *args)

    @free("the leaderboard: one bounded query (100 rows)")
    async def leaderboard(request: Request) -> Response:
        return JSONResponse({"players": await blocking(ratings.leaderboard)})

    def profile_for(request: Request) -> dict[str, Any]:
        sess = ratings.accounts.session_of(request)
        return ratings.profile(request.path_params["name"], None if sess is None else sess.account.id)

    @free("one profile: its rating history and 20 latest games")
    async def player(request: Request) -> Response:
        # private to the owner: no shared cache may keep one viewer's answer for another
        return JSONResponse(await blocking(profile_for, request), headers={"Cache-Control": "private, no-store"})

    @free("one game's rating change")
    async def game(request: Request) -> Response:
        return JSONResponse(await blocking(ratings.game_change, request.path_params["id"]))

    return [
        Route("/api/leaderboard", leaderboard),
        Route("/api/players/{name}", player),
        Route("/api/games/{id}/ratings", game),
    ]
