"""AI speed figures for ``jericho bench`` (each measured in this one process, on one core).

:func:`figures` returns ``(label, value, unit)`` triples:

* MCTS simulations per second from the start position and from a mid-game position,
  with the default guided playouts and with the engine's random playouts;
* alpha-beta nodes per second (iterative deepening from a mid-game position);
* the ``expert`` level's mean and maximum time per move over a few positions, against
  its 3 s promise.

The whole run takes about 15 s.  "Mid-game" is :func:`midgame`: 16 seeded random plies.
Run it alone with ``python -m jericho.players.bench``.
"""

from __future__ import annotations

import random
import time

from jericho.game import Game
from jericho.players.alphabeta import AlphaBetaPlayer
from jericho.players.base import Limit
from jericho.players.levels import EXPERT_TIME, expert
from jericho.players.mcts import MCTSPlayer

__all__ = ["figures", "midgame", "expert_times", "main"]

Figure = tuple[str, float, str]


def midgame(plies: int = 16, seed: int = 2024) -> Game:
    """A fixed mid-game position: ``plies`` seeded random moves from the start (game not over)."""
    rng = random.Random(seed)
    while True:
        game = Game()
        while len(game.history) < plies and not game.is_over():
            moves = game.legal_moves()
            game.play(moves[rng.randrange(len(moves))])
        if not game.is_over():
            return game


def mcts_rate(game: Game, seconds: float, playout: str = "guided") -> float:
    """MCTS simulations per second searching ``game`` for ``seconds``."""
    p = MCTSPlayer(time=seconds / 0.85, reuse=0, playout=playout, seed=1)
    p.choose_move(game)
    return p.sims_per_second


def alphabeta_rate(game: Game, seconds: float) -> float:
    """Alpha-beta nodes per second searching ``game`` for ``seconds``."""
    p = AlphaBetaPlayer(time=seconds / 0.85, seed=1)
    p.choose_move(game)
    return p.nodes_per_second


def expert_times(positions: int = 3) -> tuple[float, float]:
    """Mean and maximum seconds per move of the ``expert`` level over a few positions."""
    times = []
    for k in range(positions):
        game = midgame(plies=4 + 12 * k, seed=77 + k)
        player = expert(seed=k)
        t0 = time.perf_counter()
        player.choose_move(game, Limit(seed=k))
        times.append(time.perf_counter() - t0)
    return sum(times) / len(times), max(times)


def figures(seconds: float = 2.0, expert_positions: int = 3) -> list[Figure]:
    """The AI speed figures (about ``5 * seconds`` plus the expert's moves, ~14 s in all)."""
    start = Game()
    mid = midgame()
    out: list[Figure] = [
        ("MCTS simulations/s, start position (guided playouts)", mcts_rate(start, seconds), "sims/s"),
        ("MCTS simulations/s, mid-game (guided playouts)", mcts_rate(mid, seconds), "sims/s"),
        ("MCTS simulations/s, start position (random playouts)", mcts_rate(start, seconds, "random"), "sims/s"),
        ("MCTS simulations/s, mid-game (random playouts)", mcts_rate(mid, seconds, "random"), "sims/s"),
        ("alpha-beta nodes/s, mid-game (16 plies)", alphabeta_rate(mid, seconds), "nodes/s"),
    ]
    if expert_positions > 0:
        mean, worst = expert_times(expert_positions)
        out.append((f"expert mean time per move (limit {EXPERT_TIME} s, promise 3 s)", mean, "s"))
        out.append(("expert max time per move", worst, "s"))
    return out


def main() -> int:
    """Print the figures."""
    for label, value, unit in figures():
        print(f"{label:<55} {value:>12,.2f} {unit}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
