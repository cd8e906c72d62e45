"""Why the learned evaluator's value loses to a playout (issue 32 point 2): learning curves on a
held-out set of positions labelled by the endgame solver or a deep search.

    python examples/value_study.py --out study --positions 120 --games 400

Stages, each kept in ``OUT`` so that a run stopped at any point resumes:

1. ``heldout.npz``: ``--positions`` positions labelled by the solver where it proves them and by
   the strongest search (``--label-sims``) elsewhere (:mod:`jericho_game.ai.heldout`).
2. ``data-NNN.npz``: self-play positions of the plain strong search (``--sims`` a move), in
   shards of 50 games; each position has the game's result and the search's value.
3. Networks trained from scratch on the first 1/4, 1/2 and all of the data with three value
   targets: the game's result, the search's value (distillation), and the training run's
   0.7/0.3 blend; each scored on the held-out set.  Baselines: the shipped network, one greedy
   playout (what the search uses at a leaf), the mean of 4 and 16 playouts.

Results go to ``OUT/results.json`` and a table on the standard output; the best network to
``OUT/best.npz`` (for the arena: ``evaluator=OUT/best.npz,mix=1``).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from jericho_game.ai import evalnet, heldout, selfplay


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--positions", type=int, default=120)
    ap.add_argument("--label-sims", type=int, default=8000)
    ap.add_argument("--games", type=int, default=400)
    ap.add_argument("--sims", type=int, default=200)
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--hidden", default="128,64")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--l2", type=float, default=1e-5, help="weight decay of the networks trained")
    ap.add_argument("--tag", default="", help="suffix of results-TAG.json and best-TAG.npz (another variant)")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()

    path = out / "heldout.npz"
    if not path.exists():
        heldout.make(args.positions, seed=32, sims=args.label_sims, log=print).save(path)
    held = heldout.load(path)
    states = held.states()
    solved = int((held.how == heldout.SOLVED).sum())
    print(f"held-out: {len(held)} positions, {solved} solved ({time.monotonic() - t0:.0f} s)")

    shards = []
    for k in range(0, args.games, 50):
        shard = out / f"data-{k // 50:03d}.npz"
        if not shard.exists():
            play = selfplay.SelfPlayConfig(sims=args.sims)
            data = selfplay.play_games(play, None, min(50, args.games - k), seed=9000 + k // 50, jobs=args.jobs)
            tmp = shard.with_name(shard.name + ".tmp.npz")
            np.savez_compressed(tmp, **data)
            tmp.replace(shard)
            print(f"data: {k + 50} games ({time.monotonic() - t0:.0f} s)", flush=True)
        with np.load(shard) as d:
            shards.append({key: d[key] for key in d.files})

    preds = {
        "one greedy playout": heldout.playout_values(states, 1),
        "mean of 4 playouts": heldout.playout_values(states, 4),
        "mean of 16 playouts": heldout.playout_values(states, 16),
        "shipped network": heldout.net_values(evalnet.SHIPPED, states),
        "the constant 0": np.zeros(len(held), dtype=np.float32),
    }
    hidden = tuple(int(h) for h in args.hidden.split(","))
    best = (9.0, "")
    n = len(shards)
    sizes = sorted({max(1, n // 4), max(1, n // 2), n})
    for share, name in ((1.0, "result"), (0.7, "0.7 result + 0.3 search"), (0.0, "search value (distilled)")):
        for size in sizes:
            net = evalnet.EvalNet.random((hidden[0], hidden[1]), seed=1)
            cfg = selfplay.TrainConfig(
                hidden=(hidden[0], hidden[1]), epochs=args.epochs, result_share=share, l2=args.l2
            )
            figs = selfplay.train(net, shards[:size], cfg, seed=5)
            label = f"net, target {name}, {int(figs['positions'])} positions"
            preds[label] = heldout.net_values(net, states)
            mse = float(((preds[label] - held.label) ** 2).mean())
            if mse < best[0]:
                best = (mse, label)
                net.meta.update(study=label)
                net.save(out / f"best{args.tag}.npz")
            print(f"{label}: held-out value MSE {mse:.3f} ({time.monotonic() - t0:.0f} s)", flush=True)

    rep = heldout.report(held, preds)
    (out / f"results{args.tag}.json").write_text(json.dumps(rep, indent=1))
    print(f"\n{'predictor':60} {'MSE all':>8} {'sign':>6} {'MSE solved':>11} {'MSE searched':>13}")
    for name, r in rep.items():
        print(
            f"{name:60} {r['all']['mse']:8.3f} {r['all']['sign']:6.1%} "
            f"{r['solved'].get('mse', float('nan')):11.3f} {r['searched'].get('mse', float('nan')):13.3f}"
        )
    print(f"best: {best[1]} (saved as {out / f'best{args.tag}.npz'})")


if __name__ == "__main__":
    main()
