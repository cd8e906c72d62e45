"""Measure the game review's accuracy on games between two levels (issue 31: reviews know when the game
was decided).

Plays ``--games`` seeded games of ``--south`` against ``--north`` (game ``g`` seeds both players with
``seed + g`` and each move with its ply), reviews each with :mod:`jericho_game.ai.analysis` at
``--sims`` simulations (at most ``--seconds``) per position, and prints per game the result, the
move after which it was decided, each side's accuracy and the number of moves it counts; then
each side's accuracies summed up (min, median, max).

    python examples/review_accuracy.py --south random --north expert --games 20
    python examples/review_accuracy.py --south expert --north expert --games 20

``--nodes N`` plays the levels' search at N simulations a move instead of their own budget
(``random`` is unaffected).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path


def review_game(
    south: str, north: str, seed: int, sims: int, seconds: float, nodes: int | None = None, save: Path | None = None
) -> dict[str, object]:
    """Play one game and review it: its result, moves, decisive move, accuracy and counted moves."""
    from jericho_game import Game
    from jericho_game.ai import analysis
    from jericho_game.ai.base import Limit, make_player

    players = {"south": make_player(south, seed=seed), "north": make_player(north, seed=seed + 1)}
    game = Game()
    while not game.is_over():
        limit = Limit(nodes=nodes, seed=seed * 1000 + len(game.history))
        game.play(players[game.turn.value].choose_move(game, limit))
    moves = [str(m) for m in game.history]
    evals = analysis.evaluate_game(None, moves, sims=sims, seconds=seconds)
    if save is not None:
        save.mkdir(parents=True, exist_ok=True)
        data = {"moves": moves, "evals": [e.to_dict() for e in evals]}
        (save / f"{south}-{north}-{seed}.json").write_text(json.dumps(data))
    judged = analysis.judge(moves, evals)
    moment = analysis.decisive(evals, len(moves))
    at = moment.ply if moment else None
    return {
        "seed": seed,
        "result": game.outcome(),
        "moves": len(moves),
        "decisive": None if moment is None else (moment.ply, moment.result, moment.exact),
        "accuracy": analysis.accuracy(judged, evals, at),
        "counted": analysis.counted(judged, at),
        "blunders": {s: sum(1 for j in judged if j.side == s and j.mark == "blunder") for s in ("south", "north")},
    }


def main(argv: list[str] | None = None) -> int:
    """Play, review, print."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--south", default="random")
    parser.add_argument("--north", default="expert")
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--seed", type=int, default=100)
    parser.add_argument("--sims", type=int, default=3000, help="review simulations per position (default 3000)")
    parser.add_argument("--seconds", type=float, default=0.4, help="at most this long per position (default 0.4)")
    parser.add_argument("--nodes", type=int, help="the levels' simulations a move (default: their own budget)")
    parser.add_argument("--save", type=Path, help="save each game (moves, evaluations) here as JSON")
    args = parser.parse_args(argv)
    rows = []
    start = time.perf_counter()
    for g in range(args.games):
        row = review_game(args.south, args.north, args.seed + g, args.sims, args.seconds, args.nodes, args.save)
        rows.append(row)
        print(
            f"seed {row['seed']}: {row['result']} in {row['moves']} moves, decided {row['decisive']}, "
            f"accuracy {row['accuracy']}, counted {row['counted']}, blunders {row['blunders']}",
            flush=True,
        )
    for side, level in (("south", args.south), ("north", args.north)):
        accs = [r["accuracy"][side] for r in rows if r["accuracy"][side] is not None]  # type: ignore[index]
        if accs:
            print(
                f"{side} ({level}): accuracy min {min(accs)}, median {statistics.median(accs)}, max {max(accs)} "
                f"over {len(accs)} of {len(rows)} games"
            )
    undecided = sum(1 for r in rows if r["decisive"] is None)
    print(
        f"{len(rows)} games, {undecided} without a deciding move; review at {args.sims} simulations "
        f"(at most {args.seconds:g} s) a position; {time.perf_counter() - start:.0f} s wall, "
        f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
