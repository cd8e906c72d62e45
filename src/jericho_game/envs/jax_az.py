"""An AlphaZero baseline on the JAX environment: Gumbel MuZero self-play (``mctx``), a small MLP.

Needs the ``jax`` extra (``pip install 'jericho-game[jax]'``: jax, pgx, mctx) and nothing else:
the network is a multilayer perceptron written in plain ``jax.numpy`` and trained with a
hand-written Adam, so no Flax, Haiku, Equinox or Optax is needed (none is in the extra; the
whole model is ~15 lines and its weights are a flat dict of arrays that go straight into an
``.npz``).  pgx's AlphaZero example (``examples/alphazero/train.py`` in pgx) is the model;
this follows its structure (self-play under ``jax.pmap`` with ``mctx.gumbel_muzero_policy``,
the state as the search's embedding, ``env.step`` as its dynamics, discount -1) with these
differences, chosen for a 2-core CPU:

* **network**: an MLP over the flat observation (bool ``(1239,)``), ``hidden`` units and
  ``layers`` hidden layers, a 651-logit policy head and a ``tanh`` value head; a ResNet over
  the planes costs tens of times more per position, and on a CPU the self-play's network
  evaluations are the bill;
* **games continue across iterations**: each iteration plays ``unroll`` plies of every game
  in the batch (fresh games start where one ends), and a game's positions enter the replay
  buffer, labelled with its result, when it ends; pgx restarts its games every iteration
  and masks the positions whose game did not end inside the window;
* **a replay buffer** of the last ``buffer`` positions (pgx trains only on the newest batch),
  sampled uniformly, ``updates`` SGD steps of ``train_batch`` positions per iteration.

Run (the same command resumes from the newest checkpoint in ``--dir``, and refuses if a
setting differs from the stored ``config.json``)::

    python -m jericho_game.envs.jax_az train --dir runs/az --hours 1
    python -m jericho_game.envs.jax_az evaluate runs/az/ckpt-000100.npz --opponent greedy --games 200
    jericho arena jax-az:runs/az/ckpt-000100.npz hard       # the trained net as an arena player

A warm start (AlphaGo's order: the expert's positions first, then self-play)::

    python -m jericho_game.envs.jax_az pretrain --dir runs/azw --games 6000 --jobs 2
    python -m jericho_game.envs.jax_az train --dir runs/azw --hours 1

``pretrain`` plays ``--games`` games of the strong search (:mod:`jericho_game.envs.teacher`,
resumable shards in ``--dir/teacher``), trains a fresh network on its positions (policy against
the search's visits, value against its value, each minibatch turned by the board's four
symmetries) and writes it as the run's iteration 0 (``ckpt-000000.npz``, ``pretrain.json`` with
the held-out figures); ``train`` with the same settings then goes on from it by self-play.

Data parallel: self-play and the SGD steps run under ``jax.pmap`` over ``jax.local_devices()``
(each device plays ``batch / devices`` games and takes a shard of each minibatch; gradients
are averaged with ``lax.pmean``), so one command uses one CPU, every GPU of a machine, or the
fake CPU devices of ``XLA_FLAGS=--xla_force_host_platform_device_count=2``.

Files in ``--dir``: ``config.json`` (the settings), ``log.jsonl`` (one JSON object per
iteration: losses, positions, games, self-play and training times, steps per second),
``ckpt-NNNNNN.npz`` (the parameters and Adam's moments in float32, the iteration, counters
and the random key; the newest ``keep`` are kept).  The replay buffer and the games in
progress are not checkpointed: a resumed run starts fresh games and refills the buffer
(training waits until it holds ``warmup`` positions).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import math
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import mctx
import numpy as np

from jericho_game.ai.base import Limit
from jericho_game.envs.encoding import N_ACTIONS, default_encoding
from jericho_game.envs.jax_env import _RULE_FIELDS, Jericho, State, auto_reset
from jericho_game.game import Game
from jericho_game.moves import Move

__all__ = [
    "Config",
    "JaxAZPlayer",
    "Params",
    "evaluate",
    "forward",
    "init_params",
    "load_params",
    "main",
    "pretrain",
    "save_weights",
    "state_from_game",
    "train",
    "wilson",
]

#: The network's input: the flat observation.
OBS_SIZE = 1239
Params = dict[str, jax.Array]
env = Jericho(observation="flat")


# -- settings -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Config:
    """Every setting that shapes a training run (stored in ``config.json``; a resume must match)."""

    hidden: int = 128  # units per hidden layer
    layers: int = 2  # hidden layers
    batch: int = 64  # games played at once (over all devices)
    unroll: int = 16  # plies of every game per iteration
    simulations: int = 16  # mctx simulations per move in self-play
    considered: int = 16  # Gumbel MuZero's max_num_considered_actions
    buffer: int = 40_000  # replay buffer, positions
    warmup: int = 2_000  # positions in the buffer before the first SGD step
    train_batch: int = 256  # positions per SGD step (over all devices)
    updates: int = 8  # SGD steps per iteration
    lr: float = 1e-3
    weight_decay: float = 1e-4  # decoupled (AdamW)
    seed: int = 0

    def check(self, devices: int) -> None:
        """Raise ``ValueError`` naming a bad setting."""
        for name in ("hidden", "layers", "batch", "unroll", "simulations", "considered", "buffer", "train_batch"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, not {getattr(self, name)}")
        if self.updates < 0 or self.warmup < 0:
            raise ValueError("updates and warmup must not be negative")
        if not self.lr > 0 or self.weight_decay < 0:
            raise ValueError("lr must be positive and weight_decay not negative")
        for name in ("batch", "train_batch"):
            if getattr(self, name) % devices:
                raise ValueError(f"{name}={getattr(self, name)} must be a multiple of the {devices} devices")


# -- the network: an MLP in plain jax.numpy -------------------------------------------------
def init_params(config: Config, key: jax.Array) -> Params:
    """He-initialised weights; the policy head starts at zero (a uniform prior over legal moves)."""
    params: Params = {}
    width = OBS_SIZE
    keys = jax.random.split(key, config.layers + 1)
    for i in range(config.layers):
        params[f"w{i}"] = jax.random.normal(keys[i], (width, config.hidden)) * math.sqrt(2.0 / width)
        params[f"b{i}"] = jnp.zeros(config.hidden)
        width = config.hidden
    params["wp"] = jnp.zeros((width, N_ACTIONS))
    params["bp"] = jnp.zeros(N_ACTIONS)
    params["wv"] = jax.random.normal(keys[-1], (width, 1)) * math.sqrt(1.0 / width)
    params["bv"] = jnp.zeros(1)
    return params


def layer_count(params: Params) -> int:
    """The number of hidden layers of ``params``."""
    return sum(1 for name in params if name.startswith("w") and name[1:].isdigit())


def forward(params: Params, obs: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Policy logits ``(..., 651)`` and value in [-1, 1] ``(...)`` for flat observations ``(..., 1239)``."""
    h = obs.astype(jnp.float32)
    for i in range(layer_count(params)):
        h = jax.nn.relu(h @ params[f"w{i}"].astype(jnp.float32) + params[f"b{i}"].astype(jnp.float32))
    logits = h @ params["wp"].astype(jnp.float32) + params["bp"].astype(jnp.float32)
    value = jnp.tanh(h @ params["wv"].astype(jnp.float32) + params["bv"].astype(jnp.float32))[..., 0]
    return logits, value


