"""Speed figures of the research adapters, printed by ``jericho bench`` (needs the ``rl`` extra).

One core, this process, random agent actions drawn from the mask (their cost included),
the random opponent or self-play; figures are agent steps per second (self-play: every
move is an agent step).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

__all__ = ["figures", "net_figures", "vector_figures", "NET_BATCHES", "VECTOR_KINDS"]

#: Batch sizes of the net's forward-pass figures.
NET_BATCHES = (1, 16, 256, 1024)

Figure = tuple[str, float, str]


def _vector_rate(num_envs: int, seconds: float, opponent: str = "random") -> tuple[float, str]:
    from jericho_game.envs.vector import JerichoVectorEnv, PythonBatchEngine

    envs = JerichoVectorEnv(num_envs=num_envs, agent_side="random", opponent=opponent)
    kind = "python" if isinstance(envs.engine, PythonBatchEngine) else "compiled kernel"
    rng = np.random.default_rng(0)
    obs, _ = envs.reset(seed=0)
    obs, *_ = envs.step(np.argmax(rng.random(obs["action_mask"].shape) * obs["action_mask"], axis=1))
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        actions = np.argmax(rng.random(obs["action_mask"].shape, dtype=np.float32) * obs["action_mask"], axis=1)
        obs, *_ = envs.step(actions)
        steps += num_envs
    return steps / (time.perf_counter() - start), kind


#: The configurations ``vector_figures`` alternates: name -> (observation, view, obs_dtype, mask_dtype, threads);
#: ``threads`` None: the ``threads`` argument.
VECTOR_KINDS: dict[str, tuple[str, str, str, str, int | None]] = {
    "flat": ("flat", "absolute", "float32", "int8", 1),
    "planar+canonical": ("planar", "canonical", "float32", "int8", 1),
    "planar+canonical uint8": ("planar", "canonical", "uint8", "bool", 1),
    "planar+canonical uint8, threads": ("planar", "canonical", "uint8", "bool", None),
}


def vector_figures(
    seconds: float = 3.0, num_envs: int = 1024, rounds: int = 10, rollout: int = 8, threads: int = 2
) -> list[Figure]:
    """The vector env's flat observations against its planar + canonical ones (the net's input, float32 and
    uint8 with bool masks, and the latter on ``threads`` threads), at ``num_envs``, random opponent and
    self-play: agent steps per second of each, and each as a share of flat's; the same per CPU second of
    this process (what a loaded machine's time slicing changes least; with threads, the CPU of all of
    them).  Each step's observations and masks are copied into a preallocated rollout buffer of ``rollout``
    steps, as Stable-Baselines3 and CleanRL store them (``rollout=0``: no copy); the buffer has the
    observations' dtype (a compact observation is stored compact).  The configurations are measured in
    alternate slices (``rounds`` each, ``seconds`` in all per configuration), so that a machine whose load
    changes weighs on all alike."""
    from jericho_game.envs.vector import JerichoVectorEnv, PythonBatchEngine

    out: list[Figure] = []
    kinds = {
        (name.replace("threads", f"{threads} threads")): (*kind[:4], threads if kind[4] is None else kind[4])
        for name, kind in VECTOR_KINDS.items()
        if kind[4] is not None or threads > 1
    }
    for opponent in ("random", "self"):
        runs: dict[str, dict[str, Any]] = {}
        for name, (observation, view, obs_dtype, mask_dtype, n_threads) in kinds.items():
            envs = JerichoVectorEnv(
                num_envs=num_envs,
                agent_side="random",
                opponent=opponent,
                observation=observation,
                view=view,
                obs_dtype=obs_dtype,
                mask_dtype=mask_dtype,
                num_threads=n_threads,
            )
            obs, _ = envs.reset(seed=0)
            buffers = (
                np.zeros((rollout, *obs["observation"].shape), dtype=obs["observation"].dtype),
                np.zeros((rollout, *obs["action_mask"].shape), dtype=obs["action_mask"].dtype),
            )
            for buf in buffers:
                buf.fill(0)  # touch every page now: a rollout buffer is allocated once, not in the timed steps
            runs[name] = {
                "envs": envs,
                "obs": obs,
                "rng": np.random.default_rng(0),
                "buffers": buffers,
                "t": 0,
                "steps": 0,
                "wall": 0.0,
                "cpu": 0.0,
            }
        engine = "Python" if isinstance(runs["flat"]["envs"].engine, PythonBatchEngine) else "C"
        for _ in range(rounds):
            for run in runs.values():
                envs, obs, rng, (obs_buf, mask_buf) = run["envs"], run["obs"], run["rng"], run["buffers"]
                steps, t = 0, run["t"]
                start, cpu = time.perf_counter(), time.process_time()
                while time.perf_counter() - start < seconds / rounds:
                    mask = obs["action_mask"]
                    obs, *_ = envs.step(np.argmax(rng.random(mask.shape, dtype=np.float32) * mask, axis=1))
                    if rollout:
                        obs_buf[t] = obs["observation"]  # the rollout buffer's copy (SB3's, CleanRL's)
                        mask_buf[t] = obs["action_mask"]
                        t = (t + 1) % rollout
                    steps += num_envs
                run["cpu"] += time.process_time() - cpu
                run["wall"] += time.perf_counter() - start
                run["obs"], run["t"] = obs, t
                run["steps"] += steps
        who = "random opponent" if opponent == "random" else "self-play"
        copy = f", rollout copy {rollout}" if rollout else ""
        for clock, unit in (("wall", "agent steps/s"), ("cpu", "agent steps/CPU s")):
            rates = {name: run["steps"] / run[clock] for name, run in runs.items()}
            for name, rate in rates.items():
                out.append((f"vector env B={num_envs} ({engine}), {who}{copy}, {name}", rate, unit))
            for name, rate in rates.items():
                if name != "flat":
                    share = 100.0 * rate / rates["flat"]
                    out.append((f"vector env B={num_envs}, {who}, {name} / flat", share, f"% ({unit})"))
    return out


def _single_rate(seconds: float) -> float:
    from jericho_game.envs.gym_env import JerichoEnv

    env = JerichoEnv(opponent="random", agent_side="random")
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=0)
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        obs, _, terminated, _, _ = env.step(action)
        steps += 1
        if terminated:
            obs, _ = env.reset()
    return steps / (time.perf_counter() - start)


def net_figures(seconds: float = 1.0, batches: tuple[int, ...] = NET_BATCHES) -> list[Figure]:
    """Positions per second of the net's NumPy forward pass (``players.net.forward``) by batch size.

    The inputs are the planar canonical observations of positions from seeded random games
    (the net's own input), made once; only the forward pass is timed, in this process's CPU
    time: the pass is single-threaded (see ``players.net.BLOCK``), so the figure is its cost
    per position, which other work on a busy machine does not change much (wall-clock
    figures there halve and double from one run to the next).
    """
    import random

    from jericho_game.ai.net import _shipped, forward
    from jericho_game.envs.encoding import default_encoding
    from jericho_game.envs.views import View
    from jericho_game.game import Game

    view = View(default_encoding(), "planar", "canonical")
    rng = random.Random(3)
    planes = []
    while len(planes) < max(batches):
        game = Game()
        while not game.is_over() and len(planes) < max(batches):
            planes.append(view.observe(game, game.state.turn))
            moves = game.legal_moves()
            game.play(moves[rng.randrange(len(moves))])
    x = np.stack(planes)
    weights = _shipped()
    out: list[Figure] = []
    for b in batches:
        xb = x[:b].copy()
        forward(weights, xb)  # warm
        done = 0
        start = time.process_time()
        while time.process_time() - start < seconds:
            forward(weights, xb)
            done += b
        out.append((f"net forward pass (NumPy), batch {b}", done / (time.process_time() - start), "positions/CPU s"))
    return out


def figures(seconds: float = 3.0) -> list[Figure]:
    """The Gymnasium env's speed, one game and batched (``jericho_game.envs.vector``), and the net's forward pass."""
    out: list[Figure] = [("Gymnasium env, one game, random opponent", _single_rate(seconds), "agent steps/s")]
    for b in (64, 1024):
        rate, kind = _vector_rate(b, seconds)
        out.append((f"vector env B={b} ({kind}), random opponent", rate, "agent steps/s"))
    rate, kind = _vector_rate(1024, seconds, opponent="self")
    out.append((f"vector env B=1024 ({kind}), self-play", rate, "agent steps/s"))
    return out + net_figures(min(seconds, 1.0))
