"""The ``alphabeta`` player: negamax alpha-beta with iterative deepening.

Kernel
    On the C kernel the whole search below the root runs in C (``_kernel.alphabeta``,
    the same algorithm move for move, ~20x the nodes per second); ``alphabeta-py`` (or
    ``python=1``) runs this module's Python search on the Python core, the reference the
    tests compare the C search with (same values and node counts at fixed depths).
    Python prepares the root either way (symmetry classes, seeded shuffle, ordering).

Search
    Negamax with alpha-beta pruning on :class:`jericho_game.core.State` (``push``/``pop``),
    iterative deepening 1, 2, 3 … until the time or node budget runs out (the result
    of the last *completed* depth is played; a deeper iteration cut short is discarded,
    and if not even depth 1 completes, the best move by immediate monolith gain is
    played).  A transposition table keyed
    by the engine's incremental Zobrist key (:meth:`State.hash_key`) stores depth,
    value, bound and best move.

Move ordering
    TT move first, then moves by their immediate monolith gain (captures first,
    computed without playing them by :func:`jericho_game.ai._util.move_deltas`), then
    the two killer moves of the ply, then the history heuristic.  Below the root only the
    ``width`` best-ordered moves are searched (forward pruning; the root is searched in full).

Seven-monolith quiescence
    At the horizon, when the side to move faces an opponent holding 7 or more monoliths,
    the search does not stop: it tries every move that touches an alignment the opponent
    holds (only those can break the 7), and scores a loss when none does.  So a depth-2
    search sees exactly whether a move reaching 7 can be broken.

Evaluation (from the side to move's view, in centi-monoliths)
    * 100 × (own monoliths − opponent's monoliths);
    * safety of each held alignment: +25 when the leader's champion is full (4 pieces,
      nothing can be stacked on it to weaken it), +10 when the leader's champion is
      a tower of two or more facing a single piece (it beats every single whatever
      its size), −15 when both champions are single pieces (one stacked piece flips it);
      counted for the side to move positively and for the opponent negatively;
    * seven-monolith pressure: +40 when the side to move holds 6 (one gain from a
      threat of 7), −40 when the opponent does;
    * tempo: +30 for the side to move (it will usually take a monolith first).

Budgets
    ``depth``, ``nodes`` and ``time`` are the player's own budget; an explicit ``Limit``
    (``time`` and/or ``nodes``) replaces all three (the search deepens until the limit).
    A node budget counts every node visited, quiescence nodes included (``last_nodes``),
    the same count in the Python and the C search: the search stops when it is spent and
    plays the move of its last completed depth, so ``Limit(nodes=N)`` is deterministic.
    With ``Limit(time=T)`` the search deepens until 98% of ``T`` and stops mid-iteration,
    so it spends the limit unless a depth proves a win or a loss first.

Stopping
    :meth:`AlphaBetaPlayer.stop` (from another thread, e.g. the engine protocol's ``stop``)
    ends a running search within about a millisecond with the move of the last completed
    depth, as if its budget had run out: the Python search checks the request every 64
    nodes, the C search reads a byte the player shares with it (``_kernel.alphabeta``'s
    ``stop``) at the same rate, with the GIL released.

Symmetries (``symmetry=1``)
    Colours are interchangeable except through stacking and the asymmetry rule, and the
    board is mirror symmetric left–right.  With ``symmetry=1`` the root move list is
    reduced to one move per class of equivalent moves: colours absent from the board
    whose pieces lie in the same reserves are equivalent, and when the position is its own
    mirror image a cell and its mirror are equivalent.  docs/ai.md records the measurement.
"""

from __future__ import annotations

import random

from jericho_game import kernel
from jericho_game.ai._util import (
    MAX_SECONDS,
    Deadline,
    game_state,
    move_deltas,
    resolve_seed,
    search_budget,
    to_move,
)
from jericho_game.ai.base import Limit
from jericho_game.core import DRAW, NO_OUTCOME, SEVEN, State
from jericho_game.game import Game
from jericho_game.moves import Move

__all__ = ["AlphaBetaPlayer", "evaluate", "symmetry_classes", "python_alphabeta"]

WIN = 100_000
INF = 10 * WIN
EXACT, LOWER, UPPER = 0, 1, 2
QDEPTH = 4
#: The largest node budget (``nodes=``) the player accepts: about two minutes of the C search.
MAX_NODES = 100_000_000


class _OutOfBudget(Exception):
    pass


