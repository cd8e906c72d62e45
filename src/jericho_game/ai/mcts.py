"""The MCTS players: ``mcts`` (the whole search in the C kernel) and ``mcts-py`` (pure Python).

``mcts`` is :class:`KernelMCTSPlayer` when the C kernel runs (one call of
``jericho_game._kernel.mcts`` searches a whole move) and :class:`MCTSPlayer` otherwise.
``mcts-py`` is always :class:`MCTSPlayer`, on the pure-Python core: the reference, and the
baseline of the strength measurements (``mcts-py:sims=4000`` is the expert level before the
C kernel).  Both run the algorithm below; the C search differs only in keeping no tree
between moves and storing the first 24 untried moves of a node (more when needed).


Algorithm (one *simulation*):

1. **Select** from the root down with UCB1 (``w/n + c·sqrt(ln N / n)``, rewards 1 win,
   ½ draw, 0 loss for the side that made the move), under *progressive widening*: a node
   visited ``N`` times may have at most ``1 + widen·sqrt(N)`` children, so with ~650 legal
   moves per position the search still goes deeper than one ply.  Unexpanded moves are
   tried best-first by their immediate effect on the monolith margin
   (:func:`jericho_game.ai._util.move_deltas`), ties in seeded random order.
2. **Expand** one new child.
3. **Play out** to the end: by default (``playout=guided``) with
   :func:`jericho_game.ai.playout.guided_playout` (each move the best of ``k`` sampled legal
   moves by immediate margin), or with ``playout=random`` with the engine's fastest path
   :func:`jericho_game.core.random_playout` (about 1.3–1.5 times more simulations per second,
   but weaker per simulation and, measured, weaker overall; see docs/ai.md).
4. **Back up** the result along the path.

On the C kernel ``defend=1`` makes the playouts defend against sevens: a side facing the
opponent's seven monoliths plays a placement that breaks them whenever one exists (the best
by margin of the first ``k`` found).  Without it even guided playouts end ~99% of the time by
a careless seven after ~31 plies, far from real games; the ``expert`` and ``master`` levels
use it with ``k=10`` (measured in docs/ai.md).

Tactics are exact where it is cheap: at the root a move reaching 7 monoliths that no
reply can break is played at once; a tree node whose mover reaches such a 7 is a proven
win; and a side facing the opponent's 7 only considers the moves that break it.

The move played is the most visited child.  The tree is kept between moves: when the
next position is reached from the last root by moves already in the tree, that subtree
becomes the new root.  Budgets: the player's ``sims`` and/or ``time``, replaced as a whole by
an explicit ``Limit.nodes`` (simulations) and/or ``Limit.time``
(:func:`jericho_game.ai._util.search_budget`); simulation-bounded searches are
reproducible for a given seed.
:attr:`MCTSPlayer.sims_per_second` reports the speed of the last search.
"""

from __future__ import annotations

import math
import random
import time
from typing import Any

from jericho_game import kernel
from jericho_game.ai._util import (
    MAX_SECONDS,
    MAX_SIMS,
    Deadline,
    breaks_possible,
    evaluator_path,
    game_state,
    move_deltas,
    resolve_seed,
    search_budget,
    to_move,
    winning_sevens,
)
from jericho_game.ai.base import Limit
from jericho_game.ai.playout import guided_playout
from jericho_game.ai.solver import Solution, Table, solve
from jericho_game.core import DRAW, NO_OUTCOME, SEVEN, State, random_playout
from jericho_game.game import Game
from jericho_game.moves import Move

__all__ = ["MCTSPlayer", "KernelMCTSPlayer", "Node", "mcts", "DEFAULT_SIMS"]

