"""The batched environment ``jericho_game.envs.vector`` (issue 13 point 4)."""

from __future__ import annotations

import warnings
from collections.abc import Callable

import gymnasium
import numpy as np
import pytest
from gymnasium.utils import env_checker
from gymnasium.vector import AutoresetMode
from gymnasium.wrappers.vector import RecordEpisodeStatistics

import jericho_game.envs.gym_env  # noqa: F401  (registers Jericho-v1 and its vector entry point)
from jericho_game import Game, kernel
from jericho_game.core import NO_OUTCOME
from jericho_game.envs.encoding import default_encoding
from jericho_game.envs.planar import default_planar
from jericho_game.envs.vector import JerichoVectorEnv, KernelBatchEngine, PythonBatchEngine, batch_engine
from tests import kernel_compare
from tests.helpers import random_games

ENC = default_encoding()


def _random_actions(rng: np.random.Generator, masks: np.ndarray) -> np.ndarray:
    return np.argmax(rng.random(masks.shape) * masks, axis=1)


def _make_vec_warnings(make: Callable[[], object]) -> list[str]:
    """The warnings ``make`` raises that are about making the env (Gymnasium's, ours).

    A ResourceWarning is the garbage collector finalizing something an earlier test left open,
    whenever a collection happens to run: it says nothing about ``make_vec``, so it is left out.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.simplefilter("ignore", ResourceWarning)
        make()
    return [f"{w.category.__name__}: {w.message}" for w in caught]


def test_make_vec_uses_the_vector_entry_point_without_warnings() -> None:
    made: list[object] = []
    assert _make_vec_warnings(lambda: made.append(gymnasium.make_vec("Jericho-v1", num_envs=16))) == []
    (envs,) = made
    assert isinstance(envs, JerichoVectorEnv) and envs.num_envs == 16
    assert envs.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    obs, info = envs.reset(seed=0)
    assert obs["observation"].shape == (16, 1239) and obs["action_mask"].shape == (16, 651)
    assert envs.observation_space.contains(obs)
    # Gymnasium's checks that apply to a vector env as they are.
    env_checker.check_reset_return_type(envs)
    env_checker.check_reset_seed_determinism(envs)
    env_checker.check_reset_options(envs)


def test_the_warning_check_ignores_a_file_another_test_leaked_but_not_make_vec_s_own_warnings() -> None:
    """The flake: an unclosed pipe from an earlier test, collected during make_vec, failed the check."""
    import gc
    import os

    def leak_then_make() -> None:
        rfd, wfd = os.pipe()
        os.close(wfd)
        cycle: list[object] = [os.fdopen(rfd, "r")]
        cycle.append(cycle)  # only the cycle collector frees it, at a moment nobody chooses
        del cycle
        gc.collect()  # here, inside the check, as it happened in CI
        gymnasium.make_vec("Jericho-v1", num_envs=2)

    assert _make_vec_warnings(leak_then_make) == []
    # Still caught: a warning raised while making the env.
    assert _make_vec_warnings(lambda: warnings.warn("make_vec fell back", UserWarning, stacklevel=1)) == [
        "UserWarning: make_vec fell back"
    ]


def test_the_batch_engine_equals_the_encoding_on_many_positions() -> None:
    games = random_games(120, seed=21)
    engine = PythonBatchEngine(len(games))
    engine.states = [g.state.copy() for g in games]
    idx = np.arange(len(games))
    for sides in (np.zeros(len(games), dtype=np.int64), np.ones(len(games), dtype=np.int64), idx % 2):
        obs, masks = engine.observe_and_mask(idx, sides)
        for i, g in enumerate(games):
            assert np.array_equal(obs[i], ENC.observe(g, int(sides[i]))), i
            assert np.array_equal(masks[i], ENC.legal_mask(g)), i
    # Positions where the asymmetry rule and forced passes matter most: late in games.
    late = [g for g in random_games(300, seed=4) if len(g.history) > 40 and not g.is_over()]
    engine = PythonBatchEngine(len(late))
    engine.states = [g.state.copy() for g in late]
    masks = engine.masks(np.arange(len(late)))
    assert all(np.array_equal(masks[i], ENC.legal_mask(g)) for i, g in enumerate(late))


def test_random_batches_play_legal_games_and_reward_the_outcome() -> None:
    envs = gymnasium.make_vec("Jericho-v1", num_envs=32, agent_side="random")
    obs, info = envs.reset(seed=3)
    rng = np.random.default_rng(3)
    finished = 0
    restarting = np.zeros(32, dtype=bool)
    for _ in range(160):
        assert (obs["action_mask"][~restarting].sum(axis=1) > 0).all()
        actions = _random_actions(rng, obs["action_mask"])
        sides_before = envs.unwrapped.sides.copy()
        obs, rewards, terminated, truncated, info = envs.step(actions)
        assert not truncated.any() and "illegal_action" not in info
        _, outcome = envs.unwrapped.engine.status()
        for i in np.flatnonzero(terminated):
            expected = 0.0 if outcome[i] == 2 else (1.0 if outcome[i] == sides_before[i] else -1.0)
            assert rewards[i] == expected and outcome[i] != NO_OUTCOME
            assert not obs["action_mask"][i].any()
        # Next step: those games start again (reward 0, not terminated, a fresh position).
        assert (rewards[restarting] == 0).all() and not terminated[restarting].any()
        for i in np.flatnonzero(restarting):  # the opponent has opened when the agent is North
            pieces_left = ENC.split(obs["observation"][i])["reserves"].sum()
            assert pieces_left == 2 * 25 - envs.unwrapped.sides[i]
        finished += int(terminated.sum())
        restarting = terminated
    assert finished > 32


def test_illegal_and_badly_typed_actions() -> None:
    envs = JerichoVectorEnv(num_envs=4)
    obs, _ = envs.reset(seed=0)
    actions = _random_actions(np.random.default_rng(0), obs["action_mask"])
    actions[2] = ENC.pass_action  # not legal at the start
    obs, rewards, terminated, _, info = envs.step(actions)
    assert terminated[2] and rewards[2] == -1.0 and info["illegal_action"][2] and not info["illegal_action"][0]
    assert ENC.split(obs["observation"][2])["reserves"].sum() == 2 * 25  # the illegal move was not played
    with pytest.raises(TypeError, match="integer array"):
        envs.step(np.full(4, 3.5))
    with pytest.raises(TypeError, match="integer array"):
        envs.step(np.ones(4, dtype=bool))
    with pytest.raises(ValueError, match="out of range"):
        envs.step(np.array([0, 1, 2, 9999]))
    with pytest.raises(ValueError, match="nosuchplayer"):  # a player spec is checked when given
        JerichoVectorEnv(num_envs=2, opponent="nosuchplayer")


def test_same_seed_same_batch_and_no_reused_arrays() -> None:
    def run(seed: int) -> list[np.ndarray]:
        envs = JerichoVectorEnv(num_envs=8, agent_side="random")
        obs, _ = envs.reset(seed=seed)
        rng = np.random.default_rng(1)
        out = [obs["observation"]]
        for _ in range(30):
            obs, r, *_ = envs.step(_random_actions(rng, obs["action_mask"]))
            out += [obs["observation"], r]
        return out

    a, b = run(5), run(5)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert any(not np.array_equal(x, y) for x, y in zip(a, run(6), strict=True))
    assert len({id(x) for x in a}) == len(a)  # every step returns fresh arrays


@pytest.mark.parametrize("side", ["south", "north"])
def test_planar_and_canonical_options(side: str) -> None:
    # The Python engine, whose states are compared with the encoding (the C one equals it: see below).
    envs = JerichoVectorEnv(num_envs=6, agent_side=side, observation="planar", view="canonical", kernel=False)
    obs, _ = envs.reset(seed=2)
    assert obs["observation"].shape == (6, 192, 4, 7) and envs.observation_space.contains(obs)
    rng = np.random.default_rng(2)
    for _ in range(12):
        flat = default_planar().to_flat(obs["observation"])
        assert not ENC.is_north_observer(flat).any()
        for i, state in enumerate(envs.engine.states):  # type: ignore[attr-defined]
            if state.outcome == NO_OUTCOME:
                expected, mask = ENC.canonical(ENC.observe(state, side), ENC.legal_mask(state))
                assert np.array_equal(flat[i], expected) and np.array_equal(obs["action_mask"][i], mask)
        obs, *_ = envs.step(_random_actions(rng, obs["action_mask"]))


def test_gymnasium_vector_wrappers_work() -> None:
    envs = RecordEpisodeStatistics(gymnasium.make_vec("Jericho-v1", num_envs=8, agent_side="random"))
    obs, _ = envs.reset(seed=1)
    episodes = 0
    for _ in range(120):
        mask = tuple(obs["action_mask"].astype(np.int8))
        obs, _, _, _, info = envs.step(envs.action_space.sample(mask=mask))
        if "episode" in info:
            episodes += int(info["_episode"].sum())
    assert episodes >= 8


def test_sync_vectorization_covers_other_opponents() -> None:
    envs = gymnasium.make_vec("Jericho-v1", num_envs=2, vectorization_mode="sync", opponent="greedy")
    obs, _ = envs.reset(seed=0)
    assert obs["observation"].shape == (2, 1239)


def test_the_kernel_seam_falls_back_to_python() -> None:
    engine = batch_engine(3)
    assert engine.n == 3
    try:
        import jericho_game._kernel  # noqa: F401
    except ImportError:
        assert isinstance(engine, PythonBatchEngine)
        with pytest.raises(ImportError, match="compiled kernel"):
            batch_engine(3, kernel=True)
    assert isinstance(batch_engine(3, kernel=False), PythonBatchEngine)
    assert Game().state.outcome == NO_OUTCOME


needs_kernel = pytest.mark.skipif(kernel.C is None, reason="the C kernel is not built here")


@needs_kernel
@pytest.mark.parametrize("seed", range(3))
def test_the_c_batch_engine_equals_the_python_one(seed: int) -> None:
    """Same random moves, resets and queries (B=64, 400 steps): same observations, masks, status."""
    assert isinstance(batch_engine(8), KernelBatchEngine)
    assert kernel_compare.compare_batch(seed, 64, 400) > 5_000


@needs_kernel
def test_the_c_batch_engine_refuses_bad_input_and_changes_nothing() -> None:
    assert kernel_compare.malformed_batch() >= 20


@needs_kernel
@pytest.mark.parametrize("side", ["random", "north"])
def test_the_vector_env_gives_the_same_episodes_on_either_engine(side: str) -> None:
    envs = {k: JerichoVectorEnv(num_envs=48, agent_side=side, kernel=k) for k in (True, False)}
    assert isinstance(envs[True].engine, KernelBatchEngine) and isinstance(envs[False].engine, PythonBatchEngine)
    out = {k: e.reset(seed=11) for k, e in envs.items()}
    rng = np.random.default_rng(11)
    for _ in range(120):
        assert np.array_equal(out[True][0]["observation"], out[False][0]["observation"])
        assert np.array_equal(out[True][0]["action_mask"], out[False][0]["action_mask"])
        acts = _random_actions(rng, out[False][0]["action_mask"])
        acts[rng.random(48) < 0.02] = 0  # now and then an illegal action
        res = {k: e.step(acts) for k, e in envs.items()}
        for a, b in zip(res[True][1:4], res[False][1:4], strict=True):
            assert np.array_equal(a, b)
        out = {k: (r[0], r[4]) for k, r in res.items()}


def test_bench_hook_prints_the_vector_env_figure(capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from jericho_game.ai import bench as ai_bench
    from jericho_game.cli import main

    monkeypatch.setattr(ai_bench, "figures", lambda *a, **k: [])  # the AI's figures take long; not ours
    assert main(["bench", "--seconds", "0.05"]) == 0
    text = capsys.readouterr().out
    line = next(x for x in text.splitlines() if x.startswith("vector env B=1024"))
    assert line.endswith("agent steps/s") and float(line.split()[-3].replace(",", "")) > 0