def _loss(params: Params, obs: jax.Array, policy: jax.Array, value: jax.Array) -> tuple[jax.Array, jax.Array]:
    logits, v = forward(params, obs)
    policy_loss = -(policy.astype(jnp.float32) * jax.nn.log_softmax(logits)).sum(-1).mean()
    value_loss = 0.5 * ((v - value) ** 2).mean()
    return policy_loss + value_loss, jnp.stack([policy_loss, value_loss])


def _adam(
    params: Params, grads: Params, m: Params, v: Params, step: jax.Array, lr: float, wd: float
) -> tuple[Params, Params, Params, jax.Array]:
    """One AdamW step (beta 0.9 / 0.999, eps 1e-8; the decay decoupled from the gradient)."""
    step = step + 1
    m = jax.tree.map(lambda a, g: 0.9 * a + 0.1 * g, m, grads)
    v = jax.tree.map(lambda a, g: 0.999 * a + 0.001 * g * g, v, grads)
    c1, c2 = 1 - 0.9**step, 1 - 0.999**step

    def update(p: jax.Array, a: jax.Array, b: jax.Array) -> jax.Array:
        return p - lr * ((a / c1) / (jnp.sqrt(b / c2) + 1e-8) + wd * p)

    return jax.tree.map(update, params, m, v), m, v, step


# -- search ---------------------------------------------------------------------------------
def _masked(logits: jax.Array, mask: jax.Array) -> jax.Array:
    logits = logits - logits.max(axis=-1, keepdims=True)
    return jnp.where(mask, logits, jnp.finfo(logits.dtype).min)


def _recurrent_fn(params: Params, key: jax.Array, action: jax.Array, state: State) -> tuple[Any, State]:
    """The search's dynamics: the env's step, the mover's reward, discount -1 (0 once over)."""
    del key
    mover = state.current_player
    state = jax.vmap(env.step)(state, action)
    logits, value = forward(params, state.observation)
    reward = jnp.take_along_axis(state.rewards, mover[:, None], axis=1)[:, 0]
    out = mctx.RecurrentFnOutput(
        reward=reward,
        discount=jnp.where(state.terminated, 0.0, -1.0),
        prior_logits=_masked(logits, state.legal_action_mask),
        value=jnp.where(state.terminated, 0.0, value),
    )
    return out, state


def _search(params: Params, state: State, key: jax.Array, simulations: int, considered: int, gumbel: float) -> Any:
    logits, value = forward(params, state.observation)
    root = mctx.RootFnOutput(prior_logits=_masked(logits, state.legal_action_mask), value=value, embedding=state)
    return mctx.gumbel_muzero_policy(
        params=params,
        rng_key=key,
        root=root,
        recurrent_fn=_recurrent_fn,
        num_simulations=simulations,
        invalid_actions=~state.legal_action_mask,
        qtransform=mctx.qtransform_completed_by_mix_value,
        max_num_considered_actions=considered,
        gumbel_scale=gumbel,
    )


# -- self-play and SGD, per device (under pmap) ---------------------------------------------
_reset_step = auto_reset(env)


