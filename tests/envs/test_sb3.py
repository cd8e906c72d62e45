"""Stable-Baselines3 / sb3-contrib on the batched env (``jericho_game.envs.sb3``).

Needs the ``sb3`` extra (stable-baselines3, sb3-contrib and PyTorch), which the test install
leaves out, as it leaves out the ``train`` extra's PyTorch: skipped without it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from sb3_contrib import MaskablePPO  # noqa: E402
from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported  # noqa: E402
from stable_baselines3.common.vec_env import VecEnv  # noqa: E402

from jericho_game import Game  # noqa: E402
from jericho_game.envs.encoding import default_encoding  # noqa: E402
from jericho_game.envs.sb3 import JerichoSB3VecEnv  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
ENC = default_encoding()


def test_the_adapter_speaks_sb3_s_vecenv_protocol_with_same_step_resets() -> None:
    env = JerichoSB3VecEnv(num_envs=8, opponent="self", positions=True)
    assert isinstance(env, VecEnv) and env.num_envs == 8
    assert is_masking_supported(env)
    env.seed(3)
    obs = env.reset()
    assert obs.shape == (8, 1239) and env.observation_space.contains(obs[0])
    assert [info["position"] for info in env.reset_infos] == [Game().position()] * 8
    rng = np.random.default_rng(3)
    games = [Game() for _ in range(8)]
    ended = 0
    for _ in range(120):
        masks = get_action_masks(env)
        assert masks.shape == (8, 651) and masks.dtype == bool
        assert all(np.array_equal(masks[i], ENC.legal_mask(g).astype(bool)) for i, g in enumerate(games))
        actions = np.argmax(rng.random(masks.shape) * masks, axis=1)
        movers = [g.state.turn for g in games]
        obs, rewards, dones, infos = env.step(actions)
        assert rewards.dtype == np.float32 and dones.dtype == bool and len(infos) == 8
        for i, g in enumerate(games):
            g.play(ENC.action_to_move(int(actions[i])))
            if dones[i]:
                ended += 1
                assert g.is_over()
                assert np.array_equal(infos[i]["terminal_observation"], ENC.observe(g, movers[i]))
                assert infos[i]["TimeLimit.truncated"] is False
                assert infos[i]["final_info"]["position"] == g.position()
                games[i] = g = Game()
            assert infos[i]["position"] == g.position()
            assert infos[i]["side"] == g.state.turn
    assert ended >= 4
    assert env.get_attr("num_envs") == [8] * 8 and env.env_is_wrapped(object) == [False] * 8
    with pytest.raises(AttributeError):
        env.get_attr("no_such_attribute")
    with pytest.raises(ValueError, match="autoreset_mode"):
        JerichoSB3VecEnv(num_envs=2, autoreset_mode="NextStep")
    env.close()


def test_maskable_ppo_trains_on_it_and_the_same_seed_gives_the_same_model() -> None:
    def train() -> np.ndarray:
        env = JerichoSB3VecEnv(num_envs=16, opponent="random", agent_side="random", observation="planar")
        model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=128, n_epochs=1, seed=5, device="cpu")
        model.learn(total_timesteps=1024)
        assert model.num_timesteps >= 1024
        obs = env.reset()
        actions, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
        assert env.action_masks()[np.arange(16), actions].all()  # masked: only legal moves
        return np.concatenate([p.detach().numpy().ravel() for p in model.policy.parameters()])

    assert np.array_equal(train(), train())


def test_the_example_trains_and_reports_steps_per_second() -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "train_maskable_ppo.py"), "--envs", "16", "--steps", "1024",
         "--n-steps", "32", "--eval-games", "8", "--seed", "1"],
        capture_output=True, text=True, timeout=600, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["steps"] >= 1024 and report["steps_per_second"] > 0 and report["steps_per_cpu_second"] > 0
    assert 0.0 <= report["score_before"] <= 1.0 and 0.0 <= report["score_after"] <= 1.0
    # The throughput defaults (docs/interop.md): two hidden layers of 32, one torch thread, one epoch;
    # the minibatch is at most one rollout (16 games x 32 steps here).
    assert report["net"] == [32, 32] and report["threads"] == 1 and report["epochs"] == 1
    assert report["batch_size"] == 16 * 32


def test_the_example_takes_the_network_and_threads_and_refuses_bad_ones() -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    example = [sys.executable, str(ROOT / "examples" / "train_maskable_ppo.py")]
    small = ["--envs", "8", "--steps", "256", "--n-steps", "16", "--eval-games", "4"]
    done = subprocess.run(
        [*example, *small, "--net", "16", "--threads", "2", "--batch-size", "64", "--epochs", "2"],
        capture_output=True, text=True, timeout=600, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert (report["net"], report["threads"], report["batch_size"], report["epochs"]) == ([16], 2, 64, 2)
    for bad, what in ((["--net", "32,x"], "--net"), (["--net", "0"], "--net"), (["--threads", "0"], "--threads")):
        refused = subprocess.run([*example, *bad], capture_output=True, text=True, timeout=600, env=env)
        assert refused.returncode == 2 and what in refused.stderr
