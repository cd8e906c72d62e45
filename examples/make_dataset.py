"""Make a self-play dataset of the project's MCTS (see jericho_game.envs.dataset and docs/interop.md).

python examples/make_dataset.py --out DIR --games 10000 --sims 400 --k 10 --defend --seed 14 --jobs 2  # the set
python examples/make_dataset.py --out examples/data/sample --games 40 --sims 400 --k 10 --defend --seed 14 --shard 40

Games are written in shards (--shard games each) under OUT/shards/ as they finish; rerunning
the same command resumes, and --merge-only assembles the finished shards into a (partial) set.
"""

from __future__ import annotations

import argparse
import json

from jericho_game.envs.dataset import DEFAULT_SIMS, make_dataset


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="the directory to write (games.jgn, plies.npz, datasheet.md)")
    parser.add_argument("--games", type=int, default=10_000, help="how many games (default 10000)")
    parser.add_argument(
        "--sims", type=int, default=DEFAULT_SIMS, help=f"MCTS simulations per move (default {DEFAULT_SIMS})"
    )
    parser.add_argument("--k", type=int, default=3, help="guided playouts play the best of k sampled moves (default 3)")
    parser.add_argument(
        "--defend", action="store_true", help="defended playouts: a side facing a seven breaks it (C kernel only)"
    )
    parser.add_argument("--opening-plies", type=int, default=6, help="plies drawn by visit counts (default 6)")
    parser.add_argument("--seed", type=int, default=0, help="the dataset's seed (default 0)")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--shard", type=int, default=500, help="games per shard file (default 500)")
    parser.add_argument("--merge-only", action="store_true", help="only assemble the finished shards")
    args = parser.parse_args(argv)
    if args.games < 1 or args.sims < 2 or args.jobs < 1 or args.opening_plies < 0 or args.shard < 1 or args.k < 1:
        parser.error(
            "--games, --jobs, --shard and --k must be at least 1, --sims at least 2, --opening-plies at least 0"
        )
    try:
        facts = make_dataset(
            args.out,
            args.games,
            args.sims,
            args.jobs,
            args.seed,
            args.opening_plies,
            args.shard,
            args.merge_only,
            k=args.k,
            defend=args.defend,
        )
    except ValueError as exc:
        parser.error(str(exc))
    print(json.dumps(facts, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
