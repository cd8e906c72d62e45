"""A browser's games ("My games"): the games whose seat tokens the browser holds.

The page keeps each seat token in ``localStorage`` (``jericho:seat:ID``) and posts them,
``{"games": {"ID": "TOKEN", ...}}``, to ``POST /api/mygames`` (the list) or
``POST /api/mygames/record`` (every game's record in one ``.jgn`` file, records one after the
other as docs/notation.md says).  A token is checked in constant time against the game's seats:
an id with a wrong or stale token is left out, so the list never shows a game the browser has
no seat in.  Nothing new is stored: the tokens are the browser's proof of its games.  A logged-in
player's list also holds every game with a seat bound to their account (``account``), so a browser
that never played lists them too (issue 24); they open there by the session.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from jericho_game.game import Game
from jericho_game.record import move_number
from jericho_game.web.round.gameroom import GAME_ID, SIDES, ClientError, RoomService, same_secret
from jericho_game.web.storage.database import GameRecord

__all__ = ["held", "listing", "records"]


def held(body: dict[str, Any], most: int) -> dict[str, str]:
    """The ``{id: token}`` of a request body, checked (``bad_request`` names what is wrong)."""
    games = body.get("games")
    if not isinstance(games, dict):
        raise ClientError("bad_request", 'send {"games": {"GAME_ID": "SEAT_TOKEN", ...}}')
    if len(games) > most:
        raise ClientError("too_many", f"at most {most} games at once (this asks for {len(games)})", 413)
    out = {}
    for gid, token in games.items():
        if not isinstance(gid, str) or not GAME_ID.match(gid) or not isinstance(token, str) or len(token) > 200:
            raise ClientError("bad_request", f"game {str(gid)[:40]!r}: ids are game ids, tokens are seat tokens")
        out[gid] = token
    return out


def _mine(rec: GameRecord, token: str | None, account: int | None = None) -> list[str]:
    seats = [
        s
        for s in SIDES
        if (token is not None and same_secret(token, getattr(rec, f"{s}_token")))
        or (account is not None and getattr(rec, f"{s}_account") == account)
    ]
    if rec.mode == "ai":
        seats = [s for s in seats if s != rec.ai_side]
    return seats


def _opponent(rec: GameRecord, mine: list[str]) -> dict[str, Any]:
    if len(mine) == 2:
        return {"kind": "hotseat", "name": None}
    other = "north" if mine[0] == "south" else "south"
    if rec.mode == "ai":
        return {"kind": "ai", "name": f"AI {rec.ai_level}", "level": rec.ai_level}  # the page names the level
    if not getattr(rec, f"{other}_token"):
        return {"kind": "open", "name": None}
    return {"kind": "human", "name": rec.meta.get("names", {}).get(other)}


def moves_of(start_position: str | None, plies: int) -> int:
    """How many numbered moves ``plies`` plies make (47 plies from the start: 24 moves), as the move
    text, the move list and the review number them (:func:`jericho_game.record.move_number`)."""
    if plies <= 0:
        return 0
    first = Game.from_position(start_position).turn.value if start_position else "south"
    return move_number(plies, first)[0]


def listing(
    svc: RoomService, games: dict[str, str], account: int | None = None, most: int = 500
) -> list[dict[str, Any]]:
    """The browser's games (and the account's, logged in), newest first: side, opponent, status,
    result, reason, plies, dates."""
    out: list[dict[str, Any]] = []
    ids = list(games)
    if account is not None:
        ids += [g for g in svc.storage.account_game_ids(account, most) if g not in games]
    for rec, plies in svc.storage.summaries(ids):
        mine = _mine(rec, games.get(rec.id), account)
        if not mine:
            continue
        result, reason = rec.result, rec.reason
        status = "over" if result or reason else ("waiting" if rec.mode == "online" and not rec.joined else "playing")
        me = mine[0] if len(mine) == 1 else None
        outcome = None
        if status == "over":
            outcome = "none" if result is None else "draw" if result == "draw" else "won" if result == me else "lost"
            if me is None and result in SIDES:
                outcome = f"{result} won"
        out.append(
            {
                "id": rec.id,
                "mode": rec.mode,
                "side": me or "both",
                "name": rec.meta.get("names", {}).get(me) if me else None,
                "opponent": _opponent(rec, mine),
                "status": status,
                "result": result,
                "reason": reason,
                "outcome": outcome,  # from this browser's side: won, lost, draw, none (no result)
                "plies": plies,
                "moves": moves_of(rec.start_position, plies),  # numbered moves, as the record counts them
                "clock": rec.clock / 60.0 if rec.clock else None,
                "created_at": rec.created_at,
                "updated_at": rec.updated_at,
                "date": time.strftime("%Y-%m-%d %H:%M", time.gmtime(rec.created_at)),
            }
        )
    out.sort(key=lambda g: (-float(g["updated_at"]), str(g["id"])))
    return out


def records(
    svc: RoomService,
    games: dict[str, str],
    write: Callable[[Any, dict[str, str]], str],
    account: int | None = None,
    most: int = 500,
) -> str:
    """Every game of the browser (and the account's) as records, one after the other (oldest first),
    one .jgn text."""
    texts = []
    for row in sorted(listing(svc, games, account, most), key=lambda g: (g["created_at"], g["id"])):
        rec = svc.storage.load(row["id"])
        if rec is None:
            continue
        room = svc.cache.build(rec)  # not cached: this runs off the event loop
        texts.append(write(room.game, svc.record_tags(room)))
    return "\n".join(texts)