def evaluate(state: State) -> int:
    """Static evaluation of ``state`` for the side to move (see the module docstring)."""
    me = state.turn
    opp = 1 - me
    score = state.score
    t = state.tables
    key = state.key
    height = state.height
    leader = state.leader
    v = 100 * (score[me] - score[opp]) + 30
    if score[me] == SEVEN - 1:
        v += 40
    if score[opp] == SEVEN - 1:
        v -= 40
    asouth = t.align_south
    anorth = t.align_north
    for a in range(t.n_align):
        lead = leader[a]
        if lead < 0:
            continue
        # champions
        bs = max(asouth[a], key=key.__getitem__)
        bn = max(anorth[a], key=key.__getitem__)
        hl, ho = (height[bs], height[bn]) if lead == 0 else (height[bn], height[bs])
        s = 0
        if hl >= 4:
            s += 25
        elif hl >= 2 and ho == 1:
            s += 10
        elif hl == 1 and ho == 1:
            s -= 15
        v += s if lead == me else -s
    return v


def symmetry_classes(state: State, codes: list[int]) -> list[int]:
    """One representative move code per class of moves leading to equivalent positions.

    Exact reductions only: colours with no piece on the board and the same reserve
    membership on both sides (sizes 1–5) are interchangeable, and when the board is its
    own left–right mirror image (and the asymmetry rule looks at no cell) a cell and its
    mirror are interchangeable.
    """
    t = state.tables
    n = t.n_cells
    on_board = 0
    for x in state.code:
        while x:
            on_board |= 1 << (((x & 31) - 1) % 5)
            x >>= 5
    # colour signature: membership pattern of its 5 pieces in both reserves
    canon: list[int] = list(range(5))
    seen: dict[tuple[int, int], int] = {}
    for k in range(5):
        if on_board >> k & 1 or state.last_piece % 5 == k and state.last_cell >= 0:
            continue
        sig = tuple(sum(((state.reserve[side] >> (s * 5 + k)) & 1) << s for s in range(5)) for side in (0, 1))
        key2 = (sig[0], sig[1])
        if key2 in seen:
            canon[k] = seen[key2]
        else:
            seen[key2] = k
    mirror = _mirror_map(t)
    symmetric = state.last_cell < 0 and all(state.code[c] == state.code[mirror[c]] for c in range(n))
    out: list[int] = []
    reps: set[int] = set()
    for code in codes:
        if code == t.pass_code:
            out.append(code)
            continue
        p, c = divmod(code, n)
        rp = (p // 5) * 5 + canon[p % 5]
        rc = min(c, mirror[c]) if symmetric else c
        r = rp * n + rc
        if r not in reps:
            reps.add(r)
            out.append(code)
    return out


_MIRRORS: dict[int, tuple[int, ...]] = {}


def _mirror_map(t: object) -> tuple[int, ...]:
    """Cell index → index of its left–right mirror (column a↔g, b↔f, c↔e)."""
    m = _MIRRORS.get(id(t))
    if m is None:
        names = t.cell_names  # type: ignore[attr-defined]
        index = t.cell_index  # type: ignore[attr-defined]
        cols = "abcdefg"
        out = []
        for name in names:
            col, row = name[0], name[1:]
            mirrored = cols[6 - cols.index(col)] + row if col in cols else name
            out.append(index.get(mirrored, index[name]))
        m = tuple(out)
        _MIRRORS[id(t)] = m
    return m


class AlphaBetaPlayer:
    """Negamax alpha-beta, iterative deepening, Zobrist transposition table, seven-rule quiescence."""

    def __init__(
        self,
        depth: int | None = None,
        time: float | None = None,
        nodes: int | None = None,
        width: int = 16,
        symmetry: int = 1,
        tt_size: int = 400_000,
        seed: int | None = None,
        python: int = 0,
    ) -> None:
        if depth is not None and not 1 <= depth <= 64:
            raise ValueError(f"depth must be from 1 to 64, got {depth}")
        if nodes is not None and not 1 <= nodes <= MAX_NODES:
            raise ValueError(f"nodes must be from 1 to {MAX_NODES:_}, got {nodes}")
        if time is not None and not 0 < time <= MAX_SECONDS:
            raise ValueError(f"time must be a positive number of seconds, at most {MAX_SECONDS:g}, got {time}")
        if width < 1:
            raise ValueError(f"width must be at least 1, got {width}")
        self.name = "alphabeta-py" if python else "alphabeta"
        #: Search in Python on the Python core even when the C kernel runs.
        self.python = bool(python)
        self.depth = depth
        self.time = time
        self.nodes = nodes
        self.width = width
        self.symmetry = bool(symmetry)
        self.tt_size = tt_size
        self.seed = seed
        self._rng = random.Random(seed)
        self._tt: dict[int, tuple[int, int, int, int]] = {}
        self._ctable = bytearray()
        self._killers: list[list[int]] = []
        self._history: dict[int, int] = {}
        self._count = 0
        self._max_nodes: int | None = None
        self._deadline = Deadline(None)
        #: Byte 0 set by :meth:`stop`: the search (Python or C) ends at once.  Only
        #: :meth:`reset_stop` and the end of a search clear it, so a stop that arrives just
        #: before the search starts still ends it.
        self._stop_flag = bytearray(1)
        #: Statistics of the last search.
        self.last_nodes = 0
        self.last_depth = 0
        self.last_value = 0
        self.last_seconds = 0.0

    @property
    def nodes_per_second(self) -> float:
        """Nodes per second of the last search."""
        return self.last_nodes / self.last_seconds if self.last_seconds > 0 else 0.0

    def stop(self) -> None:
        """End a running :meth:`choose_move` at once (safe from any thread).

        The search answers with the best move of its last completed depth (the best move by
        immediate gain if none completed).  A stop that finds no search running makes the
        next search answer at once, unless :meth:`reset_stop` withdraws it.
        """
        self._stop_flag[0] = 1  # one byte store: atomic, so no lock (and the player still pickles)

    def reset_stop(self) -> None:
        """Withdraw a :meth:`stop` that came after the search it was meant for."""
        self._stop_flag[0] = 0

    @property
    def stopping(self) -> bool:
        """Whether a :meth:`stop` is pending."""
        return bool(self._stop_flag[0])

    def choose_move(self, game: Game, limit: Limit | None = None) -> Move:
        """Search with iterative deepening and return the best move found."""
        try:
            return self._choose_move(game, limit)
        finally:
            self.reset_stop()  # the stop was for this search

    def _choose_move(self, game: Game, limit: Limit | None = None) -> Move:
        state = game_state(game)
        if self.python:
            state = kernel.python_state(state)
        seed = resolve_seed(None, limit)
        if seed is not None:
            # A seeded search is reproducible: it starts from an empty transposition table, not
            # from whatever earlier searches left there (a stopped timed search leaves a
            # different amount each time, and with it another move ordering).
            self._rng.seed(seed)
            self._tt.clear()
            self._ctable = bytearray()
        codes = state.legal_codes()
        if len(codes) == 1:
            return to_move(game, codes[0])
        # An explicit limit is the whole budget: it replaces the player's own depth, nodes and time.
        explicit = limit is not None and (limit.time is not None or limit.nodes is not None)
        nodes, secs = search_budget(limit, self.nodes, self.time)
        depth = None if explicit else self.depth
        if depth is None and nodes is None and secs is None:
            depth = 2
        return to_move(game, self.search(state, depth, nodes, secs))

    # -- search ----------------------------------------------------------------------
    def search(self, state: State, depth: int | None, nodes: int | None, secs: float | None) -> int:
        """Best move code for ``state`` (restored afterwards) within the budgets."""
        self._deadline = Deadline(secs)
        self._max_nodes = nodes
        self._count = 0
        if len(self._tt) > self.tt_size:
            self._tt.clear()
        self._history.clear()
        codes = state.legal_codes()
        if self.symmetry:
            codes = symmetry_classes(state, codes)
        self._rng.shuffle(codes)  # seeded: random among equally ordered moves
        deltas = move_deltas(state, codes)
        order = sorted(range(len(codes)), key=lambda i: -deltas[i])
        root = [codes[i] for i in order]
        if kernel.is_c_state(state):
            return self._search_c(state, root, depth, nodes)
        best = root[0]
        best_value = -INF
        max_depth = depth if depth is not None else 64
        d = 0
        for d in range(1, max_depth + 1):
            self._killers = [[-1, -1] for _ in range(d + QDEPTH + 2)]
            try:
                value, move = self._root(state, root, d)
            except _OutOfBudget:
                d -= 1
                break
            best, best_value = move, value
            root.remove(move)
            root.insert(0, move)
            if abs(value) >= WIN - 1000:
                break  # a forced result: deeper search changes nothing
            if len(root) == 1:
                break
        self.last_nodes = self._count
        self.last_depth = d
        self.last_value = best_value
        self.last_seconds = self._deadline.elapsed()
        return best

    def _search_c(self, state: State, root: list[int], depth: int | None, nodes: int | None) -> int:
        """The search below the root in the C kernel (same algorithm as :meth:`_negamax`)."""
        seconds = 0.0
        if self._deadline.stop is not None:
            seconds = max(0.001, self._deadline.stop - self._deadline.start - self._deadline.elapsed())
        tt_bits = max(10, min(24, self.tt_size.bit_length()))  # about tt_size entries, like the Python table
        size = kernel.C.TT_ENTRY_SIZE << tt_bits
        if len(self._ctable) != size:  # the C table, kept between moves like the Python one
            self._ctable = bytearray(b"\xff") * size
        best, value, d, count, _ = kernel.C.alphabeta(
            state,
            root,
            depth=depth or 64,
            nodes=nodes or 0,
            seconds=seconds,
            width=self.width,
            tt_bits=tt_bits,
            table=self._ctable,
            stop=self._stop_flag,
        )
        self.last_nodes = count
        self.last_depth = d
        self.last_value = value
        self.last_seconds = self._deadline.elapsed()
        return int(best)

    def _tick(self) -> None:
        self._count += 1
        if self._max_nodes is not None and self._count > self._max_nodes and self._count > 1:
            raise _OutOfBudget
        if (self._count & 63) == 0 and (self._deadline.expired() or self._stop_flag[0]):
            raise _OutOfBudget

    def _root(self, state: State, moves: list[int], depth: int) -> tuple[int, int]:
        alpha = -INF
        beta = INF
        best = moves[0]
        for code in moves:
            state.push(code)
            try:
                v = -self._negamax(state, depth - 1, -beta, -alpha, 1)
            finally:
                state.pop()
            if v > alpha:
                alpha = v
                best = code
        return alpha, best

    def _negamax(self, state: State, depth: int, alpha: int, beta: int, ply: int) -> int:
        self._tick()
        o = state.outcome
        if o != NO_OUTCOME:
            if o == DRAW:
                return 0
            return WIN - ply if o == state.turn else -(WIN - ply)
        if depth <= 0:
            return self._quiesce(state, alpha, beta, ply, QDEPTH)
        h = state.hash_key()
        entry = self._tt.get(h)
        tt_move = -1
        if entry is not None:
            e_depth, e_value, e_flag, tt_move = entry
            if e_depth >= depth:
                if e_flag == EXACT:
                    return e_value
                if e_flag == LOWER and e_value >= beta:
                    return e_value
                if e_flag == UPPER and e_value <= alpha:
                    return e_value
        moves = self._ordered(state, ply, tt_move)
        alpha0 = alpha
        best = -INF
        best_move = moves[0]
        for code in moves:
            state.push(code)
            try:
                v = -self._negamax(state, depth - 1, -beta, -alpha, ply + 1)
            finally:
                state.pop()
            if v > best:
                best = v
                best_move = code
                if v > alpha:
                    alpha = v
                    if alpha >= beta:
                        k = self._killers[ply]
                        if k[0] != code:
                            k[1] = k[0]
                            k[0] = code
                        self._history[code] = self._history.get(code, 0) + depth * depth
                        break
        flag = EXACT if alpha0 < best < beta else (LOWER if best >= beta else UPPER)
        self._tt[h] = (depth, best, flag, best_move)
        return best

    def _ordered(self, state: State, ply: int, tt_move: int) -> list[int]:
        codes = state.legal_codes()
        if len(codes) == 1:
            return codes
        deltas = move_deltas(state, codes)
        killers = self._killers[ply] if ply < len(self._killers) else (-1, -1)
        hist = self._history
        scored = []
        for code, d in zip(codes, deltas, strict=True):
            s = d * 1_000_000 + hist.get(code, 0)
            if code == tt_move:
                s += 100_000_000
            elif code == killers[0] or code == killers[1]:
                s += 500_000
            scored.append((s, code))
        scored.sort(reverse=True)
        return [c for _, c in scored[: self.width]]

    def _quiesce(self, state: State, alpha: int, beta: int, ply: int, qdepth: int) -> int:
        """Horizon: static evaluation, unless the mover must break the opponent's 7."""
        me = state.turn
        opp = 1 - me
        if state.score[opp] < SEVEN or qdepth <= 0:
            return evaluate(state)
        t = state.tables
        n = t.n_cells
        held = [any(state.leader[a] == opp for a in t.through[c]) for c in range(n)]
        best = -(WIN - ply - 1)  # no breaking move: the opponent wins after this turn
        for code in state.legal_codes():
            if code == t.pass_code or not held[code % n]:
                continue
            state.push(code)
            try:
                if state.score[opp] >= SEVEN:
                    v = -(WIN - ply - 1)
                else:
                    self._tick()
                    v = -self._quiesce(state, -beta, -max(alpha, best), ply + 1, qdepth - 1)
            finally:
                state.pop()
            if v > best:
                best = v
                if best >= beta:
                    return best
        return best


def python_alphabeta(**options: object) -> AlphaBetaPlayer:
    """The ``alphabeta-py`` player: :class:`AlphaBetaPlayer` searching in Python on the Python core."""
    options.setdefault("python", 1)
    return AlphaBetaPlayer(**options)  # type: ignore[arg-type]
