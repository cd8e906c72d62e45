"""The timeline of followed players (issue 52, as lichess's timeline): what the players an account
follows did lately, newest first.

Three kinds of event, each read from the table that already records the fact (the database is the
truth; no event store of its own):

- ``game``: a game finished (``games``: a result, the time of its last change), with its players
  and its result, linking to the game;
- ``tournament``: a tournament won (``tournaments`` finished, its first place ranked as the
  tournament page ranks it: points, then Swiss tie-breaks, then rating, then name);
- ``streak``: a new best Puzzle Streak (``puzzle_streaks``: the best and when it was set), from
  :data:`MIN_STREAK` puzzles on.

At most :data:`LIMIT` events from the last :data:`DAYS` days.  A block either way hides the other
player entirely: their own events, and the games of followed players against them.  A bounded read
of indexed rows (three queries of at most ``LIMIT`` rows, one more per tournament shown), so it
costs no budget.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from sqlalchemy import bindparam, text
from sqlalchemy.engine import Connection

from jericho_game.web.accounts.accounts import AccountService
from jericho_game.web.common.budget import free
from jericho_game.web.learn.puzzles import puzzles_metadata
from jericho_game.web.people.people import people_metadata
from jericho_game.web.round.gameroom import ClientError
from jericho_game.web.storage.database import Storage
from jericho_game.web.tournaments import swiss
from jericho_game.web.tournaments.tournaments import tournament_metadata

__all__ = ["Timeline", "timeline_routes", "DAYS", "LIMIT", "MIN_STREAK"]

DAYS = 7  # how far back the timeline looks
LIMIT = 20  # the most events it shows
MIN_STREAK = 3  # a best streak shorter than this is not news

# the followed players whose events the viewer may see: followed, and no block either way
_FOLLOWED = (
    "SELECT f.followed FROM follows f WHERE f.follower = :me AND NOT EXISTS (SELECT 1 FROM blocks b "
    "WHERE (b.blocker = :me AND b.blocked = f.followed) OR (b.blocker = f.followed AND b.blocked = :me))"
)
# no block either way between the viewer and the seat's player (each a lookup of the blocks' key)
_CLEAR = (
    "NOT EXISTS (SELECT 1 FROM blocks b WHERE (b.blocker = :me AND b.blocked = x.{side}_account) "
    "OR (b.blocker = x.{side}_account AND b.blocked = :me))"
)

_COLUMNS = "g.id, g.result, g.reason, g.mode, g.ai_level, g.rated, g.south_account, g.north_account, g.updated_at"
# each side's seat of each followed player, by the index on (seat, updated_at): the rows read are the
# followed players' games of the window, never the whole site's (UNION: one row for a game of two)
_SEAT = (
    f"SELECT {_COLUMNS} FROM follows f JOIN games g ON g.{{side}}_account = f.followed WHERE f.follower = :me "
    "AND g.updated_at >= :since AND g.result IS NOT NULL AND g.mode IN ('online', 'ai') AND NOT EXISTS ("
    "SELECT 1 FROM blocks b WHERE (b.blocker = :me AND b.blocked = f.followed) "
    "OR (b.blocker = f.followed AND b.blocked = :me))"
)
_GAMES = text(
    f"SELECT * FROM ({_SEAT.format(side='south')} UNION {_SEAT.format(side='north')}) x "
    f"WHERE {_CLEAR.format(side='south')} AND {_CLEAR.format(side='north')} "
    "ORDER BY x.updated_at DESC, x.id LIMIT :n"
)
# finished tournaments where a followed player shares the top score (the ranking then decides)
_TOURNAMENTS = text(
    "SELECT t.id, t.name, t.kind, t.ended_at FROM tournaments t WHERE t.status = 'finished' "
    "AND t.ended_at >= :since AND EXISTS (SELECT 1 FROM tournament_players p WHERE p.tournament = t.id "
    f"AND p.account IN ({_FOLLOWED}) AND p.score > 0 "
    "AND p.score = (SELECT MAX(q.score) FROM tournament_players q WHERE q.tournament = t.id)) "
    "ORDER BY t.ended_at DESC, t.id LIMIT :n"
)
_STREAKS = text(
    "SELECT s.player, s.best, s.at FROM puzzle_streaks s WHERE s.at >= :since AND s.best >= :least "
    f"AND s.player IN (SELECT 'account:' || CAST(x.followed AS VARCHAR(20)) FROM ({_FOLLOWED}) x) "
    "ORDER BY s.at DESC LIMIT :n"
)
_NAMES = text("SELECT id, username FROM accounts WHERE id IN :ids").bindparams(bindparam("ids", expanding=True))


class Timeline:
    """The recent events of the players an account follows, read from the game database."""

    def __init__(
        self,
        storage: Storage,
        accounts: AccountService,
        *,
        clock: Callable[[], float] | None = None,
        days: int = DAYS,
        limit: int = LIMIT,
    ) -> None:
        self.storage = storage
        self.accounts = accounts
        # games' updated_at is the storage's wall time, so the window is measured on it by default
        self.now = clock or time.time
        self.days = days
        self.limit = limit
        # the tables it reads (each feature creates its own too; creating is idempotent)
        for meta in (people_metadata, tournament_metadata, puzzles_metadata):
            storage.create_tables(meta)
        for side in ("south", "north"):  # a followed player's games of the window, without the rest
            _index(storage, f"CREATE INDEX IF NOT EXISTS games_{side}_updated ON games ({side}_account, updated_at)")

    def events(self, me: int) -> dict[str, Any]:
        """``{"events": [...], "days", "limit"}``: the followed players' events, newest first."""
        since = self.now() - self.days * 86400.0
        args = {"me": me, "since": since, "n": self.limit}
        with self.storage.reader.connect() as conn:
            games = conn.execute(_GAMES, args).all()
            tournaments = conn.execute(_TOURNAMENTS, args).all()
            streaks = conn.execute(_STREAKS, {**args, "least": MIN_STREAK}).all()
            won = [(t, self._winner(conn, str(t.id), str(t.kind))) for t in tournaments]
            followed = {int(r[0]) for r in conn.execute(text(_FOLLOWED), {"me": me})}
            ids = {int(a) for g in games for a in (g.south_account, g.north_account) if a is not None}
            ids |= {w for _, w in won if w is not None}
            names = self._names(conn, ids | {int(s.player.partition(":")[2]) for s in streaks})
        out: list[dict[str, Any]] = []
        for g in games:
            seat = {"south": g.south_account, "north": g.north_account}
            players = {side: names.get(int(a)) if a is not None else None for side, a in seat.items()}
            out.append(
                {
                    "type": "game",
                    "at": float(g.updated_at),
                    "game": g.id,
                    "link": f"/g/{g.id}",
                    "players": players,
                    # the followed ones among them (one event even when both are followed)
                    "followed": [players[s] for s, a in seat.items() if a is not None and int(a) in followed],
                    "ai": g.ai_level if g.mode == "ai" else None,
                    "result": g.result,
                    "reason": g.reason,
                    "rated": bool(g.rated),
                }
            )
        for t, winner in won:
            if winner is None or winner not in followed:  # first place went to someone else on tie-breaks
                continue
            out.append(
                {
                    "type": "tournament",
                    "at": float(t.ended_at),
                    "player": names.get(winner),
                    "tournament": t.id,
                    "name": t.name,
                    "kind": t.kind,
                    "link": f"/tournaments/{t.id}",
                }
            )
        for s in streaks:
            out.append(
                {
                    "type": "streak",
                    "at": float(s.at),
                    "player": names.get(int(s.player.partition(":")[2])),
                    "best": int(s.best),
                    "link": "/puzzles",
                }
            )
        out.sort(key=lambda e: -e["at"])
        return {"events": out[: self.limit], "days": self.days, "limit": self.limit}

    @staticmethod
    def _names(conn: Connection, ids: set[int]) -> dict[int, str]:
        if not ids:
            return {}
        rows = conn.execute(_NAMES, {"ids": list(ids)})
        return {int(r.id): str(r.username) for r in rows}

    @staticmethod
    def _winner(conn: Connection, tid: str, kind: str) -> int | None:
        """The first place of a finished tournament, ranked as its page ranks it (web/tournaments)."""
        players = conn.execute(
            text(
                "SELECT p.account, p.score, a.username, a.rating FROM tournament_players p "
                "JOIN accounts a ON a.id = p.account WHERE p.tournament = :t"
            ),
            {"t": tid},
        ).all()
        if not players:
            return None
        top = max(float(p.score) for p in players)
        tied = [p for p in players if float(p.score) == top]
        breaks: dict[int, tuple[float, float]] = {}
        if kind == "swiss" and len(tied) > 1:  # only a tie at the top needs the games
            scores = {int(p.account): float(p.score) for p in players}
            games = []
            for g in conn.execute(
                text(
                    "SELECT south, north, south_points, north_points FROM tournament_pairings "
                    "WHERE tournament = :t AND status = 'done' AND north IS NOT NULL"
                ),
                {"t": tid},
            ):
                games.append((int(g.south), int(g.north), float(g.south_points or 0)))
                games.append((int(g.north), int(g.south), float(g.north_points or 0)))
            breaks = swiss.tie_breaks(scores, games)
        best = min(
            tied,
            key=lambda p: (*(-x for x in breaks.get(int(p.account), (0.0, 0.0))), -float(p.rating), p.username),
        )
        return int(best.account)


