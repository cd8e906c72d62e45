"""Training the learned evaluator by self-play (expert iteration, as AlphaZero does).

One generation: the C search (greedy playouts and the MCTS-solver, the master's search)
plays ``games`` games against itself, guided by the current network once there is one;
every searched position is kept with the root's visit distribution and, when the game is
over, its result.  The network then learns the visit distributions (cross-entropy over the
legal moves) and the results (squared error, blended with the search's own value) on the
last few generations' positions, each also mirrored left-right; the next generation
searches with the new weights.  Everything runs on the CPU with NumPy (the network is small
and its input sparse), so no PyTorch is needed to train either.

``jericho train --out DIR`` runs generations until ``--generations`` or ``--hours``; each
generation's games (``games-NNN.npz``) and weights (``net-NNN.npz``) are files in ``DIR``, so
a run stopped at any point resumes where it was, and ``log.jsonl`` has one line per
generation (losses, held-out accuracy, games per second).  docs/ai.md, "The learned
evaluator", has the command used for the shipped weights and its measurements.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from jericho_game import kernel
from jericho_game.ai import evalnet
from jericho_game.ai._util import evaluator_path
from jericho_game.envs.encoding import default_encoding

__all__ = ["SelfPlayConfig", "TrainConfig", "play_games", "train", "expert_iteration", "add_arguments", "run"]

#: The network's actions: the encoding's (650 placements and the pass on the standard board).
N_ACTIONS = default_encoding().n_actions


@dataclass
class SelfPlayConfig:
    """How the games of one generation are played."""

    sims: int = 400
    c: float = 0.3
    widen: float = 2.0
    mix: float = 0.5
    cprior: float = 1.0
    #: Plies at the start of a game whose move is drawn in proportion to the visits (variety).
    sample_plies: int = 12


@dataclass
class TrainConfig:
    """How the network learns from a window of generations."""

    hidden: tuple[int, int] = (128, 64)
    window: int = 4
    epochs: int = 3
    batch: int = 256
    lr: float = 1e-3
    l2: float = 1e-5
    #: The value target: this share of the game's result, the rest the search's value.
    result_share: float = 0.7
    holdout: float = 0.05


# ---------------------------------------------------------------------------------------------
# Self-play


def _samples_of_game(cfg: SelfPlayConfig, net: Any, seed: int) -> dict[str, list[Any]]:
    """Play one game; returns its positions as ragged lists (features, legal actions, policy)."""
    rng = random.Random(seed)
    state = kernel.new_state(default_encoding().tables, "c")
    rec: dict[str, list[Any]] = {"feat": [], "legal": [], "pol_a": [], "pol_p": [], "q": [], "turn": []}
    extra = {"net": net, "mix": cfg.mix, "cprior": cfg.cprior} if net is not None else {}
    ply = 0
    while state.outcome < 0:
        codes = state.legal_codes()
        if len(codes) == 1:
            state.push(codes[0])
            ply += 1
            continue
        _done, _secs, _nodes, children = kernel.C.mcts(
            state,
            rng.getrandbits(64),
            sims=cfg.sims,
            c=cfg.c,
            widen=cfg.widen,
            greedy=True,
            solver=True,
            proofs=True,
            **extra,
        )
        visits = np.array([ch[1] for ch in children], dtype=np.float64)
        total = visits.sum()
        for mirror in (False, True):
            amap = evalnet.action_map(state.turn, mirror)
            rec["feat"].append(np.array(evalnet.features(state, mirror), dtype=np.int16))
            rec["legal"].append(amap[np.array(codes)].astype(np.int16))
            rec["pol_a"].append(amap[np.array([ch[0] for ch in children])].astype(np.int16))
            rec["pol_p"].append((visits / total).astype(np.float32))
            rec["q"].append(2.0 * sum(ch[2] for ch in children) / total - 1.0)
            rec["turn"].append(state.turn)
        won = [ch for ch in children if ch[3] == 1]
        if won:
            move = won[0][0]
        elif ply < cfg.sample_plies:
            move = children[rng.choices(range(len(children)), weights=visits.tolist())[0]][0]
        else:
            move = max(children, key=lambda ch: (ch[3] != 0, ch[1], ch[2]))[0]
        state.push(move)
        ply += 1
    outcome = state.outcome
    rec["z"] = [0.0 if outcome == 2 else (1.0 if outcome == t else -1.0) for t in rec["turn"]]
    rec["plies"] = [ply]
    return rec


def _worker(args: tuple[SelfPlayConfig, str | None, list[int]]) -> dict[str, list[Any]]:
    cfg, weights, seeds = args
    net = evalnet.kernel_net(weights) if weights else None
    out: dict[str, list[Any]] = {}
    for seed in seeds:
        for key, values in _samples_of_game(cfg, net, seed).items():
            out.setdefault(key, []).extend(values)
    return out


def _ragged(arrays: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    lengths = np.array([len(a) for a in arrays], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    flat = np.concatenate(arrays) if arrays else np.zeros(0)
    return flat, offsets


def play_games(
    cfg: SelfPlayConfig, weights: str | Path | None, games: int, seed: int, jobs: int = 1
) -> dict[str, np.ndarray]:
    """Play ``games`` self-play games (``jobs`` processes); the positions as flat arrays."""
    seeds = [seed * 1_000_003 + i for i in range(games)]
    chunks = [seeds[i::jobs] for i in range(jobs)]
    tasks = [(cfg, str(weights) if weights else None, chunk) for chunk in chunks if chunk]
    if jobs > 1:
        with multiprocessing.get_context("spawn").Pool(jobs) as pool:
            parts = pool.map(_worker, tasks)
    else:
        parts = [_worker(task) for task in tasks]
    merged: dict[str, list[Any]] = {}
    for part in parts:
        for key, values in part.items():
            merged.setdefault(key, []).extend(values)
    out: dict[str, np.ndarray] = {}
    for key in ("feat", "legal", "pol_a", "pol_p"):
        out[key], out[key + "_off"] = _ragged(merged.get(key, []))
    out["q"] = np.array(merged.get("q", []), dtype=np.float32)
    out["z"] = np.array(merged.get("z", []), dtype=np.float32)
    out["plies"] = np.array(merged.get("plies", []), dtype=np.int32)
    return out


# ---------------------------------------------------------------------------------------------
# Training (NumPy: a two-layer perceptron with Adam)


class _Adam:
    def __init__(self, params: dict[str, np.ndarray], lr: float) -> None:
        self.lr, self.t = lr, 0
        self.m = {k: np.zeros_like(v) for k, v in params.items()}
        self.v = {k: np.zeros_like(v) for k, v in params.items()}

    def step(self, params: dict[str, np.ndarray], grads: dict[str, np.ndarray]) -> None:
        self.t += 1
        b1, b2 = 0.9, 0.999
        corr = math.sqrt(1 - b2**self.t) / (1 - b1**self.t)
        for k, g in grads.items():
            self.m[k] = b1 * self.m[k] + (1 - b1) * g
            self.v[k] = b2 * self.v[k] + (1 - b2) * g * g
            params[k] -= self.lr * corr * self.m[k] / (np.sqrt(self.v[k]) + 1e-8)


def _batch(data: dict[str, np.ndarray], rows: np.ndarray, nf: int, share: float) -> tuple[np.ndarray, ...]:
    n = len(rows)
    x = np.zeros((n, nf), dtype=np.float32)
    legal = np.zeros((n, N_ACTIONS), dtype=bool)
    target = np.zeros((n, N_ACTIONS), dtype=np.float32)
    fo, lo, po = data["feat_off"], data["legal_off"], data["pol_a_off"]
    for i, r in enumerate(rows):
        x[i, data["feat"][fo[r] : fo[r + 1]]] = 1.0
        legal[i, data["legal"][lo[r] : lo[r + 1]]] = True
        target[i, data["pol_a"][po[r] : po[r + 1]]] = data["pol_p"][po[r] : po[r + 1]]
    z = share * data["z"][rows] + (1 - share) * data["q"][rows]
    return x, legal, target, z.astype(np.float32)


def _step(
    p: dict[str, np.ndarray],
    x: np.ndarray,
    legal: np.ndarray,
    target: np.ndarray,
    z: np.ndarray,
    l2: float,
    want_grads: bool = True,
) -> tuple[float, float, float, dict[str, np.ndarray]]:
    """Losses (policy cross-entropy, value squared error, top-1 agreement) and gradients."""
    n = len(x)
    a1 = x @ p["w1"] + p["b1"]
    h1 = np.maximum(a1, 0.0)
    a2 = h1 @ p["w2"].T + p["b2"]
    h2 = np.maximum(a2, 0.0)
    v = np.tanh(h2 @ p["wv"] + p["bv"][0])
    logits = h2 @ p["wp"].T + p["bp"]
    logits = np.where(legal, logits, -1e9)
    logits -= logits.max(axis=1, keepdims=True)
    e = np.exp(logits) * legal
    prob = e / e.sum(axis=1, keepdims=True)
    ce = float(-(target * np.log(prob + 1e-12)).sum(axis=1).mean())
    mse = float(((v - z) ** 2).mean())
    top1 = float((prob.argmax(axis=1) == target.argmax(axis=1)).mean())
    grads: dict[str, np.ndarray] = {}
    if want_grads:
        dlog = (prob - target) / n
        dv = (2.0 * (v - z) * (1.0 - v * v) / n).astype(np.float32)
        grads["wp"] = dlog.T @ h2 + l2 * p["wp"]
        grads["bp"] = dlog.sum(axis=0)
        grads["wv"] = h2.T @ dv + l2 * p["wv"]
        grads["bv"] = np.array([dv.sum()], dtype=np.float32)
        dh2 = (dlog @ p["wp"] + np.outer(dv, p["wv"])) * (a2 > 0)
        grads["w2"] = dh2.T @ h1 + l2 * p["w2"]
        grads["b2"] = dh2.sum(axis=0)
        dh1 = (dh2 @ p["w2"]) * (a1 > 0)
        grads["w1"] = x.T @ dh1 + l2 * p["w1"]
        grads["b1"] = dh1.sum(axis=0)
    return ce, mse, top1, grads


def _concat(shards: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    for key in ("feat", "legal", "pol_a", "pol_p"):
        flats, offs, base = [], [np.zeros(1, dtype=np.int64)], 0
        for s in shards:
            flats.append(s[key])
            offs.append(s[key + "_off"][1:] + base)
            base += int(s[key + "_off"][-1])
        out[key] = np.concatenate(flats)
        out[key + "_off"] = np.concatenate(offs)
    for key in ("q", "z"):
        out[key] = np.concatenate([s[key] for s in shards])
    return out


def train(net: evalnet.EvalNet, shards: list[dict[str, np.ndarray]], cfg: TrainConfig, seed: int) -> dict[str, float]:
    """Train ``net`` in place on the positions of ``shards``; returns the held-out figures.

    Positions come in mirrored pairs; a pair is held out or trained on together, so the
    held-out figures measure positions the network has not seen in either orientation."""
    data = _concat(shards)
    n = len(data["z"])
    rng = np.random.default_rng(seed)
    pairs = rng.permutation(n // 2)
    n_hold = max(1, int(len(pairs) * cfg.holdout)) if len(pairs) > 1 else 0
    hold = np.concatenate([2 * pairs[:n_hold], 2 * pairs[:n_hold] + 1])
    fit = np.concatenate([2 * pairs[n_hold:], 2 * pairs[n_hold:] + 1])
    params = net.arrays
    opt = _Adam(params, cfg.lr)
    nf = params["w1"].shape[0]
    for _epoch in range(cfg.epochs):
        order = rng.permutation(fit)
        for i in range(0, len(order), cfg.batch):
            rows = order[i : i + cfg.batch]
            x, legal, target, z = _batch(data, rows, nf, cfg.result_share)
            _ce, _mse, _top1, grads = _step(params, x, legal, target, z, cfg.l2)
            opt.step(params, grads)
    figures = {"positions": float(len(fit)), "held_out": float(len(hold))}
    if len(hold):
        x, legal, target, z = _batch(data, hold[:4096], nf, 1.0)
        ce, mse, top1, _ = _step(params, x, legal, target, z, 0.0, want_grads=False)
        figures.update(policy_loss=ce, value_mse=mse, top1=top1)
    for key in params:
        params[key] = params[key].astype(np.float32)
    return figures


# ---------------------------------------------------------------------------------------------
# The loop


def _load_shard(path: Path) -> dict[str, np.ndarray]:
    with np.load(path) as data:
        return {key: data[key] for key in data.files}


def expert_iteration(
    out: str | Path,
    generations: int,
    games: int,
    play: SelfPlayConfig | None = None,
    learn: TrainConfig | None = None,
    jobs: int = 1,
    hours: float | None = None,
    seed: int = 0,
    log: Any = print,
    init: str | Path | None = None,
) -> Path | None:
    """Expert iteration in ``out`` until ``generations`` (or ``hours``); resumes from its files.

    ``init``: weights a new run starts from (its first generation already searches with them,
    and its hidden sizes are theirs), e.g. the shipped evaluator to train it further.
    Returns the latest weights file (None before the first generation is trained)."""
    play = play or SelfPlayConfig()
    learn = learn or TrainConfig()
    root = Path(out)
    root.mkdir(parents=True, exist_ok=True)
    config = {"play": asdict(play), "learn": asdict(learn), "init": None if init is None else str(init)}
    (root / "config.json").write_text(json.dumps(config, indent=1))  # with `init`, its sizes, not learn's
    started = time.monotonic()
    latest = _latest(root)
    if latest is None and init is not None:  # a new run from given weights
        latest = Path(init)
        evalnet.load(latest)  # refuse bad weights before an hour of self-play, naming the fault
    for gen in range(generations):
        weights = root / f"net-{gen + 1:03d}.npz"
        if weights.exists():
            continue
        if hours is not None and time.monotonic() - started > hours * 3600:
            log(f"stopping: {hours} h spent")
            break
        shard = root / f"games-{gen:03d}.npz"
        playing = latest  # none for a new run's first generation, unless it starts from `init`
        if not shard.exists():
            t0 = time.monotonic()
            data = play_games(play, playing, games, seed=seed * 1000 + gen, jobs=jobs)
            tmp = shard.with_name(shard.name + ".tmp.npz")
            np.savez_compressed(tmp, **data)
            tmp.replace(shard)
            spent = time.monotonic() - t0
            log(f"generation {gen}: {games} games, {len(data['z']) // 2} positions in {spent:.0f} s")
        else:
            spent = float("nan")
        window = [root / f"games-{g:03d}.npz" for g in range(max(0, gen - learn.window + 1), gen + 1)]
        net = evalnet.load(latest) if latest else evalnet.EvalNet.random(learn.hidden, seed=seed)
        t1 = time.monotonic()
        figures = train(net, [_load_shard(p) for p in window], learn, seed=seed * 1000 + gen)
        net.meta.update(generation=gen + 1, games_per_generation=games, sims=play.sims, trained_on=len(window))
        if init is not None:
            net.meta["init"] = str(init)
        net.save(weights)
        latest = weights
        line = {"generation": gen, "selfplay_seconds": spent, "train_seconds": time.monotonic() - t1, **figures}
        with (root / "log.jsonl").open("a") as fh:
            fh.write(json.dumps(line) + "\n")
        log(json.dumps(line))
    return latest


def _latest(root: Path) -> Path | None:
    nets = sorted(root.glob("net-[0-9][0-9][0-9].npz"))
    return nets[-1] if nets else None


# ---------------------------------------------------------------------------------------------
# The command


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``jericho train``."""
    parser.add_argument("--out", required=True, help="folder of the run: games, weights, log (resumed if present)")
    parser.add_argument("--generations", type=int, default=30, help="generations to reach (default 30)")
    parser.add_argument("--games", type=int, default=300, help="self-play games per generation (default 300)")
    parser.add_argument("--sims", type=int, default=400, help="simulations per move in self-play (default 400)")
    parser.add_argument("--mix", type=float, default=0.5, help="the network's share of a leaf's value (default 0.5)")
    parser.add_argument("--hidden", default="128,64", help="hidden layer sizes, for a new run (default 128,64)")
    parser.add_argument("--window", type=int, default=4, help="generations of games trained on (default 4)")
    parser.add_argument("--epochs", type=int, default=3, help="passes over the window per generation (default 3)")
    parser.add_argument("--jobs", type=int, default=2, help="self-play processes (default 2)")
    parser.add_argument("--hours", type=float, default=None, help="stop starting generations after this long")
    parser.add_argument("--seed", type=int, default=0, help="seed of the run (default 0)")
    parser.add_argument(
        "--init", default=None, help="weights a new run starts from: a path, or 'shipped' to train the shipped ones on"
    )


