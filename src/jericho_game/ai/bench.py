"""Engine and AI speed figures for ``jericho bench`` (each measured in this one process, on one core).

:func:`engine_figures` measures the rules engine (random games through the public API and the
playout path, push/pop and move generation); :func:`figures` returns the AI's
``(label, value, unit)`` triples:

* MCTS simulations per second from the start position and from a mid-game position,
  with the default guided playouts and with the engine's random playouts (``mcts``: the
  search in the C kernel when it runs), with the v1 expert's playouts and with the strongest
  search (the expert's and master's: greedy playouts and the solver; C kernel), and of the
  pure-Python search ``mcts-py``;
* alpha-beta nodes per second and the depth it completes (iterative deepening from a
  mid-game position) in the benchmark's time and in 1 s;
* the ``expert`` level's mean and maximum time per move over six positions, three of them
  awkward (late game, a 7 to break, a 7 within reach), against its promise, and the
  ``master`` level's mean over three.

The whole run takes about 40 s.  "Mid-game" is :func:`midgame`: 16 seeded random plies.
Run it alone with ``python -m jericho_game.ai.bench``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

from jericho_game import kernel
from jericho_game.ai.alphabeta import AlphaBetaPlayer
from jericho_game.ai.base import Limit
from jericho_game.ai.greedy import GreedyPlayer
from jericho_game.ai.levels import (
    EXPERT_TIME,
    MASTER_TIME,
    STRONG_C,
    STRONG_K,
    STRONG_WIDEN,
    expert,
    master,
)
from jericho_game.ai.mcts import MCTSPlayer, mcts
from jericho_game.game import Game

__all__ = [
    "engine_figures",
    "figures",
    "midgame",
    "awkward_positions",
    "expert_times",
    "symmetry_table",
    "late_game",
    "solver_table",
    "print_solver_table",
    "main",
]

Figure = tuple[str, float, str]


def _rate(step: Callable[[], int], seconds: float) -> float:
    """Units per second of ``step`` (which returns how many units it did) over ``seconds``."""
    step()  # warm caches
    done = 0
    start = time.perf_counter()
    while True:
        done += step()
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return done / elapsed


def midgame(plies: int = 16, seed: int = 2024) -> Game:
    """A fixed mid-game position: ``plies`` seeded random moves from the start, game not over.

    Its own seeded generator, so every run measures the same position whatever ran before.
    """
    rng = random.Random(seed)
    while True:
        game = Game()
        while len(game.history) < plies and not game.is_over():
            moves = game.legal_moves()
            game.play(moves[rng.randrange(len(moves))])
        if not game.is_over():
            return game


def engine_figures(seconds: float = 3.0, seed: int = 1) -> list[Figure]:
    """Random games per second through the public API and through the playout path."""
    rng = random.Random(seed)
    plies = [0]

    def public_game() -> int:
        game = Game()
        while not game.is_over():
            moves = game.legal_moves()
            game.play(moves[int(rng.random() * len(moves))])
        plies[0] += len(game.history)
        return 1

    start = Game().state
    draw = rng.random

    def playout() -> int:
        kernel.playout(start, draw)
        return 1

    public = _rate(public_game, seconds)
    fast = _rate(playout, seconds)
    out: list[Figure] = [
        ("random games, public API (legal_moves + play)", public, "games/s"),
        ("random games, fast path (kernel.playout, one call each)", fast, "games/s"),
    ]
    if kernel.C is not None:
        seeds = iter(range(1, 1 << 62))

        def batch() -> int:
            kernel.C.playouts(start, 2000, next(seeds))
            return 2000

        def batch_guided() -> int:
            kernel.C.playouts(start, 500, next(seeds), 3)
            return 500

        out.append(("random games, C loop (_kernel.playouts)", _rate(batch, seconds), "games/s"))
        out.append(("guided (best of 3) games, C loop (_kernel.playouts)", _rate(batch_guided, seconds), "games/s"))

    state = midgame().state.copy()
    codes = state.legal_codes()

    def push_pop() -> int:
        for c in codes:
            state.push(c)
            state.pop()
        return len(codes)

    def generate() -> int:
        state.legal_codes()
        return 1

    return out + [
        ("state push+pop, mid-game position", _rate(push_pop, seconds), "moves/s"),
        ("state legal move generation, mid-game position", _rate(generate, seconds), "positions/s"),
    ]


def mcts_rate(
    game: Game,
    seconds: float,
    playout: str = "guided",
    python: bool = False,
    strong: bool = False,
    strongest: bool = False,
    learned: bool = False,
) -> float:
    """MCTS simulations per second searching ``game`` for ``seconds``.

    ``python``: the ``mcts-py`` search; ``strong``: the v1 expert's playouts (best of
    ``levels.STRONG_K``, sevens defended); ``strongest``: the rungs' and the v3 expert's and
    master's search (greedy playouts, the solver); ``learned``: today's expert's and master's
    (that search with the value network ``ai/value.npz``: the ``expert`` level, given the time).
    """
    if python:
        p: Any = MCTSPlayer(time=seconds, reuse=0, playout=playout, seed=1)
    elif strongest:
        p = mcts(time=seconds, seed=1, c=STRONG_C, widen=STRONG_WIDEN, greedy=1, solver=1)
    elif learned:  # the level itself, its budget replaced by the time
        p = expert(seed=1)
        p.choose_move(game, Limit(time=seconds))
        return float(p.sims_per_second)
    elif strong:
        p = mcts(time=seconds, playout=playout, seed=1, k=STRONG_K, defend=1)
    else:
        p = mcts(time=seconds, playout=playout, seed=1)
    p.choose_move(game)
    return float(p.sims_per_second)


def alphabeta_rate(game: Game, seconds: float, python: bool = False) -> tuple[float, int]:
    """Alpha-beta nodes per second searching ``game`` for ``seconds``, and the depth completed."""
    p = AlphaBetaPlayer(time=seconds, seed=1, python=int(python))
    p.choose_move(game)
    return p.nodes_per_second, p.last_depth


def awkward_positions(seed: int = 5) -> list[Game]:
    """Positions that strain a time limit, from seeded games of greedy against random moves.

    In order: late in the game (40 plies or more), the side to move facing the opponent's
    7 monoliths (it must break them), and the side to move holding 5 or 6 (moves reaching
    7 are each checked against every reply).
    """
    rng = random.Random(seed)
    greedy = GreedyPlayer(seed=seed)
    found: dict[str, Game] = {}
    while len(found) < 3:
        game = Game()
        while not game.is_over():
            me = game.state.turn
            score = game.score()
            if score[1 - me] >= 7:
                found.setdefault("break", game.copy())
            elif score[me] >= 5:
                found.setdefault("seven", game.copy())
            elif len(game.history) >= 40:
                found.setdefault("late", game.copy())
            moves = game.legal_moves()
            game.play(greedy.choose_move(game) if rng.random() < 0.7 else moves[rng.randrange(len(moves))])
    return [found["late"], found["break"], found["seven"]]


def expert_times(positions: int = 6, level: str = "expert") -> tuple[float, float]:
    """Mean and maximum seconds per move of the ``expert`` (or ``master``) level over up to 6 positions.

    The first three are 4, 16 and 28 plies into seeded random games; the next three are
    :func:`awkward_positions` (late game, must break a 7, may reach 7).
    """
    games = [midgame(plies=4 + 12 * k, seed=77 + k) for k in range(min(positions, 3))]
    if positions > 3:
        games += awkward_positions()[: positions - 3]
    times = []
    for k, game in enumerate(games):
        player = expert(seed=k) if level == "expert" else master(seed=k)
        t0 = time.perf_counter()
        player.choose_move(game, Limit(seed=k))
        times.append(time.perf_counter() - t0)
    return sum(times) / len(times), max(times)


def evaluator_figures(game: Game, seconds: float) -> list[Figure]:
    """The learned evaluator's speed in C (ai/evalnet.py): evaluations per second of one
    position (its value and the logit of every legal move), and the strongest search's
    simulations per second with it (its value mixed half and half with the playouts', alone, and
    alone without priors at the value's own ``c = 0.05``: issue 32's gate).  Random weights of the
    shipped shape: the second layer skips the first layer's silent units, so the figures depend a
    little on the weights, not on what they learnt.  Empty without NumPy (the ``rl`` extra)."""
    try:
        from jericho_game.ai import evalnet
    except ImportError:
        return []
    hidden = evalnet.load(evalnet.SHIPPED).hidden if evalnet.SHIPPED.is_file() else (128, 64)
    net = evalnet.EvalNet.random(hidden, seed=1)
    knet = evalnet.kernel_net(net)
    state = game.state
    done, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for _ in range(200):
            knet.evaluate(state)
        done += 200
    rate = done / (time.perf_counter() - t0)
    seeded = random.Random(1)

    def search_rate(c: float, **net_options: float) -> float:
        """The strongest search's simulations/s with the network (``mix``, ``cprior``)."""
        n, elapsed, _nodes, _children = kernel.C.mcts(
            state,
            seeded.getrandbits(64),
            seconds=seconds,
            c=c,
            widen=STRONG_WIDEN,
            greedy=True,
            solver=True,
            net=knet,
            **net_options,
        )
        return float(n / elapsed)

    mixed = search_rate(STRONG_C, mix=0.5)
    # mix 1: the network's value alone at every new leaf, no playout (issue 32's gate for the value)
    value_only = search_rate(STRONG_C, mix=1.0)
    # the value alone as issue 32's gate plays it: no priors (the search's own move order), c 0.05
    value_alone = search_rate(evalnet.VALUE_C, mix=1.0, cprior=0.0)
    return [
        (f"learned evaluator evaluations/s, mid-game (value + priors, {hidden[0]}x{hidden[1]})", rate, "evals/s"),
        ("MCTS simulations/s, mid-game (strongest + learned evaluator, mix 0.5)", mixed, "sims/s"),
        ("MCTS simulations/s, mid-game (strongest + learned evaluator's value only, mix 1)", value_only, "sims/s"),
        ("MCTS simulations/s, mid-game (the value alone, no priors, c 0.05: mix 1, cprior 0)", value_alone, "sims/s"),
    ]


