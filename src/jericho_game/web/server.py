"""The transport: HTTP and WebSocket, thin (``jericho serve``).

The server is authoritative, and the database is the truth.  The parts (docs/web.md, "Design"):

- :mod:`jericho_game.web.round.rooms`: the game-room service, the only place that decides;
- :mod:`jericho_game.web.storage.database`: the store (SQL only);
- :mod:`jericho_game.web.storage.broker`: the fan-out between processes (in memory, or PostgreSQL's
  LISTEN/NOTIFY);
- :mod:`jericho_game.web.airunner.aiqueue`: the AI job queue's consumer, a bounded pool of processes;
- this module: requests and WebSocket messages in, answers and broadcasts out.  Each connection
  has a bounded send queue with the state coalesced (only the latest state matters), so a client
  that does not read cannot hold up anybody else; one too far behind is closed.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import logging
import os
import random
import re
import socket
import sys
import time
from collections.abc import AsyncIterator, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from jericho_game.extras import missing_extra

try:
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.middleware.gzip import GZipMiddleware
    from starlette.requests import Request
    from starlette.responses import JSONResponse, PlainTextResponse, Response
    from starlette.routing import Mount, Route, WebSocketRoute
    from starlette.staticfiles import StaticFiles
    from starlette.types import ASGIApp, Message, Receive, Scope, Send
    from starlette.websockets import WebSocket, WebSocketDisconnect
except ImportError as exc:
    raise missing_extra("the web app", "web", exc) from exc


from jericho_game.ai.base import Limit
from jericho_game.ai.levels import LADDER
from jericho_game.game import Game
from jericho_game.web import i18n
from jericho_game.web.accounts.accounts import AccountService, account_routes
from jericho_game.web.accounts.prefs import Prefs, prefs_routes
from jericho_game.web.accounts.ratings import RatingPolicy, Ratings, rating_routes
from jericho_game.web.airunner.aiqueue import AIRunner
from jericho_game.web.common import budget as budgeting
from jericho_game.web.common import fairshare, jsonin
from jericho_game.web.common.budget import Budget, BudgetPolicy, Who, costs, free
from jericho_game.web.common.conn import Conn
from jericho_game.web.common.fairshare import SocketCaps, address_of, too_many
from jericho_game.web.common.limits import Limits
from jericho_game.web.common.workers import make_pool
from jericho_game.web.learn import tutorial
from jericho_game.web.learn.puzzles import PuzzleService, puzzle_routes
from jericho_game.web.learn.review import DEFAULT_SECONDS as REVIEW_SECONDS
from jericho_game.web.learn.review import DEFAULT_SIMS as REVIEW_SIMS
from jericho_game.web.learn.review import REVIEW_CHANGED, ReviewJobs, ReviewService, ReviewStore
from jericho_game.web.learn.review import routes as review_routes
from jericho_game.web.lobby.seeks import Lobby
from jericho_game.web.people.feed import PeopleFeed
from jericho_game.web.people.gamesearch import GameSearch
from jericho_game.web.people.people import PeoplePolicy, PeopleService, people_routes
from jericho_game.web.people.playerstats import PlayerStats, games_routes
from jericho_game.web.people.timeline import Timeline, timeline_routes
from jericho_game.web.round import endings, mygames, wire
from jericho_game.web.round.correspondence import correspondence_routes, turn_mail_hook
from jericho_game.web.round.messages import Incoming, MessageTable, game_messages
from jericho_game.web.round.records import write_game_record
from jericho_game.web.round.rooms import Change, ClientError, GameService, Room
from jericho_game.web.site import openapi, pages
from jericho_game.web.site.errors import InternalErrors
from jericho_game.web.site.httpguard import NulGuard, uvicorn_options
from jericho_game.web.site.owndata import OwnData, owndata_routes
from jericho_game.web.social.chat import Chat, ChatStore
from jericho_game.web.social.notify import MailPolicy, Notifier, SmtpConfig, check_public_url, notify_routes
from jericho_game.web.storage.broker import Broker, make_broker
from jericho_game.web.storage.database import LOBBY_ID, PRESENCE_VERSION, AIJob, Storage, resolve_db_url
from jericho_game.web.storage.threads import CallThreads
from jericho_game.web.tournaments.chat import TournamentChat
from jericho_game.web.tournaments.push import TournamentPush
from jericho_game.web.tournaments.tournaments import TournamentPolicy, TournamentService, tournament_routes

__all__ = ["ClientError", "Conn", "Limits", "Transport", "create_app", "add_arguments", "run", "SECURITY_HEADERS"]

log = logging.getLogger("jericho_game.web")

STATIC = Path(__file__).resolve().parent / "site" / "static"
SWITCH_INTERVAL = 0.00025  # seconds: the GIL switch interval while the app runs (see create_app)
SHUTDOWN_WAIT = 30.0  # seconds the stopping app waits for the storage calls still running in threads

# Every HTTP response carries these.  frame-ancestors 'none': the seat token lives in the page,
# so no other site may frame it (clickjacking).
SECURITY_HEADERS = {
    "content-security-policy": (
        "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
        "connect-src 'self' ws: wss:; object-src 'none'; base-uri 'none'; form-action 'self'; "
        "frame-ancestors 'none'"
    ),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
}


class Transport:
    """WebSocket connections per game, broadcasts, timers and the local AI runner of one process."""

    def __init__(
        self,
        service: GameService,
        broker: Broker,
        limits: Limits,
        *,
        ai_processes: int = 0,
        ai_limit: Limit | None = None,
        ai_delay: float = 0.0,
        ai_nice: int = 10,
        job_kinds: list[Any] | None = None,
    ) -> None:
        self.service = service
        self.reviews: ReviewService | None = None  # set by create_app (web/learn/review.py)
        self.broker = broker
        self.limits = limits
        self.conns: dict[str, set[Conn]] = {}
        self.sent: dict[str, tuple[int, int | None]] = {}  # game -> (version, AI place) last broadcast
        # issue 57: per game with clients here, the last state broadcast (its number, the state, its
        # message): the next broadcast goes out as a delta from it to the clients that hold it
        self.wire: dict[str, tuple[int, dict[str, Any], str]] = {}
        self.timers: dict[str, asyncio.TimerHandle] = {}
        self.ai_processes = ai_processes
        self.runner: AIRunner | None = None
        if ai_processes >= 0:
            slots = ai_processes if ai_processes > 0 else 2
            self.runner = AIRunner(
                service.storage,
                self._play_ai,
                slots=slots,
                pool=make_pool(ai_processes + 1 if ai_processes > 0 else 0, ai_nice),  # + the cheap lane's
                ai_limit=ai_limit,
                ai_delay=ai_delay,
                on_claim=lambda job: self.broker.publish(job.game_id, -1),
                kinds=job_kinds or [],
            )
        self._tasks: set[asyncio.Task[Any]] = set()
        self._stale: dict[str, int] = {}  # games another process changed: version announced
        self._reloading: asyncio.Task[None] | None = None
        # accounts (web/accounts/accounts.py): the logged-in account of a WebSocket, by its session cookie
        self.session_account: Callable[[WebSocket], int | None] = lambda ws: None
        service.busy_rooms = lambda gid: bool(self.conns.get(gid))
        # presence rows of this process: its id, and the counts last written per game
        self.process = f"{socket.gethostname()[:30]}:{os.getpid()}:{random.randrange(1 << 30):x}"
        self.written: dict[str, dict[str, int]] = {}
        # the presence this process last worked out per game with clients here.  It is kept by game
        # id, not only on the cached room: a commit that builds the next room while a presence
        # read lands would otherwise carry the older counts, and no later read would send the
        # newer ones (a watcher count stuck at 0: a CI hang)
        self.present: dict[str, dict[str, Any]] = {}
        self._presence_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="jericho-presence")
        self.lobby = Lobby(service, limits, self.after)
        # fair share: this process's game sockets that hold no seat, per address and account
        self.caps = SocketCaps(limits.ws_per_address, limits.ws_per_address)
        # the WebSocket's message kinds (web/round/messages.py): features add theirs with messages.add
        self.messages: MessageTable = game_messages()
        # broker versions that features announce (e.g. web/social/chat.py's CHAT_CHANGED): version -> handler(game)
        self.version_hooks: dict[int, Callable[[str], None]] = {}

    # -- lifecycle -------------------------------------------------------------------------
    async def start(self) -> None:
        """Listen to the broker, start the clock sweeper and the AI runner."""
        await self.broker.start(self.on_change, self.runner.wake if self.runner else None)
        self._spawn(self._sweeper())
        self._spawn(self._watchdog())
        self._spawn(self._heartbeat())
        self._spawn(self.lobby.sweep())
        if self.runner is not None:
            self._spawn(self.runner.run())

    async def stop(self) -> None:
        """Stop background work (the AI's jobs go back to the queue)."""
        for task in list(self._tasks):
            task.cancel()
        if self._reloading is not None:
            self._reloading.cancel()
        for h in self.timers.values():
            h.cancel()
        if self.runner is not None:
            await self.runner.close()
        self._presence_thread.shutdown(wait=True)  # the last counts are stored before the pool goes
        await self.broker.close()

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)  # the loop keeps only a weak reference to a task
        task.add_done_callback(self._tasks.discard)

    # -- fan-out ---------------------------------------------------------------------------
    def on_change(self, game_id: str, version: int) -> None:
        """A game changed (here or in another process): bring this process's clients up to date."""
        if version in self.version_hooks:  # a feature's own announcement (web/social/chat.py, ...): not the lobby's
            self.version_hooks[version](game_id)
            return
        self.lobby.on_change(game_id, version)
        if game_id == LOBBY_ID:
            return
        if version == PRESENCE_VERSION:  # who is connected changed (maybe on another process)
            if self.conns.get(game_id):
                self._reread_presence(game_id)
            return
        if game_id == "*":  # the broker may have missed changes: check every game with clients
            for gid in list(self.conns):
                try:
                    self._broadcast_room(self.service.room(gid))  # reloaded if the stored version is newer
                except Exception:  # noqa: BLE001 - e.g. the game is gone: its clients hear of it on reconnect
                    log.exception("could not check game %s after the broker reconnected", gid)
                self._send_review(gid)
                for hook in self.version_hooks.values():  # e.g. chat messages sent meanwhile
                    hook(gid)
            return
        if version == REVIEW_CHANGED:  # the game's review advanced (web/learn/review.py)
            self._send_review(game_id)
            return
        if version < 0:  # an AI job was claimed: that game, and every game queued behind it, moved up
            queued = [g for g, (_, place) in self.sent.items() if place and self.conns.get(g)]
            for gid in ([game_id] if self.conns.get(game_id) else []) + [g for g in queued if g != game_id]:
                try:
                    room = self.service.refresh(gid, -1)
                except Exception:  # noqa: BLE001 - the next change or reconnect catches up
                    log.exception("could not read the AI queue for game %s", gid)
                    continue
                if room is not None:
                    self._broadcast_room(room)
            return
        if not self.conns.get(game_id):
            return
        if game_id in self.service.committing:
            # this process is committing a change of the game: its mover's ack goes out first,
            # then the state; look again once that is done
            asyncio.get_running_loop().call_later(0.005, self.on_change, game_id, version)
            return
        room = self.service.cached(game_id)
        if room is not None and room.version >= version:
            self._broadcast_room(room)
            return
        # another process changed it: reload it off the event loop, together with the other games
        # announced meanwhile (reloading on the loop stopped it for two round trips per change)
        self._stale[game_id] = max(version, self._stale.get(game_id, version))
        if self._reloading is None:
            self._reloading = asyncio.get_running_loop().create_task(self._reload_stale())

    async def _reload_stale(self) -> None:
        try:
            while self._stale:
                batch, self._stale = self._stale, {}
                try:
                    rooms = await self.service.off_loop_read(self._reload, batch)
                except Exception:  # noqa: BLE001 - the database is away: the next change or reconnect catches up
                    log.exception("could not reload games after a change")
                    continue
                for room in rooms:
                    if self.conns.get(room.rec.id):
                        self._broadcast_room(room)
        finally:
            self._reloading = None

    def _reload(self, batch: dict[str, int]) -> list[Room]:
        """(On the service's read thread.)  The rooms of ``batch`` brought up to their stored versions."""
        out = []
        for gid, version in batch.items():
            try:
                out.append(self.service.refresh(gid, version) or self.service.room(gid))
            except Exception:  # noqa: BLE001 - e.g. the game is gone: its clients hear of it on reconnect
                log.exception("could not reload game %s after a change", gid)
        return out

    def _send_review(self, game_id: str) -> None:
        """Queue the game's review for every client of it on this process (if it has one)."""
        conns = self.conns.get(game_id)
        if not conns or self.reviews is None:
            return
        try:
            text = self.reviews.message(game_id)
        except Exception:  # noqa: BLE001 - the database is away: the page asks again on reconnect
            log.exception("could not read the review of game %s", game_id)
            return
        if text is None:
            return  # no review: nothing to say
        for conn in list(conns):
            conn.put(text, "review", self.limits)

    def broadcast(self, room: Room) -> None:
        """Queue the room's current state for every client of it on this process."""
        self._broadcast_room(room, force=True)

    def _broadcast_room(self, room: Room, force: bool = False) -> None:
        gid = room.rec.id
        key = (room.version, room.ai_place)
        present = self.present.get(gid)
        if present is not None and room.present != present:
            room.present = present
        last = self.sent.get(gid)
        if not force and last is not None and (last[0] > room.version or last == key):
            return  # never an older state after a newer one
        self.sent[gid] = key
        self._arm_timer(room)
        conns = self.conns.get(gid)
        if not conns:
            return
        game_json = self.service.state_json(room)
        # issue 57 (web/round/wire.py): the state is rendered once, the delta worked out once; a
        # client of protocol 2 whose copy is the last state (nothing of it still waiting to go out)
        # gets the delta, every other the whole state (numbered: a later delta names it)
        last_wire = self.wire.get(gid)
        seq = last_wire[0] + 1 if last_wire is not None else 1
        text = '{"type":"state","seq":' + str(seq) + ',"game":' + game_json + "}"
        delta_text: str | None = None
        if last_wire is not None and any(c.proto >= wire.PROTOCOL and c.wire_seq == last_wire[0] for c in conns):
            game = json.loads(game_json)
            delta = wire.diff(last_wire[1], game)
            if delta is not None:
                delta_text = json.dumps(
                    {"type": "delta", "from": last_wire[0], "seq": seq, **delta}, separators=(",", ":")
                )
        else:
            game = json.loads(game_json) if any(c.proto >= wire.PROTOCOL for c in conns) else {}
        self.wire[gid] = (seq, game, text)
        for conn in list(conns):
            conn.seen_version = room.version
            if (
                delta_text is not None
                and conn.wire_seq == seq - 1
                and conn.proto >= wire.PROTOCOL
                and not conn.waiting("state", "delta")
            ):
                conn.put(delta_text, "delta", self.limits)
            else:  # a slow reader's waiting state or deltas give way to this whole state
                conn.put(text, "state", self.limits)
            conn.wire_seq = seq

    def sync(self, game_id: str, conn: Conn) -> None:
        """Queue the last state broadcast, whole, for ``conn`` (a client of protocol 2 that saw a
        delta it could not apply: it missed one)."""
        last_wire = self.wire.get(game_id)
        if last_wire is None or not last_wire[1]:
            self.broadcast(self.service.cached(game_id) or self.service.room(game_id))
            return
        conn.put(last_wire[2], "state", self.limits)
        conn.wire_seq = last_wire[0]

    def send(self, conn: Conn, msg: dict[str, Any]) -> None:
        """Queue one message for one client."""
        conn.put(json.dumps(msg), msg.get("type", "msg"), self.limits)

    def after(self, change: Change, conn: Conn | None = None, ref: Any = None) -> None:
        """A committed change: the mover's ``ack`` first, then the state to everyone, then other processes."""
        if change.ack is not None and conn is not None:
            self.send(conn, {**change.ack, "ref": ref})
        if change.committed:
            self.service.announce(change.room)
        self._broadcast_room(change.room)

    # -- timers ----------------------------------------------------------------------------
    def _arm_timer(self, room: Room) -> None:
        """A local timer for the exact moment a clock runs out (the sweeper is the safety net)."""
        gid = room.rec.id
        old = self.timers.pop(gid, None)
        if old is not None:
            old.cancel()
        if not self.conns.get(gid):
            return
        side = self.service.clock_side(room)  # not rec.deadline: games stored before it existed lack it
        if side is not None:
            delay = max(0.0, self.service.time_left(room, side)) + 0.05
        else:  # an online game's first move awaited: aborted when it does not come (issue 52)
            due = self.service.first_move_due(room.rec, room.game)
            if due is None:
                return
            delay = max(0.0, due - self.service.now()) + 0.05
        self.timers[gid] = asyncio.get_running_loop().call_later(delay, self._flag, gid)

    def _flag(self, game_id: str) -> None:
        self.timers.pop(game_id, None)
        try:
            change = self.service.flag(game_id)
        except Exception:  # noqa: BLE001 - the sweeper tries again
            log.exception("could not end game %s on time", game_id)
            return
        if change is not None:
            self.after(change)
        else:
            room = self.service.cached(game_id)
            if room is not None:
                self._arm_timer(room)

    async def _sweeper(self) -> None:
        """Every process looks for clocks that ran out; the row lock lets exactly one end the game.
        So a game whose process was killed still loses on time within a sweep or two."""
        while True:
            await asyncio.sleep(self.limits.sweep * random.uniform(0.8, 1.2))
            try:
                due = await self.service.off_loop_read(self.service.storage.due, self.service.now())
            except Exception:  # noqa: BLE001 - the database is away: next sweep
                log.exception("could not look for clocks that ran out")
                continue
            for gid in due:
                self._flag(gid)
            await self._abort_unstarted()

    async def _abort_unstarted(self) -> None:
        """Abort the AI games whose player never made their first move (issue 51): they stop holding
        the AI's budgets, and no process's memory is needed for it (every process sweeps)."""
        svc = self.service
        try:
            # wall time, as the games' updated_at (the service's clock may be a test's)
            stale = await svc.off_loop_read(svc.storage.unstarted_ai_games, time.time() - svc.ai_first_move)
        except Exception:  # noqa: BLE001 - the database is away: next sweep
            log.exception("could not look for AI games nobody started")
            return
        for gid in stale:
            try:
                change = await svc.off_loop(endings.abort_unstarted, svc, gid)
            except Exception:  # noqa: BLE001 - the next sweep tries again
                log.exception("could not abort the unstarted AI game %s", gid)
                continue
            if change is not None:
                self.after(change)

    async def _watchdog(self) -> None:
        """Close the clients whose current message has not gone out within the send timeout."""
        every = min(1.0, self.limits.send_timeout / 4)
        while True:
            await asyncio.sleep(every)
            now = time.monotonic()
            for conns in list(self.conns.values()):
                for conn in list(conns):
                    since = conn.sending_since
                    if since is not None and now - since > self.limits.send_timeout:
                        conn.drop(f"it did not read for {self.limits.send_timeout:g} s")

    # -- AI --------------------------------------------------------------------------------
    def _play_ai(self, job: AIJob, move: str | None) -> None:
        change = self.service.ai_move(job, move)
        if change is not None:
            self.after(change)

    # -- messages --------------------------------------------------------------------------
    def _rate_ok(self, conn: Conn) -> bool:
        now = time.monotonic()
        conn.tokens = min(float(self.limits.burst), conn.tokens + (now - conn.stamp) * self.limits.rate)
        conn.stamp = now
        if conn.tokens >= 1.0:
            conn.tokens -= 1.0
            return True
        return False

    def _local_counts(self, game_id: str) -> dict[str, int]:
        conns = self.conns.get(game_id, set())
        return {
            "south": sum(1 for c in conns if "south" in c.seats),
            "north": sum(1 for c in conns if "north" in c.seats),
            "watchers": sum(1 for c in conns if not c.seats),
        }

    def presence(self, game_id: str) -> None:
        """Store this process's count of a game's players and watchers (when it changed), and read
        everyone's back into the game's state: presence is in the database, across processes.

        The write goes to a thread of its own (in order: one thread), so a disk flush never holds
        up the event loop; until it lands, this process's own connections count as present."""
        counts = self._local_counts(game_id)
        room = self.service.cached(game_id)
        if room is not None and room.rec.mode != "online":
            # against the AI and hot-seat nothing is decided on presence: this process's own count is
            # enough, and a move's commit never waits for a presence write (SQLite has one writer)
            room.present = self.present[game_id] = {**counts, "away": {}}
            return
        old = self.written.get(game_id, {"south": 0, "north": 0, "watchers": 0})
        if old != counts:
            # only the seats whose count changed: rewriting an unchanged empty seat would move the
            # time it has been away since
            changed = {side: n for side, n in counts.items() if old.get(side, 0) != n}
            if any(counts.values()):
                self.written[game_id] = counts
            else:
                self.written.pop(game_id, None)
            fut = asyncio.get_running_loop().run_in_executor(
                self._presence_thread,
                self.service.storage.set_presence,
                game_id,
                self.process,
                changed,
                self.service.now(),
            )
            fut.add_done_callback(lambda f: self._presence_stored(game_id, f))
        self._reread_presence(game_id, broadcast=False)

    def _presence_stored(self, game_id: str, fut: asyncio.Future[None]) -> None:
        if fut.cancelled():
            return
        if fut.exception() is not None:  # the database is away: the next connection or beat retries
            log.error("could not store who is connected to game %s: %s", game_id, fut.exception())
            self.written.pop(game_id, None)
            return
        self.broker.publish(game_id, PRESENCE_VERSION)  # other processes hear it from the database

    def _reread_presence(self, game_id: str, broadcast: bool = True) -> None:
        room = self.service.cached(game_id)
        if room is None:
            return
        try:
            p = self.service.storage.presence(game_id, self.service.now(), self.service.presence_ttl)
        except Exception:  # noqa: BLE001 - keep the last known presence
            log.exception("could not read who is connected to game %s", game_id)
            return
        local = self._local_counts(game_id)  # ahead of the database while a write is on its way
        present = {
            "south": int(p.present["south"] or local["south"] > 0),
            "north": int(p.present["north"] or local["north"] > 0),
            # never fewer than this process's own: a watcher's first state counts it (it said
            # "1 watching" a moment later, a line more in a phone's score bar: the bar grew under it)
            "watchers": max(p.watchers, local["watchers"]),
            "away": {s: t for s, t in p.away_since.items() if t is not None and not local[s]},
        }
        if present != room.present or present != self.present.get(game_id):
            room.present = self.present[game_id] = present
            if broadcast:
                self.broadcast(room)

    async def _heartbeat(self) -> None:
        """Renew this process's presence rows, and notice other processes' stale ones (a killed
        process's players become away once its rows are older than the presence TTL)."""
        beat = self.limits.presence_beat
        loop = asyncio.get_running_loop()
        beats = 0
        while True:
            await asyncio.sleep(beat * random.uniform(0.9, 1.1))
            beats += 1
            try:
                await loop.run_in_executor(None, self.service.storage.beat, self.process, self.service.now())
                if beats % 360 == 0:  # now and then, forget games nobody has been at for a day
                    await loop.run_in_executor(None, self.service.storage.forget_presence, time.time() - 86400)
            except Exception:  # noqa: BLE001 - next beat
                log.exception("could not renew presence")
                continue
            for gid in list(self.conns):
                room = self.service.cached(gid)
                if room is not None and room.rec.mode == "online":
                    self._reread_presence(gid)

    async def handle(self, game_id: str, conn: Conn, text: str) -> None:
        """Handle one text message from a client; every refusal is answered with an ``error``."""
        ref = None
        try:
            if not self._rate_ok(conn):
                raise ClientError("rate_limited", f"too many messages: at most {self.limits.rate:g} per second")
            if len(text.encode("utf-8", "replace")) > self.limits.max_message:
                raise ClientError("too_large", f"message too large: the limit is {self.limits.max_message} bytes")
            try:
                msg = jsonin.loads(text)
            except jsonin.JSON_ERRORS:
                raise ClientError("bad_json", "message is not valid JSON") from None
            if not isinstance(msg, dict):
                raise ClientError("bad_message", "message must be a JSON object with a 'type'")
            ref = msg.get("ref") if isinstance(msg.get("ref"), str | int) else None
            # one table of message kinds, kind -> handler (web/round/messages.py); unknown: bad_message
            await self.messages.dispatch(Incoming(self, game_id, conn, msg, ref))
            conn.refused = 0
        except ClientError as exc:
            conn.refused += 1
            err: dict[str, Any] = {
                "type": "error",
                "code": exc.code,
                "message": i18n.error_text(exc.code, _capitalise_sides(exc.message), i18n.connection_language(conn.ws)),
                "ref": ref,
            }
            if exc.game is not None:
                err["game"] = exc.game
            self.send(conn, err)
            if exc.game is not None:
                room = self.service.cached(game_id)
                if room is not None:
                    self._broadcast_room(room)
            if conn.refused >= self.limits.flood_close:
                await asyncio.sleep(0.05)  # let the pump deliver the last error first
                conn.drop("too many refused messages", stop=False)
                await conn.ws.close(code=1008, reason="too many refused messages")
        except Exception:  # noqa: BLE001 - e.g. the database is unreachable: refuse, keep the game
            log.exception("internal error while handling a message for game %s", game_id)
            message = "the server could not handle this message (nothing was changed): try again"
            message = i18n.error_text("internal", message, i18n.connection_language(conn.ws))
            self.send(conn, {"type": "error", "code": "internal", "message": message, "ref": ref})

    def _done(self, change: Change, conn: Conn, ref: Any) -> None:
        self.after(change, conn, ref)
        if change.error is not None:
            raise change.error

    async def _hello(self, game_id: str, conn: Conn, msg: dict[str, Any]) -> None:
        # reads and writes off the event loop: a round trip on it stops every game of this process
        room = await self.service.off_loop_read(self.service.room, game_id)
        token = msg.get("token")
        seats: frozenset[str] = frozenset()
        if token is not None or conn.account is not None:
            seats = self.service.seats_of(room, token, conn.account)
            if not seats and token is not None:  # (an account alone with no seat here just watches)
                conn.seats = frozenset()
                self.send(conn, {"type": "welcome", "role": "spectator", "hello": True})
                raise ClientError("bad_token", "this token does not hold a seat in this game: you are watching")
        conn.seats = seats
        if seats and conn.capped:  # a seat holder counts in no per-address cap (fair share)
            conn.capped = False
            self.caps.give(conn.address, conn.account)
        # "hello": this welcome answers the hello (the one sent at connection comes first and says
        # spectator): a page holding a seat waits for it before drawing the game (static/app.js)
        self.send(conn, {"type": "welcome", "role": conn.role, "hello": True})
        self.presence(game_id)
        if self.service.may_arrive(room, seats):
            change = await self.service.off_loop(self.service.arrive, game_id, seats)
            if change is not None and change.committed:
                self.after(change)
        conn.wire_seq = -1  # issue 57: the answer to a hello is the whole state, in every protocol
        self.broadcast(self.service.cached(game_id) or room)
        if msg.get("name") is not None and seats:  # a seat without a name takes the player's
            # bad_name: refused (the seat is held all the same)
            named = await self.service.off_loop(endings.set_name, self.service, game_id, seats, msg.get("name"))
            if named is not None:
                self.after(named)

    # -- a WebSocket -------------------------------------------------------------------------
    @costs("ai.wait")  # a move that queues the AI's reply; the socket itself is held under SocketCaps
    async def serve_ws(self, websocket: WebSocket) -> None:
        """The life of one WebSocket connection to ``/ws/{id}``."""
        await websocket.accept()
        game_id = websocket.path_params["id"]
        try:
            room = await self.service.off_loop_read(self.service.room, game_id)
        except ClientError as exc:
            message = i18n.error_text(exc.code, exc.message, i18n.connection_language(websocket))
            await websocket.send_text(json.dumps({"type": "error", "code": exc.code, "message": message}))
            await websocket.close(code=4404 if exc.status == 404 else 4400)
            return
        except Exception:  # noqa: BLE001 - e.g. the database is unreachable: say so, the page retries
            log.exception("cannot load game %s for a WebSocket client", game_id)
            why = "the server could not load this game right now (nothing was changed): retrying"
            why = i18n.error_text("internal", why, i18n.connection_language(websocket))
            await websocket.send_text(json.dumps({"type": "error", "code": "internal", "message": why}))
            await websocket.close(code=1011)
            return
        try:
            account = self.session_account(websocket)
        except Exception:  # noqa: BLE001 - the database is away: this connection is anonymous
            log.exception("could not read the session of a WebSocket client")
            account = None
        conn = Conn(websocket, tokens=float(self.limits.burst), account=account, address=address_of(websocket))
        conn.proto = wire.PROTOCOL if websocket.query_params.get("proto") == str(wire.PROTOCOL) else 1
        if not await self._admit(game_id, room, conn):
            return
        conn.task = asyncio.current_task()
        conn.on_drop = lambda c, why: self._forget(game_id, c)
        pump = asyncio.get_running_loop().create_task(conn.pump(self.limits))
        try:
            if conn.probation:
                text = await self._probation(game_id, conn)
                if text is None:
                    return
                await self.handle(game_id, conn, text)  # its hello, as any connection's
            else:
                self.presence(game_id)
                self.send(conn, {"type": "welcome", "role": "spectator"})
                self.broadcast(room)
            while not conn.dropped:
                message = await websocket.receive()
                if message["type"] == "websocket.disconnect":
                    break
                text = message.get("text")
                if text is None:
                    data = message.get("bytes") or b""
                    if len(data) > self.limits.max_message:
                        text = "x" * (self.limits.max_message + 1)
                    else:
                        why = i18n.error_text("bad_message", "send text (JSON), not binary", conn_lang(conn))
                        self.send(conn, {"type": "error", "code": "bad_message", "message": why})
                        continue
                await self.handle(game_id, conn, text)
        except (WebSocketDisconnect, RuntimeError):
            pass  # gone, or closed by us after a flood
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if not conn.dropped or task is None:
                raise  # the server is stopping
            task.uncancel()  # dropped for not reading: ending this handler closes the connection
        finally:
            pump.cancel()
            self._forget(game_id, conn)
            if conn.capped:
                conn.capped = False
                self.caps.give(conn.address, conn.account)
            room2 = self.service.cached(game_id)
            if room2 is not None and self.conns.get(game_id):
                self.broadcast(room2)  # one fewer player or watcher

    async def _admit(self, game_id: str, room: Room, conn: Conn) -> bool:
        """Fair share (web/common/fairshare.py): count a new connection in, or refuse it.  A connection whose
        session holds a seat is always let in; one that holds none counts in its address's (and
        account's) cap, and once the game's watchers are full it is held on probation."""
        seated = False
        if conn.account is not None:
            try:
                seated = bool(self.service.seats_of(room, None, conn.account))
            except ClientError:
                seated = False
        if not seated:
            if not self.caps.take(conn.address, conn.account):
                await conn.ws.send_text(too_many("game", self.limits.ws_per_address))
                await conn.ws.close(code=1013)
                return False
            conn.capped = True
            watchers = sum(1 for c in self.conns.get(game_id, ()) if not c.seats)
            conn.probation = watchers >= self.limits.max_connections_per_game
        if not conn.probation:
            self.conns.setdefault(game_id, set()).add(conn)
        return True

    async def _probation(self, game_id: str, conn: Conn) -> str | None:
        """A connection held while the game's watchers are full: its first message, a ``hello``
        with a seat's token, within ``seat_grace`` seconds, lets it in (the text, for the usual
        handling); anything else closes it with ``full``."""
        text: str | None = None
        try:
            message = await asyncio.wait_for(conn.ws.receive(), self.limits.seat_grace)
            text = message.get("text") if message["type"] == "websocket.receive" else None
        except TimeoutError:
            pass
        seats: frozenset[str] = frozenset()
        if text is not None:
            try:
                msg = json.loads(text)
                token = msg.get("token") if isinstance(msg, dict) and msg.get("type") == "hello" else None
                if token is not None:
                    room = await self.service.off_loop_read(self.service.room, game_id)
                    seats = self.service.seats_of(room, token, conn.account)
            except (ValueError, RecursionError, ClientError):
                seats = frozenset()
        if not seats:
            why = "this game has as many watchers as it may have; its players always get in"
            why = i18n.error_text("full", why, i18n.connection_language(conn.ws))
            try:
                await conn.ws.send_text(json.dumps({"type": "error", "code": "full", "message": why}))
                await conn.ws.close(code=1013)
            except Exception:  # noqa: BLE001 - it is gone already
                pass
            return None
        conn.probation = False
        conn.capped = False
        self.caps.give(conn.address, conn.account)  # a seat holder counts in no cap
        self.conns.setdefault(game_id, set()).add(conn)
        return text

    def _forget(self, game_id: str, conn: Conn) -> None:
        conns = self.conns.get(game_id)
        if conns is not None:
            conns.discard(conn)
            if not conns:
                del self.conns[game_id]
                self.sent.pop(game_id, None)
                self.wire.pop(game_id, None)
                timer = self.timers.pop(game_id, None)
                if timer is not None:
                    timer.cancel()
        self.presence(game_id)
        if game_id not in self.conns:  # nobody here any more: nothing to keep up to date
            self.present.pop(game_id, None)


