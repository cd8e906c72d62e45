"""The game-room service: the only place that decides (seats, moves, clock, AI requests, rematch).

Every change follows one path: :meth:`Storage.write` locks the game's row and hands over the
stored version; the room is brought up to that version from the database when the cached copy
is older (the cache saves replaying moves, it is never trusted for a decision); the change is
checked against that fresh state; the moves, the game's new clock/result and (when the AI is to
move next) an AI job are written; the version is bumped by compare-and-set; the transaction
commits.  Only then is the cache updated and the change announced (:meth:`GameService.announce`,
which the transport calls after acknowledging).  A request whose client saw an older position
than the stored one is refused with ``moved_on`` and the fresh state, so of two racers for one
ply exactly one wins.

Nothing here knows about HTTP or WebSockets: the transport (:mod:`jericho_game.web.server`)
turns messages into calls and :class:`ClientError` into error messages.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import re
import secrets
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from jericho_game.errors import JerichoError
from jericho_game.game import Game
from jericho_game.moves import PASS, Move, parse_move
from jericho_game.pieces import Side
from jericho_game.players.base import make_player, registered_names
from jericho_game.web import render
from jericho_game.web.broker import Broker, LocalBroker
from jericho_game.web.names import NameError_, check_name
from jericho_game.web.storage import AIJob, Conflict, GameRecord, QueueFull, QuotaFull, Storage, Tx

__all__ = ["ClientError", "GameService", "Room", "Change", "SIDES", "MODES", "quota_error"]

log = logging.getLogger("jericho_game.web")

MODES = ("ai", "hotseat", "online")
SIDES = ("south", "north")
SIDE_NAMES = {"south": "South", "north": "North"}
PREFERRED_LEVELS = ("easy", "medium", "hard", "expert", "master", "random", "greedy", "mcts", "alphabeta")
_ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,32}$")
_RESULT_TOKENS: dict[str | None, str] = {"south": "1-0", "north": "0-1", "draw": "1/2-1/2", None: "*"}
# reasons a game ends with no result (result None): aborted by a player, or a seek nobody took
NO_RESULT = ("aborted", "expired")


class ClientError(Exception):
    """A refused request: ``code`` for programs, ``message`` for people; ``game``: a fresh state to show."""

    def __init__(self, code: str, message: str, status: int = 400, game: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
        self.game = game


@dataclass(eq=False)
class Room:
    """A cached game: its stored record (at ``rec.version``) and the engine game replayed from it."""

    rec: GameRecord
    game: Game
    ai_place: int | None = None  # AI job: 0 thinking, k k-th in the queue, None none
    board_json: str | None = None  # the version-dependent part of the public state, serialized
    board_version: int = -1
    # the position's rendered parts (render.position_json), and those of an earlier version of the
    # game until this one is rendered: the next state re-renders only what a move changed
    rendered: render.Rendered | None = None
    prior: render.Rendered | None = None
    # who is connected, across processes (the transport reads it from the presence table):
    # "south"/"north" connected or not, "watchers" a count, "away" {side: since when (wall time)}
    present: dict[str, Any] = field(default_factory=lambda: {"south": 0, "north": 0, "watchers": 0, "away": {}})

    @property
    def version(self) -> int:
        """The stored version this copy reflects."""
        return self.rec.version


@dataclass
class Change:
    """What a committed change did: the room after it, and the ``ack`` for a move."""

    room: Room
    ack: dict[str, Any] | None = None
    error: ClientError | None = None  # committed, yet the request is refused (a flag fell first)
    rematch_id: str | None = None
    committed: bool = False  # whether a new version was written


def _new_id() -> str:
    return secrets.token_urlsafe(6).replace("-", "x").replace("_", "y")


def _new_token() -> str:
    return secrets.token_urlsafe(18)


def same_secret(a: str | None, b: str | None) -> bool:
    """Constant-time comparison of two secrets (``None`` never matches)."""
    import hmac

    return a is not None and b is not None and hmac.compare_digest(a.encode(), b.encode())


_PIECE_TEXT: dict[Any, str] = {}


def _p(piece: Any) -> str:
    # a piece's notation, memoized: rendering a state names hundreds of pieces
    s = _PIECE_TEXT.get(piece)
    if s is None:
        s = _PIECE_TEXT[piece] = str(piece)
    return s


def legal_by_piece(moves: list[Move]) -> dict[str, list[str]]:
    """Placements grouped for the page: piece notation -> cells (passes left out)."""
    legal: dict[str, list[str]] = {}
    prev: Any = None
    cells: list[str] = []
    for m in moves:  # moves come grouped by piece: name each piece once, not once per cell
        piece = m.piece
        if piece is None or m.cell is None:
            continue
        if piece is not prev:
            prev, cells = piece, legal.setdefault(_p(piece), [])
        cells.append(m.cell)
    return legal


def confrontations(game: Game) -> dict[str, dict[str, Any]]:
    """Each alignment's champions, leader and the deciding comparison in words, for the page."""
    return {a.name: render.confrontation_body(game.confrontation(a.name)) for a in game.topology.alignments}


def quota_error(exc: QuotaFull) -> ClientError:
    """The coded error (429) of a client over one of its fair-share quotas (nothing was changed)."""
    if exc.what == "ai":
        return ClientError(
            "ai_quota",
            f"you already have {exc.have} games waiting for the AI's reply, the most one player or address may "
            f"have at once ({exc.limit}): wait for a reply, then play; nothing was changed",
            429,
        )
    if exc.what == "seeks":
        return ClientError(
            "seek_quota",
            f"you already have {exc.have} open seeks in the lobby, the most one player or address may have "
            f"({exc.limit}): wait for an opponent or cancel one; nothing was created",
            429,
        )
    return ClientError(
        "review_quota",
        f"you already have {exc.have} game reviews waiting, the most one player or address may have at once "
        f"({exc.limit}): wait for one to finish; nothing was queued",
        429,
    )


