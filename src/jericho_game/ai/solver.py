"""The exact endgame solver: the game value of a position, as an endgame tablebase gives it.

:func:`solve` says whether the side to move wins, draws or loses under best play, and how
many plies the game then lasts (a win: the fewest the winner needs; a loss: the most the loser
can hold out), with a best move and the principal line to the end of the game; or that it does
not know, when the node or time budget runs out first.  Every rule counts, because the search
plays the rules kernel's own moves (passes, exhaustion and its count, the seven held through
the opponent's turn, the asymmetry rule).

On the C kernel the search is ``jericho_game._kernel.solve`` (alpha-beta on exact values with
a Zobrist transposition table, docs/ai.md "The endgame solver").  Without it (a pure-Python
install, or ``JERICHO_KERNEL=python``) the same search runs in Python on
:mod:`jericho_game.core`: the same values, about a hundred times slower.

>>> from jericho_game import Game
>>> from jericho_game.ai.solver import solve
>>> sol = solve(Game.from_position(text), seconds=1.0)      # doctest: +SKIP
>>> sol.value, sol.plies, sol.move, str(sol)                 # doctest: +SKIP
(1, 4, Move('4Y@f1'), 'Win in 4 plies')
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass
from typing import Any, Literal

from jericho_game import kernel
from jericho_game.core import DRAW, NO_OUTCOME, SEVEN, State
from jericho_game.game import Game
from jericho_game.moves import Move

__all__ = ["WIN", "DRAW_VALUE", "LOSS", "Solution", "Table", "solve", "DEFAULT_TABLE_MB"]

#: Values of a position for its side to move.
WIN, DRAW_VALUE, LOSS = 1, 0, -1
#: The transposition table's size when none is given (megabytes).
DEFAULT_TABLE_MB = 4.0
#: Ranking of exact values, as the C search does: a win that ends d plies from the root is
#: _WIN - d, a loss -(_WIN - d), a draw 0 (more than the longest game: 50 placements and at most
#: one pass between two).
_WIN = 1000
_ENTRY = 16  # bytes per table entry (the C SvEntry)
_WIN2_TRIES = 3  # moves reaching seven checked for an unbreakable seven (SV_WIN2_TRIES)

MovesMode = Literal["wdl", "exact"]


@dataclass(frozen=True)
class Solution:
    """What the solver found about one position.

    * ``value`` — ``1`` (the side to move wins), ``0`` (draw), ``-1`` (loss), or ``None``
      when the budget ran out before the value was proved (then nothing else is known);
    * ``plies`` — plies to the end of the game under best play (passes count): for a win the
      fewest the winner needs, for a loss the most the loser can hold out; ``None`` for a draw
      (draws are not ranked by length) or when unknown; ``0`` for a finished game;
    * ``move`` — a best move (fastest win, longest defence, or one that keeps the draw);
      ``None`` when unknown or the game is over;
    * ``line`` — the principal line from the position to the end of the game (both sides
      playing best moves), shorter only if the budget ran out while it was being written;
    * ``moves`` — with ``solve(..., moves=...)``: each legal move's ``(value, plies)`` for the
      side playing it (``plies`` ``None`` where only win/draw/loss was asked, or a draw), or
      ``(None, None)`` for a move the budget did not reach;
    * ``nodes``, ``seconds`` — the work done.
    """

    value: int | None
    plies: int | None
    move: Move | None
    line: tuple[Move, ...]
    nodes: int
    seconds: float
    moves: dict[Move, tuple[int | None, int | None]] | None = None

    @property
    def solved(self) -> bool:
        """Whether the value is known."""
        return self.value is not None

    def __str__(self) -> str:
        if self.value is None:
            return "Unknown"
        if self.value == DRAW_VALUE:
            return "Draw"
        word = "Win" if self.value == WIN else "Loss"
        return f"{word} in {self.plies} {'ply' if self.plies == 1 else 'plies'}"


class Table:
    """A transposition table kept between calls of :func:`solve` (``solve(..., table=t)``).

    Solved positions stay solved (the search has no horizon), so a table reused along a game
    makes each later position cheaper.  One search at a time uses a table (a lock guards it);
    it may serve any positions of one board.  ``megabytes`` is rounded down to a power of two
    entries of 16 bytes (at least 1,024 entries).
    """

    def __init__(self, megabytes: float = DEFAULT_TABLE_MB) -> None:
        self.bits = _table_bits(megabytes)
        self.buffer = bytearray(_ENTRY << self.bits)
        self.lock = threading.Lock()
        self._py: dict[int, tuple[int, int, int]] = {}  # the pure-Python search's table

    @property
    def megabytes(self) -> float:
        """The table's size in megabytes."""
        return len(self.buffer) / 2**20

    def clear(self) -> None:
        """Forget every stored position."""
        with self.lock:
            self.buffer[:] = bytes(len(self.buffer))
            self._py.clear()