def _selfplay(config: Config) -> Callable[..., Any]:
    """``(params, states, key) -> (states, (obs, policy, player, ended, rewards))`` over ``unroll`` plies."""

    def play(params: Params, states: State, key: jax.Array) -> tuple[State, tuple[jax.Array, ...]]:
        def ply(s: State, k: jax.Array) -> tuple[State, tuple[jax.Array, ...]]:
            k1, k2 = jax.random.split(k)
            out = _search(params, s, k1, config.simulations, config.considered, 1.0)
            coins = jax.random.bernoulli(k2, shape=s.current_player.shape).astype(jnp.int32)
            nxt = jax.vmap(_reset_step)(s, out.action, coins)
            # The auto-reset step clears `terminated`; a game that ended restarts at step 0,
            # and a stepped game that goes on is at step 1 or more, so this is the end flag.
            ended = nxt._step_count == 0
            return nxt, (s.observation, out.action_weights, s.current_player, ended, nxt.rewards)

        return jax.lax.scan(ply, states, jax.random.split(key, config.unroll))

    return play


def _sgd(config: Config) -> Callable[..., Any]:
    """``updates`` AdamW steps on this device's shards, gradients averaged over devices."""

    def run(params: Params, m: Params, v: Params, step: jax.Array, obs: jax.Array, pol: jax.Array, val: jax.Array):  # type: ignore[no-untyped-def]
        def one(carry: tuple[Any, ...], batch: tuple[jax.Array, ...]) -> tuple[tuple[Any, ...], jax.Array]:
            p, a, b, n = carry
            grads, losses = jax.grad(_loss, has_aux=True)(p, *batch)
            grads = jax.lax.pmean(grads, "d")
            return _adam(p, grads, a, b, n, config.lr, config.weight_decay), losses

        (params, m, v, step), losses = jax.lax.scan(one, (params, m, v, step), (obs, pol, val))
        return params, m, v, step, jax.lax.pmean(losses.mean(axis=0), "d")

    return run


# -- checkpoints ----------------------------------------------------------------------------
def _host(tree: Any) -> Any:
    return jax.tree.map(lambda x: np.asarray(x), tree)


def save_checkpoint(path: Path, params: Params, m: Params, v: Params, step: int, meta: dict[str, Any]) -> None:
    """Write a checkpoint ``.npz``: ``p/``, ``m/``, ``v/`` arrays, ``step`` and a JSON ``meta``."""
    arrays = {f"p/{k}": np.asarray(x, dtype=np.float32) for k, x in params.items()}
    arrays.update({f"m/{k}": np.asarray(x, dtype=np.float32) for k, x in m.items()})
    arrays.update({f"v/{k}": np.asarray(x, dtype=np.float32) for k, x in v.items()})
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez_compressed(tmp, step=np.int64(step), meta=np.array(json.dumps(meta)), **arrays)
    os.replace(tmp, path)  # never a half-written checkpoint, even when killed


def _read_npz(path: str | Path) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    with np.load(path, allow_pickle=False) as f:
        arrays = {k: f[k] for k in f.files}
    meta = json.loads(str(arrays.pop("meta"))) if "meta" in arrays else {}
    return arrays, meta


def load_params(path: str | Path) -> tuple[Params, dict[str, Any]]:
    """The network of a checkpoint or of a weights file (:func:`save_weights`), as float32, and its meta."""
    arrays, meta = _read_npz(path)
    params = {k[2:]: jnp.asarray(x, dtype=jnp.float32) for k, x in arrays.items() if k.startswith("p/")}
    if not params or "wp" not in params or "wv" not in params or layer_count(params) < 1:
        raise ValueError(f"{path} holds no jax-az network (expected p/w0 ... p/wp, p/wv arrays)")
    if params["w0"].shape[0] != OBS_SIZE or params["wp"].shape[1] != N_ACTIONS:
        raise ValueError(f"{path}: the network's shapes do not fit this game's observation and actions")
    return params, meta


def save_weights(checkpoint: str | Path, out: str | Path, note: str = "") -> Path:
    """The network of ``checkpoint`` alone, in float16 (half the size; playing converts back)."""
    params, meta = load_params(checkpoint)
    meta = {**meta, "exported_from": Path(checkpoint).name, "dtype": "float16", "note": note}
    out = Path(out)
    arrays = {f"p/{k}": np.asarray(x, dtype=np.float16) for k, x in params.items()}
    np.savez_compressed(out, meta=np.array(json.dumps(meta)), **arrays)
    return out


def _checkpoints(directory: Path) -> list[Path]:
    return sorted(directory.glob("ckpt-[0-9][0-9][0-9][0-9][0-9][0-9].npz"))