def _index(storage: Storage, sql: str) -> None:
    """Create an index where it is missing; two processes starting at once may race on PostgreSQL
    (the loser's ``CREATE`` fails), so a failure is followed by one more try, which finds it there."""
    for attempt in range(2):
        try:
            with storage.engine.begin() as conn:
                conn.exec_driver_sql(sql)
            return
        except Exception:  # noqa: BLE001 - another process created it at the same moment: try again
            if attempt:
                raise
            time.sleep(0.2)


def timeline_routes(timeline: Timeline) -> list[Any]:
    """``GET /api/people/timeline``: the session's account's timeline (401 ``not_logged_in`` without one).

    Listed before ``/api/people/{name}``, which would otherwise take the path."""
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    @free(f"a bounded read: at most {LIMIT} events of {DAYS} days, from indexed rows", methods=("GET", "HEAD"))
    async def timeline_route(request: Request) -> Response:
        loop = asyncio.get_running_loop()
        sess = await loop.run_in_executor(None, timeline.accounts.session_of, request)
        if sess is None:
            raise ClientError("not_logged_in", "log in first: the timeline shows the players you follow", 401)
        data = await loop.run_in_executor(None, timeline.events, int(sess.account.id))
        return JSONResponse(data, headers={"Cache-Control": "private, no-store"})

    return [Route("/api/people/timeline", timeline_route, methods=["GET", "HEAD"])]