def _table_bits(megabytes: float) -> int:
    if isinstance(megabytes, bool) or not isinstance(megabytes, (int, float)) or not 0 < megabytes <= 4096:
        raise ValueError(f"table_mb must be a number of megabytes in (0, 4096], got {megabytes!r}")
    entries = megabytes * 2**20 / _ENTRY
    return max(10, min(28, int(math.floor(math.log2(entries))))) if entries >= 1 else 10


def _check_budget(nodes: int | None, seconds: float | None) -> None:
    if nodes is not None and (isinstance(nodes, bool) or not isinstance(nodes, int) or nodes < 1):
        raise ValueError(f"nodes must be a whole number >= 1 (or None: no node limit), got {nodes!r}")
    if seconds is not None and (
        isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 < seconds < math.inf
    ):
        raise ValueError(f"seconds must be a positive finite number (or None: no time limit), got {seconds!r}")


def solve(
    game: Game | State,
    *,
    nodes: int | None = None,
    seconds: float | None = None,
    table: Table | None = None,
    table_mb: float = DEFAULT_TABLE_MB,
    moves: MovesMode | None = None,
    line: bool = True,
    distance: bool = True,
) -> Solution:
    """The exact value of ``game``'s position for its side to move, within a budget.

    ``nodes`` (positions searched) and/or ``seconds`` bound the search; with neither it runs
    to the end, however long that takes (the middle game is far out of reach: give a budget).
    ``table`` reuses a :class:`Table` (else a fresh one of ``table_mb`` megabytes is used).
    ``moves="wdl"`` also classifies every legal move as winning, drawing or losing for its
    player, ``moves="exact"`` gives each its exact value and plies (more work).  ``line=False``
    skips writing the principal line.  ``distance=False`` asks win, draw or loss only (often ten
    times cheaper: ``plies`` is then ``None``, and ``move`` and ``line`` keep the result without
    being the fastest win or the longest defence).  ``game`` is a :class:`~jericho_game.Game` or a kernel
    state; it is not changed.  Raises ``ValueError`` naming a bad argument, ``TypeError`` for
    something that is not a game.
    """
    if isinstance(game, Game):
        state = game.state
    elif isinstance(game, State):
        state = game
    else:
        raise TypeError(f"solve() needs a jericho_game.Game or a kernel State, got {type(game).__name__}")
    _check_budget(nodes, seconds)
    if moves not in (None, "wdl", "exact"):
        raise ValueError(f"moves must be None, 'wdl' or 'exact', got {moves!r}")
    if table is not None and not isinstance(table, Table):
        raise TypeError(f"table must be a jericho_game.ai.solver.Table, got {type(table).__name__}")
    mode = {None: 0, "wdl": 1, "exact": 2}[moves]
    objects = state.tables.move_objects
    if kernel.is_c_state(state):
        own = table if table is not None else None
        bits = own.bits if own is not None else _table_bits(table_mb)
        if own is not None:
            with own.lock:
                raw = kernel.C.solve(state, nodes or 0, seconds or 0.0, bits, own.buffer, mode, line, distance)
        else:
            raw = kernel.C.solve(state, nodes or 0, seconds or 0.0, bits, None, mode, line, distance)
    else:
        if table is None:
            table = Table(table_mb)
        with table.lock:
            raw = _py_solve(state, nodes, seconds, table._py, 1 << table.bits, mode, line, distance)
    (value, plies), best, codes, per_move, count, elapsed = raw
    if value is None:
        return Solution(None, None, None, (), count, elapsed, None)
    return Solution(
        value=value,
        plies=None if value == DRAW_VALUE or plies < 0 else plies,
        move=objects[best] if best >= 0 else None,
        line=tuple(objects[c] for c in codes),
        nodes=count,
        seconds=elapsed,
        moves=(
            {objects[c]: (v, None if v in (None, DRAW_VALUE) or p < 0 else p) for c, (v, p) in per_move}
            if mode
            else None
        ),
    )


