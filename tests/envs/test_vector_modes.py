"""The vector env's self-play, player-spec opponents, position texts in ``info`` and reset options."""

from __future__ import annotations

import numpy as np
import pytest

from jericho_game import Game, IllegalMoveError, PositionError, kernel
from jericho_game.ai import PlayerSpecError
from jericho_game.envs.encoding import default_encoding
from jericho_game.envs.vector import JerichoVectorEnv, KernelBatchEngine, PythonBatchEngine

ENC = default_encoding()
HALF_TURN = ENC.symmetry("half-turn")


def _act(rng: np.random.Generator, masks: np.ndarray) -> np.ndarray:
    return np.argmax(rng.random(masks.shape) * masks, axis=1)


def _replay(env: JerichoVectorEnv, steps: int, seed: int, options: dict | None = None) -> list[list]:
    """Step ``env`` with random legal actions, checking every game against a Game replayed beside it.

    Returns each game's finished episodes as (moves, rewards per agent step, outcome).
    """
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed, options=options)
    start = Game.from_position(info["position"][0]) if env.positions else None
    games = [start.copy() if start else Game() for _ in range(env.num_envs)]
    episodes: list[list] = [[] for _ in range(env.num_envs)]
    for _ in range(steps):
        actions = _act(rng, obs["action_mask"])
        movers = info["side"].copy()
        real = np.where((movers == 1) & (env.view.view == "canonical"), HALF_TURN.actions(actions), actions)
        obs, rewards, terminated, _, info = env.step(actions)
        for i, g in enumerate(games):
            if g.is_over():  # this step restarted it
                assert rewards[i] == 0
                games[i] = g = start.copy() if start else Game()
            else:
                g.play(ENC.action_to_move(int(real[i])))
                if terminated[i]:
                    assert g.is_over()
                    outcome = {"south": 0, "north": 1, "draw": 2}[str(g.outcome())]
                    expected = 0.0 if outcome == 2 else (1.0 if outcome == movers[i] else -1.0)
                    assert rewards[i] == expected, (i, g.outcome(), movers[i])
                    episodes[i].append((len(g.history), g.outcome()))
                    continue
                assert rewards[i] == 0
            if env.positions:
                assert info["position"][i] == g.position()
            assert info["side"][i] == g.state.turn  # self-play: the side to move is the agent
            assert np.array_equal(
                ENC.legal_mask(g),
                obs["action_mask"][i]
                if env.view.view != "canonical" or info["side"][i] == 0
                else HALF_TURN.masks(obs["action_mask"][i]),
            )
            turn_flags = ENC.segments["turn"][0]
            if env.view.planar is None:
                assert obs["observation"][i][turn_flags] == 1  # the observer is to move
                assert obs["observation"][i][turn_flags + 1] == (g.state.turn == 1 and env.view.view != "canonical")
    return episodes


@pytest.mark.parametrize("engine", ["python", "c"])
def test_self_play_both_sides_are_the_agent_and_rewards_are_the_movers(engine: str) -> None:
    if engine == "c" and not hasattr(kernel.C, "BatchEngine"):
        pytest.skip("the C kernel is not built")
    env = JerichoVectorEnv(num_envs=6, opponent="self", positions=True, kernel=engine == "c")
    assert isinstance(env.engine, KernelBatchEngine if engine == "c" else PythonBatchEngine)
    episodes = _replay(env, 150, seed=3)
    assert sum(len(e) for e in episodes) >= 6  # games ended and restarted along the way


def test_self_play_in_the_canonical_view_shows_the_mover_as_south() -> None:
    env = JerichoVectorEnv(num_envs=4, opponent="self", positions=True, view="canonical")
    _replay(env, 80, seed=5)


def test_self_play_gives_the_same_batches_on_both_engines_without_tracking() -> None:
    if not hasattr(kernel.C, "BatchEngine"):
        pytest.skip("the C kernel is not built")
    runs = []
    for use_c in (True, False):
        env = JerichoVectorEnv(num_envs=16, opponent="self", kernel=use_c)
        rng = np.random.default_rng(8)
        obs, info = env.reset(seed=8)
        out = []
        for _ in range(120):
            obs, r, term, _, info = env.step(_act(rng, obs["action_mask"]))
            out.append((obs["observation"].copy(), r.copy(), term.copy(), info["side"].copy()))
        runs.append(out)
    for a, b in zip(*runs, strict=True):
        assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