# -- the replay buffer ----------------------------------------------------------------------
class Replay:
    """The last ``size`` finished positions: observation, search policy, result for the mover."""

    def __init__(self, size: int) -> None:
        self.obs = np.zeros((size, OBS_SIZE), dtype=np.bool_)
        self.policy = np.zeros((size, N_ACTIONS), dtype=np.float16)
        self.value = np.zeros(size, dtype=np.float32)
        self.size, self.count, self.next = size, 0, 0

    def add(self, obs: np.ndarray, policy: np.ndarray, value: np.ndarray) -> None:
        """Append positions (the oldest are overwritten when full)."""
        o, p, v = obs[-self.size :], policy[-self.size :], value[-self.size :]
        idx = (self.next + np.arange(len(o))) % self.size
        self.obs[idx], self.policy[idx], self.value[idx] = o, p, v
        self.next = int((self.next + len(o)) % self.size)
        self.count = min(self.size, self.count + len(o))

    def sample(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``n`` positions drawn uniformly with replacement."""
        idx = rng.integers(0, self.count, size=n)
        return self.obs[idx], self.policy[idx], self.value[idx]


class _Lanes:
    """Each game lane's positions so far; labelled with the result when its game ends."""

    def __init__(self, lanes: int) -> None:
        self.pending: list[list[tuple[np.ndarray, np.ndarray, int]]] = [[] for _ in range(lanes)]

    def feed(self, obs: np.ndarray, policy: np.ndarray, player: np.ndarray, ended: np.ndarray, rewards: np.ndarray):  # type: ignore[no-untyped-def]
        """Arrays ``(T, lanes, ...)`` of one unroll; returns finished positions and game lengths."""
        out_o, out_p, out_v, lengths = [], [], [], []
        for t in range(obs.shape[0]):
            for g in range(obs.shape[1]):
                self.pending[g].append((obs[t, g], policy[t, g], int(player[t, g])))
                if ended[t, g]:
                    done = self.pending[g]
                    out_o.extend(o for o, _, _ in done)
                    out_p.extend(p for _, p, _ in done)
                    out_v.extend(float(rewards[t, g, pl]) for _, _, pl in done)
                    lengths.append(len(done))
                    self.pending[g] = []
        if not out_o:
            return None, lengths
        return (np.stack(out_o), np.stack(out_p).astype(np.float16), np.array(out_v, dtype=np.float32)), lengths


# -- training -------------------------------------------------------------------------------
def _replicate(tree: Any, n: int) -> Any:
    # Through a pmap of the same axis name as the others, so that its outputs carry the same
    # sharding as theirs: a different one would compile every pmapped function twice.
    copies = jax.tree.map(lambda x: jnp.broadcast_to(jnp.asarray(x), (n, *jnp.shape(x))), tree)
    return jax.pmap(lambda t: t, axis_name="d")(copies)


def _first(tree: Any) -> Any:
    return jax.tree.map(lambda x: x[0], tree)


def _resume_or_start(directory: Path, config: Config) -> dict[str, Any] | None:
    """The newest checkpoint's contents, or None for a fresh run; refuses changed settings."""
    stored_path = directory / "config.json"
    if stored_path.exists():
        stored = json.loads(stored_path.read_text(encoding="utf-8"))
        wanted = dataclasses.asdict(config)
        changed = [f"{k}: stored {stored.get(k)!r}, given {wanted[k]!r}" for k in wanted if stored.get(k) != wanted[k]]
        changed += [f"{k}: stored {stored[k]!r}, unknown now" for k in stored if k not in wanted]
        if changed:
            raise SystemExit(
                f"jax_az: {directory} was trained with other settings; use a new --dir or the stored ones:\n  "
                + "\n  ".join(changed)
            )
    else:
        directory.mkdir(parents=True, exist_ok=True)
        stored_path.write_text(json.dumps(dataclasses.asdict(config), indent=1) + "\n", encoding="utf-8")
    found = _checkpoints(directory)
    if not found:
        return None
    arrays, meta = _read_npz(found[-1])
    tree = {part: {k[2:]: x for k, x in arrays.items() if k.startswith(part + "/")} for part in "pmv"}
    return {"path": found[-1], "step": int(arrays["step"]), "meta": meta, **tree}


def _cut_log(path: Path, iteration: int) -> None:
    """Drop the log lines of iterations after ``iteration``: a killed run's work past its last
    checkpoint, which the resumed run plays again (so each iteration is logged once)."""
    if not path.exists():
        return
    lines = path.read_text(encoding="utf-8").splitlines()
    kept = [line for line in lines if line.strip() and json.loads(line).get("iteration", 0) <= iteration]
    if len(kept) != len(lines):
        path.write_text("".join(line + "\n" for line in kept), encoding="utf-8")


def _no_totals() -> dict[str, Any]:
    """A new run's counters."""
    return {"positions": 0, "games": 0, "seconds": 0.0, "samples": 0}


def _run_meta(
    config: Config, iteration: int, totals: dict[str, Any], key: jax.Array, pretrained: dict[str, Any] | None
) -> dict[str, Any]:
    """A checkpoint's meta: what a resume reads back (iteration, counters, random key) and the run's facts."""
    meta = {
        "iteration": iteration,
        "totals": totals,
        "key": np.asarray(key).tolist(),
        "config": dataclasses.asdict(config),
        "jax": jax.__version__,
        "env": f"{env.id} {env.version}, flat observation",
    }
    if pretrained is not None:
        meta["pretrained"] = pretrained
    return meta


def train(
    directory: str | Path,
    config: Config,
    iterations: int | None = None,
    hours: float | None = None,
    checkpoint_every: int = 10,
    keep: int = 3,
    quiet: bool = False,
    init: str | Path | None = None,
) -> dict[str, Any]:
    """Train (or resume) in ``directory`` until ``iterations`` in all or ``hours`` of this call.

    Returns the last log record.  A checkpoint is written every ``checkpoint_every``
    iterations and at the end.  ``init`` (a checkpoint or weights file of the same shape)
    starts a new run from that network instead of random weights; a resumed run ignores it.
    """
    directory = Path(directory)
    devices = jax.local_devices()
    n = len(devices)
    config.check(n)
    resumed = _resume_or_start(directory, config)
    if resumed is None:
        key = jax.random.PRNGKey(config.seed)
        key, k0 = jax.random.split(key)
        params = init_params(config, k0)
        pretrained = None
        if init is not None:
            start_params, start_meta = load_params(init)
            shapes = {k: tuple(x.shape) for k, x in params.items()}
            if {k: tuple(x.shape) for k, x in start_params.items()} != shapes:
                raise ValueError(f"{init}: its network's shapes are not this run's (--hidden, --layers)")
            params = start_params
            pretrained = {**start_meta.get("pretrained", {}), "init": Path(init).name}
            pretrained["init_iteration"] = start_meta.get("iteration")
        m = jax.tree.map(jnp.zeros_like, params)
        v = jax.tree.map(jnp.zeros_like, params)
        step, iteration, totals = 0, 0, _no_totals()
    else:
        meta = resumed["meta"]
        params, m, v = ({k: jnp.asarray(x) for k, x in resumed[part].items()} for part in "pmv")
        step, iteration, totals = resumed["step"], int(meta["iteration"]), dict(meta["totals"])
        pretrained = meta.get("pretrained")
        key = jnp.asarray(np.array(meta["key"], dtype=np.uint32))
        _cut_log(directory / "log.jsonl", iteration)
        if not quiet:
            print(f"resuming from {resumed['path']} (iteration {iteration})", flush=True)
    np_rng = np.random.default_rng([config.seed, iteration])
    play = jax.pmap(_selfplay(config), axis_name="d")
    sgd = jax.pmap(_sgd(config), axis_name="d")
    start = jax.pmap(jax.vmap(env.init), axis_name="d")
    key, k0 = jax.random.split(key)
    states = start(jax.random.split(k0, config.batch).reshape(n, config.batch // n, -1))
    replay, lanes = Replay(config.buffer), _Lanes(config.batch)
    p_rep, m_rep, v_rep = _replicate(params, n), _replicate(m, n), _replicate(v, n)
    s_rep = _replicate(jnp.int32(step), n)
    began = time.monotonic()
    record: dict[str, Any] = {}

    def save() -> None:
        meta = _run_meta(config, iteration, totals, key, pretrained)
        save_checkpoint(
            directory / f"ckpt-{iteration:06d}.npz",
            _host(_first(p_rep)),
            _host(_first(m_rep)),
            _host(_first(v_rep)),
            int(s_rep[0]),
            meta,
        )
        for old in _checkpoints(directory)[:-keep]:
            old.unlink()

    with open(directory / "log.jsonl", "a", encoding="utf-8") as log:
        while (iterations is None or iteration < iterations) and (
            hours is None or time.monotonic() - began < hours * 3600
        ):
            iteration += 1
            t0 = time.perf_counter()
            key, k1 = jax.random.split(key)
            states, data = play(p_rep, states, jax.random.split(k1, n))
            obs, pol, player, ended, rewards = (np.asarray(x) for x in data)
            # (devices, T, B/devices, ...) -> (T, B, ...): lane g of device d is lane d*B/n+g.
            obs, pol, player, ended, rewards = (
                np.moveaxis(x, 0, 1).reshape(x.shape[1], config.batch, *x.shape[3:])
                for x in (obs, pol, player, ended, rewards)
            )
            finished, lengths = lanes.feed(obs, pol, player, ended, rewards)
            if finished is not None:
                replay.add(*finished)
            t1 = time.perf_counter()
            losses: list[float | None] = [None, None]
            if replay.count >= max(config.warmup, 1) and config.updates > 0:
                o, p, val = replay.sample(np_rng, config.updates * config.train_batch)
                # (updates * batch, ...) -> (devices, updates, batch / devices, ...)
                o, p, val = (x.reshape(config.updates, n, -1, *x.shape[1:]).swapaxes(0, 1) for x in (o, p, val))
                p_rep, m_rep, v_rep, s_rep, lo = sgd(p_rep, m_rep, v_rep, s_rep, o, p, val)
                losses = [float(x) for x in np.asarray(lo[0])]
                totals["samples"] += config.updates * config.train_batch
            t2 = time.perf_counter()
            positions = config.unroll * config.batch
            totals["positions"] += positions
            totals["games"] += len(lengths)
            totals["seconds"] += t2 - t0
            record = {
                "iteration": iteration,
                "policy_loss": losses[0],
                "value_loss": losses[1],
                "positions": totals["positions"],
                "games": totals["games"],
                "samples": totals["samples"],
                "buffer": replay.count,
                "mean_length": float(np.mean(lengths)) if lengths else None,
                "selfplay_s": round(t1 - t0, 3),
                "train_s": round(t2 - t1, 3),
                "selfplay_steps_per_s": round(positions / (t1 - t0), 1),
                "search_sims_per_s": round(positions * config.simulations / (t1 - t0), 1),
                "hours": round(totals["seconds"] / 3600, 4),
                "devices": n,
                "backend": jax.default_backend(),
                "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            }
            log.write(json.dumps(record) + "\n")
            log.flush()
            if not quiet:
                print(json.dumps(record), flush=True)
            if iteration % checkpoint_every == 0:
                save()
    if record and iteration % checkpoint_every:
        save()
    return record


# -- a warm start: the strong search's positions first (AlphaGo's order) --------------------
@functools.lru_cache(maxsize=4)
def _supervised_step(lr: float, wd: float) -> Callable[..., Any]:
    def step(params: Params, m: Params, v: Params, n: jax.Array, obs: jax.Array, pol: jax.Array, val: jax.Array):  # type: ignore[no-untyped-def]
        grads, losses = jax.grad(_loss, has_aux=True)(params, obs, pol, val)
        params, m, v, n = _adam(params, grads, m, v, n, lr, wd)
        return params, m, v, n, losses

    return jax.jit(step)


def _symmetric_batch(
    data: dict[str, np.ndarray], idx: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Positions ``idx``, each turned by one of the board's four symmetries drawn at random."""
    enc = default_encoding()
    obs, pol = data["obs"][idx], data["policy"][idx].astype(np.float32)
    which = rng.integers(0, 4, size=len(idx))
    for k, name in enumerate(("mirror", "half-turn", "flip"), start=1):
        rows = which == k
        if rows.any():
            sym = enc.symmetry(name)
            obs[rows], pol[rows] = sym.observations(obs[rows]), sym.masks(pol[rows])
    return obs, pol, data["value"][idx]


def _teacher_metrics(params: Params, data: dict[str, np.ndarray], idx: np.ndarray) -> dict[str, float]:
    logits, value = (np.asarray(x) for x in jax.jit(forward)(params, jnp.asarray(data["obs"][idx])))
    pol = data["policy"][idx].astype(np.float32)
    logp = logits - logits.max(-1, keepdims=True)
    logp -= np.log(np.exp(logp).sum(-1, keepdims=True))
    return {  # the training loss's terms, and how often the network's first choice is the search's
        "positions": len(idx),
        "policy_loss": float(-(pol * logp).sum(-1).mean()),
        "top1": float((logits.argmax(-1) == pol.argmax(-1)).mean()),
        "value_mse": float(((value - data["value"][idx]) ** 2).mean()),
        "value_mse_of_zero": float((data["value"][idx] ** 2).mean()),
    }


def pretrain(
    directory: str | Path,
    config: Config,
    shards: list[Path],
    epochs: float = 3.0,
    holdout: float = 0.02,
    quiet: bool = False,
) -> dict[str, Any]:
    """Train a fresh network on teacher data (:mod:`jericho_game.envs.teacher`) and write it
    as ``directory``'s iteration 0, from which :func:`train` then goes on by self-play.

    Policy by cross-entropy against the search's visits, value by squared error against the
    search's value, each minibatch turned by the board's symmetries at random; the last
    ``holdout`` of the positions (whole games, the newest shards) are held out and scored.
    Refuses a directory that already holds checkpoints or other settings.
    """
    from jericho_game.envs.teacher import load_teacher_data

    directory = Path(directory)
    if _checkpoints(directory):
        raise ValueError(f"{directory} already holds checkpoints: pretrain starts a run, it does not change one")
    if not shards:
        raise ValueError("no teacher data to learn from")
    _resume_or_start(directory, config)  # writes config.json, or refuses other settings (none to resume: checked)
    data = load_teacher_data(shards)
    total = len(data["value"])
    cut = max(1, int(total * (1.0 - holdout)))
    train_idx, held_idx = np.arange(cut), np.arange(cut, total)
    key = jax.random.PRNGKey(config.seed)
    key, k0 = jax.random.split(key)
    params = init_params(config, k0)
    m = jax.tree.map(jnp.zeros_like, params)
    v = jax.tree.map(jnp.zeros_like, params)
    n = jnp.int32(0)
    step = _supervised_step(config.lr, config.weight_decay)
    rng = np.random.default_rng([config.seed, 17])
    steps = max(1, int(epochs * len(train_idx) / config.train_batch))
    began, recent = time.monotonic(), []
    with open(directory / "pretrain.jsonl", "a", encoding="utf-8") as log:
        for i in range(1, steps + 1):
            batch = _symmetric_batch(data, rng.choice(train_idx, size=config.train_batch), rng)
            params, m, v, n, losses = step(params, m, v, n, *(jnp.asarray(x) for x in batch))
            recent.append(np.asarray(losses))
            if i % 500 == 0 or i == steps:
                pl, vl = np.mean(recent, axis=0)
                record = {"step": i, "of": steps, "policy_loss": float(pl), "value_loss": float(vl)}
                record["seconds"] = round(time.monotonic() - began, 1)
                recent = []
                log.write(json.dumps(record) + "\n")
                log.flush()
                if not quiet:
                    print(json.dumps(record), flush=True)
    summary = {
        "teacher_positions": total,
        "trained_on": len(train_idx),
        "epochs": epochs,
        "steps": steps,
        "seconds": round(time.monotonic() - began, 1),
        "heldout": _teacher_metrics(params, data, held_idx) if len(held_idx) else None,
        "shards": [p.name for p in shards],
    }
    (directory / "pretrain.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    pretrained = {k: summary[k] for k in ("teacher_positions", "trained_on", "epochs", "steps")}
    meta = _run_meta(config, 0, _no_totals(), key, pretrained)
    # Adam starts afresh for self-play: its moments belong to the teacher's data.
    zeros = jax.tree.map(jnp.zeros_like, params)
    save_checkpoint(directory / "ckpt-000000.npz", _host(params), _host(zeros), _host(zeros), 0, meta)
    return summary


# -- playing: a position of the engine as the env's state -----------------------------------
def state_from_game(game: Game) -> State:
    """The JAX env's state for ``game``'s position (player id 0 to move; the fields are the core's)."""
    s = game.state
    n = len(s.code)
    fields = {
        "_turn": s.turn,
        "_code": list(s.code),
        "_height": list(s.height),
        "_key": list(s.key)[:n],  # the core keeps one sentinel slot
        "_size_free": list(s.size_free),
        "_colour_free": list(s.colour_free),
        "_reserve": list(s.reserve),
        "_leader": list(s.leader),
        "_score": list(s.score),
        "_last_cell": s.last_cell,
        "_last_piece": s.last_piece,
        "_last_below": s.last_below,
        "_passes": s.passes,
        "_outcome": s.outcome,
    }
    assert set(fields) == set(_RULE_FIELDS)
    x = State(**{k: jnp.asarray(np.array(v, dtype=np.int32)) for k, v in fields.items()})  # type: ignore[call-arg]
    x = x.replace(current_player=jnp.int32(0), terminated=jnp.bool_(s.outcome >= 0))  # type: ignore[attr-defined]
    return env._finish(x)


@functools.lru_cache(maxsize=8)
def _play_search(simulations: int, considered: int) -> Callable[..., Any]:
    def run(params: Params, state: State, key: jax.Array) -> tuple[jax.Array, jax.Array]:
        batch = jax.tree.map(lambda x: x[None], state)
        out = _search(params, batch, key, simulations, considered, 0.0)
        return out.action[0], out.action_weights[0]

    return jax.jit(run)


@functools.lru_cache(maxsize=8)
def _cached_params(path: str, mtime: float) -> tuple[Params, str]:
    params, meta = load_params(path)
    return params, json.dumps(meta)


class JaxAZPlayer:
    """A trained jax-az network choosing its moves with Gumbel MuZero at a fixed number of simulations.

    ``weights`` is a checkpoint or a weights file (``jax-az:PATH`` in a player spec);
    ``sims`` simulations per move (a ``Limit``'s ``nodes`` replaces it; its ``time`` is not
    used: the budget is the simulation count).  Deterministic (no Gumbel noise, the search's
    own choice), so ``seed`` changes nothing; it is accepted for the arena.
    """

    def __init__(self, weights: str | None = None, sims: int = 32, seed: int | None = None) -> None:
        if not weights:
            raise ValueError("jax-az needs a checkpoint or weights file: jax-az:PATH")
        path = Path(weights)
        if not path.is_file():
            raise ValueError(f"jax-az: no such file {weights!r}")
        self.params, meta_text = _cached_params(str(path.resolve()), path.stat().st_mtime)
        self.meta = json.loads(meta_text)
        self.sims = int(sims)
        if self.sims < 1:
            raise ValueError(f"sims must be at least 1, not {sims}")
        self.seed = seed
        self.name = f"jax-az:{path.name}"
        self._encoding = default_encoding()

    def choose_move(self, game: Game, limit: Limit | None = None) -> Move:
        """The search's move for ``game``'s side to move (``game`` is not changed)."""
        legal = game.legal_moves()
        if len(legal) == 1:
            return legal[0]
        sims = limit.nodes if limit is not None and limit.nodes else self.sims
        state = state_from_game(game)
        action, _ = _play_search(int(sims), 16)(self.params, state, jax.random.PRNGKey(0))
        move = self._encoding.action_to_move(int(action))
        if not game.is_legal(move):  # cannot happen with the legal mask; never forfeit on it
            return legal[0]
        return move


# -- evaluation -----------------------------------------------------------------------------
def evaluate(
    weights: str, opponent: str, games: int, sims: int, jobs: int = 1, seed: int = 0, progress: bool = False
) -> dict[str, Any]:
    """Play ``jax-az:weights,sims=N`` against ``opponent`` in the arena; score with a 95% interval."""
    from jericho_game.ai.arena import run_arena

    me = f"jax-az:{weights},sims={sims}"
    summary = run_arena([me, opponent], games=games, jobs=jobs, seed=seed, progress=progress)
    if summary["interrupted"]:  # a stopped match is not the evaluation asked for
        raise KeyboardInterrupt("the evaluation match was stopped")
    wins = draws = losses = 0
    for g in summary["games"]:
        mine = "south" if g["south"] == me else "north"
        if g["result"] == "draw":
            draws += 1
        elif g["result"] == mine:
            wins += 1
        else:
            losses += 1
    n = wins + draws + losses
    score = (wins + 0.5 * draws) / n if n else float("nan")
    _params, meta = load_params(weights)
    return {
        "player": me,
        "network": Path(weights).name,
        "iteration": meta.get("iteration"),
        "opponent": opponent,
        "games": n,
        "wins": wins,
        "draws": draws,
        "losses": losses,
        "score": score,
        "ci95": list(wilson(score, n)),
        "seconds": summary.get("seconds"),
    }


def wilson(score: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson's 95% interval for a score (a draw counted as half a win) over ``n`` games.

    Unlike the normal interval it is not empty at 100% or 0%; with draws it is a little wide
    (their variance is below a coin's), so it errs on the safe side.
    """
    if n < 1:
        return float("nan"), float("nan")
    centre = (score + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(score * (1 - score) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


# -- command line ---------------------------------------------------------------------------
def _config_arguments(parser: argparse.ArgumentParser) -> None:
    for f in dataclasses.fields(Config):
        parser.add_argument(
            f"--{f.name.replace('_', '-')}", type=type(f.default), default=f.default, help=f"(default {f.default})"
        )


def main(argv: list[str] | None = None) -> int:
    """``python -m jericho_game.envs.jax_az train|pretrain|evaluate|export``."""
    parser = argparse.ArgumentParser(prog="python -m jericho_game.envs.jax_az", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train", help="train, or resume from the newest checkpoint in --dir")
    t.add_argument("--dir", type=Path, required=True, help="run directory (config, checkpoints, log)")
    t.add_argument("--iterations", type=int, default=None, help="stop at this iteration count in all")
    t.add_argument("--hours", type=float, default=None, help="stop after this many hours of this call")
    t.add_argument("--checkpoint-every", type=int, default=10, help="iterations between checkpoints (default 10)")
    t.add_argument("--keep", type=int, default=3, help="checkpoints kept (default 3)")
    t.add_argument("--init", type=Path, default=None, help="start a new run from this network (ignored on resume)")
    _config_arguments(t)
    w = sub.add_parser(
        "pretrain", help="start a run in --dir from the strong search's positions (then train goes on by self-play)"
    )
    w.add_argument("--dir", type=Path, required=True, help="run directory (its teacher/ holds the data)")
    w.add_argument("--games", type=int, default=6000, help="teacher games (default 6000; resumes by shards)")
    w.add_argument("--teacher-sims", type=int, default=400, help="the teacher's simulations a move (default 400)")
    w.add_argument("--teacher-seed", type=int, default=1, help="the teacher games' seed (default 1)")
    w.add_argument("--off-path", type=float, default=0.3, help="share of positions also searched after a random move")
    w.add_argument("--epochs", type=float, default=3.0, help="passes over the teacher's positions (default 3)")
    w.add_argument("--jobs", type=int, default=1, help="processes playing the teacher's games (default 1)")
    _config_arguments(w)
    e = sub.add_parser("evaluate", help="play a checkpoint against a level in the arena")
    e.add_argument("weights", help="checkpoint or weights file")
    e.add_argument("--opponent", default="random", help="player spec (default random)")
    e.add_argument("--games", type=int, default=200, help="games (default 200; sides alternate)")
    e.add_argument("--sims", type=int, default=32, help="simulations per move (default 32)")
    e.add_argument("--jobs", type=int, default=1, help="processes (default 1)")
    e.add_argument("--seed", type=int, default=0)
    e.add_argument("--json", type=Path, default=None, help="append the result as a JSON line")
    e.add_argument("--progress", action="store_true", help="a line per finished game on stderr")
    x = sub.add_parser("export", help="write a checkpoint's network alone, in float16")
    x.add_argument("checkpoint")
    x.add_argument("out")
    x.add_argument("--note", default="")
    args = parser.parse_args(argv)
    if args.command == "train":
        names = [f.name for f in dataclasses.fields(Config)]
        config = Config(**{k: getattr(args, k) for k in names})
        if args.checkpoint_every < 1 or args.keep < 1:
            parser.error("--checkpoint-every and --keep must be at least 1")
        try:
            train(
                args.dir,
                config,
                iterations=args.iterations,
                hours=args.hours,
                checkpoint_every=args.checkpoint_every,
                keep=args.keep,
                init=args.init,
            )
        except ValueError as exc:
            parser.error(str(exc))
        return 0
    if args.command == "pretrain":
        from jericho_game.envs.teacher import make_teacher_data

        names = [f.name for f in dataclasses.fields(Config)]
        config = Config(**{k: getattr(args, k) for k in names})
        if args.epochs <= 0:
            parser.error("--epochs must be positive")
        try:
            config.check(1)
            shards = make_teacher_data(
                args.dir / "teacher",
                args.games,
                sims=args.teacher_sims,
                jobs=args.jobs,
                seed=args.teacher_seed,
                off_path=args.off_path,
                log=print,
            )
            print(json.dumps(pretrain(args.dir, config, shards, epochs=args.epochs)))
        except (ValueError, RuntimeError) as exc:
            parser.error(str(exc))
        return 0
    if args.command == "evaluate":
        try:
            result = evaluate(args.weights, args.opponent, args.games, args.sims, args.jobs, args.seed, args.progress)
        except KeyboardInterrupt:  # Ctrl-C or kill: nothing is appended to --json
            print("interrupted: no evaluation written", file=sys.stderr)
            return 130
        print(json.dumps(result))
        if args.json is not None:
            with open(args.json, "a", encoding="utf-8") as f:
                f.write(json.dumps(result) + "\n")
        return 0
    print(save_weights(args.checkpoint, args.out, args.note))
    return 0


if __name__ == "__main__":
    sys.exit(main())
