"""Correspondence games (issue 23): online games with days per move, and the "your turn" list.

A correspondence game is an online game created with ``"per_move_days": N`` (N one of
:data:`DAYS`), in the lobby or by invite, rated or not.  Its clock is the ordinary server clock
(web/round/rooms.py) with one rule of its own: after each of a side's moves its time is set back to the
full N days, so the side to move always has N days from the moment its turn began, and
``deadline`` (stored with the game) is exactly then.  A missed deadline is the ordinary flag fall:
every server process sweeps for games past their deadline and the flag falls under the game's
row lock, so exactly once across processes (``reason: "time"``).

The "your turn" list (``POST /api/yourturn``): every game waiting for the player's move, from
the player's account (every seat bound to it) and the seat tokens the browser holds, most urgent
first (the nearest deadline; untimed games last, the longest waiting first).  The home page and
``/games`` show it (``static/yourturn.js``).

A player may have at most ``Limits.correspondence_per_client`` (web/common/limits.py) correspondence games going at
once (their account's seats, or the games created from their address when anonymous): docs/web.md,
"Correspondence games".
"""

from __future__ import annotations

import asyncio
from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import Connection
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from jericho_game.game import Game
from jericho_game.web.common import jsonin
from jericho_game.web.common.budget import free
from jericho_game.web.round import mygames
from jericho_game.web.round.gameroom import SIDES, ClientError, same_secret
from jericho_game.web.round.timecontrol import DAY, DAYS, check_days
from jericho_game.web.storage.database import GameRecord

__all__ = [
    "DAY",
    "DAYS",
    "ANONYMOUS_SEEK_MAX_AGE",
    "SEEK_MAX_AGE",
    "active_games",
    "check_days",
    "crowded_out",
    "seek_account",
    "still_crowded_out",
    "correspondence_routes",
    "side_to_move",
    "waiting_for",
]


SEEK_MAX_AGE = 7 * 86400.0  # an account's correspondence seek stays in the lobby a week, its creator away or not
ANONYMOUS_SEEK_MAX_AGE = 86400.0  # an anonymous one a day (issue 33: 55 addresses filled the lobby for 7 days)


def seek_account(rec: GameRecord) -> int | None:
    """The account of a seek's creator (the seat holding a token; None: an anonymous seek)."""
    return rec.south_account if rec.south_token else rec.north_account


def seek_expired(rec: GameRecord, now: float, away_since: float | None, idle: float, max_age: float) -> bool:
    """Whether an open public seek has expired: a real-time one once its creator has been away
    ``idle`` seconds or it is ``max_age`` old; a correspondence one (nobody waits at the page for a
    game of days) only once it is :data:`SEEK_MAX_AGE` old, or :data:`ANONYMOUS_SEEK_MAX_AGE` when
    its creator has no account."""
    listed = float(rec.meta.get("listed_at") or rec.created_at)
    if rec.per_move_days is not None:
        return now - listed >= (SEEK_MAX_AGE if seek_account(rec) is not None else ANONYMOUS_SEEK_MAX_AGE)
    return (away_since is not None and now - away_since >= idle) or now - listed >= max_age


def _group(rec: GameRecord) -> str:
    """The address group a seek counts in (its creator's client; a seek with none is a group alone)."""
    return rec.address or rec.id


def crowded_out(seeks: list[GameRecord], cap: int) -> list[str]:
    """The open correspondence seeks (of ``seeks``) that do not fit in the lobby's list of ``cap``.

    The list keeps accounts' seeks before anonymous ones; within each, the seeks that are the
    newest of their address group first, then the second newest of each group, and so on (newest
    first among equals).  So the seek that goes is an anonymous one first, then the oldest seek of
    the group holding the most places (issue 51: 14 accounts from a few addresses held all 40
    places for a week): a logged-in player's seek crowds it out (``Storage.create`` admits one only
    when some group holds more places than the player's would; the sweep expires what no longer fits)."""
    corr = [r for r in seeks if r.per_move_days is not None and r.public and not r.joined]
    newest = sorted(corr, key=lambda r: (r.created_at, r.id), reverse=True)
    rank: dict[str, int] = {}
    held: dict[str, int] = {}
    for r in newest:  # 1 for the newest seek of its group, 2 for the next...
        held[_group(r)] = rank[r.id] = held.get(_group(r), 0) + 1
    kept = sorted(newest, key=lambda r: (seek_account(r) is None, rank[r.id]))  # stable: newest first
    return [r.id for r in kept[cap:]]


_CROWDING = text(
    "WITH open_seeks AS (SELECT id, created_at, COALESCE(address, id) AS grp, "
    "CASE WHEN (CASE WHEN south_token IS NOT NULL THEN south_account ELSE north_account END) IS NULL "
    "THEN 1 ELSE 0 END AS anon FROM games WHERE public = 1 AND joined = 0 AND result IS NULL "
    "AND reason IS NULL AND mode = 'online' AND per_move_days IS NOT NULL), "
    "ranked AS (SELECT o.id, o.created_at, o.anon, 1 + (SELECT count(*) FROM open_seeks t WHERE t.grp = o.grp "
    "AND (t.created_at > o.created_at OR (t.created_at = o.created_at AND t.id > o.id))) AS k FROM open_seeks o) "
    "SELECT count(*) FROM ranked s JOIN ranked r ON r.id = :id WHERE s.id <> r.id AND (s.anon < r.anon "
    "OR (s.anon = r.anon AND (s.k < r.k OR (s.k = r.k AND (s.created_at > r.created_at "
    "OR (s.created_at = r.created_at AND s.id > r.id))))))"
)