def figures(seconds: float = 2.0, expert_positions: int = 6, short: float = 1.0) -> list[Figure]:
    """The AI speed figures (about ``6 * seconds + short`` plus the expert's moves, ~25 s in all).

    ``short``: the time of the second alpha-beta search (its depth completed is a figure of its own).
    """
    start = Game()
    mid = midgame()
    rate, depth = alphabeta_rate(mid, seconds)
    depth_short = alphabeta_rate(mid, short)[1]
    out: list[Figure] = [
        ("MCTS simulations/s, start position (guided playouts)", mcts_rate(start, seconds), "sims/s"),
        ("MCTS simulations/s, mid-game (guided playouts)", mcts_rate(mid, seconds), "sims/s"),
        ("MCTS simulations/s, start position (random playouts)", mcts_rate(start, seconds, "random"), "sims/s"),
        ("MCTS simulations/s, mid-game (random playouts)", mcts_rate(mid, seconds, "random"), "sims/s"),
    ]
    if kernel.C is not None:
        label = "MCTS simulations/s, mid-game (v1 expert's playouts)"
        out.append((label, mcts_rate(mid, seconds, strong=True), "sims/s"))
        label = "MCTS simulations/s, mid-game (v3 expert/master and the rungs: greedy + solver)"
        out.append((label, mcts_rate(mid, seconds, strongest=True), "sims/s"))
        label = "MCTS simulations/s, mid-game (expert/master: greedy + solver + value network, mix 0.65, vorder 200)"
        out.append((label, mcts_rate(mid, seconds, learned=True), "sims/s"))
        out += evaluator_figures(mid, seconds)
    out += [
        ("mcts-py simulations/s, mid-game (guided, pure Python)", mcts_rate(mid, seconds, python=True), "sims/s"),
        ("alpha-beta nodes/s, mid-game (16 plies)", rate, "nodes/s"),
        (f"alpha-beta depth completed in {seconds:g} s, mid-game", depth, "plies"),
        (f"alpha-beta depth completed in {short:g} s, mid-game", depth_short, "plies"),
        ("alphabeta-py nodes/s, mid-game (pure Python)", alphabeta_rate(mid, seconds, python=True)[0], "nodes/s"),
    ]
    if expert_positions > 0:
        mean, worst = expert_times(expert_positions)
        out.append((f"expert mean time per move (limit {EXPERT_TIME} s)", mean, "s"))
        out.append(("expert max time per move", worst, "s"))
        mean, worst = expert_times(min(expert_positions, 3), "master")
        out.append((f"master mean time per move (limit {MASTER_TIME} s)", mean, "s"))
    return out