# -- HTTP --------------------------------------------------------------------------------------


def conn_lang(conn: Any) -> str:
    """The language of a client's connection (its WebSocket's cookie or ``Accept-Language``)."""
    return i18n.connection_language(getattr(conn, "ws", None))


def _capitalise_sides(message: str) -> str:
    """Side names as players read them ("South"), also in the engine's reasons ("south cannot pass")."""
    return re.sub(r"\b(south|north)\b", lambda m: m.group(1).capitalize(), message)


def _error(code: str, message: str, status: int) -> JSONResponse:
    return JSONResponse({"error": code, "message": message}, status_code=status)


async def _json_body(request: Request, limits: Limits, max_size: int | None = None) -> dict[str, Any]:
    return await jsonin.read_object(request, max_size or limits.max_message, ClientError)


def _links(request: Request, game_id: str, token: str | None = None, invite: str | None = None) -> dict[str, str]:
    base = str(request.base_url).rstrip("/")
    links = {"watch": f"{base}/g/{game_id}"}
    if token:
        links["play"] = f"{base}/g/{game_id}#seat={token}"
    if invite:
        links["invite"] = f"{base}/g/{game_id}#invite={invite}"
    return links


def _rules_text(lang: str = "en") -> str:
    here = Path(__file__).resolve()
    name = "rules.md" if lang == "en" else f"rules.{lang}.md"  # docs/rules.fr.md: the French rules
    for candidate in (here.parents[3] / "docs" / name, STATIC / name, here.parents[3] / "docs" / "rules.md"):
        if candidate.is_file():
            return candidate.read_text(encoding="utf-8")
    return "# Rules\n\nThe rules document is not installed."