# -- the same search in Python (no C kernel) ---------------------------------------------------

_EXACT, _LOWER, _UPPER = 1, 2, 3


class _Abort(Exception):
    """The budget ran out."""


class _PySearch:
    """``_kernel.solve``'s search on a :class:`jericho_game.core.State` (push/pop), move for move
    in its rules and values; a dict is the table (emptied when it reaches ``capacity``)."""

    def __init__(self, tt: dict[int, tuple[int, int, int]], capacity: int, nodes: int | None, seconds: float | None):
        self.tt = tt
        self.capacity = capacity
        self.max_nodes = nodes
        self.deadline = time.perf_counter() + seconds if seconds else None
        self.count = 0

    def tick(self) -> None:
        self.count += 1
        if self.max_nodes is not None and self.count > self.max_nodes:
            raise _Abort
        if self.deadline is not None and not self.count & 255 and time.perf_counter() >= self.deadline:
            raise _Abort

    def ordered(self, st: State, tt_move: int) -> tuple[list[int], int]:
        codes = st.legal_codes()
        if len(codes) == 1:
            return codes, -1
        me = st.turn
        opp = 1 - me
        pass_code = st.tables.pass_code
        n = st.tables.n_cells
        score = st.score
        effects: dict[tuple[int, int], tuple[int, int]] = {}
        keyed = []
        reach: set[int] = set()
        win2 = -1
        for code in codes:
            k = 0
            if code != pass_code:
                p, c = divmod(code, n)
                ck = (p // 5, c)
                if ck not in effects:
                    d = [0, 0]
                    for _a, old, new in st.leader_changes(p // 5, c):
                        if old >= 0:
                            d[old] -= 1
                        if new >= 0:
                            d[new] += 1
                    effects[ck] = (d[me], d[opp])
                dme, dopp = effects[ck]
                if score[opp] >= SEVEN and score[opp] + dopp >= SEVEN:
                    k -= 1 << 40
                elif score[me] + dme >= SEVEN:
                    k += 1 << 36
                    reach.add(code)
                k += (dme - dopp) << 24
            if code == tt_move:
                k += 1 << 44
            keyed.append((-k, code))
        keyed.sort()
        ordered = [c for _k, c in keyed]
        # The best few moves reaching seven: is one of them a seven no reply breaks?
        for code in [c for c in ordered if c in reach][:_WIN2_TRIES]:
            st.push(code)
            found = st.outcome == NO_OUTCOME and st.score[me] >= SEVEN and not _breaks_possible(st, me)
            st.pop()
            if found:
                win2 = code
                break
        return ordered, win2

    def search(self, st: State, alpha: int, beta: int, ply: int) -> tuple[int, int]:
        """(value, best move) of ``st`` at ``ply`` (fail-soft, like ``sv_search``)."""
        if st.outcome != NO_OUTCOME:
            return _terminal(st, ply), -1
        self.tick()
        hi = _WIN - (ply + 1)
        alpha = max(alpha, -hi)
        beta = min(beta, hi)
        if alpha >= beta:
            return alpha, -1
        h = st.hash_key()
        entry = self.tt.get(h)
        tt_move = -1
        if entry is not None:
            stored, tt_move, flag = entry
            v = stored - ply if stored > _WIN // 2 else stored + ply if stored < -_WIN // 2 else stored
            if flag == _EXACT or (flag == _LOWER and v >= beta) or (flag == _UPPER and v <= alpha):
                return v, tt_move
            if flag == _LOWER:
                alpha = max(alpha, v)
            else:
                beta = min(beta, v)
            if alpha >= beta:
                return v, tt_move
        codes, win2 = self.ordered(st, tt_move)
        if win2 >= 0:
            v = _WIN - (ply + 2)
            self.store(h, v, ply, win2, _EXACT)
            return v, win2
        alpha0 = alpha
        value, move = -30000, codes[0]
        for code in codes:
            st.push(code)
            try:
                v = -self.search(st, -beta, -alpha, ply + 1)[0]
            finally:
                st.pop()
            if v > value:
                value, move = v, code
                if v > alpha:
                    alpha = v
                    if alpha >= beta:
                        break
        flag = _UPPER if value <= alpha0 else _LOWER if value >= beta else _EXACT
        self.store(h, value, ply, move, flag)
        return value, move

    def store(self, h: int, v: int, ply: int, move: int, flag: int) -> None:
        if len(self.tt) >= self.capacity and h not in self.tt:
            self.tt.clear()
        stored = v + ply if v > _WIN // 2 else v - ply if v < -_WIN // 2 else v
        self.tt[h] = (stored, move, flag)

    def value(self, st: State, ply: int, exact: bool) -> tuple[int, int]:
        """``sv_value``: win/draw/loss with a window around 0, then (``exact``) the distance by
        null-window tests "does the game end within d plies?" for d = 1, 2, ..."""
        if st.outcome != NO_OUTCOME:
            return _terminal(st, ply), -1
        v, best = self.search(st, -1, 1, ply)
        if v == 0 or not exact:
            return v, best
        for d in range(1, _WIN // 2):
            bound = _WIN - (ply + d)
            if v > 0:
                r, mv = self.search(st, bound - 1, bound, ply)
                if r >= bound:
                    return bound, mv
            else:
                r, mv = self.search(st, -bound, -bound + 1, ply)
                if r <= -bound:
                    return -bound, mv if d == 1 else best
                best = mv
        raise AssertionError("a game cannot last that long")


def _terminal(st: State, ply: int) -> int:
    if st.outcome == DRAW:
        return 0
    return _WIN - ply if st.outcome == st.turn else -(_WIN - ply)


def _breaks_possible(st: State, holder: int) -> bool:
    """Whether the side to move has a placement leaving ``holder`` below seven monoliths."""
    score = st.score[holder]
    if score < SEVEN:
        return True
    n = st.tables.n_cells
    seen: set[tuple[int, int]] = set()
    for code in st.legal_codes():
        if code == st.tables.pass_code:
            continue
        p, c = divmod(code, n)
        if (p // 5, c) in seen:
            continue
        seen.add((p // 5, c))
        d = sum((new == holder) - (old == holder) for _a, old, new in st.leader_changes(p // 5, c))
        if score + d < SEVEN:
            return True
    return False


def _result(v: int | None) -> tuple[int | None, int | None]:
    if v is None:
        return None, None
    return (1, _WIN - v) if v > 0 else (-1, _WIN + v) if v < 0 else (0, -1)


def _py_solve(
    state: State,
    nodes: int | None,
    seconds: float | None,
    tt: dict[int, tuple[int, int, int]],
    capacity: int,
    mode: int,
    want_line: bool,
    exact: bool = True,
) -> tuple[Any, ...]:
    """The pure-Python search, answering in ``_kernel.solve``'s form."""
    t0 = time.perf_counter()
    st = kernel.python_state(state) if kernel.is_c_state(state) else state.copy()
    S = _PySearch(tt, capacity, nodes, seconds)
    try:
        value, best = S.value(st, 0, exact)
    except _Abort:
        return (None, None), -1, [], [], S.count, time.perf_counter() - t0
    line: list[int] = []
    per_move: list[tuple[int, tuple[int | None, int | None]]] = []
    try:
        if want_line:
            mv = best
            while st.outcome == NO_OUTCOME and len(line) < 128:
                if line:
                    mv = S.value(st, 0, exact)[1]
                line.append(mv)
                st.push(mv)
        for _ in line:
            st.pop()
    except _Abort:
        for _ in line:
            st.pop()
    if mode and st.outcome == NO_OUTCOME:
        stopped = False
        for code in st.legal_codes():
            if code == best:
                per_move.append((code, _result(value)))
                continue
            v = None
            st.push(code)
            try:
                if not stopped:
                    v = -S.value(st, 1, mode == 2)[0]
            except _Abort:
                stopped = True
            finally:
                # not ``exact``: that is the root's own distance setting, still needed below
                move_exact = mode == 2 or st.outcome != NO_OUTCOME
                st.pop()
            r = _result(v)
            per_move.append((code, r if move_exact or r[0] is None else (r[0], -1)))
    result = _result(value) if exact or st.outcome != NO_OUTCOME else (_result(value)[0], -1)
    return result, best, line, per_move, S.count, time.perf_counter() - t0