def late_game(left: int, seed: int) -> Game:
    """A seeded random game stopped when ``left`` pieces remain in the two reserves together.

    Moves are uniform among those that keep the game going and give nobody seven monoliths
    (any that keeps it going when none does); a game that ends first is replayed with the next
    seed, so the result is always a game in progress."""
    while True:
        rng = random.Random(seed)
        game = Game()
        st = game.state.copy()
        while st.outcome == -1 and kernel.pieces_left(st) > left:
            codes = st.legal_codes()
            rng.shuffle(codes)
            pick = None
            for code in codes:
                st.push(code)
                going = st.outcome == -1
                calm = going and max(st.score) < 7
                st.pop()
                if calm or (going and pick is None):
                    pick = code
                    if calm:
                        break
            code = codes[0] if pick is None else pick
            st.push(code)
            game.play(game.tables.move_objects[code])
        if not game.is_over():
            return game
        seed += 1_000_003


#: The solver table's sizes: pieces left in the two reserves together.
SOLVER_SIZES = (2, 4, 6, 8, 10, 12, 14, 16)


def solver_table(
    sizes: tuple[int, ...] = SOLVER_SIZES, sample: int = 20, seed: int = 31, limit: float = 1.0, fast: float = 0.1
) -> list[tuple[int, int, float, float, float | None, float]]:
    """The endgame solver on ``sample`` seeded late positions per size (:func:`late_game`).

    Rows: ``(pieces left, positions, share solved within fast s, share within limit s, median
    seconds, share whose win/draw/loss alone is settled within limit s)``, the median ``None``
    when fewer than half were solved within ``limit``.  "Solved" is the exact value with its
    plies: one call of :func:`jericho_game.ai.solver.solve` with ``seconds=limit`` and a fresh
    table of the default size; the last column is a second call with ``distance=False``.
    """
    from jericho_game.ai.solver import solve

    rows = []
    for k in sizes:
        times = []
        wdl = 0
        for i in range(sample):
            game = late_game(k, seed * 1000 + k * 100 + i)
            sol = solve(game, seconds=limit, line=False)
            times.append(sol.seconds if sol.solved else float("inf"))
            wdl += solve(game, seconds=limit, line=False, distance=False).solved
        times.sort()
        quick = sum(t <= fast for t in times) / sample
        within = sum(t <= limit for t in times) / sample
        mid = times[(sample - 1) // 2] if sample % 2 else (times[sample // 2 - 1] + times[sample // 2]) / 2
        rows.append((k, sample, quick, within, mid if mid <= limit else None, wdl / sample))
    return rows


def print_solver_table(sample: int = 20, seed: int = 31) -> None:
    """Print :func:`solver_table` (``jericho bench --solver``)."""
    print(f"endgame solver: {sample} seeded positions per size, 1 s each at most")
    head = f"{'pieces left':>11} {'solved <= 0.1 s':>16} {'solved <= 1 s':>14} {'median time':>12}"
    print(f"{head} {'win/draw/loss <= 1 s':>21}")
    for k, _n, quick, within, mid, wdl in solver_table(sample=sample, seed=seed):
        median = f"{mid:.3f} s" if mid is not None else "> 1 s"
        print(f"{k:>11} {quick:>16.0%} {within:>14.0%} {median:>12} {wdl:>21.0%}", flush=True)


def symmetry_table(depth: int = 2) -> list[tuple[str, int, int, float, float, bool]]:
    """Alpha-beta with and without the root symmetry reduction, to a fixed depth.

    Rows: ``(position, nodes without, nodes with, seconds without, seconds with, same value)``.
    """
    positions = {
        "start": Game(),
        "after 5R@d2": Game.from_moves("5R@d2"),
        "after 5R@d2 1G@d3": Game.from_moves("5R@d2 1G@d3"),
        "after 3B@d2 3R@d3": Game.from_moves("3B@d2 3R@d3"),
        "mid-game (16 plies)": midgame(),
    }
    rows = []
    for name, game in positions.items():
        stats = []
        for sym in (0, 1):
            p = AlphaBetaPlayer(depth=depth, symmetry=sym, seed=1)
            t0 = time.perf_counter()
            p.choose_move(game)
            stats.append((p.last_nodes, time.perf_counter() - t0, p.last_value))
        rows.append((name, stats[0][0], stats[1][0], stats[0][1], stats[1][1], stats[0][2] == stats[1][2]))
    return rows


def main(argv: list[str] | None = None) -> int:
    """Print the figures (``--symmetry``: the symmetry measurement of docs/ai.md instead)."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    if "--symmetry" in args:
        print(f"{'position':<22} {'nodes':>7} {'nodes sym':>9} {'s':>6} {'s sym':>6}  same value")
        for name, n0, n1, t0, t1, same in symmetry_table():
            print(f"{name:<22} {n0:>7} {n1:>9} {t0:>6.2f} {t1:>6.2f}  {same}")
        return 0
    for label, value, unit in figures():
        print(f"{label:<55} {value:>12,.2f} {unit}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