def still_crowded_out(conn: Connection, rec: GameRecord, cap: int) -> bool:
    """Checked again under the seek's row lock: a correspondence seek with ``cap`` open seeks ahead of
    it in the order of :func:`crowded_out`."""
    if rec.per_move_days is None:
        return False
    return int(conn.execute(_CROWDING, {"id": rec.id}).scalar_one()) >= cap


_ACTIVE = text(
    "SELECT count(*) FROM games WHERE per_move_days IS NOT NULL AND result IS NULL AND reason IS NULL "
    "AND mode = 'online' AND (south_account = :account OR north_account = :account "
    "OR (:account IS NULL AND address = :address))"
)


def active_games(conn: Connection, account: int | None, address: str | None) -> int:
    """The correspondence games still going of one player: their account's seats (or, anonymous,
    the games created from their address)."""
    return int(conn.execute(_ACTIVE, {"account": account, "address": address}).scalar_one())


def side_to_move(rec: GameRecord, plies: int) -> str:
    """The side to move after ``plies`` plies (sides alternate; a forced pass is a ply, ``pass``)."""
    first = Game.from_position(rec.start_position).turn.value if rec.start_position else "south"
    return first if plies % 2 == 0 else ("north" if first == "south" else "south")


_OF_ACCOUNT = text(
    "SELECT id FROM games WHERE mode = 'online' AND joined = 1 AND result IS NULL AND reason IS NULL "
    "AND (south_account = :a OR north_account = :a) ORDER BY updated_at DESC LIMIT :n"
)


def waiting_for(storage: Any, account: int | None, held: dict[str, str], limit: int = 500) -> list[dict[str, Any]]:
    """The online games going on that wait for this player's move, most urgent first.

    ``account``: the logged-in account (every seat bound to it); ``held``: the browser's ``{id:
    token}`` (a wrong or stale token is left out, as in :mod:`mygames`)."""
    ids = dict.fromkeys(held)
    if account is not None:
        with storage.reader.connect() as conn:
            ids.update(dict.fromkeys(r[0] for r in conn.execute(_OF_ACCOUNT, {"a": account, "n": limit})))
    out: list[dict[str, Any]] = []
    for rec, plies in storage.summaries(list(ids)[:limit]):
        if rec.mode != "online" or not rec.joined or rec.result or rec.reason:
            continue
        token = held.get(rec.id)
        mine = {
            s
            for s in SIDES
            if (account is not None and getattr(rec, f"{s}_account") == account)
            or (token and getattr(rec, f"{s}_token") and same_secret(token, getattr(rec, f"{s}_token")))
        }
        # a seat bound to another account is not this browser's, whatever token it holds
        mine = {s for s in mine if getattr(rec, f"{s}_account") in (None, account)}
        turn = side_to_move(rec, plies)
        if turn not in mine or len(mine) != 1:
            continue
        other = "north" if turn == "south" else "south"
        names = rec.meta.get("names", {})
        out.append(
            {
                "id": rec.id,
                "side": turn,
                "opponent": names.get(other),
                "opponent_account": getattr(rec, f"{other}_account"),
                "per_move_days": rec.per_move_days,
                "clock": rec.clock / 60.0 if rec.clock and rec.per_move_days is None else None,
                "deadline": rec.deadline,
                "since": rec.turn_started or rec.updated_at,
                "plies": plies,
                "moves": mygames.moves_of(rec.start_position, plies),
                "rated": rec.rated,
            }
        )
    # the nearest deadline first; untimed games after, the longest waiting first
    out.sort(key=lambda g: (g["deadline"] is None, g["deadline"] or 0.0, g["since"], g["id"]))
    return out


def turn_mail_hook(notifier: Any, service: Any) -> Any:
    """A hook of the room service's moves (``GameService.on_move``, called in the move's own
    transaction): when a correspondence game now waits for a player with an account who is not on
    the game's page (presence, read in the transaction), queue that player's "your turn" mail."""

    def hook(tx: Any, room: Any) -> None:
        rec = room.rec
        if rec.per_move_days is None or rec.mode != "online" or service.status(room) != "playing":
            return
        side = room.game.turn.value
        account = getattr(rec, f"{side}_account")
        if account is None or not notifier.enabled:
            return
        seen = service.storage.presence(rec.id, service.now(), service.presence_ttl, conn=tx.conn)
        if seen.present[side]:
            return
        other = "north" if side == "south" else "south"
        other_account = getattr(rec, f"{other}_account")
        name = service.account_name(other_account) if other_account is not None else None
        name = name or rec.meta.get("names", {}).get(other)
        if notifier.queue_turn(tx.conn, account, rec.id, len(rec.moves), name):
            tx.wrote = True
            notifier.wake()

    return hook


def correspondence_routes(storage: Any, accounts: Any, max_games: int) -> list[Route]:
    """``POST /api/yourturn``: body ``{"games": {ID: TOKEN}}`` (may be empty) and/or the session."""

    @free("reads the caller's own games (at most max_games tokens and its account's)", methods=("POST",))
    async def your_turn(request: Request) -> Response:
        body = await jsonin.read_object(request, 64 * 1024, ClientError)
        held = mygames.held(body if "games" in body else {"games": {}}, max_games)
        loop = asyncio.get_running_loop()
        sess = await loop.run_in_executor(None, accounts.session_of, request)
        account = None if sess is None else sess.account.id
        rows = await loop.run_in_executor(None, waiting_for, storage, account, held)
        names = {}
        for row in rows:  # an account's name wins over the name typed at the seat
            acc = row.pop("opponent_account")
            if acc is not None:
                names[acc] = names.get(acc) or await loop.run_in_executor(None, accounts.name_of, acc)
                row["opponent"] = names[acc]
        return JSONResponse({"games": rows}, headers={"Cache-Control": "no-store"})

    return [Route("/api/yourturn", your_turn, methods=["POST"])]
