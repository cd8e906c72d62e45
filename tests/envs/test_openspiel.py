"""Jericho as an OpenSpiel Python game, and OpenSpiel's Python MCTS as a Jericho player."""

from __future__ import annotations

import pickle
import random

import numpy as np
import pyspiel
import pytest

import jericho_game.envs.openspiel_game as og
from jericho_game import Game
from jericho_game.ai import Limit, make_player
from jericho_game.envs.encoding import default_encoding


@pytest.fixture(scope="module")
def game() -> pyspiel.Game:
    return pyspiel.load_game("python_jericho")


def test_random_sim_test_with_serialization(game: pyspiel.Game) -> None:
    pyspiel.random_sim_test(game, num_sims=12, serialize=True, verbose=False)


def test_game_type_and_info(game: pyspiel.Game) -> None:
    t = game.get_type()
    assert t.short_name == "python_jericho"
    assert t.information == pyspiel.GameType.Information.PERFECT_INFORMATION
    assert t.utility == pyspiel.GameType.Utility.ZERO_SUM
    assert game.num_distinct_actions() == 651 and game.num_players() == 2
    assert game.observation_tensor_shape() == [default_encoding().observation_size]
    assert (game.min_utility(), game.max_utility()) == (-1.0, 1.0)


def _random_state(game: pyspiel.Game, seed: int, plies: int) -> pyspiel.State:
    rng = random.Random(seed)
    state = game.new_initial_state()
    for _ in range(plies):
        if state.is_terminal():
            break
        state.apply_action(rng.choice(state.legal_actions()))
    return state


def test_states_agree_with_the_engine(game: pyspiel.Game) -> None:
    for seed in range(15):
        state = _random_state(game, seed, 200)
        replay = Game()
        for a in state.history():
            replay.play(default_encoding().action_to_move(a))
        assert str(state) == replay.position()
        assert state.is_terminal() == replay.is_over()
        outcome = replay.outcome()
        assert state.returns() == {"south": [1.0, -1.0], "north": [-1.0, 1.0], "draw": [0.0, 0.0]}[outcome]
        assert len(state.history()) <= game.max_game_length()
    for seed in range(15):
        state = _random_state(game, seed, seed * 3)
        if state.is_terminal():
            continue
        legal = state.legal_actions()
        assert legal == sorted(legal)
        g = state.jericho_game
        assert legal == sorted(default_encoding().move_to_action(m) for m in g.legal_moves())
        assert state.current_player() == g.state.turn
        for player in (0, 1):
            assert np.array_equal(
                np.asarray(state.observation_tensor(player), dtype=np.float32), default_encoding().observe(g, player)
            )
            assert state.observation_string(player).startswith(f"observer {('south', 'north')[player]}")
        assert state.action_to_string(legal[0]) == str(default_encoding().action_to_move(legal[0]))


def test_pickle_and_serialize_round_trip(game: pyspiel.Game) -> None:
    assert str(pickle.loads(pickle.dumps(game))) == str(game)
    for seed in range(5):
        state = _random_state(game, seed, 10 + seed)
        again = pickle.loads(pickle.dumps(state))
        assert str(again) == str(state) and again.history() == state.history()
        text = pyspiel.serialize_game_and_state(game, state)
        g2, s2 = pyspiel.deserialize_game_and_state(text)
        assert str(g2) == str(game) and str(s2) == str(state) and s2.history() == state.history()
        assert s2.legal_actions() == state.legal_actions()


def test_clone_is_equal_and_independent(game: pyspiel.Game) -> None:
    state = _random_state(game, 3, 12)
    clone = state.clone()
    assert clone.history() == state.history() and str(clone) == str(state)
    assert clone.move_number() == state.move_number()
    assert clone.observation_tensor(0) == state.observation_tensor(0)
    clone.apply_action(clone.legal_actions()[0])
    assert str(clone) != str(state) and len(state.history()) == 12
    child = state.child(state.legal_actions()[-1])
    assert child.history() == state.history() + [state.legal_actions()[-1]]


