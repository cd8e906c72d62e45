"""The game-room service: the only place that decides (seats, moves, clock, AI requests, rematch).

Each change is a *decision*: a function of the room as stored (locked, at the stored version)
that either refuses with a :class:`ClientError` before writing anything, or returns the room
after the change.  Everything around the decisions lives in modules of their own
(docs/web.md, "Design"):

- :mod:`jericho_game.web.round.commits` (the commit pipeline): locks the game's row, hands the fresh
  room to the decision, writes moves, clock, result, AI job and the version bumped by
  compare-and-set, commits (alone, or in a group with the changes that arrived meanwhile), then
  caches the room and announces the change;
- :mod:`jericho_game.web.round.roomcache`: the rooms already replayed (never trusted for a decision);
- :mod:`jericho_game.web.round.roomstate`: the public state, the replay and the record's tags;
- :mod:`jericho_game.web.round.gameroom`: :class:`Room`, :class:`Change`, :class:`ClientError` and the
  facts read off a record (outcome, status, running clock).

A request whose client saw an older position than the stored one is refused with ``moved_on``
and the fresh state, so of two racers for one ply exactly one wins.  Nothing here knows about
HTTP or WebSockets: the transport (:mod:`jericho_game.web.server`) turns messages into calls
and :class:`ClientError` into error messages.
"""

from __future__ import annotations

import logging
import random
import secrets
import threading
import time
from collections.abc import Callable
from typing import Any

from jericho_game.ai.base import make_player, needs_a_file, registered_names
from jericho_game.ai.levels import ladder
from jericho_game.game import Game
from jericho_game.moves import PASS, Move, parse_move
from jericho_game.pieces import Side
from jericho_game.web.common.budget import BudgetPolicy, Counts, Who, from_limits
from jericho_game.web.common.fairshare import CHEAP, DEFERRED, AIBudget, lane_of, level_cost
from jericho_game.web.common.limits import Limits
from jericho_game.web.common.names import NameError_, check_name
from jericho_game.web.round import timecontrol
from jericho_game.web.round.commits import CommitPipeline
from jericho_game.web.round.gameroom import (
    GAME_ID,
    MODES,
    NO_RESULT,
    SIDE_NAMES,
    SIDES,
    Change,
    ClientError,
    Room,
    quota_error,
    same_secret,
)
from jericho_game.web.round.gameroom import clock_side as _clock_side
from jericho_game.web.round.gameroom import first_move_side as _first_move_side
from jericho_game.web.round.gameroom import outcome as _outcome
from jericho_game.web.round.gameroom import status as _status
from jericho_game.web.round.roomcache import RoomCache
from jericho_game.web.round.roomstate import StateView, confrontations, legal_by_piece
from jericho_game.web.storage.broker import Broker, LocalBroker
from jericho_game.web.storage.database import AIJob, GameRecord, QueueFull, QuotaFull, Storage, Tx, human_account

# Room, Change, ClientError, the constants and quota_error live in web/round/gameroom.py (and
# legal_by_piece, confrontations in web/round/roomstate.py); imported from here as before
__all__ = [
    "ClientError",
    "GameService",
    "Room",
    "Change",
    "SIDES",
    "SIDE_NAMES",
    "MODES",
    "NO_RESULT",
    "quota_error",
    "legal_by_piece",
    "confrontations",
]

log = logging.getLogger("jericho_game.web")

#: The ladder of ai/levels.py (its one list, weakest first), then the research players.
PREFERRED_LEVELS = (*ladder(), "random", "greedy", "mcts", "alphabeta")


def _new_id() -> str:
    return secrets.token_urlsafe(6).replace("-", "x").replace("_", "y")


def _new_token() -> str:
    return secrets.token_urlsafe(18)