#: Simulations of an MCTS player given no budget at all (no ``sims``, ``time`` nor limit).
DEFAULT_SIMS = 2000
#: The endgame solver in the C search (``endgame=1``): tried at the root with at most this many
#: pieces left in the reserves; win/draw/loss first within ``ENDGAME_FIRST`` of the move's time
#: and ``ENDGAME_FIRST_NODES`` solver nodes per simulation of its budget (most attempts that fail
#: fail here, so a failure costs little), then the rest within ``ENDGAME_SHARE`` of the time and
#: ``ENDGAME_NODES_PER_SIM`` nodes per simulation in all; in the tree, on nodes with at most
#: ``ENDGAME_LEAF_PIECES`` pieces left, ``ENDGAME_LEAF_NODES`` nodes each (win/draw/loss only),
#: tried once when the search comes back to the node for the ``ENDGAME_LEAF_AFTER``-th time (a
#: solve at every new leaf cost ~6 points at equal time: docs/ai.md, "Where the cost is");
#: its table's size (MB).
ENDGAME_ROOT_PIECES = 14
ENDGAME_FIRST = 0.05
ENDGAME_FIRST_NODES = 2
ENDGAME_SHARE = 0.2
ENDGAME_NODES_PER_SIM = 8
ENDGAME_LEAF_PIECES = 7
ENDGAME_LEAF_NODES = 1000
ENDGAME_LEAF_AFTER = 8
ENDGAME_TABLE_MB = 4.0


def _check_budget(sims: int | None, time: float | None, playout: str, k: int) -> None:
    """The options both MCTS players share, refused with the offending value."""
    if sims is not None and (isinstance(sims, bool) or not isinstance(sims, int) or not 1 <= sims <= MAX_SIMS):
        raise ValueError(f"sims must be a whole number from 1 to {MAX_SIMS:_}, got {sims!r}")
    if time is not None and not 0 < time <= MAX_SECONDS:
        raise ValueError(f"time must be a positive number of seconds, at most {MAX_SECONDS:g}, got {time!r}")
    if playout not in ("random", "guided"):
        raise ValueError(f"playout must be 'random' or 'guided', got {playout!r}")
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")


class Node:
    """One tree node: the position after ``code`` was played by ``mover``."""

    __slots__ = ("code", "mover", "children", "untried", "n", "w", "terminal")

    def __init__(self, code: int, mover: int, terminal: int = NO_OUTCOME) -> None:
        self.code = code
        self.mover = mover
        self.children: list[Node] = []
        self.untried: list[int] | None = None  # built on the second visit
        self.n = 0
        self.w = 0.0
        self.terminal = terminal