def test_state_from_a_mid_game_position_serializes() -> None:
    g = Game.from_moves("5R@d2 1G@d3 2Y@d3")
    state = og.state_from_game(g)
    assert str(state) == g.position() and state.current_player() == 1
    state.apply_action(state.legal_actions()[-1])
    spiel_game = state.get_game()
    g2, s2 = pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(spiel_game, state))
    assert str(s2) == str(state) and s2.history() == state.history()
    pyspiel.random_sim_test(spiel_game, num_sims=2, serialize=True, verbose=False)
    with pytest.raises(ValueError, match="bad position parameter"):
        pyspiel.load_game("python_jericho(position=nonsense)")


def test_openspiel_mcts_player_plays_legal_reproducible_moves() -> None:
    player = make_player("openspiel-mcts:sims=30,seed=1")
    assert player.name.startswith("openspiel-mcts")
    g = Game()
    rnd = make_player("random", seed=2)
    while not g.is_over():
        if g.turn == "south":
            before = g.position()
            move = player.choose_move(g, Limit(nodes=15, seed=len(g.history)))
            assert g.position() == before
        else:
            move = rnd.choose_move(g)
        g.play(move)
    g = Game.from_moves("5R@d2 1G@d3")
    a = make_player("openspiel-mcts:sims=40").choose_move(g, Limit(seed=9))
    b = make_player("openspiel-mcts:sims=40").choose_move(g, Limit(seed=9))
    assert a == b


def test_openspiel_mcts_breaks_a_seven_monolith_threat() -> None:
    # Find positions where the opponent holds 7+ monoliths and some moves (not all) break
    # that hold: every other move loses at once, and MCTS must pick a breaking one.
    rng = random.Random(4)
    found = 0
    for _ in range(300):
        g = Game()
        while not g.is_over() and found < 3:
            moves = g.legal_moves()
            losing = [m for m in moves if _loses(g, m)]
            if g.seven_threat() == g.turn.other and 0 < len(losing) < len(moves):
                move = make_player("openspiel-mcts:sims=150,seed=0").choose_move(g)
                assert not _loses(g, move), f"{move} keeps the opponent's 7 in {g.position()}"
                found += 1
                break
            g.play(rng.choice(moves))
        if found >= 3:
            return
    pytest.fail("no position with a breakable seven-monolith threat found")


def _loses(g: Game, move: object) -> bool:
    h = g.copy()
    mover = h.turn
    h.play(move)  # type: ignore[arg-type]
    return h.outcome() == mover.other


def test_time_limit_and_bad_options() -> None:
    player = make_player("openspiel-mcts:sims=20,seed=0")
    g = Game.from_moves("5R@d2")
    move = player.choose_move(g, Limit(time=0.2))
    assert g.is_legal(move) and player.last_sims >= 10
    for spec in ("openspiel-mcts:sims=0", "openspiel-mcts:rollouts=0", "openspiel-mcts:uct_c=-1"):
        with pytest.raises(ValueError):
            make_player(spec)
    over = Game.from_position(_finished_position())
    with pytest.raises(ValueError, match="over"):
        player.choose_move(over)


def _finished_position() -> str:
    rng = random.Random(0)
    g = Game()
    while not g.is_over():
        g.play(rng.choice(g.legal_moves()))
    return g.position()


def test_the_arena_pits_openspiel_mcts_against_our_players() -> None:
    # Issue 5: our strength is measured against an outside implementation in the arena.
    from jericho_game.ai.arena import run_arena

    spec = "openspiel-mcts:sims=10"
    summary = run_arena([spec, "random"], games=2, jobs=1, seed=5)
    assert summary["finished_games"] == 2 and summary["forfeits"] == 0
    for g in summary["games"]:
        assert Game.from_moves(g["moves"]).outcome() == g["result"]
    bot = next(p for p in summary["players"] if p["player"] == spec)
    assert bot["moves"] > 0 and bot["elo"] is not None
    again = run_arena([spec, "random"], games=2, jobs=1, seed=5)
    assert [g["moves"] for g in again["games"]] == [g["moves"] for g in summary["games"]]