def _fmt_span(seconds: float) -> str:
    """``0:30`` for 30 seconds, ``3 days`` for a correspondence game's first move."""
    if seconds >= timecontrol.DAY:
        days = round(seconds / timecontrol.DAY)
        return f"{days} day" + ("s" if days != 1 else "")
    s = int(seconds)
    return f"{s // 60}:{s % 60:02d}"


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
        ai_budget: AIBudget | None = None,
        budget: BudgetPolicy | None = None,
        ai_first_move: float = 60.0,
        first_move_limit: float = timecontrol.FIRST_MOVE,
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
        # fair share (issue 22, web/common/fairshare.py): per client (address, and account) quotas; None: none
        self.ai_per_client = ai_per_client  # AI games waiting for the AI's reply at once
        self.seeks_per_client = seeks_per_client  # open seeks in the lobby at once
        # issue 33: admission control of new AI games by their lane's budget (None: none)
        self.ai_budget = ai_budget
        # issue 51: the one budget policy (web/common/budget.py); an AI game counts against its
        # client's budget from creation to its end, unless its player has not moved for
        # ``ai_first_move`` seconds since it became their turn (it is then aborted by the sweep)
        if budget is None:
            budget = BudgetPolicy(storage, from_limits(Limits(creates_per_minute=creates_per_minute)), clock=clock)
        self.budget = budget
        self.ai_first_move = ai_first_move
        # issue 52: seconds a side of a real-time online game has for its first move before the game
        # is aborted (a correspondence game: its days per move; web/round/timecontrol.py)
        self.first_move_limit = first_move_limit
        self.budget.live("ai.game", self._count_ai_games)
        # what the lobby shows per seek beyond the game itself: the accounts work fills in
        # "rated" and "rating" (None: an anonymous, unrated game)
        self.lobby_extras: Callable[[GameRecord], dict[str, Any]] = lambda rec: {"rated": False, "rating": None}
        self._levels: list[str] | None = None
        self._levels_lock = threading.Lock()
        self.busy_rooms: Callable[[str], bool] = lambda gid: False  # the transport: rooms with clients
        # the parts that do not decide: the cache of replayed rooms (web/round/roomcache.py), the commit
        # pipeline (web/round/commits.py) and the rendering of the state (web/round/roomstate.py)
        self.cache = RoomCache(max_rooms, busy=lambda gid: self.busy_rooms(gid))
        self.rooms = self.cache.rooms  # the cached rooms by id (tests clear it to force a reload)
        self.commits = CommitPipeline(self, self.cache)
        self.view = StateView(self)
        # accounts and ratings (web/accounts/accounts.py, web/accounts/ratings.py): hooks called inside the transaction
        # of the change that ends a game (e.g. queue its rating update), and the names of accounts
        self.on_finish: list[Callable[[Tx, GameRecord], None]] = []
        # issue 23: hooks called inside the transaction of a player's move, with the room after it
        # (a correspondence turn's mail, web/round/correspondence.py), and the correspondence quota
        self.on_move: list[Callable[[Tx, Room], None]] = []
        self.correspondence_per_client = 50  # unfinished correspondence games per player (Limits)
        self.correspondence_seeks = 40  # open correspondence seeks in the lobby at once (Limits)
        self.account_name: Callable[[int], str | None] = lambda account_id: None
        # issue 51: for each given account, those it blocked or that blocked it (web/people/people.py
        # sets it; read in the join's transaction when given one): a public seek is neither joined nor
        # offered across a block, either way round
        self.avoids: Callable[[list[int], Any], dict[int, set[int]]] = lambda accounts, conn: {}

    # -- levels ----------------------------------------------------------------------------
    def levels(self) -> list[str]:
        """The AI levels and players that can be built here, the preferred levels first."""
        with self._levels_lock:  # the first callers wait for one look, not one look each
            if self._levels is None:
                names = [n for n in PREFERRED_LEVELS if n in registered_names()]
                names += [
                    n
                    for n in registered_names()
                    if n not in names and n not in ("external", "openspiel-mcts") and not needs_a_file(n)
                ]
                ok = []
                for name in names:
                    try:
                        make_player(name)
                    except Exception:  # noqa: BLE001 - a level whose module is missing is just not offered
                        continue
                    ok.append(name)
                self._levels = ok
            return self._levels

    def levels_known(self) -> bool:
        """Whether :meth:`levels` is answered from memory (the first look builds every player:
        a plug-in's import may take seconds, so callers on the event loop run it in a thread)."""
        return self._levels is not None

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

    # -- the rooms (the cache is web/round/roomcache.py) --------------------------------------------
    def check_id(self, game_id: str) -> None:
        """Refuse an id no game can have (``unknown_game``) before any database round trip."""
        if not GAME_ID.match(game_id or ""):
            raise ClientError("unknown_game", f"unknown game {game_id[:40]!r}", 404)

    def unknown_game(self, game_id: str) -> ClientError:
        """The error of a game id that no game has."""
        return ClientError("unknown_game", f"unknown game {game_id!r}: no game has this id", 404)

    def room(self, game_id: str) -> Room:
        """The room of ``game_id`` as stored now (the cache is used only when its version is current)."""
        self.check_id(game_id)
        version = self.storage.version(game_id)
        if version is None:
            self.cache.forget(game_id)
            raise self.unknown_game(game_id)
        room = self.cache.get(game_id)
        if room is not None and room.version == version:
            self.cache.touch(game_id)
            if self.ai_to_move(room):  # the AI's place in the queue changes without a new version
                room.ai_place = self.job_place(room)
            return room
        rec = self.storage.load(game_id)
        if rec is None:
            raise self.unknown_game(game_id)
        room = self._install(rec)
        self._ensure_ai_job(room)
        return room

    def cached(self, game_id: str) -> Room | None:
        """The cached room, if any (for the transport's bookkeeping; never for a decision)."""
        return self.cache.get(game_id)

    def _install(self, rec: GameRecord) -> Room:
        """Cache the room of ``rec`` (replayed, or extended from the cached one) with its AI place."""
        room = self.cache.build(rec)
        room.ai_place = self.job_place(room)
        self.cache.keep(room)
        return room

    def refresh(self, game_id: str, version: int) -> Room | None:
        """Bring a cached room up to ``version`` after another process announced it (None: not cached,
        or already current).  ``version`` -1: only the AI's place in the queue changed."""
        room = self.cache.get(game_id)
        if room is None:
            return None
        if version < 0:
            place = self.job_place(room)
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

    def job_place(self, room: Room, conn: Any = None) -> int | None:
        """The AI job's place in the queue (0: thinking) when the game waits for the AI, else None."""
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

    def first_move_due(self, rec: GameRecord, game: Game) -> float | None:
        """When the game is aborted unless the side to move makes its first move (wall time), or
        None (issue 52: see :func:`~jericho_game.web.round.gameroom.first_move_side`)."""
        if _first_move_side(rec, game) is None or rec.turn_started is None:
            return None
        return rec.turn_started + timecontrol.first_move_time(rec, self.first_move_limit)

    def first_move(self, room: Room) -> dict[str, Any] | None:
        """The state's ``first_move``: the side whose first move is awaited, the seconds ``left``
        before the game is aborted, and the ``limit`` it had; None when no first move is awaited."""
        due = self.first_move_due(room.rec, room.game)
        if due is None:
            return None
        return {
            "side": room.game.turn.value,
            "left": max(0.0, due - self.now()),
            "limit": timecontrol.first_move_time(room.rec, self.first_move_limit),
        }

    def state_json(self, room: Room) -> str:
        """The public state as JSON text (never a token): see :class:`~jericho_game.web.round.roomstate.StateView`."""
        return self.view.state_json(room)

    def public_state(self, room: Room) -> dict[str, Any]:
        """Everything anyone may see about a game (never a token), as a dict."""
        return self.view.public_state(room)

    # -- the write path (web/round/commits.py) -------------------------------------------------------
    @property
    def committing(self) -> set[str]:
        """The games of the group being committed now (the transport holds their broadcasts back)."""
        return self.commits.committing

    def announce(self, room: Room) -> None:
        """Tell every listener (this process now, the others through the broker) that the game changed."""
        self.commits.announce(room)

    async def off_loop(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run a synchronous change on the database thread (see :meth:`CommitPipeline.off_loop`)."""
        return await self.commits.off_loop(fn, *args)

    async def off_loop_read(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run a read on the read thread (see :meth:`CommitPipeline.off_loop_read`)."""
        return await self.commits.off_loop_read(fn, *args)

    def close(self) -> None:
        """Stop the database threads, waiting for them (see :meth:`CommitPipeline.close`)."""
        self.commits.close()

    def _charge(self, rec: GameRecord, game: Game, moved: bool = False) -> bool:
        """Stop the running clock: subtract the time spent by the side to move; whether it ran.

        ``moved``: the change plays or takes back moves, so the next turn starts now even when no
        clock ran (a side's first move: issue 52, its clock had not started)."""
        side = _clock_side(rec, game)
        now = self.now()
        if side is not None and rec.turn_started is not None:
            setattr(rec, f"{side}_time", float(getattr(rec, f"{side}_time") or 0.0) - (now - rec.turn_started))
            rec.turn_started = now
            return True
        if moved and rec.turn_started is not None:
            rec.turn_started = now
        return False

    def _flag_change(self, tx: Tx, room: Room) -> Room | None:
        """The room with the game lost on time when the running clock reached zero, or aborted
        when an online game's first move did not come in time (issue 52), else None."""
        side = self.clock_side(room)
        if side is None:
            due = self.first_move_due(room.rec, room.game)
            if due is None or self.now() < due:
                return None
            rec = room.rec.copy()
            rec.meta = {k: v for k, v in rec.meta.items() if k != "offer"}
            rec.meta["no_start"] = room.game.turn.value  # whose first move did not come
            rec.result, rec.reason, rec.turn_started = None, "aborted", None
            return self.commits.commit(tx, room, rec, room.game)
        if self.time_left(room, side) > 0:
            return None
        rec = room.rec.copy()
        setattr(rec, f"{side}_time", 0.0)
        rec.result, rec.reason, rec.turn_started = Side(side).other.value, "time", None
        return self.commits.commit(tx, room, rec, room.game)

    def _ended_on_time(self, room: Room) -> ClientError:
        """The refusal of a request that found the game just ended by :meth:`_flag_change`."""
        rec = room.rec
        if rec.reason == "aborted":
            side = SIDE_NAMES.get(str(rec.meta.get("no_start")), "a player")
            limit = timecontrol.first_move_time(rec, self.first_move_limit)
            return ClientError(
                "game_over",
                f"the game was aborted: {side}'s first move did not come within {_fmt_span(limit)} (no result)",
            )
        loser = SIDE_NAMES[Side(rec.result or "south").other.value]
        return ClientError("game_over", f"the game is over: {loser} ran out of time")

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
        fields = {"mode", "side", "level", "clock", "increment", "per_move_days", "rated", "name", "public"}
        unknown = set(spec) - fields
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
        try:  # minutes each, a Fischer increment, or days per move (web/round/timecontrol.py)
            control = timecontrol.parse(spec, mode, self.min_clock)
        except ValueError as exc:
            raise ClientError("bad_request", str(exc)) from None
        clock_s = control.clock
        public = spec.get("public", False)
        if not isinstance(public, bool) or (public and mode != "online"):
            raise ClientError("bad_request", "public must be true or false, and only online games can be public")
        name = self.check_name(spec["name"]) if spec.get("name") is not None else None
        if account is not None:  # an account holder plays under the account's name (issue 24)
            name = self.account_name(account) or name
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
        if control.per_move_days is not None:
            self._correspondence_quota(account, rec.address)
        control.apply(rec)
        game = Game()
        if clock_s is not None and mode != "online":
            # the turn begins now; the clock waits for the side's first move (issue 52)
            rec.turn_started = now
            rec.deadline = self.commits.deadline(rec, game)
        ai_first = rec.mode == "ai" and rec.ai_side == game.turn.value
        try:
            self.storage.create(
                rec,
                job_level=rec.ai_level if ai_first else None,
                max_jobs=self.max_ai_jobs,
                max_client_jobs=self.ai_per_client,
                max_client_seeks=self.seeks_per_client,
                max_corr_seeks=self.correspondence_seeks,
                job_lane=lane_of(rec.ai_level),
                admit=self._admission(rec, account),
            )
        except QueueFull as exc:
            raise ClientError("busy", f"the server is busy: {exc}; try again soon", 503) from None
        except QuotaFull as exc:
            raise quota_error(exc, self.budget) from None
        room = self.commits.publish(Room(rec, game))
        reply["token"] = token
        return room, reply

    def _count_ai_games(self, conn: Any, budget: Any, who: Who, recipient: str | None, now: float) -> Counts:
        """The ``ai.game`` budget's count: the client's AI games being played (storage.ai_games_of)."""
        group, account = self.storage.ai_games_of(
            conn, who.group, who.account, self._ai_since(now), now - self.ai_first_move
        )
        return Counts(group=group, account=account if who.account is not None else None)

    def _ai_since(self, now: float) -> float:
        return now - (self.ai_budget.active if self.ai_budget is not None else 300.0)

    def _admission(self, rec: GameRecord, account: int | None) -> Callable[[Any], None]:
        """What a new game asks in its creating transaction: the client's ``game.create`` budget
        (new games a minute), then an AI game's admission (:meth:`ai_admission`)."""
        ai = self.ai_admission(rec)
        who = Who(rec.address or "?", account)

        def admit(conn: Any) -> None:
            self.budget.ask(conn, "game.create", who)
            if ai is not None:
                ai(conn)

        return admit

    def ai_admission(self, rec: GameRecord) -> Callable[[Any], None] | None:
        """The admission control of a new AI game, run by the storage in the creating transaction
        (issue 33, issue 51; web/common/fairshare.py :class:`AIBudget`, web/common/budget.py):

        1. the client's own budget (``ai.game``): its AI games being played, whoever is to move
           (``ai_games``, 429);
        2. its share of the level's lane (``ai.share``): one client holds at most half of a lane's
           room, and always one game (``ai_full``, 503);
        3. the lane's room for its cost, and its queue's wait (``ai_full``, 503).

        Nothing is created when one refuses."""
        if rec.mode != "ai":
            return None
        budget = self.ai_budget
        level = rec.ai_level
        lane, cost = lane_of(level), level_cost(level)
        who = Who(rec.address or "?", human_account(rec))

        def admit(conn: Any) -> None:
            now = time.time()
            self.storage.admission_lock(conn)  # admissions on every process one after another
            self.budget.ask(conn, "ai.game", who)
            if budget is None:
                return
            slots, cheap = self.storage.ai_capacity(conn, now)
            capacity = (cheap or slots) if lane == CHEAP else slots
            if capacity <= 0:  # no AI runner alive: nothing thinks, so nobody's reply can be delayed
                return
            since, fresh = self._ai_since(now), now - self.ai_first_move
            load = self.storage.ai_load(conn, rec.id, since, fresh)
            used = sum(level_cost(lv) * n for lv, n in load.items() if lane_of(lv) == lane)
            room = budget.per_slot(lane) * capacity
            mine = self.storage.ai_load(conn, rec.id, since, fresh, address=who.group, account=who.account)
            held = sum(level_cost(lv) * n for lv, n in mine.items() if lane_of(lv) == lane)
            if held > 0:  # a client's first game in a lane is judged by the lane's room alone
                self.budget.judge("ai.share", Counts(group=held / room, account=held / room), cost / room)
            waited = self.storage.lane_wait(conn, lane, now)
            if used + cost > room or waited > budget.max_wait(lane):
                why = (
                    f"its {capacity} AI slot(s) already think {used:.3g} s per round of moves (the most is {room:g})"
                    if used + cost > room
                    else f"its AI moves already wait {waited:.1f} s (the most is {budget.max_wait(lane):g})"
                )
                raise ClientError(
                    "ai_full",
                    f"the AI is fully booked for level {str(level)[:40]!r}: {why}; choose an easier level or try again "
                    "in a few minutes; nothing was created",
                    503,
                )

        return admit

    def job_lane(self, tx: Tx, room: Room) -> int:
        """The lane of the AI move a change of ``room`` queues (issue 33): its level's lane; for an
        expensive level whose game was idle longer than the budget's ``active`` (it weighed in no
        admission meanwhile), the deferred lane when its lane has no room for it now: the running
        game is answered, after the admitted ones."""
        lane = lane_of(room.rec.ai_level)
        if lane == CHEAP or self.ai_budget is None:
            return lane
        if room.rec.updated_at >= time.time() - self.ai_budget.active:
            return lane
        if not self.lane_has_room(tx.conn, room.rec):
            return DEFERRED
        return lane

    def lane_has_room(self, conn: Any, rec: GameRecord) -> bool:
        """Whether the lane of ``rec``'s level has room for one more game of its cost now (a game
        coming back after an idle spell: it weighed in no admission meanwhile)."""
        budget = self.ai_budget
        if budget is None:
            return True
        now = time.time()
        lane, cost = lane_of(rec.ai_level), level_cost(rec.ai_level)
        slots, cheap = self.storage.ai_capacity(conn, now)
        capacity = (cheap or slots) if lane == CHEAP else slots
        if capacity <= 0:
            return True
        load = self.storage.ai_load(conn, rec.id, self._ai_since(now), now - self.ai_first_move)
        used = sum(level_cost(lv) * n for lv, n in load.items() if lane_of(lv) == lane)
        return used + cost <= budget.per_slot(lane) * capacity and self.storage.lane_wait(
            conn, lane, now
        ) <= budget.max_wait(lane)

    def _correspondence_quota(self, account: int | None, address: str | None) -> None:
        """Refuse a new correspondence game past the player's quota (web/round/correspondence.py)."""
        from jericho_game.web.round.correspondence import active_games  # it imports this module

        with self.storage.reader.connect() as conn:
            n = active_games(conn, account, address)
        if n >= self.correspondence_per_client:
            raise ClientError(
                "correspondence_quota",
                f"you already have {n} correspondence games going (the most is {self.correspondence_per_client}): "
                "finish one first; nothing was created",
                429,
            )

    def _ensure_ai_job(self, room: Room) -> None:
        """Queue the AI's move of a game loaded from the database when none is queued (a game stored
        by an older version, or whose job was lost)."""
        if room.ai_place is not None or not self.ai_to_move(room):
            return

        def decide(tx: Tx, fresh: Room) -> Change:
            if self.ai_to_move(fresh) and not tx.has_job(fresh.version):
                tx.put_job(fresh.rec, fresh.version, fresh.rec.ai_level or "random", lane_of(fresh.rec.ai_level))
            return Change(fresh)

        try:
            self.commits.write(room.rec.id, decide)
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
        if account is not None:  # an account holder plays under the account's name (issue 24)
            checked = self.account_name(account) or checked

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
            creator = getattr(rec, f"{Side(seat).other.value}_account")
            if rec.public and account is not None and creator in self.avoids([account], tx.conn).get(account, ()):
                raise ClientError("blocked", "one of you blocked the other: you cannot play this seek", 403)
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
            return Change(self.commits.commit(tx, room, new, room.game))

        return self.commits.write(game_id, decide), out

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
        """A player opened the game (``hello`` with a seat).  An online rematch stored before issue 52
        (its turn not begun) begins once both players have opened it; arrivals are stored with the
        game, so the players may be on different server processes.  A rematch made since begins at
        once: no clock runs before its side's first move, and the first move's time aborts it."""
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
            return Change(self.commits.commit(tx, fresh, new, fresh.game))

        return self.commits.write(game_id, decide)

    def _seat_to_move(self, room: Room, seats: frozenset[str], action: str) -> str:
        if not seats:
            raise ClientError("not_a_player", f"spectators cannot {action}: open your seat link to play", 403)
        status = self.status(room)
        if status == "over":
            if room.rec.reason == "time" or room.rec.meta.get("no_start"):
                raise self._ended_on_time(room)
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
                return Change(flagged, error=self._ended_on_time(flagged))
            if ply is not None and ply != len(room.rec.moves) and seats:
                raise self._moved_on(room, ply)
            self._seat_to_move(room, seats, "move")
            reason = room.game.why_illegal(text)
            if reason is not None:
                raise ClientError("illegal", reason)
            move = parse_move(text)
            game, played = self._with_forced_passes(room.game, move)
            rec = room.rec.copy()
            if self._charge(rec, room.game, moved=True):  # a first move earns nothing: no clock ran
                timecontrol.credit(rec, room.game.turn.value)  # the increment, or a correspondence move's days
            new = self.commits.commit(tx, room, rec, game, played)
            for hook in self.on_move:
                hook(tx, new)
            return Change(new, ack={"type": "ack", "ply": len(room.rec.moves) + 1, "move": str(move)})

        return await self.commits.write_grouped(game_id, decide, on_commit)

    async def grouped(self, action: str, game_id: str, seats: frozenset[str]) -> Change:
        """``undo``, ``resign`` or ``rematch`` committed in the group of changes that arrive
        meanwhile (see :meth:`CommitPipeline.write_grouped`): their own transaction cost one disk flush each, a
        burst of them (every game of a round ending at once) held up everyone's moves for as long."""
        decides = {"undo": self._undo, "resign": self._resign, "rematch": self._rematch}
        if action not in decides:
            raise ValueError(f"grouped: {action!r} is not undo, resign or rematch")
        return await self.commits.write_grouped(game_id, decides[action](seats))

    def undo(self, game_id: str, seats: frozenset[str]) -> Change:
        """Take back the last move of the person (and the AI's reply / forced passes after it)."""
        return self.commits.write(game_id, self._undo(seats))

    def _undo(self, seats: frozenset[str]) -> Callable[[Tx, Room], Change]:
        # the decision of undo (run by commits.write, or in a group commit by grouped)

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
            self._charge(new, room.game, moved=True)
            return Change(self.commits.commit(tx, room, new, game, plies=len(game.history)))

        return decide

    def resign(self, game_id: str, seats: frozenset[str]) -> Change:
        """The seat (hot-seat: the side to move) gives up."""
        return self.commits.write(game_id, self._resign(seats))

    def _resign(self, seats: frozenset[str]) -> Callable[[Tx, Room], Change]:
        # the decision of resign (run by commits.write, or in a group commit by grouped)

        def decide(tx: Tx, room: Room) -> Change:
            if not seats:
                raise ClientError("not_a_player", "spectators cannot resign", 403)
            status = self.status(room)
            if status == "over":
                raise ClientError("game_over", "the game is over")
            if status == "waiting":
                raise ClientError("waiting", "the invited player has not joined yet: there is no game to resign")
            flagged = self._flag_change(tx, room)  # the clock or the first move's time ran out first
            if flagged is not None:
                return Change(flagged, error=self._ended_on_time(flagged))
            side = room.game.turn.value if len(seats) == 2 else next(iter(seats))
            rec = room.rec.copy()
            self._charge(rec, room.game)
            rec.result, rec.reason, rec.turn_started = Side(side).other.value, "resign", None
            return Change(self.commits.commit(tx, room, rec, room.game))

        return decide

    def rematch(self, game_id: str, seats: frozenset[str]) -> Change:
        """Create the rematch (seats swapped) once the game is over, or return the existing one."""
        return self.commits.write(game_id, self._rematch(seats))

    def _rematch(self, seats: frozenset[str]) -> Callable[[Tx, Room], Change]:
        # the decision of rematch (run by commits.write, or in a group commit by grouped)

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
            rec.increment, rec.per_move_days = old.increment, old.per_move_days  # the same time control
            game = Game()
            if old.clock is not None:
                rec.clock = rec.south_time = rec.north_time = old.clock
                # the turn begins now: no clock runs before its side's first move (issue 52), and
                # an online rematch whose first move does not come is aborted as any online game
                rec.turn_started = self.now()
                rec.deadline = self.commits.deadline(rec, game)
            ai_first = rec.mode == "ai" and rec.ai_side == game.turn.value
            # in this transaction: the old game is locked, so exactly one rematch is ever created
            job_level = (rec.ai_level or "random") if ai_first else None
            admit = self.ai_admission(rec)
            if admit is not None:  # a rematch is a new game: admitted like one (issue 33)
                admit(tx.conn)
            tx.insert_game(rec, job_level=job_level, max_client_jobs=self.ai_per_client, job_lane=lane_of(job_level))
            new_old = old.copy()
            new_old.rematch_id = rec.id
            changed = self.commits.commit(tx, room, new_old, room.game)
            self.cache.keep(Room(rec, game))
            return Change(changed, rematch_id=rec.id)

        return decide

    def flag(self, game_id: str) -> Change | None:
        """End the game on time if its running clock reached zero (timers and the sweeper call this;
        the row lock makes the flag fall exactly once whichever process gets there first)."""

        def decide(tx: Tx, room: Room) -> Change:
            flagged = self._flag_change(tx, room)
            return Change(flagged if flagged is not None else room)

        change = self.commits.write(game_id, decide)
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
            if self._charge(rec, room.game, moved=True):  # the AI's first move is not timed either
                timecontrol.credit(rec, room.game.turn.value)
            return Change(self.commits.commit(tx, room, rec, game, played))

        change = self.commits.write(job.game_id, decide)
        return change if change.committed else None

    # -- reading for the HTTP API (web/round/roomstate.py) --------------------------------------------
    def replay_frames(self, room: Room) -> dict[str, Any]:
        """Every position of the game from the start, for stepping through it."""
        return self.view.replay_frames(room)

    def record_tags(self, room: Room) -> dict[str, str]:
        """The tags of the game record for download."""
        return self.view.record_tags(room)
