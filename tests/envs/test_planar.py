"""Planar observations, the canonical view and symmetry augmentation on batches (issue 13 point 5)."""

from __future__ import annotations

import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from jericho_game import Game
from jericho_game.envs import encoding as E
from jericho_game.envs.augment import SYMMETRIES, augment
from jericho_game.envs.gym_env import JerichoEnv
from jericho_game.envs.planar import default_planar
from tests.envs.test_encoding import _rotate_position
from tests.helpers import random_games

ENC = E.default_encoding()
P = default_planar()


def _grid(cell: str) -> tuple[int, int]:
    return 4 - int(cell[1]), "abcdefg".index(cell[0])


def test_planes_lay_the_board_out_on_its_grid() -> None:
    assert P.shape == (192, 4, 7) and len(P.channels) == 192
    names = [n for n, _ in P.channels]
    assert names[:2] == ["tower[0][0]", "tower[0][1]"] and names[40:45] == [
        "own_camp", "on_board", "last_cell", "led_by_observer", "led_by_opponent",
    ]  # fmt: skip
    assert names[45] == "reserve[0][0]" and names[-1] == "turn[1]"
    g = Game.from_moves("5R@d2 1G@d3 2Y@d3 3B@a1")
    planes = P.observe(g, "south")
    padding = [_grid("d1"), _grid("d4")]
    assert [planes[41][r, c] for r, c in padding] == [0, 0] and planes[41].sum() == 26
    per_cell = list(range(45))
    per_cell.remove(41)
    for r, c in padding:
        assert not planes[per_cell, r, c].any()  # padding is empty in every per-cell channel
    r, c = _grid("d2")
    assert planes[4, r, c] == 1 and planes[5, r, c] == 1  # level 0: size 5, colour R
    r, c = _grid("d3")
    assert planes[0, r, c] == 1 and planes[7, r, c] == 1  # 1G at the bottom
    assert planes[10 + 1, r, c] == 1 and planes[10 + 6, r, c] == 1  # 2Y on level 1
    assert planes[42][_grid("a1")] == 1 and planes[42].sum() == 1
    assert planes[40][3].sum() == 6 and planes[40][0].sum() == 0  # South's camp at the bottom
    # North leads column d: the opponent's channel marks its two cells (d2, d3).
    assert planes[44].sum() == 2 and planes[44][_grid("d2")] == 1 and planes[43].sum() == 0


def test_channel_descriptions_are_words_and_say_what_the_planes_hold() -> None:
    """They once read ``constant: reserves value (np.int64(0), np.int64(3))``."""
    descriptions = [d for _, d in P.channels]
    assert len(set(descriptions)) == len(descriptions)
    assert not [d for d in descriptions if "np." in d or "int64" in d or "value (" in d]
    assert all(d.startswith("constant: ") for d in descriptions[45:])
    # North leads column d (its one monolith) after these moves, seen by South (to move); last placement 3B@a1.
    planes = P.observe(Game.from_moves("5R@d2 1G@d3 2Y@d3 3B@a1"), "south")
    value = {d: planes[k].max() for k, (_, d) in enumerate(P.channels)}
    assert value["constant: piece 5R is in the observer's reserve"] == 0  # South played it
    assert value["constant: piece 5R is in the opponent's reserve"] == 1
    assert value["constant: piece 1G is in the opponent's reserve"] == 0
    assert value["constant: alignment d is led by the opponent"] == 1
    assert value["constant: alignment d is led by the observer"] == 0
    assert value["constant: alignment a is led by nobody"] == 1
    assert value["constant: the placement just made was of piece 3B"] == 1
    assert (
        value["constant: the observer holds 0 monoliths"] == 1 and value["constant: the opponent holds 1 monolith"] == 1
    )
    assert value["constant: the observer is to move"] == 1 and value["constant: the observer is North"] == 0
    assert value["constant: the previous turn was a pass"] == 0


def test_planes_hold_the_flat_observation_exactly_in_batches() -> None:
    games = random_games(30, seed=5)
    flat = np.stack([ENC.observe(g, side) for g in games for side in (0, 1)])
    planes = P.from_flat(flat)
    assert planes.shape == (60, 192, 4, 7) and planes.dtype == np.float32
    assert np.array_equal(P.to_flat(planes), flat)
    assert np.array_equal(planes[7], P.observe(games[3], 1))
    assert np.array_equal(P.from_flat(flat.reshape(6, 10, -1)).reshape(planes.shape), planes)


def test_flip_is_the_mirror_after_the_half_turn_and_commutes_with_the_encoding() -> None:
    flip = ENC.symmetry("flip")
    names = ENC.tables.cell_names
    assert names[int(flip.cells[names.index("a1")])] == "a4"
    for g in random_games(15, seed=8):
        flipped = Game.from_position(_rotate_position(g, flip))
        for side in (0, 1):
            assert np.array_equal(flip.observations(ENC.observe(g, side)), ENC.observe(flipped, 1 - side))
        assert np.array_equal(flip.masks(E.legal_action_mask(g)), E.legal_action_mask(flipped))