class MCTSPlayer:
    """UCT with progressive widening and random playouts; reuses its tree between moves."""

    def __init__(
        self,
        sims: int | None = None,
        time: float | None = None,
        c: float = 0.7,
        widen: float = 2.0,
        reuse: int = 1,
        playout: str = "guided",
        k: int = 3,
        seed: int | None = None,
    ) -> None:
        _check_budget(sims, time, playout, k)
        self.name = "mcts-py"
        self.playout = playout
        self.k = int(k)
        self.sims = sims
        self.time = time
        self.c = float(c)
        self.widen = float(widen)
        self.reuse = bool(reuse)
        self.seed = seed
        self._rng = random.Random(seed)
        self._root: Node | None = None
        self._root_start: str | None = None
        self._root_hist: tuple[int, ...] = ()
        #: Simulations and seconds of the last search, and how many were reused.
        self.last_sims = 0
        self.last_seconds = 0.0
        self.last_reused = 0

    @property
    def sims_per_second(self) -> float:
        """Simulations per second of the last search (0 before the first)."""
        return self.last_sims / self.last_seconds if self.last_seconds > 0 else 0.0

    def _budget(self, limit: Limit | None) -> tuple[int | None, float | None]:
        return search_budget(limit, self.sims, self.time, DEFAULT_SIMS)

    def _find_root(self, game: Game, state: State) -> Node:
        hist = tuple(game.state.history_codes())
        root = self._root
        if (
            self.reuse
            and root is not None
            and game.start_position == self._root_start
            and len(hist) >= len(self._root_hist)
            and hist[: len(self._root_hist)] == self._root_hist
        ):
            for code in hist[len(self._root_hist) :]:
                nxt = next((ch for ch in root.children if ch.code == code), None)
                if nxt is None:
                    root = None
                    break
                root = nxt
            if root is not None and root.terminal == NO_OUTCOME:
                self.last_reused = root.n
                return root
        self.last_reused = 0
        return Node(-1, 1 - state.turn)

    def choose_move(self, game: Game, limit: Limit | None = None) -> Move:
        """Search and return the most visited move."""
        state = kernel.python_state(game_state(game))  # the reference runs on the Python core
        codes = state.legal_codes()
        seed = resolve_seed(None, limit)
        if seed is not None:
            self._rng.seed(seed)
        if len(codes) == 1:
            self._root = None
            return to_move(game, codes[0])
        sims, secs = self._budget(limit)
        deadline = Deadline(secs)
        wins = winning_sevens(state, codes)
        if wins:  # a certain win needs no search
            self._root = None
            return to_move(game, wins[self._rng.randrange(len(wins))])
        root = self._find_root(game, state)
        hist = tuple(game.state.history_codes())
        self.search(state, root, sims, deadline)
        best = max(root.children, key=lambda ch: (ch.n, ch.w))
        # Keep the tree for the next move.
        self._root = root
        self._root_start = game.start_position
        self._root_hist = hist
        return to_move(game, best.code)

    def search(self, state: State, root: Node, sims: int | None, deadline: Deadline) -> int:
        """Run simulations from ``root`` (the position ``state``, restored afterwards); returns how many."""
        rng = self._rng
        rand = rng.random
        c = self.c
        widen = self.widen
        log = math.log
        guided = self.playout == "guided"
        k = self.k
        sqrt = math.sqrt
        done = 0
        t0 = time.perf_counter()
        while True:
            if sims is not None and done >= sims:
                break
            # The clock is read every simulation: a guided Python simulation can take milliseconds on
            # a loaded core, and a read costs well under a microsecond, so a stop is never late by more than one.
            if (
                deadline.stop is not None
                and root.children  # the answer needs one searched move, however late it is
                and time.perf_counter() >= deadline.stop
            ):
                break
            node = root
            path = [root]
            depth = 0
            # -- selection / expansion
            while node.terminal == NO_OUTCOME:
                if node.untried is None:
                    if node.n == 0 and node is not root:
                        break  # a fresh leaf: play out from here
                    node.untried = self._ordered_moves(state, rng)
                limit_children = 1 + int(widen * sqrt(node.n + 1))
                if node.untried and len(node.children) < limit_children:
                    code = node.untried.pop()
                    mover = state.turn
                    state.push(code)
                    depth += 1
                    outcome = state.outcome
                    if outcome == NO_OUTCOME and state.score[mover] >= SEVEN and not breaks_possible(state, mover):
                        outcome = mover  # proven: seven monoliths that no reply breaks
                    child = Node(code, mover, outcome)
                    node.children.append(child)
                    node = child
                    path.append(node)
                    break
                # UCB1 among existing children
                ln = log(node.n + 1)
                best = None
                best_v = -1.0
                for ch in node.children:
                    if ch.n == 0:
                        v = 1e9
                    else:
                        v = ch.w / ch.n + c * sqrt(ln / ch.n)
                    if v > best_v:
                        best_v = v
                        best = ch
                assert best is not None
                state.push(best.code)
                depth += 1
                node = best
                path.append(node)
            # -- playout
            if node.terminal != NO_OUTCOME:
                result = node.terminal
            elif guided:
                result = guided_playout(state, rand, k)
            else:
                result = random_playout(state, rand)
            for _ in range(depth):
                state.pop()
            # -- backup
            for nd in path:
                nd.n += 1
                if result == DRAW:
                    nd.w += 0.5
                elif result == nd.mover:
                    nd.w += 1.0
            done += 1
        self.last_sims = done
        self.last_seconds = time.perf_counter() - t0
        return done

    @staticmethod
    def _ordered_moves(state: State, rng: random.Random) -> list[int]:
        """Legal codes, the most promising last (they are popped from the end).

        When the opponent holds 7, only the moves that break it are kept (the others
        lose at once); moves reaching 7 come first, then by immediate margin gain.
        """
        codes = state.legal_codes()
        me = state.turn
        opp = 1 - me
        score = state.score
        if score[opp] >= SEVEN:
            breaking = []
            for code in codes:
                state.push(code)
                if state.score[opp] < SEVEN:
                    breaking.append(code)
                state.pop()
            if breaking:
                codes = breaking
        rng.shuffle(codes)
        deltas = move_deltas(state, codes)
        if score[me] >= SEVEN - 2:
            for i, code in enumerate(codes):
                if deltas[i] > 0:
                    state.push(code)
                    if state.score[me] >= SEVEN:
                        deltas[i] += 100
                    state.pop()
        order = sorted(range(len(codes)), key=deltas.__getitem__)
        return [codes[i] for i in order]


