"""The ladder of levels (issue 32 point 5): one list in ai/levels.py for every front end."""

from __future__ import annotations

import argparse
from itertools import pairwise
from pathlib import Path

import pytest

from jericho_game import Game
from jericho_game.ai import base, levels
from jericho_game.ai.arena import add_arguments, ladder_specs, rate_runs


def test_the_ladder_is_the_one_list_of_levels():
    names = levels.ladder()
    assert names[0] == "easy" and names[-1] == "master" and len(names) == len(set(names)) >= 7
    assert list(levels.LEVELS) == names  # the factories, in the ladder's order
    for name in names:  # each is a player of the registry (the engine protocol, the arena) built from levels.py
        assert base._REGISTRY[name][0] == "jericho_game.ai.levels"
        assert getattr(levels, base._REGISTRY[name][1]) is levels.LEVELS[name]
    # every level the registry takes from levels.py is on the ladder or a frozen old level
    from_levels = {n for n, (module, _) in base._REGISTRY.items() if module == "jericho_game.ai.levels"}
    assert {n for n in from_levels if not n.endswith(("-v1", "-v2"))} == set(names)


def test_the_ladder_climbs_and_its_times_suit_a_person():
    elos = [lv.elo for lv in levels.LADDER]
    assert elos == sorted(elos) and len(set(elos)) == len(elos)
    for lv in levels.LADDER:
        assert 0 < lv.think <= 3.0 and lv.cap <= 3.0, lv
        assert levels.think_time(lv.name) == lv.think
    upper = levels.LADDER[4:]  # from strong up
    assert all(lv.think >= 1.0 for lv in upper)  # the upper levels never answer at once
    assert levels.think_time("mcts:sims=10") == 0.0


@pytest.mark.parametrize("name", ["casual", "strong", "advanced", "skilled", "veteran", "challenger"])
def test_the_new_rungs_play_legal_moves_under_their_names(name):
    player = base.make_player(name, seed=1)
    assert player.name == name
    g = Game()
    for _ in range(4):
        move = player.choose_move(g)
        assert move in g.legal_moves()
        g.play(move)


def test_the_arena_plays_the_ladder():
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(["--ladder", "--games", "2"])
    assert ladder_specs(args) == levels.ladder()
    args = parser.parse_args(["hard", "strong", "--games", "2"])
    assert ladder_specs(args) == ["hard", "strong"]


RUN = Path(__file__).resolve().parents[2] / "docs" / "runs" / "ladder-3304"


def test_the_ladder_elos_are_the_round_robins():
    """The Elo shown beside each level is the kept round robin's fit (easy at 1,000, to the ten),
    and that run holds >= 100 games for each adjacent pair, each won 60-85% by the higher rung."""
    summary = rate_runs([RUN])
    fitted = {p["player"]: p["elo"] for p in summary["players"]}
    assert set(fitted) == set(levels.ladder())
    shift = 1000 - fitted["easy"]
    for lv in levels.LADDER:
        assert abs(lv.elo - (fitted[lv.name] + shift)) <= 5, (lv, fitted[lv.name] + shift)
    for lower, upper in pairwise(levels.ladder()):
        pair = next(p for p in summary["pairings"] if {p["a"], p["b"]} == {lower, upper})
        upper_score = pair["score_a"] if pair["a"] == upper else 1 - pair["score_a"]
        assert pair["games"] >= 100 and 0.60 <= upper_score <= 0.85, (lower, upper, upper_score)
