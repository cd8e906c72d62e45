"""Time controls of a new game (issue 23): minutes each, a Fischer increment, or days per move.

``POST /api/games`` takes ``"clock"`` (minutes per side), ``"increment"`` (seconds added to a
side's clock after each of its moves, with a clock only) and, for online games, ``"per_move_days"``
(a correspondence game, web/round/correspondence.py: the clock is that many days, set back to full after
each of the side's moves).  The room service (web/round/rooms.py) keeps the clock as before: the side to
move's time runs from ``turn_started``, ``deadline`` is when it reaches zero, the flag falls under
the game's row lock; :func:`credit` is the one rule this adds, applied to the mover after a move.

Issue 52 (lichess's rule): a side's clock starts at its own first move, so neither side loses
time before it has made one (nor gets an increment for it).  In an online game the side to move
that has not moved yet has :func:`first_move_time` from ``turn_started`` to make that move, else
the game is aborted (no result); ``deadline`` is then that moment, and the same sweep ends it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from jericho_game.web.storage.database import GameRecord

__all__ = [
    "DAY",
    "DAYS",
    "FIRST_MOVE",
    "MAX_INCREMENT",
    "MIN_INCREMENT",
    "TimeControl",
    "check_days",
    "credit",
    "first_move_time",
    "parse",
]

MIN_INCREMENT = 1  # seconds per move: whole seconds, as lichess offers (0 or none: no increment)
MAX_INCREMENT = 60  # seconds per move (the page offers 2, 3, 5 and 10)
DAYS = (1, 2, 3, 5, 7, 14)  # the days per move offered (lichess offers 1, 2, 3, 5, 7, 10, 14)
DAY = 86400.0
#: Seconds a side of a real-time online game has for its first move before the game is aborted
#: (lichess gives 15 to 35 s by speed; one figure here, each side its own from its turn's start).
FIRST_MOVE = 30.0


def check_days(value: Any) -> int:
    """``per_move_days``, or :class:`ValueError` naming the days offered."""
    if isinstance(value, bool) or not isinstance(value, int) or value not in DAYS:
        offered = ", ".join(map(str, DAYS))
        raise ValueError(f"per_move_days must be one of {offered}, not {str(value)[:20]!r}")
    return value


@dataclass(frozen=True)
class TimeControl:
    """A game's time control: ``clock`` seconds per side (None: none), ``increment`` seconds per
    move (None: none), ``per_move_days`` (None: not a correspondence game)."""

    clock: float | None = None
    increment: float | None = None
    per_move_days: int | None = None

    def apply(self, rec: GameRecord) -> None:
        """Set ``rec``'s clock fields (the clock itself starts as the game's mode says)."""
        rec.increment = self.increment
        rec.per_move_days = self.per_move_days
        if self.clock is not None:
            rec.clock = rec.south_time = rec.north_time = self.clock


def parse(spec: dict[str, Any], mode: str, min_clock: float) -> TimeControl:
    """The time control of a ``POST /api/games`` body; :class:`ValueError` naming what is wrong (the
    room service answers it as ``bad_request``)."""
    clock, increment, days = spec.get("clock"), spec.get("increment"), spec.get("per_move_days")
    if days is not None:
        if mode != "online":
            raise ValueError("per_move_days is for online games only")
        if clock not in (None, 0, False) or increment not in (None, 0, False):
            raise ValueError("per_move_days replaces clock and increment: send one or the other")
        n = check_days(days)
        return TimeControl(clock=n * DAY, per_move_days=n)
    if clock in (None, 0, False):
        clock_s = None
    elif isinstance(clock, int | float) and not isinstance(clock, bool) and min_clock <= clock <= 180:
        clock_s = float(clock) * 60.0
    else:
        raise ValueError(f"clock must be null or minutes per side between {min_clock:g} and 180")
    if increment in (None, 0, False):
        return TimeControl(clock=clock_s)
    if (
        isinstance(increment, bool)
        or not isinstance(increment, int | float)
        or not MIN_INCREMENT <= increment <= MAX_INCREMENT
        or increment != int(increment)
    ):
        # 0.001 s would be an increment in name only (and a lobby entry that misleads): whole seconds
        raise ValueError(
            f"increment must be whole seconds per move between {MIN_INCREMENT} and {MAX_INCREMENT} "
            f"(0 or null: none), not {str(increment)[:20]!r}"
        )
    if clock_s is None:
        raise ValueError("increment needs a clock: send clock (minutes) too")
    return TimeControl(clock=clock_s, increment=float(increment))


def credit(rec: GameRecord, side: str) -> None:
    """After ``side`` moved (its clock already charged): add the increment, or, in a correspondence
    game, set its time back to the full days per move."""
    if rec.clock is None:
        return
    if rec.per_move_days is not None:
        setattr(rec, f"{side}_time", rec.clock)
    elif rec.increment:
        setattr(rec, f"{side}_time", float(getattr(rec, f"{side}_time") or 0.0) + rec.increment)


def first_move_time(rec: GameRecord, real_time: float = FIRST_MOVE) -> float:
    """Seconds the side to move of ``rec`` has for its first move before the game is aborted:
    ``real_time`` (:data:`FIRST_MOVE`) with a real-time clock, never more than the clock itself
    (a clock under 30 s exists only below the public floor of one minute: tests, an operator's
    ``--min-clock``); the days per move in a correspondence game (nobody waits at the board for a
    game of days)."""
    if rec.per_move_days is not None:
        return rec.per_move_days * DAY
    return min(real_time, rec.clock) if rec.clock else real_time
