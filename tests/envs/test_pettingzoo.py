"""The PettingZoo AEC environment passes PettingZoo's own test suite."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, performance_benchmark, render_test, seed_test

from jericho_game import Game
from jericho_game.envs.encoding import default_encoding
from jericho_game.envs.pettingzoo_env import MAX_GAME_LENGTH, env, raw_env

# Warnings api_test always gives for a dict observation (as for PettingZoo's own chess and
# go, which it lists by name) and for agents not named "player_N" (ours are south/north).
ACCEPTED = (
    "Observation is not a NumPy array",
    "Observation space for each agent probably should be",
    "We recommend agents to be named in the format",
    # After the game ends the finished agents' masks are all zeros: there is no legal move.
    "Action mask numpy array is all zeros",
)


@pytest.mark.parametrize("seed", range(40))
def test_api_test_over_many_seeds(seed: int) -> None:
    e = env()
    e.reset()
    e.action_space("south").seed(seed)
    e.action_space("north").seed(10_000 + seed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api_test(e, num_cycles=MAX_GAME_LENGTH)
    unexpected = {str(w.message) for w in caught if not str(w.message).startswith(ACCEPTED)}
    assert not unexpected


def test_episodes_differ_between_seeds_and_end_by_the_rules() -> None:
    lengths = set()
    outcomes = set()
    for seed in range(20):
        e = env()
        e.reset()
        for i, a in enumerate(e.possible_agents):
            e.action_space(a).seed(seed * 2 + i)
        steps = 0
        for agent in e.agent_iter():
            obs, reward, term, trunc, info = e.last()
            if term or trunc:
                assert not trunc
                assert reward in (-1.0, 0.0, 1.0)
                outcomes.add(info["outcome"])
                e.step(None)
                continue
            mask = obs["action_mask"]
            assert mask.dtype == np.int8 and mask.any()
            e.step(e.action_space(agent).sample(mask))
            steps += 1
        assert steps <= MAX_GAME_LENGTH
        lengths.add(steps)
    assert len(lengths) > 3
    assert outcomes <= {"south", "north", "draw"} and len(outcomes) >= 2


def test_seed_test() -> None:
    seed_test(env, num_cycles=MAX_GAME_LENGTH)


def test_render_test() -> None:
    render_test(
        raw_env,
        custom_tests={
            "ansi": lambda text: "reserve south" in text,
            "rgb_array": lambda img: img.shape == (600, 600, 3) and img.dtype == np.uint8 and img.std() > 10,
        },
    )


def test_performance_benchmark(capsys: pytest.CaptureFixture[str]) -> None:
    performance_benchmark(env())
    out = capsys.readouterr().out
    turns = float(out.split(" turns per second")[0].split()[-1])
    print(out)
    assert turns > 0  # it really played; the figure is printed, never held to a speed (a loaded machine is slow)


def test_rewards_are_zero_sum_and_match_the_engine() -> None:
    e = raw_env()
    e.reset()
    game = Game()
    rng = np.random.default_rng(5)
    while True:
        assert e.agent_selection == game.turn.value
        obs, reward, term, trunc, info = e.last()
        if term:
            break
        actions = np.flatnonzero(obs["action_mask"])
        assert sorted(default_encoding().move_to_action(m) for m in game.legal_moves()) == actions.tolist()
        a = int(rng.choice(actions))
        game.play(default_encoding().action_to_move(a))
        e.step(a)
    assert e.rewards["south"] == -e.rewards["north"]
    expected = {"south": 1.0, "north": -1.0, "draw": 0.0}[game.outcome()]
    assert e._cumulative_rewards["south"] == expected


def test_illegal_action_raises_and_keeps_the_game() -> None:
    e = raw_env()
    e.reset()
    e.step(default_encoding().move_to_action("5R@d2"))
    before = e.game.position()
    with pytest.raises(ValueError, match="5R@d2"):
        e.step(default_encoding().move_to_action("5R@d2"))  # size clash on d2
    with pytest.raises(ValueError, match="cannot pass|pass"):
        e.step(default_encoding().pass_action)
    with pytest.raises(ValueError, match="out of range"):
        e.step(9999)
    assert e.game.position() == before
    assert not any(e.terminations.values())


def test_observation_is_from_the_observed_agent() -> None:
    e = raw_env()
    e.reset(options={"moves": ["5R@d2", "1G@d3"]})
    enc = default_encoding()
    south = enc.split(e.observe("south")["observation"])
    north = enc.split(e.observe("north")["observation"])
    assert south["turn"].tolist() == [1.0, 0.0] and north["turn"].tolist() == [0.0, 1.0]
    d = e.game.tables.align_names.index("d")
    assert south["leaders"][d].tolist() == [1.0, 0.0, 0.0]
    assert north["leaders"][d].tolist() == [0.0, 1.0, 0.0]
    assert e.observe("north")["action_mask"].sum() == 0
    assert e.observe("south")["action_mask"].sum() == len(e.game.legal_moves())


def test_spaces_are_cached_objects() -> None:
    e = env()
    for a in e.possible_agents:
        assert e.observation_space(a) is e.observation_space(a)
        assert e.action_space(a) is e.action_space(a)


def test_bad_render_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="render_mode"):
        raw_env(render_mode="rgb_matrix")


def test_a_bad_reset_leaves_the_episode_as_it_was() -> None:
    from jericho_game.errors import JerichoError

    e = raw_env()
    e.reset(options={"moves": ["5R@d2", "1G@d3"]})
    before = (e.game.position(), e.agent_selection)
    with pytest.raises(JerichoError):
        e.reset(options={"moves": ["3B@a1", "3B@a1"]})  # North's 3B on South's 3B: a size clash
    with pytest.raises(JerichoError):
        e.reset(options={"position": "not a position"})
    assert (e.game.position(), e.agent_selection) == before


@pytest.mark.parametrize("bad", [3.5, "3", True, np.bool_(True)])
def test_actions_must_be_integers(bad: object) -> None:
    e = raw_env()
    e.reset()
    with pytest.raises(TypeError, match="an action is an integer"):
        e.step(bad)  # type: ignore[arg-type]
    assert e.game.history == [] and e.agent_selection == "south"
    e.step(np.int64(3))
    assert len(e.game.history) == 1


def test_state_space_holds_every_state() -> None:
    from pettingzoo.test.state_test import test_state_space

    e = env()
    e.reset()
    test_state_space(e.unwrapped)  # PettingZoo's own check of the space
    e.action_space("south").seed(3)
    e.action_space("north").seed(4)
    states = [e.state()]
    for agent in e.agent_iter():
        obs, _, term, trunc, _ = e.last()
        e.step(None if term or trunc else e.action_space(agent).sample(obs["action_mask"]))
        states.append(e.unwrapped.state())
    assert all(e.unwrapped.state_space.contains(s) for s in states)
    assert np.array_equal(states[-1], default_encoding().observe(e.unwrapped.game, "south"))