def test_augment_gives_every_image_of_a_batch() -> None:
    games = [g for g in random_games(40, seed=9) if not g.is_over()][:12]
    flat = np.stack([ENC.observe(g) for g in games])
    masks = np.stack([E.legal_action_mask(g) for g in games])
    policies = masks / masks.sum(axis=1, keepdims=True)
    obs4, masks4, pols4 = augment(flat, masks, policies)
    assert obs4.shape == (4, 12, 1239) and masks4 is not None and pols4 is not None
    for k, name in enumerate(SYMMETRIES):
        sym = ENC.symmetry(name)
        for i in range(12):
            assert np.array_equal(obs4[k, i], sym.observation(flat[i]))
            assert np.array_equal(masks4[k, i], sym.mask(masks[i]))
        assert np.allclose(pols4[k].sum(axis=1), 1.0)
    assert np.array_equal(obs4[0], flat)
    planar4, _, _ = augment(P.from_flat(flat))
    assert np.array_equal(planar4, P.from_flat(obs4))
    with pytest.raises(ValueError, match="expected"):
        augment(np.zeros((3, 17)))


def test_the_canonical_view_shows_every_observer_as_south() -> None:
    for g in random_games(10, seed=11):
        obs = np.stack([ENC.observe(g, 0), ENC.observe(g, 1)])
        masks = np.stack([E.legal_action_mask(g)] * 2)
        canon, cmasks = ENC.canonical(obs, masks)
        assert cmasks is not None
        assert np.array_equal(canon[0], obs[0]) and not ENC.is_north_observer(canon).any()
        # North's view is the half-turned position seen by South.
        rotated = Game.from_position(_rotate_position(g, ENC.symmetry("half-turn")))
        assert np.array_equal(canon[1], ENC.observe(rotated, 0))
        legal = np.flatnonzero(cmasks[1])
        real = ENC.from_canonical_actions(legal, True)
        assert np.array_equal(np.sort(real), np.flatnonzero(masks[1]))


@pytest.mark.parametrize("side", ["south", "north"])
def test_gym_planar_and_canonical_pass_check_env_and_replay(side: str) -> None:
    env = gymnasium.make("Jericho-v1", agent_side=side, observation="planar", view="canonical")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped, skip_render_check=True)
    assert not [str(w.message) for w in caught]
    e = JerichoEnv(agent_side=side, observation="planar", view="canonical")
    obs, info = e.reset(seed=2)
    replay = Game()
    for m in info["opponent_moves"]:
        replay.play(m)
    rng = np.random.default_rng(0)
    done = False
    while not done:
        assert obs["observation"].shape == (192, 4, 7)
        assert obs["observation"][191].max() == 0  # "observer is North" is never set
        a = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        replay.play(ENC.action_to_move(ENC.from_canonical_actions(a, side == "north").item()))
        obs, _, done, _, info = e.step(a)
        for m in info["opponent_moves"]:
            replay.play(m)
        assert replay.position() == e.game.position()


def test_pettingzoo_planar_canonical_passes_api_test() -> None:
    from pettingzoo.test import api_test

    from jericho_game.envs.pettingzoo_env import MAX_GAME_LENGTH, env
    from tests.envs.test_pettingzoo import ACCEPTED

    e = env(observation="planar", view="canonical")
    e.reset()
    e.action_space("south").seed(1)
    e.action_space("north").seed(2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api_test(e, num_cycles=MAX_GAME_LENGTH)
    assert not {str(w.message) for w in caught if not str(w.message).startswith(ACCEPTED)}
    e.reset(options={"moves": ["5R@d2"]})
    obs = e.observe("north")
    assert obs["observation"].shape == (192, 4, 7)
    # North's canonical mask is legal once turned back, and stepping it plays the real move.
    a = int(np.flatnonzero(obs["action_mask"])[0])
    real = ENC.action_to_move(ENC.symmetry("half-turn").action(a))
    e.step(a)
    assert e.unwrapped.game.history[-1] == real


def test_openspiel_planar_observation_tensor() -> None:
    import pyspiel

    import jericho_game.envs.openspiel_game  # noqa: F401

    game = pyspiel.load_game("python_jericho(observation=planar)")
    assert game.observation_tensor_shape() == [192, 4, 7]
    state = game.new_initial_state()
    state.apply_action(ENC.move_to_action("5R@d2"))
    tensor = np.array(state.observation_tensor(1)).reshape(192, 4, 7)
    assert np.array_equal(tensor, P.observe(state.jericho_game, 1))
    pyspiel.random_sim_test(game, num_sims=2, serialize=True, verbose=False)
    from jericho_game.envs.openspiel_game import state_from_game

    later = state_from_game(Game.from_moves("5R@d2 1G@d3"), observation="planar")
    assert np.array_equal(np.array(later.observation_tensor(0)).reshape(192, 4, 7), P.observe(later.jericho_game, 0))
    with pytest.raises(Exception, match="bad observation"):
        pyspiel.load_game("python_jericho(observation=cube)")
