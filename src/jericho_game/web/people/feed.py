"""The people feed (issue 52): challenges, their answers and expiries, and blocks, pushed to every
open page of the players concerned, on the lobby's WebSocket.

Every page of a logged-in player (static/challengebell.js) opens ``/lobby/ws?feed=people``: no
lobby lists on it, only ``{"type": "people"}`` when that account's challenges or relations
changed.  The message is a hint, never the state: the page then reads ``GET /api/challenges`` (or
the player's relation), so a lost or doubled hint cannot mislead it, and every server process
behaves the same.  A change is announced by the transaction that makes it (PostgreSQL's
``NOTIFY`` on the games channel, ``"~people:N -5"``: :data:`people.PEOPLE_CHANGED`, heard by each
process's broker and routed here by the transport's version hooks); on SQLite (one process) after
its commit, through :attr:`PeopleService.hint`.

The feed is also how the database knows a player is there: each process stamps ``people_seen``
for the accounts with a feed open on it when one opens, when an account's last one here closes,
and every :data:`RENEW` seconds between (:meth:`PeopleService.sweep`, which then expires the
challenges that are due: a real-time one whose challenger has had no page open for
``PeoplePolicy.left_after`` seconds, or left unanswered).  A page answers pings (``{"type":
"ping"}``) as the lobby does.  Caps: :data:`PER_ACCOUNT` feeds per account and :data:`PER_ADDRESS`
per address on a process (a player's tabs), ``Limits.max_lobby_connections`` in all.
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
from jericho_game.web.people.people import PEOPLE_CHANGED, PEOPLE_KEY, PeopleService

if TYPE_CHECKING:
    from jericho_game.web.common.conn import Conn
    from jericho_game.web.common.limits import Limits

__all__ = ["PeopleFeed", "RENEW", "PER_ACCOUNT", "PER_ADDRESS"]

log = logging.getLogger("jericho_game.web")

RENEW = 5.0  # seconds between a process's stamps of the accounts with a page open on it (and sweeps)
PER_ACCOUNT = 16  # one player's open pages (tabs) holding the feed, per process
PER_ADDRESS = 32  # one address's (a household behind one router), per process
HINT = json.dumps({"type": "people"})


def _error(code: str, message: str, websocket: Any) -> str:
    text = i18n.error_text(code, message, i18n.connection_language(websocket))
    return json.dumps({"type": "error", "code": code, "message": text})


class PeopleFeed:
    """This process's people feeds, by account; the hints routed to them; the stamps and sweeps."""

    def __init__(self, people: PeopleService, limits: Limits) -> None:
        self.people = people
        self.limits = limits
        self.conns: dict[int, set[Conn]] = {}
        self.caps = SocketCaps(PER_ADDRESS, PER_ACCOUNT)
        self.loop: asyncio.AbstractEventLoop | None = None
        people.hint = self.hint

    def install(self, transport: Any) -> None:
        """Hear the people announcements among the broker's messages (the transport's version hooks)."""
        transport.version_hooks[PEOPLE_CHANGED] = self.on_announce

    # -- hints ------------------------------------------------------------------------------
    def on_announce(self, key: str) -> None:
        """A broker message ``"~people:N"`` (on the event loop): tell account N's pages here."""
        if not key.startswith(PEOPLE_KEY):
            return  # the transport also calls its hooks with game ids (after a lost LISTEN)
        try:
            account = int(key[len(PEOPLE_KEY) :])
        except ValueError:
            return
        self.tell(account)

    def tell(self, account: int) -> None:
        """Queue a hint on each of ``account``'s feeds here (one waiting hint is enough: coalesced)."""
        for conn in list(self.conns.get(account, ())):
            conn.put(HINT, "state", self.limits)

    def hint(self, accounts: list[int]) -> None:
        """Tell ``accounts``' pages here, from any thread (the service calls it after a commit)."""
        loop = self.loop
        if loop is None or loop.is_closed():
            return  # no feed was ever opened here: nobody to tell
        for a in accounts:
            loop.call_soon_threadsafe(self.tell, a)

    # -- stamps and sweeps ---------------------------------------------------------------------
    async def tick(self) -> list[int]:
        """Stamp the accounts with a page open here and expire the challenges that are due (off
        the event loop); the accounts told."""
        present = sorted(self.conns)
        told: list[int] = await asyncio.get_running_loop().run_in_executor(None, self.people.sweep, present)
        return told

    async def run(self) -> None:
        """Every :data:`RENEW` seconds (jittered, so that processes spread out; more often when
        ``left_after`` is short, so that an open page's stamp is never that old): :meth:`tick`."""
        self.loop = asyncio.get_running_loop()
        period = min(RENEW, self.people.policy.left_after / 4)
        while True:
            await asyncio.sleep(period * random.uniform(0.8, 1.2))
            try:
                await self.tick()
            except Exception:  # noqa: BLE001 - the database is away: the next round tries again
                log.exception("could not sweep the challenges")

    # -- clients ----------------------------------------------------------------------------
    async def serve_ws(self, websocket: Any, make_conn: Callable[[Any], Conn]) -> None:
        """The life of one page's feed: a hint at once (the page reads its state), then one per change."""
        self.loop = asyncio.get_running_loop()
        await websocket.accept()
        conn = make_conn(websocket)
        if conn.account is None:
            await websocket.send_text(
                _error("not_logged_in", "log in first: the people feed is an account's", websocket)
            )
            await websocket.close(code=4401)
            return
        if sum(len(c) for c in self.conns.values()) >= self.limits.max_lobby_connections:
            await websocket.send_text(_error("full", "too many connections here", websocket))
            await websocket.close(code=1013)
            return
        if not self.caps.take(conn.address, conn.account):
            await websocket.send_text(too_many("lobby", PER_ACCOUNT))
            await websocket.close(code=1013)
            return
        try:
            await self._serve(websocket, conn, conn.account)
        finally:
            self.caps.give(conn.address, conn.account)

    async def _serve(self, websocket: Any, conn: Conn, account: int) -> None:
        from starlette.websockets import WebSocketDisconnect

        loop = asyncio.get_running_loop()
        conn.task = asyncio.current_task()
        conn.on_drop = lambda c, why: self._forget(c, account)
        self.conns.setdefault(account, set()).add(conn)
        pump = loop.create_task(conn.pump(self.limits))
        try:
            try:  # here now: a challenge sent from this page stands while it stays open
                await loop.run_in_executor(None, self.people.present, [account])
            except Exception:  # noqa: BLE001 - the database is away: the next round stamps it
                log.exception("could not stamp account %s present", account)
            conn.put(HINT, "state", self.limits)
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
                    conn.put(_error("bad_message", "the people feed only answers ping", websocket), "msg", self.limits)
        except (WebSocketDisconnect, RuntimeError):
            pass
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if not conn.dropped or task is None:
                raise
            task.uncancel()
        finally:
            pump.cancel()
            last = self.conns.get(account, set()) == {conn}
            task = asyncio.current_task()
            stopping = task is not None and task.cancelling() > 0  # the server stops: no more storage calls
            try:
                if last and not stopping:
                    # the account's last page here closed: its time away counts from now (the time
                    # read here, the row written in a thread, which a cancellation does not stop)
                    at = self.people.now()
                    await asyncio.shield(loop.run_in_executor(None, self.people.present, [account], at))
            except Exception:  # noqa: BLE001 - the last stamp stands: away a few seconds sooner
                log.exception("could not stamp account %s leaving", account)
            finally:
                self._forget(conn, account)  # whatever happened above (a cancellation goes on after it)

    def _forget(self, conn: Conn, account: int) -> None:
        mine = self.conns.get(account)
        if mine is not None:
            mine.discard(conn)
            if not mine:
                del self.conns[account]
