"""The web app: a Starlette ASGI application served by uvicorn (``jericho serve``).

The server is authoritative.  Every game lives in a :class:`Room` holding the engine's
:class:`jericho_game.Game`; browsers send intentions over a WebSocket (``move``, ``undo``,
``resign``, ``rematch``) and receive the whole public state after every change.  Moves are
committed to the database (:mod:`jericho_game.web.storage`) before they are acknowledged, so a
restarted server continues every game from its last acknowledged move.  The protocol, the
security model and the limits are described in ``docs/web.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import hmac
import json
import logging
import random
import re
import secrets
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jericho_game.extras import missing_extra

try:
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.requests import Request
    from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, Response
    from starlette.routing import Mount, Route, WebSocketRoute
    from starlette.staticfiles import StaticFiles
    from starlette.websockets import WebSocket, WebSocketDisconnect
except ImportError as exc:
    raise missing_extra("the web app", "web", exc) from exc


from jericho_game.errors import JerichoError
from jericho_game.game import Game
from jericho_game.moves import PASS, Move, parse_move
from jericho_game.pieces import Side
from jericho_game.players.base import Limit, Player, make_player, registered_names
from jericho_game.web import tutorial
from jericho_game.web.storage import GameRecord, Storage, resolve_db_url

__all__ = ["Hub", "Room", "Limits", "create_app", "add_arguments", "run"]

log = logging.getLogger("jericho_game.web")

STATIC = Path(__file__).resolve().parent / "static"
MODES = ("ai", "hotseat", "online")
SIDES = ("south", "north")
SIDE_NAMES = {"south": "South", "north": "North"}
PREFERRED_LEVELS = ("easy", "medium", "hard", "expert", "random", "greedy", "mcts", "alphabeta")
_ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,32}$")


@dataclass(frozen=True)
class Limits:
    """The server's defences against hostile or runaway clients (see docs/web.md, "Limits")."""

    max_message: int = 4096  # bytes of one WebSocket message or HTTP body
    rate: float = 10.0  # messages per second a connection may send on average
    burst: int = 30  # messages a connection may send at once
    flood_close: int = 200  # refused messages in a row before the connection is closed
    max_connections_per_game: int = 64
    creates_per_minute: int = 60  # new games per client address per minute
    max_rooms_in_memory: int = 2000
    send_timeout: float = 10.0  # seconds a client may take to accept one message before it is dropped
    min_clock: float = 1.0  # minutes: the shortest clock per side a game may ask for (1e-9 was lost at once)


