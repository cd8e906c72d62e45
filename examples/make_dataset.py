"""Make a self-play dataset of the project's MCTS (see jericho_game.envs.dataset and docs/interop.md).

python examples/make_dataset.py --out data/selfplay --games 10000 --sims 200 --jobs 2   # hours: see docs/interop.md
python examples/make_dataset.py --out examples/data/sample --games 20 --sims 200   # the shipped sample
"""

from __future__ import annotations

import argparse
import json

from jericho_game.envs.dataset import make_dataset


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="the directory to write (games.jgn, plies.npz, datasheet.md)")
    parser.add_argument("--games", type=int, default=10_000, help="how many games (default 10000)")
    parser.add_argument(
        "--sims", type=int, default=200, help="MCTS simulations per move (default 200, the medium level)"
    )
    parser.add_argument("--opening-plies", type=int, default=6, help="plies drawn by visit counts (default 6)")
    parser.add_argument("--seed", type=int, default=0, help="the dataset's seed (default 0)")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    args = parser.parse_args(argv)
    if args.games < 1 or args.sims < 2 or args.jobs < 1 or args.opening_plies < 0:
        parser.error("--games and --jobs must be at least 1, --sims at least 2, --opening-plies at least 0")
    facts = make_dataset(args.out, args.games, args.sims, args.jobs, args.seed, args.opening_plies)
    print(json.dumps(facts, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
