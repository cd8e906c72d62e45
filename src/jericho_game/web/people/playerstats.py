"""A player's statistics page (issue 34; lichess's "insights" and perf pages are the model).

``GET /api/players/{name}/stats`` answers, over the player's finished games (the owner's: all of them;
anybody else's view: the public and rated ones, as the profile and the search show):

- ``by_side``, ``by_speed``, ``by_opponent``: won, lost and drawn games (hot-seat games, where the
  player held both sides, count nowhere); opponents are accounts by name and AI levels, the
  :data:`TOP` most played;
- ``rating``: the rating history (one point per rated game that changed the rating), the page draws
  it as an inline SVG;
- ``openings``: the most played first moves (South's first placement and North's answer) of the
  games from the standard start, with the player's score in them;
- ``accuracy``: the player's accuracy in each reviewed game (the review's own figure,
  :func:`jericho_game.ai.analysis.accuracy`), oldest first, the latest :data:`MAX_REVIEWS`.

At most :data:`MAX_GAMES` games (the latest) are counted: ``counted`` says how many were.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from sqlalchemy import text
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from jericho_game.ai.analysis import accuracy, decisive, judge
from jericho_game.web.accounts.accounts import AccountService
from jericho_game.web.common.budget import Who, costs
from jericho_game.web.learn.review import ReviewStore
from jericho_game.web.people.gamesearch import GameSearch, speed_of
from jericho_game.web.round.gameroom import ClientError
from jericho_game.web.storage.database import Storage

__all__ = ["MAX_GAMES", "MAX_REVIEWS", "TOP", "PlayerStats", "games_routes"]

MAX_GAMES = 5000  # games counted at most (the latest)
MAX_REVIEWS = 50  # reviewed games whose accuracy is shown at most (the latest)
TOP = 10  # opponents and openings listed


def _tally() -> dict[str, int]:
    return {"games": 0, "won": 0, "lost": 0, "draw": 0}


class PlayerStats:
    """Builds the statistics of one player (:meth:`stats`)."""

    def __init__(self, storage: Storage, accounts: AccountService, reviews: ReviewStore) -> None:
        self.storage = storage
        self.accounts = accounts
        self.reviews = reviews

    def stats(self, username: str, viewer: int | None = None) -> dict[str, Any]:
        """The statistics of ``username`` as ``viewer`` (an account id, None: anonymous) may see them."""
        acc = self.accounts.find(username)
        if acc is None:
            raise ClientError("unknown_account", f"no player is named {username[:24]!r}", 404)
        owner = viewer is not None and viewer == acc.id
        shown = "" if owner else " AND (public = 1 OR rated = 1)"
        with self.storage.reader.connect() as conn:
            games = conn.execute(
                text(
                    "SELECT id, created_at, mode, south_account, north_account, result, ai_level, clock, increment, "
                    "per_move_days, start_position FROM games WHERE (south_account = :me OR north_account = :me) "
                    f"AND result IS NOT NULL AND mode <> 'hotseat'{shown} ORDER BY created_at DESC, id DESC LIMIT :n"
                ),
                {"me": acc.id, "n": MAX_GAMES},
            ).all()
            history = conn.execute(
                text("SELECT at, rating, rd, game_id FROM rating_history WHERE account_id = :me ORDER BY at, game_id"),
                {"me": acc.id},
            ).all()
            first: dict[str, list[str]] = defaultdict(list)
            standard = [g[0] for g in games if g[10] is None]
            for i in range(0, len(standard), 500):
                chunk = standard[i : i + 500]
                names = ", ".join(f":g{k}" for k in range(len(chunk)))
                sql = f"SELECT game_id, move FROM moves WHERE ply < 2 AND game_id IN ({names}) ORDER BY game_id, ply"
                for gid, move in conn.execute(text(sql), {f"g{k}": g for k, g in enumerate(chunk)}):
                    first[gid].append(move)
            reviewed = []
            ids = [g[0] for g in games]
            for i in range(0, len(ids), 500):
                chunk = ids[i : i + 500]
                names = ", ".join(f":g{k}" for k in range(len(chunk)))
                reviewed += [
                    r[0]
                    for r in conn.execute(
                        text(f"SELECT game_id FROM reviews WHERE status = 'done' AND game_id IN ({names})"),
                        {f"g{k}": g for k, g in enumerate(chunk)},
                    )
                ]
        by_side = {"south": _tally(), "north": _tally()}
        by_speed: dict[str, dict[str, int]] = defaultdict(_tally)
        by_opponent: dict[tuple[str, str], dict[str, int]] = defaultdict(_tally)
        openings: dict[str, dict[str, int]] = defaultdict(_tally)
        side_of: dict[str, str] = {}
        for gid, _at, mode, south, north, result, level, clock, inc, days, _start in games:
            side = "south" if south == acc.id else "north"
            side_of[gid] = side
            outcome = "draw" if result == "draw" else "won" if result == side else "lost"
            other = north if side == "south" else south
            if mode == "ai":
                who = ("ai", str(level))
            elif other is not None:
                who = ("human", self.accounts.name_of(int(other)) or "?")
            else:
                who = ("anonymous", "")
            tallies = [by_side[side], by_speed[speed_of(clock, inc, days)], by_opponent[who]]
            if len(first.get(gid, [])) == 2:
                tallies.append(openings[" ".join(first[gid])])
            for tally in tallies:
                tally["games"] += 1
                tally[outcome] += 1
        opponents = sorted(by_opponent.items(), key=lambda kv: (-kv[1]["games"], kv[0]))[:TOP]
        top_openings = sorted(openings.items(), key=lambda kv: (-kv[1]["games"], kv[0]))[:TOP]
        return {
            "player": acc.username,
            "all_games": owner,
            "counted": len(games),
            "by_side": by_side,
            "by_speed": dict(sorted(by_speed.items())),
            "by_opponent": [{"kind": k, "name": n, **tally} for (k, n), tally in opponents],
            "openings": [{"moves": m.split(), **tally} for m, tally in top_openings],
            "rating": [{"at": h[0], "rating": round(h[1], 1), "rd": round(h[2], 1), "game": h[3]} for h in history],
            "accuracy": self._accuracy(games, reviewed, side_of),
        }

    def _accuracy(self, games: Any, reviewed: list[str], side_of: dict[str, str]) -> list[dict[str, Any]]:
        """The player's accuracy in each of the latest reviewed games, oldest first."""
        when = {g[0]: g[1] for g in games}
        latest = sorted(reviewed, key=lambda gid: (-when[gid], gid))[:MAX_REVIEWS]
        out = []
        for gid in latest:
            rec = self.reviews.load(gid)
            if rec is None or not rec.positions:
                continue
            moves = judge(rec.moves, rec.positions)
            moment = decisive(rec.positions, len(rec.moves))
            value = accuracy(moves, rec.positions, moment.ply if moment else None)[side_of[gid]]
            if value is not None:
                out.append({"game": gid, "at": when[gid], "accuracy": value})
        return sorted(out, key=lambda a: (a["at"], a["game"]))


