"""Generate games whose deciding move the endgame solver knows: the fixture of the review's deciding move
(issue 53 point 1, ``tests/fixtures/review/deciding.jsonl``).

Plays seeded games of each ``--pairs`` pairing (``SOUTH:NORTH``, each side a level name of
``jericho_game.ai.base`` with ``@N`` for its search at N simulations a move instead of its own budget,
e.g. ``expert@4000:expert@4000``, so the games reproduce on any machine; game ``g`` of a pairing seeds
South with ``s = seed + step * g`` and North with ``s + 1``, each move with ``s * 1000 + ply``, as
``examples/review_accuracy.py`` does with ``--step 1``: its games are played again), and for each:

1. **the deep solve**: every position, from the last backwards, goes to the endgame solver
   (win/draw/loss only, ``--deep`` nodes each, one transposition table along the game) until one is
   not settled.  Every position is solved (no inference from the game's theory), so the fixture checks
   the review's walk independently; that no move raised its mover's value is checked here.  The
   **deciding ply** is the last move that changed the game's value (the mover's value fell) inside the
   solved positions; a game where no value changes there (its deciding move lies before what the
   solver reaches) is not kept, unless ``--keep-unknown`` (then its deciding ply is ``null``: random
   against expert is decided long before the solver reaches, and still checks that the review's
   "probably" never names the winner's move);
2. **the review's figures**: a kept game is reviewed as the web review does
   (:func:`jericho_game.ai.analysis.evaluate_game`, ``--sims`` simulations a position, no time cap, so
   the figures reproduce), and each position's South chance, side to move, exactness and the solver's
   value, the preferred move and the chance after it are kept: what the old "decided from" rule
   (:func:`~jericho_game.ai.analysis.decisive`) and the new deciding move's "probably" read.

Writes one JSON line per kept game to ``--out`` (appending, flushed after each game; a game already in
the file is skipped, so a stopped run goes on where it stopped) and a line per game to the standard
output.  One process: run it ``nice``d in the background.  ``--refresh`` reviews again the kept games
whose figures were written by an earlier version of this script (fewer fields a position), in place.

    nice -n 15 python examples/deciding_fixture.py --pairs expert@4000:expert@4000,random:expert@4000 \\
        --games 40 --seed 200 --out tests/fixtures/review/deciding.jsonl > deciding.log 2>&1 &
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

#: South's value per result, and the side to move's value (1, 0, -1) turned to South's.
_SOUTH = {"south": 1, "draw": 0, "north": -1}


def play(south: str, north: str, seed: int) -> list[str]:
    """One seeded game of two sides (``LEVEL`` or ``LEVEL@NODES``): its moves in notation."""
    from jericho_game import Game
    from jericho_game.ai.base import Limit, make_player

    sides = {}
    for side, spec, s in (("south", south, seed), ("north", north, seed + 1)):
        level, _, nodes = spec.partition("@")
        sides[side] = (make_player(level, seed=s), int(nodes) if nodes else None)
    game = Game()
    while not game.is_over():
        player, nodes = sides[game.turn.value]
        limit = Limit(nodes=nodes, seed=seed * 1000 + len(game.history))
        game.play(player.choose_move(game, limit))
    return [str(m) for m in game.history]


def deep_solve(moves: list[str], nodes: int, table_mb: float = 64.0) -> tuple[int, list[int], int]:
    """(the first position solved, South's value 1/0/-1 at each position from there to the end, nodes
    spent): every position from the last backwards until one is not settled within ``nodes``."""
    from jericho_game import Game
    from jericho_game.ai.solver import Table, solve

    games = [Game()]
    for mv in moves:
        games.append(games[-1].copy())
        games[-1].play(mv)
    table = Table(table_mb)
    values: list[int] = []
    spent = 0
    first = len(games)
    for i in range(len(games) - 1, -1, -1):
        game = games[i]
        if game.is_over():
            outcome = game.outcome()
            assert outcome is not None
            v = _SOUTH[outcome]
        else:
            sol = solve(game, nodes=nodes, table=table, line=False, distance=False)
            spent += sol.nodes
            if sol.value is None:
                break
            v = sol.value if game.turn.value == "south" else -sol.value
        values.append(v)
        first = i
    values.reverse()
    return first, values, spent


def deciding_ply(first: int, values: list[int]) -> int | None:
    """The last move that changed South's value inside the solved positions (``values[0]`` is position
    ``first``), checking that no move raised its mover's value; ``None`` when none changed it."""
    found = None
    for k in range(first + 1, first + len(values)):
        before, after = values[k - 1 - first], values[k - first]
        if before != after:
            found = k
    return found


