"""Helpers shared by the search players, built only on :mod:`jericho_game.core` (no engine changes).

* :class:`Deadline` turns a :class:`~jericho_game.players.base.Limit` into a wall-clock stop time
  with a safety margin;
* :func:`move_deltas` computes, without playing them, how every legal move changes the
  monolith counts (a move changes only the two alignments through its cell, and only the
  *size* of the piece matters for strength, so at most 26 × 5 effect classes exist);
* :func:`breaks_possible` says whether the side to move can bring a 7-holder below 7.
"""

from __future__ import annotations

import time

from jericho_game.core import N_PIECES, NO_OUTCOME, SEVEN, State
from jericho_game.game import Game
from jericho_game.moves import Move
from jericho_game.players.base import Limit

__all__ = ["Deadline", "move_deltas", "breaks_possible", "winning_sevens", "to_move", "game_state", "resolve_seed"]

#: Fraction of a time budget a player allows itself (the rest is margin for overheads).
TIME_SAFETY = 0.85
#: Absolute margin (seconds) kept below any time budget.
TIME_MARGIN = 0.03


class Deadline:
    """A wall-clock stop time derived from a time budget (``None``: no time limit)."""

    __slots__ = ("start", "stop")

    def __init__(self, seconds: float | None) -> None:
        self.start = time.perf_counter()
        if seconds is None:
            self.stop: float | None = None
        else:
            if seconds <= 0:
                raise ValueError(f"time limit must be positive, got {seconds}")
            self.stop = self.start + max(0.001, min(seconds * TIME_SAFETY, seconds - TIME_MARGIN))

    def expired(self) -> bool:
        """True once the stop time has passed."""
        return self.stop is not None and time.perf_counter() >= self.stop

    def elapsed(self) -> float:
        """Seconds since the deadline was created."""
        return time.perf_counter() - self.start


def resolve_seed(own: int | None, limit: Limit | None) -> int | None:
    """The seed to use for one move: the limit's seed wins over the player's own."""
    if limit is not None and limit.seed is not None:
        return limit.seed
    return own


def game_state(game: Game) -> State:
    """An independent copy of ``game``'s kernel state (the game itself is never touched)."""
    if not isinstance(game, Game):
        raise TypeError(f"expected a jericho_game.Game, got {type(game).__name__}")
    if game.is_over():
        raise ValueError("the game is over: there is no move to choose")
    return game.state.copy()


def to_move(game: Game, code: int) -> Move:
    """The interned :class:`Move` of a move code."""
    return game.tables.move_objects[code]


def move_deltas(state: State, codes: list[int]) -> list[int]:
    """For each move code, the change of (mover's monoliths − opponent's) it causes at once.

    Computed by the engine (:meth:`jericho_game.core.State.margin_deltas`) from the strength
    keys, with no push/pop; the pass code gets 0.
    """
    return state.margin_deltas(codes)


def breaks_possible(state: State, holder: int) -> bool:
    """Whether the side to move has a reply leaving ``holder`` with fewer than 7 monoliths.

    Arithmetic on the strength keys, like :func:`move_deltas` (no push/pop): only a
    placement on a cell of an alignment the holder leads can lower its count, and a move
    changes only the alignments through its cell.
    """
    score = state.score[holder]
    if score < SEVEN:
        return True
    t = state.tables
    n = t.n_cells
    leader = state.leader
    through = t.through
    seen: set[int] = set()
    for code in state.legal_codes():
        if code == t.pass_code:
            continue
        p, c = divmod(code, n)
        if all(leader[a] != holder for a in through[c]):
            continue
        ck = (p // 5) * 32 + c
        if ck in seen:
            continue
        seen.add(ck)
        changed = state.leader_changes(p // 5, c)
        if score + sum((new == holder) - (old == holder) for _, old, new in changed) < SEVEN:
            return True
    return False


def winning_sevens(state: State, codes: list[int]) -> list[int]:
    """The moves among ``codes`` after which the mover holds 7+ that no reply breaks (a certain win)."""
    me = state.turn
    out: list[int] = []
    if state.score[me] + 2 < SEVEN:
        return out
    for code in codes:
        state.push(code)
        if state.outcome == NO_OUTCOME and state.score[me] >= SEVEN and not breaks_possible(state, me):
            out.append(code)
        elif state.outcome == me:
            out.append(code)
        state.pop()
    return out


def reserve_pieces(state: State, side: int) -> list[int]:
    """The pieces (0–24) still in ``side``'s reserve."""
    r = state.reserve[side]
    return [p for p in range(N_PIECES) if r >> p & 1]
