"""The lobby: open public seeks and public games being played, live, on every server process.

A *seek* is an online game created with ``"public": true``: it waits in the ``games`` table
like any online game (``joined`` 0), and the lobby lists it; taking the open seat is a join
(``POST /api/games/{id}/join`` with a name, no invite needed), a versioned change of the game
like any other, so of two people clicking one seek exactly one gets the seat (the other hears
``seat_taken``).  Once joined it is listed under *playing now* until it ends.

Live: each process keeps the lobby's WebSocket clients (``/lobby/ws``) and re-reads the lobby
from the database (at most every :data:`DEBOUNCE` seconds) when a listed game changes or a new
public seek is announced (``"~lobby 0"`` on the games channel, sent in the creating
transaction), whichever process made the change; every client gets the new list (coalesced:
a slow reader only ever holds the latest).

**Expiry** (every process sweeps every :data:`SWEEP` seconds; the game's row lock makes one of
them do it): an open seek ends with no result (reason ``expired``) once its creator's seat has
had no connection on any process for ``seek_idle`` seconds (default 2 minutes), or once it is
``seek_max_age`` old (default 1 hour).  A correspondence seek lasts a week (a day when its creator
has no account), and the lobby holds ``Limits.correspondence_seeks`` of them (issue 33): past it
an anonymous creator is refused (``lobby_full``), and an account's seek crowds out the oldest
anonymous one, which the sweep expires (web/round/correspondence.py, :func:`crowded_out`).

**Blocks** (issue 51): a logged-in viewer is not offered the seeks of the accounts it blocked or
that blocked it (``GameService.avoids``, web/people/people.py), over HTTP and on the socket, where
such a viewer gets a list of its own; the join refuses them too (``blocked``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from jericho_game.web import i18n
from jericho_game.web.common import jsonin
from jericho_game.web.common.fairshare import SocketCaps, too_many
from jericho_game.web.round.correspondence import crowded_out, seek_expired
from jericho_game.web.round.endings import expire_seek
from jericho_game.web.round.rooms import SIDES, Change, GameService
from jericho_game.web.storage.database import LOBBY_ID, GameRecord, Presence

if TYPE_CHECKING:
    from jericho_game.web.common.conn import Conn
    from jericho_game.web.common.limits import Limits

__all__ = ["Lobby", "snapshot", "DEBOUNCE", "SWEEP"]

log = logging.getLogger("jericho_game.web")

DEBOUNCE = 0.1  # seconds: changes that arrive together make one new lobby list
SWEEP = 5.0  # seconds between looks for seeks to expire
LIST_LIMIT = 100  # entries per list


def _creator(rec: GameRecord) -> str:
    return "south" if rec.south_token else "north"


def listed_at(rec: GameRecord) -> float:
    """When a seek was put in the lobby (the service's clock)."""
    return float(rec.meta.get("listed_at") or rec.created_at)


def time_control(rec: GameRecord) -> dict[str, Any]:
    """A game's time control as the lobby lists it: ``clock`` (minutes each, None: none or a
    correspondence game), ``increment`` (seconds added per move) and ``per_move_days``."""
    corr = rec.per_move_days is not None
    return {
        "clock": rec.clock / 60.0 if rec.clock and not corr else None,
        "increment": rec.increment if not corr else None,
        "per_move_days": rec.per_move_days,
    }


def snapshot(svc: GameService, viewer: int | None = None) -> dict[str, Any]:
    """The lobby as stored now: ``seeks`` (open, oldest first) and ``playing`` (newest first); for
    the logged-in ``viewer``, without the seeks of accounts on the other side of a block."""
    data, creators = _snapshot(svc)
    if viewer is not None:
        data = _without(data, creators, svc.avoids([viewer], None).get(viewer, set()))
    return data


def _without(data: dict[str, Any], creators: dict[str, int], avoided: set[int]) -> dict[str, Any]:
    """``data`` without the seeks whose creator's account is in ``avoided``."""
    if not avoided:
        return data
    return {**data, "seeks": [e for e in data["seeks"] if creators.get(e["id"]) not in avoided]}


def _snapshot(svc: GameService) -> tuple[dict[str, Any], dict[str, int]]:
    """The lobby for anyone, and each seek's creator account (never sent: the blocks' filter)."""
    now = svc.now()
    seeks = svc.storage.public_games(joined=False, limit=LIST_LIMIT)
    playing = svc.storage.public_games(joined=True, limit=LIST_LIMIT)
    seen = svc.storage.presence_of([r.id for r in seeks], now, svc.presence_ttl)
    out_seeks = []
    creators: dict[str, int] = {}
    for rec in seeks:
        side = _creator(rec)
        account = getattr(rec, f"{side}_account")
        if account is not None:
            creators[rec.id] = int(account)
        names = rec.meta.get("names", {})
        out_seeks.append(
            {
                "id": rec.id,
                "side": side,  # the creator's side: the one who joins plays the other
                **time_control(rec),
                "name": names.get(side),
                "age": round(max(0.0, now - listed_at(rec)), 1),
                "present": seen.get(rec.id, Presence()).present[side],
                **svc.lobby_extras(rec),  # "rated", "rating" (accounts): None/False for anonymous games
            }
        )
    out_playing = [
        {
            "id": rec.id,
            "names": {s: rec.meta.get("names", {}).get(s) for s in SIDES},
            **time_control(rec),
            "since": round(max(0.0, now - float(rec.meta.get("joined_at") or listed_at(rec))), 1),
            **svc.lobby_extras(rec),
        }
        for rec in playing
    ]
    data = {
        "seeks": out_seeks,
        "playing": out_playing,
        "expiry": {"idle": svc.seek_idle, "max_age": svc.seek_max_age},
    }
    return data, creators


class Lobby:
    """The lobby's WebSocket clients of one process, kept up to date."""

    def __init__(self, service: GameService, limits: Limits, announce: Callable[[Change], None]) -> None:
        self.service = service
        self.limits = limits
        self.announce = announce  # the transport's after(): broadcast and tell other processes
        self.conns: set[Conn] = set()
        self.listed: set[str] = set()
        self.text: str | None = None
        # issue 51: the last list's seek creators, and each viewer's accounts across a block (read
        # with the list, or when a viewer comes): a viewer with any among the creators gets its own list
        self.data: dict[str, Any] = {}
        self.creators: dict[str, int] = {}
        self.avoided: dict[int, set[int]] = {}
        self._scheduled = False
        self._refreshing = False
        self.caps = SocketCaps(limits.lobby_per_address, limits.lobby_per_address)

    # -- keeping it fresh -------------------------------------------------------------------
    def on_change(self, game_id: str, version: int) -> None:
        """A game changed somewhere: re-read the lobby if it concerns it (and someone looks)."""
        if game_id in (LOBBY_ID, "*") or game_id in self.listed:
            self.schedule()

    def schedule(self) -> None:
        """Re-read the lobby soon (changes arriving together make one re-read)."""
        if self._scheduled or not self.conns:
            return
        self._scheduled = True
        asyncio.get_running_loop().call_later(DEBOUNCE, self._start_refresh)

    def _start_refresh(self) -> None:
        self._scheduled = False
        if self._refreshing:  # one at a time; look again once it is done
            self.schedule()
            return
        self._refreshing = True
        asyncio.get_running_loop().create_task(self.refresh())

    async def refresh(self) -> None:
        """Read the lobby from the database and send it to every client if it changed."""
        viewers = sorted({c.account for c in self.conns if c.account is not None})

        def read() -> tuple[dict[str, Any], dict[str, int], dict[int, set[int]]]:
            data, creators = _snapshot(self.service)
            return data, creators, self.service.avoids(viewers, None) if viewers and creators else {}

        try:
            data, creators, avoided = await asyncio.get_running_loop().run_in_executor(None, read)
        except Exception:  # noqa: BLE001 - the database is away: the next change or sweep tries again
            log.exception("could not read the lobby")
            return
        finally:
            self._refreshing = False
        self.listed = {e["id"] for e in data["seeks"]} | {e["id"] for e in data["playing"]}
        self.data, self.creators, self.avoided = data, creators, avoided
        text = json.dumps({"type": "lobby", **data})
        self.text = text
        own: dict[int, str] = {}  # the viewers with a list of their own, each made once
        for conn in list(self.conns):
            conn.put(self._text_for(conn.account, own), "state", self.limits)

    def _text_for(self, account: int | None, own: dict[int, str]) -> str:
        """The last list as ``account`` may see it (without the seeks across its blocks)."""
        assert self.text is not None
        hidden = self.avoided.get(account, set()) & set(self.creators.values()) if account is not None else set()
        if not hidden or account is None:
            return self.text
        if account not in own:
            own[account] = json.dumps({"type": "lobby", **_without(self.data, self.creators, hidden)})
        return own[account]

    async def sweep(self) -> None:
        """Expire stale seeks (any process may; the row lock lets one do it) and refresh the ages."""
        while True:
            await asyncio.sleep(SWEEP * random.uniform(0.8, 1.2))
            await self.expire_due()
            self.schedule()

    async def expire_due(self) -> None:
        """Expire the seeks that are due now (the candidates are read off the event loop; each expiry
        is then a locked, versioned change that checks again)."""
        try:
            due = await asyncio.get_running_loop().run_in_executor(None, self._due)
        except Exception:  # noqa: BLE001 - the database is away: next sweep
            log.exception("could not look for stale seeks")
            return
        for gid, crowded in due:
            try:
                change = await self.service.off_loop(expire_seek, self.service, gid, crowded)
            except Exception:  # noqa: BLE001 - e.g. taken meanwhile: next sweep looks again
                log.exception("could not expire seek %s", gid)
                continue
            if change is not None:
                self.announce(change)

    def _due(self) -> list[tuple[str, bool]]:
        """The seeks to expire now, each with whether it is crowded out (rather than too old or idle)."""
        svc = self.service
        now = svc.now()
        seeks = svc.storage.public_games(joined=False, limit=1000)
        seen = svc.storage.presence_of([r.id for r in seeks], now, svc.presence_ttl)
        due = []
        for rec in seeks:
            p = seen.get(rec.id, Presence())
            side = _creator(rec)
            since = None if p.present[side] else (p.away_since[side] or listed_at(rec))
            if seek_expired(rec, now, since, svc.seek_idle, svc.seek_max_age):  # web/round/correspondence.py
                due.append((rec.id, False))
        # issue 33: the correspondence list holds svc.correspondence_seeks, accounts' seeks first
        expired = {gid for gid, _ in due}
        due += [(gid, True) for gid in crowded_out(seeks, svc.correspondence_seeks) if gid not in expired]
        return due

    # -- clients ----------------------------------------------------------------------------
    async def serve_ws(self, websocket: Any, make_conn: Callable[[Any], Conn]) -> None:
        """The life of one lobby WebSocket: the list now, then every new one; pings answered."""
        await websocket.accept()
        if len(self.conns) >= self.limits.max_lobby_connections:
            full = i18n.error_text("full", "the lobby is full", i18n.connection_language(websocket))
            await websocket.send_text(json.dumps({"type": "error", "code": "full", "message": full}))
            await websocket.close(code=1013)
            return
        conn = make_conn(websocket)
        # fair share (web/common/fairshare.py): one address (or account) cannot take the lobby's places
        if not self.caps.take(conn.address, conn.account):
            await websocket.send_text(too_many("lobby", self.limits.lobby_per_address))
            await websocket.close(code=1013)
            return
        try:
            await self._serve(websocket, conn)
        finally:
            self.caps.give(conn.address, conn.account)

    async def _serve(self, websocket: Any, conn: Conn) -> None:
        from starlette.websockets import WebSocketDisconnect

        conn.task = asyncio.current_task()
        conn.on_drop = lambda c, why: self.conns.discard(c)
        self.conns.add(conn)
        pump = asyncio.get_running_loop().create_task(conn.pump(self.limits))
        try:
            if self.text is None:
                await self.refresh()
            elif self.text is not None:
                if conn.account is not None and conn.account not in self.avoided and self.creators:
                    found = await asyncio.get_running_loop().run_in_executor(
                        None, self.service.avoids, [conn.account], None
                    )
                    self.avoided[conn.account] = found.get(conn.account, set())
                conn.put(self._text_for(conn.account, {}), "state", self.limits)
            while not conn.dropped:
                message = await websocket.receive()
                if message["type"] == "websocket.disconnect":
                    break
                try:
                    msg = jsonin.loads(message.get("text") or "")
                except jsonin.JSON_ERRORS:
                    msg = None
                if isinstance(msg, dict) and msg.get("type") == "ping":
                    ref = msg.get("ref") if isinstance(msg.get("ref"), str | int) else None
                    conn.put(json.dumps({"type": "pong", "ref": ref}), "msg", self.limits)
                else:
                    why = i18n.error_text(
                        "bad_message", "the lobby only answers ping", i18n.connection_language(websocket)
                    )
                    err = {"type": "error", "code": "bad_message", "message": why}
                    conn.put(json.dumps(err), "msg", self.limits)
        except (WebSocketDisconnect, RuntimeError):
            pass
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if not conn.dropped or task is None:
                raise
            task.uncancel()
        finally:
            pump.cancel()
            self.conns.discard(conn)
            if not self.conns:
                self.text = None  # nobody looks: the next client reads it fresh
                self.listed = set()
