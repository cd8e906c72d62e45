"""A game room and what its stored record says: the types and facts every part of the room service shares.

- :class:`Room`: a cached game (its stored record and the engine game replayed from it);
- :class:`Change`: what a committed change did;
- :class:`ClientError`: a refused request (a code for programs, a message for people);
- the facts read off a record and its game: :func:`outcome`, :func:`status`, :func:`clock_side`,
  :func:`first_move_side`, :func:`has_moved`, :func:`both_moved`; :func:`quota_error` for a client
  over a fair-share quota.

The deciding service (:mod:`jericho_game.web.round.rooms`), its commit pipeline
(:mod:`jericho_game.web.round.commits`) and its state rendering (:mod:`jericho_game.web.round.roomstate`)
all build on this module, which imports none of them.
"""

from __future__ import annotations

import hmac
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from jericho_game.game import Game
from jericho_game.pieces import Side
from jericho_game.web.common.budget import BUDGETS, BudgetPolicy, OverBudget
from jericho_game.web.common.errors import ClientError
from jericho_game.web.round import render
from jericho_game.web.storage.database import GameRecord, QuotaFull, Storage, Tx

if TYPE_CHECKING:
    from jericho_game.web.storage.broker import Broker

__all__ = [
    "ClientError",
    "Room",
    "Change",
    "MODES",
    "SIDES",
    "SIDE_NAMES",
    "NO_RESULT",
    "quota_error",
    "outcome",
    "status",
    "clock_side",
    "first_move_side",
    "has_moved",
    "both_moved",
    "GAME_ID",
    "same_secret",
    "RoomService",
]

MODES = ("ai", "hotseat", "online")
SIDES = ("south", "north")
SIDE_NAMES = {"south": "South", "north": "North"}
#: What a game id may look like (checked before any database round trip).
GAME_ID = re.compile(r"^[A-Za-z0-9_-]{1,32}$")
# reasons a game ends with no result (result None): aborted by a player, or a seek nobody took
NO_RESULT = ("aborted", "expired")


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


def same_secret(a: str | None, b: str | None) -> bool:
    """Constant-time comparison of two secrets (``None`` never matches)."""
    return a is not None and b is not None and hmac.compare_digest(a.encode(), b.encode())


#: The budget (web/common/budget.py) of each quota the storage counts in the changing transaction.
QUOTA_BUDGETS = {"ai": "ai.wait", "seeks": "seek", "reviews": "review"}


def quota_error(exc: QuotaFull, policy: BudgetPolicy | None = None) -> ClientError:
    """The coded error (429) of a client over one of its fair-share quotas (nothing was changed):
    the refusal of its budget (counted by ``policy`` when given)."""
    kind = QUOTA_BUDGETS.get(exc.what)
    if kind is not None:
        if policy is not None:
            return policy.refuse(kind, "client", exc.have, exc.limit)
        return OverBudget(BUDGETS[kind], "client", exc.have, exc.limit)
    if exc.what == "lobby":
        return ClientError(
            "lobby_full",
            f"the lobby's list of correspondence seeks is full ({exc.limit} open seeks): log in to place yours "
            "ahead of anonymous ones, or invite a player with the game's link; nothing was created",
            429,
        )
    if exc.what == "lobby-shared":  # a logged-in creator (issue 51): logging in would not help
        return ClientError(
            "lobby_full",
            f"the lobby's list of correspondence seeks is full ({exc.limit} open seeks, and no address holds "
            "more of them than yours would): invite a player with the game's link, or try again later; "
            "nothing was created",
            429,
        )
    raise ValueError(f"no quota {exc.what!r}")


def both_moved(rec: GameRecord) -> bool:
    """Whether each side has made a move of its own (not a forced pass): then no abort."""
    turn = Side.SOUTH if not rec.start_position else Game.from_position(rec.start_position).turn
    moved = set()
    for mv in rec.moves:
        if mv != "pass":
            moved.add(turn)
        turn = turn.other
    return len(moved) == 2


