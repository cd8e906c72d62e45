"""Which games were decided within the endgame solver's reach (issue 31's arena measurement).

For every game record given (``jericho arena --out DIR`` writes them), the positions are solved,
win/draw/loss only, within ``--seconds`` each, from the last backwards until one is not settled
(one table kept along the game: a solved position stays solved).  The first position the solver
settles is where the game became exact; a move after it that changes the exact value (a won or
drawn game thrown away) means the game was decided in a solved position, by that move's player.

    python examples/endgame_decided.py DIR_OR_FILE... [--seconds 0.25]

Prints, per player name: games, games reaching a solved position before their end, the mean
ply there, and the moves that changed the exact value.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

from jericho_game import Game
from jericho_game.ai.solver import Table, solve
from jericho_game.moves import Move
from jericho_game.record import read_record


def south_values(game_moves: list[Move], seconds: float) -> list[int | None]:
    """South's exact value (1/0/-1) before each move and after the last; None where not settled.

    Solved from the end backwards (each position then finds its successors in the table) until
    the first position the solver does not settle in time; the earlier ones count as unsettled.
    """
    games = [Game()]
    for move in game_moves:
        games.append(games[-1].copy())
        games[-1].play(move)
    table = Table(8)
    out: list[int | None] = [None] * len(games)
    for i in range(len(games) - 1, -1, -1):
        game = games[i]
        if game.is_over():
            outcome = game.outcome()
            out[i] = 0 if outcome == "draw" else 1 if outcome == "south" else -1
            continue
        v = solve(game, seconds=seconds, table=table, line=False, distance=False).value
        if v is None:
            break
        out[i] = v if game.turn.value == "south" else -v
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--seconds", type=float, default=0.25, help="solver time per position (default 0.25)")
    args = parser.parse_args(argv)
    files = sorted(f for p in args.paths for f in (p.glob("*.jgn") if p.is_dir() else [p]))
    games: dict[str, int] = defaultdict(int)
    reached = 0
    first_plies: list[int] = []
    decided = 0
    thrown: dict[str, int] = defaultdict(int)
    for f in files:
        rec = read_record(f.read_text(encoding="utf-8"))
        names = {"south": rec.tags.get("South", "?"), "north": rec.tags.get("North", "?")}
        for n in names.values():
            games[n] += 1
        values = south_values(list(rec.moves), args.seconds)
        first = next((i for i, v in enumerate(values[:-1]) if v is not None), None)
        if first is None:
            continue
        reached += 1
        first_plies.append(first)
        changed = False
        for i in range(first, len(values) - 1):
            a, b = values[i], values[i + 1]
            if a is None or b is None or a == b:
                continue
            mover = "south" if i % 2 == 0 else "north"
            sign = 1 if mover == "south" else -1
            if b * sign < a * sign:  # the mover's exact value fell
                thrown[names[mover]] += 1
                changed = True
        decided += changed
    n = len(files)
    print(f"{n} games; {reached} reached a solved position before their end ({reached / max(1, n):.0%})")
    if first_plies:
        print(f"first solved position: ply {sum(first_plies) / len(first_plies):.1f} on average")
    print(f"decided in a solved position (a move there changed the exact value): {decided} ({decided / max(1, n):.0%})")
    for name in sorted(games):
        print(f"  {name:<12} {games[name]:>4} games, moves that threw away a solved value: {thrown[name]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
