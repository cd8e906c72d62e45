"""Training the learned evaluator by self-play (expert iteration, as AlphaZero does).

One generation: the C search (greedy playouts and the MCTS-solver, the master's search)
plays ``games`` games against itself, guided by the current network once there is one;
every searched position is kept with the root's visit distribution and, when the game is
over, its result.  The network then learns the visit distributions (cross-entropy over the
legal moves) and the results (squared error, blended with the search's own value) on the
last few generations' positions, each also mirrored left-right; the next generation
searches with the new weights.  Everything runs on the CPU with NumPy (the network is small
and its input sparse), so no PyTorch is needed to train either.

``jericho train --out DIR`` runs generations until ``--generations`` or ``--hours``.  A
generation: self-play with the best network so far (``games-NNN.npz``), training the latest
network on the window (``net-NNN.npz``), a gate match of the new network against the best at
equal time (accepted above ``--gate-score``), its value scored on a held-out set labelled by the
endgame solver or a deep search (:mod:`jericho_game.ai.heldout`), then the generation's record
``gen-NNN.json``; ``log.jsonl`` (one line per generation) and ``curve.png`` are rebuilt from the
records.  Every file is written whole or not at all, so a run killed at any moment (``kill -9``
included) resumes where it was, losing at most the stage in progress.  The run's settings are
fixed in ``config.json`` when it starts: a resume takes them from there, and refuses an option
that differs, naming each one.  docs/ai.md, "The training run", has the commands and figures.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from jericho_game import kernel
from jericho_game.ai import evalnet
from jericho_game.ai._util import evaluator_path
from jericho_game.ai.stops import sigterm_stops, spawn_pool
from jericho_game.envs.encoding import default_encoding

__all__ = [
    "SelfPlayConfig",
    "TrainConfig",
    "GateConfig",
    "RunSettingsError",
    "play_games",
    "train",
    "gate",
    "expert_iteration",
    "records",
    "add_arguments",
    "run",
]

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


def run_merged(worker: Any, tasks: list[Any], jobs: int) -> dict[str, list[Any]]:
    """``worker`` on each task (in ``jobs`` spawned processes when more than one), its
    ``{key: list}`` results merged key by key in the tasks' order.  Ctrl-C or ``kill`` raises
    KeyboardInterrupt here with the workers stopped (:mod:`jericho_game.ai.stops`): a worker left
    alone plays through its whole share of the games, minutes of both cores after its parent is gone."""
    if jobs > 1:
        with sigterm_stops(), spawn_pool(jobs) as pool:  # leaving the pool on an error terminates it
            parts = pool.map(worker, tasks)
    else:
        parts = [worker(task) for task in tasks]
    merged: dict[str, list[Any]] = {}
    for part in parts:
        for key, values in part.items():
            merged.setdefault(key, []).extend(values)
    return merged


def play_games(
    cfg: SelfPlayConfig, weights: str | Path | None, games: int, seed: int, jobs: int = 1
) -> dict[str, np.ndarray]:
    """Play ``games`` self-play games (``jobs`` processes); the positions as flat arrays."""
    seeds = [seed * 1_000_003 + i for i in range(games)]
    chunks = [seeds[i::jobs] for i in range(jobs)]
    tasks = [(cfg, str(weights) if weights else None, chunk) for chunk in chunks if chunk]
    merged = run_merged(_worker, tasks, jobs)
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


def concat_ragged(shards: list[dict[str, np.ndarray]], key: str) -> tuple[np.ndarray, np.ndarray]:
    """The ragged array ``key`` (its values and ``key + "_off"`` offsets) of ``shards`` as one."""
    flats, offs, base = [], [np.zeros(1, dtype=np.int64)], 0
    for s in shards:
        flats.append(s[key])
        offs.append(s[key + "_off"][1:] + base)
        base += int(s[key + "_off"][-1])
    return np.concatenate(flats), np.concatenate(offs)


def _concat(shards: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    for key in ("feat", "legal", "pol_a", "pol_p"):
        out[key], out[key + "_off"] = concat_ragged(shards, key)
    for key in ("q", "z"):
        out[key] = np.concatenate([s[key] for s in shards])
    return out


def split_pairs(n_rows: int, holdout: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Training and held-out rows (``holdout`` of the pairs, at least one when there are two),
    whole mirrored pairs (rows ``2k`` and ``2k + 1``) together."""
    pairs = rng.permutation(n_rows // 2)
    n_hold = max(1, int(len(pairs) * holdout)) if len(pairs) > 1 else 0
    hold = np.concatenate([2 * pairs[:n_hold], 2 * pairs[:n_hold] + 1])
    fit = np.concatenate([2 * pairs[n_hold:], 2 * pairs[n_hold:] + 1])
    return fit, hold


def train(net: evalnet.EvalNet, shards: list[dict[str, np.ndarray]], cfg: TrainConfig, seed: int) -> dict[str, float]:
    """Train ``net`` in place on the positions of ``shards``; returns the held-out figures.

    Positions come in mirrored pairs; a pair is held out or trained on together, so the
    held-out figures measure positions the network has not seen in either orientation."""
    data = _concat(shards)
    rng = np.random.default_rng(seed)
    fit, hold = split_pairs(len(data["z"]), cfg.holdout, rng)
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
# Gating: each new network against the last accepted one (or the plain search) at equal time


@dataclass
class GateConfig:
    """How a new network is judged before self-play uses it: ``games`` games (both sides of the
    same openings) of the run's search with the new weights against the same search with the
    last accepted ones (with none, the plain search), ``time`` seconds a move for both (or
    ``nodes`` simulations, when set: reproducible, for tests); accepted when it scores at least
    ``score``.  ``games=0``: every network is accepted unjudged."""

    games: int = 40
    time: float = 0.1
    score: float = 0.55
    nodes: int | None = None


def search_spec(play: SelfPlayConfig, weights: str | Path | None) -> str:
    """The player spec of the run's search, with ``weights`` as its evaluator (None: the plain search)."""
    spec = f"mcts:sims=1000000,c={play.c:g},widen={play.widen:g},greedy=1,solver=1"
    if weights is None:
        return spec
    text = str(weights)
    if any(ch in text for ch in ",;="):
        raise ValueError(f"the run's folder must not hold ',', ';' or '=' (its weights go into player specs): {text!r}")
    return spec + f",evaluator={text},mix={play.mix:g},cprior={play.cprior:g}"


def gate(
    candidate: Path, best: Path | None, play: SelfPlayConfig, cfg: GateConfig, jobs: int, seed: int
) -> dict[str, Any]:
    """Play the gate match; returns its result (``score`` of the candidate, W/D/L, times)."""
    from jericho_game.ai.arena import run_arena

    specs = [search_spec(play, candidate), search_spec(play, best)]
    time_limit = None if cfg.nodes is not None else cfg.time
    summary = run_arena(specs, games=cfg.games, jobs=jobs, seed=seed, time_limit=time_limit, nodes=cfg.nodes)
    if summary["interrupted"]:  # a gate stopped part-way decides nothing: a resume plays it again
        raise KeyboardInterrupt("the gate match was stopped")
    row = summary["pairings"][0]
    times = summary["pairing_times"][0]
    score = float(row["score_a"])
    return {
        "games": int(row["games"]),
        "wins": int(row["wins"]),
        "draws": int(row["draws"]),
        "losses": int(row["losses"]),
        "score": score,
        "elo": _elo(score, int(row["games"])),
        "against": "plain search" if best is None else best.name,
        "time_per_move": time_limit,
        "nodes_per_move": cfg.nodes,
        "mean_time_candidate": round(times["mean_time_a"], 4),
        "mean_time_other": round(times["mean_time_b"], 4),
    }


def _elo(score: float, games: int) -> float:
    """The Elo difference of a score, held finite as the arena does (one virtual draw)."""
    s = (score * games + 0.5) / (games + 1)
    return round(-400.0 * math.log10(1.0 / s - 1.0), 1)


# ---------------------------------------------------------------------------------------------
# The run's settings: written once, then every resume must match them


class RunSettingsError(ValueError):
    """A run resumed with settings other than its own (the message names each one)."""


#: The command-line option of each setting (the others are only set through the API).
OPTION_OF = {
    "games": "--games",
    "seed": "--seed",
    "init": "--init",
    "heldout": "--heldout",
    "play.sims": "--sims",
    "play.mix": "--mix",
    "learn.hidden": "--hidden",
    "learn.window": "--window",
    "learn.epochs": "--epochs",
    "learn.result_share": "--result-share",
    "gate.games": "--gate-games",
    "gate.time": "--gate-time",
    "gate.score": "--gate-score",
}


def _flat(settings: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in settings.items():
        if isinstance(value, dict):
            out.update(_flat(value, prefix + key + "."))
        else:
            out[prefix + key] = json.loads(json.dumps(value))  # tuples as lists, as the file has them
    return out


def _show(value: Any) -> str:
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return "none" if value is None else str(value)


def differences(stored: dict[str, Any], given: dict[str, Any]) -> list[str]:
    """The settings of ``given`` that differ from ``stored`` (a run's config.json), each as
    ``--option GIVEN (the run's: STORED)``; settings only one of them knows are not compared."""
    a, b = _flat(stored), _flat(given)
    out = []
    for key in sorted(set(a) & set(b)):
        if a[key] != b[key]:
            out.append(f"{OPTION_OF.get(key, key)} {_show(b[key])} (the run's: {_show(a[key])})")
    return out


def run_settings(
    games: int,
    play: SelfPlayConfig,
    learn: TrainConfig,
    gate_cfg: GateConfig,
    seed: int,
    init: str | Path | None,
    heldout: int,
) -> dict[str, Any]:
    """The settings that make a run what it is (config.json): not how many generations or hours,
    nor how many processes, which a resume may change."""
    return {
        "format": 2,
        "games": games,
        "seed": seed,
        "init": None if init is None else str(init),
        "heldout": heldout,
        "play": asdict(play),
        "learn": asdict(learn),
        "gate": asdict(gate_cfg),
    }


def _write_json(path: Path, value: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(value, indent=1))
    tmp.replace(path)


def check_settings(root: Path, settings: dict[str, Any]) -> None:
    """Write ``root/config.json`` for a new run; for a run that has one, raise
    :class:`RunSettingsError` naming every setting that differs from it.  Also checks that the
    run's latest weights have the hidden sizes its settings say."""
    path = root / "config.json"
    if path.exists():
        try:
            stored = json.loads(path.read_text())
        except ValueError as exc:
            raise RunSettingsError(f"{path}: not a run's settings ({exc})") from None
        diff = differences(stored, settings)
        if diff:
            raise RunSettingsError(
                f"{root} is a run with other settings; resume it without these or with the run's own, "
                f"or start a new run in another folder: {'; '.join(diff)}"
            )
        if stored.get("format") != settings["format"]:  # an older run: its file learns the new settings
            _write_json(path, {**settings, **{k: v for k, v in stored.items() if k != "format"}})
    else:
        _write_json(path, settings)
    latest = _latest(root)
    if latest is not None:
        hidden = list(evalnet.load(latest).hidden)
        if hidden != list(settings["learn"]["hidden"]):
            raise RunSettingsError(
                f"{latest} has hidden sizes {_show(hidden)} "
                f"but the run's settings say {_show(settings['learn']['hidden'])}"
            )


def stored_settings(root: str | Path) -> dict[str, Any] | None:
    """A run's config.json (None for a new run)."""
    path = Path(root) / "config.json"
    return json.loads(path.read_text()) if path.exists() else None


# ---------------------------------------------------------------------------------------------
# The loop


def _load_shard(path: Path) -> dict[str, np.ndarray]:
    with np.load(path) as data:
        return {key: data[key] for key in data.files}


def _heldout_figures(held: Any, states: list[Any], weights: Path) -> dict[str, float]:
    from jericho_game.ai import heldout

    rep = heldout.report(held, {"net": heldout.net_values(weights, states)})["net"]
    out = {"heldout_value_mse": rep["all"]["mse"], "heldout_value_sign": rep["all"]["sign"]}
    if rep["solved"]["n"]:
        out["heldout_value_mse_solved"] = rep["solved"]["mse"]
    return out


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
    gate_cfg: GateConfig | None = None,
    heldout: int = 0,
    heldout_sims: int = 20_000,
) -> Path | None:
    """Expert iteration in ``out`` until ``generations`` (or ``hours``); resumes from its files.

    A generation: self-play with the best network so far (none at first: the plain search),
    ``games-NNN.npz``; training the latest network on the window, ``net-NNN.npz``; the gate
    (:class:`GateConfig`) against the best, and the held-out figures (``heldout`` positions
    labelled by the solver or a deep search of ``heldout_sims``, ``heldout.npz``, made once);
    then its record ``gen-NNN.json``, ``log.jsonl`` (one line per generation) and ``curve.png``.
    Each file is written whole or not at all, so a run killed at any moment resumes where it
    was, losing at most the stage in progress.  A run's settings are fixed at its start
    (``config.json``); resuming with others raises :class:`RunSettingsError` naming them.

    ``init``: weights a new run starts from (its first generation already searches with them,
    and its hidden sizes are theirs), e.g. the shipped evaluator to train it further.
    Returns the latest weights file (None before the first generation is trained)."""
    play = play or SelfPlayConfig()
    learn = learn or TrainConfig()
    gate_cfg = gate_cfg or GateConfig()
    root = Path(out)
    root.mkdir(parents=True, exist_ok=True)
    if init is not None:
        learn = TrainConfig(**{**asdict(learn), "hidden": evalnet.load(init).hidden})  # refuses bad weights now
    if gate_cfg.games:
        search_spec(play, root / "net-000.npz")  # the folder's name must fit in a player spec
    check_settings(root, run_settings(games, play, learn, gate_cfg, seed, init, heldout))
    started = time.monotonic()
    held = states = None
    if heldout > 0:
        from jericho_game.ai import heldout as ho

        path = root / "heldout.npz"
        if not path.exists():
            t0 = time.monotonic()
            ho.make(heldout, seed=seed, sims=heldout_sims, log=log).save(path)
            log(f"held-out set: {heldout} positions labelled in {time.monotonic() - t0:.0f} s")
        held = ho.load(path)
        states = held.states()
    best: Path | None = None if init is None else Path(init)
    latest = best
    for gen in range(generations):
        record = root / f"gen-{gen:03d}.json"
        weights = root / f"net-{gen + 1:03d}.npz"
        if record.exists():
            latest = weights
            if json.loads(record.read_text())["accepted"]:
                best = weights
            continue
        if hours is not None and time.monotonic() - started > hours * 3600:
            log(f"stopping: {hours} h spent")
            break
        rec: dict[str, Any] = {"generation": gen, "selfplay_with": None if best is None else best.name}
        shard = root / f"games-{gen:03d}.npz"
        if not shard.exists():
            t0 = time.monotonic()
            data = play_games(play, best, games, seed=seed * 1000 + gen, jobs=jobs)
            tmp = shard.with_name(shard.name + ".tmp.npz")
            np.savez_compressed(tmp, **data)
            tmp.replace(shard)
            rec["selfplay_seconds"] = round(time.monotonic() - t0, 1)
            log(f"generation {gen}: {games} games, {len(data['z']) // 2} positions in {rec['selfplay_seconds']:.0f} s")
        if not weights.exists():
            window = [root / f"games-{g:03d}.npz" for g in range(max(0, gen - learn.window + 1), gen + 1)]
            net = evalnet.load(latest) if latest else evalnet.EvalNet.random(learn.hidden, seed=seed)
            t1 = time.monotonic()
            figures = train(net, [_load_shard(p) for p in window], learn, seed=seed * 1000 + gen)
            figures["train_seconds"] = round(time.monotonic() - t1, 1)
            net.meta.update(
                generation=gen + 1,
                games_per_generation=games,
                sims=play.sims,
                trained_on=len(window),
                hidden=list(net.hidden),
                figures=figures,
            )
            if init is not None:
                net.meta["init"] = str(init)
            net.save(weights)
        rec.update(evalnet.load(weights).meta.get("figures", {}))
        if gate_cfg.games:
            t2 = time.monotonic()
            rec["gate"] = gate(weights, best, play, gate_cfg, jobs, seed * 1000 + gen)
            rec["gate"]["seconds"] = round(time.monotonic() - t2, 1)
            rec["accepted"] = rec["gate"]["score"] >= gate_cfg.score
        else:
            rec["accepted"] = True
        if held is not None:
            rec.update(_heldout_figures(held, states or [], weights))
        _write_json(record, rec)
        latest = weights
        if rec["accepted"]:
            best = weights
        _write_log(root)
        log(json.dumps(rec))
    return latest


def records(root: str | Path) -> list[dict[str, Any]]:
    """The finished generations' records of a run, in order."""
    return [json.loads(p.read_text()) for p in sorted(Path(root).glob("gen-[0-9][0-9][0-9].json"))]


def _write_log(root: Path) -> None:
    """``log.jsonl`` (one line per finished generation, rebuilt from the records, so it never
    misses or repeats one) and ``curve.png`` when matplotlib is there."""
    recs = records(root)
    elo = 0.0
    for r in recs:  # the cumulative Elo of the best network: each accepted gate's gain added
        if r.get("accepted") and "gate" in r:
            elo += r["gate"]["elo"]
        r["best_elo"] = round(elo, 1)
    tmp = root / "log.jsonl.tmp"
    tmp.write_text("".join(json.dumps(r) + "\n" for r in recs))
    tmp.replace(root / "log.jsonl")
    plot_curve(recs, root / "curve.png")


def plot_curve(recs: list[dict[str, Any]], path: Path) -> bool:
    """The learning curve: held-out losses, the gate's scores and the best network's Elo by
    generation (False when matplotlib is missing)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    gens = [r["generation"] + 1 for r in recs]
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    ax = axes[0]
    for key, label in (("policy_loss", "policy loss (games)"), ("value_mse", "value MSE (games)")):
        pts = [(g, r[key]) for g, r in zip(gens, recs, strict=True) if key in r]
        if pts:
            ax.plot(*zip(*pts, strict=True), marker="o", label=label)
    pts = [(g, r["heldout_value_mse"]) for g, r in zip(gens, recs, strict=True) if "heldout_value_mse" in r]
    if pts:
        ax.plot(*zip(*pts, strict=True), marker="s", label="value MSE (solver/search labels)")
    ax.set_xlabel("generation")
    ax.set_title("held-out losses")
    ax.legend(fontsize=7)
    ax = axes[1]
    pts = [(g, 100 * r["gate"]["score"]) for g, r in zip(gens, recs, strict=True) if "gate" in r]
    if pts:
        xs, ys = zip(*pts, strict=True)
        colours = ["tab:green" if r.get("accepted") else "tab:red" for r in recs if "gate" in r]
        ax.bar(xs, ys, color=colours)
        ax.axhline(50, color="grey", lw=0.8)
    ax.set_xlabel("generation")
    ax.set_title("gate: score against the best (%)")
    ax = axes[2]
    ax.plot(gens, [r.get("best_elo", 0.0) for r in recs], marker="o")
    ax.set_xlabel("generation")
    ax.set_title("best network's Elo (sum of accepted gains)")
    fig.tight_layout()
    tmp = path.with_name(path.name + ".tmp.png")
    fig.savefig(tmp, dpi=90)
    plt.close(fig)
    tmp.replace(path)
    return True


def _latest(root: Path) -> Path | None:
    nets = sorted(root.glob("net-[0-9][0-9][0-9].npz"))
    return nets[-1] if nets else None


# ---------------------------------------------------------------------------------------------
# The command

#: Generations of a run given no --generations: it goes on until stopped (or --hours).
UNLIMITED = 1_000_000

#: The defaults of the run's settings on the command line (None there means "not given").
DEFAULTS: dict[str, Any] = {
    "games": 300,
    "sims": 400,
    "mix": 0.5,
    "hidden": "128,64",
    "window": 4,
    "epochs": 3,
    "result_share": 0.7,
    "seed": 0,
    "init": None,
    "gate_games": 40,
    "gate_time": 0.1,
    "gate_score": 0.55,
    "heldout": 200,
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``jericho train``."""
    d = DEFAULTS
    parser.add_argument("--out", required=True, help="folder of the run: games, weights, log (resumed if present)")
    parser.add_argument(
        "--generations", type=int, default=None, help="generations to reach (default: no end; stop it any time)"
    )
    parser.add_argument("--hours", type=float, default=None, help="stop starting generations after this long")
    parser.add_argument("--jobs", type=int, default=2, help="processes for self-play and the gate (default 2)")
    run = parser.add_argument_group(
        "the run's settings (fixed when it starts: a resume takes them from its config.json)"
    )
    run.add_argument("--games", type=int, help=f"self-play games per generation (default {d['games']})")
    run.add_argument("--sims", type=int, help=f"simulations per move in self-play (default {d['sims']})")
    run.add_argument("--mix", type=float, help=f"the network's share of a leaf's value (default {d['mix']})")
    run.add_argument("--hidden", help=f"hidden layer sizes (default {d['hidden']}; with --init, its sizes)")
    run.add_argument("--window", type=int, help=f"generations of games trained on (default {d['window']})")
    run.add_argument("--epochs", type=int, help=f"passes over the window per generation (default {d['epochs']})")
    run.add_argument(
        "--result-share",
        type=float,
        help=f"the value target: this share of the game's result, the rest the search's value "
        f"(default {d['result_share']}; 0: pure distillation of the search)",
    )
    run.add_argument("--gate-games", type=int, help=f"games of each gate match, 0: no gate (default {d['gate_games']})")
    run.add_argument(
        "--gate-time", type=float, help=f"seconds a move in the gate, both sides (default {d['gate_time']})"
    )
    run.add_argument(
        "--gate-score", type=float, help=f"score a new network needs in its gate (default {d['gate_score']})"
    )
    run.add_argument(
        "--heldout",
        type=int,
        help=f"positions of the held-out set labelled by the solver or a deep search, 0: none (default {d['heldout']})",
    )
    run.add_argument("--seed", type=int, help="seed of the run (default 0)")
    run.add_argument("--init", help="weights a new run starts from: a path, or 'shipped' to train the shipped ones on")


def _positive(name: str, value: float) -> None:
    if not value > 0:
        raise ValueError(f"--{name} must be positive, got {value}")


def _resolve(args: argparse.Namespace) -> dict[str, Any]:
    """The run's settings from the options given, the rest from the run's config.json when it
    has one (a resume), else the defaults; raises RunSettingsError for a given option that
    differs from the run's."""
    given = {k: getattr(args, k) for k in DEFAULTS if getattr(args, k, None) is not None}
    stored = stored_settings(args.out)
    values = dict(DEFAULTS)
    if stored is not None:
        flat = _flat(stored)
        for key, opt in OPTION_OF.items():
            name = opt[2:].replace("-", "_")
            if key in flat:
                values[name] = ",".join(str(h) for h in flat[key]) if name == "hidden" else flat[key]
        if "init" in given:
            given["init"] = str(evaluator_path(given["init"]))
        diff = []
        for name, value in given.items():
            mine = values[name]
            if name == "hidden":
                same = [int(h) for h in str(value).split(",") if h.strip().isdigit()] == [
                    int(h) for h in str(mine).split(",")
                ]
            else:
                same = value == mine
            if not same:
                diff.append(f"--{name.replace('_', '-')} {value} (the run's: {_show(mine)})")
        if diff:
            raise RunSettingsError(
                f"{args.out} is a run with other settings; resume it without these or with the run's own, "
                f"or start a new run in another folder: {'; '.join(diff)}"
            )
    values.update(given)
    return values


def run(args: argparse.Namespace) -> int:
    """``jericho train``: run (or resume) expert iteration; prints one line per generation."""
    try:
        v = _resolve(args)
        _positive("jobs", args.jobs)
        if args.generations is not None:
            _positive("generations", args.generations)
        for name in ("games", "sims", "window", "epochs", "gate_time"):
            _positive(name.replace("_", "-"), v[name])
        if args.hours is not None:
            _positive("hours", args.hours)
        for name in ("mix", "result_share", "gate_score"):
            if not 0.0 <= v[name] <= 1.0:
                raise ValueError(f"--{name.replace('_', '-')} must be in [0, 1], got {v[name]}")
        for name in ("gate_games", "heldout"):
            if v[name] < 0:
                raise ValueError(f"--{name.replace('_', '-')} must be 0 or more, got {v[name]}")
        try:
            hidden = tuple(int(h) for h in str(v["hidden"]).split(","))
        except ValueError:
            hidden = ()
        if len(hidden) != 2 or not all(1 <= h <= 256 for h in hidden):
            raise ValueError(f"--hidden must be two sizes from 1 to 256, got {v['hidden']!r}")
        init = None
        if v["init"] is not None:
            init = evaluator_path(v["init"])
            start = evalnet.load(init)
            if args.hidden is not None and start.hidden != hidden:
                raise ValueError(f"--hidden {args.hidden} differs from the --init weights' sizes {start.hidden}")
        if kernel.C is None:
            print("jericho train: self-play needs the C kernel (not built, or JERICHO_KERNEL=python)")
            return 2
        latest = expert_iteration(
            args.out,
            args.generations if args.generations is not None else UNLIMITED,
            v["games"],
            play=SelfPlayConfig(sims=v["sims"], mix=v["mix"]),
            learn=TrainConfig(
                hidden=(hidden[0], hidden[1]), window=v["window"], epochs=v["epochs"], result_share=v["result_share"]
            ),
            jobs=args.jobs,
            hours=args.hours,
            seed=v["seed"],
            log=lambda line: print(line, flush=True),
            init=init,
            gate_cfg=GateConfig(games=v["gate_games"], time=v["gate_time"], score=v["gate_score"]),
            heldout=v["heldout"],
        )
    except ValueError as exc:  # RunSettingsError included
        print(f"jericho train: {exc}")
        return 2
    print(f"latest weights: {latest}" if latest else "no weights yet")
    return 0