def outcome(rec: GameRecord, game: Game) -> tuple[str | None, str | None]:
    """``(result, reason)``: result south/north/draw or None; reason seven/exhaustion/resign/time/..."""
    if rec.result or rec.reason in NO_RESULT:
        return rec.result, rec.reason
    result = game.outcome()
    if result is None:
        return None, None
    h = game.history
    reason = "exhaustion" if len(h) >= 2 and h[-1].is_pass and h[-2].is_pass else "seven"
    return result, reason


def status(rec: GameRecord, game: Game) -> str:
    """``waiting`` (online, invite not used), ``playing`` or ``over``."""
    result, reason = outcome(rec, game)
    if result is not None or reason in NO_RESULT:
        return "over"
    if rec.mode == "online" and not rec.joined:
        return "waiting"
    return "playing"


def has_moved(rec: GameRecord, game: Game, side: Side) -> bool:
    """Whether ``side`` has made a move of its own (not a forced pass) in ``rec``, whose game
    after its moves is ``game`` (each ply, a pass too, flips the turn: no replay needed)."""
    turn = game.turn if len(rec.moves) % 2 == 0 else game.turn.other
    for mv in rec.moves:
        if turn == side and mv != "pass":
            return True
        turn = turn.other
    return False


def clock_side(rec: GameRecord, game: Game) -> str | None:
    """The side whose clock is running, if any: the side to move, once it has made a move of its
    own (issue 52: a side's clock starts at its own first move, as lichess's do; the time before
    it is not counted, and an online game whose first move does not come is aborted instead:
    :func:`first_move_side`)."""
    if rec.clock is None or rec.turn_started is None or status(rec, game) != "playing":
        return None
    if not has_moved(rec, game, game.turn):
        return None
    return game.turn.value


def first_move_side(rec: GameRecord, game: Game) -> str | None:
    """The side to move of a started online game with a clock that has not made a move of its own
    yet (issue 52): its clock waits, and the game is aborted (no result) if that move does not come
    within the first-move time (:func:`jericho_game.web.round.timecontrol.first_move_time`) from
    ``turn_started``.  Not against the AI nor in hot-seat games: there the clock waits alone."""
    if rec.mode != "online" or rec.clock is None or rec.turn_started is None or status(rec, game) != "playing":
        return None
    if has_moved(rec, game, game.turn):
        return None
    return game.turn.value


class RoomService(Protocol):
    """What the parts of the room service (the commit pipeline, the state view, "my games",
    correspondence) use of the deciding service, :class:`jericho_game.web.round.rooms.GameService`.

    The service composes those parts and they call it back; naming what they need here, below
    both, keeps the parts from importing the service (no import circle)."""

    storage: Storage
    broker: Broker
    cache: Any  # its RoomCache (jericho_game.web.round.roomcache, which builds on this module)
    ai_per_client: int | None
    max_ai_jobs: int
    claim_after: float
    presence_ttl: float
    on_finish: list[Callable[[Tx, GameRecord], None]]
    now: Callable[[], float]
    account_name: Callable[[int], str | None]

    def check_id(self, game_id: str) -> None: ...
    def unknown_game(self, game_id: str) -> ClientError: ...
    def room(self, game_id: str) -> Room: ...
    def job_place(self, room: Room, conn: Any = None) -> int | None: ...
    def status(self, room: Room) -> str: ...
    def outcome(self, room: Room) -> tuple[str | None, str | None]: ...
    def ai_to_move(self, room: Room) -> bool: ...
    def clock_side(self, room: Room) -> str | None: ...
    def time_left(self, room: Room, side: str) -> float: ...
    def first_move_due(self, rec: GameRecord, game: Game) -> float | None: ...
    def first_move(self, room: Room) -> dict[str, Any] | None: ...
    def public_state(self, room: Room) -> dict[str, Any]: ...
    def record_tags(self, room: Room) -> dict[str, str]: ...