class GameService:
    """Rooms, seats, clocks, AI requests and rematches over one :class:`Storage` and one :class:`Broker`."""

    def __init__(
        self,
        storage: Storage,
        broker: Broker | None = None,
        *,
        clock: Callable[[], float] = time.time,
        max_rooms: int = 2000,
        creates_per_minute: int = 60,
        min_clock: float = 1.0,
        max_ai_jobs: int = 64,
        claim_after: float = 300.0,
        presence_ttl: float = 30.0,
        seek_idle: float = 120.0,
        seek_max_age: float = 3600.0,
        ai_per_client: int | None = None,
        seeks_per_client: int | None = None,
    ) -> None:
        self.storage = storage
        self.broker = broker or LocalBroker()
        self.now = clock
        self.max_rooms = max_rooms
        self.creates_per_minute = creates_per_minute
        self.min_clock = min_clock  # minutes per side; a clock of 1e-9 minutes was lost at once
        self.max_ai_jobs = max_ai_jobs
        # fair endings and the lobby (issue 12, see endings.py and lobby.py)
        self.claim_after = claim_after  # seconds an opponent must be away before a claim
        self.presence_ttl = presence_ttl  # a process's presence row counts this long after its last beat
        self.seek_idle = seek_idle  # an open seek expires when its creator has been away this long
        self.seek_max_age = seek_max_age  # ... or when it is this old
        # fair share (issue 22, web/fairshare.py): per client (address, and account) quotas; None: none
        self.ai_per_client = ai_per_client  # AI games waiting for the AI's reply at once
        self.seeks_per_client = seeks_per_client  # open seeks in the lobby at once
        # what the lobby shows per seek beyond the game itself: the accounts work fills in
        # "rated" and "rating" (None: an anonymous, unrated game)
        self.lobby_extras: Callable[[GameRecord], dict[str, Any]] = lambda rec: {"rated": False, "rating": None}
        self.rooms: OrderedDict[str, Room] = OrderedDict()
        self.creates: dict[str, deque[float]] = {}
        self._levels: list[str] | None = None
        self.busy_rooms: Callable[[str], bool] = lambda gid: False  # the transport: rooms with clients
        self._group: list[Any] = []  # (game id, decide, future, on_commit) waiting for the next group
        self._in_flight = False  # a group is being committed on the database thread
        self.committing: set[str] = set()  # the games of that group
        self._db_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="jericho-db")
        self._read_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="jericho-read")
        # the event loop owns the cache; changes run by off_loop() on the database thread hand
        # their cache updates back to it
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None
        self._creates_lock = threading.Lock()
        # accounts and ratings (web/accounts.py, web/ratings.py): hooks called inside the transaction
        # of the change that ends a game (e.g. queue its rating update), and the names of accounts
        self.on_finish: list[Callable[[Tx, GameRecord], None]] = []
        self.account_name: Callable[[int], str | None] = lambda account_id: None

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

    @staticmethod
    def check_name(name: Any) -> str:
        """A player's display name as stored (see names.py), or ``bad_name``."""
        try:
            return check_name(name)
        except NameError_ as exc:
            raise ClientError(exc.code, exc.message) from None

    # -- the cache -------------------------------------------------------------------------
    def _check_id(self, game_id: str) -> None:
        if not _ID_RE.match(game_id or ""):
            raise ClientError("unknown_game", f"unknown game {game_id[:40]!r}", 404)

    def _unknown(self, game_id: str) -> ClientError:
        return ClientError("unknown_game", f"unknown game {game_id!r}: no game has this id", 404)

    def room(self, game_id: str) -> Room:
        """The room of ``game_id`` as stored now (the cache is used only when its version is current)."""
        self._check_id(game_id)
        version = self.storage.version(game_id)
        if version is None:
            if self._on_loop():
                self.rooms.pop(game_id, None)
            raise self._unknown(game_id)
        room = self.rooms.get(game_id)
        if room is not None and room.version == version:
            if self._on_loop():
                self.rooms.move_to_end(game_id)
            if self.ai_to_move(room):  # the AI's place in the queue changes without a new version
                room.ai_place = self._job_place(room)
            return room
        rec = self.storage.load(game_id)
        if rec is None:
            raise self._unknown(game_id)
        room = self._install(rec)
        self._ensure_ai_job(room)
        return room

    def cached(self, game_id: str) -> Room | None:
        """The cached room, if any (for the transport's bookkeeping; never for a decision)."""
        return self.rooms.get(game_id)

    def _build(self, rec: GameRecord) -> Room:
        """A room for ``rec``, reusing the cached game when the stored moves only extend it (no caching:
        safe on the database thread)."""
        old = self.rooms.get(rec.id)
        if (
            old is not None
            and old.rec.start_position == rec.start_position
            and rec.moves[: len(old.rec.moves)] == old.rec.moves
        ):
            game = old.game.copy()
            moves = rec.moves[len(old.rec.moves) :]
        else:
            game = Game.from_position(rec.start_position) if rec.start_position else Game()
            moves = rec.moves
        try:
            for mv in moves:
                game.play(mv)
        except JerichoError as exc:
            raise ClientError("corrupt_game", f"stored game {rec.id!r} cannot be replayed: {exc}", 500) from exc
        room = Room(rec, game)
        if old is not None:
            room.present = old.present
            room.prior = old.rendered or old.prior
        return room

    def _install(self, rec: GameRecord) -> Room:
        """Cache the room of ``rec`` (replayed, or extended from the cached one) with its AI place."""
        room = self._build(rec)
        room.ai_place = self._job_place(room)
        self._keep(room)
        return room

    def _on_loop(self) -> bool:
        return self._loop_thread is None or threading.get_ident() == self._loop_thread

    def _keep(self, room: Room) -> None:
        """Cache ``room``; from the database thread (see :meth:`off_loop`) the event loop does it."""
        if not self._on_loop():
            assert self._loop is not None
            self._loop.call_soon_threadsafe(self._keep, room)
            return
        old = self.rooms.get(room.rec.id)
        if old is not None and old.version > room.version:
            return  # a newer copy was cached meanwhile
        self.rooms[room.rec.id] = room
        self.rooms.move_to_end(room.rec.id)
        self._evict()

    async def off_loop(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run a synchronous change (create, join, undo, resign, rematch, ...) on the database thread.

        The event loop then never waits for a disk flush, nor for the write lock that this
        process's own group of moves holds while it commits (on SQLite, a change made on the loop
        waited for both: ~30 ms with the loop stopped).  The database thread runs one thing at a
        time, so the change runs between two groups; its cache updates are handed back to the
        event loop and happen before this returns."""
        loop = self._bind()
        return await loop.run_in_executor(self._db_thread, lambda: fn(*args))

    async def off_loop_read(self, fn: Callable[..., Any], *args: Any) -> Any:
        """:meth:`off_loop` for reads (reloading games that other processes changed): on a thread
        of their own, so that they never wait behind a group's commit."""
        loop = self._bind()
        return await loop.run_in_executor(self._read_thread, lambda: fn(*args))

    def _bind(self) -> asyncio.AbstractEventLoop:
        """Note the event loop (the cache's owner) we are called on."""
        loop = asyncio.get_running_loop()
        self._loop, self._loop_thread = loop, threading.get_ident()
        return loop

    def _evict(self) -> None:
        while len(self.rooms) > self.max_rooms:
            for gid in self.rooms:
                if not self.busy_rooms(gid):
                    del self.rooms[gid]
                    break
            else:
                return

    def _fresh(self, tx: Tx) -> Room:
        """The room at the version locked by ``tx``: the cached copy if it is that version, else reloaded
        (not cached: the committed room is, once the transaction is over)."""
        room = self.rooms.get(tx.game_id)
        if room is not None and room.version == tx.version:
            return room
        return self._build(tx.load())

    def refresh(self, game_id: str, version: int) -> Room | None:
        """Bring a cached room up to ``version`` after another process announced it (None: not cached,
        or already current).  ``version`` -1: only the AI's place in the queue changed."""
        room = self.rooms.get(game_id)
        if room is None:
            return None
        if version < 0:
            place = self._job_place(room)
            if place == room.ai_place:
                return None
            room.ai_place = place
            return room
        if version <= room.version:
            return None
        rec = self.storage.load(game_id)
        if rec is None:
            return None
        return self._install(rec)

    def _job_place(self, room: Room, conn: Any = None) -> int | None:
        if self.ai_to_move(room):
            return self.storage.job_place(room.rec.id, room.version, conn)
        return None

    # -- reading the state -------------------------------------------------------------------
    def status(self, room: Room) -> str:
        """``waiting`` (online, invite not used), ``playing`` or ``over``."""
        return _status(room.rec, room.game)

    def outcome(self, room: Room) -> tuple[str | None, str | None]:
        """``(result, reason)``: result south/north/draw or None; reason seven/exhaustion/resign/time."""
        return _outcome(room.rec, room.game)

    def ai_to_move(self, room: Room) -> bool:
        """Whether the game waits for an AI move."""
        rec = room.rec
        return rec.mode == "ai" and self.status(room) == "playing" and room.game.turn.value == rec.ai_side

    def clock_side(self, room: Room) -> str | None:
        """The side whose clock is running, if any."""
        return _clock_side(room.rec, room.game)

    def time_left(self, room: Room, side: str) -> float:
        """Seconds left on ``side``'s clock now."""
        left = float(getattr(room.rec, f"{side}_time") or 0.0)
        if self.clock_side(room) == side and room.rec.turn_started is not None:
            left -= self.now() - room.rec.turn_started
        return left

    def _board(self, room: Room) -> str:
        """The part of the public state that only changes with the version, serialized once."""
        if room.board_json is not None and room.board_version == room.version:
            return room.board_json
        rec, game = room.rec, room.game
        result, reason = self.outcome(room)
        status = self.status(room)
        legal = "{}"  # the legal placements by piece, as JSON text (render.legal_json)
        pass_only = False
        if status == "playing":
            legal = render.legal_json(game)
            pass_only = legal == "{}"  # playing, yet no placement: passing is forced
        threat = game.seven_threat()
        board = {
            "id": rec.id,
            "mode": rec.mode,
            "status": status,
            "ply": len(rec.moves),
            "version": rec.version,
            "moves": list(rec.moves),
            "turn": game.turn.value,
            "score": list(game.score()),
            "pass_only": pass_only,
            "last": rec.moves[-1] if rec.moves else None,
            "threat": threat.value if threat and status != "over" else None,
            "result": result,
            "reason": reason,
            "can_undo": status == "playing" and self._has_own_move(room),
            "rematch_of": rec.rematch_of,
            "rematch_id": rec.rematch_id,
            "public": rec.public,
            "names": {s: rec.meta.get("names", {}).get(s) for s in SIDES},
            "offer": rec.meta.get("offer") if status == "playing" else None,
            "can_abort": rec.mode == "online" and status != "over" and not _both_moved(rec),
            # accounts: the username each seat is bound to (None: anonymous), and whether it is rated
            "accounts": {s: self._account_of(rec, s) for s in SIDES},
            "rated": rec.rated,
        }
        # the position's parts (towers, reserves, leaders, confrontations) come from fragments
        # rendered once and memoized, and only the parts a move changed are looked up again
        # (web/render.py): they were most of a state's cost
        rendered = room.rendered = render.position_json(game, room.prior)
        room.prior = None
        room.board_json = json.dumps(board, separators=(",", ":"))[1:-1] + ',"legal":' + legal + "," + rendered.text
        room.board_version = room.version
        return room.board_json

    def _account_of(self, rec: GameRecord, side: str) -> str | None:
        account_id = getattr(rec, f"{side}_account")
        return None if account_id is None else self.account_name(account_id)

    def _live(self, room: Room) -> dict[str, Any]:
        """The part of the public state that changes without a new version (presence, clocks, AI queue)."""
        rec = room.rec
        seats = {}
        for s in SIDES:
            if rec.mode == "ai" and rec.ai_side == s:
                seats[s] = {"kind": "ai", "level": rec.ai_level, "present": True}
            elif rec.mode == "online" and not getattr(rec, f"{s}_token"):
                seats[s] = {"kind": "open", "present": False}
            else:
                seats[s] = {"kind": "human", "present": bool(room.present[s])}
                since = room.present.get("away", {}).get(s)
                # only where it matters (a claim is possible): the state stays still otherwise
                claimable = rec.mode == "online" and rec.clock is None and self.status(room) == "playing"
                if claimable and not room.present[s] and since is not None:
                    seats[s]["away_for"] = round(max(0.0, self.now() - since), 1)
        clock = None
        if rec.clock is not None:
            clock = {
                "initial": rec.clock,
                "south": max(0.0, self.time_left(room, "south")),
                "north": max(0.0, self.time_left(room, "north")),
                "running": self.clock_side(room),
            }
        place = room.ai_place if self.ai_to_move(room) else None
        ai = None if place is None else {"status": "thinking" if place == 0 else "queued", "position": place}
        return {
            "seats": seats,
            "clock": clock,
            "ai_thinking": place is not None,
            "ai": ai,
            "watchers": room.present["watchers"],
            # an untimed online game: a player may claim once the opponent has been away this long
            "claim_after": self.claim_after if rec.mode == "online" and rec.clock is None else None,
        }

    def state_json(self, room: Room) -> str:
        """The public state as JSON text (never a token)."""
        live = json.dumps(self._live(room), separators=(",", ":"))[1:-1]
        return "{" + self._board(room) + "," + live + "}"

    def public_state(self, room: Room) -> dict[str, Any]:
        """Everything anyone may see about a game (never a token), as a dict."""
        result: dict[str, Any] = json.loads(self.state_json(room))
        return result

    def _has_own_move(self, room: Room) -> bool:
        """Whether undo has something to take back: a move (not a forced pass) of a person, in a
        game with undo (against the AI, the AI's own opening move is not the person's to undo)."""
        rec, n = room.rec, len(room.rec.moves)
        if rec.mode == "hotseat":
            return any(m != "pass" for m in rec.moves)
        if rec.mode != "ai":
            return False
        turn = room.game.turn
        return any(
            m != "pass" and (turn.other if (n - 1 - i) % 2 == 0 else turn).value != rec.ai_side
            for i, m in enumerate(rec.moves)
        )

    # -- the write path ------------------------------------------------------------------------
    def _commit(
        self,
        tx: Tx,
        room: Room,
        rec: GameRecord,
        game: Game,
        new_moves: list[str] | None = None,
        plies: int | None = None,
    ) -> Room:
        """Write ``rec``/``game`` (the room after the change) in ``tx``: moves, AI job, deadline, version.

        Every refusal comes before the first write (a group of changes relies on it: see
        :meth:`_run_group`)."""
        rec.moves = list(room.rec.moves[: plies if plies is not None else None]) + list(new_moves or [])
        offer = rec.meta.get("offer")
        if offer and (new_moves or plies is not None):
            # a move answers every takeback request and the opponent's draw offer (the offerer's
            # own move leaves a draw offer standing)
            mover = room.game.turn.value
            if offer.get("what") != "draw" or offer.get("by") != mover or plies is not None:
                rec.meta = {k: v for k, v in rec.meta.items() if k != "offer"}
        result, reason = _outcome(rec, game)
        if result is not None and rec.result is None:
            rec.result, rec.reason, rec.turn_started = result, reason, None
        side = _clock_side(rec, game)
        rec.deadline = None
        if side is not None and rec.turn_started is not None:
            rec.deadline = rec.turn_started + float(getattr(rec, f"{side}_time") or 0.0)
        ai_next = rec.mode == "ai" and _status(rec, game) == "playing" and game.turn.value == rec.ai_side
        if ai_next and self.ai_per_client is not None:
            waiting = tx.client_jobs(rec)
            if waiting >= self.ai_per_client:
                raise quota_error(QuotaFull("ai", waiting, self.ai_per_client))
        if ai_next and tx.waiting_jobs() >= self.max_ai_jobs:
            raise ClientError(
                "busy",
                f"the server is busy: {self.max_ai_jobs} AI moves are waiting; nothing was changed, try again soon",
                503,
            )
        if rec.result is not None and room.rec.result is None:  # this change ends the game
            for hook in self.on_finish:
                hook(tx, rec)
        if plies is not None:
            tx.truncate(plies)
        if new_moves:
            tx.append_moves(len(room.rec.moves), new_moves)
        if ai_next:
            tx.put_job(rec, tx.version + 1, rec.ai_level or "random")
        elif rec.mode == "ai":
            tx.drop_job()
        tx.save(rec)
        new = Room(rec, game)
        new.present = room.present
        new.prior = room.rendered or room.prior
        return new

    def _publish(self, room: Room) -> Room:
        """Cache the committed room (the transaction is over)."""
        room.ai_place = self._job_place(room)
        self._keep(room)
        return room

    def announce(self, room: Room) -> None:
        """Tell every listener (this process now, the others through the broker) that the game changed."""
        self.broker.publish(room.rec.id, room.version)
        if self.ai_to_move(room):
            self.broker.job_queued(room.rec.id)

    def _write(self, game_id: str, decide: Callable[[Tx, Room], Change]) -> Change:
        """Run ``decide`` on the fresh room inside a locked transaction; cache the result once committed."""
        self._check_id(game_id)
        try:
            with self.storage.write(game_id) as tx:
                change = decide(tx, self._fresh(tx))
                change.committed = tx.saved is not None
        except Exception as exc:  # noqa: BLE001 - translated, or raised as it is
            raise self._refusal(game_id, exc) from None
        self._publish(change.room)
        return change

    def _refusal(self, game_id: str, exc: Exception) -> Exception:
        """The error a client hears for ``exc`` raised by a change (the change was rolled back)."""
        if isinstance(exc, KeyError):
            return self._unknown(game_id)
        if isinstance(exc, Conflict):
            room = self.room(game_id)
            return ClientError(
                "moved_on", "the game moved on meanwhile: nothing was played", 409, self.public_state(room)
            )
        if isinstance(exc, QueueFull):
            return ClientError("busy", f"the server is busy: {exc}; try again soon", 503)
        if isinstance(exc, QuotaFull):
            return quota_error(exc)
        return exc

    async def _write_grouped(
        self,
        game_id: str,
        decide: Callable[[Tx, Room], Change],
        on_commit: Callable[[Change], None] | None = None,
    ) -> Change:
        """:meth:`_write`, with the changes that arrive together committed together (group commit).

        The changes requested while the previous group was being committed run in one
        transaction, on the database thread (the event loop goes on reading messages while the
        disk flushes), in the order of their games' ids (so two processes' groups always lock rows
        in the same order and never deadlock); the whole group commits once, then every request
        is answered.  A refused change has written nothing (see :meth:`_run_group`); a failed
        commit fails them all (nothing was acknowledged).  ``on_commit`` runs as soon as the change is
        committed, before anything else on the event loop (the mover's ``ack`` goes out before
        any broadcast of the new state)."""
        self._check_id(game_id)
        loop = self._bind()
        fut: asyncio.Future[Change] = loop.create_future()
        self._group.append((game_id, decide, fut, on_commit))
        if len(self._group) == 1 and not self._in_flight:
            loop.call_soon(self._start_group)
        return await fut

    def _start_group(self) -> None:
        if self._in_flight or not self._group:
            return
        group, self._group = self._group, []
        group.sort(key=lambda item: item[0])  # stable: one game's changes keep their order
        self._in_flight = True
        self.committing = {item[0] for item in group}
        loop = asyncio.get_running_loop()
        work = loop.run_in_executor(self._db_thread, self._run_group, [(g, d) for g, d, *_ in group])
        work.add_done_callback(lambda done: self._end_group(group, done))

    def _run_group(self, items: list[tuple[str, Callable[[Tx, Room], Change]]]) -> list[Change | Exception]:
        """The group's transaction (on the database thread): the changes one after the other, one commit.

        A change refused before it wrote anything (every :class:`ClientError` is: see
        :meth:`_commit`) is simply left out; anything failing after a write aborts the whole
        group, so a half-made change is never committed (no savepoints: they would cost two round
        trips per change)."""
        outcomes: list[Change | Exception] = []
        with self.storage.batch() as conn:
            latest: dict[str, Room] = {}  # rooms changed earlier in this group
            for game_id, decide in items:
                tx: Tx | None = None
                try:
                    tx = self.storage.lock(conn, game_id)
                    room = latest.get(game_id)
                    if room is None or room.version != tx.version:
                        room = self._fresh(tx)
                    change = decide(tx, room)
                    change.committed = tx.saved is not None
                    latest[game_id] = change.room
                    outcomes.append(change)
                except Exception as exc:  # noqa: BLE001 - this change is refused, the others go on
                    if tx is not None and tx.wrote:
                        raise  # a half-made change: nothing of the group may be committed
                    outcomes.append(exc)
            # the AI's place in the queue, read here rather than on the event loop (and before the
            # commit: once it commits, an AI runner may already be answering)
            for outcome in outcomes:
                if isinstance(outcome, Change):
                    outcome.room.ai_place = self._job_place(outcome.room, conn)
        return outcomes

    def _end_group(self, group: list[Any], done: asyncio.Future[list[Change | Exception]]) -> None:
        """Back on the event loop: cache the committed rooms and answer every request of the group."""
        self._in_flight = False
        self.committing = set()
        try:
            outcomes = done.result()
        except Exception as exc:  # noqa: BLE001 - the commit failed: nothing of the group was stored
            for _, _, fut, _ in group:
                if not fut.done():
                    fut.set_exception(exc)
            outcomes = None
        for i, (game_id, _, fut, on_commit) in enumerate(group if outcomes is not None else []):
            outcome = outcomes[i]  # type: ignore[index]
            if isinstance(outcome, Change):
                self._keep(outcome.room)  # its AI place was read on the database thread
                if on_commit is not None:
                    try:
                        on_commit(outcome)
                    except Exception:  # noqa: BLE001 - the change is stored; its announcement failed
                        log.exception("could not announce a change of game %s", game_id)
                if not fut.done():
                    fut.set_result(outcome)
            elif not fut.done():
                try:
                    fut.set_exception(self._refusal(game_id, outcome))
                except Exception as exc:  # noqa: BLE001 - e.g. the database went away meanwhile
                    fut.set_exception(exc)
        self._start_group()  # the changes that arrived meanwhile

    def close(self) -> None:
        """Stop the database threads: queued work is dropped, the statement running finishes.

        Waited for, so that the storage's pool is disposed with every connection back in it: a
        connection still checked out (e.g. by the clocks' sweep) outlived the pool and was
        closed by the garbage collector, a ResourceWarning in some later test.
        """
        self._db_thread.shutdown(wait=True, cancel_futures=True)
        self._read_thread.shutdown(wait=True, cancel_futures=True)

    def _charge(self, rec: GameRecord, game: Game) -> None:
        """Stop the running clock: subtract the time spent by the side to move."""
        side = _clock_side(rec, game)
        if side is not None and rec.turn_started is not None:
            now = self.now()
            setattr(rec, f"{side}_time", float(getattr(rec, f"{side}_time") or 0.0) - (now - rec.turn_started))
            rec.turn_started = now

    def _flag_change(self, tx: Tx, room: Room) -> Room | None:
        """The room with the game lost on time when the running clock reached zero, else None."""
        side = self.clock_side(room)
        if side is None or self.time_left(room, side) > 0:
            return None
        rec = room.rec.copy()
        setattr(rec, f"{side}_time", 0.0)
        rec.result, rec.reason, rec.turn_started = Side(side).other.value, "time", None
        return self._commit(tx, room, rec, room.game)

    @staticmethod
    def _with_forced_passes(game: Game, move: Move) -> tuple[Game, list[str]]:
        g = game.copy()
        g.play(move)
        played = [str(move)]
        while not g.is_over() and g.legal_moves() == [PASS]:
            g.play(PASS)
            played.append("pass")
        return g, played

    def _moved_on(self, room: Room, seen: int) -> ClientError:
        return ClientError(
            "moved_on",
            f"the game moved on (now at ply {len(room.rec.moves)}, you saw ply {seen}): move not played",
            409,
            self.public_state(room),
        )

    # -- changes ---------------------------------------------------------------------------------
    def create(
        self, spec: dict[str, Any], client: str = "?", account: int | None = None
    ) -> tuple[Room, dict[str, Any]]:
        """Create a game from the JSON body of ``POST /api/games``; returns the room and the reply.

        ``account``: the logged-in creator's account, which the creator's seat(s) are bound to."""
        now = self.now()
        with self._creates_lock:  # creations may run on the database thread (off_loop) and on the loop
            for addr in [a for a, w in self.creates.items() if not w or w[-1] < now - 60]:
                del self.creates[addr]  # forget quiet addresses: the table cannot grow without bound
            window = self.creates.setdefault(client, deque())
            while window and window[0] < now - 60:
                window.popleft()
            if len(window) >= self.creates_per_minute:
                raise ClientError("rate_limited", "too many new games from this address: wait a minute", 429)
        unknown = set(spec) - {"mode", "side", "level", "clock", "rated", "name", "public"}
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
        elif isinstance(clock, int | float) and not isinstance(clock, bool) and self.min_clock <= clock <= 180:
            clock_s = float(clock) * 60.0
        else:
            raise ClientError(
                "bad_request", f"clock must be null or minutes per side between {self.min_clock:g} and 180"
            )
        public = spec.get("public", False)
        if not isinstance(public, bool) or (public and mode != "online"):
            raise ClientError("bad_request", "public must be true or false, and only online games can be public")
        name = self.check_name(spec["name"]) if spec.get("name") is not None else None
        if public and name is None:
            raise ClientError("name_required", "choose a name first: the lobby shows it to other players")
        rated = spec.get("rated", False)
        if not isinstance(rated, bool):
            raise ClientError("bad_request", "rated must be true or false")
        if rated and mode != "online":
            raise ClientError("bad_request", "only online games between two accounts can be rated")
        if rated and account is None:
            raise ClientError("login_required", "log in (or sign up) to create a rated game", 403)
        rec = GameRecord(id=_new_id(), mode=mode)
        rec.address = client[:64] if client != "?" else None  # whose quotas it counts in (fair share)
        rec.public = public
        if public:
            rec.meta["listed_at"] = now  # by the service's clock, as the seek's expiry (tests fake it)
        rec.rated = rated
        if name is not None and mode != "hotseat":  # hot-seat: two people, one name would be wrong
            rec.meta["names"] = {side: name}
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
        if account is not None:  # the creator's seats are the account's
            for s in SIDES if mode == "hotseat" else (side,):
                setattr(rec, f"{s}_account", account)
        if clock_s is not None:
            rec.clock = rec.south_time = rec.north_time = clock_s
            if mode != "online":
                rec.turn_started = now
                rec.deadline = now + clock_s
        game = Game()
        ai_first = rec.mode == "ai" and rec.ai_side == game.turn.value
        try:
            self.storage.create(
                rec,
                job_level=rec.ai_level if ai_first else None,
                max_jobs=self.max_ai_jobs,
                max_client_jobs=self.ai_per_client,
                max_client_seeks=self.seeks_per_client,
            )
        except QueueFull as exc:
            raise ClientError("busy", f"the server is busy: {exc}; try again soon", 503) from None
        except QuotaFull as exc:
            raise quota_error(exc) from None
        with self._creates_lock:
            window.append(now)
        room = self._publish(Room(rec, game))
        reply["token"] = token
        return room, reply

    def _ensure_ai_job(self, room: Room) -> None:
        """Queue the AI's move of a game loaded from the database when none is queued (a game stored
        by an older version, or whose job was lost)."""
        if room.ai_place is not None or not self.ai_to_move(room):
            return

        def decide(tx: Tx, fresh: Room) -> Change:
            if self.ai_to_move(fresh) and not tx.has_job(fresh.version):
                tx.put_job(fresh.rec, fresh.version, fresh.rec.ai_level or "random")
            return Change(fresh)

        try:
            self._write(room.rec.id, decide)
        except Exception:  # noqa: BLE001 - the next load tries again; the game itself is fine
            log.exception("could not queue the AI move of game %s", room.rec.id)

    def join(
        self, game_id: str, invite: Any, account: int | None = None, name: Any = None
    ) -> tuple[Change, dict[str, Any]]:
        """Take the invited seat of an online game, or the open seat of a public one (the lobby's
        seeks), with the joiner's ``name`` (``POST /api/games/{id}/join``); ``account``: the
        logged-in joiner's account, which the seat is then bound to (a rated game needs one)."""
        out: dict[str, Any] = {}
        checked = self.check_name(name) if name is not None else None

        def decide(tx: Tx, room: Room) -> Change:
            rec = room.rec
            if rec.mode != "online":
                raise ClientError("not_online", "only online games can be joined")
            if rec.public and invite is None:
                if checked is None:
                    raise ClientError("name_required", "choose a name first: your opponent sees it")
            elif not isinstance(invite, str) or not same_secret(invite, rec.invite):
                raise ClientError("bad_invite", "this invite code is not valid for this game", 403)
            if self.status(room) == "over":
                raise ClientError("game_over", "this game is over: nobody can join it (you can watch)", 409)
            if rec.joined:
                raise ClientError("seat_taken", "this invite was already used: the seat is taken (you can watch)", 409)
            seat = "north" if rec.south_token else "south"
            if rec.rated and account is None:
                raise ClientError("login_required", "this is a rated game: log in (or sign up) to join it", 403)
            if rec.rated and account == getattr(rec, f"{Side(seat).other.value}_account"):
                raise ClientError("same_account", "you cannot play yourself in a rated game", 409)
            new = rec.copy()
            token = _new_token()
            setattr(new, f"{seat}_token", token)
            setattr(new, f"{seat}_account", account)
            new.joined = True
            new.meta["joined_at"] = self.now()
            if checked is not None:
                new.meta["names"] = {**new.meta.get("names", {}), seat: checked}
            if new.clock is not None:
                new.turn_started = self.now()
            out.update(id=rec.id, side=seat, token=token)
            return Change(self._commit(tx, room, new, room.game))

        return self._write(game_id, decide), out

    def seats_of(self, room: Room, token: Any, account: int | None = None) -> frozenset[str]:
        """The seats ``token`` holds in ``room`` (never the AI's).  A seat bound to an account is
        that account's alone: its token opens it only together with that account's session, and the
        session alone opens it (from any browser); ``account``: the connection's logged-in account."""
        if token is not None and (not isinstance(token, str) or len(token) > 200):
            raise ClientError("bad_token", "token must be a string")
        rec = room.rec
        seats = {s for s in SIDES if token is not None and same_secret(token, getattr(rec, f"{s}_token"))}
        others = {s for s in seats if getattr(rec, f"{s}_account") not in (None, account)}
        if others:
            raise ClientError(
                "not_your_seat", "this seat belongs to another account: log in as its player to play it", 403
            )
        if account is not None:
            seats |= {s for s in SIDES if getattr(rec, f"{s}_account") == account}
        if rec.mode == "ai":
            seats.discard(rec.ai_side or "")
        return frozenset(seats)

    def may_arrive(self, room: Room, seats: frozenset[str]) -> bool:
        """Whether :meth:`arrive` would change anything (an online rematch waiting to start its clock)."""
        rec = room.rec
        if not seats or rec.mode != "online" or rec.clock is None or rec.turn_started is not None:
            return False
        return self.status(room) == "playing" and not seats <= set(rec.meta.get("arrived", []))

    def arrive(self, game_id: str, seats: frozenset[str]) -> Change | None:
        """A player opened the game (``hello`` with a seat).  An online rematch's clock starts once
        both players have opened it (nobody loses time before they have even seen the new board);
        arrivals are stored with the game, so the players may be on different server processes."""
        room = self.room(game_id)
        if not self.may_arrive(room, seats):
            return None

        def decide(tx: Tx, fresh: Room) -> Change:
            r = fresh.rec
            arrived = set(r.meta.get("arrived", [])) | seats
            if r.turn_started is not None or r.result is not None or arrived == set(r.meta.get("arrived", [])):
                return Change(fresh)
            new = r.copy()
            new.meta["arrived"] = sorted(arrived)
            if arrived >= set(SIDES):
                new.turn_started = self.now()
            return Change(self._commit(tx, fresh, new, fresh.game))

        return self._write(game_id, decide)

    def _seat_to_move(self, room: Room, seats: frozenset[str], action: str) -> str:
        if not seats:
            raise ClientError("not_a_player", f"spectators cannot {action}: open your seat link to play", 403)
        status = self.status(room)
        if status == "over":
            if room.rec.reason == "time":
                loser = SIDE_NAMES[Side(room.rec.result or "south").other.value]
                raise ClientError("game_over", f"the game is over: {loser} ran out of time")
            raise ClientError("game_over", "the game is over")
        if status == "waiting":
            raise ClientError("waiting", "the invited player has not joined yet")
        turn = room.game.turn.value
        if turn not in seats:
            raise ClientError("not_your_turn", f"it is {turn}'s turn, not yours")
        return turn

    async def move(
        self,
        game_id: str,
        seats: frozenset[str],
        text: Any,
        ply: int | None,
        on_commit: Callable[[Change], None] | None = None,
    ) -> Change:
        """Play ``text`` for the seat to move; ``ply``: the ply the client saw (else ``moved_on``).

        ``on_commit`` (the transport's acknowledgement and broadcast) runs once the move is stored."""
        if not isinstance(text, str) or len(text) > 32:
            raise ClientError("bad_message", "a move message needs 'move': notation such as '5R@d2'")
        if ply is not None and (not isinstance(ply, int) or isinstance(ply, bool)):
            raise ClientError("bad_message", "'ply' must be the number of moves played so far")

        def decide(tx: Tx, room: Room) -> Change:
            flagged = self._flag_change(tx, room)
            if flagged is not None:
                loser = SIDE_NAMES[Side(flagged.rec.result or "south").other.value]
                return Change(flagged, error=ClientError("game_over", f"the game is over: {loser} ran out of time"))
            if ply is not None and ply != len(room.rec.moves) and seats:
                raise self._moved_on(room, ply)
            self._seat_to_move(room, seats, "move")
            reason = room.game.why_illegal(text)
            if reason is not None:
                raise ClientError("illegal", reason)
            move = parse_move(text)
            game, played = self._with_forced_passes(room.game, move)
            rec = room.rec.copy()
            self._charge(rec, room.game)
            new = self._commit(tx, room, rec, game, played)
            return Change(new, ack={"type": "ack", "ply": len(room.rec.moves) + 1, "move": str(move)})

        return await self._write_grouped(game_id, decide, on_commit)

    async def grouped(self, action: str, game_id: str, seats: frozenset[str]) -> Change:
        """``undo``, ``resign`` or ``rematch`` committed in the group of changes that arrive
        meanwhile (see :meth:`_write_grouped`): their own transaction cost one disk flush each, a
        burst of them (every game of a round ending at once) held up everyone's moves for as long."""
        decides = {"undo": self._undo, "resign": self._resign, "rematch": self._rematch}
        if action not in decides:
            raise ValueError(f"grouped: {action!r} is not undo, resign or rematch")
        return await self._write_grouped(game_id, decides[action](seats))

    def undo(self, game_id: str, seats: frozenset[str]) -> Change:
        """Take back the last move of the person (and the AI's reply / forced passes after it)."""
        return self._write(game_id, self._undo(seats))

    def _undo(self, seats: frozenset[str]) -> Callable[[Tx, Room], Change]:
        # the decision of undo (run by _write, or in a group commit by grouped)

        def decide(tx: Tx, room: Room) -> Change:
            rec = room.rec
            if not seats:
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
                human = next(iter(seats))
                while game.history and not removed_human:
                    last = game.history[-1]
                    mover = game.turn.other.value  # a move flips the turn
                    game.undo()
                    removed_human = mover == human and not last.is_pass
            if not removed_human:
                raise ClientError("nothing_to_undo", "there is no move of yours to take back")
            new = rec.copy()
            self._charge(new, room.game)
            return Change(self._commit(tx, room, new, game, plies=len(game.history)))

        return decide

    def resign(self, game_id: str, seats: frozenset[str]) -> Change:
        """The seat (hot-seat: the side to move) gives up."""
        return self._write(game_id, self._resign(seats))

    def _resign(self, seats: frozenset[str]) -> Callable[[Tx, Room], Change]:
        # the decision of resign (run by _write, or in a group commit by grouped)

        def decide(tx: Tx, room: Room) -> Change:
            if not seats:
                raise ClientError("not_a_player", "spectators cannot resign", 403)
            status = self.status(room)
            if status == "over":
                raise ClientError("game_over", "the game is over")
            if status == "waiting":
                raise ClientError("waiting", "the invited player has not joined yet: there is no game to resign")
            side = room.game.turn.value if len(seats) == 2 else next(iter(seats))
            rec = room.rec.copy()
            self._charge(rec, room.game)
            rec.result, rec.reason, rec.turn_started = Side(side).other.value, "resign", None
            return Change(self._commit(tx, room, rec, room.game))

        return decide

    def rematch(self, game_id: str, seats: frozenset[str]) -> Change:
        """Create the rematch (seats swapped) once the game is over, or return the existing one."""
        return self._write(game_id, self._rematch(seats))

    def _rematch(self, seats: frozenset[str]) -> Callable[[Tx, Room], Change]:
        # the decision of rematch (run by _write, or in a group commit by grouped)

        def decide(tx: Tx, room: Room) -> Change:
            if not seats:
                raise ClientError("not_a_player", "spectators cannot start a rematch", 403)
            if self.status(room) != "over":
                raise ClientError("not_over", "a rematch can start once the game is over")
            old = room.rec
            if old.rematch_id is not None:
                return Change(room, rematch_id=old.rematch_id)
            rec = GameRecord(id=_new_id(), mode=old.mode)
            # Seats swap: each player's token now holds the other side.
            rec.south_token, rec.north_token = old.north_token, old.south_token
            rec.joined = old.joined
            rec.invite = old.invite if not old.joined else None  # an open seat stays joinable
            rec.ai_level = old.ai_level
            rec.ai_side = Side(old.ai_side).other.value if old.ai_side else None
            rec.rematch_of = old.id
            names = old.meta.get("names", {})
            if names:  # the names follow the people, who swap sides
                rec.meta["names"] = {Side(s).other.value: n for s, n in names.items()}
            rec.south_account, rec.north_account = old.north_account, old.south_account  # accounts follow people
            rec.rated = old.rated
            rec.address = old.address  # the same client's quotas
            if old.clock is not None:
                rec.clock = rec.south_time = rec.north_time = old.clock
                # online, the clock starts once both players are at the new board (see hello);
                # elsewhere the one person who asked is taken there at once
                rec.turn_started = None if old.mode == "online" else self.now()
                if rec.turn_started is not None:
                    rec.deadline = rec.turn_started + old.clock
            game = Game()
            ai_first = rec.mode == "ai" and rec.ai_side == game.turn.value
            # in this transaction: the old game is locked, so exactly one rematch is ever created
            job_level = (rec.ai_level or "random") if ai_first else None
            tx.insert_game(rec, job_level=job_level, max_client_jobs=self.ai_per_client)
            new_old = old.copy()
            new_old.rematch_id = rec.id
            changed = self._commit(tx, room, new_old, room.game)
            self._keep(Room(rec, game))
            return Change(changed, rematch_id=rec.id)

        return decide

    def flag(self, game_id: str) -> Change | None:
        """End the game on time if its running clock reached zero (timers and the sweeper call this;
        the row lock makes the flag fall exactly once whichever process gets there first)."""

        def decide(tx: Tx, room: Room) -> Change:
            flagged = self._flag_change(tx, room)
            return Change(flagged if flagged is not None else room)

        change = self._write(game_id, decide)
        return change if change.committed else None

    def ai_move(self, job: AIJob, text: str | None) -> Change | None:
        """Play the AI's move ``text`` (None or illegal: a random legal move) if the game is still at
        ``job.version``; None when the position changed meanwhile (the move is discarded)."""

        def decide(tx: Tx, room: Room) -> Change:
            if tx.version != job.version or not self.ai_to_move(room):
                return Change(room)
            flagged = self._flag_change(tx, room)
            if flagged is not None:
                return Change(flagged)
            move: Move
            if text is None or not room.game.is_legal(text):
                if text is not None:
                    log.error("AI %s chose illegal move %s; playing a random legal move", room.rec.ai_level, text)
                move = random.choice(room.game.legal_moves())
            else:
                move = parse_move(text)
            game, played = self._with_forced_passes(room.game, move)
            rec = room.rec.copy()
            self._charge(rec, room.game)
            return Change(self._commit(tx, room, rec, game, played))

        change = self._write(job.game_id, decide)
        return change if change.committed else None

    # -- reading for the HTTP API ----------------------------------------------------------------
    def replay_frames(self, room: Room) -> dict[str, Any]:
        """Every position of the game from the start, for stepping through it."""
        rec = room.rec
        game = Game.from_position(rec.start_position) if rec.start_position else Game()
        frames = []

        def frame(move: str | None) -> dict[str, Any]:
            return {
                "ply": len(game.history),
                "move": move,
                "towers": {c: [_p(p) for p in t] for c, t in game.towers().items() if t},
                "leaders": {k: (str(v) if v is not None else None) for k, v in game.leaders().items()},
                "score": list(game.score()),
                "turn": game.turn.value,
            }

        frames.append(frame(None))
        for mv in rec.moves:
            game.play(mv)
            frames.append(frame(mv))
        return {"id": rec.id, "frames": frames, "result": self.outcome(room)[0]}

    def record_tags(self, room: Room) -> dict[str, str]:
        """The tags of the game record for download."""
        rec = room.rec
        result, reason = self.outcome(room)
        given = rec.meta.get("names", {})
        names = {s: "AI " + (rec.ai_level or "") if rec.ai_side == s else given.get(s) or "Human" for s in SIDES}
        tags = {
            "Event": f"Jericho web game ({rec.mode})",
            "Site": "jericho serve",
            "Date": time.strftime("%Y.%m.%d", time.gmtime(rec.created_at)),
            "South": names["south"],
            "North": names["north"],
            "Result": _RESULT_TOKENS[result],
            "GameId": rec.id,
        }
        if reason and (result or reason in NO_RESULT):
            loser = "South" if result == "north" else "North"
            away = SIDE_NAMES[Side(rec.meta.get("claimed_by") or "south").other.value]
            tags["Termination"] = {
                "seven": "seven monoliths held through a full turn",
                "exhaustion": "both players passed",
                "resign": f"{loser} resigned",
                "time": f"{loser} lost on time",
                "agreed": "draw agreed",
                "claim": f"{away} left the game; "
                + (f"{SIDE_NAMES[result]} claimed the win" if result in SIDES else "a draw was claimed"),
                "aborted": "aborted before both sides had moved (no result)",
                "expired": "nobody took the open seat (no result)",
            }.get(reason, reason)
        takebacks = rec.meta.get("takebacks")
        if takebacks:
            tags["Takebacks"] = "; ".join(f"{SIDE_NAMES[t['by']]} at ply {t['ply']}" for t in takebacks)
        return tags


def _both_moved(rec: GameRecord) -> bool:
    """Whether each side has made a move of its own (not a forced pass): then no abort."""
    turn = Side.SOUTH if not rec.start_position else Game.from_position(rec.start_position).turn
    moved = set()
    for mv in rec.moves:
        if mv != "pass":
            moved.add(turn)
        turn = turn.other
    return len(moved) == 2


def _outcome(rec: GameRecord, game: Game) -> tuple[str | None, str | None]:
    if rec.result or rec.reason in NO_RESULT:
        return rec.result, rec.reason
    result = game.outcome()
    if result is None:
        return None, None
    h = game.history
    reason = "exhaustion" if len(h) >= 2 and h[-1].is_pass and h[-2].is_pass else "seven"
    return result, reason


def _status(rec: GameRecord, game: Game) -> str:
    result, reason = _outcome(rec, game)
    if result is not None or reason in NO_RESULT:
        return "over"
    if rec.mode == "online" and not rec.joined:
        return "waiting"
    return "playing"


def _clock_side(rec: GameRecord, game: Game) -> str | None:
    if rec.clock is None or rec.turn_started is None or _status(rec, game) != "playing":
        return None
    return game.turn.value
