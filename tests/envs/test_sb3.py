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


# -- the league and the PPO recipe (examples/train_ppo_net.py) -------------------------------------------


def test_the_league_plays_each_opponent_in_its_own_games() -> None:
    from jericho_game.envs.sb3 import JerichoLeagueVecEnv

    env = JerichoLeagueVecEnv({"random": 3, "greedy": 2}, agent_side="south", positions=True)
    assert env.num_envs == 5 and is_masking_supported(env)
    env.seed(4)
    obs = env.reset()
    assert obs.shape == (5, 1239)
    assert [info["opponent"] for info in env.reset_infos] == ["random"] * 3 + ["greedy"] * 2
    rng = np.random.default_rng(4)
    results: dict[str, list[float]] = {"random": [], "greedy": []}
    for _ in range(200):
        masks = get_action_masks(env)
        assert masks.shape == (5, 651) and all(masks[i].any() for i in range(5))
        obs, rewards, dones, infos = env.step(np.argmax(rng.random(masks.shape) * masks, axis=1))
        assert [info["opponent"] for info in infos] == ["random"] * 3 + ["greedy"] * 2
        for i in np.flatnonzero(dones):
            results[infos[i]["opponent"]].append(float(rewards[i]))
    # A random agent: greedy (the game's best one-move gain) beats it nearly always, random does not.
    assert len(results["greedy"]) >= 10 and len(results["random"]) >= 10
    assert np.mean(results["greedy"]) < -0.8 < np.mean(results["random"])
    assert env.get_attr("opponent") == ["random"] * 3 + ["greedy"] * 2
    assert env.get_attr("opponent", indices=4) == ["greedy"]
    assert [m.shape for m in env.env_method("action_masks", indices=[0, 4])] == [(651,), (651,)]
    env.close()
    for bad, what in (({}, "at least one"), ({"self": 2}, "self-play"), ({"greedy": 0}, "at least one game")):
        with pytest.raises(ValueError, match=what):
            JerichoLeagueVecEnv(bad)
    with pytest.raises(ValueError, match="opponent="):
        JerichoLeagueVecEnv({"random": 1}, opponent="greedy")


def _recipe() -> object:
    import importlib.util

    spec = importlib.util.spec_from_file_location("train_ppo_net", ROOT / "examples" / "train_ppo_net.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_recipe_s_policy_is_the_net_player_and_exports_back_to_it(tmp_path: Path) -> None:
    from jericho_game.ai import make_player
    from jericho_game.ai.net import forward, load_weights
    from jericho_game.envs.sb3 import JerichoLeagueVecEnv

    recipe = _recipe()
    kwargs = {"agent_side": "random", "observation": "planar", "view": "canonical", "positions": True}
    env = JerichoLeagueVecEnv({"random": 4}, **kwargs)
    model = MaskablePPO(recipe.make_policy_class(), env, n_steps=8, batch_size=32, device="cpu")  # type: ignore[attr-defined]
    recipe.load_net(model.policy, None)  # type: ignore[attr-defined]
    # Unsharpened and untrained, the exported weights are the shipped ones, and the policy's argmax is `net`'s move.
    recipe.export(model.policy, tmp_path / "net.npz", {"test": True})  # type: ignore[attr-defined]
    shipped, copied = load_weights(), load_weights(tmp_path / "net.npz")
    assert shipped.arrays.keys() == copied.arrays.keys()
    assert all(np.array_equal(shipped.arrays[k], copied.arrays[k]) for k in shipped.arrays)
    net = make_player("net")
    env.seed(2)
    obs, infos = env.reset(), env.reset_infos
    for _ in range(12):
        actions, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
        for i, info in enumerate(infos):
            game = Game.from_position(info["position"])
            action = int(actions[i])
            if info["side"] == 1:  # the canonical view's actions are North's turned by the half turn
                action = int(ENC.symmetry("half-turn").actions(np.array([action]))[0])
            assert ENC.action_to_move(action) == net.choose_move(game)
        obs, _, _, infos = env.step(actions)
    # Sharpening multiplies the logits and keeps their order; the export carries PyTorch's outputs.
    recipe.sharpen(model.policy, 8.0)  # type: ignore[attr-defined]
    recipe.export(model.policy, tmp_path / "sharp.npz", {})  # type: ignore[attr-defined]
    sharp = load_weights(tmp_path / "sharp.npz")
    logits, value = forward(sharp, sharp.meta["reference"]["input"])
    np.testing.assert_allclose(logits, sharp.meta["reference"]["logits"], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(value, sharp.meta["reference"]["value"], rtol=1e-4, atol=1e-4)
    base, _ = forward(shipped, sharp.meta["reference"]["input"])
    np.testing.assert_allclose(logits, 8.0 * base, rtol=1e-4, atol=1e-3)
    env.close()


def test_the_recipe_trains_resumes_and_refuses_other_settings(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    script = [sys.executable, str(ROOT / "examples" / "train_ppo_net.py"), "--out", str(tmp_path / "run")]
    small = ["--envs", "8", "--n-steps", "16", "--batch-size", "64", "--epochs", "1", "--save-every", "128",
             "--league", "random:1,greedy:1"]  # fmt: skip

    def run(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*script, *small, *extra], capture_output=True, text=True, timeout=600, env=env)

    first = run("--steps", "256")
    assert first.returncode == 0, first.stderr[-3000:]
    records = [json.loads(line) for line in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]
    assert [r["steps"] for r in records] == [128, 256]
    assert set(records[0]["score"]) == {"random", "greedy"}
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["league"] == {"random": 4, "greedy": 4} and config["sharpen"] == 8.0
    weights = tmp_path / "run" / "net.npz"
    from jericho_game.ai import make_player
    from jericho_game.ai.net import load_weights

    assert load_weights(weights).meta["training"]["steps"] == 256
    assert make_player(f"net:weights={weights}").choose_move(Game()) in Game().legal_moves()
    again = run("--steps", "384")
    assert again.returncode == 0, again.stderr[-3000:]
    assert "resumed" in again.stdout and "at 256 steps" in again.stdout
    lines = (tmp_path / "run" / "log.jsonl").read_text().splitlines()
    assert [json.loads(x)["steps"] for x in lines] == [128, 256, 384]
    refused = run("--steps", "512", "--lr", "0.001")
    assert refused.returncode == 2 and "lr (run: 5e-05, now: 0.001)" in refused.stderr
    for bad, what in (
        (["--league", "easy:0"], "--league"),
        (["--league", "easy:x"], "--league"),
        (["--envs", "0"], "--envs"),
    ):
        out = subprocess.run([*script, *bad], capture_output=True, text=True, timeout=600, env=env)
        assert out.returncode == 2 and what in out.stderr