def check_movers(moves: list[str], first: int, values: list[int]) -> None:
    """Game theory, checked on the deep solve: a move never raises its mover's value."""
    from jericho_game import Game

    game = Game()
    for k, mv in enumerate(moves, start=1):
        mover = game.turn.value
        game.play(mv)
        if k - 1 >= first:
            sign = 1 if mover == "south" else -1
            before, after = values[k - 1 - first] * sign, values[k - first] * sign
            assert after <= before, f"move {k} {mv} raised {mover}'s value from {before} to {after}"


def review(moves: list[str], sims: int) -> list[list[Any]]:
    """The review's figures of every position: [South's chance, side to move, exact, solver value, the
    preferred move, South's chance after it (the yardstick of a move's loss)]."""
    from jericho_game.ai.analysis import evaluate_game

    return [
        [round(e.south, 4), e.turn, e.exact, e.value, e.best, None if e.best_after is None else round(e.best_after, 4)]
        for e in evaluate_game(None, moves, sims=sims)
    ]


def main(argv: list[str] | None = None) -> int:
    """Play, solve, keep the games whose deciding move the solver knows."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", default="expert@4000:expert@4000", help="SOUTH:NORTH pairings, comma-separated")
    parser.add_argument("--games", type=int, default=10, help="games per pairing (default 10)")
    parser.add_argument("--seed", type=int, default=200)
    parser.add_argument("--step", type=int, default=2, help="seed step between games (default 2)")
    parser.add_argument("--deep", type=int, default=4_000_000, help="solver nodes per position (default 4,000,000)")
    parser.add_argument("--sims", type=int, default=3000, help="review simulations a position (default 3000)")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--refresh", action="store_true", help="review again the games of an older format")
    parser.add_argument("--keep-unknown", action="store_true", help="keep the games whose deciding move is unknown")
    args = parser.parse_args(argv)
    if args.refresh:
        rows = [json.loads(line) for line in args.out.read_text(encoding="utf-8").splitlines() if line.strip()]
        for row in rows:
            if len(row["review"]["evals"][0]) < 6:
                row["review"] = {"sims": row["review"]["sims"], "evals": review(row["moves"], row["review"]["sims"])}
                print(f"{row['id']}: reviewed again", flush=True)
        text = "".join(json.dumps(row, separators=(",", ":")) + "\n" for row in rows)
        args.out.write_text(text, encoding="utf-8")
        return 0
    pairs = [tuple(p.split(":")) for p in args.pairs.split(",")]
    done: set[str] = set()
    if args.out.exists():
        done = {json.loads(line)["id"] for line in args.out.read_text(encoding="utf-8").splitlines() if line.strip()}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    kept = 0
    for g in range(args.games):
        for south, north in pairs:
            seed = args.seed + args.step * g
            key = f"{south}-{north}-{seed}"
            if key in done:
                continue
            t0 = time.perf_counter()
            moves = play(south, north, seed)
            t1 = time.perf_counter()
            first, values, spent = deep_solve(moves, args.deep)
            check_movers(moves, first, values)
            ply = deciding_ply(first, values)
            t2 = time.perf_counter()
            result = {1: "south", 0: "draw", -1: "north"}[values[-1]]
            line = (
                f"{key}: {result} in {len(moves)} plies, solved from {first} ({spent} nodes), "
                f"deciding ply {ply}; play {t1 - t0:.0f} s, solve {t2 - t1:.0f} s"
            )
            if ply is None and not args.keep_unknown:
                print(line + ", not kept", flush=True)
                continue
            evals = review(moves, args.sims)
            row = {
                "id": key,
                "south": south,
                "north": north,
                "seed": seed,
                "moves": moves,
                "result": result,
                "deep": {"nodes": args.deep, "from": first, "values": values},
                "deciding": ply,
                "mover": None if ply is None else evals[ply - 1][1],
                "review": {"sims": args.sims, "evals": evals},
            }
            with args.out.open("a", encoding="utf-8") as f:
                f.write(json.dumps(row, separators=(",", ":")) + "\n")
            kept += 1
            print(f"{line}, review {time.perf_counter() - t2:.0f} s, kept", flush=True)
    print(
        f"{kept} kept; {time.perf_counter() - start:.0f} s wall, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