def _positive(name: str, value: float) -> None:
    if not value > 0:
        raise ValueError(f"--{name} must be positive, got {value}")


def run(args: argparse.Namespace) -> int:
    """``jericho train``: run (or resume) expert iteration; prints one line per generation."""
    try:
        for name in ("generations", "games", "sims", "window", "epochs", "jobs"):
            _positive(name, getattr(args, name))
        if args.hours is not None:
            _positive("hours", args.hours)
        if not 0.0 <= args.mix <= 1.0:
            raise ValueError(f"--mix must be in [0, 1], got {args.mix}")
        hidden = tuple(int(h) for h in args.hidden.split(","))
        if len(hidden) != 2 or not all(1 <= h <= 256 for h in hidden):
            raise ValueError(f"--hidden must be two sizes from 1 to 256, got {args.hidden!r}")
        init = None
        if args.init is not None:
            init = evaluator_path(args.init)
            evalnet.load(init)
    except ValueError as exc:
        print(f"jericho train: {exc}")
        return 2
    if kernel.C is None:
        print("jericho train: self-play needs the C kernel (not built, or JERICHO_KERNEL=python)")
        return 2
    latest = expert_iteration(
        args.out,
        args.generations,
        args.games,
        play=SelfPlayConfig(sims=args.sims, mix=args.mix),
        learn=TrainConfig(hidden=(hidden[0], hidden[1]), window=args.window, epochs=args.epochs),
        jobs=args.jobs,
        hours=args.hours,
        seed=args.seed,
        log=lambda line: print(line, flush=True),
        init=init,
    )
    print(f"latest weights: {latest}" if latest else "no weights yet")
    return 0