def test_reset_options_start_every_episode_at_the_position_and_after_the_moves() -> None:
    base = Game.from_moves("5R@d2 1G@d3 2Y@d3")
    env = JerichoVectorEnv(num_envs=5, opponent="self", positions=True)
    _, info = env.reset(seed=1, options={"position": base.position(), "moves": ["3B@a1"]})
    after = Game.from_position(base.position())
    after.play("3B@a1")
    assert list(info["position"]) == [after.position()] * 5
    assert isinstance(env.engine, PythonBatchEngine)  # the compiled engine starts at the standard start only
    episodes = _replay(env, 120, seed=2, options={"position": base.position(), "moves": "3B@a1"})
    assert sum(len(e) for e in episodes) >= 3  # autoresets started there too (checked in _replay)
    # Opening moves alone stay on the compiled engine.
    env = JerichoVectorEnv(num_envs=3, positions=True)
    _, info = env.reset(seed=0, options={"moves": "5R@d2 1G@d3"})
    assert info["position"][0] == Game.from_moves("5R@d2 1G@d3").position()
    if hasattr(kernel.C, "BatchEngine"):
        assert isinstance(env.engine, KernelBatchEngine)
    # Another reset without options keeps that start; an empty "moves" goes back to the standard one.
    _, info = env.reset(seed=0)
    assert info["position"][0] == Game.from_moves("5R@d2 1G@d3").position()
    _, info = env.reset(seed=0, options={"moves": []})
    assert info["position"][0] == Game().position()
    # A batch that had a start position goes back to the compiled engine with the standard start.
    env = JerichoVectorEnv(num_envs=2, positions=True)
    env.reset(seed=0, options={"position": base.position()})
    assert isinstance(env.engine, PythonBatchEngine)
    _, info = env.reset(seed=0, options={"moves": []})
    assert info["position"][0] == Game().position()
    if hasattr(kernel.C, "BatchEngine"):
        assert isinstance(env.engine, KernelBatchEngine)


def test_bad_reset_options_are_refused_by_name_and_change_nothing() -> None:
    env = JerichoVectorEnv(num_envs=2, positions=True)
    _, info = env.reset(seed=0, options={"moves": "5R@d2"})
    before = list(info["position"])
    with pytest.raises(ValueError, match=r"reset options the vector env does not take: \['colour'\]"):
        env.reset(options={"colour": "red"})
    with pytest.raises(IllegalMoveError):
        env.reset(options={"moves": "5R@d2 5R@d2"})
    with pytest.raises(PositionError):
        env.reset(options={"position": "not a position"})
    with pytest.raises(TypeError, match="position text"):
        env.reset(options={"position": 3})
    _, info = env.reset(seed=0)
    assert list(info["position"]) == before


def test_a_player_spec_opponent_replies_in_every_game_reproducibly() -> None:
    def run() -> list[str]:
        env = JerichoVectorEnv(num_envs=3, opponent="greedy", agent_side="random", positions=True)
        rng = np.random.default_rng(4)
        obs, info = env.reset(seed=4)
        seen = list(info["position"])
        for _ in range(25):
            obs, r, term, _, info = env.step(_act(rng, obs["action_mask"]))
            seen += list(info["position"])
            for i in range(3):
                if not term[i]:
                    game = Game.from_position(info["position"][i])
                    assert game.state.turn == info["side"][i]  # the opponent has replied
        return seen

    first = run()
    assert first == run()
    with pytest.raises(PlayerSpecError):
        JerichoVectorEnv(num_envs=2, opponent="nosuchplayer")


def test_info_carries_positions_only_on_request() -> None:
    env = JerichoVectorEnv(num_envs=2)
    _, info = env.reset(seed=0)
    assert "position" not in info


def test_same_step_autoreset_puts_the_last_observation_in_info_and_starts_again_at_once() -> None:
    from gymnasium.vector import AutoresetMode

    env = JerichoVectorEnv(num_envs=6, opponent="self", positions=True, autoreset_mode="SameStep")
    assert env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    rng = np.random.default_rng(6)
    obs, info = env.reset(seed=6)
    games = [Game() for _ in range(6)]
    ended = 0
    for _ in range(150):
        actions = _act(rng, obs["action_mask"])
        movers = info["side"].copy()
        obs, rewards, terminated, _, info = env.step(actions)
        assert obs["action_mask"].any(axis=1).all()  # every game is playable: none waits for a reset
        for i, g in enumerate(games):
            g.play(ENC.action_to_move(int(actions[i])))
            if terminated[i]:
                ended += 1
                assert g.is_over() and info["_final_obs"][i]
                assert info["final_info"][i]["position"] == g.position()
                assert info["final_info"][i]["side"] == movers[i]
                last = info["final_obs"][i]
                assert np.array_equal(last["observation"], ENC.observe(g, int(movers[i])))
                assert not last["action_mask"].any()
                outcome = {"south": 0, "north": 1, "draw": 2}[str(g.outcome())]
                assert rewards[i] == (0.0 if outcome == 2 else (1.0 if outcome == movers[i] else -1.0))
                games[i] = g = Game()
            else:
                assert info["final_obs"][i] is None if "final_obs" in info else True
            assert info["position"][i] == g.position()
            assert np.array_equal(obs["action_mask"][i], ENC.legal_mask(g))
    assert ended >= 6
    with pytest.raises(ValueError, match="bad autoreset_mode 'sometimes'"):
        JerichoVectorEnv(num_envs=2, autoreset_mode="sometimes")
