"""The action/observation encoding: round trips, masks and what each segment says."""

from __future__ import annotations

import numpy as np
import pytest

from jericho_game import PASS, Game, Move, parse_move
from jericho_game.envs import encoding as E
from tests.helpers import random_games


def test_sizes() -> None:
    assert E.N_ACTIONS == 25 * 26 + 1 == 651
    assert E.PASS_ACTION == 650
    assert E.OBSERVATION_SIZE == 26 * 4 * 10 + 26 + 50 + 39 + 28 + 2 + 25 + 26 + 1 + 2


def test_every_action_round_trips_through_moves_and_notation() -> None:
    g = Game()
    for a in range(E.N_ACTIONS):
        move = E.action_to_move(a)
        assert E.move_to_action(move) == a
        assert E.move_to_action(str(move)) == a
        assert E.move_to_action(parse_move(str(move).upper())) == a
        assert g.tables.move_objects[a] == move
    assert E.action_to_move(E.PASS_ACTION) == PASS
    assert E.action_to_move(15 * 26 + 9) == Move.parse("4R@d2")  # piece 15 = 4R, cell 9 = d2


@pytest.mark.parametrize("bad", [-1, 651, 1.5, "x", None])
def test_bad_actions_are_named(bad: object) -> None:
    with pytest.raises(ValueError, match="action|out of range"):
        E.action_to_move(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", ["5R@z9", "6R@a1", "nonsense", ""])
def test_bad_moves_are_named(bad: str) -> None:
    with pytest.raises(ValueError):
        E.move_to_action(bad)


def test_masks_match_the_engine() -> None:
    for g in random_games(60):
        mask = E.legal_action_mask(g)
        assert mask.dtype == np.int8 and mask.shape == (651,)
        legal = {E.move_to_action(m) for m in g.legal_moves()}
        assert set(np.flatnonzero(mask).tolist()) == legal == set(E.legal_actions(g))
        for a in range(0, 651, 7):
            assert bool(mask[a]) == g.is_legal(E.action_to_move(a))
        if g.is_over():
            assert not mask.any()


def test_observation_segments_describe_the_position() -> None:
    enc = E.default_encoding()
    t = enc.tables
    for g in random_games(40, seed=1):
        s = g.state
        for side in (0, 1):
            obs = enc.observe(g, side)
            assert obs.dtype == np.float32 and obs.shape == (enc.observation_size,)
            assert set(np.unique(obs).tolist()) <= {0.0, 1.0}
            d = enc.split(obs)
            for c, name in enumerate(t.cell_names):
                tower = g.tower(name)
                for level in range(4):
                    row = d["towers"][c, level]
                    if level < len(tower):
                        p = tower[level]
                        assert row[p.size - 1] == 1 and row[5 + "RYGBW".index(p.colour.value)] == 1
                        assert row.sum() == 2
                    else:
                        assert not row.any()
                assert d["own_camp"][c] == (t.cell_camp[c] == side)
            for k, who in enumerate((side, 1 - side)):
                names = {str(p) for p in g.reserve(("south", "north")[who])}
                assert {str(E.action_to_move(p * 26).piece) for p in np.flatnonzero(d["reserves"][k])} == names
                assert d["score"][k].argmax() == g.score()[who] and d["score"][k].sum() == 1
                assert d["seven"][k] == (g.score()[who] >= 7)
            for a, who in enumerate(s.leader):
                expected = 2 if who < 0 else 0 if who == side else 1
                assert d["leaders"][a].tolist() == [float(i == expected) for i in range(3)]
            if s.last_cell >= 0:
                assert d["last_piece"].argmax() == s.last_piece and d["last_cell"].argmax() == s.last_cell
            else:
                assert not d["last_piece"].any() and not d["last_cell"].any()
            assert d["passed"][0] == (s.passes > 0)
            assert d["turn"].tolist() == [float(s.turn == side), float(side == 1)]


def test_default_observer_is_the_side_to_move_and_seven_threat_shows() -> None:
    g = Game()
    assert np.array_equal(E.observe(g), E.observe(g, "south"))
    g.play("5R@d2")
    assert np.array_equal(E.observe(g), E.observe(g, 1))
    with pytest.raises(ValueError, match="side"):
        E.observe(g, "east")


def test_symmetries_commute_with_the_encoding() -> None:
    enc = E.default_encoding()
    mirror = enc.symmetry("mirror")
    turn = enc.symmetry("half-turn")
    names = enc.tables.cell_names
    assert names[int(turn.cells[names.index("a1")])] == "g4"
    assert names[int(mirror.cells[names.index("a1")])] == "g1"
    for g in random_games(25, seed=2):
        # Replay the game's moves reflected left-right: the observation must be the reflection.
        h = Game()
        for m in g.history:
            h.play(E.action_to_move(mirror.action(E.move_to_action(m))))
        for side in (0, 1):
            assert np.array_equal(mirror.observation(enc.observe(g, side)), enc.observe(h, side))
        assert np.array_equal(mirror.mask(E.legal_action_mask(g)), E.legal_action_mask(h))
        # The half turn with sides swapped: build the rotated position from its text.
        rotated = Game.from_position(_rotate_position(g, turn))
        for side in (0, 1):
            assert np.array_equal(turn.observation(enc.observe(g, side)), enc.observe(rotated, 1 - side))
        assert np.array_equal(turn.mask(E.legal_action_mask(g)), E.legal_action_mask(rotated))
    with pytest.raises(ValueError, match="unknown symmetry"):
        enc.symmetry("twirl")


def _rotate_position(g: Game, sym: E.Symmetry) -> str:
    names = g.tables.cell_names
    towers, south, north, turn, last, passes, result = g.position().split(" ")
    items = []
    if towers != "-":
        for item in towers.split(","):
            cell, pieces = item.split(":")
            items.append((int(sym.cells[names.index(cell)]), pieces))
    towers = ",".join(f"{names[c]}:{p}" for c, p in sorted(items)) or "-"
    if last != "-":
        piece, cell = last.split("@")
        last = f"{piece}@{names[int(sym.cells[names.index(cell)])]}"
    swap = {"south": "north", "north": "south"}
    return " ".join([towers, north, south, swap[turn], last, passes, swap.get(result, result)])


def test_encoding_refuses_a_game_on_another_board() -> None:
    import json
    from importlib import resources

    from jericho_game import Topology

    data = json.loads(resources.files("jericho_game").joinpath("boards/standard.json").read_text())
    data["name"] = "copy"
    other = Topology.from_dict(data)
    with pytest.raises(ValueError, match="board 'copy'"):
        E.observe(Game(other))
    assert E.Encoding(other).observe(Game(other)).shape == (E.OBSERVATION_SIZE,)
    with pytest.raises(TypeError):
        E.observe("not a game")  # type: ignore[arg-type]
