"""Speed figures of the research adapters, printed by ``jericho bench`` (needs the ``rl`` extra).

One core, this process, random agent actions drawn from the mask (their cost included),
the random opponent; figures are agent steps per second.
"""

from __future__ import annotations

import time

import numpy as np

__all__ = ["figures"]

Figure = tuple[str, float, str]


def _vector_rate(num_envs: int, seconds: float) -> tuple[float, str]:
    from jericho_game.envs.vector import JerichoVectorEnv, PythonBatchEngine

    envs = JerichoVectorEnv(num_envs=num_envs, agent_side="random")
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


def figures(seconds: float = 3.0) -> list[Figure]:
    """The Gymnasium env's speed, one game and batched (``jericho_game.envs.vector``)."""
    out: list[Figure] = [("Gymnasium env, one game, random opponent", _single_rate(seconds), "agent steps/s")]
    for b in (64, 1024):
        rate, kind = _vector_rate(b, seconds)
        out.append((f"vector env B={b} ({kind}), random opponent", rate, "agent steps/s"))
    return out
