"""Reward shaping in the batched env (issue 35, point 2): ``shaping=c`` adds ``c`` times the change of the
agent's monolith margin over each step, as the single env's ``shaping`` does; 0 (the default) changes nothing."""

from __future__ import annotations

import numpy as np
import pytest

from jericho_game import kernel
from jericho_game.envs.vector import JerichoVectorEnv
from jericho_game.game import Game

ENGINES = [pytest.param(True, marks=pytest.mark.skipif(kernel.C is None, reason="no C kernel")), False]


def _margin(position: str, side: int) -> int:
    score = Game.from_position(position).score()
    return score[side] - score[1 - side]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("opponent", ["random", "self"])
def test_shaped_rewards_are_the_plain_ones_plus_the_margin_change(engine: bool, opponent: str) -> None:
    """Two envs, same seed and actions, one shaped: the difference of their rewards is ``c`` times the change of
    the stepping side's margin between the positions before and after the step (read from ``info["position"]``),
    for every game that moved; nothing for a game that restarted or played an illegal action."""
    c = 0.05
    kw = {"num_envs": 24, "agent_side": "random", "opponent": opponent, "positions": True, "kernel": engine}
    plain, shaped = JerichoVectorEnv(**kw), JerichoVectorEnv(shaping=c, **kw)
    (obs, info), (_, info_s) = plain.reset(seed=8), shaped.reset(seed=8)
    rng = np.random.default_rng(8)
    restarting = np.zeros(24, dtype=bool)
    changed = 0
    for _ in range(120):
        sides, positions = info["side"].copy(), info["position"].copy()
        m = obs["action_mask"]
        acts = np.argmax(rng.random(m.shape) * m, axis=1)
        illegal = ~restarting & (rng.random(24) < 0.02)
        acts[illegal] = np.argmin(m[illegal], axis=1)  # an illegal action now and then
        obs, rewards, terminated, _, info = plain.step(acts)
        _, rewards_s, terminated_s, _, info_s = shaped.step(acts)
        assert np.array_equal(terminated, terminated_s) and np.array_equal(info["position"], info_s["position"])
        for i in range(24):
            if restarting[i] or illegal[i]:
                assert rewards_s[i] == rewards[i]
                continue
            change = _margin(info["position"][i], int(sides[i])) - _margin(positions[i], int(sides[i]))
            assert rewards_s[i] == pytest.approx(rewards[i] + c * change), (i, change)
            changed += change != 0
        restarting = terminated.copy()
    assert changed > 100  # the margins move often: the check saw real shaping


def test_shaping_reaches_the_sb3_env_and_bad_values_are_refused() -> None:
    pytest.importorskip("stable_baselines3", reason="the sb3 extra is not installed")
    from jericho_game.envs.sb3 import JerichoSB3VecEnv

    assert JerichoSB3VecEnv(num_envs=2, shaping=0.1).venv.shaping == 0.1


def test_bad_shaping_is_refused_by_name() -> None:
    for bad in ("lots", float("nan"), float("inf"), None):
        with pytest.raises(ValueError, match="shaping"):
            JerichoVectorEnv(num_envs=2, shaping=bad)  # type: ignore[arg-type]
    assert JerichoVectorEnv(num_envs=2).shaping == 0.0