class SecurityHeaders:
    """ASGI middleware: :data:`SECURITY_HEADERS` on every HTTP response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.headers = [(k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = list(message.get("headers", [])) + self.headers
            await send(message)

        await self.app(scope, receive, send_with_headers)


def analysis_routes(service: GameService, streams: Any) -> list[Any]:
    """The analysis board's routes (web/learn/analysis_board.py), looking games up in ``service``, and its
    engine's WebSocket ``/ws/analysis`` (web/learn/analysis_stream.py; before ``/ws/{id}``)."""
    from jericho_game.web.learn.analysis_board import AnalysisBoard

    def find(game_id: str) -> tuple[str | None, list[str]]:
        rec = service.room(game_id).rec  # unknown_game (404)
        return rec.start_position, list(rec.moves)

    return [*AnalysisBoard(find).routes(), WebSocketRoute("/ws/analysis", streams.serve)]


def create_app(
    db_url: str | None = None,
    *,
    limits: Limits | None = None,
    ai_limit: Limit | None = None,
    ai_delay: float = 0.0,
    ai_processes: int | None = None,
    ai_nice: int = 10,
    clock: Callable[[], float] = time.time,
    signup: bool = True,
    password_hasher: Any = None,
    review_sims: int = REVIEW_SIMS,
    review_seconds: float | None = REVIEW_SECONDS,
    rating_policy: RatingPolicy | None = None,
    smtp: str | None = None,
    mail_policy: MailPolicy | None = None,
    people_policy: PeoplePolicy | None = None,
    tournament_policy: TournamentPolicy | None = None,
    public_url: str | None = None,
    budgets: Mapping[str, Budget] | None = None,
    budget_settings: list[str] | None = None,
) -> Starlette:
    """The ASGI app.  ``db_url``: a SQLAlchemy URL or a SQLite file path (default: user data dir).

    ``ai_delay`` makes the AI wait at least that many seconds per move (so people see it move);
    ``ai_processes``: the local AI pool (default: up to 2 processes; 0: threads of this process,
    for tests with in-process players; -1: none, ``jericho worker`` processes do the thinking);
    ``clock`` is the wall clock used for game clocks and the log-in throttle (tests pass a fake one);
    ``signup``: whether anyone may create an account (``--no-signup``: only ``jericho user add``);
    ``password_hasher``: an ``argon2.PasswordHasher`` (tests pass a cheap one); ``review_sims`` and
    ``review_seconds``: the budget per position of a game review (web/learn/review.py);
    ``rating_policy``: which rated games count, and when a rating is provisional (web/accounts/ratings.py);
    ``smtp``: the ``--smtp`` URL that e-mail notifications go through (None: no mail), ``mail_policy``
    its retries and limits (web/social/notify.py); ``people_policy``: the challenges' limits
    (web/people/people.py); ``tournament_policy``: the tournaments' timing and limits
    (web/tournaments/tournaments.py).
    its retries and limits (web/social/notify.py); ``public_url``: the site's public address, which
    every link in a mail starts with (required with ``smtp``: never the request's ``Host``).
    """
    limits = limits or Limits()
    url = resolve_db_url(db_url)
    storage = Storage(url)
    broker = make_broker(url)
    # issue 51: one budget policy for every costly action (web/common/budget.py), the operator's
    # flags applied to its table; every feature below asks it
    table = dict(budgets) if budgets is not None else budgeting.from_limits(limits)
    table = budgeting.with_settings(table, budget_settings or [])  # jericho serve --budget KIND.SCOPE=N
    budget = BudgetPolicy(storage, table, clock=clock)
    service = GameService(
        storage,
        broker,
        clock=clock,
        max_rooms=limits.max_rooms_in_memory,
        creates_per_minute=limits.creates_per_minute,
        max_ai_jobs=limits.ai_queue,
        min_clock=limits.min_clock,
        claim_after=limits.claim_after,
        presence_ttl=3 * limits.presence_beat,
        seek_idle=limits.seek_idle,
        seek_max_age=limits.seek_max_age,
        ai_per_client=budgeting.per_client(table, "ai.wait"),
        seeks_per_client=budgeting.per_client(table, "seek"),
        ai_budget=fairshare.AIBudget.from_limits(limits),
        budget=budget,
    )
    fairshare.set_ipv4_prefix(limits.ipv4_prefix)  # one client: an IPv6 /64, an IPv4 /prefix (issue 33)
    if ai_processes is None:
        ai_processes = min(2, os.cpu_count() or 1)
    review_jobs = ReviewJobs(ReviewStore(storage), broker)
    transport = Transport(
        service,
        broker,
        limits,
        ai_processes=ai_processes,
        ai_limit=ai_limit,
        ai_delay=ai_delay,
        ai_nice=ai_nice,
        job_kinds=[review_jobs],
    )
    # the analysis board's live engine: streams in this process's AI pool (web/learn/analysis_stream.py)
    from jericho_game.web.learn.analysis_stream import AnalysisStreams

    streams = AnalysisStreams(
        storage,
        lambda: transport.runner,
        account_of=lambda ws: transport.session_account(ws),
        ai_per_client=budgeting.per_client(table, "ai.wait"),
        rate=limits.rate,
        burst=limits.burst,
        send_timeout=limits.send_timeout,
        budget=budget,
    )
    # accounts and ratings (optional for players: web/accounts/accounts.py, web/accounts/ratings.py)
    accounts = AccountService(storage, hasher=password_hasher, clock=clock, signup=signup, budget=budget)
    ratings = Ratings(storage, accounts, policy=rating_policy)
    service.on_finish.append(ratings.queue)
    service.account_name = accounts.name_of
    # e-mail notifications (web/social/notify.py): off without --smtp
    notifier = Notifier(
        storage,
        accounts,
        SmtpConfig.parse(smtp) if smtp else None,
        clock=clock,
        policy=mail_policy,
        public_url=public_url,
        budget=budget,
    )
    # correspondence games (web/round/correspondence.py): the quota, and a turn's mail in the move's transaction
    service.correspondence_per_client = limits.correspondence_per_client
    service.correspondence_seeks = limits.correspondence_seeks
    service.on_move.append(turn_mail_hook(notifier, service))

    def lobby_extras(rec: Any) -> dict[str, Any]:
        """The lobby's rating columns: whether the game is rated, the creator's rating (a seek) and
        each seated account's rating (None: an anonymous seat)."""
        ratings: dict[str, int | None] = {}
        for s in ("south", "north"):
            acc_id = getattr(rec, f"{s}_account", None)
            acc = accounts.get(acc_id) if acc_id is not None else None
            ratings[s] = round(acc.rating) if acc is not None else None
        creator = "south" if rec.south_token and not rec.joined else "north" if not rec.joined else None
        return {
            "rated": bool(rec.rated),
            "rating": ratings.get(creator) if creator else None,
            "ratings": ratings,
        }

    service.lobby_extras = lobby_extras

    def ws_account(ws: WebSocket) -> int | None:
        sess = accounts.session_of(ws)
        return None if sess is None else sess.account.id

    transport.session_account = ws_account

    def account_id(request: Request) -> int | None:
        sess = accounts.account_for_change(request)  # 403 csrf: the session cookie without its token
        return None if sess is None else sess.account.id

    reviews = ReviewService(
        service,
        review_jobs.store,
        review_jobs,
        sims=review_sims,
        seconds=review_seconds,
        max_queue=int(table["review"].total) if table["review"].total is not None else limits.review_queue,
        per_client=budgeting.per_client(table, "review"),
    )

    def review_account(request: Request) -> int | None:
        sess = accounts.session_of(request)
        return None if sess is None else sess.account.id

    reviews.account_of = review_account
    transport.reviews = reviews
    # the games' chat (web/social/chat.py): its messages and routes
    chat = Chat(ChatStore(storage), service, budget=budget)
    chat.install(transport)
    # people (web/people/people.py): follows, blocks, challenges; a block holds in the chat and the invitations
    people = PeopleService(storage, accounts, service, notifier, policy=people_policy, budget=budget)
    people_feed = PeopleFeed(people, limits)  # issue 52: challenges pushed to pages (/lobby/ws?feed=people)
    people_feed.install(transport)
    service.avoids = people.avoids  # issue 51: a block holds in seeks and the lobby too
    chat.blocks = people.blocked_by
    notifier.blocked = people.is_blocked
    # tournaments (web/tournaments/tournaments.py): arenas and Swiss, paired by every process
    tournaments = TournamentService(storage, accounts, service, policy=tournament_policy, budget=budget)
    tournaments.after = transport.after
    TournamentPush(tournaments).install(transport)  # issue 52: pairings pushed to the players' pages

    @free("the rule book, a file read once")
    async def rules_md(request: Request) -> Response:
        return PlainTextResponse(
            _rules_text(i18n.request_language(request)),
            media_type="text/markdown; charset=utf-8",
            headers={"Vary": "Accept-Language, Cookie"},
        )

    @free("the board's fixed geometry")
    async def topology(request: Request) -> Response:
        return JSONResponse(Game().topology.to_dict())

    async def known_levels() -> list[str]:
        # the first look builds every player, seconds for a slow plug-in's import: in a thread,
        # so that nobody else's page or move waits behind the first visitor's level picker
        if service.levels_known():
            return service.levels()
        return await asyncio.get_running_loop().run_in_executor(None, service.levels)

    @free("the AI levels, listed once per process")
    async def levels(request: Request) -> Response:
        levels = await known_levels()
        elo = {lv.name: lv.elo for lv in LADDER if lv.name in levels}  # ai/levels.py: "about 1,400" on the picker
        return JSONResponse({"levels": levels, "default": service.default_level(), "elo": elo})

    @free("one ping of the database")
    async def healthz(request: Request) -> Response:
        try:
            await asyncio.get_running_loop().run_in_executor(None, storage.ping)
        except Exception as exc:  # noqa: BLE001 - any failure means "not healthy"
            return JSONResponse({"ok": False, "database": f"unreachable: {str(exc)[:200]}"}, status_code=503)
        return JSONResponse({"ok": True, "database": "ok", "pid": os.getpid()})

    @costs("game.create", "ai.game", "ai.share", "seek")
    async def create(request: Request) -> Response:
        account = account_id(request)  # before the body: a CSRF-less post is refused as such
        spec = await _json_body(request, limits)
        client = address_of(request)  # the client's group: an IPv6 /64, an IPv4 /--ipv4-prefix (issue 33)
        await known_levels()  # an AI game's level is checked against them: not in the commit thread
        room, reply = await service.off_loop(service.create, spec, client, account)
        service.announce(room)
        if room.rec.public:
            broker.publish(LOBBY_ID, 0)  # this process's lobby (others hear it from the database)
        reply["links"] = _links(request, room.rec.id, reply.get("token"), reply.get("invite"))
        reply["game"] = service.public_state(room)
        return JSONResponse(reply, status_code=201)

    @free("one game's state, rendered once per version")
    async def show(request: Request) -> Response:
        room = service.room(request.path_params["id"])
        return Response(service.state_json(room), media_type="application/json")

    @free("takes the free seat of a game its creator paid for")
    async def join(request: Request) -> Response:
        account = account_id(request)
        body = await _json_body(request, limits)
        change, reply = await service.off_loop(
            service.join, request.path_params["id"], body.get("invite"), account, body.get("name")
        )
        transport.after(change)
        reply["links"] = _links(request, change.room.rec.id, reply["token"])
        return JSONResponse(reply)

    @free("one game's record: a replay bounded by the game's length")
    async def record(request: Request) -> Response:
        room = service.room(request.path_params["id"])
        return PlainTextResponse(
            write_game_record(room.game, service.record_tags(room)),
            headers={"Content-Disposition": f'attachment; filename="jericho-{room.rec.id}.jgn"'},
        )

    @free("one game's positions: a replay bounded by the game's length")
    async def replay_(request: Request) -> Response:
        room = service.room(request.path_params["id"])
        return JSONResponse(service.replay_frames(room))

    @free("the lobby's listing, bounded")
    async def lobby_now(request: Request) -> Response:
        from jericho_game.web.lobby.seeks import snapshot

        viewer = await asyncio.get_running_loop().run_in_executor(None, my_account, request)  # blocks (issue 51)
        return JSONResponse(await asyncio.get_running_loop().run_in_executor(None, snapshot, service, viewer))

    @free("a lobby socket, held under the per-process socket caps (fairshare.SocketCaps)")
    async def lobby_ws(websocket: WebSocket) -> None:
        def make_conn(ws: WebSocket) -> Conn:
            try:
                account = transport.session_account(ws)
            except Exception:  # noqa: BLE001 - the database is away: counted by its address alone
                account = None
            return Conn(ws, tokens=float(limits.burst), account=account, address=address_of(ws))

        if websocket.query_params.get("feed") == "people":  # issue 52: a page's people feed, no lobby lists
            await people_feed.serve_ws(websocket, make_conn)
            return
        await transport.lobby.serve_ws(websocket, make_conn)

    def my_account(request: Request) -> int | None:
        # reading only: the session alone (a logged-in player's games from any browser, issue 24)
        sess = accounts.session_of(request)
        return None if sess is None else sess.account.id

    def my_listing(request: Request, held: dict[str, str]) -> list[dict[str, Any]]:
        return mygames.listing(service, held, my_account(request), limits.max_my_games)

    def my_texts(request: Request, held: dict[str, str]) -> str:
        return mygames.records(service, held, write_game_record, my_account(request), limits.max_my_games)

    @free("the games of the seats a browser holds: at most Limits.max_my_games rows, no replay")
    async def my_games(request: Request) -> Response:
        held = mygames.held(await _json_body(request, limits, 64 * 1024), limits.max_my_games)
        rows = await asyncio.get_running_loop().run_in_executor(None, my_listing, request, held)
        return JSONResponse({"games": rows}, headers={"Cache-Control": "private, no-store"})

    @costs("export")
    async def my_records(request: Request) -> Response:
        held = mygames.held(await _json_body(request, limits, 64 * 1024), limits.max_my_games)
        # up to 500 games replayed and written: the export budget's threads, one per client (issue 51)
        text = await budget.run("export", Who.of(request, my_account(request)), my_texts, request, held)
        return PlainTextResponse(text, headers={"Content-Disposition": 'attachment; filename="jericho-my-games.jgn"'})

    async def client_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, ClientError)
        return _error(exc.code, i18n.error_text(exc.code, exc.message, i18n.request_language(request)), exc.status)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        if (html := pages.html_error(request, exc.status_code)) is not None:
            return html  # a page: the site's own 404 (jericho_game.web.site.pages)
        if exc.status_code == 404:
            return _error("not_found", f"no such page: {request.url.path[:100]}", 404)
        if exc.status_code == 405:
            return _error("bad_method", f"{request.method} is not allowed on {request.url.path[:100]}", 405)
        return _error("http_error", str(exc.detail), exc.status_code)

    # a player's games searched and exported (issue 34), on the search and export budgets' threads (issue 51)
    search = GameSearch(storage, accounts, service, budget=budget)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        calls = CallThreads()  # the storage calls of the tasks, waited for when stopping
        calls.install()
        # The database thread gives up the GIL at every round trip and fsync; with the default
        # 5 ms switch interval it then waited up to 5 ms for a busy event loop to hand it back,
        # i.e. milliseconds per statement of every group (measured: ~11 ms per 0.1 ms round trip).
        switch = sys.getswitchinterval()
        sys.setswitchinterval(min(switch, SWITCH_INTERVAL))
        await transport.start()
        rating_task = asyncio.get_running_loop().create_task(ratings.run())
        mail_task = asyncio.get_running_loop().create_task(notifier.run())
        tournament_task = asyncio.get_running_loop().create_task(tournaments.run())
        people_task = asyncio.get_running_loop().create_task(people_feed.run())  # stamps, expiries (issue 52)
        search.start()  # fills the position index on a thread of its own (web/people/positionindex.py)
        # A full collection stopped every thread for 60-90 ms under load, scanning among others
        # the start-up heap (the imported libraries: tens of thousands of objects that live as
        # long as the process), and such a stall is what the slowest acknowledgements waited for
        # (docs/web.md, "Performance"); frozen, those objects are left out of every collection.
        gc.collect()
        gc.freeze()
        yield
        gc.unfreeze()
        rating_task.cancel()
        mail_task.cancel()
        tournament_task.cancel()
        people_task.cancel()
        await streams.close()
        # their rounds in threads end before the storage's pool is disposed
        await asyncio.wait([rating_task, mail_task, tournament_task, people_task])
        await transport.stop()
        # The tasks just cancelled may have left a storage call running in a thread: its statement
        # ends before the pool is disposed (jericho_game.web.storage.threads; bounded).
        await calls.drain(SHUTDOWN_WAIT)
        sys.setswitchinterval(switch)
        search.close()
        service.close()
        budget.close()
        storage.close()

    routes = [
        *pages.routes(),  # the site's pages, one layout, in English or French (jericho_game.web.site.pages)
        Route("/healthz", healthz),
        Route("/api/rules.md", rules_md),
        Route("/api/topology", topology),
        Route("/api/levels", levels),
        Route(openapi.PATH, openapi.openapi_json),  # this API, described (jericho_game.web.site.openapi)
        Route("/api/games", create, methods=["POST"]),
        Route("/api/games/{id}", show),
        Route("/api/games/{id}/join", join, methods=["POST"]),
        Route("/api/games/{id}/record", record),
        Route("/api/games/{id}/replay", replay_),
        Route("/api/lobby", lobby_now),
        Route("/api/mygames", my_games, methods=["POST"]),
        Route("/api/mygames/record", my_records, methods=["POST"]),
        WebSocketRoute("/lobby/ws", lobby_ws),
        *review_routes(reviews),  # game review: GET / POST /api/games/{id}/review (jericho_game.web.learn.review)
        *analysis_routes(service, streams),  # the analysis board, /analysis (jericho_game.web.learn.analysis_board)
        *tutorial.routes,  # read-only engine help: move preview, tutorial (jericho_game.web.learn.tutorial)
        *account_routes(accounts, STATIC),  # sign-up, log-in, sessions (jericho_game.web.accounts.accounts)
        *prefs_routes(Prefs(storage), accounts),  # board and piece themes per account (jericho_game.web.accounts.prefs)
        *rating_routes(ratings, STATIC),  # leaderboard, profiles (jericho_game.web.accounts.ratings)
        *notify_routes(notifier),  # e-mail address, switches, invitations by mail (jericho_game.web.social.notify)
        *correspondence_routes(storage, accounts, limits.max_my_games),  # "your turn" (web/round/correspondence.py)
        *puzzle_routes(PuzzleService(storage, budget=budget, clock=clock), accounts),  # /api/puzzles (learn/)
        *chat.routes(accounts),  # the games' chat, its reports (jericho_game.web.social.chat)
        *timeline_routes(Timeline(storage, accounts)),  # issue 52, before /api/people/{name} (web/people/timeline.py)
        *people_routes(people, transport.after),  # follows, blocks, challenges (jericho_game.web.people.people)
        # a player's games searched and exported, their statistics (jericho_game.web.people.gamesearch, .playerstats)
        *games_routes(
            search,
            PlayerStats(storage, accounts, review_jobs.store),
            write_game_record,
        ),
        *TournamentChat(chat, tournaments).routes(accounts),  # issue 52: before tournament_routes' {id}/{what}
        *tournament_routes(tournaments),  # arenas and Swiss (jericho_game.web.tournaments.tournaments)
        # an account's own data: its archive, and closing it (jericho_game.web.site.owndata)
        *owndata_routes(OwnData(storage, accounts, service, write_game_record, budget=budget, clock=clock)),
        WebSocketRoute("/ws/{id}", transport.serve_ws),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(
        routes=routes,
        exception_handlers={ClientError: client_error, HTTPException: http_error},
        lifespan=lifespan,
    )
    app.add_middleware(NulGuard)  # a NUL in the path or query: 400, before any route (web/site/httpguard.py)
    app.add_middleware(InternalErrors)  # an unexpected error: a 500, one log line (web/site/errors.py)...
    app.add_middleware(SecurityHeaders)  # ... which, like every answer, gets these headers
    app.add_middleware(GZipMiddleware, minimum_size=1000)  # pages, scripts, JSON (not WebSockets)
    app.state.service = service
    app.state.transport = transport
    app.state.analysis_streams = streams
    app.state.accounts = accounts
    app.state.people, app.state.people_feed = people, people_feed
    app.state.ratings = ratings
    app.state.chat = chat
    app.state.notifier = notifier
    app.state.people = people
    app.state.tournaments = tournaments
    app.state.budget = budget
    return app


# -- command line ----------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser, name: str = "serve") -> None:
    """Options of ``jericho serve``."""
    parser.epilog = (
        "Accounts are optional for players. Create an admin (or any account) with "
        "`jericho user add NAME --admin --db SAME_DB`: the password is asked for twice, or read from "
        "the first line of stdin when it is not a terminal, never taken from the command line. "
        "`--no-signup` closes sign-up on the site; `jericho user add` still works. "
        "See docs/web.md, 'Accounts and ratings'."
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    parser.add_argument("--db", default=None, help="SQLite file or database URL (default: user data directory)")
    parser.add_argument(
        "--ai-delay", type=float, default=0.4, help="minimum seconds the AI takes per move, so moves can be followed"
    )
    parser.add_argument(
        "--workers", type=int, default=1, help="server processes on this port (PostgreSQL only; default 1)"
    )
    parser.add_argument(
        "--ai-processes",
        type=int,
        default=None,
        help="AI processes each server runs (default: up to 2; 0 with --workers >1 or `jericho worker`: none)",
    )
    parser.add_argument(
        "--forwarded-allow-ips",
        default="",
        help="comma-separated proxy addresses whose X-Forwarded-For/-Proto are trusted; default: none. "
        "'*' (any) is refused unless --trust-any-forwarder: any client could then choose its own address",
    )
    parser.add_argument(
        "--trust-any-forwarder",
        action="store_true",
        help="accept --forwarded-allow-ips '*' (only when nothing but the proxy can reach this server)",
    )
    parser.add_argument(
        "--max-creates-per-minute",
        type=int,
        default=Limits.creates_per_minute,
        help=f"new games per client address per minute (default {Limits.creates_per_minute})",
    )
    parser.add_argument(
        "--min-clock",
        type=float,
        default=Limits.min_clock,
        help=f"shortest clock per side a game may ask for, in minutes (default {Limits.min_clock:g})",
    )
    parser.add_argument(
        "--claim-after",
        type=float,
        default=Limits.claim_after,
        help="seconds an untimed online game's opponent must be disconnected before the other player may "
        f"claim the win or a draw (default {Limits.claim_after:g})",
    )
    parser.add_argument(
        "--no-signup",
        action="store_true",
        help="nobody may create an account on the site; accounts come from `jericho user add NAME` "
        "(`--admin` for an admin; the password is read from a prompt or stdin, never from the command line)",
    )
    parser.add_argument(
        "--send-timeout",
        type=float,
        default=Limits.send_timeout,
        help=f"seconds a client may take to accept one message before it is closed (default {Limits.send_timeout:g})",
    )

    fairshare.add_arguments(parser, Limits)  # fair share (issue 22): per-client caps and quotas
    parser.add_argument(
        "--budget",
        action="append",
        default=[],
        metavar="KIND.SCOPE=N",
        help="set one limit of the budget table (docs/web.md, Budgets): SCOPE is group, account, recipient, pair, "
        "total or window, N a number or none; e.g. --budget signup.group=20 --budget search.total=4 (repeatable)",
    )
    parser.add_argument(
        "--rated-games-per-pair",
        type=int,
        default=RatingPolicy.pair_games_per_day,
        help="rated games between the same two accounts that count in 24 hours; later ones change no rating "
        f"(default {RatingPolicy.pair_games_per_day})",
    )
    parser.add_argument(
        "--smtp",
        default=None,
        help="send e-mail notifications through this SMTP server, e.g. "
        "smtp+starttls://user:password@mail.example.org:587?from=jericho@example.org; needs --public-url "
        "(default: no e-mail; see docs/web.md, 'Notifications')",
    )
    parser.add_argument(
        "--public-url",
        default=None,
        help="the site's public address, e.g. https://jericho.example.org: every link in a mail starts with it "
        "(required with --smtp: links are never built from a request's Host header)",
    )
    parser.add_argument(
        "--review-sims",
        type=int,
        default=REVIEW_SIMS,
        help=f"game review: master-search simulations per position (default {REVIEW_SIMS})",
    )
    parser.add_argument(
        "--review-seconds",
        type=float,
        default=REVIEW_SECONDS,
        help="game review: at most this many seconds per position (default: no time limit, so a review's "
        "figures are the same at any load; a limit makes them depend on the machine)",
    )


_ENV = "JERICHO_SERVE_CONFIG"


def app_from_env() -> Starlette:
    """The app of one ``--workers`` process (uvicorn imports it; the options travel in the environment)."""
    cfg = json.loads(os.environ[_ENV])
    return create_app(
        cfg["db"],
        ai_delay=cfg["ai_delay"],
        ai_processes=cfg["ai_processes"],
        signup=cfg.get("signup", True),
        limits=Limits(
            send_timeout=cfg["send_timeout"],
            creates_per_minute=cfg["creates"],
            min_clock=cfg["min_clock"],
            claim_after=cfg.get("claim_after", Limits.claim_after),
            **fairshare.settings(cfg.get("fair", {})),
        ),
        budget_settings=cfg.get("budgets", []),
        review_sims=cfg.get("review_sims", REVIEW_SIMS),
        review_seconds=cfg.get("review_seconds", REVIEW_SECONDS),
        rating_policy=RatingPolicy(pair_games_per_day=cfg.get("pair_games", RatingPolicy.pair_games_per_day)),
        smtp=cfg.get("smtp"),
        public_url=cfg.get("public_url"),
    )


def run(args: argparse.Namespace) -> int:
    """Start the web app with uvicorn and print its URL."""
    import uvicorn

    from jericho_game.web.storage.database import StorageError

    url = resolve_db_url(args.db)
    if args.workers < 1:
        print("jericho serve: --workers must be 1 or more", flush=True)
        return 2
    if args.rated_games_per_pair < 1:
        print("jericho serve: --rated-games-per-pair must be 1 or more", flush=True)
        return 2
    if args.review_sims < 1 or (args.review_seconds is not None and args.review_seconds <= 0):
        print("jericho serve: --review-sims must be 1 or more and --review-seconds positive", flush=True)
        return 2
    if args.workers > 1 and not url.startswith("postgresql"):
        print(
            "jericho serve: --workers needs PostgreSQL (--db postgresql+psycopg://...): SQLite is the embedded "
            "single-process store; several processes on one SQLite file are not supported",
            flush=True,
        )
        return 2
    try:
        fair = fairshare.settings(args)
        budgeting.with_settings(budgeting.BUDGETS, args.budget)  # a clear message now
        if args.smtp:
            SmtpConfig.parse(args.smtp)  # a clear message now (the password is never printed)
        if args.public_url is not None:
            check_public_url(args.public_url)
        if args.smtp and not args.public_url:
            raise ValueError(
                "--smtp needs --public-url, the site's address for the links in mails (e.g. --public-url "
                "https://jericho.example.org): a link is never built from a request's Host header, which any "
                "client can choose"
            )
    except ValueError as exc:
        print(f"jericho serve: {exc}", flush=True)
        return 2
    ai_processes = args.ai_processes
    if ai_processes is None:
        ai_processes = min(2, os.cpu_count() or 1) if args.workers == 1 else 1
    forwarded = [a.strip() for a in args.forwarded_allow_ips.split(",") if a.strip()]
    if any(a in ("*", "0.0.0.0/0", "::/0") for a in forwarded):
        why = (
            "--forwarded-allow-ips '*' trusts X-Forwarded-For from every client, so any client may choose the "
            "address that the log-in throttle and the per-address limits count"
        )
        if not getattr(args, "trust_any_forwarder", False):
            print(
                f"jericho serve: {why}; name your proxy's address instead (e.g. 127.0.0.1), or add "
                "--trust-any-forwarder if nothing but the proxy can reach this server",
                file=sys.stderr,
                flush=True,
            )
            return 2
        print(f"jericho serve: WARNING: {why} (--trust-any-forwarder)", file=sys.stderr, flush=True)
    proxy = {"proxy_headers": bool(forwarded), "forwarded_allow_ips": forwarded or None}
    host = args.host
    shown = f"[{host}]" if ":" in host else host
    # request-head size limit and timeout, keep-alive timeout (web/site/httpguard.py)
    common = dict(host=host, port=args.port, log_level="warning", ws_max_size=64 * 1024, **proxy, **uvicorn_options())
    try:
        first = Storage(url)  # a clear message now rather than a traceback from each worker
        ReviewStore(first)  # the tables exist before several processes start at once
        ChatStore(first)
        first.close()
        if args.workers == 1:
            app: Any = create_app(
                url,
                ai_delay=args.ai_delay,
                ai_processes=ai_processes,
                signup=not args.no_signup,
                limits=Limits(
                    send_timeout=args.send_timeout,
                    creates_per_minute=args.max_creates_per_minute,
                    min_clock=args.min_clock,
                    claim_after=args.claim_after,
                    **fair,
                ),
                budget_settings=args.budget,
                review_sims=args.review_sims,
                review_seconds=args.review_seconds,
                rating_policy=RatingPolicy(pair_games_per_day=args.rated_games_per_pair),
                smtp=args.smtp,
                public_url=args.public_url,
            )
    except StorageError as exc:
        print(f"jericho serve: {exc}", flush=True)
        return 2
    where = url.split("@")[-1] if url.startswith("postgresql") else url
    workers = f", {args.workers} processes" if args.workers > 1 else ""
    print(f"Jericho is ready at http://{shown}:{args.port}/  (games stored in {where}{workers})", flush=True)
    if args.workers == 1:
        uvicorn.run(app, **common)  # type: ignore[arg-type]
    else:
        os.environ[_ENV] = json.dumps(
            {
                "db": url,
                "ai_delay": args.ai_delay,
                "ai_processes": ai_processes,
                "send_timeout": args.send_timeout,
                "creates": args.max_creates_per_minute,
                "min_clock": args.min_clock,
                "claim_after": args.claim_after,
                "signup": not args.no_signup,
                "review_sims": args.review_sims,
                "review_seconds": args.review_seconds,
                "pair_games": args.rated_games_per_pair,
                "fair": fair,
                "budgets": args.budget,
                "smtp": args.smtp,
                "public_url": args.public_url,
            }
        )
        uvicorn.run("jericho_game.web.server:app_from_env", factory=True, workers=args.workers, **common)  # type: ignore[arg-type]
    return 0