def games_routes(search: GameSearch, stats: PlayerStats, write: Callable[[Any, dict[str, str]], str]) -> list[Route]:
    """``GET /api/players/{name}/games`` (a page of the search), ``.../games.jgn`` (the selection as one
    record file) and ``.../stats`` (:mod:`jericho_game.web.people.gamesearch`, this module); their pages
    are ``/players/{name}/games`` and ``/players/{name}/stats`` (:mod:`jericho_game.web.site.pages`).

    Each runs on the threads of its budget (``search``, ``export``: :data:`jericho_game.web.common.budget.BUDGETS`),
    never on the shared pool the moves and pages use: one at a time per client (address group and
    account), two at a time per process; a client's second one while its first runs is refused at
    once (429 ``search_busy``), before anything is read."""
    budget = search.budget

    def viewer(request: Request) -> int | None:
        sess = search.accounts.session_of(request)
        return None if sess is None else sess.account.id

    async def held(kind: str, request: Request, me: int | None, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args, me)`` on ``kind``'s threads, held in its budget for the client (its address group
        and account ``me``) until the thread is done: a client that goes away does not free its place
        while its work still runs."""
        with budget.hold(kind, Who.of(request, me)):
            job = asyncio.get_running_loop().run_in_executor(budget.executor(kind), lambda: fn(*args, me))
            try:
                return await asyncio.shield(job)
            except asyncio.CancelledError:
                await asyncio.wait([job])
                raise

    # private to the owner (they see every game): no shared cache may keep one viewer's answer for another
    private = {"Cache-Control": "private, no-store"}

    @costs("search", methods=("GET", "HEAD"))
    async def games(request: Request) -> Response:
        name, query = request.path_params["name"], dict(request.query_params)
        return JSONResponse(await held("search", request, viewer(request), search.page, name, query), headers=private)

    @costs("export", methods=("GET", "HEAD"))
    async def export(request: Request) -> Response:
        name, query = request.path_params["name"], dict(request.query_params)
        body, count = await held("export", request, viewer(request), search.export, name, query, write)
        safe = "".join(ch for ch in name if ch.isalnum() or ch in "-_")[:40] or "player"
        headers = {
            **private,
            "Content-Disposition": f'attachment; filename="jericho-{safe}-games.jgn"',
            "X-Games": str(count),  # how many games the file holds (at most MAX_EXPORT)
        }
        return PlainTextResponse(body, headers=headers)

    @costs("search", methods=("GET", "HEAD"))
    async def player_stats(request: Request) -> Response:
        return JSONResponse(
            await held("search", request, viewer(request), stats.stats, request.path_params["name"]), headers=private
        )

    return [
        Route("/api/players/{name}/games", games),
        Route("/api/players/{name}/games.jgn", export),
        Route("/api/players/{name}/stats", player_stats),
    ]
