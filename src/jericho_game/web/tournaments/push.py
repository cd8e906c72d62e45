"""The tournaments' push socket (issue 52): every open page of a player in a tournament holds one
(``/ws/tournaments``, opened by static/tournamentpush.js from the layout), and each of the
player's pairings is sent to all of them, so the player reaches their next game by themselves
from whichever page they are on, as on lichess.

- **Who**: a logged-in account in a tournament not finished and not withdrawn from.  Anyone else is
  answered once and the socket closed: ``{"type": "error", "code": "not_logged_in"}`` (anonymous),
  ``{"type": "idle"}`` (in no tournament: nothing to push; the tournament page opens it again when
  its player joins).  Then ``{"type": "ready"}``.
- **What**: ``{"type": "game", "game", "tournament", "name"}`` for each game of the player's made by
  a pairing, the one made just before the socket opened included (a player between two pages
  while paired: the pairing is younger than :data:`timecontrol.FIRST_MOVE`).  A page answers
  ``{"type": "ping"}`` with ``{"type": "pong"}``; nothing else is read.
- **How**: the database is the truth.  A process that pairs announces "tournament T has new games"
  (``NOTIFY`` ``"T -34"`` on PostgreSQL, heard by every process through the broker as a version hook
  of the transport; the process's own hook on SQLite), and each process reads T's fresh games once
  and sends each to the sockets of its two players here.  A message is never state: a lost one
  costs the player the redirect, not a wrong game.
- **Cost**: one socket per open page, under this process's caps (:class:`fairshare.SocketCaps`, as
  the lobby's sockets): :attr:`TournamentPolicy.push_per_address`, ``push_per_account`` and
  ``push_sockets`` in all; refused past them with ``too_many_connections``.  An idle one is closed
  at once, and a socket reads the database once when it opens (indexed: the player's tournaments)
  and once per announcement while some socket is open here.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from jericho_game.web import i18n
from jericho_game.web.common.fairshare import SocketCaps, address_of, too_many
from jericho_game.web.tournaments.tournaments import TOURNAMENT_PAIRED, TournamentService

__all__ = ["TOURNAMENT_PAIRED", "TournamentPush"]

log = logging.getLogger("jericho_game.web")

#: A page's unread pushes: past them the page is not reading, and further ones are dropped.
QUEUE = 16


class TournamentPush:
    """The push sockets of one process and the fan-out of its players' new games."""

    def __init__(self, tournaments: TournamentService) -> None:
        self.tournaments = tournaments
        # WebSocket -> account id or None (a blocking read): the transport's, set by install
        self.session_account: Any = lambda websocket: None
        p = tournaments.policy
        self.caps = SocketCaps(p.push_per_address, p.push_per_account)
        self.queues: dict[int, set[asyncio.Queue[dict[str, Any]]]] = {}
        self.open = 0
        self.loop: asyncio.AbstractEventLoop | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    def install(self, transport: Any) -> None:
        """Hear the announcements: the transport's version hook (every process, PostgreSQL) and the
        pairing's own call (SQLite: one process); the sockets' route reads ``tournaments.push``."""
        self.session_account = lambda websocket: transport.session_account(websocket)
        transport.version_hooks[TOURNAMENT_PAIRED] = self.paired
        self.tournaments.on_paired = self.paired_from_thread
        self.tournaments.push = self

    def paired_from_thread(self, tid: str) -> None:
        """:meth:`paired`, from the pairing's thread."""
        loop = self.loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self.paired, tid)

    def paired(self, tid: str) -> None:
        """Tournament ``tid`` has new games (on the event loop): send them to their players here."""
        if not self.queues:
            return  # nobody to tell on this process: no read
        task = asyncio.get_running_loop().create_task(self._deliver(tid))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _deliver(self, tid: str) -> None:
        try:
            games = await asyncio.get_running_loop().run_in_executor(None, self.tournaments.fresh_games, tid, None)
        except Exception:  # noqa: BLE001 - the database is away: the players' pages show their game on load
            log.exception("could not read tournament %s's new games", tid)
            return
        for g in games:
            for account in (g.pop("south"), g.pop("north")):
                for q in list(self.queues.get(int(account), ())):
                    _put(q, g)

    async def serve(self, websocket: Any) -> None:
        """The life of one push socket."""
        await websocket.accept()
        self.loop = asyncio.get_running_loop()
        lang = i18n.connection_language(websocket)
        try:
            account = await self.loop.run_in_executor(None, self.session_account, websocket)
        except Exception:  # noqa: BLE001 - the database is away: as if logged out
            account = None
        if account is None:
            text = i18n.error_text("not_logged_in", "log in first: tournaments are played by accounts", lang)
            await websocket.send_text(json.dumps({"type": "error", "code": "not_logged_in", "message": text}))
            await websocket.close(code=1008)
            return
        address = address_of(websocket)
        p = self.tournaments.policy
        if self.open >= p.push_sockets or not self.caps.take(address, account):
            await websocket.send_text(too_many("tournament", p.push_per_address))
            await websocket.close(code=1013)
            return
        self.open += 1
        q: asyncio.Queue[dict[str, Any]] = asyncio.Queue(QUEUE)
        mine = self.queues.setdefault(account, set())
        mine.add(q)  # before the read: a pairing meanwhile is sent twice, never missed
        try:
            inside, fresh = await self.loop.run_in_executor(None, self.tournaments.push_start, account)
            if not inside:
                await websocket.send_text(json.dumps({"type": "idle"}))
                await websocket.close(code=1000)
                return
            await websocket.send_text(json.dumps({"type": "ready"}))
            for g in fresh:
                _put(q, g)
            sender = self.loop.create_task(self._send(websocket, q))
            try:
                while True:
                    message = await websocket.receive()
                    if message["type"] == "websocket.disconnect":
                        break
                    try:
                        msg = json.loads(message.get("text") or "")
                    except ValueError:
                        msg = None
                    if isinstance(msg, dict) and msg.get("type") == "ping":
                        _put(q, {"type": "pong"})
            finally:
                sender.cancel()
        finally:
            mine.discard(q)
            if not mine:
                self.queues.pop(account, None)
            self.caps.give(address, account)
            self.open -= 1

    @staticmethod
    async def _send(websocket: Any, q: asyncio.Queue[dict[str, Any]]) -> None:
        sent: set[str] = set()  # a game announced twice (the read at opening, a NOTIFY) goes once
        try:
            while True:
                msg = await q.get()
                if msg.get("type") == "game":
                    if msg["game"] in sent:
                        continue
                    sent.add(msg["game"])
                await websocket.send_text(json.dumps(msg))
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - the socket closed: its receive loop ends it
            return


def _put(q: asyncio.Queue[dict[str, Any]], msg: dict[str, Any]) -> None:
    try:
        q.put_nowait(dict(msg))
    except asyncio.QueueFull:
        pass  # the page is not reading: it shows its game when it does
