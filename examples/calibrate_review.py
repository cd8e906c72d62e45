"""Fit the review's calibration: the search's value turned into a winning chance (issue 31).

A game review (:mod:`jericho_game.ai.analysis`) reads a position's winning chance from the master
search's root (``master-v3``'s: the master before the value network, the search this was fitted
to).  The raw share of simulations won is not a probability: a search whose playouts
are greedy scores a lost position near 30 %, so a hopeless move loses "only" a few points.  This
script plays self-play games with the review's own search (``analysis._search``: the master search
at ``--sims`` simulations) after a few random opening plies (so that the games differ and some
positions are lopsided), records in every position the mover's root value and the value of its
most visited move, and labels each position with the game's result for the mover (1 won, ½ drawn,
0 lost).  Positions the search proves or its endgame solver settles are left out (the review reads them as exact).

It then fits, by maximum likelihood (cross-entropy, draws as ½), one steepness ``a`` per reading
in ``chance = 1 / (1 + ((1 - v) / v) ** a)`` — a logistic on the value's log-odds, symmetric so
that the two sides' chances add up to 1 — and prints ``a``, the log-loss of the raw and the
calibrated values, and a reliability table.  The coefficient the review uses is written in
``analysis.CALIBRATION`` with the command that produced it:

    python examples/calibrate_review.py --games 40 --sims 3000 --seed 1 --out calib.json
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from pathlib import Path


def _self_play(seed: int, sims: int, seconds: float, opening: int) -> list[dict[str, float | int | str]]:
    """One game: ``opening`` random plies, then the review's search on both sides; its positions."""
    from jericho_game import Game
    from jericho_game.ai.base import Limit
    from jericho_game.ai.levels import master_v3

    rng = random.Random(seed)
    game = Game()
    rows: list[dict[str, float | int | str]] = []
    player = master_v3(seed=seed, time=seconds)
    while not game.is_over():
        ply = len(game.history)
        legal = game.legal_moves()
        if ply < opening:
            game.play(rng.choice(legal))
            continue
        if len(legal) == 1:
            game.play(legal[0])
            continue
        player.last_children = []  # a root the endgame solver settles runs no search: no stale figures
        move = player.choose_move(game, Limit(nodes=sims, time=seconds, seed=seed * 1000 + ply))
        children = getattr(player, "last_children", [])
        visits = sum(n for _, n, _ in children)
        settled = getattr(player, "last_proven", False) or getattr(player, "last_solution", None) is not None
        if visits and not settled:
            top = max(children, key=lambda ch: (ch[1], ch[2]))
            rows.append(
                {
                    "ply": ply,
                    "turn": game.turn.value,
                    "mean": sum(w for _, _, w in children) / visits,
                    "top": top[2] / top[1] if top[1] else 0.5,
                }
            )
        game.play(move)
    result = game.outcome()
    for row in rows:
        row["y"] = 0.5 if result == "draw" else 1.0 if result == row["turn"] else 0.0
    return rows


def calibrated(v: float, a: float) -> float:
    """The chance for a raw value ``v`` with steepness ``a``: ``1 / (1 + ((1 - v) / v) ** a)``."""
    v = min(1.0 - 1e-4, max(1e-4, v))
    return 1.0 / (1.0 + ((1.0 - v) / v) ** a)


def log_loss(rows: list[dict[str, float | int | str]], key: str, a: float) -> float:
    """Mean cross-entropy of the labels under the calibrated reading ``key``."""
    total = 0.0
    for row in rows:
        p = min(1.0 - 1e-9, max(1e-9, calibrated(float(row[key]), a)))
        y = float(row["y"])
        total -= y * math.log(p) + (1.0 - y) * math.log(1.0 - p)
    return total / len(rows)


def fit(rows: list[dict[str, float | int | str]], key: str) -> float:
    """The steepness ``a`` (0.2-8) of least log-loss, by golden-section search (the loss is convex in ``a``
    near its minimum for these data)."""
    lo, hi = 0.2, 8.0
    g = (math.sqrt(5) - 1) / 2
    for _ in range(60):
        m1, m2 = hi - g * (hi - lo), lo + g * (hi - lo)
        if log_loss(rows, key, m1) < log_loss(rows, key, m2):
            hi = m2
        else:
            lo = m1
    return round((lo + hi) / 2, 3)


def main(argv: list[str] | None = None) -> int:
    """Play, fit, print; ``--data`` refits saved positions without playing."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--sims", type=int, default=3000, help="the search's simulations per position")
    parser.add_argument("--seconds", type=float, default=1.0, help="at most this long per position")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, help="write the positions here (JSON)")
    parser.add_argument("--data", type=Path, help="fit these saved positions instead of playing")
    args = parser.parse_args(argv)
    if args.data:
        rows = json.loads(args.data.read_text())
    else:
        rows = []
        start = time.perf_counter()
        for g in range(args.games):
            seed = args.seed * 10_000 + g
            rows += _self_play(seed, args.sims, args.seconds, opening=random.Random(seed).randint(0, 6))
            print(
                f"game {g + 1}/{args.games}: {len(rows)} positions, {time.perf_counter() - start:.0f} s",
                file=sys.stderr,
            )
            if args.out:
                args.out.write_text(json.dumps(rows))
    print(f"{len(rows)} positions")
    for key in ("mean", "top"):
        a = fit(rows, key)
        print(f"{key}: a = {a}; log-loss raw {log_loss(rows, key, 1.0):.4f}, calibrated {log_loss(rows, key, a):.4f}")
        bins: dict[int, list[float]] = {}
        for row in rows:
            bins.setdefault(min(9, int(calibrated(float(row[key]), a) * 10)), []).append(float(row["y"]))
        for b in sorted(bins):
            ys = bins[b]
            print(
                f"  chance {b * 10:3d}-{b * 10 + 10:3d} %: {len(ys):4d} positions, "
                f"scored {100 * sum(ys) / len(ys):5.1f} %"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
