"""The Gymnasium single-agent environment."""

from __future__ import annotations

import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import jericho_game.envs.gym_env  # noqa: F401  (registers Jericho-v1)
from jericho_game import Game
from jericho_game.ai import Limit
from jericho_game.envs.encoding import default_encoding
from jericho_game.envs.gym_env import JerichoEnv


@pytest.mark.parametrize("side", ["south", "north", "random"])
def test_check_env(side: str) -> None:
    env = gymnasium.make("Jericho-v1", agent_side=side, render_mode="ansi")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped, skip_render_check=False)
    assert not [str(w.message) for w in caught]


# Every level and both sides: a search opponent gets a fresh, seeded search per episode,
# so check_env's "reset(seed=123) twice gives the same observation" holds.
@pytest.mark.parametrize("side", ["south", "north"])
@pytest.mark.parametrize(
    "opponent", ["random", "greedy", "easy", "medium", "hard", "expert", "mcts:sims=50", "alphabeta:nodes=300"]
)
def test_check_env_for_every_opponent(opponent: str, side: str) -> None:
    # 2,000 simulations a move: the upper levels' own budget (up to 1 s) would spend 20 s on check_env's steps
    env = gymnasium.make("Jericho-v1", opponent=opponent, agent_side=side, opponent_limit=Limit(nodes=2000))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped, skip_render_check=True)
    assert not [str(w.message) for w in caught]


def _opening(env: JerichoEnv, seed: int) -> list[str]:
    obs, info = env.reset(seed=seed)
    played = list(info["opponent_moves"])
    obs, _, _, _, info = env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    return played + list(info["opponent_moves"])


@pytest.mark.parametrize("opponent", ["mcts:sims=40", "alphabeta:nodes=200"])
def test_reset_seed_gives_the_same_episode_whatever_came_before(opponent: str) -> None:
    env = JerichoEnv(opponent=opponent, agent_side="north")
    first = {seed: _opening(env, seed) for seed in range(6)}
    # The same seeds again, in another order and after other episodes, on the same env.
    for seed in reversed(range(6)):
        env.reset(seed=100 + seed)
        assert _opening(env, seed) == first[seed]
    assert _opening(JerichoEnv(opponent=opponent, agent_side="north"), 3) == first[3]


def test_a_level_s_clock_is_off_unless_asked_for() -> None:
    from jericho_game.ai.levels import EXPERT_SIMS, EXPERT_TIME  # the kernel in use sets them

    assert JerichoEnv(opponent="expert").opponent.time == EXPERT_TIME  # type: ignore[attr-defined]
    env = JerichoEnv(opponent="expert", agent_side="north")
    env.reset(seed=1)
    assert env.opponent.time is None and env.opponent.sims == EXPERT_SIMS  # type: ignore[attr-defined]
    clocked = JerichoEnv(opponent="expert", opponent_clock=True)
    clocked.reset(seed=1)
    assert clocked.opponent.time == EXPERT_TIME  # type: ignore[attr-defined]


def test_a_player_object_is_copied_afresh_for_each_episode() -> None:
    from jericho_game.ai import make_player

    player = make_player("mcts:sims=40")
    env = JerichoEnv(opponent=player, agent_side="north")
    openings = [_opening(env, 5) for _ in range(3)]
    assert openings[0] == openings[1] == openings[2]
    assert env.opponent is not player


def test_make_by_module_path_and_play_to_the_end() -> None:
    env = gymnasium.make("jericho_game.envs.gym_env:Jericho-v1", opponent="random", agent_side="north")
    obs, info = env.reset(seed=3)
    assert info["side"] == "north" and len(info["opponent_moves"]) == 1
    total = 0.0
    for _ in range(101):
        assert obs["action_mask"].any()
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample(obs["action_mask"]))
        total += reward
        assert not truncated
        if terminated:
            break
    assert terminated
    assert total == {"north": 1.0, "south": -1.0, "draw": 0.0}[info["outcome"]]
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


def test_episodes_reproduce_for_a_seed() -> None:
    def run(seed: int) -> list[str]:
        env = JerichoEnv(agent_side="random")
        obs, info = env.reset(seed=seed)
        env.action_space.seed(seed)
        log = [info["side"], *info["opponent_moves"]]
        done = False
        while not done:
            obs, r, done, _, info = env.step(env.action_space.sample(obs["action_mask"]))
            log += info["opponent_moves"]
        return log + [info["outcome"]]

    assert run(7) == run(7)
    assert len({tuple(run(s)) for s in range(6)}) > 1