class ClientError(Exception):
    """A refused request: ``code`` for programs, ``message`` for people."""

    def __init__(self, code: str, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status


@dataclass(eq=False)
class Conn:
    """One WebSocket connection to a game, with the seats its token unlocked."""

    ws: WebSocket
    seats: frozenset[str] = frozenset()
    tokens: float = 0.0
    stamp: float = field(default_factory=time.monotonic)
    refused: int = 0
    dropped: bool = False  # too slow to read its messages: no longer sent anything

    @property
    def role(self) -> str:
        """``south``, ``north``, ``both`` (hot-seat) or ``spectator``."""
        if len(self.seats) == 2:
            return "both"
        return next(iter(self.seats)) if self.seats else "spectator"


@dataclass(eq=False)
class Room:
    """A game being served: its stored record, the engine game, and the connected clients."""

    rec: GameRecord
    game: Game
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    send_lock: asyncio.Lock = field(default_factory=asyncio.Lock)  # one state broadcast at a time, in order
    conns: set[Conn] = field(default_factory=set)
    version: int = 0
    ai_task: asyncio.Task[None] | None = None
    ai_player: Player | None = None
    flag_timer: asyncio.TimerHandle | None = None


def _new_id() -> str:
    return secrets.token_urlsafe(6).replace("-", "x").replace("_", "y")


def _new_token() -> str:
    return secrets.token_urlsafe(18)


def _same(a: str | None, b: str | None) -> bool:
    return a is not None and b is not None and hmac.compare_digest(a.encode(), b.encode())


def _minimal_record(game: Game, tags: dict[str, str]) -> str:
    """A plain record (tags, then numbered moves) used when jericho_game.record is not available."""
    lines = [f'[{k} "{v}"]' for k, v in tags.items()]
    moves = [str(m) for m in game.history]
    body = []
    for i in range(0, len(moves), 2):
        body.append(f"{i // 2 + 1}. " + " ".join(moves[i : i + 2]))
    lines.append("")
    lines.append(" ".join(body) + (" " if body else "") + tags.get("Result", "*"))
    return "\n".join(lines) + "\n"


def write_game_record(game: Game, tags: dict[str, str]) -> str:
    """The game record text, by :func:`jericho_game.record.write_record` when that module exists."""
    try:
        from jericho_game.record import write_record  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        return _minimal_record(game, tags)
    try:
        return str(write_record(game, tags))
    except Exception:  # noqa: BLE001 - a record must always be downloadable
        log.exception("jericho_game.record.write_record failed; writing a minimal record")
        return _minimal_record(game, tags)


class Hub:
    """Every room of one app, the storage, the AI executor and the rules of engagement."""

    def __init__(
        self,
        storage: Storage,
        limits: Limits,
        ai_limit: Limit | None = None,
        ai_delay: float = 0.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.storage = storage
        self.limits = limits
        self.ai_limit = ai_limit
        self.ai_delay = ai_delay
        self.now = clock
        self.rooms: dict[str, Room] = {}
        self.executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="jericho-ai")
        self.creates: dict[str, deque[float]] = {}
        self._levels: list[str] | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    # -- levels ----------------------------------------------------------------------------
    def levels(self) -> list[str]:
        """The AI levels and players that can be built here, the preferred levels first."""
        if self._levels is None:
            names = [n for n in PREFERRED_LEVELS if n in registered_names()]
            names += [n for n in registered_names() if n not in names and n not in ("external", "openspiel-mcts")]
            ok = []
            for name in names:
                try:
                    make_player(name)
                except Exception:  # noqa: BLE001 - a level whose module is missing is just not offered
                    continue
                ok.append(name)
            self._levels = ok
        return self._levels

    def default_level(self) -> str:
        """``medium`` when available, else the first available level."""
        levels = self.levels()
        return "medium" if "medium" in levels else (levels[0] if levels else "random")

    # -- rooms -------------------------------------------------------------------------------
    def room(self, game_id: str) -> Room:
        """The room of ``game_id``, loaded from storage (and replayed) when not in memory."""
        if not _ID_RE.match(game_id or ""):
            raise ClientError("unknown_game", f"unknown game {game_id[:40]!r}", 404)
        room = self.rooms.get(game_id)
        if room is not None:
            return room
        rec = self.storage.load(game_id)
        if rec is None:
            raise ClientError("unknown_game", f"unknown game {game_id!r}: no game has this id", 404)
        try:
            game = Game.from_position(rec.start_position) if rec.start_position else Game()
            for mv in rec.moves:
                game.play(mv)
        except JerichoError as exc:
            raise ClientError("corrupt_game", f"stored game {game_id!r} cannot be replayed: {exc}", 500) from exc
        room = Room(rec, game)
        self._settle(room)  # a crash may have come between a move and its forced pass
        self._evict()
        self.rooms[game_id] = room
        self._after_change(room)
        return room

    def _evict(self) -> None:
        if len(self.rooms) < self.limits.max_rooms_in_memory:
            return
        for gid, r in list(self.rooms.items()):
            if not r.conns and (r.ai_task is None or r.ai_task.done()) and not r.lock.locked():
                if r.flag_timer:
                    r.flag_timer.cancel()
                del self.rooms[gid]
                if len(self.rooms) < self.limits.max_rooms_in_memory // 2:
                    break

    def create(self, spec: dict[str, Any], client: str = "?") -> tuple[Room, dict[str, Any]]:
        """Create a game from the JSON body of ``POST /api/games``; returns the room and the reply."""
        now = self.now()
        for addr in [a for a, w in self.creates.items() if not w or w[-1] < now - 60]:
            del self.creates[addr]  # forget quiet addresses: the table cannot grow without bound
        window = self.creates.setdefault(client, deque())
        while window and window[0] < now - 60:
            window.popleft()
        if len(window) >= self.limits.creates_per_minute:
            raise ClientError("rate_limited", "too many new games from this address: wait a minute", 429)
        unknown = set(spec) - {"mode", "side", "level", "clock"}
        if unknown:
            raise ClientError("bad_request", f"unknown field(s): {', '.join(sorted(map(str, unknown)))}")
        mode = spec.get("mode", "ai")
        if mode not in MODES:
            raise ClientError("bad_request", f"mode must be one of {', '.join(MODES)}, not {str(mode)[:40]!r}")
        side = spec.get("side", "south")
        if side not in (*SIDES, "random"):
            raise ClientError("bad_request", f"side must be south, north or random, not {str(side)[:40]!r}")
        if side == "random":
            side = random.choice(SIDES)
        clock = spec.get("clock")
        if clock in (None, 0, False):
            clock_s = None
        elif isinstance(clock, int | float) and not isinstance(clock, bool) and self.limits.min_clock <= clock <= 180:
            clock_s = float(clock) * 60.0
        else:
            raise ClientError(
                "bad_request", f"clock must be null or minutes per side between {self.limits.min_clock:g} and 180"
            )
        rec = GameRecord(id=_new_id(), mode=mode)
        reply: dict[str, Any] = {"id": rec.id, "side": side}
        token = _new_token()
        if mode == "ai":
            level = spec.get("level") or self.default_level()
            if not isinstance(level, str) or len(level) > 200:
                raise ClientError("bad_request", "level must be a player name such as 'easy' or 'random'")
            # Only the offered names, never options: "external:cmd=..." would run a program on the
            # server, and "mcts:time=9999" would hold an AI worker for hours.
            if level not in self.levels():
                raise ClientError(
                    "bad_level", f"AI level {level[:60]!r} is not available: choose from {', '.join(self.levels())}"
                )
            rec.ai_level = level
            rec.ai_side = Side(side).other.value
            setattr(rec, f"{side}_token", token)
            setattr(rec, f"{rec.ai_side}_token", _new_token())  # never handed out
        elif mode == "hotseat":
            rec.south_token = rec.north_token = token
            reply["side"] = "both"
        else:
            setattr(rec, f"{side}_token", token)
            rec.invite = _new_token()
            reply["invite"] = rec.invite
        if clock_s is not None:
            rec.clock = rec.south_time = rec.north_time = clock_s
            if mode != "online":
                rec.turn_started = now
        self.storage.create(rec)
        window.append(now)
        room = Room(rec, Game())
        self._evict()
        self.rooms[rec.id] = room
        self._after_change(room)
        reply["token"] = token
        return room, reply

    async def join(self, room: Room, invite: Any) -> dict[str, Any]:
        """Take the invited seat of an online game (``POST /api/games/{id}/join``)."""
        async with room.lock:
            rec = room.rec
            if rec.mode != "online":
                raise ClientError("not_online", "only online games can be joined")
            if not isinstance(invite, str) or not _same(invite, rec.invite):
                raise ClientError("bad_invite", "this invite code is not valid for this game", 403)
            if rec.joined:
                raise ClientError("seat_taken", "this invite was already used: the seat is taken (you can watch)", 409)
            seat = "north" if rec.south_token else "south"
            new = rec.copy()
            token = _new_token()
            setattr(new, f"{seat}_token", token)
            new.joined = True
            if new.clock is not None:
                new.turn_started = self.now()
            self.storage.save(new)
            room.rec = new
            room.version += 1
            self._after_change(room)
        await self.broadcast(room)
        return {"id": rec.id, "side": seat, "token": token}

    # -- state -------------------------------------------------------------------------------
    def status(self, room: Room) -> str:
        """``waiting`` (online, invite not used), ``playing`` or ``over``."""
        if self.outcome(room)[0] is not None:
            return "over"
        if room.rec.mode == "online" and not room.rec.joined:
            return "waiting"
        return "playing"

    def outcome(self, room: Room) -> tuple[str | None, str | None]:
        """``(result, reason)``: result south/north/draw or None; reason seven/exhaustion/resign/time."""
        if room.rec.result:
            return room.rec.result, room.rec.reason
        result = room.game.outcome()
        if result is None:
            return None, None
        h = room.game.history
        reason = "exhaustion" if len(h) >= 2 and h[-1].is_pass and h[-2].is_pass else "seven"
        return result, reason

    def clock_side(self, room: Room) -> str | None:
        """The side whose clock is running, if any."""
        rec = room.rec
        if rec.clock is None or rec.turn_started is None or self.status(room) != "playing":
            return None
        return room.game.turn.value

    def time_left(self, room: Room, side: str) -> float:
        """Seconds left on ``side``'s clock now."""
        left = float(getattr(room.rec, f"{side}_time") or 0.0)
        if self.clock_side(room) == side and room.rec.turn_started is not None:
            left -= self.now() - room.rec.turn_started
        return left

    def public_state(self, room: Room) -> dict[str, Any]:
        """Everything anyone may see about a game (never a token)."""
        rec, game = room.rec, room.game
        result, reason = self.outcome(room)
        status = self.status(room)
        legal: dict[str, list[str]] = {}
        pass_only = False
        if status == "playing":
            moves = game.legal_moves()
            pass_only = moves == [PASS]
            for m in moves:
                if m.piece is not None and m.cell is not None:
                    legal.setdefault(str(m.piece), []).append(m.cell)
        confront = {}
        for a in game.topology.alignments:
            c = game.confrontation(a.name)
            confront[a.name] = {
                "south": c.south,
                "north": c.north,
                "south_tower": [str(p) for p in c.south_tower],
                "north_tower": [str(p) for p in c.north_tower],
                "leader": c.leader.value if c.leader else None,
                "reason": c.reason,
            }
        present = {s: any(s in c.seats for c in room.conns) for s in SIDES}
        seats = {}
        for s in SIDES:
            if rec.mode == "ai" and rec.ai_side == s:
                seats[s] = {"kind": "ai", "level": rec.ai_level, "present": True}
            elif rec.mode == "online" and not getattr(rec, f"{s}_token"):
                seats[s] = {"kind": "open", "present": False}
            else:
                seats[s] = {"kind": "human", "present": present[s]}
        clock = None
        if rec.clock is not None:
            clock = {
                "initial": rec.clock,
                "south": max(0.0, self.time_left(room, "south")),
                "north": max(0.0, self.time_left(room, "north")),
                "running": self.clock_side(room),
            }
        threat = game.seven_threat()
        return {
            "id": rec.id,
            "mode": rec.mode,
            "status": status,
            "ply": len(rec.moves),
            "moves": list(rec.moves),
            "turn": game.turn.value,
            "score": list(game.score()),
            "leaders": {k: (str(v) if v is not None else None) for k, v in game.leaders().items()},
            "towers": {c: [str(p) for p in t] for c, t in game.towers().items() if t},
            "reserves": {s: [str(p) for p in game.reserve(s)] for s in SIDES},
            "legal": legal,
            "pass_only": pass_only,
            "last": rec.moves[-1] if rec.moves else None,
            "threat": threat.value if threat and status != "over" else None,
            "result": result,
            "reason": reason,
            "confrontations": confront,
            "seats": seats,
            "clock": clock,
            "ai_thinking": bool(room.ai_task and not room.ai_task.done()),
            "can_undo": status == "playing" and self._has_own_move(room),
            "rematch_of": rec.rematch_of,
            "rematch_id": rec.rematch_id,
            "watchers": sum(1 for c in room.conns if not c.seats),
        }

    def _has_own_move(self, room: Room) -> bool:
        """Whether undo has something to take back: a move (not a forced pass) of a person, in a
        game with undo (against the AI, the AI's own opening move is not the person's to undo)."""
        rec, n = room.rec, len(room.rec.moves)
        if rec.mode == "hotseat":
            return any(m != "pass" for m in rec.moves)
        if rec.mode != "ai":
            return False
        turn = room.game.turn
        # moves alternate: the last was played by the side not to move, the one before by the other
        return any(
            m != "pass" and (turn.other if (n - 1 - i) % 2 == 0 else turn).value != rec.ai_side
            for i, m in enumerate(rec.moves)
        )

    # -- changes -------------------------------------------------------------------------------
    def _charge(self, rec: GameRecord, room: Room) -> None:
        """Stop the running clock: subtract the time spent by the side to move."""
        side = self.clock_side(room)
        if side is not None and rec.turn_started is not None:
            now = self.now()
            setattr(rec, f"{side}_time", float(getattr(rec, f"{side}_time") or 0.0) - (now - rec.turn_started))
            rec.turn_started = now

    def _commit_move(self, room: Room, move: Move) -> None:
        """Store ``move`` (already known legal), then play it; plays forced passes after it."""
        new = room.rec.copy()
        self._charge(new, room)
        self.storage.append_move(new, str(move))
        room.game.play(move)
        room.rec = new
        room.version += 1
        self._settle(room)

    def _settle(self, room: Room) -> None:
        """Play forced passes (stored like moves) and store the result once the game is over."""
        while self.status(room) == "playing" and room.game.legal_moves() == [PASS]:
            new = room.rec.copy()
            self.storage.append_move(new, "pass")
            room.game.play(PASS)
            room.rec = new
        if room.game.is_over() and room.rec.result is None:
            new = room.rec.copy()
            new.turn_started = None
            new.result, new.reason = self.outcome(room)
            self.storage.save(new)
            room.rec = new

    def _finish(self, room: Room, result: str, reason: str) -> None:
        new = room.rec.copy()
        self._charge(new, room)
        new.result, new.reason, new.turn_started = result, reason, None
        self.storage.save(new)
        room.rec = new
        room.version += 1

    def _check_flag(self, room: Room) -> bool:
        """End the game on time when the running clock reached zero; True if it did."""
        side = self.clock_side(room)
        if side is None or self.time_left(room, side) > 0:
            return False
        new = room.rec.copy()
        setattr(new, f"{side}_time", 0.0)
        new.result, new.reason, new.turn_started = Side(side).other.value, "time", None
        self.storage.save(new)
        room.rec = new
        room.version += 1
        return True

    def _after_change(self, room: Room) -> None:
        """Arm the flag timer and start the AI when it is its turn."""
        if room.flag_timer is not None:
            room.flag_timer.cancel()
            room.flag_timer = None
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        side = self.clock_side(room)
        if side is not None:
            delay = max(0.0, self.time_left(room, side)) + 0.05
            room.flag_timer = loop.call_later(delay, self._start_flag_task, room)
        rec = room.rec
        if (
            rec.mode == "ai"
            and self.status(room) == "playing"
            and room.game.turn.value == rec.ai_side
            and (room.ai_task is None or room.ai_task.done())
        ):
            room.ai_task = loop.create_task(self._ai_move(room, room.version))

    def _start_flag_task(self, room: Room) -> None:
        task = asyncio.get_running_loop().create_task(self._flag_task(room))
        self._tasks.add(task)  # the loop keeps only a weak reference to a task
        task.add_done_callback(self._tasks.discard)

    async def _flag_task(self, room: Room) -> None:
        async with room.lock:
            flagged = self._check_flag(room)
            self._after_change(room)
        if flagged:
            await self.broadcast(room)

    async def _ai_move(self, room: Room, version: int) -> None:
        if room.ai_player is None:
            try:
                room.ai_player = make_player(room.rec.ai_level or "random")
            except Exception:  # noqa: BLE001 - e.g. a level stored by another installation: the game must go on
                log.exception("AI level %r unavailable; game %s goes on with random", room.rec.ai_level, room.rec.id)
                room.ai_player = make_player("random")
        player = room.ai_player
        snapshot = room.game.copy()
        loop = asyncio.get_running_loop()
        started = time.monotonic()
        try:
            move = await loop.run_in_executor(self.executor, player.choose_move, snapshot, self.ai_limit)
        except Exception:  # noqa: BLE001 - a failing AI must not stall the game
            log.exception("AI %s failed; playing a random legal move", room.rec.ai_level)
            move = random.choice(snapshot.legal_moves())
        wait = self.ai_delay - (time.monotonic() - started)
        if wait > 0:
            await asyncio.sleep(wait)
        async with room.lock:
            if room.version != version or self.status(room) != "playing":
                return  # the position changed meanwhile (undo, resign, flag): discard
            try:
                if not self._check_flag(room):
                    if not room.game.is_legal(move):
                        log.error("AI %s chose illegal move %s; playing a random legal move", room.rec.ai_level, move)
                        move = random.choice(room.game.legal_moves())
                    self._commit_move(room, move)
            except Exception:  # noqa: BLE001 - e.g. the database is unreachable: retried on the next event
                log.exception("could not store the AI's move in game %s", room.rec.id)
                room.ai_task = None
                return
            room.ai_task = None
            self._after_change(room)
        await self.broadcast(room)

    # -- messages ------------------------------------------------------------------------------
    async def send(self, conn: Conn, msg: dict[str, Any]) -> None:
        """Send one message; a connection that went away is simply forgotten."""
        await self._send_text(conn, json.dumps(msg))

    async def _send_text(self, conn: Conn, text: str) -> None:
        if conn.dropped:
            return
        try:
            await asyncio.wait_for(conn.ws.send_text(text), self.limits.send_timeout)
        except TimeoutError:
            # A client that does not read must not hold up everyone else's updates.
            log.warning("dropping a WebSocket client that did not read for %ss", self.limits.send_timeout)
            conn.dropped = True
            for room in self.rooms.values():
                room.conns.discard(conn)
        except Exception:  # noqa: BLE001 - closed sockets raise various errors
            pass

    async def broadcast(self, room: Room) -> None:
        """Send the current state to every client of the room.

        Broadcasts are serialized and each reads the state only once it holds the room's send
        lock, so every client receives states in the order they happened: an earlier broadcast
        held up by a slow client can never deliver an older state after a newer one."""
        async with room.send_lock:
            text = json.dumps({"type": "state", "game": self.public_state(room)})
            for conn in list(room.conns):
                await self._send_text(conn, text)

    def _rate_ok(self, conn: Conn) -> bool:
        now = time.monotonic()
        conn.tokens = min(float(self.limits.burst), conn.tokens + (now - conn.stamp) * self.limits.rate)
        conn.stamp = now
        if conn.tokens >= 1.0:
            conn.tokens -= 1.0
            return True
        return False

    async def handle(self, room: Room, conn: Conn, text: str) -> None:
        """Handle one text message from a client; every refusal is answered with an ``error``."""
        ref = None
        try:
            if not self._rate_ok(conn):
                raise ClientError("rate_limited", f"too many messages: at most {self.limits.rate:g} per second")
            if len(text.encode("utf-8", "replace")) > self.limits.max_message:
                raise ClientError("too_large", f"message too large: the limit is {self.limits.max_message} bytes")
            try:
                msg = json.loads(text)
            except (json.JSONDecodeError, RecursionError):
                raise ClientError("bad_json", "message is not valid JSON") from None
            if not isinstance(msg, dict):
                raise ClientError("bad_message", "message must be a JSON object with a 'type'")
            ref = msg.get("ref") if isinstance(msg.get("ref"), str | int) else None
            kind = msg.get("type")
            handler = {
                "hello": self._on_hello,
                "move": self._on_move,
                "undo": self._on_undo,
                "resign": self._on_resign,
                "rematch": self._on_rematch,
                "ping": self._on_ping,
            }.get(kind if isinstance(kind, str) else "")
            if handler is None:
                known = "hello, move, undo, resign, rematch, ping"
                raise ClientError("bad_message", f"unknown message type {str(kind)[:40]!r}: use {known}")
            await handler(room, conn, msg)
            conn.refused = 0
        except ClientError as exc:
            conn.refused += 1
            message = _capitalise_sides(exc.message)
            await self.send(conn, {"type": "error", "code": exc.code, "message": message, "ref": ref})
            if conn.refused >= self.limits.flood_close:
                await conn.ws.close(code=1008, reason="too many refused messages")
        except Exception:  # noqa: BLE001 - e.g. the database is unreachable: refuse, keep the game
            log.exception("internal error while handling a message for game %s", room.rec.id)
            message = "the server could not handle this message (nothing was changed): try again"
            await self.send(conn, {"type": "error", "code": "internal", "message": message, "ref": ref})

    async def _on_ping(self, room: Room, conn: Conn, msg: dict[str, Any]) -> None:
        await self.send(conn, {"type": "pong", "ref": msg.get("ref")})

    async def _on_hello(self, room: Room, conn: Conn, msg: dict[str, Any]) -> None:
        token = msg.get("token")
        seats: set[str] = set()
        if token is not None:
            if not isinstance(token, str) or len(token) > 200:
                raise ClientError("bad_token", "token must be a string")
            seats = {s for s in SIDES if _same(token, getattr(room.rec, f"{s}_token"))}
            if room.rec.mode == "ai":
                seats.discard(room.rec.ai_side or "")
            if not seats:
                conn.seats = frozenset()
                await self.send(conn, {"type": "welcome", "role": "spectator"})
                raise ClientError("bad_token", "this token does not hold a seat in this game: you are watching")
        conn.seats = frozenset(seats)
        await self.send(conn, {"type": "welcome", "role": conn.role})
        async with room.lock:
            self._start_clock_when_both_here(room)
        self._after_change(room)  # restarts an AI move that could not be stored earlier
        await self.broadcast(room)

    def _start_clock_when_both_here(self, room: Room) -> None:
        """An online rematch's clock starts when both players have opened it (nobody loses time
        before they have even seen the new board)."""
        rec = room.rec
        if rec.mode != "online" or rec.clock is None or rec.turn_started is not None or rec.result is not None:
            return
        if self.status(room) != "playing" or not all(any(s in c.seats for c in room.conns) for s in SIDES):
            return
        new = rec.copy()
        new.turn_started = self.now()
        self.storage.save(new)
        room.rec = new
        room.version += 1

    def _seat_to_move(self, room: Room, conn: Conn, action: str) -> str:
        if not conn.seats:
            raise ClientError("not_a_player", f"spectators cannot {action}: open your seat link to play", 403)
        status = self.status(room)
        if status == "over":
            raise ClientError("game_over", "the game is over")
        if status == "waiting":
            raise ClientError("waiting", "the invited player has not joined yet")
        turn = room.game.turn.value
        if turn not in conn.seats:
            raise ClientError("not_your_turn", f"it is {turn}'s turn, not yours")
        return turn

    async def _on_move(self, room: Room, conn: Conn, msg: dict[str, Any]) -> None:
        text = msg.get("move")
        if not isinstance(text, str) or len(text) > 32:
            raise ClientError("bad_message", "a move message needs 'move': notation such as '5R@d2'")
        async with room.lock:
            if self._check_flag(room):
                self._after_change(room)
                await self.broadcast(room)
                loser = SIDE_NAMES[Side(room.rec.result or "south").other.value]
                raise ClientError("game_over", f"the game is over: {loser} ran out of time")
            self._seat_to_move(room, conn, "move")
            ply = msg.get("ply")
            if ply is not None and ply != len(room.rec.moves):
                raise ClientError("stale", f"the game moved on (now at ply {len(room.rec.moves)}): move not played")
            reason = room.game.why_illegal(text)
            if reason is not None:
                raise ClientError("illegal", reason)
            move = parse_move(text)
            self._commit_move(room, move)
            self._after_change(room)
            await self.send(conn, {"type": "ack", "ply": len(room.rec.moves), "move": str(move), "ref": msg.get("ref")})
        await self.broadcast(room)

    async def _on_undo(self, room: Room, conn: Conn, msg: dict[str, Any]) -> None:
        async with room.lock:
            rec = room.rec
            if not conn.seats:
                raise ClientError("not_a_player", "spectators cannot undo", 403)
            if rec.mode not in ("ai", "hotseat"):
                raise ClientError("no_undo", "undo is only available against the AI and in hot-seat games")
            if self.status(room) != "playing":
                raise ClientError("game_over", "the game is over: undo is no longer possible")
            game = room.game.copy()
            removed_human = False
            if rec.mode == "hotseat":
                # a forced pass is not a choice: take back the move before it too
                while game.history and game.history[-1].is_pass:
                    game.undo()
                if game.history:
                    game.undo()
                    removed_human = True
            else:
                human = next(iter(conn.seats))
                while game.history and not removed_human:
                    last = game.history[-1]
                    mover = _mover_of_last(game)
                    game.undo()
                    removed_human = mover == human and not last.is_pass
            if not removed_human:
                raise ClientError("nothing_to_undo", "there is no move of yours to take back")
            new = rec.copy()
            self._charge(new, room)
            self.storage.truncate(new, len(game.history))
            room.rec, room.game = new, game
            room.version += 1
            if room.ai_task and not room.ai_task.done():
                room.ai_task = None  # its result will be discarded (version changed)
                # Its thread still runs the old player: the next AI move gets a fresh one, so that
                # no player object is ever used by two threads at once.
                room.ai_player = None
            self._after_change(room)
        await self.broadcast(room)

    async def _on_resign(self, room: Room, conn: Conn, msg: dict[str, Any]) -> None:
        async with room.lock:
            if not conn.seats:
                raise ClientError("not_a_player", "spectators cannot resign", 403)
            status = self.status(room)
            if status == "over":
                raise ClientError("game_over", "the game is over")
            if status == "waiting":
                raise ClientError("waiting", "the invited player has not joined yet: there is no game to resign")
            side = room.game.turn.value if len(conn.seats) == 2 else next(iter(conn.seats))
            self._finish(room, Side(side).other.value, "resign")
            self._after_change(room)
        await self.broadcast(room)

    async def _on_rematch(self, room: Room, conn: Conn, msg: dict[str, Any]) -> None:
        async with room.lock:
            if not conn.seats:
                raise ClientError("not_a_player", "spectators cannot start a rematch", 403)
            if self.status(room) != "over":
                raise ClientError("not_over", "a rematch can start once the game is over")
            old = room.rec
            if old.rematch_id is None:
                rec = GameRecord(id=_new_id(), mode=old.mode)
                # Seats swap: each player's token now holds the other side.
                rec.south_token, rec.north_token = old.north_token, old.south_token
                rec.joined = old.joined
                rec.invite = old.invite if not old.joined else None  # an open seat stays joinable
                rec.ai_level = old.ai_level
                rec.ai_side = Side(old.ai_side).other.value if old.ai_side else None
                rec.rematch_of = old.id
                if old.clock is not None:
                    rec.clock = rec.south_time = rec.north_time = old.clock
                    # online, the clock starts once both players are at the new board (see hello);
                    # elsewhere the one person who asked is taken there at once
                    rec.turn_started = None if old.mode == "online" else self.now()
                self.storage.create(rec)
                new_old = old.copy()
                new_old.rematch_id = rec.id
                self.storage.save(new_old)
                room.rec = new_old
                new_room = Room(rec, Game())
                self.rooms[rec.id] = new_room
                self._after_change(new_room)
            rematch_id = room.rec.rematch_id
        # Only the asker is taken there; the others see ``rematch_id`` in the state and choose
        # when to follow (a person replaying the finished game is not yanked away).
        await self.send(conn, {"type": "rematch", "id": rematch_id})
        await self.broadcast(room)

    async def replay(self, room: Room) -> dict[str, Any]:
        """Every position of the game from the start, for stepping through it."""
        rec = room.rec
        game = Game.from_position(rec.start_position) if rec.start_position else Game()
        frames = []

        def frame(move: str | None) -> dict[str, Any]:
            return {
                "ply": len(game.history),
                "move": move,
                "towers": {c: [str(p) for p in t] for c, t in game.towers().items() if t},
                "leaders": {k: (str(v) if v is not None else None) for k, v in game.leaders().items()},
                "score": list(game.score()),
                "turn": game.turn.value,
            }

        frames.append(frame(None))
        for mv in rec.moves:
            game.play(mv)
            frames.append(frame(mv))
        return {"id": rec.id, "frames": frames, "result": self.outcome(room)[0]}

    def record_text(self, room: Room) -> str:
        """The game record for download (the format of docs/notation.md)."""
        rec = room.rec
        result, reason = self.outcome(room)
        names = {s: "AI " + (rec.ai_level or "") if rec.ai_side == s else "Human" for s in SIDES}
        tags = {
            "Event": f"Jericho web game ({rec.mode})",
            "Site": "jericho serve",
            "Date": time.strftime("%Y.%m.%d", time.gmtime(rec.created_at)),
            "South": names["south"],
            "North": names["north"],
            "Result": _RESULT_TOKENS[result],
            "GameId": rec.id,
        }
        if result and reason:
            loser = "South" if result == "north" else "North"
            tags["Termination"] = {
                "seven": "seven monoliths held through a full turn",
                "exhaustion": "both players passed",
                "resign": f"{loser} resigned",
                "time": f"{loser} lost on time",
            }[reason]
        return write_game_record(room.game, tags)


_RESULT_TOKENS: dict[str | None, str] = {"south": "1-0", "north": "0-1", "draw": "1/2-1/2", None: "*"}


def _mover_of_last(game: Game) -> str:
    """The side that played the last move of ``game`` (a move flips the turn)."""
    return game.turn.other.value


# -- HTTP --------------------------------------------------------------------------------------


def _capitalise_sides(message: str) -> str:
    """Side names as players read them ("South"), also in the engine's reasons ("south cannot pass")."""
    return re.sub(r"\b(south|north)\b", lambda m: m.group(1).capitalize(), message)


def _error(code: str, message: str, status: int) -> JSONResponse:
    return JSONResponse({"error": code, "message": message}, status_code=status)


async def _json_body(request: Request, hub: Hub) -> dict[str, Any]:
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > hub.limits.max_message:
            raise ClientError("too_large", f"request body too large: the limit is {hub.limits.max_message} bytes", 413)
    if not body.strip():
        return {}
    try:
        data = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        raise ClientError("bad_json", "request body is not valid JSON") from None
    if not isinstance(data, dict):
        raise ClientError("bad_request", "request body must be a JSON object")
    return data


def _links(request: Request, game_id: str, token: str | None = None, invite: str | None = None) -> dict[str, str]:
    base = str(request.base_url).rstrip("/")
    links = {"watch": f"{base}/g/{game_id}"}
    if token:
        links["play"] = f"{base}/g/{game_id}#seat={token}"
    if invite:
        links["invite"] = f"{base}/g/{game_id}#invite={invite}"
    return links


def _rules_text() -> str:
    here = Path(__file__).resolve()
    for candidate in (here.parents[3] / "docs" / "rules.md", STATIC / "rules.md"):
        if candidate.is_file():
            return candidate.read_text(encoding="utf-8")
    return "# Rules\n\nThe rules document is not installed."


def create_app(
    db_url: str | None = None,
    *,
    limits: Limits | None = None,
    ai_limit: Limit | None = None,
    ai_delay: float = 0.0,
    clock: Callable[[], float] = time.time,
) -> Starlette:
    """The ASGI app.  ``db_url``: a SQLAlchemy URL or a SQLite file path (default: user data dir).

    ``ai_delay`` makes the AI wait at least that many seconds per move (so people see it move);
    ``clock`` is the wall clock used for game clocks (tests pass a fake one).
    """
    storage = Storage(resolve_db_url(db_url))
    hub = Hub(storage, limits or Limits(), ai_limit=ai_limit, ai_delay=ai_delay, clock=clock)

    def page(request: Request) -> Response:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})

    def rules_page(request: Request) -> Response:
        return FileResponse(STATIC / "rules.html", headers={"Cache-Control": "no-cache"})

    async def rules_md(request: Request) -> Response:
        return PlainTextResponse(_rules_text(), media_type="text/markdown; charset=utf-8")

    async def topology(request: Request) -> Response:
        return JSONResponse(Game().topology.to_dict())

    async def levels(request: Request) -> Response:
        return JSONResponse({"levels": hub.levels(), "default": hub.default_level()})

    async def create(request: Request) -> Response:
        spec = await _json_body(request, hub)
        client = request.client.host if request.client else "?"
        room, reply = hub.create(spec, client)
        reply["links"] = _links(request, room.rec.id, reply.get("token"), reply.get("invite"))
        reply["game"] = hub.public_state(room)
        return JSONResponse(reply, status_code=201)

    async def show(request: Request) -> Response:
        room = hub.room(request.path_params["id"])
        return JSONResponse(hub.public_state(room))

    async def join(request: Request) -> Response:
        # the body first: no await between loading the room and locking it, so it cannot be
        # evicted from memory (and loaded again as a second copy) in between
        body = await _json_body(request, hub)
        room = hub.room(request.path_params["id"])
        reply = await hub.join(room, body.get("invite"))
        reply["links"] = _links(request, room.rec.id, reply["token"])
        return JSONResponse(reply)

    async def record(request: Request) -> Response:
        room = hub.room(request.path_params["id"])
        return PlainTextResponse(
            hub.record_text(room),
            headers={"Content-Disposition": f'attachment; filename="jericho-{room.rec.id}.jgn"'},
        )

    async def replay(request: Request) -> Response:
        room = hub.room(request.path_params["id"])
        return JSONResponse(await hub.replay(room))

    async def ws(websocket: WebSocket) -> None:
        await websocket.accept()
        try:
            room = hub.room(websocket.path_params["id"])
        except ClientError as exc:
            await websocket.send_text(json.dumps({"type": "error", "code": exc.code, "message": exc.message}))
            await websocket.close(code=4404 if exc.status == 404 else 4400)
            return
        except Exception:  # noqa: BLE001 - e.g. the database is unreachable: say so, the page retries
            log.exception("cannot load game %s for a WebSocket client", websocket.path_params["id"])
            why = "the server could not load this game right now (nothing was changed): retrying"
            await websocket.send_text(json.dumps({"type": "error", "code": "internal", "message": why}))
            await websocket.close(code=1011)
            return
        if len(room.conns) >= hub.limits.max_connections_per_game:
            await websocket.send_text(
                json.dumps({"type": "error", "code": "full", "message": "too many connections to this game"})
            )
            await websocket.close(code=1013)
            return
        conn = Conn(websocket, tokens=float(hub.limits.burst))
        room.conns.add(conn)
        try:
            await hub.send(conn, {"type": "welcome", "role": "spectator"})
            await hub.send(conn, {"type": "state", "game": hub.public_state(room)})
            while True:
                message = await websocket.receive()
                if message["type"] == "websocket.disconnect" or conn.dropped:
                    break
                text = message.get("text")
                if text is None:
                    data = message.get("bytes") or b""
                    if len(data) > hub.limits.max_message:
                        text = "x" * (hub.limits.max_message + 1)
                    else:
                        await hub.send(
                            conn, {"type": "error", "code": "bad_message", "message": "send text (JSON), not binary"}
                        )
                        continue
                await hub.handle(room, conn, text)
        except WebSocketDisconnect:
            pass
        except RuntimeError:  # closed by us after a flood
            pass
        finally:
            room.conns.discard(conn)
            if conn.seats:
                await hub.broadcast(room)

    async def client_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, ClientError)
        return _error(exc.code, exc.message, exc.status)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        if exc.status_code == 404:
            return _error("not_found", f"no such page: {request.url.path[:100]}", 404)
        if exc.status_code == 405:
            return _error("bad_method", f"{request.method} is not allowed on {request.url.path[:100]}", 405)
        return _error("http_error", str(exc.detail), exc.status_code)

    async def server_error(request: Request, exc: Exception) -> Response:
        log.exception("internal error on %s", request.url.path)
        return _error("internal", "internal server error: the game is safe, try again", 500)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        hub.executor.shutdown(wait=False, cancel_futures=True)
        storage.close()

    routes = [
        Route("/", page),
        Route("/g/{id}", page),
        Route("/rules", rules_page),
        Route("/api/rules.md", rules_md),
        Route("/api/topology", topology),
        Route("/api/levels", levels),
        Route("/api/games", create, methods=["POST"]),
        Route("/api/games/{id}", show),
        Route("/api/games/{id}/join", join, methods=["POST"]),
        Route("/api/games/{id}/record", record),
        Route("/api/games/{id}/replay", replay),
        *tutorial.routes,  # read-only engine help: move preview, tutorial (jericho_game.web.tutorial)
        WebSocketRoute("/ws/{id}", ws),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(
        routes=routes,
        exception_handlers={ClientError: client_error, HTTPException: http_error, Exception: server_error},
        lifespan=lifespan,
    )
    app.state.hub = hub
    return app


# -- command line ----------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser, name: str = "serve") -> None:
    """Options of ``jericho serve``."""
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    parser.add_argument("--db", default=None, help="SQLite file or database URL (default: user data directory)")
    parser.add_argument(
        "--ai-delay", type=float, default=0.4, help="minimum seconds the AI takes per move, so moves can be followed"
    )


def run(args: argparse.Namespace) -> int:
    """Start the web app with uvicorn and print its URL."""
    import uvicorn

    from jericho_game.web.storage import StorageError

    try:
        url = resolve_db_url(args.db)
        app = create_app(url, ai_delay=args.ai_delay)
    except StorageError as exc:
        print(f"jericho serve: {exc}", flush=True)
        return 2
    host = args.host
    shown = f"[{host}]" if ":" in host else host
    print(f"Jericho is ready at http://{shown}:{args.port}/  (games stored in {url})", flush=True)
    uvicorn.run(app, host=host, port=args.port, log_level="warning", ws_max_size=64 * 1024)
    return 0
