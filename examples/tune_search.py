"""Tune the C search's exploration constant ``c`` and progressive widening ``widen`` by a grid of arena matches.

Each grid point is a match of the candidate ``mcts:...,c=C,widen=W`` against a fixed reference
(the same search with the level's ``c`` and ``widen``) at an equal budget per move, both sides of
the same openings, run by :func:`jericho_game.ai.arena.run_arena`.  Every finished point is written
to ``OUT/points/c=C,widen=W.json`` at once, so a stopped run resumes where it stopped (points
already there are read back, not played again).  At the end it prints the table (score, Elo
difference with a 95% interval) and, with matplotlib, draws ``OUT/curve.png`` (score against
``c``, one line per ``widen``).

    python examples/tune_search.py --out tune --games 200 --nodes 1000 --jobs 2 \\
        --c 0.3,0.5,0.7,1.0,1.4 --widen 2 --also-widen 1,3,4

``--nodes`` (simulations per move, the default: 1000) keeps the points comparable whatever
else the machine is doing, and ``c`` and ``widen`` do not change the cost of a simulation;
``--time`` plays at equal time instead.

The log of the runs made for the levels is in docs/ai.md ("Tuning log").  A grid is the
simplest honest tuner for two parameters: every point is an independent measurement with its
own interval, and the curve shows how flat the optimum is (SPSA or CLOP would find the top
with fewer games but show less of the shape).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from jericho_game.ai.arena import run_arena

#: The search being tuned, without ``c`` and ``widen`` (the master's playouts and proofs).
BASE = "mcts:sims=1000000,greedy=1,solver=1"


def elo_interval(score: float, games: int) -> tuple[float, float, float]:
    """Elo difference of a match score with a 95% normal interval (score clamped away from 0 and 1)."""

    def elo(p: float) -> float:
        p = min(max(p, 0.5 / games), 1 - 0.5 / games)
        return -400 * math.log10(1 / p - 1)

    half = 1.96 * math.sqrt(max(score * (1 - score), 0.25 / games) / games)
    return elo(score), elo(score - half), elo(score + half)


def point(out: Path, c: float, widen: float, args: argparse.Namespace, seed: int) -> dict[str, object]:
    """Play (or read back) one grid point: the candidate against the reference."""
    path = out / "points" / f"c={c:g},widen={widen:g}.json"
    if path.exists():
        return dict(json.loads(path.read_text()))
    candidate = f"{BASE},c={c:g},widen={widen:g}"
    reference = f"{BASE},c={args.ref_c:g},widen={args.ref_widen:g}"
    if candidate == reference:  # the reference against itself scores 50% by definition
        return {"c": c, "widen": widen, "games": 0, "score": 0.5, "reference": True}
    summary = run_arena(
        [candidate, reference], games=args.games, jobs=args.jobs, seed=seed, time_limit=args.time, nodes=args.nodes
    )
    if summary["interrupted"]:  # a point stopped part-way is not kept: a resume plays it again
        raise KeyboardInterrupt("the grid point's match was stopped")
    row = summary["pairings"][0]
    result = {
        "c": c,
        "widen": widen,
        "games": row["games"],
        "wins": row["wins"],
        "draws": row["draws"],
        "losses": row["losses"],
        "score": row["score_a"],
        "time": args.time,
        "nodes": args.nodes,
        "reference": reference,
        "seconds": summary["seconds"],
        "machine": summary["machine"],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=1) + "\n")
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for the points and the curve")
    parser.add_argument("--games", type=int, default=200, help="games per grid point (default 200)")
    budget = parser.add_mutually_exclusive_group()
    budget.add_argument("--time", type=float, default=None, help="seconds per move")
    budget.add_argument("--nodes", type=int, default=None, help="simulations per move (default 1000)")
    parser.add_argument("--jobs", type=int, default=2, help="parallel games (default 2)")
    parser.add_argument("--seed", type=int, default=500, help="arena seed of the first point (default 500)")
    parser.add_argument("--c", default="0.35,0.5,0.7,1.0,1.4", help="values of c, comma-separated")
    parser.add_argument("--widen", default="2", help="values of widen crossed with every c")
    parser.add_argument("--also-widen", default="", help="values of widen tried at the reference c only")
    parser.add_argument("--ref-c", type=float, default=0.7, help="the reference's c (default 0.7)")
    parser.add_argument("--ref-widen", type=float, default=2.0, help="the reference's widen (default 2)")
    args = parser.parse_args(argv)
    if args.time is None and args.nodes is None:
        args.nodes = 1000
    grid = [(float(c), float(w)) for w in args.widen.split(",") for c in args.c.split(",")]
    grid += [(args.ref_c, float(w)) for w in args.also_widen.split(",") if w]
    try:
        rows = [point(args.out, c, w, args, args.seed + k) for k, (c, w) in enumerate(grid)]
    except KeyboardInterrupt:  # Ctrl-C or kill: the finished points are kept, the stopped one is not
        print("interrupted: the same command resumes at the first missing point", file=sys.stderr)
        return 130
    print(f"{'c':>6} {'widen':>6} {'games':>6} {'score':>7} {'Elo':>6}  95% interval")
    for r in rows:
        games = int(r["games"])  # type: ignore[call-overload]
        score = float(r["score"])  # type: ignore[arg-type]
        if games:
            elo, lo, hi = elo_interval(score, games)
            print(f"{r['c']:>6g} {r['widen']:>6g} {games:>6} {score:>7.1%} {elo:>+6.0f}  [{lo:+.0f}, {hi:+.0f}]")
        else:
            print(f"{r['c']:>6g} {r['widen']:>6g} {'-':>6} {'ref':>7}")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(no matplotlib: no curve drawn)", file=sys.stderr)
        return 0
    fig, ax = plt.subplots(figsize=(6, 4))
    for w in sorted({r["widen"] for r in rows}):  # type: ignore[type-var]
        pts = sorted((float(r["c"]), float(r["score"])) for r in rows if r["widen"] == w)  # type: ignore[arg-type]
        if len(pts) > 1:
            ax.plot([p[0] for p in pts], [100 * p[1] for p in pts], marker="o", label=f"widen={w:g}")
        else:
            ax.plot([pts[0][0]], [100 * pts[0][1]], marker="s", linestyle="", label=f"widen={w:g}")
    ax.axhline(50, color="grey", linewidth=0.8)
    ax.set_xlabel("exploration constant c")
    ax.set_ylabel(f"score against c={args.ref_c:g}, widen={args.ref_widen:g} (%)")
    budget = f"{args.time:g} s" if args.time is not None else f"{args.nodes} simulations"
    ax.set_title(f"{args.games} games a point, {budget} a move")
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.out / "curve.png", dpi=100)
    print(f"curve: {args.out / 'curve.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
