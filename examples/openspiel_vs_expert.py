"""OpenSpiel's Python MCTS against the project's players: an outside yardstick.

The arena is the tool for real measurements (parallel games, both sides from the same
openings, Elo with confidence intervals)::

    jericho arena openspiel-mcts:sims=300 expert --games 20 --jobs 2 --seed 1

This script does the same job in miniature with nothing but the Player interface, so
it also shows how to use the bot from Python::

    python examples/openspiel_vs_expert.py                       # 4 games vs expert
    python examples/openspiel_vs_expert.py --opponent mcts --games 10 --sims 500
"""

from __future__ import annotations

import argparse
import time

from jericho_game import Game
from jericho_game.ai import Limit, make_player


def play(south: object, north: object, seed: int) -> tuple[str, dict[str, float]]:
    """One game; returns the outcome and the seconds each side spent."""
    game = Game()
    spent = {"south": 0.0, "north": 0.0}
    while not game.is_over():
        side = str(game.turn)
        player = south if side == "south" else north
        start = time.perf_counter()
        move = player.choose_move(game, Limit(seed=seed + len(game.history)))  # type: ignore[attr-defined]
        spent[side] += time.perf_counter() - start
        game.play(move)
    return game.outcome() or "draw", spent


def main() -> None:
    parser = argparse.ArgumentParser(description="OpenSpiel MCTS against a Jericho player")
    parser.add_argument("--opponent", default="expert", help="a make_player spec (default: expert)")
    parser.add_argument("--sims", type=int, default=300, help="OpenSpiel MCTS simulations per move (default 300)")
    parser.add_argument("--games", type=int, default=4, help="games, sides alternating (default 4)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    bot = make_player(f"openspiel-mcts:sims={args.sims}", seed=args.seed)
    opponent = make_player(args.opponent, seed=args.seed)
    points = 0.0
    for i in range(args.games):
        bot_side = "south" if i % 2 == 0 else "north"
        south, north = (bot, opponent) if bot_side == "south" else (opponent, bot)
        outcome, spent = play(south, north, seed=args.seed * 1000 + i)
        result = "draw" if outcome == "draw" else "win" if outcome == bot_side else "loss"
        points += {"win": 1.0, "draw": 0.5, "loss": 0.0}[result]
        print(
            f"game {i + 1}: OpenSpiel MCTS as {bot_side}: {result} "
            f"(seconds: south {spent['south']:.1f}, north {spent['north']:.1f})",
            flush=True,
        )
    print(f"OpenSpiel MCTS (sims={args.sims}) scored {points}/{args.games} against {args.opponent}")


if __name__ == "__main__":
    main()