class KernelMCTSPlayer:
    """MCTS searched entirely by the C kernel: same algorithm as :class:`MCTSPlayer`, ~15-25x the simulations.

    Python handles what needs no search (a forced move, a certain win by seven monoliths),
    then one ``_kernel.mcts`` call runs the simulations and returns the root's visit counts;
    the most visited move is played.  ``sims`` and ``time`` are the default budgets (an
    explicit ``Limit`` replaces them); with ``sims`` only, a seeded player is reproducible.
    """

    def __init__(
        self,
        sims: int | None = None,
        time: float | None = None,
        c: float = 0.7,
        widen: float = 2.0,
        playout: str = "guided",
        k: int = 3,
        seed: int | None = None,
        reuse: int = 1,
        defend: int = 0,
        solver: int = 0,
        greedy: int = 0,
        evaluator: str | None = None,
        mix: float = 0.5,
        cprior: float = 1.0,
        net_pieces: int = 0,
        trunc: int = 0,
        vorder: int = 0,
        imb: float = 0.0,
        final: str = "visits",
        subtree: int = 0,
        transpose: int = 0,
        endgame: int = 0,
        solve_nodes: int = 0,
        solve_pieces: int = 0,
        solve_after: int = 0,
    ) -> None:
        if kernel.C is None:
            raise RuntimeError("KernelMCTSPlayer needs the C kernel (not built, or JERICHO_KERNEL=python)")
        _check_budget(sims, time, playout, k)
        if c < 0 or widen <= 0:
            raise ValueError(f"c must be >= 0 and widen > 0, got c={c}, widen={widen}")
        if final not in FINAL_CHOICES:
            raise ValueError(f"final must be one of {', '.join(FINAL_CHOICES)}, got {final!r}")
        #: How the move is chosen from the root's children: the most visited (``visits``) or the
        #: best lower confidence bound of the winning rate (``lcb``); a proof comes first in both.
        self.final = final
        if not 0.0 <= mix <= 1.0 or cprior < 0 or net_pieces < 0 or not 0.0 <= imb <= 1.0:
            got = f"mix={mix}, cprior={cprior}, net_pieces={net_pieces}, imb={imb}"
            raise ValueError(f"mix and imb must be in [0, 1], cprior >= 0 and net_pieces >= 0, got {got}")
        if imb and evaluator is None:
            raise ValueError(f"imb={imb} needs an evaluator: the minimax backed up is of its value")
        if trunc < 0 or vorder < 0:
            raise ValueError(f"trunc and vorder must be >= 0, got trunc={trunc}, vorder={vorder}")
        if trunc and evaluator is None:
            raise ValueError(f"trunc={trunc} needs an evaluator: it judges where a cut playout stopped")
        if vorder and evaluator is None:
            raise ValueError(f"vorder={vorder} needs an evaluator: it orders the moves by its value")
        self.name = "mcts"
        self.sims = sims
        self.time = time
        self.c = float(c)
        self.widen = float(widen)
        self.playout = playout
        self.k = int(k) if playout == "guided" else 1
        #: Playouts in which a side facing the opponent's seven breaks it when it can.
        self.defend = bool(defend)
        #: MCTS-solver: proven wins and losses propagate up the tree and are never searched again.
        self.solver = bool(solver)
        #: Greedy playouts: each move the best of *all* placements by immediate margin.
        self.greedy = bool(greedy)
        self.seed = seed
        #: Keep the tree while the position stays the same: a later call continues the search
        #: (so a search cut in slices, as the engine protocol does for ``stop``, plays the move
        #: of one uncut search).  A new position, or a seed in the ``Limit``, starts a new tree.
        self.reuse = bool(reuse)
        #: Tree reuse between moves (needs ``reuse``): when the next position lies one or two plies
        #: below the last root (this player's move, then the reply), the search starts from that
        #: subtree, with its visits, instead of an empty tree.
        self.subtree = bool(subtree) and self.reuse
        #: Transposition statistics: a child's winning rate is read from every simulation through
        #: its position, whichever move order reached it (the exploration term keeps its own count).
        self.transpose = bool(transpose)
        #: The learned evaluator's weights file (``evaluator=shipped``, ``value`` or a path; None: none),
        #: its share of a leaf's value (``mix``) and its priors' weight (``cprior``; 0: none).
        self.evaluator = None if evaluator is None else str(evaluator_path(evaluator))
        self.mix = float(mix)
        self.cprior = float(cprior)
        #: Leaves with at most this many pieces left in the reserves get a playout alone, not the
        #: network (0: the network everywhere): late in the game a playout is nearly exact.
        self.net_pieces = int(net_pieces)
        #: Truncated playouts: a leaf's playout stops after this many plies and the network judges
        #: the position it reached (0: played to the end).
        self.trunc = int(trunc)
        #: Value ordering: once a node has this many visits, the moves it has not widened to yet
        #: are ordered by the network's value of each (0: the search's own order throughout).
        self.vorder = int(vorder)
        #: Implicit minimax backups: a child is ranked by ``(1 - imb)`` times its mean value plus
        #: ``imb`` times the minimax of the network's value over its subtree (0: the mean alone).
        self.imb = float(imb)
        self._evaluator_options()  # read and check the weights now, not in the first move's time
        if solve_nodes < 0 or solve_pieces < 0 or solve_after < 0:
            got = f"{solve_nodes}, {solve_pieces}, {solve_after}"
            raise ValueError(f"solve_nodes, solve_pieces and solve_after must be >= 0, got {got}")
        if (endgame or solve_nodes) and not solver:
            raise ValueError("endgame=1 and solve_nodes need solver=1 (the tree's proofs)")
        #: The endgame solver (issue 31): at the root, a position it settles within a share of the
        #: move's budget is played exactly (fastest win, longest defence, a drawing move chosen by
        #: the search among the drawing moves); in the tree, leaves with at most ``solve_pieces``
        #: pieces left are solved within ``solve_nodes`` nodes and count as proofs (``solve_after``
        #: N > 0: once, when the search comes back to the node with N visits, not when it is made).
        self.endgame = bool(endgame)
        self.solve_nodes = int(solve_nodes) if solve_nodes else (ENDGAME_LEAF_NODES if endgame else 0)
        self.solve_pieces = int(solve_pieces) if solve_pieces else (ENDGAME_LEAF_PIECES if endgame else 0)
        self.solve_after = int(solve_after) if solve_after else (ENDGAME_LEAF_AFTER if endgame else 0)
        self._table: Table | None = None
        #: What the root solver found in the last move (None: not tried, or not solved in budget).
        self.last_solution: Solution | None = None
        self._rng = random.Random(seed)
        self._tree = kernel.C.Tree() if self.reuse else None
        self._tree_key: tuple[str | None, tuple[int, ...]] | None = None
        #: Simulations, seconds and tree nodes of the last search, and the simulations it inherited.
        self.last_sims = 0
        self.last_seconds = 0.0
        self.last_nodes = 0
        self.last_reused = 0
        #: The root's children after the last search: ``(code, visits, wins)``.
        self.last_children: list[tuple[int, int, float]] = []
        #: The root's proven children after the last search: code -> 1 won, 0 lost, 2 drawn.
        self.last_proofs: dict[int, int] = {}
        #: Whether the last search proved its root (a move proven won, or every move proven lost):
        #: searching on, as a sliced search would, adds nothing.
        self.last_proven = False

    @property
    def sims_per_second(self) -> float:
        """Simulations per second of the last search (0 before the first)."""
        return self.last_sims / self.last_seconds if self.last_seconds > 0 else 0.0

    def choose_move(self, game: Game, limit: Limit | None = None) -> Move:
        """Search and return the most visited move."""
        state = game_state(game)
        codes = state.legal_codes()
        seed = resolve_seed(None, limit)
        if seed is not None:
            self._rng.seed(seed)
        if len(codes) == 1:
            return to_move(game, codes[0])
        sims, secs = search_budget(limit, self.sims, self.time, DEFAULT_SIMS)
        deadline = Deadline(secs)
        wins = winning_sevens(state, codes)
        if wins:  # a certain win needs no search
            return to_move(game, wins[self._rng.randrange(len(wins))])
        allowed: set[int] | None = None
        self.last_solution = None
        if self.endgame:
            exact = self._solve_root(game, state, sims, deadline)
            if isinstance(exact, int):
                return to_move(game, exact)
            allowed = exact
        seconds = 0.0
        if deadline.stop is not None:
            seconds = max(0.001, deadline.stop - time.perf_counter())
        tree = self._tree
        key = (game.start_position, tuple(game.state.history_codes()))
        # A seed asks for a reproducible search: a new tree, unless the subtree of an earlier
        # position is to be kept (then the search is reproducible given the same earlier searches).
        same = key == self._tree_key
        if tree is not None and ((seed is not None and same) or (not same and not self.subtree)):
            tree.clear()
        self._tree_key = key
        done, elapsed, nodes, children = kernel.C.mcts(
            state,
            self._rng.getrandbits(64),
            sims=sims or 0,
            seconds=seconds,
            c=self.c,
            widen=self.widen,
            k=self.k,
            tree=tree,
            defend=self.defend,
            solver=self.solver,
            greedy=self.greedy,
            proofs=True,
            reroot=self.subtree,
            transpose=self.transpose,
            solve_nodes=self.solve_nodes,
            solve_pieces=self.solve_pieces,
            solve_after=self.solve_after,
            **self._evaluator_options(),
        )
        self.last_reused = tree.simulations - done if tree is not None else 0
        self.last_sims, self.last_seconds, self.last_nodes = done, elapsed, nodes
        self.last_children = [(code, n, w) for code, n, w, _proof in children]
        self.last_proofs = {code: proof for code, _n, _w, proof in children if proof >= 0}
        proofs = self.last_proofs.values()
        self.last_proven = 1 in proofs or (len(self.last_proofs) == len(codes) and all(p == 0 for p in proofs))
        if allowed is not None:  # a solved draw: only the moves that keep it
            kept = [ch for ch in children if ch[0] in allowed]
            if not kept:
                assert self.last_solution is not None and self.last_solution.move is not None
                return self.last_solution.move
            children = kept
        # A proven win is played at once; a proven loss only when every move loses.
        if self.final == "lcb":
            best = max(children, key=lambda ch: (ch[3] == 1, ch[3] != 0, _lower_bound(ch[1], ch[2]), ch[1], -ch[0]))
        else:
            best = max(children, key=lambda ch: (ch[3] == 1, ch[3] != 0, ch[1], ch[2], -ch[0]))
        return to_move(game, best[0])

    def _solve_root(self, game: Game, state: State, sims: int | None, deadline: Deadline) -> int | set[int] | None:
        """The endgame solver at the root, within ``ENDGAME_SHARE`` of the move's budget (win/draw/loss
        within ``ENDGAME_FIRST`` of it, or nothing more is tried).

        Returns the move code to play (a won position: the fastest win, or a winning move when
        only win/draw/loss was settled; a lost one: the longest defence), the codes of the moves
        that keep a solved draw (the search chooses among them), or ``None`` (not settled, or lost
        without the distance: the search plays on).
        """
        left = kernel.pieces_left(state)
        if left > ENDGAME_ROOT_PIECES:
            return None
        if self._table is None:
            self._table = Table(ENDGAME_TABLE_MB)
        # Node budget from the simulations (a level stays reproducible), seconds from the clock;
        # the calls below share both.
        budget = [ENDGAME_NODES_PER_SIM * sims if sims else None]
        stop = first = None
        if deadline.stop is not None:
            now, span = time.perf_counter(), deadline.stop - time.perf_counter()
            stop, first = now + ENDGAME_SHARE * span, now + ENDGAME_FIRST * span

        def run(until: float | None = None, cap: int | None = None, **options: Any) -> Solution:
            nodes = budget[0] if cap is None or budget[0] is None else min(cap, budget[0])
            end = until if until is not None else stop
            seconds = None if end is None else max(0.0005, end - time.perf_counter())
            sol = solve(state, nodes=max(1, nodes) if nodes is not None else None, seconds=seconds,
                        table=self._table, line=False, **options)  # fmt: skip
            if budget[0] is not None:
                budget[0] -= sol.nodes
            return sol

        wdl = run(first, ENDGAME_FIRST_NODES * sims if sims else None, distance=False)
        if not wdl.solved:
            return None
        self.last_solution = wdl
        if wdl.value == 0:
            each = run(moves="wdl", distance=False)
            if each.moves is None or any(v is None for v, _ in each.moves.values()):
                assert wdl.move is not None
                return game.tables.object_code[id(wdl.move)]
            return {game.tables.object_code[id(m)] for m, (v, _) in each.moves.items() if v == 0}
        exact = run()
        if exact.solved:
            self.last_solution = exact
            assert exact.move is not None
            return game.tables.object_code[id(exact.move)]
        if wdl.value == 1:
            assert wdl.move is not None
            return game.tables.object_code[id(wdl.move)]
        return None

    def _evaluator_options(self) -> dict[str, object]:
        if self.evaluator is None:
            return {}
        from jericho_game.ai import netfile  # no NumPy: the levels play with a network on a bare install

        net = netfile.kernel_net(self.evaluator)
        options: dict[str, object] = {"net": net, "mix": self.mix, "cprior": self.cprior, "net_pieces": self.net_pieces}
        if self.imb:
            options["imb"] = self.imb
        if self.trunc:
            options["trunc"] = self.trunc
        if self.vorder:
            options["vorder"] = self.vorder
        return options

    def __getstate__(self) -> dict[str, object]:
        # The C tree does not pickle (players are sent to worker processes): a copy starts afresh.
        state = dict(self.__dict__)
        state["_tree"] = None
        state["_tree_key"] = None
        state["_table"] = None
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        if self.reuse:
            self._tree = kernel.C.Tree()


