"""How often an MCTS tree of Jericho reaches one position by two move orders (transpositions).

A transposition table for MCTS shares the statistics of nodes that hold the same position; it
pays only when such nodes are common.  This script searches a few positions with the reference
search (``mcts-py``, whose tree Python can walk), hashes every node's position with the engine's
Zobrist key, and prints how many nodes share a position with another node and what share of
the visits they hold, with the tree's depth profile.

    python examples/count_transpositions.py --sims 30000

In Jericho a position includes the last placement (the asymmetry rule looks at it), so two
orders meet only when the same player's moves are swapped and the last move is the same: four
plies deep at least, where a search with ~650 moves a position and progressive widening has
few nodes.  docs/ai.md ("Tuning log") has the figures.
"""

from __future__ import annotations

import argparse
import random
from collections import Counter
from collections.abc import Iterator

from jericho_game import Game, kernel
from jericho_game.ai.mcts import MCTSPlayer, Node


def count(game: Game, sims: int, seed: int, c: float) -> dict[str, object] | None:
    """Search ``game`` and count the tree's nodes by position (None: the move needed no search)."""
    player = MCTSPlayer(sims=sims, seed=seed, c=c)
    player.choose_move(game)
    root = player._root  # the reference search keeps its tree for reuse
    if root is None or player.last_sims == 0:  # a forced move or a certain win
        return None
    state = kernel.python_state(game.state.copy())
    nodes: Counter[int] = Counter()
    visits: Counter[int] = Counter()
    depths: Counter[int] = Counter()

    def walk(node: Node, depth: int) -> None:
        for child in node.children:
            state.push(child.code)
            key = state.hash_key()
            nodes[key] += 1
            visits[key] += child.n
            depths[depth] += 1
            walk(child, depth + 1)
            state.pop()

    walk(root, 1)
    total = sum(nodes.values())
    shared = [key for key, n in nodes.items() if n > 1]
    return {
        "nodes": total,
        "positions": len(nodes),
        "shared_nodes": sum(nodes[k] for k in shared),
        "shared_visits": sum(visits[k] for k in shared) / max(1, sum(visits.values())),
        "depths": dict(sorted(depths.items())),
    }


def random_games(plies: int, seed: int) -> Iterator[Game]:
    """Games of ``plies`` random moves that are not over (random games often end early by a seven)."""
    for attempt in range(1000):
        game, rng = Game(), random.Random(seed * 1000 + attempt)
        for _ in range(plies):
            if game.is_over():
                break
            moves = game.legal_moves()
            game.play(moves[rng.randrange(len(moves))])
        if not game.is_over():
            yield game
    raise SystemExit(f"no random game of {plies} plies that needs a search: ask for fewer")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sims", type=int, default=30000, help="simulations per search (default 30000)")
    parser.add_argument("--plies", default="0,12,24,36", help="random plies played before each search")
    parser.add_argument("--c", type=float, default=0.3, help="exploration constant (the levels': 0.3)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    for i, plies in enumerate(int(p) for p in args.plies.split(",")):
        games = random_games(plies, args.seed * 100 + i)
        f = next(found for game in games if (found := count(game, args.sims, args.seed, args.c)) is not None)
        print(
            f"after {plies} plies: {f['nodes']} nodes, {f['positions']} positions, "
            f"{f['shared_nodes']} nodes share a position ({f['shared_nodes'] / max(1, f['nodes']):.1%}), "
            f"holding {f['shared_visits']:.1%} of the visits; nodes by depth {f['depths']}"
        )


if __name__ == "__main__":
    main()