def test_the_game_is_replayed_by_the_engine() -> None:
    env = JerichoEnv(agent_side="south", opponent="random")
    obs, _ = env.reset(seed=1)
    replay = Game()
    rng = np.random.default_rng(0)
    done = False
    while not done:
        a = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        replay.play(default_encoding().action_to_move(a))
        obs, _, done, _, info = env.step(a)
        for m in info["opponent_moves"]:
            replay.play(m)
        assert replay.position() == env.game.position()
        assert np.array_equal(obs["observation"], default_encoding().observe(replay, "south"))
        assert np.array_equal(env.action_masks(), obs["action_mask"])


def test_illegal_action_loses_or_raises() -> None:
    env = JerichoEnv()
    env.reset(seed=0)
    obs, reward, terminated, _, info = env.step(default_encoding().pass_action)
    assert (reward, terminated) == (-1.0, True) and "cannot pass" in info["illegal_action"]
    env = JerichoEnv(illegal_action="raise")
    env.reset(seed=0)
    before = env.game.position()
    with pytest.raises(ValueError, match="cannot pass"):
        env.step(default_encoding().pass_action)
    with pytest.raises(ValueError, match="out of range"):
        env.step(5000)
    assert env.game.position() == before


def test_shaping_rewards_the_margin_change() -> None:
    env = JerichoEnv(shaping=0.1, opponent="random")
    obs, _ = env.reset(seed=0, options={"position": Game.from_moves("5R@d2").position(), "agent_side": "north"})
    before = env.game.score()
    obs, reward, *_, info = env.step(default_encoding().move_to_action("2Y@d3"))
    margin = lambda s: s[1] - s[0]  # noqa: E731
    assert reward == pytest.approx(0.1 * (margin(env.game.score()) - margin(before)))


def test_opponent_gets_the_limit_and_a_seed() -> None:
    seen: list[Limit | None] = []

    class Spy:
        name = "spy"

        def choose_move(self, game: Game, limit: Limit | None = None):  # noqa: ANN201
            seen.append(limit)
            return game.legal_moves()[0]

    env = JerichoEnv(opponent=Spy(), agent_side="north", opponent_limit=Limit(time=0.5, nodes=10))
    env.reset(seed=0)
    assert seen and seen[0].time == 0.5 and seen[0].nodes == 10 and seen[0].seed is not None


@pytest.mark.parametrize(
    "kwargs",
    [{"agent_side": "east"}, {"illegal_action": "ignore"}, {"render_mode": "rgb_matrix"}, {"opponent": "nobody"}],
)
def test_bad_options_are_refused(kwargs: dict) -> None:
    with pytest.raises(ValueError):
        JerichoEnv(**kwargs)


def test_a_bad_reset_leaves_the_episode_as_it_was() -> None:
    from jericho_game.errors import JerichoError

    env = JerichoEnv(agent_side="north", opponent="random")
    env.reset(seed=1)
    before = (env.game.position(), env.agent_side)
    with pytest.raises(JerichoError):
        env.reset(seed=2, options={"position": "not a position", "agent_side": "south"})
    assert (env.game.position(), env.agent_side) == before


@pytest.mark.parametrize("bad", [3.5, 3.0, "3", True, np.bool_(True), np.float32(3), None, [3]])
def test_actions_must_be_integers(bad: object) -> None:
    env = JerichoEnv(opponent="random", illegal_action="lose")
    env.reset(seed=0)
    before = env.game.position()
    with pytest.raises(TypeError, match="an action is an integer"):
        env.step(bad)  # type: ignore[arg-type]
    assert env.game.position() == before and not env._done


@pytest.mark.parametrize("good", [np.int64(3), np.int8(3), np.array(3), 3])
def test_numpy_integer_actions_are_accepted(good: object) -> None:
    env = JerichoEnv(opponent="random")
    env.reset(seed=0)
    env.step(good)  # type: ignore[arg-type]
    assert env.game.history[0] == default_encoding().action_to_move(3)