#: The final-move choices of the C search (``final=``).
FINAL_CHOICES = ("visits", "lcb")


def _lower_bound(visits: int, wins: float, z: float = 1.96) -> float:
    """The winning rate's lower confidence bound (Wilson's), 0 for an unvisited move."""
    if visits <= 0:
        return 0.0
    p = wins / visits
    denom = 1 + z * z / visits
    centre = p + z * z / (2 * visits)
    spread = z * math.sqrt(p * (1 - p) / visits + z * z / (4 * visits * visits))
    return (centre - spread) / denom


def mcts(
    sims: int | None = None,
    time: float | None = None,
    c: float = 0.7,
    widen: float = 2.0,
    playout: str = "guided",
    k: int = 3,
    seed: int | None = None,
    reuse: int = 1,
    defend: int = 0,
    solver: int = 0,
    greedy: int = 0,
    evaluator: str | None = None,
    mix: float = 0.5,
    cprior: float = 1.0,
    net_pieces: int = 0,
    trunc: int = 0,
    vorder: int = 0,
    imb: float = 0.0,
    final: str = "visits",
    subtree: int = 0,
    transpose: int = 0,
    endgame: int = 0,
    solve_nodes: int = 0,
    solve_pieces: int = 0,
    solve_after: int = 0,
) -> KernelMCTSPlayer | MCTSPlayer:
    """The ``mcts`` player: :class:`KernelMCTSPlayer` on the C kernel, else :class:`MCTSPlayer`.

    ``reuse``: the Python search keeps its tree between moves; the C search keeps it while the
    position stays the same (a later call continues the search).  ``defend=1`` (C kernel only):
    in the playouts a side facing the opponent's seven monoliths breaks them when it can.
    ``evaluator=shipped``, ``evaluator=value`` (the levels' network) or ``evaluator=PATH`` (C
    kernel only): the learned evaluator (:mod:`jericho_game.ai.evalnet`; read by
    :mod:`jericho_game.ai.netfile`, no NumPy needed) guides the search, its value weighted ``mix`` against
    the playouts' and its priors ``cprior`` (``cprior=0``: no priors at all, the moves keep the
    search's own order, and the network gives only the value); ``net_pieces=N``: leaves with at
    most ``N`` pieces left in the reserves get a playout alone (the network earlier in the game);
    ``trunc=K``: a leaf's playout stops after ``K`` plies and the network judges where it stopped;
    ``vorder=N``: once a node has ``N`` visits, its moves not yet widened to are ordered by the
    network's value of each;
    ``imb=A``: implicit minimax backups, a child ranked by ``(1 - A)`` times its mean plus ``A``
    times the minimax of the network's value below it.
    ``subtree=1`` (C kernel): the tree is also kept between moves, as the Python search keeps
    it: a position one or two plies below the last root is searched on from that subtree.
    ``transpose=1`` (C kernel): transposition statistics, a child's winning rate read from every
    simulation through its position.
    """
    if kernel.C is not None:
        return KernelMCTSPlayer(
            sims=sims,
            time=time,
            c=c,
            widen=widen,
            playout=playout,
            k=k,
            seed=seed,
            reuse=reuse,
            defend=defend,
            solver=solver,
            greedy=greedy,
            evaluator=evaluator,
            mix=mix,
            cprior=cprior,
            net_pieces=net_pieces,
            trunc=trunc,
            vorder=vorder,
            imb=imb,
            final=final,
            subtree=subtree,
            transpose=transpose,
            endgame=endgame,
            solve_nodes=solve_nodes,
            solve_pieces=solve_pieces,
            solve_after=solve_after,
        )
    # The Python search always keeps its subtree between moves (``reuse``).
    extras = (
        ("defend", defend),
        ("solver", solver),
        ("greedy", greedy),
        ("evaluator", evaluator),
        ("transpose", transpose),
        ("endgame", endgame),
        ("solve_nodes", solve_nodes),
        ("solve_after", solve_after),
        ("net_pieces", net_pieces),
        ("trunc", trunc),
        ("vorder", vorder),
        ("imb", imb),
    )
    for name, value in (*extras, ("final", None if final == "visits" else final)):
        if value:
            raise ValueError(f"{name}={value} needs the C kernel (the pure-Python search has no such option)")
    player = MCTSPlayer(sims=sims, time=time, c=c, widen=widen, reuse=reuse, playout=playout, k=k, seed=seed)
    player.name = "mcts"
    return player
