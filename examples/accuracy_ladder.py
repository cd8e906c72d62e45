"""Games of each ladder level against one fixed opponent, reviewed: the data the review's accuracy is
calibrated on (issue 53 point 2, ``tests/fixtures/review/ladder.jsonl``).

For each level of ``--levels`` plays ``--games`` seeded games against ``--opponent`` (the level South
in even games, North in odd ones; game ``g`` seeds the level with ``seed + 2 g`` and the opponent with
the next number; each side plays with its own budget, as on the site), then reviews each game as the
web review does (:func:`jericho_game.ai.analysis.evaluate_game`, ``--sims`` simulations a position and
**no time limit**, so the figures are the same on any machine at any load), and keeps for each
position South's chance, the side to move, exactness, the solver's value, the preferred move and the
chance after it (what :func:`~jericho_game.ai.analysis.judge` and the accuracy read).

Writes one JSON line per game to ``--out`` (appending and flushed after each; a game already there is
skipped, so a stopped run goes on where it stopped) and prints a line per game.  One process; shard a
run by levels and write each shard to its own file, then concatenate.  ``--fit FILE`` prints
:func:`jericho_game.ai.calibration.table`: for each scale of the loss, each level's median accuracy,
whether the medians are ordered along the ladder, their smallest gap, Kendall's tau between the games'
accuracies and their levels, and the scale it picks (docs/web.md, "Game review"):

    nice -n 5 python examples/accuracy_ladder.py --levels random,easy,medium,hard --out a.jsonl &
    nice -n 5 python examples/accuracy_ladder.py --levels strong,skilled,expert,master --out b.jsonl &
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any


def play(south: str, north: str, south_seed: int, north_seed: int) -> list[str]:
    """One seeded game between two levels, each with its own budget: its moves in notation."""
    from jericho_game import Game
    from jericho_game.ai.base import Limit, make_player

    players = {"south": make_player(south, seed=south_seed), "north": make_player(north, seed=north_seed)}
    game = Game()
    while not game.is_over():
        limit = Limit(seed=(south_seed * 1000 + len(game.history)))
        game.play(players[game.turn.value].choose_move(game, limit))
    return [str(m) for m in game.history]


def review(moves: list[str], sims: int) -> list[list[Any]]:
    """Every position's figures: [South's chance, side to move, exact, solver value, preferred move,
    South's chance after it], at ``sims`` simulations a position and no time limit."""
    from jericho_game.ai.analysis import evaluate_game

    return [
        [round(e.south, 4), e.turn, e.exact, e.value, e.best, None if e.best_after is None else round(e.best_after, 4)]
        for e in evaluate_game(None, moves, sims=sims, seconds=None)
    ]


def main(argv: list[str] | None = None) -> int:
    """Play and review the games, appending each to ``--out``; or, with ``--fit``, fit the scale."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--levels", default="random,easy,medium,hard,strong,skilled,expert,master")
    parser.add_argument("--opponent", default="hard")
    parser.add_argument("--games", type=int, default=10, help="games per level (default 10)")
    parser.add_argument("--seed", type=int, default=700)
    parser.add_argument("--sims", type=int, default=5000, help="review simulations a position (default 5000)")
    parser.add_argument("--out", type=Path, help="the JSON lines file the games are appended to")
    parser.add_argument("--fit", type=Path, help="fit the accuracy's scale on this file's games and print the table")
    args = parser.parse_args(argv)
    from jericho_game.ai import calibration

    if args.fit is not None:
        rows = [json.loads(x) for x in args.fit.read_text(encoding="utf-8").splitlines() if x.strip()]
        ladder = [level for level in args.levels.split(",") if any(r["level"] == level for r in rows)]
        print(calibration.table(rows, ladder))
        return 0
    if args.out is None:
        parser.error("--out is required (or --fit FILE)")
    from jericho_game import Game

    done = set()
    if args.out.exists():
        done = {json.loads(x)["id"] for x in args.out.read_text(encoding="utf-8").splitlines() if x.strip()}
    for level in args.levels.split(","):
        for g in range(args.games):
            seed = args.seed + 2 * g
            side = "south" if g % 2 == 0 else "north"
            key = f"{level}-{args.opponent}-{side}-{seed}"
            if key in done:
                continue
            t0 = time.monotonic()
            if side == "south":
                moves = play(level, args.opponent, seed, seed + 1)
            else:
                moves = play(args.opponent, level, seed + 1, seed)
            played = time.monotonic() - t0
            evals = review(moves, args.sims)
            outcome = Game.from_moves(moves).outcome()
            row = {
                "id": key,
                "level": level,
                "opponent": args.opponent,
                "side": side,
                "seed": seed,
                "moves": moves,
                "result": outcome,
                "sims": args.sims,
                "evals": evals,
            }
            with args.out.open("a", encoding="utf-8") as f:
                f.write(json.dumps(row, separators=(",", ":")) + "\n")
            took = time.monotonic() - t0
            line = f"{key}: {outcome} in {len(moves)} plies, played {played:.0f} s, reviewed {took - played:.0f} s"
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
