"""Helpers shared by the search players, built only on :mod:`jericho_game.core` (no engine changes).

* :func:`search_budget` turns a player's own budget and a :class:`~jericho_game.ai.base.Limit`
  into the one budget a search spends (every search player uses it: an explicit limit is the law);
* :class:`Deadline` turns a time budget into a wall-clock stop time with a small margin;
* :func:`move_deltas` computes, without playing them, how every legal move changes the
  monolith counts (a move changes only the two alignments through its cell, and only the
  *size* of the piece matters for strength, so at most 26 × 5 effect classes exist);
* :func:`breaks_possible` says whether the side to move can bring a 7-holder below 7.
"""

from __future__ import annotations

import time
from pathlib import Path

from jericho_game.ai.base import Limit
from jericho_game.core import N_PIECES, NO_OUTCOME, SEVEN, State
from jericho_game.game import Game
from jericho_game.moves import Move

__all__ = [
    "Deadline",
    "search_budget",
    "move_deltas",
    "breaks_possible",
    "winning_sevens",
    "to_move",
    "game_state",
    "resolve_seed",
    "SHIPPED_EVALUATOR",
    "VALUE_NETWORK",
    "evaluator_path",
]

#: The learned evaluator's shipped weights (ai/evalnet.py), named ``evaluator=shipped``.
SHIPPED_EVALUATOR = Path(__file__).with_name("evaluator.npz")
#: The value network the ``expert`` and ``master`` levels play with (ai/levels.py; the phase
#: network of docs/runs/value-phase-2026-12-05), named ``evaluator=value``.
VALUE_NETWORK = Path(__file__).with_name("value.npz")
#: The weights files an ``evaluator=`` option may name by a word.
NAMED_EVALUATORS = {"shipped": SHIPPED_EVALUATOR, "value": VALUE_NETWORK}


def evaluator_path(spec: str) -> Path:
    """The weights file an ``evaluator=`` option names: ``shipped`` (the evaluator of
    2026-12-02), ``value`` (the levels' value network) or a path.

    Raises ``ValueError`` when there is no such file (checked when the player is made, not
    at its first move)."""
    path = NAMED_EVALUATORS.get(spec) or Path(spec)
    if not path.is_file():
        what = f"the {spec} evaluator" if spec in NAMED_EVALUATORS else f"evaluator weights {spec!r}"
        raise ValueError(f"{what}: no file at {path}")
    return path


#: Fraction of a time budget a search allows itself (the rest is margin for the work around it:
#: copying the position, checking the certain wins, answering), so a move takes 97-100% of its budget.
TIME_SAFETY = 0.98
#: Absolute margin (seconds) kept below any time budget.
TIME_MARGIN = 0.004
#: The largest search time and simulation/node budget a player accepts (the engine protocol's caps).
MAX_SECONDS = 600.0
MAX_SIMS = 1_000_000


def search_budget(
    limit: Limit | None, sims: int | None, seconds: float | None, default_sims: int | None = None
) -> tuple[int | None, float | None]:
    """The ``(simulations or nodes, seconds)`` one search may spend; ``None``: no such bound.

    An explicit limit (``limit.time`` and/or ``limit.nodes`` set) is the whole budget: it
    replaces the player's own ``sims``/``seconds`` (a level's simulation count and time cap
    are defaults only).  ``Limit(time=T)`` searches ``T`` seconds with no simulation cap,
    ``Limit(nodes=N)`` exactly ``N`` simulations with no time cap, both: whichever ends
    first.  Without one the player's own budget applies, and ``default_sims`` when it has
    none.  Raises :class:`ValueError` naming a bad limit.
    """
    if limit is not None and (limit.time is not None or limit.nodes is not None):
        if limit.nodes is not None and (isinstance(limit.nodes, bool) or not 1 <= limit.nodes):
            raise ValueError(f"the simulation budget (limit nodes) must be at least 1, got {limit.nodes}")
        if limit.time is not None and not limit.time > 0:
            raise ValueError(f"the time limit must be a positive number of seconds, got {limit.time}")
        return (int(limit.nodes) if limit.nodes is not None else None), limit.time
    if sims is None and seconds is None:
        return default_sims, None
    return sims, seconds


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
